package shell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"golang.org/x/term"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/planner"
	"github.com/nash-shell/nash/sandbox/egress"
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
	// bubbletea 1.3 and 2.1): hide that the output is a terminal, give
	// the colour profile and size it would have found, and report sizes
	// from here. At bubbletea's default 60 frames a second a key waits up
	// to 16.7 ms for its frame; 120 (its maximum) halves that. Idle frames
	// write nothing: the renderer skips an unchanged view.
	// One reader of the terminal for the whole session, so that every
	// key keeps its place whoever reads it (ttyinput.go).
	var input io.Reader = in
	if term.IsTerminal(int(in.Fd())) {
		ti, err := startTTYInput(in)
		if err != nil {
			return fmt.Errorf("read the terminal: %w", err)
		}
		defer ti.close()
		// bubbletea reads a pipe nobody writes to, so that running a
		// script (tea.Exec) never waits for its reader nor leaves keys
		// with it; forwardKeys gives it the keys, from one reader, in
		// order.
		idleR, idleW, err := os.Pipe()
		if err != nil {
			return fmt.Errorf("read the terminal: %w", err)
		}
		defer idleR.Close()
		defer idleW.Close()
		m.ttyIn, m.ttyFile, input = ti, in, idleR
		m.execProcess = func(c *exec.Cmd, fn tea.ExecCallback) tea.Cmd {
			// The program gets the terminal itself, not the pipe
			// bubbletea reads nor its writer.
			if c.Stdin == nil {
				c.Stdin = in
			}
			if c.Stdout == nil {
				c.Stdout = out
			}
			if c.Stderr == nil {
				c.Stderr = out
			}
			return tea.Exec(pausedProcess{c, ti}, fn)
		}
	}
	opts := []tea.ProgramOption{tea.WithInput(input), tea.WithOutput(writerOnly{out}), tea.WithContext(ctx),
		tea.WithoutSignalHandler(), tea.WithFPS(120), tea.WithColorProfile(colorprofile.Detect(out, cfg.Env))}
	w, h := termSize(out)
	opts = append(opts, tea.WithWindowSize(w, h))
	p := tea.NewProgram(m, opts...)
	if m.ttyIn != nil {
		go forwardKeys(ctx, m.ttyIn.r, envValue(cfg.Env, "TERM"), p)
	}
	sig := make(chan os.Signal, 4)
	// SIGINT is caught (and dropped) so that a ctrl+c meant for the
	// script in the foreground never ends nash, whatever the caller set.
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGWINCH, os.Interrupt)
	defer signal.Stop(sig)
	go func() {
		for {
			select {
			case s := <-sig:
				switch s {
				case syscall.SIGWINCH:
					w, h := termSize(out)
					p.Send(tea.WindowSizeMsg{Width: w, Height: h})
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
	// A pass still under way ends with the program: its questions fail,
	// and a run not yet committed is aborted, so nothing reaches the disk.
	cancel()
	m.flows.Wait()
	m.st.Close()
	if fm, ok := final.(*model); ok && fm.stopBackground != nil {
		fm.stopBackground()
	}
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		return nil
	}
	return err
}

// termSize is the terminal's size, or 80x24 where it reports none (a pty
// nobody sized).
func termSize(out *os.File) (width, height int) {
	width, height, err := term.GetSize(int(out.Fd()))
	if err != nil || width <= 0 || height <= 0 {
		return 80, 24
	}
	return width, height
}

// pausedProcess runs a program on the terminal (the editor) while the
// shell's reader of the terminal is paused.
type pausedProcess struct {
	cmd *exec.Cmd
	in  *ttyInput
}

func (p pausedProcess) Run() error {
	p.in.pause()
	defer p.in.resume()
	return p.cmd.Run()
}

// The program's streams are set already: the terminal.
func (pausedProcess) SetStdin(io.Reader)  {}
func (pausedProcess) SetStdout(io.Writer) {}
func (pausedProcess) SetStderr(io.Writer) {}

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
	stExample               // typing an example at the review (trial.go)
	stRunning               // a script has the terminal
	stSummary               // a run waits for commit, pick, diff or abort
	stPick                  // choosing the paths to commit (or, with pickNet, destinations to allow)
	stNet                   // destinations the run may reach: all, pick or none
	stSnippet               // an answer's commands: pick one to review, or none
	stDiscard               // abort a run that made files? y sets it aside, any other key goes back
)

// asks reports whether st is a question the flow waits on, which a key
// typed before it appeared must not answer (see fence).
func asks(st state) bool {
	switch st {
	case stReview, stConfirm, stSummary, stNet, stDiscard, stSnippet:
		return true
	}
	return false
}

// model is the REPL's root model.
type model struct {
	// feedbackDefault fills the revision's feedback when what failed
	// goes to the model with it (trial.go).
	feedbackDefault string

	ctx  context.Context
	e    *engine
	st   *State
	hist *History
	sty  *styles
	keys KeyMap
	log  *slog.Logger
	tty  *os.File // the terminal scripts write to; nil in tests
	// ttyIn reads the person's terminal, ttyFile, for the whole session
	// (ttyinput.go); nil in tests and when stdin is not a terminal.
	ttyIn   *ttyInput
	ttyFile *os.File
	// stopBackground stops Config.Background's work once started.
	stopBackground func()

	state  state
	width  int
	input  lineInput
	route  Route // of the line being typed, for the indicator
	tabs   int   // Tabs pressed in a row at the prompt (replcomplete.go)
	status string

	histPos int    // the history entry shown, or hist.Len() when editing a new line
	draft   string // the new line, kept while browsing the history

	searching bool
	query     lineInput
	match     int // history index of the search match, or -1

	// The pass under way: the flow's messages, the question it waits on
	// (answered on reply), and what the screens show.
	flows      *sync.WaitGroup
	flowMsgs   chan tea.Msg
	reply      chan<- answer
	art        *planner.Artifact // the script at review
	answerText lineInput         // the confirmation, the revision feedback or an example
	pendingRun *outcome          // the run at the effect summary
	picks      []string
	picked     []bool
	pickPos    int
	pickNet    bool               // the pick screen chooses destinations, not paths
	netQ       netQuestion        // the destinations offered at stNet
	cancel     context.CancelFunc // cancels the model's work under way
	waitLabel  string
	live       *liveText         // the model's text as it arrives, while it works
	liveGen    int               // which work the live ticks are for
	snippets   []planner.Snippet // the commands of the answer shown, at stSnippet
	// The bash session's part of the REPL (replsession.go).
	replSession
	// exec and execProcess hand the terminal to a script or the editor
	// (tea.Exec, tea.ExecProcess); tests run them in place.
	exec        func(tea.ExecCommand, tea.ExecCallback) tea.Cmd
	execProcess func(*exec.Cmd, tea.ExecCallback) tea.Cmd

	// The fence: a question takes keys only once the terminal has
	// answered a query sent when it appeared (armed), so keys typed
	// before it, already on their way, never answer it. queryTerminal
	// sends the query (a cursor position request); after bounds the wait
	// for a terminal that never answers. Tests replace both.
	armed         bool
	fenceGen      int
	fencePending  int
	queryTerminal tea.Cmd
	after         func(time.Duration, func(time.Time) tea.Msg) tea.Cmd
}

// fenceWait is how long a question waits for the terminal's answer before
// it takes keys anyway: a terminal that answers no query (a bare pty)
// costs that much, once per question.
const fenceWait = 400 * time.Millisecond

// fenceTimeoutMsg arms question gen when the terminal did not answer.
type fenceTimeoutMsg struct{ gen int }

// fence disarms the question just shown until the terminal answers the
// query it sends now: what the terminal sends before that answer was
// typed before the question appeared.
func (m *model) fence() tea.Cmd {
	m.armed = false
	m.fenceGen++
	m.fencePending++
	gen := m.fenceGen
	return tea.Batch(m.queryTerminal, m.after(fenceWait, func(time.Time) tea.Msg { return fenceTimeoutMsg{gen} }))
}

// Messages: one per event.
type (
	editedMsg struct {
		script string
		err    error
	}
	runDoneMsg struct {
		out       *outcome
		err       error
		typeahead []byte
	}
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
		sty: newStyles(cfg.Color), keys: e.cfg.Keys, log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		width: 80, match: -1, flows: &sync.WaitGroup{}, exec: tea.Exec, execProcess: tea.ExecProcess,
		queryTerminal: func() tea.Msg { return tea.RequestCursorPosition() }, after: tea.Tick,
	}
	m.histPos = hist.Len()
	m.st.History = append(m.st.History, cfg.History...)
	if cfg.BashSession && hasBash() {
		m.st.startBash()
	}
	return m, nil
}

// firstHint is printed above the first prompt. (Shown under it, it would
// leave a copy of the prompt above it once gone: bubbletea's inline
// renderer keeps the lines a view loses in the scrollback.)
const firstHint = "type a command, or ask in English · ?… always asks, !… always runs · :help"

// backgroundDelay is how long after start-up the shell starts its
// background work: the first prompt is drawn by then.
const backgroundDelay = 200 * time.Millisecond

// startBackgroundMsg starts Config.Background.
type startBackgroundMsg struct{}

// Init makes no network call and scans nothing before the first prompt:
// background work (the index watcher) starts a moment after it.
func (m *model) Init() tea.Cmd {
	cmds := []tea.Cmd{m.sessionInit()}
	if m.hist.Len() == 0 {
		// Someone new: how to start, once, until their first line.
		cmds = append(cmds, m.println(m.sty.dim.Render(firstHint)))
	}
	if m.e.cfg.Background != nil {
		cmds = append(cmds, tea.Tick(backgroundDelay, func(time.Time) tea.Msg { return startBackgroundMsg{} }))
	}
	if first := m.e.cfg.FirstStart; first != nil {
		ctx := m.ctx
		cmds = append(cmds, tea.Tick(backgroundDelay, func(time.Time) tea.Msg { return printMsg{first(ctx)} }))
	}
	return tea.Batch(cmds...)
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
		if m.stopBackground == nil && m.e.cfg.Background != nil {
			stop, err := m.e.cfg.Background(m.ctx)
			if err != nil {
				m.log.Warn("background work did not start", "err", err)
			}
			m.stopBackground = stop
		}
		return m, nil
	case tea.CursorPositionMsg:
		// The terminal answered a fence's query: what it sent before
		// this was typed before the question appeared.
		if m.fencePending > 0 {
			m.fencePending--
		}
		if m.fencePending == 0 {
			m.armed = true
		}
		return m, nil
	case fenceTimeoutMsg:
		if msg.gen == m.fenceGen && !m.armed {
			m.armed, m.fencePending = true, 0
		}
		return m, nil
	case tea.KeyPressMsg:
		return m.key(msg)
	case tea.PasteMsg:
		return m.paste(msg.Content)
	case flowEventMsg:
		return m, m.flowSaid(msg.ev)
	case flowBusyMsg:
		m.state = stWaiting
		m.waitLabel = msg.what
		m.cancel = msg.cancel
		return m, tea.Batch(m.listen(), m.startLive(msg.what))
	case flowProgressMsg, liveTickMsg:
		return m, m.liveUpdate(msg)
	case flowAskMsg:
		return m.flowAsked(msg)
	case flowDoneMsg:
		return m.flowDone(msg)
	case editedMsg:
		if msg.err != nil {
			return m, m.answer(answer{err: msg.err})
		}
		return m, m.answer(answer{text: msg.script})
	case runDoneMsg:
		ahead := m.runTypeahead(msg.typeahead)
		if msg.err == nil && msg.out == nil {
			msg.err = errors.New("the run ended without a result")
		}
		return m, tea.Batch(m.answer(answer{out: msg.out, err: msg.err}), ahead)
	case typeaheadMsg:
		return m, m.typeaheadCame(msg)
	case summaryMsg:
		if msg.err != nil {
			return m, m.println(m.sty.dim.Render("no change summary: " + effects.Escape(msg.err.Error())))
		}
		return m, m.println(m.sty.dim.Render("summary: " + effects.Escape(msg.text)))
	case builtinMsg:
		m.state = stInput
		m.st.Forget()
		return m, tea.Sequence(m.println(strings.TrimRight(msg.text, "\n")), m.nextQueued(), m.replayTyped())
	case printMsg:
		return m, m.println(strings.TrimRight(msg.text, "\n"))
	case historyErrM:
		m.log.Warn("history", "err", msg.err)
		return m, nil
	case rcStartMsg:
		return m, m.startRC()
	case rcDoneMsg:
		return m.rcDone(msg)
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

func (m *model) key(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	m.status = ""
	if asks(m.state) && !m.armed {
		m.status = "a key typed before the question appeared is not an answer"
		return m, nil
	}
	switch m.state {
	case stInput:
		if k.String() != "tab" {
			m.tabs = 0
		}
		if m.searching {
			return m.searchKey(k)
		}
		return m.inputKey(k)
	case stWaiting, stRunning:
		if k.String() == "ctrl+c" && m.cancel != nil && m.state == stWaiting {
			m.cancel()
			m.status = "cancelling…"
		}
		m.holdKey(k)
		return m, nil
	case stReview:
		return m.reviewKey(k)
	case stConfirm, stFeedback, stExample:
		return m.answerKey(k)
	case stSummary:
		return m.summaryKey(k)
	case stPick:
		return m.pickKey(k)
	case stNet:
		return m.netKey(k)
	case stSnippet:
		return m.snippetKey(k)
	case stDiscard:
		return m.discardKey(k)
	}
	return m, nil
}

func (m *model) inputKey(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	switch k.String() {
	case "enter", "ctrl+j":
		// ctrl+j (a newline) ends the line too, as in readline: Enter
		// typed while the terminal is between a run and the prompt
		// (cooked, mapping CR to NL) reaches the prompt as a newline.
		return m.submit()
	case "tab":
		return m.tab()
	case "ctrl+c":
		var cmd tea.Cmd
		if line := m.input.String(); line == "" {
			m.status = "type exit or press ctrl+d to leave nash"
		} else {
			// As bash does, the line stays in the scrollback, marked.
			cmd = m.println(m.promptView() + effects.Escape(line) + "^C")
		}
		m.input.reset()
		m.histPos = m.hist.Len()
		m.reroute()
		return m, cmd
	case "ctrl+d":
		if m.input.String() == "" {
			return m, tea.Quit
		}
		m.input.update(tea.KeyPressMsg{Code: tea.KeyDelete})
		m.reroute()
		return m, nil
	case "up", "ctrl+p":
		if m.histPos > 0 {
			if m.histPos == m.hist.Len() {
				m.draft = m.input.String()
			}
			m.histPos--
			m.input.set(m.hist.At(m.histPos))
			m.reroute()
		}
		return m, nil
	case "down", "ctrl+n":
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
	case "ctrl+r":
		m.searching = true
		m.query.reset()
		m.match = -1
		return m, nil
	case "ctrl+l":
		return m, func() tea.Msg { return tea.ClearScreen() }
	}
	if m.input.update(k) {
		m.reroute()
	}
	return m, nil
}

// reroute recomputes the route indicator for the line being typed.
func (m *model) reroute() { m.route = m.st.Route(m.input.String()) }

func (m *model) searchKey(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	key := k.String()
	switch key {
	case "ctrl+r":
		if m.match > 0 {
			if i := m.hist.Search(m.query.String(), m.match); i >= 0 {
				m.match = i
			}
		}
		return m, nil
	case "enter", "esc", "ctrl+g", "ctrl+c", "left", "right":
		m.searching = false
		if m.match >= 0 && key != "ctrl+g" && key != "ctrl+c" {
			m.input.set(m.hist.At(m.match))
			m.histPos = m.match
		}
		m.reroute()
		if key == "enter" && m.match >= 0 {
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
	m.route = Route{}
	if m.rcLoading && strings.TrimSpace(line) != "" {
		// The line may use what ~/.bashrc defines: it waits for it.
		m.queued = append(m.queued, line)
		m.state = stWaiting
		m.waitLabel = "reading ~/.bashrc"
		m.cancel = m.rcCancel
		return m, tea.Sequence(cmds...)
	}
	return m, tea.Sequence(append(cmds, m.dispatch(line))...)
}

// dispatch sends a submitted line where it goes.
func (m *model) dispatch(line string) tea.Cmd {
	var cmds []tea.Cmd
	r := m.st.Route(line)
	switch r.Kind {
	case Empty:
	case Session:
		out, err := m.st.Apply(r.Text)
		switch {
		case errors.Is(err, ErrExit):
			cmds = append(cmds, tea.Quit)
		case err != nil && m.st.bash != nil:
			// bash's own cd (CDPATH, cdable_vars) and its own words.
			cmds = append(cmds, m.startFlow(job{input: line, route: Command, text: r.Text}))
		case err != nil:
			cmds = append(cmds, m.println(m.sty.err.Render("nash: ")+effects.EscapeText(err.Error())))
		case out != "":
			m.st.setStatus(0)
			cmds = append(cmds, m.println(out))
		default:
			m.st.setStatus(0)
		}
	case Builtin:
		m.state = stWaiting
		m.waitLabel = ":" + firstLine(r.Text, 30)
		cmds = append(cmds, m.builtinCmd(r.Text))
	case Command:
		if m.st.bash != nil && startsJob(r.Text) {
			cmds = append(cmds, m.println(m.sty.dim.Render("nash: "+bgNote)))
		}
		cmds = append(cmds, m.startFlow(job{input: line, route: Command, text: r.Text, typed: true}))
	case English:
		cmds = append(cmds, m.startFlow(job{input: line, route: English, text: r.Text}))
	case Typo:
		m.st.setStatus(127)
		cmds = append(cmds, m.println(m.sty.err.Render("nash: ")+effects.EscapeText(typoMessage(r))))
	}
	return tea.Sequence(cmds...)
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

func (m *model) reviewKey(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	key := k.String()
	switch {
	case is(key, m.keys.Run):
		return m, m.answer(answer{act: actRun})
	case is(key, m.keys.Edit):
		return m, m.answer(answer{act: actEdit})
	case is(key, m.keys.Revise):
		return m, m.answer(answer{act: actRevise})
	case is(key, m.keys.Explain):
		return m, m.answer(answer{act: actExplain})
	case is(key, m.keys.Abort) || key == "ctrl+c":
		return m, m.answer(answer{act: actAbort})
	}
	if cmd, ok := m.trialKey(key); ok {
		return m, cmd
	}
	return m, nil
}

// answerKey edits the confirmation or the revision feedback. esc goes
// back to the review.
func (m *model) answerKey(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	switch k.String() {
	case "esc", "ctrl+c":
		if m.state == stConfirm {
			return m, m.answer(answer{back: true})
		}
		return m, m.answer(answer{})
	case "enter":
		text := strings.TrimSpace(m.answerText.String())
		m.answerText.reset()
		if m.state == stConfirm {
			return m, m.answer(answer{ok: strings.ToLower(text) == "yes"})
		}
		if m.state == stExample {
			return m, m.exampleEntered(text)
		}
		if text == "" {
			return m, m.answer(answer{})
		}
		return m, tea.Sequence(m.println(m.sty.dim.Render("revise: ")+effects.Escape(text)), m.answer(answer{text: text}))
	}
	m.answerText.update(k)
	return m, nil
}

func (m *model) summaryKey(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	key := k.String()
	o := m.pendingRun
	switch {
	case is(key, m.keys.Commit):
		return m, m.decided(decision{})
	case is(key, m.keys.Abort) || key == "ctrl+c":
		if madeSomething(o.own) {
			// Made files are not thrown away on one key.
			m.state = stDiscard
			return m, m.fence()
		}
		return m, m.decided(decision{abort: true})
	case is(key, m.keys.Diff):
		return m, func() tea.Msg {
			var b bytes.Buffer
			writeDiff(&b, o)
			return printMsg{m.colorDiff(b.String())}
		}
	case is(key, m.keys.Pick):
		m.picks = commitPaths(o)
		m.picked = make([]bool, len(m.picks))
		m.pickPos, m.pickNet = 0, false
		m.state = stPick
		return m, nil
	}
	return m, nil
}

// theseChanges says "this change" or "these N changes".
func theseChanges(n int) string {
	if n == 1 {
		return "this change"
	}
	return fmt.Sprintf("these %d changes", n)
}

// discardKey answers whether to abort a run that made files: y does (the
// run is set aside, recoverable), any other key goes back to the summary.
func (m *model) discardKey(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	if k.String() == "y" {
		return m, m.decided(decision{abort: true})
	}
	m.state = stSummary
	m.status = "not aborted"
	return m, nil
}

// decided answers the effect summary.
func (m *model) decided(d decision) tea.Cmd {
	m.pendingRun = nil
	cmd := m.answer(answer{dec: d})
	m.waitLabel = "committing"
	if d.abort {
		m.waitLabel = "aborting"
	}
	return cmd
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
func (m *model) summarizeCmd(txID string, cs *effects.ChangeSet) tea.Cmd {
	sum, ctx := m.e.cfg.Summarize, m.ctx
	if sum == nil || cs == nil {
		return nil
	}
	return func() tea.Msg {
		text, err := sum(ctx, txID, cs)
		if err == nil && text == "" {
			return nil
		}
		return summaryMsg{text, err}
	}
}

func (m *model) pickKey(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	switch k.String() {
	case "up", "ctrl+p":
		if m.pickPos > 0 {
			m.pickPos--
		}
	case "down", "ctrl+n", "tab":
		if m.pickPos < len(m.picks)-1 {
			m.pickPos++
		}
	case "space":
		m.picked[m.pickPos] = !m.picked[m.pickPos]
	case "esc", "ctrl+c":
		m.state = stSummary
		if m.pickNet {
			m.state = stNet
		}
	case "enter":
		var paths []string
		var rules []egress.Rule
		for i, p := range m.picks {
			if m.picked[i] {
				paths = append(paths, p)
				if m.pickNet {
					rules = append(rules, m.netQ.rules[i])
				}
			}
		}
		if len(paths) == 0 {
			m.status = "nothing picked: space picks, esc goes back"
			return m, nil
		}
		if m.pickNet {
			return m, m.answer(answer{rules: rules})
		}
		return m, tea.Sequence(m.println(m.sty.dim.Render(fmt.Sprintf("committing %d of %d path(s)", len(paths), len(m.picks)))), m.decided(decision{paths: paths}))
	case "a":
		for i := range m.picked {
			m.picked[i] = true
		}
	}
	return m, nil
}

// netKey answers the network question: a allows every destination
// offered, p picks some, n (or esc) none.
func (m *model) netKey(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	switch k.String() {
	case "a", "y":
		return m, m.answer(answer{rules: m.netQ.rules})
	case "n", "esc", "ctrl+c":
		return m, m.answer(answer{})
	case "p":
		m.picks = make([]string, len(m.netQ.rules))
		for i, r := range m.netQ.rules {
			m.picks[i] = r.String()
		}
		m.picked = make([]bool, len(m.picks))
		m.pickPos, m.pickNet = 0, true
		m.state = stPick
	}
	return m, nil
}

// paste puts pasted text where a key would type it.
func (m *model) paste(text string) (tea.Model, tea.Cmd) {
	switch {
	case m.state == stInput && m.searching:
		if m.query.insert(text) {
			m.match = m.hist.Search(m.query.String(), m.hist.Len())
		}
	case m.state == stInput:
		if m.input.insert(text) {
			m.reroute()
		}
	case m.state == stConfirm || m.state == stFeedback || m.state == stExample:
		m.answerText.insert(text)
	}
	return m, nil
}

// promptView is the prompt before the line: the directory and the model.
func (m *model) promptView() string {
	return m.sty.prompt.Render(m.st.Prompt()) + " " + m.sty.dim.Render("("+effects.Escape(m.e.currentModel())+")") + " "
}

func (m *model) cursor(s string) string { return "\x1b[7m" + s + "\x1b[27m" }

// View is a pure function of the model: the prompt, or the keys of the
// screen under way. The transcript is printed above it.
func (m *model) View() tea.View { return tea.NewView(m.view()) }

func (m *model) view() string {
	var b strings.Builder
	switch {
	case asks(m.state) && !m.armed:
		// A question shows once the terminal has answered the fence's
		// query (see fence): a key typed after it appeared answers it,
		// however fast.
		b.WriteString(m.sty.dim.Render("…"))
	default:
		m.stateView(&b)
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

// stateView writes the prompt, or the keys of the screen under way.
func (m *model) stateView(b *strings.Builder) {
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
			fmt.Fprintf(b, "(search history)'%s': %s", m.query.view(m.cursor), found)
			break
		}
		b.WriteString(m.inputLine())
	case stWaiting:
		if m.live != nil {
			b.WriteString(m.liveView())
			break
		}
		b.WriteString(m.sty.dim.Render(m.waitLabel + "…  (ctrl+c cancels)"))
	case stSnippet:
		b.WriteString(m.snippetView())
	case stReview:
		k := m.keys
		hint := fmt.Sprintf("%s run · %s edit · %s revise · %s explain%s · %s abort",
			first(k.Run), first(k.Edit), first(k.Revise), first(k.Explain), m.reviewTrialHint(), first(k.Abort))
		b.WriteString(m.sty.bold.Render("review: ") + hint)
	case stConfirm:
		b.WriteString(m.sty.err.Render("type yes to run it anyway: ") + m.answerText.view(m.cursor) + m.sty.dim.Render("  (esc: back to the review)"))
	case stFeedback:
		b.WriteString(m.sty.bold.Render("what should change? ") + m.answerText.view(m.cursor))
	case stExample:
		b.WriteString(m.exampleView())
	case stRunning:
		b.WriteString(m.sty.dim.Render("running…"))
	case stSummary:
		k := m.keys
		fmt.Fprintf(b, "%s%s commit · %s pick paths · %s diff · %s abort", m.sty.bold.Render("changes: "),
			first(k.Commit), first(k.Pick), first(k.Diff), first(k.Abort))
	case stDiscard:
		fmt.Fprintf(b, "%s y abort (the run is kept for a while) · any other key: back to the changes",
			m.sty.err.Render(fmt.Sprintf("abort and set aside %s?", theseChanges(m.pendingRun.own.Len()))))
	case stNet:
		q := "allow them for this run?"
		if m.netQ.again {
			q = "allow and run again?"
		}
		fmt.Fprintf(b, "%s%s  a all %d · p pick · n none", m.sty.bold.Render("network: "), q, len(m.netQ.rules))
	case stPick:
		if m.pickNet {
			b.WriteString(m.sty.bold.Render("pick the destinations to allow") + m.sty.dim.Render("  (space toggles, a all, enter allows, esc back)"))
		} else {
			b.WriteString(m.sty.bold.Render("pick the paths to commit") + m.sty.dim.Render("  (space toggles, a all, enter commits, esc back)"))
		}
		for i, p := range m.picks {
			mark := "[ ]"
			if m.picked[i] {
				mark = "[x]"
			}
			shown := tildePath(p, m.e.cfg.Home)
			if m.pickNet {
				shown = effects.Quote(p)
			}
			line := fmt.Sprintf("%s %s", mark, shown)
			if i == m.pickPos {
				line = m.sty.bold.Render("> " + line)
			} else {
				line = "  " + line
			}
			b.WriteString("\n" + line)
		}
	}
}

// inputLine is the prompt, the route and the line, made to fit the width:
// first the directory shrinks to its last element, then the model goes,
// then the line scrolls so the cursor stays in view.
func (m *model) inputLine() string {
	badge := m.routeBadge()
	model := m.sty.dim.Render("(" + effects.Escape(m.e.currentModel()) + ")")
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
	case Typo:
		return m.sty.routeCmd.Render("[cmd?]")
	case Builtin:
		return m.sty.routeBuiltin.Render("[nash]")
	}
	return m.sty.dim.Render("[   ]")
}
