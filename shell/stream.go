package shell

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/planner"
)

// Streaming: while the model works, both faces show its answer as it
// arrives (the script, the answer or the explanation read out of the JSON
// still arriving, planner.PartialAnswer), the time taken and the tokens
// so far; ctrl+c cancels. The REPL draws it in its view; the line mode
// (nash -c on a terminal) redraws a few lines on stderr in place and
// erases them when the model is done, before the review is written.

// liveEvery is how often the elapsed time is redrawn.
const liveEvery = 100 * time.Millisecond

// maxLiveLines bounds the model's text shown while it arrives: the last
// lines of it, so the region fits any terminal and redraws in place.
const maxLiveLines = 8

// liveText is what the model has sent so far, as the faces show it.
type liveText struct {
	what    string // "planning", "revising", "explaining"
	started time.Time
	elapsed time.Duration
	text    string // the script, answer or explanation read so far
	script  bool   // text is a script (highlighted), not prose
	tokens  int    // output tokens so far (estimated while streaming)
	attempt int    // repairs made (0: the first answer)
}

// update takes in the model's progress.
func (t *liveText) update(p planner.Progress) {
	t.elapsed, t.attempt = max(t.elapsed, p.Elapsed), p.Attempt
	if p.Kind == planner.CallStarted {
		t.text, t.tokens = "", 0
		return
	}
	t.tokens = p.OutputTokens()
	a := p.Partial()
	switch {
	case a.Script != "":
		t.text, t.script = a.Script, true
	case a.Markdown != "":
		t.text, t.script = a.Markdown, false
	case a.Explanation != "":
		t.text, t.script = a.Explanation, false
	case a.Question != "":
		t.text, t.script = a.Question, false
	}
}

// status is the line under the text: what the model does, for how long,
// and how to stop it.
func (t *liveText) status(now time.Time) string {
	el := t.elapsed
	if !t.started.IsZero() && now.After(t.started) {
		el = max(el, now.Sub(t.started))
	}
	s := fmt.Sprintf("%s… %.1fs", t.what, el.Seconds())
	if t.tokens > 0 {
		s += fmt.Sprintf(" · %d tokens", t.tokens)
	}
	if t.attempt > 0 {
		s += fmt.Sprintf(" · repair %d", t.attempt)
	}
	return s + "  (ctrl+c cancels)"
}

// lines is the tail of the text, escaped, each line cut to width
// columns, at most n lines.
func (t *liveText) lines(st *styles, width, n int) []string {
	if strings.TrimSpace(t.text) == "" || n <= 0 {
		return nil
	}
	width = max(width, 10)
	text := effects.EscapeText(strings.TrimRight(t.text, "\n"))
	var rows []string
	for _, l := range strings.Split(text, "\n") {
		if t.script {
			rows = append(rows, st.highlightLine(l))
			continue
		}
		rows = append(rows, strings.Split(ansi.Wrap(l, width, ""), "\n")...)
	}
	if len(rows) > n {
		rows = rows[len(rows)-n:]
	}
	for i, r := range rows {
		if ansi.StringWidth(r) > width {
			rows[i] = ansi.Truncate(r, width-1, "…")
		}
	}
	return rows
}

// liveRegion draws a liveText on a terminal (nash -c's stderr) and redraws
// it in place: the cursor goes back to the region's first row and the
// screen is cleared from there. Every row is cut to the width, so the
// count of rows to go back is exact.
type liveRegion struct {
	w     io.Writer
	st    *styles
	width int

	mu     sync.Mutex
	t      liveText
	rows   int  // rows drawn, 0 when nothing is
	hidden bool // erased while lines are written in its place
	stop   chan struct{}
	done   chan struct{}
}

// startLive draws the status of what and redraws it until the returned
// region is ended.
func startLive(w io.Writer, st *styles, width int, what string) *liveRegion {
	if width <= 0 {
		width = 80
	}
	r := &liveRegion{w: w, st: st, width: width, t: liveText{what: what, started: time.Now()},
		stop: make(chan struct{}), done: make(chan struct{})}
	r.draw()
	go func() {
		defer close(r.done)
		t := time.NewTicker(liveEvery)
		defer t.Stop()
		for {
			select {
			case <-r.stop:
				return
			case <-t.C:
				r.draw()
			}
		}
	}()
	return r
}

// update takes in the model's progress; the next tick draws it.
func (r *liveRegion) update(p planner.Progress) {
	r.mu.Lock()
	r.t.update(p)
	r.mu.Unlock()
}

// end stops the redrawing and erases the region.
func (r *liveRegion) end() {
	close(r.stop)
	<-r.done
	r.mu.Lock()
	defer r.mu.Unlock()
	r.clear()
}

// hide erases the region and keeps it off the screen until show, so that
// lines written meanwhile (the flow's words while it is busy) stay above
// it rather than being erased by the next redraw.
func (r *liveRegion) hide() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hidden = true
	r.clear()
}

// show draws the region again below what was written while it was hidden.
func (r *liveRegion) show() {
	r.mu.Lock()
	r.hidden = false
	r.mu.Unlock()
	r.draw()
}

func (r *liveRegion) draw() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.hidden {
		return
	}
	rows := r.t.lines(r.st, r.width-1, maxLiveLines)
	rows = append(rows, r.st.dim.Render(ansi.Truncate(r.t.status(time.Now()), r.width-1, "…")))
	r.clear()
	io.WriteString(r.w, strings.Join(rows, "\r\n"))
	r.rows = len(rows)
}

// clear erases what was drawn: back to column 0, up to the first row,
// clear to the end of the screen.
func (r *liveRegion) clear() {
	if r.rows == 0 {
		return
	}
	s := "\r"
	if r.rows > 1 {
		s += fmt.Sprintf("\x1b[%dA", r.rows-1)
	}
	io.WriteString(r.w, s+"\x1b[J")
	r.rows = 0
}

// Live shows a model's work on a terminal, for commands outside the flow
// (nash explain --model): its text as it arrives, the time taken and the
// tokens, redrawn in place on w and erased by End.
type Live struct{ r *liveRegion }

// StartLive starts showing what ("explaining") on the terminal w, width
// columns wide, in colour or not.
func StartLive(w io.Writer, color bool, width int, what string) *Live {
	return &Live{startLive(w, newStyles(color), width, what)}
}

// Progress takes in the model's progress (a planner.Request's Stream).
func (l *Live) Progress(p planner.Progress) { l.r.update(p) }

// End stops the display and erases it.
func (l *Live) End() { l.r.end() }
