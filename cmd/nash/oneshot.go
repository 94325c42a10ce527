package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/internal/conversation"
	"github.com/nash-shell/nash/planner"
	"github.com/nash-shell/nash/shell"
)

// oneShot is nash -c TEXT. A request in English with standard input from
// a pipe or a file (journalctl -u x | nash -c "why did it fail") sends
// what was piped in to the model as context; nash's questions are then
// asked on the terminal (/dev/tty, when its words go to one on stderr),
// since standard input is the data. Without a terminal there is no one to
// ask: the review is aborted, an answer is printed and its commands are
// not offered.
func oneShot(ctx context.Context, g *options, o shellOptions, cfg shell.Config, text string, io stdio) error {
	opts := shell.LineOptions{Yes: o.yes, DryRun: o.dryRun, Print: o.print, JSON: o.json, SaveScript: o.saveScript,
		Width: termWidth(io.out), Color: g.color}
	answers := io.in
	st := shell.NewState(cfg.Dir, cfg.Env, cfg.Home)
	english := shell.RouteLine(text, st.IsCommand).Kind == shell.English
	if english && !isTerminal(io.in) {
		in, err := planner.ReadInput(io.in, "stdin", 0)
		if err != nil {
			return fmt.Errorf("read standard input: %w", err)
		}
		if in.Size > 0 {
			opts.Input = in
		}
		answers = strings.NewReader("")
		if !o.yes && isTerminal(io.err) {
			// --yes asks nothing; without a terminal on stderr no
			// one would see the questions.
			if tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0); err == nil {
				defer tty.Close()
				answers = tty
			}
		}
	}
	switch {
	case isTerminal(answers):
		opts.ScriptStdin = answers
	case o.yes:
		opts.ScriptStdin = io.in
	}
	opts.Pick = isTerminal(answers)
	// An answer goes to stdout, or to stderr under --print (which prints
	// scripts only): laid out for a terminal when it goes to one.
	answerTo := io.out
	if o.print {
		answerTo = io.err
	}
	if isTerminal(answerTo) && !o.json {
		opts.Answers = shell.AnswerPlain
		if g.color {
			opts.Answers = shell.AnswerColor
		}
	}
	if isTerminal(io.err) && !o.json {
		opts.Live = true
		if w := termWidth(io.err); w > 0 {
			opts.Width = w
		}
	}
	if err := continueConversation(g, &cfg, o.cont, io.err); err != nil {
		return err
	}
	return shell.OneShot(ctx, cfg, text, answers, io.out, io.err, opts)
}

// continueConversation sets cfg up to keep this one-shot's exchanges, as
// a new conversation or, with cont (--continue), as more of the last one,
// whose exchanges the model then sees.
func continueConversation(g *options, cfg *shell.Config, cont bool, errw io.Writer) error {
	store := conversation.Open(g.stateDir)
	var c *conversation.Conversation
	if cont {
		var err error
		c, err = store.Last(conversation.OneShot)
		switch {
		case errors.Is(err, conversation.ErrNone):
			fmt.Fprintln(errw, "nash: no earlier nash -c to continue; this one starts a new conversation")
		case err != nil:
			return fmt.Errorf("continue: %w", err)
		default:
			cfg.History = c.History()
		}
	}
	if c == nil {
		c = store.New(conversation.OneShot, cfg.Dir)
	}
	cfg.Keep = keeper(store, c, errw)
	return nil
}

// resumeSession sets the shell up to keep its session, as a new
// conversation or, with resume (--resume), as more of the last one: the
// shell then starts in its directory and the model sees its exchanges.
func resumeSession(g *options, cfg *shell.Config, resume bool, errw io.Writer) error {
	store := conversation.Open(g.stateDir)
	var c *conversation.Conversation
	if resume {
		var err error
		c, err = store.Last(conversation.Shell)
		switch {
		case errors.Is(err, conversation.ErrNone):
			return errors.New("resume: no earlier session to resume")
		case err != nil:
			return fmt.Errorf("resume: %w", err)
		}
		cfg.History = c.History()
		if fi, err := os.Stat(c.Dir); err == nil && fi.IsDir() && c.Dir != "" {
			cfg.Dir = c.Dir
		} else if c.Dir != "" {
			fmt.Fprintf(errw, "nash: the session's directory %s is gone; resuming in %s\n", effects.Quote(c.Dir), effects.Quote(cfg.Dir))
		}
	} else {
		c = store.New(conversation.Shell, cfg.Dir)
	}
	cfg.Keep = keeper(store, c, nil)
	return nil
}

// keeper adds each exchange to c and saves it. A failure to save is said
// on errw (nil: not at all; the interactive shell must not write on the
// terminal under the program) and loses only the resumption.
func keeper(store *conversation.Store, c *conversation.Conversation, errw io.Writer) func(conversation.Exchange) {
	return func(ex conversation.Exchange) {
		c.Add(ex)
		if err := store.Save(c); err != nil && errw != nil {
			fmt.Fprintf(errw, "nash: the conversation was not kept: %s\n", effects.EscapeLine(err.Error()))
		}
	}
}
