package shell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/planner"
	"github.com/nash-shell/nash/sandbox"
	"github.com/nash-shell/nash/sandbox/egress"
)

// The REPL's face of the flow. The flow runs in a goroutine of its own
// (started by submit); each of its questions and events is a message to
// the program, read by the command listen returns, and a question waits
// for Update's answer on its reply channel. Update never blocks: the flow
// is waiting whenever Update answers, and listen is armed again only
// while the flow is at work, so the two take turns.

// replFace is what the flow calls; it only sends messages.
type replFace struct {
	ctx  context.Context // the program's: a question waits no longer
	msgs chan<- tea.Msg
	live liveSlot // the model's latest progress, taken by Update
}

// Messages from the flow to the program.
type (
	flowEventMsg struct{ ev event }
	flowBusyMsg  struct {
		what   string
		cancel context.CancelFunc
	}
	flowAskMsg struct {
		q     question
		reply chan<- answer
	}
	flowDoneMsg struct {
		res *flowResult
		err error
		// line is what a typed line left of the bash session.
		line *lineResult
	}
)

// question is what the flow asks; each kind is one screen of the REPL.
type question interface{ isQuestion() }

type (
	qReview   struct{ a *planner.Artifact }
	qConfirm  struct{ reason string }
	qFeedback struct{}
	qEdit     struct{ script string }
	qRun      struct{ f runFunc }
	qDecide   struct{ o *outcome }
	qNet      struct{ q netQuestion }
	qPick     struct{ snips []planner.Snippet }
)

func (qReview) isQuestion()   {}
func (qConfirm) isQuestion()  {}
func (qFeedback) isQuestion() {}
func (qEdit) isQuestion()     {}
func (qRun) isQuestion()      {}
func (qDecide) isQuestion()   {}
func (qNet) isQuestion()      {}
func (qPick) isQuestion()     {}

// answer is the program's answer to a question; the fields that apply to
// the question are set.
type answer struct {
	act      action
	ok, back bool
	text     string
	dec      decision
	rules    []egress.Rule
	out      *outcome
	n        int // the command of an answer picked
	err      error
}

// post sends msg to the program, unless it has ended.
func (f *replFace) post(msg tea.Msg) bool {
	select {
	case f.msgs <- msg:
		return true
	case <-f.ctx.Done():
		return false
	}
}

func (f *replFace) ask(q question) answer {
	reply := make(chan answer, 1)
	if !f.post(flowAskMsg{q, reply}) {
		return answer{err: f.ctx.Err()}
	}
	select {
	case a := <-reply:
		return a
	case <-f.ctx.Done():
		return answer{err: f.ctx.Err()}
	}
}

func (f *replFace) busy(ctx context.Context, what string) (context.Context, context.CancelFunc) {
	mctx, cancel := context.WithCancel(ctx)
	f.post(flowBusyMsg{what, cancel})
	return mctx, cancel
}

func (f *replFace) review(a *planner.Artifact, _ string) (action, error) {
	ans := f.ask(qReview{a})
	return ans.act, ans.err
}

func (f *replFace) confirm(reason string) (bool, bool, error) {
	ans := f.ask(qConfirm{reason})
	return ans.ok, ans.back, ans.err
}

func (f *replFace) feedback() (string, error) {
	ans := f.ask(qFeedback{})
	return ans.text, ans.err
}

func (f *replFace) edit(script string) (string, error) {
	ans := f.ask(qEdit{script})
	return ans.text, ans.err
}

func (f *replFace) run(run runFunc) (*outcome, error) {
	ans := f.ask(qRun{run})
	return ans.out, ans.err
}

func (f *replFace) decide(o *outcome) (decision, error) {
	ans := f.ask(qDecide{o})
	return ans.dec, ans.err
}

func (f *replFace) allowNet(q netQuestion) ([]egress.Rule, error) {
	ans := f.ask(qNet{q})
	return ans.rules, ans.err
}

func (f *replFace) say(ev event) { f.post(flowEventMsg{ev}) }

// startFlow runs j through the flow in its own goroutine and returns the
// command that delivers its first message.
func (m *model) startFlow(j job) tea.Cmd {
	j.dir, j.env = m.st.Dir, m.st.Environ()
	j.history = append([]planner.HistoryEntry(nil), m.st.History...)
	msgs := make(chan tea.Msg)
	m.flowMsgs = msgs
	m.state = stWaiting
	m.waitLabel = "working"
	f := &replFace{ctx: m.ctx, msgs: msgs}
	e, ctx := m.e, m.ctx
	ls := m.sessionLine(&j)
	m.flows.Add(1)
	go func() {
		defer m.flows.Done()
		res, err := e.flow(ctx, f, j)
		e.keep(j, res)
		done := flowDoneMsg{res: res, err: err}
		if ls != nil && res != nil {
			lr := ls.read(res.kept)
			done.line = &lr
		}
		f.post(done)
	}()
	return m.listen()
}

// listen delivers the flow's next message.
func (m *model) listen() tea.Cmd {
	msgs, ctx := m.flowMsgs, m.ctx
	return func() tea.Msg {
		select {
		case msg := <-msgs:
			return msg
		case <-ctx.Done():
			return nil
		}
	}
}

// answer replies to the question the flow waits on and listens for what
// follows.
func (m *model) answer(a answer) tea.Cmd {
	reply := m.reply
	m.reply = nil
	if reply == nil {
		return nil
	}
	reply <- a
	m.state = stWaiting
	m.waitLabel = "working"
	return m.listen()
}

// flowAsked turns the flow's question into the screen that answers it.
func (m *model) flowAsked(msg flowAskMsg) (tea.Model, tea.Cmd) {
	m.reply = msg.reply
	m.cancel, m.live = nil, nil
	m.answerText.reset()
	switch msg.q.(type) {
	case qRun, qEdit:
	default:
		// A question: keys typed before it neither answer it nor wait
		// for the prompt after it.
		m.dropTyped()
	}
	switch q := msg.q.(type) {
	case qReview:
		m.art = q.a
		m.state = stReview
		return m, m.fence()
	case qConfirm:
		m.state = stConfirm
		return m, m.fence()
	case qFeedback:
		m.state = stFeedback
		m.answerText.set(m.feedbackDefault)
		m.feedbackDefault = ""
	case qExample:
		m.state = stExample
	case qEdit:
		cmd, path, err := editCommand(m.e.cfg.Editor, q.script)
		if err != nil {
			return m, m.answer(answer{err: err})
		}
		m.state = stWaiting
		m.waitLabel = "editing"
		return m, m.execProcess(cmd, func(err error) tea.Msg {
			if err != nil {
				os.Remove(path)
				return editedMsg{err: fmt.Errorf("edit: the editor failed: %w", err)}
			}
			s, err := readEdited(path)
			return editedMsg{script: s, err: err}
		})
	case qRun:
		m.state = stRunning
		r := &runExec{f: q.f}
		if m.tty != nil {
			r.stdout = m.tty // the terminal itself, not the program's writer
		}
		if m.ttyIn != nil {
			r.stdin, r.ttyIn = m.ttyFile, m.ttyIn // the terminal, not bubbletea's pipe
		}
		return m, m.exec(r, func(err error) tea.Msg { return runDoneMsg{r.out, err, r.typeahead} })
	case qDecide:
		m.pendingRun = q.o
		m.state = stSummary
		return m, m.fence()
	case qPick:
		m.snippets = q.snips
		m.state = stSnippet
		return m, m.fence()
	case qNet:
		m.netQ = q.q
		m.state = stNet
		var b bytes.Buffer
		writeNetOffer(&b, q.q)
		return m, tea.Batch(m.println(strings.TrimRight(b.String(), "\n")), m.fence())
	}
	return m, nil
}

// flowSaid renders the flow's event into the transcript and listens on.
func (m *model) flowSaid(ev event) tea.Cmd {
	var b bytes.Buffer
	m.live = nil
	switch ev := ev.(type) {
	case evAnswer, evStdin:
		m.sayAI(&b, ev)
	case evQuestion:
		b.WriteString(m.sty.warn.Render("the model asks: ") + effects.EscapeLine(ev.text))
	case evReview:
		writeReview(&b, m.sty, ev.a, m.width)
		if ev.reason != "" {
			fmt.Fprintf(&b, "%s %s\n", m.sty.err.Render("careful:"), ev.reason)
		}
	case evExplanation:
		writeExplanation(&b, m.sty, ev.x)
	case evFailed:
		if errors.Is(ev.err, context.Canceled) {
			b.WriteString(m.sty.dim.Render("cancelled"))
		} else {
			b.WriteString(m.sty.err.Render("nash: ") + effects.EscapeText(ev.err.Error()))
		}
	case evAborted:
		switch {
		case ev.kept != "":
			b.WriteString(m.sty.dim.Render("aborted; nothing was changed. ") + m.e.keptHint(ev.kept))
		case ev.ran:
			b.WriteString(m.sty.dim.Render("aborted; nothing was changed"))
		default:
			b.WriteString(m.sty.dim.Render("aborted; nothing was run"))
		}
	case evAutoCommitted:
		b.WriteString(m.sty.ok.Render("✓ ") + autoLine(ev.o, ev.tx.ID, m.e.undoCommand(""), m.e.cfg.Home))
	case evToolsKept:
		// Tools' own bookkeeping: nothing to say.
	case evExit:
		b.WriteString(m.sty.warn.Render(fmt.Sprintf("exit status %d", ev.code)))
	case evUnsandboxed:
		b.WriteString(m.sty.err.Render("ran WITHOUT a sandbox: no summary, nothing to undo"))
	case evHostLook:
		b.WriteString(m.sty.dim.Render(effects.EscapeText(hostNote(ev.h))))
	case evNoChanges:
		if !ev.typed {
			b.WriteString(m.sty.dim.Render("no changes"))
		}
	case evOutcome:
		writeOutcome(&b, m.sty, ev.o, m.width, m.e.cfg.Home)
	case evNotCommitted:
		b.WriteString(m.sty.err.Render("not committed: ") + effects.EscapeText(ev.err.Error()) + "\n")
		b.WriteString(m.sty.dim.Render("pick the other paths to commit them alone, or abort"))
	case evNetAgain:
		b.WriteString(m.sty.dim.Render("running the script again with " + quoteRules(ev.rules) + " allowed; the first run's changes are set aside"))
		if ev.kept != "" {
			b.WriteString("\n" + m.e.keptHint(ev.kept))
		}
	case evNetKept:
		b.WriteString(m.sty.ok.Render(fmt.Sprintf("no file changes; what the run reached is kept as transaction %s", ev.tx.ID)))
	case evCommitted:
		b.WriteString(m.sty.ok.Render(fmt.Sprintf("committed as transaction %s", ev.tx.ID)) +
			m.sty.dim.Render(fmt.Sprintf("  (undo with %s)", m.e.undoCommand(ev.tx.ID))))
	default:
		m.sayTrial(&b, ev)
	}
	return tea.Sequence(m.println(strings.TrimRight(b.String(), "\n")), m.listen())
}

// flowDone keeps what the session needs of the pass and says how it ended.
func (m *model) flowDone(msg flowDoneMsg) (tea.Model, tea.Cmd) {
	m.state = stInput
	m.reply, m.cancel, m.pendingRun, m.art, m.live = nil, nil, nil, nil, nil
	m.status = "" // "cancelling…" and the like are over
	res, err := msg.res, msg.err
	var cmds []tea.Cmd
	cmds = append(cmds, m.sessionDone(msg))
	if res != nil {
		for _, h := range res.history {
			m.st.Record(h)
		}
		if res.ran {
			m.st.Forget()
		}
		if res.committed != nil {
			m.st.Committed = append(m.st.Committed, *res.committed)
			cmds = append(cmds, m.summarizeCmd(res.committed.TxID, res.cs))
		}
	}
	var es ExitStatus
	switch {
	case err == nil, errors.Is(err, ErrAborted), errors.As(err, &es):
	case errors.Is(err, context.Canceled):
		cmds = append([]tea.Cmd{m.println(m.sty.dim.Render("cancelled"))}, cmds...)
	default:
		cmds = append([]tea.Cmd{m.println(m.sty.err.Render("nash: ") + effects.EscapeText(err.Error()))}, cmds...)
	}
	return m, tea.Sequence(append(cmds, m.nextQueued(), m.replayTyped())...)
}

// runExec runs the script as a tea.ExecCommand: bubbletea releases the
// terminal, hands it over, and takes it back afterwards, so vi, less and
// read work inside the script.
type runExec struct {
	f      runFunc
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	out    *outcome
	// typeahead is what the person typed during the run that the script
	// left unread, when no question follows and no ttyIn takes it.
	typeahead []byte
	// ttyIn, when set, is paused during the run and takes what the
	// script left unread, in its place among the keys.
	ttyIn *ttyInput
}

func (r *runExec) SetStdin(in io.Reader) {
	if r.stdin == nil {
		r.stdin = in
	}
}
func (r *runExec) SetStdout(out io.Writer) {
	if r.stdout == nil {
		r.stdout = out
	}
}
func (r *runExec) SetStderr(w io.Writer) { r.stderr = w }

// Run runs the script; the outcome is kept for the callback. When a
// question follows, what waits on the terminal is dropped first, before
// the program reads keys again: only keys typed after the question
// answer it. Otherwise what the person typed during the run and the
// script did not read goes to the next prompt.
func (r *runExec) Run() error {
	if r.ttyIn != nil {
		r.ttyIn.pause()
		defer r.ttyIn.resume()
	}
	o, err := r.f(r.stdin, r.stdout, r.stderr)
	r.out = o
	switch {
	case o == nil:
	case hasOutcome(o):
		if f, ok := r.stdin.(*os.File); ok {
			sandbox.DiscardInput(f)
		}
	case r.ttyIn != nil:
		// After the keys typed before the run, before those typed
		// after it.
		r.ttyIn.inject(keyBytes(typedAhead(o.pending.Typeahead)))
	default:
		r.typeahead = o.pending.Typeahead
	}
	return err
}
