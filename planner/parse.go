package planner

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Answer is the output contract asked of the model: a script with a short
// explanation, or a clarifying question instead of a script, or (when the
// planner allows answers, see Answers) a short answer in Markdown to a
// question. At most one of Script, Markdown and Question is set by
// ParseAnswer: a script wins over an answer, an answer over a question.
type Answer struct {
	Script       string `json:"script"`
	Explanation  string `json:"explanation"`
	NeedsNetwork bool   `json:"needs_network"`
	Question     string `json:"question"`
	Markdown     string `json:"answer"`
}

// Errors from ParseAnswer. Callers match them with errors.Is.
var (
	// ErrEmptyAnswer: the model said nothing.
	ErrEmptyAnswer = errors.New("empty answer")
	// ErrMalformedAnswer: no JSON object with a script or question, and no
	// code block, could be found in the answer.
	ErrMalformedAnswer = errors.New("malformed answer")
)

// RefusalError is returned when the model declines: no script, no
// question, only prose.
type RefusalError struct {
	Text string // what the model said, trimmed
}

// Error quotes what the model said.
func (e *RefusalError) Error() string {
	return "model declined: " + e.Text
}

// ParseAnswer extracts an Answer from a model's raw text. It accepts a bare
// JSON object, JSON inside a code fence or surrounded by prose, and, as a
// fallback for small models, a fenced shell block with prose around it.
// Keys are matched leniently ("command" for "script", "needs_network" as a
// bool or a string).
func ParseAnswer(raw string) (Answer, error) {
	text := strings.TrimSpace(strings.TrimPrefix(raw, "\ufeff"))
	if text == "" {
		return Answer{}, ErrEmptyAnswer
	}
	var sawJSON bool
	for _, cand := range jsonCandidates(text) {
		a, ok, err := decodeAnswer(cand)
		if err != nil {
			continue
		}
		sawJSON = true
		if ok {
			return a, nil
		}
		if a.Explanation != "" {
			return Answer{}, &RefusalError{Text: clip(a.Explanation, 300)}
		}
	}
	if !sawJSON {
		if code, prose, ok := shellBlock(text); ok {
			return Answer{Script: code, Explanation: prose}, nil
		}
		if looksLikeRefusal(text) {
			return Answer{}, &RefusalError{Text: clip(text, 300)}
		}
	}
	return Answer{}, fmt.Errorf("%w: no JSON object with a script or a question in %q", ErrMalformedAnswer, clip(text, 120))
}

// decodeAnswer decodes one JSON candidate. ok is true when it holds a script
// or a question.
func decodeAnswer(s string) (a Answer, ok bool, err error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return Answer{}, false, err
	}
	a = answerFrom(func(keys ...string) (string, bool) {
		for _, k := range keys {
			v, found := m[k]
			if !found {
				continue
			}
			var s string
			if json.Unmarshal(v, &s) == nil {
				return s, true
			}
			var lines []string // some models send a script as a list of lines
			if json.Unmarshal(v, &lines) == nil {
				return strings.Join(lines, "\n"), true
			}
			var b bool
			if json.Unmarshal(v, &b) == nil {
				return strconv.FormatBool(b), true
			}
		}
		return "", false
	})
	// A script that is itself fenced: unwrap it.
	if code, _, found := shellBlock(a.Script); found {
		a.Script = code
	}
	return a, a.Script != "" || a.Question != "" || a.Markdown != "", nil
}

// answerFrom builds an Answer from the members get finds, under the names
// models use for them, and applies the precedence: a script wins over an
// answer, an answer over a question.
func answerFrom(get func(keys ...string) (string, bool)) Answer {
	str := func(keys ...string) string {
		v, _ := get(keys...)
		return strings.TrimSpace(v)
	}
	a := Answer{
		Script:      str("script", "command", "cmd", "bash", "code"),
		Explanation: str("explanation", "explain", "description"),
		Question:    str("question", "clarifying_question", "clarification"),
		Markdown:    str("answer", "markdown", "reply"),
	}
	if v, ok := get("needs_network"); ok {
		a.NeedsNetwork = strings.EqualFold(strings.TrimSpace(v), "true")
	}
	switch {
	case a.Script != "":
		// The question or answer that came with it is shown as explanation.
		if a.Explanation == "" {
			a.Explanation = a.Markdown
		}
		a.Question, a.Markdown = "", ""
	case a.Markdown != "":
		a.Question = ""
	}
	return a
}

// jsonCandidates lists substrings that may be a JSON object, best first:
// the whole text, the contents of code fences, then each balanced {...}.
func jsonCandidates(text string) []string {
	var out []string
	if strings.HasPrefix(text, "{") {
		out = append(out, text)
	}
	for _, f := range fences(text) {
		body := strings.TrimSpace(f.body)
		if strings.HasPrefix(body, "{") {
			out = append(out, body)
		}
	}
	out = append(out, balancedObjects(text, 8)...)
	return out
}

// balancedObjects returns up to n top-level {...} spans of s, honouring
// JSON strings so that braces inside them do not count.
func balancedObjects(s string, n int) []string {
	var out []string
	depth, start := 0, -1
	inStr, esc := false, false
	for i := 0; i < len(s) && len(out) < n; i++ {
		c := s[i]
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			if depth > 0 {
				inStr = true
			}
		case '{':
			if depth == 0 {
				start = i
			}
			depth++
		case '}':
			if depth > 0 {
				depth--
				if depth == 0 {
					out = append(out, s[start:i+1])
				}
			}
		}
	}
	return out
}

type fence struct {
	lang, body string
	start, end int // byte offsets of the whole fence in the text
}

// fences returns the ``` code fences of text, in order. An unclosed last
// fence runs to the end of the text.
func fences(text string) []fence {
	var out []fence
	rest, off := text, 0
	for {
		i := strings.Index(rest, "```")
		if i < 0 {
			return out
		}
		head := rest[i+3:]
		nl := strings.IndexByte(head, '\n')
		if nl < 0 {
			return out
		}
		lang := strings.TrimSpace(head[:nl])
		body := head[nl+1:]
		j := strings.Index(body, "```")
		end := len(body)
		next := len(body)
		if j >= 0 {
			end, next = j, j+3
		}
		f := fence{lang: strings.ToLower(lang), body: body[:end], start: off + i}
		consumed := i + 3 + nl + 1 + next
		f.end = off + consumed
		out = append(out, f)
		rest = rest[consumed:]
		off += consumed
	}
}

// shellBlock finds the first fenced block that is shell (or has no
// language) and returns its code and the prose around it.
func shellBlock(text string) (code, prose string, ok bool) {
	for _, f := range fences(text) {
		switch f.lang {
		case "", "sh", "bash", "shell", "console", "zsh":
		default:
			continue
		}
		code = strings.TrimSpace(f.body)
		if f.lang == "console" {
			code = strings.TrimSpace(strings.TrimPrefix(code, "$ "))
		}
		if code == "" {
			continue
		}
		prose = strings.TrimSpace(text[:f.start] + " " + text[f.end:])
		return code, strings.Join(strings.Fields(prose), " "), true
	}
	return "", "", false
}

func looksLikeRefusal(text string) bool {
	l := strings.ToLower(text)
	for _, p := range []string{"i can't", "i cannot", "i can not", "i won't", "i will not", "i'm sorry", "i am sorry", "unable to help", "not able to help", "can't help", "cannot help", "can't assist", "cannot assist"} {
		if strings.Contains(l, p) {
			return true
		}
	}
	return false
}

// clip shortens s to at most n bytes on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
