package shell

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nash-shell/nash/scripttest"
)

// fakeTester fails every script without "careful" in it: in one starting
// state, and on every example, where 'my photo.jpg' is missing. It
// records what it was given.
type fakeTester struct {
	mu       sync.Mutex
	specs    []TestSpec
	tested   []string
	examples []string // script, then " | ", then the example's name
}

func (ft *fakeTester) make(spec TestSpec) Tester {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	ft.specs = append(ft.specs, spec)
	return ft
}

func (ft *fakeTester) Test(_ context.Context, script string) (*scripttest.Report, error) {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	ft.tested = append(ft.tested, script)
	rep := &scripttest.Report{Script: script, Variants: []scripttest.Result{
		{Variant: scripttest.Variant{Name: "today", Kind: scripttest.Today, Title: "today's files"}, Verdict: scripttest.Pass, NumChanges: 0},
		{Variant: scripttest.Variant{Name: "glob-one *.jpeg", Kind: scripttest.GlobOne, Title: "only a.jpeg matches *.jpeg"}, Verdict: scripttest.Pass},
	}}
	if !strings.Contains(script, "careful") {
		rep.Variants = append(rep.Variants, scripttest.Result{
			Variant: scripttest.Variant{Name: "name-space *.jpeg", Kind: scripttest.NameSpace, Title: "a name with a space matches *.jpeg"},
			Verdict: scripttest.Fail, ExitCode: 1,
			Problems: []scripttest.Finding{{Kind: "probe", Reason: "leaves 'my photo.jpeg' as it is, where it moves a.jpeg to a.jpg"}},
		})
		rep.Failed = 1
	}
	return rep, nil
}

func (ft *fakeTester) RunExample(_ context.Context, script string, ex scripttest.Example) (*scripttest.ExampleResult, error) {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	ft.examples = append(ft.examples, script+" | "+ex.Name)
	res := &scripttest.ExampleResult{Example: ex, Pass: strings.Contains(script, "careful")}
	if !res.Pass {
		res.ExitCode, res.Stderr = 1, "mv: cannot stat 'my': No such file or directory\n"
		res.Mismatches = []scripttest.Mismatch{{Kind: "missing", Path: "my photo.jpg", Want: "a file of 0 bytes"}}
	}
	return res, nil
}

const (
	sloppyScript  = `for f in $(ls *.jpeg); do mv $f ${f%.jpeg}.jpg; done`
	carefulScript = `for f in ./*.jpeg; do mv -- "$f" "${f%.jpeg}.jpg"; done # careful`
	photoExample  = `a.jpeg 'my photo.jpeg' => a.jpg 'my photo.jpg'`
)

// TestTrialInREPL: at the review t shows each starting state's verdict, g
// runs an example, a bad example is refused, r carries what failed to the
// model, the revised script passes the example when it runs again, and
// the committed step keeps the example, which :export writes as a test.
func TestTrialInREPL(t *testing.T) {
	p := &fakePlanner{script: sloppyScript, revised: carefulScript}
	sb := &fakeSandbox{}
	ft := &fakeTester{}
	m := newTestModel(t, p, sb)
	m.e.cfg.Tester = ft.make
	sb.changes = []string{filepath.Join(m.st.Dir, "a.jpg")}

	typeText(m, "rename my jpeg photos to jpg")
	drive(t, m, key(m, "enter"))
	if m.state != stReview {
		t.Fatalf("state %v, want review", m.state)
	}
	if v := m.view(); !strings.Contains(v, "t test · g example") {
		t.Errorf("the review's keys lack t and g: %q", v)
	}

	printed := drive(t, m, runeKey(m, 't'))
	if m.state != stReview || len(ft.tested) != 1 || ft.tested[0] != sloppyScript {
		t.Fatalf("after t: state %v, tested %q", m.state, ft.tested)
	}
	for _, want := range []string{
		"tested 3 starting states in 0.0 s: 1 fail, 2 pass",
		"FAIL    a name with a space matches *.jpeg  (name-space *.jpeg)",
		"exit 1, no changes",
		"leaves 'my photo.jpeg' as it is",
		"pass    only a.jpeg matches *.jpeg",
		"r revises the script with what failed",
	} {
		if !strings.Contains(printed, want) {
			t.Errorf("after t the transcript lacks %q:\n%s", want, printed)
		}
	}
	if len(ft.specs) != 1 || ft.specs[0].Dir != m.st.Dir || len(ft.specs[0].Env) == 0 {
		t.Errorf("the tester was made with %+v, want the session's directory and environment", ft.specs)
	}

	drive(t, m, runeKey(m, 'g'))
	if m.state != stExample || !strings.Contains(m.view(), "files before => files after") {
		t.Fatalf("after g: state %v, view %q", m.state, m.view())
	}
	typeText(m, photoExample)
	printed = drive(t, m, key(m, "enter"))
	if m.state != stReview {
		t.Fatalf("after the example: state %v", m.state)
	}
	for _, want := range []string{"FAIL    example 1: " + photoExample, "'my photo.jpg' is missing (expected a file of 0 bytes)"} {
		if !strings.Contains(printed, want) {
			t.Errorf("the example's result lacks %q:\n%s", want, printed)
		}
	}

	// An example that does not parse is refused and the review goes on.
	drive(t, m, runeKey(m, 'g'))
	typeText(m, "no arrow here")
	printed = drive(t, m, key(m, "enter"))
	if m.state != stReview || !strings.Contains(printed, "bad example") || len(ft.examples) != 1 {
		t.Fatalf("a bad example: state %v, examples run %q, transcript:\n%s", m.state, ft.examples, printed)
	}
	// esc at the example goes back to the review, running nothing.
	drive(t, m, runeKey(m, 'g'))
	drive(t, m, key(m, "esc"))
	if m.state != stReview || len(ft.examples) != 1 {
		t.Fatalf("esc at the example: state %v, examples run %q", m.state, ft.examples)
	}

	// r: what failed goes with the feedback, which enter alone sends.
	printed = drive(t, m, runeKey(m, 'r'))
	if m.state != stFeedback || m.answerText.String() != defaultFeedback {
		t.Fatalf("after r: state %v, feedback %q", m.state, m.answerText.String())
	}
	if !strings.Contains(printed, "1 failing example and 1 failing starting state go to the model") {
		t.Errorf("r does not say what goes to the model:\n%s", printed)
	}
	printed = drive(t, m, key(m, "enter"))
	if len(p.feedbacks) != 1 {
		t.Fatalf("feedbacks %q", p.feedbacks)
	}
	for _, want := range []string{
		defaultFeedback,
		"-- before/my photo.jpeg --", "-- after/my photo.jpg --",
		"What the script did: exit status 1.",
		"'my photo.jpg' is missing (expected a file of 0 bytes)",
		"mv: cannot stat 'my'",
		"a name with a space matches *.jpeg: leaves 'my photo.jpeg' as it is",
	} {
		if !strings.Contains(p.feedbacks[0], want) {
			t.Errorf("the feedback lacks %q:\n%s", want, p.feedbacks[0])
		}
	}
	// The revised script runs the example again, and passes it.
	if m.state != stReview || m.art.Script != carefulScript {
		t.Fatalf("after the revision: state %v, script %q", m.state, m.art.Script)
	}
	if !strings.Contains(printed, "pass    example 1 (new script): "+photoExample) {
		t.Errorf("the example did not run again on the revised script:\n%s", printed)
	}
	if want := carefulScript + " | " + photoExample; ft.examples[len(ft.examples)-1] != want {
		t.Errorf("last example run %q, want %q", ft.examples[len(ft.examples)-1], want)
	}

	drive(t, m, key(m, "enter"))
	drive(t, m, runeKey(m, 'c'))
	if len(m.st.Committed) != 1 {
		t.Fatalf("committed %+v", m.st.Committed)
	}
	step := m.st.Committed[0]
	if step.Script != carefulScript || len(step.Examples) != 1 || step.Examples[0].Name != photoExample {
		t.Fatalf("the committed step %+v lacks the example", step)
	}

	// :export writes the example as a test of the committed script.
	var out bytes.Buffer
	if err := m.e.builtin(context.Background(), "export out.sh", m.st.Dir, m.st.Committed, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "wrote 1 example to "+filepath.Join(m.st.Dir, "out.sh.test")) {
		t.Errorf(":export said %q", out.String())
	}
	f, err := os.Open(filepath.Join(m.st.Dir, "out.sh.test"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tests, err := scripttest.ReadTests(f)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := scripttest.ParseExample(photoExample)
	want.Name = photoExample
	if len(tests) != 1 || tests[0].Script != carefulScript || tests[0].Name != "rename my jpeg photos to jpg" ||
		len(tests[0].Examples) != 1 || !reflect.DeepEqual(tests[0].Examples[0], want) {
		t.Errorf("the exported tests read back as %+v, want the script and %+v", tests, want)
	}
}

// TestTrialInLineMode: the line mode's review has t and g too; an empty
// feedback after a failing example sends what failed.
func TestTrialInLineMode(t *testing.T) {
	dir := t.TempDir()
	p := &fakePlanner{script: sloppyScript, revised: carefulScript}
	sb := &fakeSandbox{changes: []string{filepath.Join(dir, "a.jpg")}}
	ft := &fakeTester{}
	cfg := Config{
		Planner: func(string) (Planner, error) { return p, nil },
		Open:    sb.open, Tester: ft.make,
		Model: "test:model", Dir: dir, Home: dir,
		Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir},
	}
	in := strings.Join([]string{"rename my jpeg photos to jpg", "t", "g", photoExample, "r", "", "y", "c", ":export out.sh", ""}, "\n")
	var out, errw bytes.Buffer
	if err := Lines(context.Background(), cfg, strings.NewReader(in), &out, &errw, LineOptions{}); err != nil {
		t.Fatalf("lines: %v\n%s", err, errw.String())
	}
	got := errw.String()
	for _, want := range []string{
		"[t]est, [g]ive an example",
		"FAIL    a name with a space matches *.jpeg",
		"nash: revise (r) sends what failed to the model",
		"FAIL    example 1: " + photoExample,
		"1 failing example and 1 failing starting state go to the model",
		"what should change? [" + defaultFeedback + "]",
		"pass    example 1 (new script): " + photoExample,
		"committed as transaction",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the line mode's output lacks %q:\n%s", want, got)
		}
	}
	if len(p.feedbacks) != 1 || !strings.Contains(p.feedbacks[0], "-- before/my photo.jpeg --") {
		t.Errorf("feedbacks %q, want the failing example", p.feedbacks)
	}
	if !strings.Contains(out.String(), "wrote 1 example to") {
		t.Errorf(":export said %q", out.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "out.sh.test")); err != nil {
		t.Error(err)
	}
}

// TestTrialFeedback: what a revision is told, from what failed of the
// script at hand only.
func TestTrialFeedback(t *testing.T) {
	ex, _ := scripttest.ParseExample("x.txt=hello => x.txt=bye")
	failing := &scripttest.ExampleResult{Example: ex, ExitCode: 0, Mismatches: []scripttest.Mismatch{
		{Kind: "content", Path: "x.txt", Want: "a file of 4 bytes", Got: "a file of 6 bytes", Diff: "--- a/x.txt\n+++ b/x.txt\n-bye\n+hello\n"},
	}}
	passing := &scripttest.ExampleResult{Example: ex, Pass: true}
	for _, tc := range []struct {
		name    string
		tr      trial
		script  string
		want    []string
		notWant []string
	}{
		{"nothing tried", trial{}, "s", []string{"fix it"}, []string{"example", "starting states"}},
		{"a passing example", trial{examples: []scripttest.Example{ex}, results: []*scripttest.ExampleResult{passing}, script: "s"}, "s",
			[]string{"fix it"}, []string{"fails"}},
		{"a failing example", trial{examples: []scripttest.Example{ex}, results: []*scripttest.ExampleResult{failing}, script: "s"}, "s",
			[]string{"fix it\n\nThe script fails this example I gave.", "-- before/x.txt --\nhello\n", "-- after/x.txt --\nbye\n",
				"x.txt holds other content (a file of 6 bytes, expected a file of 4 bytes; - expected, + got)", "  -bye\n  +hello"}, nil},
		{"results of another script", trial{examples: []scripttest.Example{ex}, results: []*scripttest.ExampleResult{failing}, script: "old"}, "s",
			[]string{"fix it"}, []string{"fails"}},
		{"a failing state", trial{script: "s", report: &scripttest.Report{Failed: 1, Variants: []scripttest.Result{
			{Variant: scripttest.Variant{Title: "DIR is not set"}, Verdict: scripttest.Fail, Problems: []scripttest.Finding{{Reason: "deletes /etc/x"}, {Reason: "complains"}}},
		}}}, "s", []string{"it failed in these:\n- DIR is not set: deletes /etc/x; complains\n"}, []string{"example"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.tr.feedback("fix it", tc.script)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("feedback lacks %q:\n%s", w, got)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(got, w) {
					t.Errorf("feedback has %q:\n%s", w, got)
				}
			}
		})
	}
}

// TestTestReportEscapes: names from the disk reach the screen escaped.
func TestTestReportEscapes(t *testing.T) {
	rep := &scripttest.Report{Variants: []scripttest.Result{
		{Variant: scripttest.Variant{Name: "glob-one *.txt", Title: "only \x1b[2Jevil.txt matches *.txt"}, Verdict: scripttest.Fail,
			Problems: []scripttest.Finding{{Reason: "complains: \x1b]0;title\x07"}}},
	}, Failed: 1}
	var b bytes.Buffer
	writeTestReport(&b, newStyles(false), rep)
	if strings.ContainsAny(b.String(), "\x1b\x07") {
		t.Errorf("a control character reached the report: %q", b.String())
	}
	if !strings.Contains(b.String(), `only \x1b[2Jevil.txt matches *.txt`) {
		t.Errorf("the title is not shown escaped: %q", b.String())
	}
}

// TestTestScript: nash test's body. The text says what failed; --json is
// one object that reads back, with what could spoof the terminal escaped
// and > kept as >; a failure is a *TestFailedError counting states and
// examples.
func TestTestScript(t *testing.T) {
	ft := &fakeTester{}
	cfg := Config{Tester: ft.make, Dir: t.TempDir(), Env: []string{"HOME=/h"}}
	ex, err := scripttest.ParseExample(photoExample)
	if err != nil {
		t.Fatal(err)
	}
	ex.Name = photoExample + " \u202e"
	script := sloppyScript + " > /dev/null"

	var out bytes.Buffer
	err = TestScript(context.Background(), cfg, script, []scripttest.Example{ex}, &out, TestOptions{})
	var tf *TestFailedError
	if !errors.As(err, &tf) || tf.States != 1 || tf.Examples != 1 {
		t.Fatalf("err = %v, want 1 state and 1 example failed", err)
	}
	if got := tf.Error(); got != "the script failed in 1 starting state and 1 example" {
		t.Errorf("error %q", got)
	}
	for _, want := range []string{"FAIL    a name with a space matches *.jpeg", `FAIL    example 1: ` + photoExample + ` \u202e`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the text lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "\u202e") {
		t.Errorf("a bidi override reached the text: %q", out.String())
	}

	out.Reset()
	err = TestScript(context.Background(), cfg, script, []scripttest.Example{ex}, &out, TestOptions{JSON: true, Timeout: 7 * time.Second, ManyFiles: 9})
	if !errors.As(err, &tf) {
		t.Fatalf("--json: err = %v", err)
	}
	if strings.Contains(out.String(), "\u202e") || !strings.Contains(out.String(), `\u202e`) || !strings.Contains(out.String(), "> /dev/null") {
		t.Errorf("--json is not escaped as nash's JSON is: %s", out.String())
	}
	var rec struct {
		Script         string `json:"script"`
		Failed         int    `json:"failed"`
		FailedExamples int    `json:"failed_examples"`
		Variants       []struct {
			Name    string `json:"name"`
			Verdict string `json:"verdict"`
		} `json:"variants"`
		Examples []struct {
			Pass       bool                  `json:"pass"`
			Example    scripttest.Example    `json:"example"`
			Mismatches []scripttest.Mismatch `json:"mismatches"`
		} `json:"examples"`
	}
	if err := json.Unmarshal(out.Bytes(), &rec); err != nil {
		t.Fatalf("--json does not read back: %v\n%s", err, out.String())
	}
	if rec.Script != script || rec.Failed != 1 || rec.FailedExamples != 1 || len(rec.Variants) != 3 || rec.Variants[2].Verdict != "fail" ||
		len(rec.Examples) != 1 || rec.Examples[0].Pass || !reflect.DeepEqual(rec.Examples[0].Example, ex) || len(rec.Examples[0].Mismatches) != 1 {
		t.Errorf("--json read back as %+v", rec)
	}
	if s := ft.specs[len(ft.specs)-1]; s.Timeout != 7*time.Second || s.ManyFiles != 9 || s.Dir != cfg.Dir {
		t.Errorf("the tester was made with %+v", s)
	}

	// A script that passes: no error.
	out.Reset()
	if err := TestScript(context.Background(), cfg, carefulScript, nil, &out, TestOptions{}); err != nil {
		t.Errorf("a passing script: %v", err)
	}
	if err := TestScript(context.Background(), Config{}, carefulScript, nil, &out, TestOptions{}); !errors.Is(err, errNoTester) {
		t.Errorf("no tester: %v", err)
	}
}
