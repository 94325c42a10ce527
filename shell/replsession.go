package shell

import (
	"context"
	"errors"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/nash-shell/nash/effects"
)

// replSession is the REPL's part of the bash session (bashsession.go):
// reading ~/.bashrc at start, and the lines that wait meanwhile.
type replSession struct {
	rcLoading bool
	rcCancel  context.CancelFunc
	// queued are lines submitted while the shell could not take them
	// (~/.bashrc still being read): they run in order, as typed.
	queued []string
	// typed holds the keys typed ahead, for the prompt (typeahead.go).
	typed []tea.KeyPressMsg
}

// rcDelay is how long after start the shell starts reading ~/.bashrc:
// the first prompt is drawn by then.
const rcDelay = 15 * time.Millisecond

type (
	rcStartMsg struct{}
	rcDoneMsg  struct {
		output   string
		line     lineResult
		complete string
		skip     map[string]bool
	}
)

// sessionInit starts reading ~/.bashrc, when the shell has a bash session
// and is asked to.
func (m *model) sessionInit() tea.Cmd {
	if m.st.bash == nil || !m.e.cfg.ReadBashrc {
		return nil
	}
	m.rcLoading = true
	return tea.Tick(rcDelay, func(time.Time) tea.Msg { return rcStartMsg{} })
}

// startRC reads ~/.bashrc in the sandbox, in a command.
func (m *model) startRC() tea.Cmd {
	ls, err := m.st.bash.line()
	if err != nil {
		m.log.Warn("bash session", "err", err)
		m.rcLoading = false
		return m.nextQueued()
	}
	ctx, cancel := context.WithCancel(m.ctx)
	m.rcCancel = cancel
	if m.state == stWaiting && len(m.queued) > 0 {
		m.cancel = cancel
	}
	e, dir, env := m.e, m.st.Dir, m.st.Environ()
	return func() tea.Msg {
		defer cancel()
		out, lr, complete, skip := e.loadRC(ctx, dir, env, ls)
		return rcDoneMsg{output: out, line: lr, complete: complete, skip: skip}
	}
}

// rcDone starts the session from what ~/.bashrc defined, shows what it
// printed, and runs the lines that waited for it.
func (m *model) rcDone(msg rcDoneMsg) (tea.Model, tea.Cmd) {
	m.rcLoading, m.rcCancel = false, nil
	if m.cancel != nil && m.state == stWaiting {
		m.cancel = nil
	}
	m.st.bash.skip, m.st.bash.complete = msg.skip, msg.complete
	if msg.line.err != nil {
		m.log.Warn("~/.bashrc", "err", msg.line.err)
	}
	m.st.applyLine(msg.line, false, 0)
	var cmds []tea.Cmd
	if msg.output != "" {
		cmds = append(cmds, m.println(m.sty.dim.Render("~/.bashrc: ")+effects.EscapeText(msg.output)))
	}
	for _, n := range msg.line.notes {
		cmds = append(cmds, m.println(m.sty.dim.Render("nash: "+effects.EscapeText(n))))
	}
	m.reroute()
	return m, tea.Sequence(append(cmds, m.nextQueued(), m.replayTyped())...)
}

// nextQueued dispatches the next queued line when the prompt is free.
func (m *model) nextQueued() tea.Cmd {
	if m.rcLoading || len(m.queued) == 0 {
		return nil
	}
	if m.state != stInput && !(m.state == stWaiting && m.waitLabel == "reading ~/.bashrc") {
		return nil
	}
	m.state = stInput
	line := m.queued[0]
	m.queued = m.queued[1:]
	cmd := m.dispatch(line)
	if m.state == stInput {
		// It did not start a pass: the next one may go now.
		return tea.Sequence(cmd, m.nextQueued())
	}
	return cmd
}

// sessionLine prepares a typed line's run to carry the bash session: its
// environment reads the state, and its bash leaves the new one in keep.
func (m *model) sessionLine(j *job) *lineSession {
	if j.route != Command || m.st.bash == nil {
		return nil
	}
	ls, err := m.st.bash.line()
	if err != nil {
		m.log.Warn("bash session", "err", err)
		return nil
	}
	j.env, j.keep, j.shadowed = ls.environ(j.env), ls.out, ls.defined
	return ls
}

// sessionDone takes what a pass left of the session: a typed line's
// state, or a script's exit status as $?.
func (m *model) sessionDone(msg flowDoneMsg) tea.Cmd {
	if msg.res == nil {
		return nil
	}
	exit := exitOf(msg.res)
	if msg.line == nil {
		if msg.res.ran {
			m.st.setStatus(exit)
		}
		return nil
	}
	if err := msg.line.err; err != nil && !errors.Is(err, ErrNoState) {
		m.log.Warn("bash session", "err", err)
	}
	m.st.applyLine(*msg.line, msg.res.ran, exit)
	var cmds []tea.Cmd
	for _, n := range msg.line.notes {
		cmds = append(cmds, m.println(m.sty.dim.Render("nash: "+effects.EscapeText(n))))
	}
	return tea.Sequence(cmds...)
}

// exitOf is the exit code of a pass's run, 0 when nothing ran.
func exitOf(res *flowResult) int {
	if res != nil && res.rec != nil && res.rec.Run != nil {
		return res.rec.Run.ExitCode
	}
	return 0
}
