package planner

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// ProgressKind says what a Progress reports.
type ProgressKind int

const (
	// CallStarted: a model call begins. After a repair the answer starts
	// over, so a display drops what it showed of the previous one.
	CallStarted ProgressKind = iota
	// TextArrived: Chunk is new text of the answer; Text is all of it so
	// far in this call.
	TextArrived
	// CallDone: the call ended, well or not; Usage is what it used.
	CallDone
)

// String names the kind, for logs and tests.
func (k ProgressKind) String() string {
	switch k {
	case CallStarted:
		return "started"
	case TextArrived:
		return "text"
	case CallDone:
		return "done"
	}
	return "ProgressKind(" + strconv.Itoa(int(k)) + ")"
}

// Progress is one event of a request in flight. A Request with Stream set
// receives them while the model's answer arrives: CallStarted, then
// TextArrived for each piece of text, then CallDone, for each model call
// (a repair makes another call). Providers that do not stream deliver
// their whole answer as one TextArrived.
type Progress struct {
	Kind    ProgressKind
	Attempt int           // 0 for the first answer, then one more per repair
	Chunk   string        // TextArrived: the text that just arrived
	Text    string        // the answer so far in this call, as sent (often JSON)
	Elapsed time.Duration // since the model was first asked for this request
	// Usage is set by CallDone: what the call used, as the provider
	// reported it (or estimated, see Usage.Estimated).
	Usage Usage
}

// OutputTokens estimates the tokens of the answer so far; providers report
// their counts only at the end.
func (p Progress) OutputTokens() int { return EstimateTokens(p.Text) }

// Partial reads what it can of the answer so far (see PartialAnswer). It
// costs a pass over Text: a display calls it when it draws, not per chunk.
func (p Progress) Partial() Answer { return PartialAnswer(p.Text) }

// streamer delivers Progress for one request. It is called by the
// langchaingo clients, some of them from a goroutine of their own, one call
// at a time; the mutex orders it with the reads of the caller.
type streamer struct {
	f     func(Progress)
	start time.Time
	now   func() time.Time

	mu       sync.Mutex
	attempt  int
	text     strings.Builder
	streamed bool // the client called the streaming func in this call
}

func newStreamer(f func(Progress), now func() time.Time) *streamer {
	if f == nil {
		return nil
	}
	return &streamer{f: f, start: now(), now: now}
}

// begin starts a model call.
func (s *streamer) begin(attempt int) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.attempt = attempt
	s.text.Reset()
	s.streamed = false
	s.f(Progress{Kind: CallStarted, Attempt: attempt, Elapsed: s.now().Sub(s.start)})
}

// chunk is the langchaingo streaming func. It stops the stream once ctx is
// done, so a cancelled request stops reading at once.
func (s *streamer) chunk(ctx context.Context, b []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(b) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.streamed = true
	s.text.Write(b)
	s.f(Progress{Kind: TextArrived, Attempt: s.attempt, Chunk: string(b), Text: s.text.String(), Elapsed: s.now().Sub(s.start)})
	return nil
}

// end finishes a model call. A client that did not stream (a Responder, a
// provider without streaming) delivers its whole answer here as one chunk.
func (s *streamer) end(text string, u Usage) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.streamed && text != "" {
		s.text.WriteString(text)
		s.f(Progress{Kind: TextArrived, Attempt: s.attempt, Chunk: text, Text: s.text.String(), Elapsed: s.now().Sub(s.start)})
	}
	s.f(Progress{Kind: CallDone, Attempt: s.attempt, Text: s.text.String(), Elapsed: s.now().Sub(s.start), Usage: u})
}

// PartialAnswer reads what it can of an answer that is still arriving: the
// members script, explanation, answer and question of a JSON object cut
// anywhere (a string member cut in the middle gives the text so far), or
// the code of a fenced shell block that is not closed yet, with or
// without prose before them. Text that is neither gives an empty Answer. It never fails; ParseAnswer decides what
// the complete answer means.
func PartialAnswer(text string) Answer {
	t := strings.TrimLeft(strings.TrimPrefix(text, "\ufeff"), " \t\r\n")
	if body, ok := strings.CutPrefix(t, "```"); ok {
		nl := strings.IndexByte(body, '\n')
		if nl < 0 {
			return Answer{}
		}
		lang := strings.ToLower(strings.TrimSpace(body[:nl]))
		body = body[nl+1:]
		if end := strings.Index(body, "```"); end >= 0 {
			body = body[:end]
		}
		if lang == "json" || strings.HasPrefix(strings.TrimSpace(body), "{") {
			return partialJSONAnswer(strings.TrimSpace(body))
		}
		return Answer{Script: strings.TrimSpace(body)}
	}
	if strings.HasPrefix(t, "{") {
		return partialJSONAnswer(t)
	}
	// Prose before the object or the fence ("Here is the script:"), as
	// models without a JSON mode sometimes write.
	at := strings.Index(t, "```")
	if i := strings.Index(t, "{"); i >= 0 && (at < 0 || i < at) {
		if j := skipSpace(t, i+1); j >= len(t) || t[j] == '"' {
			at = i
		}
	}
	if at > 0 {
		return PartialAnswer(t[at:])
	}
	return Answer{}
}

func partialJSONAnswer(s string) Answer {
	m := partialObject(s)
	return answerFrom(func(keys ...string) (string, bool) {
		for _, k := range keys {
			if v, ok := m[k]; ok {
				return v, true
			}
		}
		return "", false
	})
}

// partialObject decodes the string and scalar members of the JSON object
// at the start of s, which may be cut anywhere (scalars as written, like
// "true"); arrays and objects are skipped. A
// string cut in the middle gives its text so far (an escape cut in the
// middle is left out).
func partialObject(s string) map[string]string {
	out := map[string]string{}
	i := skipSpace(s, 0)
	if i >= len(s) || s[i] != '{' {
		return out
	}
	i++
	for {
		i = skipSpace(s, i)
		if i >= len(s) || s[i] != '"' {
			return out // '}', the end, or something that is not JSON
		}
		key, next, done := partialString(s, i+1)
		if !done {
			return out
		}
		i = skipSpace(s, next)
		if i >= len(s) || s[i] != ':' {
			return out
		}
		i = skipSpace(s, i+1)
		if i >= len(s) {
			return out
		}
		if s[i] == '"' {
			val, next, done := partialString(s, i+1)
			out[key] = val
			if !done {
				return out
			}
			i = next
		} else {
			next, done := skipValue(s, i)
			if !done {
				return out
			}
			if c := s[i]; c != '[' && c != '{' {
				out[key] = s[i:next] // true, false, null or a number
			}
			i = next
		}
		i = skipSpace(s, i)
		if i >= len(s) || s[i] != ',' {
			return out
		}
		i++
	}
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// partialString decodes a JSON string whose opening quote is just before
// s[i]. It returns the text, the index after the closing quote, and
// whether the string was closed.
func partialString(s string, i int) (string, int, bool) {
	var b strings.Builder
	for i < len(s) {
		c := s[i]
		switch {
		case c == '"':
			return b.String(), i + 1, true
		case c == '\\':
			if i+1 >= len(s) {
				return b.String(), i, false
			}
			switch e := s[i+1]; e {
			case '"', '\\', '/':
				b.WriteByte(e)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r, n, ok := unicodeEscape(s, i)
				if !ok {
					return b.String(), i, false
				}
				b.WriteRune(r)
				i += n
				continue
			default:
				b.WriteByte(e) // not JSON; keep the character
			}
			i += 2
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 && !utf8.FullRuneInString(s[i:]) {
				return b.String(), i, false // a character cut in two
			}
			b.WriteRune(r)
			i += n
		}
	}
	return b.String(), i, false
}

// unicodeEscape decodes \uXXXX at s[i] (and a low surrogate after a high
// one). ok is false when the escape is cut off.
func unicodeEscape(s string, i int) (rune, int, bool) {
	hex := func(at int) (rune, bool) {
		if at+6 > len(s) {
			return 0, false
		}
		v, err := strconv.ParseUint(s[at+2:at+6], 16, 16)
		if err != nil {
			return utf8.RuneError, true
		}
		return rune(v), true
	}
	r, ok := hex(i)
	if !ok {
		return 0, 0, false
	}
	if !utf16.IsSurrogate(r) {
		return r, 6, true
	}
	if i+6 < len(s) && s[i+6] != '\\' {
		return utf8.RuneError, 6, true
	}
	if i+8 > len(s) {
		return 0, 0, false
	}
	if s[i+7] != 'u' {
		return utf8.RuneError, 6, true
	}
	r2, ok := hex(i + 6)
	if !ok {
		return 0, 0, false
	}
	if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
		return d, 12, true
	}
	return utf8.RuneError, 6, true
}

// skipValue skips a JSON value that is not a string: a number, true,
// false, null, or a balanced array or object (strings in it honoured). done
// is false when the value is cut off.
func skipValue(s string, i int) (int, bool) {
	if s[i] != '[' && s[i] != '{' {
		for i < len(s) && !strings.ContainsRune(",}] \t\r\n", rune(s[i])) {
			i++
		}
		return i, i < len(s)
	}
	depth := 0
	for i < len(s) {
		switch s[i] {
		case '"':
			_, next, done := partialString(s, i+1)
			if !done {
				return i, false
			}
			i = next
			continue
		case '[', '{':
			depth++
		case ']', '}':
			depth--
			if depth == 0 {
				return i + 1, true
			}
		}
		i++
	}
	return i, false
}
