package shell

import (
	"bytes"
	"fmt"

	tea "charm.land/bubbletea/v2"

	"github.com/nash-shell/nash/effects"
)

// The faces' part of testing at the review (trial.go): asking for an
// example, and showing the trial's events.

// exampleHint shows the short form of an example where one is asked for.
const exampleHint = `files before => files after, or => stdout: text; e.g. a.jpeg 'b c.jpeg' => a.jpg 'b c.jpg'`

// example asks for an example on one line.
func (l *liner) example() (string, error) {
	fmt.Fprintf(l.errw, "nash: an example: %s\n", exampleHint)
	return l.ask("example: ")
}

// sayTrial writes the trial's events in plain text.
func (l *liner) sayTrial(ev event) {
	switch ev := ev.(type) {
	case evTested:
		writeTestReport(l.errw, l.sty, ev.rep)
		if ev.rep.Failed > 0 {
			fmt.Fprintln(l.errw, "nash: revise (r) sends what failed to the model")
		}
	case evExampleRan:
		writeExampleResult(l.errw, l.sty, ev.n, ev.res, ev.again)
	case evFeedbackCarries:
		writeFeedbackCarries(l.errw, l.sty, ev)
		l.feedbackDefault = defaultFeedback
	}
}

// qExample asks for an example (the stExample screen).
type qExample struct{}

func (qExample) isQuestion() {}

func (f *replFace) example() (string, error) {
	ans := f.ask(qExample{})
	return ans.text, ans.err
}

// sayTrial renders the trial's events into b, for the transcript.
func (m *model) sayTrial(b *bytes.Buffer, ev event) {
	switch ev := ev.(type) {
	case evTested:
		writeTestReport(b, m.sty, ev.rep)
		if ev.rep.Failed > 0 {
			b.WriteString(m.sty.dim.Render(first(m.keys.Revise)+" revises the script with what failed") + "\n")
		}
	case evExampleRan:
		writeExampleResult(b, m.sty, ev.n, ev.res, ev.again)
	case evFeedbackCarries:
		writeFeedbackCarries(b, m.sty, ev)
		m.feedbackDefault = defaultFeedback
	}
}

// exampleEntered answers the example screen with the line typed, shown in
// the transcript; an empty line goes back to the review.
func (m *model) exampleEntered(text string) tea.Cmd {
	if text == "" {
		return m.answer(answer{})
	}
	return tea.Sequence(m.println(m.sty.dim.Render("example: ")+effects.Escape(text)), m.answer(answer{text: text}))
}

// exampleView is the example screen's line.
func (m *model) exampleView() string {
	return m.sty.bold.Render("example: ") + m.answerText.view(m.cursor) + "\n" +
		m.sty.dim.Render("  "+exampleHint+"  (esc: back)")
}

// reviewTrialHint is the review's keys for testing, when a tester is
// configured.
func (m *model) reviewTrialHint() string {
	if m.e.cfg.Tester == nil {
		return ""
	}
	return fmt.Sprintf(" · %s test · %s example", first(m.keys.Test), first(m.keys.Example))
}

// trialKey answers t and g at the review; ok is false for other keys.
func (m *model) trialKey(key string) (tea.Cmd, bool) {
	switch {
	case is(key, m.keys.Test):
		return m.answer(answer{act: actTest}), true
	case is(key, m.keys.Example):
		return m.answer(answer{act: actExample}), true
	}
	return nil, false
}
