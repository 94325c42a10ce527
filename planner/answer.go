package planner

import (
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// Kind says what an Artifact holds.
type Kind int

const (
	// KindScript: a script to review and run.
	KindScript Kind = iota
	// KindAnswer: a short answer in Markdown to a question; nothing to run
	// unless the person picks one of its Snippets.
	KindAnswer
	// KindQuestion: the model asks the person a clarifying question.
	KindQuestion
)

// String names the kind as --json prints it.
func (k Kind) String() string {
	switch k {
	case KindAnswer:
		return "answer"
	case KindQuestion:
		return "question"
	}
	return "script"
}

// Kind says whether a holds a script, an answer or a question.
func (a *Artifact) Kind() Kind {
	switch {
	case a.Script == "" && a.Answer != "":
		return KindAnswer
	case a.Script == "" && a.Question != "":
		return KindQuestion
	}
	return KindScript
}

// Answers lets the model answer a question ("what does tar -xzf do", "how
// do I find my IP") in short Markdown instead of writing a script: the
// Artifact then has Answer and Snippets set and no Script. Off by default,
// so a caller that only handles scripts never gets an answer.
func Answers(on bool) Option { return func(p *Planner) { p.answers = on } }

// Snippet is a shell command quoted in an answer: code a person may pick
// and run, through the same review as any script.
type Snippet struct {
	Code string `json:"code"`
	Lang string `json:"lang,omitempty"` // the fence's language, "" when it named none
}

// Snippets returns the fenced blocks of a Markdown text that hold shell
// commands and parse as bash, in order. Blocks in another language are
// left out, as are blocks that do not parse (a placeholder like <iface>
// usually does not). In a "console" block, or a block whose every line
// starts with "$ ", only the "$ " lines are kept, without the prompt; the
// other lines are output.
func Snippets(markdown string) []Snippet {
	var out []Snippet
	for _, f := range fences(markdown) {
		switch f.lang {
		case "", "sh", "bash", "shell", "console", "zsh", "shell-session", "shellsession":
		default:
			continue
		}
		code := promptLines(f.body, f.lang == "console" || f.lang == "shell-session" || f.lang == "shellsession")
		if code == "" {
			continue
		}
		if _, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(code), ""); err != nil {
			continue
		}
		out = append(out, Snippet{Code: code, Lang: f.lang})
	}
	return out
}

// promptLines returns the commands of a block: with session true, or when
// every non-empty line starts with "$ ", the lines after a "$ " prompt;
// otherwise the whole block. Leading and trailing blank lines go.
func promptLines(body string, session bool) string {
	lines := strings.Split(strings.Trim(body, "\n"), "\n")
	if !session {
		session = true
		for _, l := range lines {
			if strings.TrimSpace(l) != "" && !strings.HasPrefix(strings.TrimLeft(l, " \t"), "$ ") {
				session = false
				break
			}
		}
	}
	if !session {
		return strings.TrimSpace(body)
	}
	var cmds []string
	for _, l := range lines {
		if c, ok := strings.CutPrefix(strings.TrimLeft(l, " \t"), "$ "); ok {
			cmds = append(cmds, c)
		}
	}
	return strings.TrimSpace(strings.Join(cmds, "\n"))
}
