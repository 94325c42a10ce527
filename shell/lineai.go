package shell

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nash-shell/nash/internal/conversation"
	"github.com/nash-shell/nash/planner"
)

// The line face's share of the model's work: its text as it arrives, its
// answers, and the commands in them.

// startLive shows the model's work on the terminal until the returned
// func is called.
func (l *liner) startLive(ctx context.Context, what string) (context.Context, context.CancelFunc) {
	l.live = startLive(l.errw, newStyles(l.opts.Color), l.opts.Width, what)
	return ctx, func() {
		if l.live != nil {
			l.live.end()
			l.live = nil
		}
	}
}

func (l *liner) progress(p planner.Progress) {
	if l.live != nil {
		l.live.update(p)
	}
}

// pick offers the commands of an answer when a person answers at a
// terminal; otherwise the answer is all there is.
func (l *liner) pick(snips []planner.Snippet) (int, error) {
	if !l.opts.Pick || l.opts.JSON {
		return 0, nil
	}
	if l.opts.Answers == AnswerSource {
		fmt.Fprint(l.errw, snippetList(snips))
	}
	l.freshAnswer()
	prompt := "review and run [1]? y or enter for no: "
	if len(snips) > 1 {
		prompt = fmt.Sprintf("review and run one? 1-%d, or enter for none: ", len(snips))
	}
	for {
		fmt.Fprint(l.errw, prompt)
		line, err := l.in.ReadString('\n')
		ans := strings.ToLower(strings.TrimSpace(line))
		switch {
		case ans == "" || ans == "n" || ans == "no":
			if err != nil && line == "" {
				fmt.Fprintln(l.errw)
			}
			return 0, nil
		case len(snips) == 1 && (ans == "y" || ans == "yes"):
			return 1, nil
		}
		if n, nerr := strconv.Atoi(strings.Trim(ans, "[]")); nerr == nil && n >= 1 && n <= len(snips) {
			return n, nil
		}
		if err != nil {
			fmt.Fprintln(l.errw)
			return 0, nil
		}
	}
}

// sayAI writes the events of the model's answers: the answer itself on
// out (it is what nash -c printed; stderr under --print, which prints
// scripts only), and how much of the piped input was sent.
func (l *liner) sayAI(ev event) {
	switch ev := ev.(type) {
	case evAnswer:
		if l.opts.JSON {
			return
		}
		w := l.out
		if l.opts.Print {
			w = l.errw
		}
		fmt.Fprint(w, renderAnswer(ev.a.Answer, l.opts.Answers, l.opts.Width))
		if u := usageLine(ev.a.Usage); u != "" {
			fmt.Fprintf(l.errw, "nash: %s\n", u)
		}
	case evStdin:
		fmt.Fprintf(l.errw, "nash: %s\n", stdinLine(ev.in))
	}
}

// keep tells Config.Keep the steps j came to (the planner's history of
// the pass), so the conversation can go on later.
func (e *engine) keep(j job, res *flowResult) {
	if e.cfg.Keep == nil || res == nil {
		return
	}
	for i, h := range res.history {
		ex := conversation.Exchange{Time: time.Now(), Dir: j.dir, Prompt: h.Prompt, Script: h.Script,
			ExitCode: h.ExitCode, Output: h.Output}
		if res.rec != nil {
			ex.Model = res.rec.Model
		}
		switch {
		case h.Answer != "":
			ex.Kind, ex.Answer = planner.KindAnswer.String(), h.Answer
		case h.Script == "" && res.rec != nil && res.rec.Question != "":
			ex.Kind, ex.Answer, ex.Output = planner.KindQuestion.String(), res.rec.Question, ""
		case h.Prompt == "":
			ex.Kind = "command"
		default:
			ex.Kind = planner.KindScript.String()
		}
		if i == len(res.history)-1 && res.committed != nil {
			ex.TxID = res.committed.TxID
		}
		e.cfg.Keep(ex)
	}
}
