package shell

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/nash-shell/nash/sandbox/egress"
)

// newTestModel is a REPL model over fakes, in a fresh directory.
func newTestModel(t testing.TB, p *fakePlanner, sb *fakeSandbox) *model {
	t.Helper()
	return newTestModelWith(t, p, sb, nil)
}

// newTestModelWith is newTestModel with set changing the Config first.
func newTestModelWith(t testing.TB, p *fakePlanner, sb *fakeSandbox, set func(*Config)) *model {
	t.Helper()
	dir := t.TempDir()
	cfg := Config{
		Planner: func(string) (Planner, error) { return p, nil },
		Open:    sb.open,
		Model:   "test:model",
		Dir:     dir,
		Env:     []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir},
		Home:    dir,
	}
	if set != nil {
		set(&cfg)
	}
	m, err := newModel(context.Background(), cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	runInPlace(m)
	return m
}

func typeText(m *model, s string) {
	for _, r := range s {
		if r == ' ' {
			m.Update(keyMsg("space"))
			continue
		}
		m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

// keyMsg is the key bubbletea reports for name: "enter", "esc", "up",
// "space", "ctrl+c", ...
func keyMsg(name string) tea.KeyPressMsg {
	if mod, k, ok := strings.Cut(name, "+"); ok && mod == "ctrl" {
		return tea.KeyPressMsg{Code: rune(k[0]), Mod: tea.ModCtrl}
	}
	code := map[string]rune{
		"enter": tea.KeyEnter, "esc": tea.KeyEscape, "up": tea.KeyUp, "down": tea.KeyDown,
		"left": tea.KeyLeft, "right": tea.KeyRight, "home": tea.KeyHome, "end": tea.KeyEnd,
		"backspace": tea.KeyBackspace, "delete": tea.KeyDelete, "tab": tea.KeyTab, "space": tea.KeySpace,
	}[name]
	if code == 0 {
		panic("keyMsg: no key " + name)
	}
	k := tea.KeyPressMsg{Code: code}
	if code == tea.KeySpace {
		k.Text = " "
	}
	return k
}

func key(m *model, name string) tea.Cmd {
	_, cmd := m.Update(keyMsg(name))
	return cmd
}

func runeKey(m *model, r rune) tea.Cmd {
	_, cmd := m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
	return cmd
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
		key(m, "ctrl+u")
		typeText(m, tc.text)
		if m.route.Kind != tc.kind {
			t.Errorf("%q: route %v, want %v", tc.text, m.route.Kind, tc.kind)
		}
		if v := m.view(); !strings.Contains(v, tc.badge) || !strings.Contains(v, "test:model") {
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
	cmd := key(m, "enter")
	if m.state != stWaiting {
		t.Fatalf("after enter: state %v", m.state)
	}
	printed := drive(t, m, cmd) // the planner answers
	if m.state != stReview || m.art == nil || m.art.Script != "echo hi > hi.txt" || m.art.Report == nil {
		t.Fatalf("after planning: state %v, artifact %+v", m.state, m.art)
	}
	if !strings.Contains(printed, "echo hi > hi.txt") || !strings.Contains(printed, "what it will do") {
		t.Errorf("the review is not in the transcript:\n%s", printed)
	}
	if len(p.plans) != 1 || p.plans[0] != "greet me in a file" {
		t.Fatalf("planner asked %q", p.plans)
	}
	printed = drive(t, m, key(m, "enter")) // run
	if m.state != stSummary || m.pendingRun == nil || len(sb.runs) != 1 {
		t.Fatalf("after the run: state %v, runs %v", m.state, sb.runs)
	}
	if !strings.Contains(printed, "hi.txt") {
		t.Errorf("the effect summary is not in the transcript:\n%s", printed)
	}
	if v := m.view(); !strings.Contains(v, "c commit") {
		t.Errorf("summary view %q", v)
	}
	printed = drive(t, m, runeKey(m, 'c'))
	if m.state != stInput || len(sb.commits) != 1 || sb.commits[0] != nil {
		t.Fatalf("after c: state %v, commits %v", m.state, sb.commits)
	}
	if !strings.Contains(printed, "committed as transaction t1") || !strings.Contains(printed, ":undo t1") {
		t.Errorf("after c: %q", printed)
	}
	if len(m.st.Committed) != 1 || m.st.Committed[0].Prompt != "greet me in a file" {
		t.Errorf("session committed %+v", m.st.Committed)
	}
	if len(p.remembered) != 1 {
		t.Errorf("planner remembered %d requests, want 1", len(p.remembered))
	}
	if len(m.st.History) != 1 || m.st.History[0].Script != "echo hi > hi.txt" {
		t.Errorf("session history %+v", m.st.History)
	}
}

func TestAbortAtReviewRunsNothing(t *testing.T) {
	for _, k := range []tea.KeyPressMsg{{Code: 'a', Text: "a"}, {Code: 'n', Text: "n"}, keyMsg("ctrl+c")} {
		p := &fakePlanner{script: "rm -r build"}
		sb := &fakeSandbox{}
		m := newTestModel(t, p, sb)
		typeText(m, "remove the build dir please")
		drive(t, m, key(m, "enter"))
		if m.state != stReview {
			t.Fatalf("state %v, want review", m.state)
		}
		_, cmd := m.Update(k)
		printed := drive(t, m, cmd)
		if m.state != stInput || len(sb.runs) != 0 || !strings.Contains(printed, "nothing was run") {
			t.Errorf("%v at review: state %v, runs %v, printed %q", k, m.state, sb.runs, printed)
		}
	}
}

// TestEscIsNotAbort: esc at the review does nothing (a vim reflex).
func TestEscIsNotAbort(t *testing.T) {
	sb := &fakeSandbox{changes: []string{"/w/x"}}
	m := newTestModel(t, &fakePlanner{script: "echo x > x"}, sb)
	typeText(m, "please write x")
	drive(t, m, key(m, "enter"))
	drive(t, m, key(m, "esc"))
	if m.state != stReview || len(sb.runs) != 0 {
		t.Fatalf("esc at review: state %v, runs %v", m.state, sb.runs)
	}
	drive(t, m, key(m, "enter"))
	drive(t, m, key(m, "esc"))
	if m.state != stSummary || sb.dropped("1") {
		t.Fatalf("esc at the summary: state %v, aborts %v, kept %v", m.state, sb.aborts, sb.kept)
	}
}

// TestAbortAfterRun: aborting a run that made files takes a second,
// deliberate key; any other goes back; the aborted run is kept and the
// message says how to get it back.
func TestAbortAfterRun(t *testing.T) {
	sb := &fakeSandbox{changes: []string{"/w/x"}}
	m := newTestModel(t, &fakePlanner{script: "echo x > x"}, sb)
	typeText(m, "please write x")
	drive(t, m, key(m, "enter"))
	drive(t, m, key(m, "enter")) // run
	if m.state != stSummary || len(sb.runs) != 1 {
		t.Fatalf("state %v, runs %v", m.state, sb.runs)
	}
	drive(t, m, runeKey(m, 'a'))
	if m.state != stDiscard || !strings.Contains(m.view(), "y abort") {
		t.Fatalf("after a: state %v, view %q", m.state, m.view())
	}
	drive(t, m, runeKey(m, 'p')) // "apt", typed by habit: back to the changes
	if m.state != stSummary || sb.dropped("1") {
		t.Fatalf("after a, p: state %v, aborts %v, kept %v", m.state, sb.aborts, sb.kept)
	}
	drive(t, m, runeKey(m, 'a'))
	printed := drive(t, m, runeKey(m, 'y'))
	if m.state != stInput || len(sb.kept) != 1 || len(sb.aborts) != 0 || len(sb.commits) != 0 {
		t.Fatalf("after a, y: state %v, kept %v, aborts %v, commits %v", m.state, sb.kept, sb.aborts, sb.commits)
	}
	for _, want := range []string{"nothing was changed", "kept as 1", ":show 1", ":commit 1"} {
		if !strings.Contains(printed, want) {
			t.Errorf("the abort message lacks %q: %q", want, printed)
		}
	}
}

// TestAbortOfDeletionsOnly: a run that only deleted is aborted on one key:
// not making the deletion loses nothing.
func TestAbortOfDeletionsOnly(t *testing.T) {
	sb := &fakeSandbox{}
	m := newTestModel(t, &fakePlanner{script: "true"}, sb)
	typeText(m, "nothing much please")
	drive(t, m, key(m, "enter"))
	sb.changes = nil
	drive(t, m, key(m, "enter"))
	if m.state != stInput || len(sb.aborts) != 1 {
		t.Fatalf("a run without changes: state %v, aborts %v", m.state, sb.aborts)
	}
}

// TestTypedCommandCommitsWhenItEnds: a typed line's changes are committed
// without a question, in one line that names :undo; with Typed ask, the
// summary asks as for a request.
func TestTypedCommandCommitsWhenItEnds(t *testing.T) {
	sb := &fakeSandbox{changes: []string{"/w/essay.txt"}}
	m := newTestModel(t, &fakePlanner{}, sb)
	typeText(m, "echo x")
	printed := drive(t, m, key(m, "enter"))
	if m.state != stInput || len(sb.commits) != 1 {
		t.Fatalf("typed command: state %v, commits %v, printed %q", m.state, sb.commits, printed)
	}
	if !strings.Contains(printed, "transaction t1 · :undo") || strings.Contains(printed, "changes:") {
		t.Errorf("the commit line %q", printed)
	}

	sb = &fakeSandbox{changes: []string{"/w/essay.txt"}}
	m = newTestModelWith(t, &fakePlanner{}, sb, func(c *Config) { c.Typed = TypedAsk })
	typeText(m, "echo x")
	drive(t, m, key(m, "enter"))
	if m.state != stSummary || len(sb.commits) != 0 {
		t.Fatalf("typed command with Typed ask: state %v, commits %v", m.state, sb.commits)
	}
}

// TestToolFilesNeverAsk: a run that changed only tools' own files is
// committed as bookkeeping, request or typed line, without a word.
func TestToolFilesNeverAsk(t *testing.T) {
	for _, line := range []string{"git status", "show the status please"} {
		sb := &fakeSandbox{}
		m := newTestModel(t, &fakePlanner{script: "git status"}, sb)
		sb.changes = []string{m.st.Dir + "/.git/index", m.e.cfg.Home + "/.lesshst"}
		typeText(m, line)
		printed := drive(t, m, key(m, "enter"))
		if m.state == stReview {
			printed += drive(t, m, key(m, "enter"))
		}
		if m.state != stInput || len(sb.opts) != 1 || !sb.opts[0].Bookkeeping || len(sb.opts[0].Tools) != 2 {
			t.Fatalf("%s: state %v, commits %+v, printed %q", line, m.state, sb.opts, printed)
		}
		if strings.Contains(printed, "NOT PREDICTED") || strings.Contains(printed, "changes") {
			t.Errorf("%s: printed %q", line, printed)
		}
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
	printed := drive(t, m, key(m, "enter"))
	if m.state != stReview || !strings.Contains(printed, "careful:") || !strings.Contains(printed, "deletes outside") {
		t.Fatalf("state %v, printed %q", m.state, printed)
	}
	drive(t, m, key(m, "enter"))
	if m.state != stConfirm {
		t.Fatalf("state %v, want confirm", m.state)
	}
	drive(t, m, key(m, "esc")) // back to the review
	if m.state != stReview {
		t.Fatalf("esc at the confirmation: state %v, want review", m.state)
	}
	drive(t, m, key(m, "enter"))
	typeText(m, "y")
	drive(t, m, key(m, "enter"))
	if m.state != stInput || len(sb.runs) != 0 {
		t.Fatalf("'y' is not yes: state %v, runs %v", m.state, sb.runs)
	}
	typeText(m, "clean the system please")
	drive(t, m, key(m, "enter"))
	drive(t, m, key(m, "enter"))
	typeText(m, "yes")
	drive(t, m, key(m, "enter"))
	if len(sb.runs) != 1 || m.state != stInput {
		t.Errorf("yes: state %v, runs %v", m.state, sb.runs)
	}
}

// TestTypedCommandConfirmation: a typed command that deletes outside the
// directory shows what it will do and asks for yes, with no review.
func TestTypedCommandConfirmation(t *testing.T) {
	outside := t.TempDir() // with something in it, so the deletion is real
	if err := os.WriteFile(filepath.Join(outside, "x"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	sb := &fakeSandbox{}
	m := newTestModel(t, &fakePlanner{}, sb)
	typeText(m, "rm -rf "+outside)
	printed := drive(t, m, key(m, "enter"))
	if m.state != stConfirm || !strings.Contains(printed, "deletes outside") || len(sb.runs) != 0 {
		t.Fatalf("state %v, runs %v, printed %q", m.state, sb.runs, printed)
	}
	typeText(m, "yes")
	drive(t, m, key(m, "enter"))
	if len(sb.runs) != 1 || m.state != stInput {
		t.Errorf("yes: state %v, runs %v", m.state, sb.runs)
	}
}

func TestReviseAndExplain(t *testing.T) {
	p := &fakePlanner{script: "echo a > f", revised: "echo b > f"}
	m := newTestModel(t, p, &fakeSandbox{})
	typeText(m, "a file please")
	drive(t, m, key(m, "enter"))
	drive(t, m, runeKey(m, 'r'))
	if m.state != stFeedback {
		t.Fatalf("state %v, want feedback", m.state)
	}
	typeText(m, "write b instead")
	printed := drive(t, m, key(m, "enter"))
	if m.state != stReview || m.art.Script != "echo b > f" || !strings.Contains(m.art.Diff, "+echo b > f") {
		t.Fatalf("after revise: state %v, artifact %+v", m.state, m.art)
	}
	if !strings.Contains(printed, "+echo b > f") {
		t.Errorf("the revised review is not in the transcript: %q", printed)
	}
	if len(p.feedbacks) != 1 || p.feedbacks[0] != "write b instead" {
		t.Errorf("feedback %q", p.feedbacks)
	}
	printed = drive(t, m, runeKey(m, 'x'))
	if m.state != stReview || len(p.explained) != 1 || p.explained[0] != "echo b > f" {
		t.Errorf("explain: state %v, explained %q", m.state, p.explained)
	}
	if !strings.Contains(printed, "it explains echo b > f") || strings.Contains(printed, "what it will do") {
		t.Errorf("after explain the transcript has %q: want the explanation, not the review again", printed)
	}
}

func TestCtrlCCancelsPlanning(t *testing.T) {
	p := &fakePlanner{block: true}
	m := newTestModel(t, p, &fakeSandbox{})
	typeText(m, "something slow please")
	cmd := key(m, "enter")
	// The flow says it is planning, then waits on the model.
	var next tea.Cmd
	for _, msg := range runCmd(t, cmd) {
		if _, ok := msg.(flowBusyMsg); ok {
			_, next = m.Update(msg)
		}
	}
	if m.state != stWaiting || m.cancel == nil {
		t.Fatalf("while planning: state %v", m.state)
	}
	key(m, "ctrl+c")
	printed := drive(t, m, next) // the flow ends once the context is cancelled
	if m.state != stInput || !strings.Contains(printed, "cancelled") {
		t.Errorf("state %v, printed %q; want input after cancel", m.state, printed)
	}
}

func TestCtrlCAtPromptClearsNotQuits(t *testing.T) {
	m := newTestModel(t, &fakePlanner{}, &fakeSandbox{})
	typeText(m, "half a line")
	// The line stays in the scrollback, marked ^C, as bash leaves it.
	msgs := runCmd(t, key(m, "ctrl+c"))
	if len(msgs) != 1 {
		t.Fatalf("ctrl+c gave %v, want one printed line", msgs)
	}
	if p, ok := msgs[0].(printedMsg); !ok || !strings.HasSuffix(string(p), "half a line^C") {
		t.Errorf("ctrl+c printed %v, want the line and ^C", msgs)
	}
	if m.input.String() != "" {
		t.Errorf("line %q not cleared", m.input.String())
	}
	if cmd := key(m, "ctrl+d"); !hasMsg(t, cmd, "QuitMsg") {
		t.Errorf("ctrl+d on an empty line does not quit")
	}
}

func TestHistoryBrowseAndSearch(t *testing.T) {
	m := newTestModel(t, &fakePlanner{}, &fakeSandbox{})
	m.hist = NewHistory([]string{"ls", "echo one", "git status", "echo two"})
	m.histPos = m.hist.Len()
	typeText(m, "dra")
	key(m, "up")
	key(m, "up")
	if got := m.input.String(); got != "git status" {
		t.Errorf("up up: %q", got)
	}
	key(m, "down")
	key(m, "down")
	if got := m.input.String(); got != "dra" {
		t.Errorf("down to the draft: %q", got)
	}
	key(m, "ctrl+u")
	key(m, "ctrl+r")
	typeText(m, "echo")
	if m.match != 3 || !strings.Contains(m.view(), "echo two") {
		t.Errorf("search: match %d, view %q", m.match, m.view())
	}
	key(m, "ctrl+r")
	if m.match != 1 {
		t.Errorf("search again: match %d", m.match)
	}
	key(m, "esc")
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
	key(m, "enter")
	typeText(m, "export GREETING=hello")
	key(m, "enter")
	if m.st.Dir != sub || m.st.Getenv("GREETING") != "hello" {
		t.Fatalf("dir %q, GREETING %q", m.st.Dir, m.st.Getenv("GREETING"))
	}
	typeText(m, "true")
	drive(t, m, key(m, "enter"))
	if m.state != stInput || len(sb.runs) != 1 {
		t.Fatalf("state %v, runs %v", m.state, sb.runs)
	}
	// The run gets the session's directory and environment.
	spec := sb.specs[len(sb.specs)-1]
	if spec.Dir != sub || !contains(spec.Env, "GREETING=hello") {
		t.Errorf("run spec %+v", spec)
	}
	typeText(m, "cd -")
	key(m, "enter")
	if m.st.Dir != start {
		t.Errorf("cd -: %q", m.st.Dir)
	}
	typeText(m, "exit")
	if cmd := key(m, "enter"); !hasMsg(t, cmd, "QuitMsg") {
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
	m := newTestModel(t, &fakePlanner{script: "touch a b c"}, sb)
	typeText(m, "three files please")
	drive(t, m, key(m, "enter"))
	drive(t, m, key(m, "enter"))
	runeKey(m, 'p')
	if m.state != stPick || len(m.picks) != 3 {
		t.Fatalf("state %v, picks %v", m.state, m.picks)
	}
	key(m, "enter") // nothing picked: stays
	if m.state != stPick {
		t.Fatalf("enter with nothing picked left the pick screen")
	}
	key(m, "down")
	key(m, "space")
	drive(t, m, key(m, "enter"))
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
		cmd := key(m, "enter")
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
	printed := drive(t, m, key(m, "enter"))
	out := printed + m.view()
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
		Planner: func(string) (Planner, error) { t.Error("the planner was built at startup"); return nil, nil },
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
	// Init may print the first-prompt hint; what it starts opens nothing
	// (Planner, Open and Find fail the test when called).
	runCmds(m, m.Init())
	typeText(m, "tidy up my photos")
	if v := m.view(); !strings.Contains(v, "[ask] tidy up my photos") {
		t.Errorf("view %q", v)
	}
}

// runCmds runs cmd and what it batches, and hands their messages to m.
func runCmds(m *model, cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	switch msg := cmd().(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			runCmds(m, c)
		}
	default:
		m.Update(msg)
	}
}

func TestQuestionGoesIntoHistory(t *testing.T) {
	m := newTestModel(t, &fakePlanner{question: "which files?"}, &fakeSandbox{})
	typeText(m, "rename them")
	printed := drive(t, m, key(m, "enter"))
	if m.state != stInput || len(m.st.History) != 1 || !strings.Contains(m.st.History[0].Output, "which files?") {
		t.Errorf("state %v, history %+v", m.state, m.st.History)
	}
	if !strings.Contains(printed, "the model asks: which files?") {
		t.Errorf("printed %q", printed)
	}
}

// TestNetworkQuestionInREPL: a run refused a destination; the REPL asks,
// a allows it, and the script runs again with it allowed.
func TestNetworkQuestionInREPL(t *testing.T) {
	sb := &fakeSandbox{changes: []string{"/w/out"}, network: []egress.Contact{{Host: "example.org", Port: 443, Proto: egress.ProtoTCP}}}
	m := newTestModelWith(t, &fakePlanner{}, sb, func(c *Config) { c.Typed = TypedAsk })
	typeText(m, "true")
	printed := drive(t, m, key(m, "enter"))
	if m.state != stNet || !strings.Contains(printed, "denied   example.org:443") || !strings.Contains(m.view(), "allow and run again?") {
		t.Fatalf("state %v, view %q, printed %q", m.state, m.view(), printed)
	}
	printed = drive(t, m, runeKey(m, 'a'))
	if len(sb.runs) != 2 || len(sb.kept) != 1 || !strings.Contains(printed, "running the script again with example.org:443 allowed") {
		t.Fatalf("runs %v, kept %v, printed %q", sb.runs, sb.kept, printed)
	}
	if allow := sb.specs[len(sb.specs)-1].Allow; len(allow) != 1 || allow[0].String() != "example.org:443" {
		t.Errorf("second run allowed %v", allow)
	}
	if m.state != stSummary { // asked once: the same refusal is not offered again
		t.Fatalf("state %v, want the summary", m.state)
	}
	drive(t, m, runeKey(m, 'c'))
	if len(sb.commits) != 1 || m.state != stInput {
		t.Errorf("commits %v, state %v", sb.commits, m.state)
	}
}
