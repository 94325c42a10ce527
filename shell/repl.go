package shell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"golang.org/x/term"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/planner"
	"github.com/nash-shell/nash/sandbox"
)

// Run starts the interactive shell on the terminal in and out, inline (no
// alternate screen), and returns when the person exits. ctrl+c never ends
// it: at the prompt it clears the line, while the model works it cancels
// the request, and while a script runs the terminal delivers it to the
// script. SIGTERM and SIGHUP end it.
func Run(ctx context.Context, cfg Config, in, out *os.File) error {
	// The caller's context ends on SIGINT; here SIGINT belongs to the
	// script in the foreground, so only SIGTERM and SIGHUP end the shell.
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	m, err := newModel(ctx, cfg, out)
	if err != nil {
		return err
	}
	if cfg.StateDir != "" {
		if f, err := os.OpenFile(filepath.Join(cfg.StateDir, "nash.log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600); err == nil {
			defer f.Close()
			m.log = slog.New(slog.NewTextHandler(f, nil))
		}
	}
	m.tty = out
	// bubbletea's own resize listener reads the output file while
	// RestoreTerminal rewrites it after every run (a data race in
	// bubbletea 1.3): hide that the output is a terminal and report the
	// size from here instead.
	// At bubbletea's default 60 frames a second a key waits up to 16.7 ms
	// for its frame; 120 (its maximum) halves that. Idle frames write
	// nothing: the renderer skips an unchanged view.
	p := tea.NewProgram(m, tea.WithInput(in), tea.WithOutput(writerOnly{out}), tea.WithContext(ctx),
		tea.WithoutSignalHandler(), tea.WithFPS(120))
	sig := make(chan os.Signal, 4)
	// SIGINT is caught (and dropped) so that a ctrl+c meant for the
	// script in the foreground never ends nash, whatever the caller set.
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGWINCH, os.Interrupt)
	defer signal.Stop(sig)
	sendSize := func() {
		if w, h, err := term.GetSize(int(out.Fd())); err == nil {
			p.Send(tea.WindowSizeMsg{Width: w, Height: h})
		}
	}
	go func() {
		sendSize()
		for {
			select {
			case s := <-sig:
				switch s {
				case syscall.SIGWINCH:
					sendSize()
					continue
				case os.Interrupt:
					continue
				}
				p.Send(quitMsg{})
			case <-ctx.Done():
				return
			}
		}
	}()
	final, err := p.Run()
	if fm, ok := final.(*model); ok {
		if fm.pendingRun != nil {
			// Quit with a run not yet committed: nothing may reach the disk.
			_ = fm.pendingRun.sb.Abort(fm.pendingRun.pending.ID)
		}
		if fm.stopBackground != nil {
			fm.stopBackground()
		}
	}
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil
	}
	return err
}

// writerOnly hides every method of a writer but Write.
type writerOnly struct{ w io.Writer }

func (w writerOnly) Write(b []byte) (int, error) { return w.w.Write(b) }

// state is what the shell is doing.
type state int

const (
	stInput    state = iota // editing a line
	stWaiting               // the planner or a built-in is working
	stReview                // a script waits for run, edit, revise, explain or abort
	stConfirm               // the second confirmation: type yes
	stFeedback              // typing what a revision should change
	stRunning               // a script has the terminal
	stSummary               // a run waits for commit, pick, diff or abort
	stPick                  // choosing the paths to commit
)

// model is the REPL's root model.
type model struct {
	ctx  context.Context
	e    *engine
	st   *State
	hist *History
	sty  *styles
	keys KeyMap
	log  *slog.Logger
	tty  *os.File // the terminal scripts write to; nil in tests
	// stopBackground stops Config.Background's work once started.
	stopBackground func()

	state  state
	width  int
	input  lineInput
	route  Route // of the line being typed, for the indicator
	status string

	histPos int    // the history entry shown, or hist.Len() when editing a new line
	draft   string // the new line, kept while browsing the history

	searching bool
	query     lineInput
	match     int // history index of the search match, or -1

	// The step under way.
	req        request
	art        *planner.Artifact
	typed      bool // the script was typed, not planned
	reason     string
	answer     lineInput // the confirmation or the revision feedback
	pendingRun *outcome
	picks      []string
	picked     []bool
	pickPos    int
	cancel     context.CancelFunc
	waitLabel  string
}

// Messages: one per event.
type (
	planReadyMsg struct {
		art *planner.Artifact
		err error
	}
	explainedMsg struct {
		x   *planner.Explanation
		err error
	}
	editedMsg struct {
		script string
		err    error
	}
	runDoneMsg struct {
		out *outcome
		err error
	}
	committedMsg struct {
		tx   *sandbox.Tx
		step Step
		err  error
	}
	abortedMsg  struct{}
	builtinMsg  struct{ text string }
	printMsg    struct{ text string } // output to add to the transcript, staying in the same state
	quitMsg     struct{}
	historyErrM struct{ err error }
)

func newModel(ctx context.Context, cfg Config, out io.Writer) (*model, error) {
	e := newEngine(cfg)
	hist := NewHistory(nil)
	if cfg.StateDir != "" {
		h, err := LoadHistory(historyPath(cfg.StateDir))
		if err != nil {
			return nil, err
		}
		hist = h
	}
	m := &model{
		ctx: ctx, e: e, st: NewState(cfg.Dir, cfg.Env, cfg.Home), hist: hist,
		sty: newStyles(out, cfg.Color), keys: e.cfg.Keys, log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		width: 80, match: -1,
	}
	m.histPos = hist.Len()
	return m, nil
}

// backgroundDelay is how long after start-up the shell starts its
// background work: the first prompt is drawn by then.
const backgroundDelay = 200 * time.Millisecond

// startBackgroundMsg starts Config.Background.
type startBackgroundMsg struct{}

// Init makes no network call and scans nothing before the first prompt:
// background work (the index watcher) starts a moment after it.
func (m *model) Init() tea.Cmd {
	if m.e.cfg.Background == nil {
		return nil
	}
	return tea.Tick(backgroundDelay, func(time.Time) tea.Msg { return startBackgroundMsg{} })
}

func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		if msg.Width > 0 { // a pty nobody sized reports 0
			m.width = msg.Width
		}
		return m, nil
	case quitMsg:
		return m, tea.Quit
	case startBackgroundMsg:
		if m.stopBackground == nil {
			stop, err := m.e.cfg.Background(m.ctx)
			if err != nil {
				m.log.Warn("background work did not start", "err", err)
			}
			m.stopBackground = stop
		}
		return m, nil
	case tea.KeyMsg:
		return m.key(msg)
	case planReadyMsg:
		return m.planReady(msg)
	case explainedMsg:
		m.state = stReview
		if msg.err != nil {
			return m, m.println(m.sty.err.Render("nash: ") + effects.EscapeText(msg.err.Error()))
		}
		var b bytes.Buffer
		writeExplanation(&b, m.sty, msg.x)
		return m, m.println(strings.TrimRight(b.String(), "\n"))
	case editedMsg:
		m.state = stReview
		if msg.err != nil {
			return m, m.println(m.sty.err.Render("nash: ") + effects.EscapeText(msg.err.Error()))
		}
		m.art = editedArtifact(m.art, msg.script, m.e.analyze(msg.script, m.st.Dir))
		return m, m.showReview()
	case runDoneMsg:
		return m.runDone(msg)
	case committedMsg:
		m.state = stInput
		o := m.pendingRun
		m.pendingRun = nil
		if msg.err != nil {
			return m, m.println(m.sty.err.Render("nash: not committed: ") + effects.EscapeText(msg.err.Error()))
		}
		m.st.Committed = append(m.st.Committed, msg.step)
		done := m.println(m.sty.ok.Render(fmt.Sprintf("committed as transaction %s", msg.tx.ID)) +
			m.sty.dim.Render(fmt.Sprintf("  (undo with :undo %s)", msg.tx.ID)))
		return m, tea.Sequence(done, m.summarizeCmd(msg.tx.ID, o))
	case summaryMsg:
		if msg.err != nil {
			return m, m.println(m.sty.dim.Render("no change summary: " + effects.Escape(msg.err.Error())))
		}
		return m, m.println(m.sty.dim.Render("summary: " + effects.Escape(msg.text)))
	case abortedMsg:
		m.state = stInput
		m.pendingRun = nil
		return m, m.println(m.sty.dim.Render("aborted; nothing was changed"))
	case builtinMsg:
		m.state = stInput
		m.st.Forget()
		return m, m.println(strings.TrimRight(msg.text, "\n"))
	case printMsg:
		return m, m.println(strings.TrimRight(msg.text, "\n"))
	case historyErrM:
		m.log.Warn("history", "err", msg.err)
		return m, nil
	}
	return m, nil
}

// println adds text to the transcript above the prompt.
func (m *model) println(text string) tea.Cmd {
	if text == "" {
		return nil
	}
	return tea.Println(text)
}

func (m *model) key(k tea.KeyMsg) (tea.Model, tea.Cmd) {
	m.status = ""
	switch m.state {
	case stInput:
		if m.searching {
			return m.searchKey(k)
		}
		return m.inputKey(k)
	case stWaiting:
		if k.Type == tea.KeyCtrlC && m.cancel != nil {
			m.cancel()
			m.status = "cancelling…"
		}
		return m, nil
	case stReview:
		return m.reviewKey(k)
	case stConfirm, stFeedback:
		return m.answerKey(k)
	case stSummary:
		return m.summaryKey(k)
	case stPick:
		return m.pickKey(k)
	}
	return m, nil
}

func (m *model) inputKey(k tea.KeyMsg) (tea.Model, tea.Cmd) {
	switch k.Type {
	case tea.KeyEnter:
		return m.submit()
	case tea.KeyCtrlC:
		if m.input.String() == "" {
			m.status = "type exit or press ctrl+d to leave nash"
		}
		m.input.reset()
		m.histPos = m.hist.Len()
		m.reroute()
		return m, nil
	case tea.KeyCtrlD:
		if m.input.String() == "" {
			return m, tea.Quit
		}
		m.input.update(tea.KeyMsg{Type: tea.KeyDelete})
		m.reroute()
		return m, nil
	case tea.KeyUp, tea.KeyCtrlP:
		if m.histPos > 0 {
			if m.histPos == m.hist.Len() {
				m.draft = m.input.String()
			}
			m.histPos--
			m.input.set(m.hist.At(m.histPos))
			m.reroute()
		}
		return m, nil
	case tea.KeyDown, tea.KeyCtrlN:
		if m.histPos < m.hist.Len() {
			m.histPos++
			if m.histPos == m.hist.Len() {
				m.input.set(m.draft)
			} else {
				m.input.set(m.hist.At(m.histPos))
			}
			m.reroute()
		}
		return m, nil
	case tea.KeyCtrlR:
		m.searching = true
		m.query.reset()
		m.match = -1
		return m, nil
	case tea.KeyCtrlL:
		return m, tea.ClearScreen
	}
	if m.input.update(k) {
		m.reroute()
	}
	return m, nil
}

// reroute recomputes the route indicator for the line being typed.
func (m *model) reroute() { m.route = RouteLine(m.input.String(), m.st.IsCommand) }

func (m *model) searchKey(k tea.KeyMsg) (tea.Model, tea.Cmd) {
	switch k.Type {
	case tea.KeyCtrlR:
		if m.match > 0 {
			if i := m.hist.Search(m.query.String(), m.match); i >= 0 {
				m.match = i
			}
		}
		return m, nil
	case tea.KeyEnter, tea.KeyEsc, tea.KeyCtrlG, tea.KeyCtrlC, tea.KeyLeft, tea.KeyRight:
		m.searching = false
		if m.match >= 0 && k.Type != tea.KeyCtrlG && k.Type != tea.KeyCtrlC {
			m.input.set(m.hist.At(m.match))
			m.histPos = m.match
		}
		m.reroute()
		if k.Type == tea.KeyEnter && m.match >= 0 {
			return m.submit()
		}
		return m, nil
	}
	if m.query.update(k) {
		m.match = -1
		if q := m.query.String(); q != "" {
			m.match = m.hist.Search(q, m.hist.Len())
		}
	}
	return m, nil
}

// submit handles Enter on the prompt.
func (m *model) submit() (tea.Model, tea.Cmd) {
	line := m.input.String()
	m.input.reset()
	m.draft = ""
	echo := m.println(m.promptView() + effects.Escape(line))
	var cmds []tea.Cmd
	cmds = append(cmds, echo)
	if m.hist.Append(line) {
		cmds = append(cmds, saveHistory(m.hist, line))
	}
	m.histPos = m.hist.Len()
	r := RouteLine(line, m.st.IsCommand)
	m.route = Route{}
	switch r.Kind {
	case Empty:
	case Session:
		out, err := m.st.Apply(r.Text)
		switch {
		case errors.Is(err, ErrExit):
			cmds = append(cmds, tea.Quit)
		case err != nil:
			cmds = append(cmds, m.println(m.sty.err.Render("nash: ")+effects.EscapeText(err.Error())))
		case out != "":
			cmds = append(cmds, m.println(out))
		}
	case Builtin:
		m.state = stWaiting
		m.waitLabel = ":" + firstLine(r.Text, 30)
		cmds = append(cmds, m.builtinCmd(r.Text))
	case Command:
		m.req = request{dir: m.st.Dir}
		m.typed = true
		rep := m.e.analyze(r.Text, m.st.Dir)
		m.art = &planner.Artifact{Script: r.Text, Report: rep}
		if reason := confirmReason(rep, m.st.Dir); reason != "" {
			cmds = append(cmds, m.showReview())
		} else {
			cmds = append(cmds, m.startRun())
		}
	case English:
		m.typed = false
		m.req = request{prompt: r.Text, dir: m.st.Dir, history: append([]planner.HistoryEntry(nil), m.st.History...)}
		e, req := m.e, m.req
		cmds = append(cmds, m.wait("planning", func(ctx context.Context) tea.Msg {
			a, err := e.plan(ctx, req)
			return planReadyMsg{a, err}
		}))
	}
	return m, tea.Sequence(cmds...)
}

// wait runs f in a command with a context that ctrl+c cancels.
func (m *model) wait(label string, f func(ctx context.Context) tea.Msg) tea.Cmd {
	ctx, cancel := context.WithCancel(m.ctx)
	m.cancel = cancel
	m.state = stWaiting
	m.waitLabel = label
	return func() tea.Msg {
		defer cancel()
		return f(ctx)
	}
}

func (m *model) builtinCmd(text string) tea.Cmd {
	dir := m.st.Dir
	committed := append([]Step(nil), m.st.Committed...)
	e := m.e
	ctx := m.ctx
	return func() tea.Msg {
		var b bytes.Buffer
		if err := e.builtin(ctx, text, dir, committed, &b); err != nil {
			fmt.Fprintf(&b, "nash: %s\n", effects.EscapeText(err.Error()))
		}
		return builtinMsg{b.String()}
	}
}

func saveHistory(h *History, line string) tea.Cmd {
	return func() tea.Msg {
		if err := h.Save(line); err != nil {
			return historyErrM{err}
		}
		return nil
	}
}

func (m *model) planReady(msg planReadyMsg) (tea.Model, tea.Cmd) {
	m.cancel = nil
	switch {
	case errors.Is(msg.err, context.Canceled):
		m.state = stInput
		return m, m.println(m.sty.dim.Render("cancelled"))
	case msg.err != nil:
		m.state = stInput
		return m, m.println(m.sty.err.Render("nash: ") + effects.EscapeText(msg.err.Error()))
	case msg.art.Question != "":
		m.state = stInput
		// The question goes into the session history, so the next request
		// (the answer) is planned with it.
		m.st.Record(planner.HistoryEntry{Prompt: m.req.prompt, Output: "the model asked: " + msg.art.Question})
		return m, m.println(m.sty.warn.Render("the model asks: ") + effects.EscapeLine(msg.art.Question))
	}
	if msg.art.Report == nil {
		msg.art.Report = m.e.analyze(msg.art.Script, m.req.dir)
	}
	m.art = msg.art
	return m, m.showReview()
}

// showReview prints the review into the transcript and waits for a key.
func (m *model) showReview() tea.Cmd {
	m.state = stReview
	m.reason = confirmReason(m.art.Report, m.req.dir)
	var b bytes.Buffer
	writeReview(&b, m.sty, m.art, m.width)
	if m.reason != "" {
		fmt.Fprintf(&b, "%s %s\n", m.sty.err.Render("careful:"), m.reason)
	}
	return m.println(strings.TrimRight(b.String(), "\n"))
}

func (m *model) reviewKey(k tea.KeyMsg) (tea.Model, tea.Cmd) {
	key := k.String()
	switch {
	case is(key, m.keys.Run):
		if m.reason != "" {
			m.state = stConfirm
			m.answer.reset()
			return m, nil
		}
		return m, m.startRun()
	case is(key, m.keys.Edit):
		cmd, path, err := editCommand(m.e.cfg.Editor, m.art.Script)
		if err != nil {
			return m, m.println(m.sty.err.Render("nash: ") + effects.EscapeText(err.Error()))
		}
		m.state = stWaiting
		m.waitLabel = "editing"
		return m, tea.ExecProcess(cmd, func(err error) tea.Msg {
			if err != nil {
				os.Remove(path)
				return editedMsg{err: fmt.Errorf("edit: the editor failed: %w", err)}
			}
			s, err := readEdited(path)
			return editedMsg{script: s, err: err}
		})
	case is(key, m.keys.Revise) && !m.typed:
		m.state = stFeedback
		m.answer.reset()
		return m, nil
	case is(key, m.keys.Explain):
		e, req, script := m.e, m.req, m.art.Script
		return m, m.wait("explaining", func(ctx context.Context) tea.Msg {
			x, err := e.explain(ctx, req, script)
			return explainedMsg{x, err}
		})
	case is(key, m.keys.Abort) || k.Type == tea.KeyCtrlC:
		m.state = stInput
		return m, m.println(m.sty.dim.Render("aborted; nothing was run"))
	}
	return m, nil
}

func (m *model) answerKey(k tea.KeyMsg) (tea.Model, tea.Cmd) {
	switch k.Type {
	case tea.KeyEsc, tea.KeyCtrlC:
		m.state = stReview
		return m, nil
	case tea.KeyEnter:
		text := strings.TrimSpace(m.answer.String())
		m.answer.reset()
		if m.state == stConfirm {
			if strings.ToLower(text) != "yes" {
				m.state = stInput
				return m, m.println(m.sty.dim.Render("aborted; nothing was run"))
			}
			return m, m.startRun()
		}
		if text == "" {
			m.state = stReview
			return m, nil
		}
		e, req, prev := m.e, m.req, m.art.Script
		echo := m.println(m.sty.dim.Render("revise: ") + effects.Escape(text))
		return m, tea.Sequence(echo, m.wait("revising", func(ctx context.Context) tea.Msg {
			a, err := e.revise(ctx, req, prev, text)
			return planReadyMsg{a, err}
		}))
	}
	m.answer.update(k)
	return m, nil
}

// runExec runs a script in the sandbox as a tea.ExecCommand: bubbletea
// releases the terminal, hands it over, and takes it back afterwards, so
// vi, less and read work inside the script.
type runExec struct {
	ctx    context.Context
	e      *engine
	spec   OpenSpec
	prompt string
	script string
	report *effects.Report
	out    *outcome
}

func (r *runExec) SetStdin(in io.Reader) { r.spec.Stdin = in }
func (r *runExec) SetStdout(out io.Writer) {
	if r.spec.Stdout == nil {
		r.spec.Stdout = out
	}
}
func (r *runExec) SetStderr(w io.Writer) { r.spec.Stderr = w }

// Run runs the script; the outcome is kept for the callback. When the
// commit question follows, what waits on the terminal is dropped first,
// before the program reads keys again: only keys typed after the
// question answer it.
func (r *runExec) Run() error {
	o, err := r.e.run(r.ctx, r.spec, r.prompt, r.script, r.report)
	r.out = o
	if f, ok := r.spec.Stdin.(*os.File); ok && o != nil && o.changed() {
		sandbox.DiscardInput(f)
	}
	return err
}

func (m *model) startRun() tea.Cmd {
	m.state = stRunning
	net := m.art.Report != nil && m.art.Report.Network || m.art.NeedsNetwork
	r := &runExec{
		ctx: m.ctx, e: m.e, prompt: m.req.prompt, script: m.art.Script, report: m.art.Report,
		spec: OpenSpec{Dir: m.st.Dir, Env: m.st.Environ(), Network: net},
	}
	if m.tty != nil {
		r.spec.Stdout = m.tty // the terminal itself, not the program's writer
	}
	return tea.Exec(r, func(err error) tea.Msg { return runDoneMsg{r.out, err} })
}

func (m *model) runDone(msg runDoneMsg) (tea.Model, tea.Cmd) {
	m.st.Forget()
	if msg.err != nil || msg.out == nil {
		m.state = stInput
		err := msg.err
		if err == nil {
			err = errors.New("the run ended without a result")
		}
		return m, m.println(m.sty.err.Render("nash: ") + effects.EscapeText(err.Error()))
	}
	o := msg.out
	code := o.pending.ExitCode
	m.st.Record(planner.HistoryEntry{Prompt: o.prompt, Script: o.script, ExitCode: code})
	var b bytes.Buffer
	if code != 0 {
		fmt.Fprintln(&b, m.sty.warn.Render(fmt.Sprintf("exit status %d", code)))
	}
	if !o.changed() && len(o.pending.Unprotected) == 0 {
		m.state = stInput
		fmt.Fprint(&b, m.sty.dim.Render("no changes"))
		sb, id := o.sb, o.pending.ID
		return m, tea.Sequence(m.println(strings.TrimRight(b.String(), "\n")), func() tea.Msg {
			_ = sb.Abort(id)
			return nil
		})
	}
	writeOutcome(&b, m.sty, o, m.width, m.e.cfg.Home)
	m.pendingRun = o
	m.state = stSummary
	return m, m.println(strings.TrimRight(b.String(), "\n"))
}

func (m *model) summaryKey(k tea.KeyMsg) (tea.Model, tea.Cmd) {
	key := k.String()
	o := m.pendingRun
	switch {
	case is(key, m.keys.Commit):
		return m, m.commitCmd(nil)
	case is(key, m.keys.Abort) || k.Type == tea.KeyCtrlC:
		m.state = stWaiting
		m.waitLabel = "aborting"
		return m, func() tea.Msg {
			_ = o.sb.Abort(o.pending.ID)
			return abortedMsg{}
		}
	case is(key, m.keys.Diff):
		return m, func() tea.Msg {
			var b bytes.Buffer
			writeDiff(&b, o)
			return printMsg{m.colorDiff(b.String())}
		}
	case is(key, m.keys.Pick):
		m.picks = commitPaths(o)
		m.picked = make([]bool, len(m.picks))
		m.pickPos = 0
		m.state = stPick
		return m, nil
	}
	return m, nil
}

// colorDiff styles the lines of an escaped diff.
func (m *model) colorDiff(d string) string {
	lines := strings.Split(strings.TrimRight(d, "\n"), "\n")
	for i, l := range lines {
		lines[i] = m.sty.diffLine(l)
	}
	return strings.Join(lines, "\n")
}

// summaryMsg carries a committed transaction's change summary.
type summaryMsg struct {
	text string
	err  error
}

// summarizeCmd asks for the summary of a commit in the background, when a
// model is configured; the prompt stays usable meanwhile.
func (m *model) summarizeCmd(txID string, o *outcome) tea.Cmd {
	sum, ctx := m.e.cfg.Summarize, m.ctx
	if sum == nil || o == nil {
		return nil
	}
	cs := o.pending.Changes
	return func() tea.Msg {
		text, err := sum(ctx, txID, cs)
		if err == nil && text == "" {
			return nil
		}
		return summaryMsg{text, err}
	}
}

func (m *model) commitCmd(paths []string) tea.Cmd {
	o := m.pendingRun
	m.state = stWaiting
	m.waitLabel = "committing"
	e, ctx := m.e, m.ctx
	return func() tea.Msg {
		tx, step, err := e.commit(ctx, o, paths)
		return committedMsg{tx, step, err}
	}
}

func (m *model) pickKey(k tea.KeyMsg) (tea.Model, tea.Cmd) {
	switch k.Type {
	case tea.KeyUp, tea.KeyCtrlP:
		if m.pickPos > 0 {
			m.pickPos--
		}
	case tea.KeyDown, tea.KeyCtrlN, tea.KeyTab:
		if m.pickPos < len(m.picks)-1 {
			m.pickPos++
		}
	case tea.KeySpace:
		m.picked[m.pickPos] = !m.picked[m.pickPos]
	case tea.KeyEsc, tea.KeyCtrlC:
		m.state = stSummary
	case tea.KeyEnter:
		var paths []string
		for i, p := range m.picks {
			if m.picked[i] {
				paths = append(paths, p)
			}
		}
		if len(paths) == 0 {
			m.status = "no path picked: space picks, esc goes back"
			return m, nil
		}
		return m, tea.Sequence(m.println(m.sty.dim.Render(fmt.Sprintf("committing %d of %d path(s)", len(paths), len(m.picks)))), m.commitCmd(paths))
	default:
		if k.String() == "a" {
			for i := range m.picked {
				m.picked[i] = true
			}
		}
	}
	return m, nil
}

// promptView is the prompt before the line: the directory and the model.
func (m *model) promptView() string {
	return m.sty.prompt.Render(m.st.Prompt()) + " " + m.sty.dim.Render("("+effects.Escape(m.e.cfg.Model)+")") + " "
}

func (m *model) cursor(s string) string { return "\x1b[7m" + s + "\x1b[27m" }

// View is a pure function of the model: the prompt, or the keys of the
// screen under way. The transcript is printed above it.
func (m *model) View() string {
	var b strings.Builder
	switch m.state {
	case stInput:
		if m.searching {
			q := m.query.String()
			found := ""
			if m.match >= 0 {
				found = effects.Escape(m.hist.At(m.match))
			} else if q != "" {
				found = m.sty.err.Render("(no match)")
			}
			fmt.Fprintf(&b, "(search history)'%s': %s", m.query.view(m.cursor), found)
			break
		}
		b.WriteString(m.inputLine())
	case stWaiting:
		b.WriteString(m.sty.dim.Render(m.waitLabel + "…  (ctrl+c cancels)"))
	case stReview:
		k := m.keys
		hint := fmt.Sprintf("%s run · %s edit · %s revise · %s explain · %s abort",
			first(k.Run), first(k.Edit), first(k.Revise), first(k.Explain), first(k.Abort))
		if m.typed {
			hint = fmt.Sprintf("%s run · %s edit · %s explain · %s abort", first(k.Run), first(k.Edit), first(k.Explain), first(k.Abort))
		}
		b.WriteString(m.sty.bold.Render("review: ") + hint)
	case stConfirm:
		b.WriteString(m.sty.err.Render("type yes to run it anyway: ") + m.answer.view(m.cursor))
	case stFeedback:
		b.WriteString(m.sty.bold.Render("what should change? ") + m.answer.view(m.cursor))
	case stRunning:
		b.WriteString(m.sty.dim.Render("running…"))
	case stSummary:
		k := m.keys
		fmt.Fprintf(&b, "%s%s commit · %s pick paths · %s diff · %s abort", m.sty.bold.Render("changes: "),
			first(k.Commit), first(k.Pick), first(k.Diff), first(k.Abort))
	case stPick:
		b.WriteString(m.sty.bold.Render("pick the paths to commit") + m.sty.dim.Render("  (space toggles, a all, enter commits, esc back)"))
		for i, p := range m.picks {
			mark := "[ ]"
			if m.picked[i] {
				mark = "[x]"
			}
			line := fmt.Sprintf("%s %s", mark, tildePath(p, m.e.cfg.Home))
			if i == m.pickPos {
				line = m.sty.bold.Render("> " + line)
			} else {
				line = "  " + line
			}
			b.WriteString("\n" + line)
		}
	}
	if m.status != "" {
		b.WriteString("\n" + m.sty.dim.Render(m.status))
	}
	// Every line fits the width, so the inline renderer's idea of the
	// view's height stays true.
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		if ansi.StringWidth(l) > m.width-1 {
			lines[i] = ansi.Truncate(l, max(m.width-2, 1), "…")
		}
	}
	return strings.Join(lines, "\n")
}

// inputLine is the prompt, the route and the line, made to fit the width:
// first the directory shrinks to its last element, then the model goes,
// then the line scrolls so the cursor stays in view.
func (m *model) inputLine() string {
	badge := m.routeBadge()
	model := m.sty.dim.Render("(" + effects.Escape(m.e.cfg.Model) + ")")
	dir := m.st.Prompt()
	n := len(m.input.r)
	fits := func(prefix string) bool { return ansi.StringWidth(prefix)+n+2 <= m.width-1 }
	prefix := m.sty.prompt.Render(dir) + " " + model + " " + badge + " "
	if !fits(prefix) {
		short := "…/" + filepath.Base(m.st.Dir)
		prefix = m.sty.prompt.Render(short) + " " + model + " " + badge + " "
		if !fits(prefix) {
			prefix = m.sty.prompt.Render(short) + " " + badge + " "
		}
	}
	avail := m.width - 2 - ansi.StringWidth(prefix)
	if avail < 8 || n < avail {
		return prefix + m.input.view(m.cursor)
	}
	// Scroll: show the part of the line around the cursor.
	start := max(0, m.input.pos-avail+1)
	win := lineInput{r: m.input.r[start:min(len(m.input.r), start+avail)], pos: m.input.pos - start}
	return prefix + win.view(m.cursor)
}

// routeBadge shows where the line will go before Enter.
func (m *model) routeBadge() string {
	switch m.route.Kind {
	case Command, Session:
		return m.sty.routeCmd.Render("[cmd]")
	case English:
		return m.sty.routeEng.Render("[ask]")
	case Builtin:
		return m.sty.routeBuiltin.Render("[nash]")
	}
	return m.sty.dim.Render("[   ]")
}
