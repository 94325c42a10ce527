package shell

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/internal/size"
	"github.com/nash-shell/nash/planner"
	"github.com/nash-shell/nash/sandbox"
)

// Answers: a question ("what does tar -xzf do") gets a short answer in
// Markdown instead of a script. The flow shows it (evAnswer) and offers
// the commands in it (face.pick); one picked goes through the review like
// any planned script.

// AnswerStyle is how the line mode writes an answer on standard output.
type AnswerStyle int

const (
	// AnswerSource writes the Markdown as the model wrote it (escaped):
	// for a pipe or a file.
	AnswerSource AnswerStyle = iota
	// AnswerPlain lays it out for a terminal without escape codes
	// (NO_COLOR): lists indented, code blocks numbered.
	AnswerPlain
	// AnswerColor lays it out with colour and emphasis.
	AnswerColor
)

// answered shows the answer a and offers its commands. It returns the
// artifact of the command picked, to review and run, or nil when none was.
func (e *engine) answered(f face, j job, r *flowResult, a *planner.Artifact) (*planner.Artifact, error) {
	r.rec.Answer, r.rec.Snippets = a.Answer, a.Snippets
	r.history = append(r.history, planner.HistoryEntry{Prompt: j.text, Answer: a.Answer})
	f.say(evAnswer{a})
	if j.opts.print {
		return nil, &PlanError{fmt.Errorf("%w: the model answered instead (shown above)", planner.ErrNoScript)}
	}
	if len(a.Snippets) == 0 || j.opts.yes || j.opts.dryRun {
		return nil, nil
	}
	n, err := f.pick(a.Snippets)
	if err != nil || n < 1 || n > len(a.Snippets) {
		return nil, err
	}
	r.rec.Snippet = n
	s := a.Snippets[n-1]
	return &planner.Artifact{
		Request: a.Request, Script: s.Code, Model: a.Model,
		Explanation: "Command [" + strconv.Itoa(n) + "] of the answer.",
	}, nil
}

// used adds a model call's tokens to the pass's record.
func (r *flowResult) used(model string, u planner.Usage) {
	if model != "" && r.rec.Model == "" {
		r.rec.Model = model
	}
	if u.Calls == 0 {
		return
	}
	if r.rec.Usage == nil {
		r.rec.Usage = &planner.Usage{}
	}
	r.rec.Usage.Add(u)
}

// usageLine says what a request cost: "612 tokens in, 58 out (1 call,
// $0.0012)". "" when no call was counted.
func usageLine(u planner.Usage) string {
	if u.Calls == 0 {
		return ""
	}
	var b strings.Builder
	approx := ""
	if u.Estimated {
		approx = "about "
	}
	fmt.Fprintf(&b, "%s%d tokens in, %d out (%d call", approx, u.InputTokens, u.OutputTokens, u.Calls)
	if u.Calls != 1 {
		b.WriteString("s")
	}
	if u.Priced {
		b.WriteString(", " + formatCost(u.Cost, u.Currency))
	}
	b.WriteString(")")
	return b.String()
}

// formatCost writes a cost in currency with the digits that matter for
// the small sums of one request.
func formatCost(cost float64, currency string) string {
	if currency == "" || currency == "USD" {
		return "$" + strconv.FormatFloat(cost, 'f', costDigits(cost), 64)
	}
	return strconv.FormatFloat(cost, 'f', costDigits(cost), 64) + " " + effects.Escape(currency)
}

func costDigits(c float64) int {
	switch {
	case c == 0 || c >= 1:
		return 2
	case c >= 0.01:
		return 3
	}
	return 4
}

// stdinLine says how much of the piped input the model was sent, and
// what was cut.
func stdinLine(in *planner.InputStats) string {
	name := in.Name
	if name == "" {
		name = "stdin"
	}
	name = effects.Escape(name)
	switch {
	case in.Binary:
		return fmt.Sprintf("%s: %s of binary data; not sent to the model, only its size", name, size.Format(in.Size))
	case in.Cut:
		return fmt.Sprintf("%s: sent the model %s of %s, its start and its end; the %s between were cut (the model is told so)",
			name, size.Format(int64(in.Sent)), size.Format(in.Size), size.Format(max(in.Size-int64(in.Sent), 0)))
	}
	return fmt.Sprintf("%s: sent the model all %s", name, size.Format(in.Size))
}

// renderAnswer writes the answer md in style for a terminal width columns
// wide. The commands that can be picked are numbered where the layout
// shows them ([1], [2], ...).
func renderAnswer(md string, style AnswerStyle, width int) string {
	switch style {
	case AnswerColor, AnswerPlain:
		out, _ := newStyles(style == AnswerColor).markdown(md, width)
		return out
	}
	return strings.TrimRight(effects.EscapeText(md), "\n") + "\n"
}

// snippetList lists the commands of an answer, numbered, for a
// layout that did not number them (the Markdown source).
func snippetList(snips []planner.Snippet) string {
	var b strings.Builder
	for i, s := range snips {
		lines := strings.Split(strings.TrimRight(effects.EscapeText(s.Code), "\n"), "\n")
		for k, l := range lines {
			if k == 0 {
				fmt.Fprintf(&b, "  [%d] %s\n", i+1, l)
			} else {
				fmt.Fprintf(&b, "      %s\n", l)
			}
		}
	}
	return b.String()
}

// tokensOf is what the log keeps of a pass's token use; nil for none.
func tokensOf(u *planner.Usage) *sandbox.Tokens {
	if u == nil || u.Calls == 0 {
		return nil
	}
	t := &sandbox.Tokens{Input: u.InputTokens, Output: u.OutputTokens, Estimated: u.Estimated}
	if u.Priced {
		t.Cost, t.Currency = u.Cost, u.Currency
		if t.Currency == "" {
			t.Currency = "USD"
		}
	}
	return t
}
