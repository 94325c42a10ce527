package shell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/scripttest"
)

// Testing a script before it is trusted (package scripttest). At the
// review, t runs the script on starting states derived from its analysis
// and g runs it on an example the person gives (files before, the files or
// output expected after); both in throwaway sandboxes, nothing reaches the
// live files. Examples stay with the pass: they run again on every new
// version of the script, a revision is told the ones that fail (and the
// starting states the last test failed in), the committed step keeps them,
// and :export writes them out as a test the exported scripts can run. nash
// test (TestScript) does the same for a script in hand.

// Tester is what the shell needs of *scripttest.Tester.
type Tester interface {
	Test(ctx context.Context, script string) (*scripttest.Report, error)
	RunExample(ctx context.Context, script string, ex scripttest.Example) (*scripttest.ExampleResult, error)
}

// TestSpec is what a Tester is made with: the directory and environment
// the script runs in, and nash test's flags.
type TestSpec struct {
	Dir string
	Env []string
	// Timeout bounds the script's run in one starting state (0: the
	// Tester's default); ManyFiles is how many files the many-files
	// state makes (0: the default).
	Timeout   time.Duration
	ManyFiles int
}

// TesterFunc makes a Tester.
type TesterFunc func(spec TestSpec) Tester

// errNoTester is what t and g say where nothing can test scripts.
var errNoTester = errors.New("testing scripts is not available here")

// trial is what the person has tried of a pass's script at the review.
type trial struct {
	examples []scripttest.Example
	// results are script's, one per example: nil where it has not run.
	results []*scripttest.ExampleResult
	script  string
	// report is the last test of script (t), or nil.
	report *scripttest.Report
}

// The trial's events.
type (
	evTested     struct{ rep *scripttest.Report } // t: the starting states tried
	evExampleRan struct {
		n     int // from 1
		res   *scripttest.ExampleResult
		again bool // run again on a new version of the script
	}
	// evFeedbackCarries says that the failing examples and starting states
	// go to the model with what the person types, which may be nothing.
	evFeedbackCarries struct{ examples, states int }
)

func (evTested) isEvent()          {}
func (evExampleRan) isEvent()      {}
func (evFeedbackCarries) isEvent() {}

// defaultFeedback is the revision's feedback when the person types none
// and something failed.
const defaultFeedback = "make it pass what failed"

// on makes script the one the trial's results are of, forgetting results
// of another.
func (tr *trial) on(script string) {
	if tr.script == script && len(tr.results) == len(tr.examples) {
		return
	}
	tr.script, tr.report = script, nil
	tr.results = make([]*scripttest.ExampleResult, len(tr.examples))
}

// tester makes the tester for the pass's directory and environment.
func (e *engine) tester(j job) (Tester, error) {
	if e.cfg.Tester == nil {
		return nil, errNoTester
	}
	return e.cfg.Tester(TestSpec{Dir: j.dir, Env: j.env}), nil
}

// tryOut answers t (act is actTest) and g (actExample) at the review of
// script: it runs the test, or asks for an example and runs it, and shows
// what happened. What goes wrong is shown and the review goes on; the
// error returned is the face's (no answer).
func (e *engine) tryOut(ctx context.Context, f face, j job, script string, act action, tr *trial) error {
	t, err := e.tester(j)
	if err != nil {
		f.say(evFailed{err})
		return nil
	}
	tr.on(script)
	if act == actTest {
		mctx, done := f.busy(ctx, "testing")
		rep, err := t.Test(mctx, script)
		done()
		if err != nil {
			f.say(evFailed{fmt.Errorf("test: %w", err)})
			return nil
		}
		tr.report = rep
		f.say(evTested{rep})
		return nil
	}
	text, err := f.example()
	if err != nil {
		return err
	}
	text = strings.TrimSpace(text)
	if text == "" {
		return nil
	}
	ex, err := scripttest.ParseExample(text)
	if err != nil {
		f.say(evFailed{err})
		return nil
	}
	ex.Name = text
	mctx, done := f.busy(ctx, "running the example")
	res, err := t.RunExample(mctx, script, ex)
	done()
	if err != nil {
		f.say(evFailed{fmt.Errorf("example: %w", err)})
		return nil
	}
	tr.examples = append(tr.examples, ex)
	tr.results = append(tr.results, res)
	f.say(evExampleRan{n: len(tr.examples), res: res})
	return nil
}

// recheck runs the examples again on a new version of the script (after
// an edit or a revision), and shows how it fares on each.
func (e *engine) recheck(ctx context.Context, f face, j job, script string, tr *trial) {
	if len(tr.examples) == 0 || tr.script == script {
		return
	}
	tr.on(script)
	t, err := e.tester(j)
	if err != nil {
		return
	}
	mctx, done := f.busy(ctx, "running the examples again")
	defer done()
	for i, ex := range tr.examples {
		res, err := t.RunExample(mctx, script, ex)
		if err != nil {
			f.say(evFailed{fmt.Errorf("example %d: %w", i+1, err)})
			return
		}
		tr.results[i] = res
		f.say(evExampleRan{n: i + 1, res: res, again: true})
	}
}

// failing lists what failed of script: the examples, and the starting
// states of its last test.
func (tr *trial) failing(script string) (examples []*scripttest.ExampleResult, states []scripttest.Result) {
	if tr.script != script {
		return nil, nil
	}
	for _, r := range tr.results {
		if r != nil && !r.Pass {
			examples = append(examples, r)
		}
	}
	if tr.report != nil {
		for _, v := range tr.report.Variants {
			if v.Verdict == scripttest.Fail {
				states = append(states, v)
			}
		}
	}
	return examples, states
}

// announce tells the face, before it asks for a revision's feedback, what
// failed and goes to the model with it.
func (tr *trial) announce(f face, script string) {
	ex, st := tr.failing(script)
	if len(ex)+len(st) > 0 {
		f.say(evFeedbackCarries{examples: len(ex), states: len(st)})
	}
}

// Bounds on what a revision's feedback carries.
const (
	maxFedExamples = 3
	maxFedStates   = 5
	maxFedOutput   = 1500 // bytes of an example's stderr, stdout or diff
)

// feedback is the person's feedback on script with what failed of it: each
// failing example (its tree in txtar form, what the script did, where that
// differs) and the starting states its last test failed in.
func (tr *trial) feedback(fb, script string) string {
	exs, states := tr.failing(script)
	if len(exs)+len(states) == 0 {
		return fb
	}
	var b strings.Builder
	b.WriteString(strings.TrimSpace(fb))
	if len(exs) > 0 {
		b.WriteString("\n\nThe script fails ")
		if len(exs) == 1 {
			b.WriteString("this example I gave. It ran")
		} else {
			fmt.Fprintf(&b, "%d examples I gave. Each ran", len(exs))
		}
		b.WriteString(" in an empty directory holding only the files before (in txtar form: before/PATH is a file before, after/PATH a file expected after, stdout the output expected).\n")
	}
	for i, r := range exs {
		if i == maxFedExamples {
			fmt.Fprintf(&b, "\n(and %d more failing examples)\n", len(exs)-i)
			break
		}
		text, _ := r.Example.MarshalText()
		fmt.Fprintf(&b, "\nExample:\n%s", text)
		fmt.Fprintf(&b, "What the script did: exit status %d.\n", r.ExitCode)
		for _, m := range r.Mismatches {
			fmt.Fprintf(&b, "- %s\n", mismatchLine(m))
			if m.Diff != "" {
				b.WriteString(indentText(clipText(m.Diff, maxFedOutput)) + "\n")
			}
		}
		if s := strings.TrimSpace(r.Stderr); s != "" {
			fmt.Fprintf(&b, "Its stderr:\n%s\n", indentText(clipText(s, maxFedOutput)))
		}
	}
	if len(states) > 0 {
		b.WriteString("\nnash test ran the script on other starting states made from the files here; it failed in these:\n")
	}
	for i, v := range states {
		if i == maxFedStates {
			fmt.Fprintf(&b, "(and %d more)\n", len(states)-i)
			break
		}
		var why []string
		for _, p := range v.Problems {
			why = append(why, p.Reason)
		}
		fmt.Fprintf(&b, "- %s: %s\n", v.Title, strings.Join(why, "; "))
	}
	return b.String()
}

// clipText cuts s to about n bytes, at a line end when it can.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := s[:n]
	if i := strings.LastIndexByte(cut, '\n'); i > n/2 {
		cut = cut[:i]
	}
	return cut + "\n[...]"
}

// mismatchLine says in one line where an example's outcome differs from
// what it expects. Paths are quoted (effects.Quote).
func mismatchLine(m scripttest.Mismatch) string {
	p := effects.Quote(m.Path)
	switch m.Kind {
	case "missing":
		return fmt.Sprintf("%s is missing (expected %s)", p, m.Want)
	case "unexpected":
		return fmt.Sprintf("%s should not be there (%s)", p, m.Got)
	case "content":
		return fmt.Sprintf("%s holds other content (%s, expected %s; - expected, + got)", p, m.Got, m.Want)
	case "type", "target":
		return fmt.Sprintf("%s is %s, expected %s", p, m.Got, m.Want)
	case "stdout":
		return fmt.Sprintf("prints other output (%s, expected %s; - expected, + got)", m.Got, m.Want)
	case "exit":
		return fmt.Sprintf("exits with %s, expected %s", m.Got, m.Want)
	}
	return fmt.Sprintf("%s %s: %s, expected %s", m.Kind, p, m.Got, m.Want)
}

// keep gives the committed step the pass's examples.
func (tr *trial) keep(r *flowResult) {
	if r != nil && r.committed != nil && len(tr.examples) > 0 {
		r.committed.Examples = append([]scripttest.Example(nil), tr.examples...)
	}
}

// exportTests writes the examples of the committed steps next to an
// exported script, at file+".test": a bash program (scripttest.WriteTests)
// that checks each step's script against its examples and exits 0 when
// all pass. It writes nothing when no step has examples, and says what it
// wrote on w.
func exportTests(file string, steps []Step, w io.Writer) error {
	var tests []scripttest.Tested
	n := 0
	for _, st := range steps {
		if len(st.Examples) == 0 {
			continue
		}
		name := st.Prompt
		if name == "" {
			name = "(typed command)"
		}
		tests = append(tests, scripttest.Tested{Name: name, Script: st.Script, Examples: st.Examples})
		n += len(st.Examples)
	}
	if len(tests) == 0 {
		return nil
	}
	var b bytes.Buffer
	if err := scripttest.WriteTests(&b, tests); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	p := file + ".test"
	if err := os.WriteFile(p, b.Bytes(), 0o755); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	fmt.Fprintf(w, "wrote %d %s to %s; run it to check that the scripts still pass them\n", n, pluralWord(n, "example", "examples"), effects.Quote(p))
	return nil
}
