package shell

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/nash-shell/nash/planner"
)

// newTestModel is a REPL model over fakes, in a fresh directory.
func newTestModel(t testing.TB, p *fakePlanner, sb *fakeSandbox) *model {
	t.Helper()
	dir := t.TempDir()
	cfg := Config{
		Planner: func() (Planner, error) { return p, nil },
		Open:    sb.open,
		Model:   "test:model",
		Dir:     dir,
		Env:     []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir},
		Home:    dir,
	}
	m, err := newModel(context.Background(), cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func typeText(m *model, s string) {
	for _, r := range s {
		if r == ' ' {
			m.Update(tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}})
			continue
		}
		m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	}
}

func key(m *model, k tea.KeyType) tea.Cmd {
	_, cmd := m.Update(tea.KeyMsg{Type: k})
	return cmd
}

func runeKey(m *model, r rune) tea.Cmd {
	_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}})
	return cmd
}

// feed sends every message a command produced back into the model, one
// level deep, and returns the commands that produced.
func feed(t *testing.T, m *model, cmd tea.Cmd) []tea.Cmd {
	t.Helper()
	var next []tea.Cmd
	for _, msg := range runCmd(t, cmd) {
		if _, ok := msg.(kindMsg); ok {
			continue
		}
		_, c := m.Update(msg)
		next = append(next, c)
	}
	return next
}

func hasMsg(t *testing.T, cmd tea.Cmd, kind string) bool {
	for _, msg := range runCmd(t, cmd) {
		if k, ok := msg.(kindMsg); ok && strings.Contains(string(k), kind) {
			return true
		}
	}
	return false
}

func TestRouteIndicatorFollowsTyping(t *testing.T) {
	m := newTestModel(t, &fakePlanner{}, &fakeSandbox{})
	for _, tc := range []struct {
		text  string
		kind  Kind
		badge string
	}{
		{"ls -la", Command, "[cmd]"},
		{"tidy up my photos", English, "[ask]"},
		{"?ls -la", English, "[ask]"},
		{"!tidy up", Command, "[cmd]"},
		{":log", Builtin, "[nash]"},
		{"cd /", Session, "[cmd]"},
	} {
		key(m, tea.KeyCtrlU)
		typeText(m, tc.text)
		if m.route.Kind != tc.kind {
			t.Errorf("%q: route %v, want %v", tc.text, m.route.Kind, tc.kind)
		}
		if v := m.View(); !strings.Contains(v, tc.badge) || !strings.Contains(v, "test:model") {
			t.Errorf("%q: view %q lacks %s or the model", tc.text, v, tc.badge)
		}
	}
}

func TestRequestReviewRunCommit(t *testing.T) {
	p := &fakePlanner{script: "echo hi > hi.txt"}
	sb := &fakeSandbox{}
	m := newTestModel(t, p, sb)
	sb.changes = []string{filepath.Join(m.st.Dir, "hi.txt")}
	typeText(m, "greet me in a file")
	cmd := key(m, tea.KeyEnter)
	if m.state != stWaiting || m.req.prompt != "greet me in a file" {
		t.Fatalf("after enter: state %v, prompt %q", m.state, m.req.prompt)
	}
	feed(t, m, cmd) // the planner answers
	if m.state != stReview || m.art == nil || m.art.Script != "echo hi > hi.txt" || m.art.Report == nil {
		t.Fatalf("after planning: state %v, artifact %+v", m.state, m.art)
	}
	if len(p.plans) != 1 {
		t.Fatalf("planner asked %d times", len(p.plans))
	}
	cmd = key(m, tea.KeyEnter)
	if m.state != stRunning || !hasMsg(t, cmd, "execMsg") {
		t.Fatalf("enter at review: state %v; want running with a terminal handover", m.state)
	}
	// The handover runs the script; here its result is delivered directly.
	o, err := m.e.run(context.Background(), OpenSpec{Dir: m.st.Dir}, m.req.prompt, m.art.Script, m.art.Report)
	if err != nil {
		t.Fatal(err)
	}
	m.Update(runDoneMsg{out: o})
	if m.state != stSummary || m.pendingRun == nil {
		t.Fatalf("after the run: state %v", m.state)
	}
	if v := m.View(); !strings.Contains(v, "c commit") {
		t.Errorf("summary view %q", v)
	}
	feed(t, m, runeKey(m, 'c'))
	if m.state != stInput || len(sb.commits) != 1 || sb.commits[0] != nil {
		t.Fatalf("after c: state %v, commits %v", m.state, sb.commits)
	}
	if len(m.st.Committed) != 1 || m.st.Committed[0].Prompt != "greet me in a file" {
		t.Errorf("session committed %+v", m.st.Committed)
	}
	if len(p.remembered) != 1 {
		t.Errorf("planner remembered %d requests, want 1", len(p.remembered))
	}
}

func TestAbortAtReviewRunsNothing(t *testing.T) {
	for _, k := range []tea.KeyMsg{{Type: tea.KeyEsc}, {Type: tea.KeyRunes, Runes: []rune{'a'}}, {Type: tea.KeyCtrlC}} {
		p := &fakePlanner{script: "rm -r build"}
		sb := &fakeSandbox{}
		m := newTestModel(t, p, sb)
		typeText(m, "remove the build dir please")
		feed(t, m, key(m, tea.KeyEnter))
		if m.state != stReview {
			t.Fatalf("state %v, want review", m.state)
		}
		m.Update(k)
		if m.state != stInput || len(sb.runs) != 0 {
			t.Errorf("%v at review: state %v, runs %v", k, m.state, sb.runs)
		}
	}
}

func TestAbortAfterRun(t *testing.T) {
	sb := &fakeSandbox{changes: []string{"/x"}}
	m := newTestModel(t, &fakePlanner{}, sb)
	typeText(m, "echo x")
	cmd := key(m, tea.KeyEnter) // a typed command runs without review
	if m.state != stRunning || !hasMsg(t, cmd, "execMsg") {
		t.Fatalf("typed command: state %v", m.state)
	}
	o, _ := m.e.run(context.Background(), OpenSpec{}, "", "echo x", nil)
	m.Update(runDoneMsg{out: o})
	feed(t, m, runeKey(m, 'a'))
	if m.state != stInput || len(sb.aborts) != 1 || len(sb.commits) != 0 {
		t.Errorf("after a: state %v, aborts %v, commits %v", m.state, sb.aborts, sb.commits)
	}
}

func TestSecondConfirmation(t *testing.T) {
	// A directory outside the working directory, with something in it: a
	// deletion of what is not there would need no confirmation.
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "x"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := &fakePlanner{script: "rm -rf " + outside}
	sb := &fakeSandbox{}
	m := newTestModel(t, p, sb)
	typeText(m, "clean the system please")
	feed(t, m, key(m, tea.KeyEnter))
	if m.reason == "" || !strings.Contains(m.reason, "deletes outside") {
		t.Fatalf("reason %q", m.reason)
	}
	key(m, tea.KeyEnter)
	if m.state != stConfirm {
		t.Fatalf("state %v, want confirm", m.state)
	}
	typeText(m, "y")
	key(m, tea.KeyEnter)
	if m.state != stInput || len(sb.runs) != 0 {
		t.Fatalf("'y' is not yes: state %v, runs %v", m.state, sb.runs)
	}
	typeText(m, "clean the system please")
	feed(t, m, key(m, tea.KeyEnter))
	key(m, tea.KeyEnter)
	typeText(m, "yes")
	if cmd := key(m, tea.KeyEnter); m.state != stRunning || !hasMsg(t, cmd, "execMsg") {
		t.Errorf("yes: state %v", m.state)
	}
}

func TestReviseAndExplain(t *testing.T) {
	p := &fakePlanner{script: "echo a > f", revised: "echo b > f"}
	m := newTestModel(t, p, &fakeSandbox{})
	typeText(m, "a file please")
	feed(t, m, key(m, tea.KeyEnter))
	runeKey(m, 'r')
	if m.state != stFeedback {
		t.Fatalf("state %v, want feedback", m.state)
	}
	typeText(m, "write b instead")
	feed(t, m, key(m, tea.KeyEnter))
	if m.state != stReview || m.art.Script != "echo b > f" || !strings.Contains(m.art.Diff, "+echo b > f") {
		t.Fatalf("after revise: state %v, artifact %+v", m.state, m.art)
	}
	if len(p.feedbacks) != 1 || p.feedbacks[0] != "write b instead" {
		t.Errorf("feedback %q", p.feedbacks)
	}
	feed(t, m, runeKey(m, 'x'))
	if m.state != stReview || len(p.explained) != 1 || p.explained[0] != "echo b > f" {
		t.Errorf("explain: state %v, explained %q", m.state, p.explained)
	}
}

func TestCtrlCCancelsPlanning(t *testing.T) {
	p := &fakePlanner{block: true}
	m := newTestModel(t, p, &fakeSandbox{})
	typeText(m, "something slow please")
	cmd := key(m, tea.KeyEnter)
	key(m, tea.KeyCtrlC)
	feed(t, m, cmd) // returns once the context is cancelled
	if m.state != stInput {
		t.Errorf("state %v, want input after cancel", m.state)
	}
}

func TestCtrlCAtPromptClearsNotQuits(t *testing.T) {
	m := newTestModel(t, &fakePlanner{}, &fakeSandbox{})
	typeText(m, "half a line")
	if cmd := key(m, tea.KeyCtrlC); cmd != nil {
		t.Errorf("ctrl+c returned a command")
	}
	if m.input.String() != "" {
		t.Errorf("line %q not cleared", m.input.String())
	}
	if cmd := key(m, tea.KeyCtrlD); !hasMsg(t, cmd, "QuitMsg") {
		t.Errorf("ctrl+d on an empty line does not quit")
	}
}

func TestHistoryBrowseAndSearch(t *testing.T) {
	m := newTestModel(t, &fakePlanner{}, &fakeSandbox{})
	m.hist = NewHistory([]string{"ls", "echo one", "git status", "echo two"})
	m.histPos = m.hist.Len()
	typeText(m, "dra")
	key(m, tea.KeyUp)
	key(m, tea.KeyUp)
	if got := m.input.String(); got != "git status" {
		t.Errorf("up up: %q", got)
	}
	key(m, tea.KeyDown)
	key(m, tea.KeyDown)
	if got := m.input.String(); got != "dra" {
		t.Errorf("down to the draft: %q", got)
	}
	key(m, tea.KeyCtrlU)
	key(m, tea.KeyCtrlR)
	typeText(m, "echo")
	if m.match != 3 || !strings.Contains(m.View(), "echo two") {
		t.Errorf("search: match %d, view %q", m.match, m.View())
	}
	key(m, tea.KeyCtrlR)
	if m.match != 1 {
		t.Errorf("search again: match %d", m.match)
	}
	key(m, tea.KeyEsc)
	if got := m.input.String(); got != "echo one" || m.searching {
		t.Errorf("after esc: %q, searching %v", got, m.searching)
	}
}

func TestSessionCdExport(t *testing.T) {
	sb := &fakeSandbox{}
	m := newTestModel(t, &fakePlanner{}, sb)
	start := m.st.Dir
	sub := filepath.Join(start, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	typeText(m, "cd sub")
	key(m, tea.KeyEnter)
	typeText(m, "export GREETING=hello")
	key(m, tea.KeyEnter)
	if m.st.Dir != sub || m.st.Getenv("GREETING") != "hello" {
		t.Fatalf("dir %q, GREETING %q", m.st.Dir, m.st.Getenv("GREETING"))
	}
	typeText(m, "true")
	key(m, tea.KeyEnter)
	if m.state != stRunning {
		t.Fatalf("state %v", m.state)
	}
	// The run gets the session's directory and environment.
	o, _ := m.e.run(context.Background(), OpenSpec{Dir: m.st.Dir, Env: m.st.Environ()}, "", "true", nil)
	m.Update(runDoneMsg{out: o})
	spec := sb.specs[len(sb.specs)-1]
	if spec.Dir != sub || !contains(spec.Env, "GREETING=hello") {
		t.Errorf("run spec %+v", spec)
	}
	typeText(m, "cd -")
	key(m, tea.KeyEnter)
	if m.st.Dir != start {
		t.Errorf("cd -: %q", m.st.Dir)
	}
	typeText(m, "exit")
	if cmd := key(m, tea.KeyEnter); !hasMsg(t, cmd, "QuitMsg") {
		t.Errorf("exit does not quit")
	}
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

func TestPickPaths(t *testing.T) {
	sb := &fakeSandbox{changes: []string{"/w/a", "/w/b", "/w/c"}}
	m := newTestModel(t, &fakePlanner{}, sb)
	typeText(m, "touch a b c")
	key(m, tea.KeyEnter)
	o, _ := m.e.run(context.Background(), OpenSpec{}, "", "touch a b c", nil)
	m.Update(runDoneMsg{out: o})
	runeKey(m, 'p')
	if m.state != stPick || len(m.picks) != 3 {
		t.Fatalf("state %v, picks %v", m.state, m.picks)
	}
	key(m, tea.KeyEnter) // nothing picked: stays
	if m.state != stPick {
		t.Fatalf("enter with nothing picked left the pick screen")
	}
	key(m, tea.KeyDown)
	key(m, tea.KeySpace)
	feed(t, m, key(m, tea.KeyEnter))
	if len(sb.commits) != 1 || len(sb.commits[0]) != 1 || sb.commits[0][0] != "/w/b" {
		t.Errorf("commits %v, want [[/w/b]]", sb.commits)
	}
}

func TestBuiltins(t *testing.T) {
	m := newTestModel(t, &fakePlanner{}, &fakeSandbox{})
	for _, tc := range []struct{ line, want string }{
		{":help", ":undo [ID]"},
		{":model", "test:model"},
		{":find tax", "index is not set up"},
		{":undo", "undid transaction t1"},
		{":export out.sh", "nothing committed"},
		{":nope", "unknown built-in"},
	} {
		typeText(m, tc.line)
		cmd := key(m, tea.KeyEnter)
		if m.state != stWaiting {
			t.Fatalf("%s: state %v", tc.line, m.state)
		}
		var got string
		for _, msg := range runCmd(t, cmd) {
			if b, ok := msg.(builtinMsg); ok {
				got = b.text
				m.Update(msg)
			}
		}
		if !strings.Contains(got, tc.want) || m.state != stInput {
			t.Errorf("%s: %q (state %v), want %q", tc.line, got, m.state, tc.want)
		}
	}
}

func TestViewHasNoColorWithoutColor(t *testing.T) {
	p := &fakePlanner{script: "rm -r build # go"}
	m := newTestModel(t, p, &fakeSandbox{})
	if err := os.Mkdir(filepath.Join(m.st.Dir, "build"), 0o755); err != nil {
		t.Fatal(err)
	}
	typeText(m, "clean up please")
	var printed strings.Builder
	cmd := key(m, tea.KeyEnter)
	for _, msg := range runCmd(t, cmd) {
		if pr, ok := msg.(planReadyMsg); ok {
			_, c := m.Update(pr)
			_ = c
			var b strings.Builder
			writeReview(&b, m.sty, m.art, 80)
			printed.WriteString(b.String())
		}
	}
	out := printed.String() + m.View()
	if strings.Contains(out, "\x1b[3") || strings.Contains(out, "\x1b[4") || strings.Contains(out, "\x1b[9") || strings.Contains(out, "38;5") {
		t.Errorf("colour codes without colour: %q", out)
	}
	if !strings.Contains(out, "[DELETES]") {
		t.Errorf("no risk badge in %q", out)
	}
}

func TestStartupTouchesNothing(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{
		Planner: func() (Planner, error) { t.Error("the planner was built at startup"); return nil, nil },
		Open: func(context.Context, OpenSpec) (Sandbox, error) {
			t.Error("a sandbox was opened at startup")
			return nil, nil
		},
		Find: func(context.Context, string, io.Writer) error {
			t.Error("the index was searched at startup")
			return nil
		},
		Model: "m", Dir: dir, Home: dir, StateDir: filepath.Join(dir, "state"),
	}
	m, err := newModel(context.Background(), cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cmd := m.Init(); cmd != nil {
		t.Errorf("Init returned a command")
	}
	typeText(m, "tidy up my photos")
	if v := m.View(); !strings.Contains(v, "[ask] tidy up my photos") {
		t.Errorf("view %q", v)
	}
}

func TestQuestionGoesIntoHistory(t *testing.T) {
	m := newTestModel(t, &fakePlanner{}, &fakeSandbox{})
	m.req = request{prompt: "rename them"}
	m.state = stWaiting
	m.Update(planReadyMsg{art: &planner.Artifact{Question: "which files?"}})
	if m.state != stInput || len(m.st.History) != 1 || !strings.Contains(m.st.History[0].Output, "which files?") {
		t.Errorf("state %v, history %+v", m.state, m.st.History)
	}
}
