package shell

import (
	"context"
	"fmt"
	"io"
	"os/exec"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/planner"
	"github.com/nash-shell/nash/sandbox"
	"github.com/nash-shell/nash/sandbox/egress"
)

// fakePlanner answers with fixed scripts and records what it was asked.
type fakePlanner struct {
	mu         sync.Mutex
	script     string
	question   string // asked instead of a script
	revised    string
	block      bool          // Plan waits for ctx to end
	answer     string        // a Markdown answer instead of a script
	usage      planner.Usage // what each plan cost
	chunks     []string      // streamed before the plan returns (or blocks)
	inputs     []*planner.Input
	histories  [][]planner.HistoryEntry
	plans      []string
	feedbacks  []string
	explained  []string
	remembered []planner.Record
}

func (p *fakePlanner) Plan(ctx context.Context, req planner.Request) (*planner.Artifact, error) {
	p.mu.Lock()
	p.plans = append(p.plans, req.Prompt)
	p.inputs = append(p.inputs, req.Input)
	p.histories = append(p.histories, req.History)
	block, chunks := p.block, p.chunks
	p.mu.Unlock()
	if req.Stream != nil && len(chunks) > 0 {
		req.Stream(planner.Progress{Kind: planner.CallStarted})
		text := ""
		for i, c := range chunks {
			text += c
			req.Stream(planner.Progress{Kind: planner.TextArrived, Chunk: c, Text: text, Elapsed: time.Duration(i+1) * time.Second})
		}
	}
	if block {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	a := &planner.Artifact{Request: req.Prompt, Script: p.script, Explanation: "does it", Question: p.question,
		Model: "test:model", Usage: p.usage}
	if p.answer != "" {
		a.Script, a.Explanation, a.Answer, a.Snippets = "", "", p.answer, planner.Snippets(p.answer)
	}
	return a, nil
}

func (p *fakePlanner) Revise(_ context.Context, req planner.Request, previous, feedback string) (*planner.Artifact, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.feedbacks = append(p.feedbacks, feedback)
	return &planner.Artifact{Request: req.Prompt, Script: p.revised, Previous: previous,
		Diff: planner.UnifiedDiff("a/script", "b/script", previous, p.revised)}, nil
}

func (p *fakePlanner) Explain(_ context.Context, _ planner.Request, script string) (*planner.Explanation, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.explained = append(p.explained, script)
	return &planner.Explanation{Summary: "it explains " + script}, nil
}

func (p *fakePlanner) Remember(r planner.Record) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.remembered = append(p.remembered, r)
	return nil
}

// fakeSandbox records runs, commits and aborts; Run "changes" the paths
// in changes.
type fakeSandbox struct {
	mu      sync.Mutex
	changes []string
	exit    int
	network []egress.Contact // what each run tried
	runs    []string
	commits [][]string
	tokens  []*sandbox.Tokens // what each commit was told the model's work cost
	opts    []sandbox.CommitOptions
	aborts  []string
	kept    []string
	specs   []OpenSpec
}

func (s *fakeSandbox) open(_ context.Context, spec OpenSpec) (Sandbox, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.specs = append(s.specs, spec)
	return s, nil
}

func (s *fakeSandbox) Run(_ context.Context, script string) (*sandbox.Pending, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.runs = append(s.runs, script)
	cs := &effects.ChangeSet{}
	for _, p := range s.changes {
		cs.Changes = append(cs.Changes, effects.Change{Path: p, Kind: effects.Created, After: &effects.Object{Type: "file", Size: 3}})
	}
	return &sandbox.Pending{ID: fmt.Sprint(len(s.runs)), ExitCode: s.exit, Changes: cs, Network: s.network}, nil
}

func (s *fakeSandbox) Commit(_ context.Context, id string, opt sandbox.CommitOptions) (*sandbox.Tx, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commits = append(s.commits, opt.Paths)
	s.tokens = append(s.tokens, opt.Tokens)
	s.opts = append(s.opts, opt)
	return &sandbox.Tx{ID: "t" + id, Prompt: opt.Prompt, Tokens: opt.Tokens}, nil
}

func (s *fakeSandbox) Keep(_ context.Context, id, _ string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.kept = append(s.kept, id)
	return nil
}

func (s *fakeSandbox) Redo(context.Context) (*sandbox.Tx, error) {
	return &sandbox.Tx{ID: "u2", Undoes: "u1", Script: "nash redo t1 (undo u1)"}, nil
}

func (s *fakeSandbox) ShowKept(id string) (*sandbox.KeptRun, *effects.ChangeSet, error) {
	return &sandbox.KeptRun{ID: id}, &effects.ChangeSet{}, nil
}

// dropped reports whether run id was aborted or kept.
func (s *fakeSandbox) dropped(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range append(append([]string(nil), s.aborts...), s.kept...) {
		if a == id {
			return true
		}
	}
	return false
}

func (s *fakeSandbox) Abort(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.aborts = append(s.aborts, id)
	return nil
}

func (s *fakeSandbox) Undo(context.Context, string, sandbox.UndoOptions) (*sandbox.Tx, error) {
	return &sandbox.Tx{ID: "u1", Undoes: "t1"}, nil
}
func (s *fakeSandbox) Log() ([]*sandbox.Tx, error) { return nil, nil }
func (s *fakeSandbox) Show(id string) (*sandbox.Tx, *effects.ChangeSet, error) {
	return &sandbox.Tx{ID: id}, &effects.ChangeSet{}, nil
}
func (s *fakeSandbox) NewVersion(string, string) (string, bool) { return "", false }
func (s *fakeSandbox) OldVersion(string, string) (string, bool) { return "", false }

// runCmd runs cmd and the commands of any batch or sequence it returns,
// in order, and returns the messages. A line printed into the transcript
// comes back as printedMsg; terminal handovers (tea.Exec) and quitting,
// which only a running program can carry out, as kindMsg.
func runCmd(t *testing.T, cmd tea.Cmd) []tea.Msg {
	t.Helper()
	if cmd == nil {
		return nil
	}
	msg := cmd()
	if msg == nil {
		return nil
	}
	v := reflect.ValueOf(msg)
	if v.Kind() == reflect.Slice && v.Type().Elem() == reflect.TypeOf(tea.Cmd(nil)) {
		var out []tea.Msg
		for i := 0; i < v.Len(); i++ {
			c, _ := v.Index(i).Interface().(tea.Cmd)
			out = append(out, runCmd(t, c)...)
		}
		return out
	}
	switch reflect.TypeOf(msg).String() {
	case "tea.printLineMessage":
		return []tea.Msg{printedMsg(v.FieldByName("messageBody").String())}
	case "tea.execMsg", "tea.QuitMsg":
		return []tea.Msg{kindMsg(reflect.TypeOf(msg).String())}
	}
	return []tea.Msg{msg}
}

// kindMsg stands for a bubbletea-internal message, by its type name.
type kindMsg string

// printedMsg is a line printed into the transcript.
type printedMsg string

// drive runs cmd, and every command the messages it yields lead to,
// feeding each message back into m, until nothing is left to run: the
// flow then waits for a key, or the pass is over. It returns what was
// printed into the transcript meanwhile.
func drive(t *testing.T, m *model, cmd tea.Cmd) string {
	t.Helper()
	var printed strings.Builder
	queue := []tea.Cmd{cmd}
	for len(queue) > 0 {
		c := queue[0]
		queue = queue[1:]
		for _, msg := range runCmd(t, c) {
			switch msg := msg.(type) {
			case printedMsg:
				printed.WriteString(string(msg) + "\n")
				continue
			case kindMsg:
				continue
			}
			_, next := m.Update(msg)
			queue = append(queue, next)
		}
	}
	return printed.String()
}

// runInPlace makes m run scripts and the editor in place of handing them
// the terminal, with no input and their output dropped.
func runInPlace(m *model) {
	// The terminal answers a fence's query at once; no timeout runs.
	m.queryTerminal = func() tea.Msg { return tea.CursorPositionMsg{} }
	m.after = func(time.Duration, func(time.Time) tea.Msg) tea.Cmd { return nil }
	m.exec = func(c tea.ExecCommand, cb tea.ExecCallback) tea.Cmd {
		return func() tea.Msg {
			c.SetStdin(strings.NewReader(""))
			c.SetStdout(io.Discard)
			c.SetStderr(io.Discard)
			return cb(c.Run())
		}
	}
	m.execProcess = func(c *exec.Cmd, cb tea.ExecCallback) tea.Cmd {
		return func() tea.Msg { return cb(c.Run()) }
	}
}
