package shell

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/nash-shell/nash/planner"
)

// The REPL's share of the model's work: its text as it arrives, drawn in
// the view with the time taken (ctrl+c cancels, as before); its answers,
// rendered as Markdown into the transcript; and the commands in them,
// picked by number for the review.

// liveSlot holds the model's latest progress between the flow's
// goroutine and Update. The stream posts a message only when none is
// waiting, so a fast stream never queues up messages or waits on Update
// for each piece: Update takes the latest when it gets to it.
type liveSlot struct {
	mu      sync.Mutex
	latest  planner.Progress
	pending bool
}

// flowProgressMsg says the model sent more; Update takes it from f.
type flowProgressMsg struct{ f *replFace }

// liveTickMsg redraws the time taken while the model works; gen tells
// the ticks of the work under way from those of earlier work.
type liveTickMsg struct {
	now time.Time
	gen int
}

func (f *replFace) progress(p planner.Progress) {
	f.live.mu.Lock()
	f.live.latest = p
	if f.live.pending {
		f.live.mu.Unlock()
		return
	}
	f.live.pending = true
	f.live.mu.Unlock()
	f.post(flowProgressMsg{f})
}

// take returns the latest progress and lets the next one post.
func (f *replFace) take() planner.Progress {
	f.live.mu.Lock()
	defer f.live.mu.Unlock()
	f.live.pending = false
	return f.live.latest
}

func (f *replFace) pick(snips []planner.Snippet) (int, error) {
	ans := f.ask(qPick{snips})
	return ans.n, ans.err
}

// startLive starts showing the model's work: its text as it arrives and
// the time taken, redrawn every liveEvery.
func (m *model) startLive(what string) tea.Cmd {
	m.live = &liveText{what: what, started: time.Now()}
	m.liveGen++
	return liveTick(m.liveGen)
}

func liveTick(gen int) tea.Cmd {
	return tea.Tick(liveEvery, func(t time.Time) tea.Msg { return liveTickMsg{t, gen} })
}

// liveUpdate takes the model's progress, or the clock's tick, into the
// view. The tick stops once the model is done.
func (m *model) liveUpdate(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case flowProgressMsg:
		p := msg.f.take()
		if m.live != nil {
			m.live.update(p)
		}
		return m.listen()
	case liveTickMsg:
		if m.live == nil || m.state != stWaiting || msg.gen != m.liveGen {
			return nil
		}
		m.live.elapsed = max(m.live.elapsed, msg.now.Sub(m.live.started))
		return liveTick(m.liveGen)
	}
	return nil
}

// liveView is the model's text so far (its last lines) over the status.
func (m *model) liveView() string {
	rows := m.live.lines(m.sty, m.width-2, maxLiveLines)
	rows = append(rows, m.sty.dim.Render(m.live.status(time.Time{})))
	return strings.Join(rows, "\n")
}

// sayAI renders the answer (Markdown, its commands numbered) or how much
// of the piped input was sent.
func (m *model) sayAI(b *bytes.Buffer, ev event) {
	switch ev := ev.(type) {
	case evAnswer:
		out, _ := m.sty.markdown(ev.a.Answer, m.width)
		b.WriteString(out)
		if u := usageLine(ev.a.Usage); u != "" {
			b.WriteString(m.sty.dim.Render(u) + "\n")
		}
	case evStdin:
		b.WriteString(m.sty.dim.Render(stdinLine(ev.in)))
	}
}

// snippetKey picks a command of the answer by its number; enter, esc or
// ctrl+c picks none.
func (m *model) snippetKey(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	key := k.String()
	switch key {
	case "enter", "esc", "ctrl+c", "n":
		m.snippets = nil
		return m, m.answer(answer{})
	}
	if n, err := strconv.Atoi(key); err == nil && n >= 1 && n <= len(m.snippets) {
		m.snippets = nil
		return m, m.answer(answer{n: n})
	}
	if key == "y" && len(m.snippets) == 1 {
		m.snippets = nil
		return m, m.answer(answer{n: 1})
	}
	return m, nil
}

// snippetView says how to pick a command of the answer.
func (m *model) snippetView() string {
	n := min(len(m.snippets), 9)
	keys := "1"
	if n > 1 {
		keys = fmt.Sprintf("1-%d", n)
	}
	return m.sty.bold.Render("answer: ") + keys + " review and run that command · enter done"
}
