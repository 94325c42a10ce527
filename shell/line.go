package shell

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/term"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/planner"
	"github.com/nash-shell/nash/sandbox"
	"github.com/nash-shell/nash/sandbox/egress"
)

// LineOptions shape the line mode and the one-shots.
type LineOptions struct {
	Yes    bool // approve and commit without asking (not the second confirmation)
	DryRun bool // plan and show the review; run nothing
	Print  bool // print the script only
	JSON   bool // print one Record describing the pass on out
	// Network gives the script the host's network, all of it (nash run
	// --net); Allow, the destinations it may reach beyond the
	// configuration's (nash run --net=HOST,...).
	Network bool
	Allow   []egress.Rule
	// Unprotected runs where the sandbox cannot hold changes back, and
	// says so (nash run --unprotected).
	Unprotected bool
	// SaveScript, when set, receives the script that was committed (or
	// ran without changes), for the shell hand-off of nash init.
	SaveScript string
	// ScriptStdin is the scripts' standard input: the terminal when one
	// is attached. Nil means none (/dev/null), so a script cannot eat the
	// answers meant for nash.
	ScriptStdin io.Reader
	// Input is what was piped to nash -c: a request in English sends it
	// to the model as context (within the planner's budget, saying what
	// was cut).
	Input *planner.Input
	// Answers is how an answer is written on out; Width the terminal's
	// width for the layouts.
	Answers AnswerStyle
	Width   int
	// Pick offers the commands of an answer to run: the answers to nash's
	// questions come from a person at a terminal.
	Pick bool
	// Live shows the model's text as it arrives, the time taken and the
	// tokens, redrawn in place on errw (a terminal); Color styles it.
	Live  bool
	Color bool
}

func (o LineOptions) flow() flowOptions {
	return flowOptions{yes: o.Yes, dryRun: o.DryRun, print: o.Print, network: o.Network, allow: o.Allow, unprotected: o.Unprotected}
}

// liner is the line mode: the flow in plain text. Answers are read from
// in, nash's words go to errw, scripts write to out and errw, and the
// dry-run review, --print and --json go to out.
type liner struct {
	// feedbackDefault is the revision's feedback when none is typed:
	// set when what failed goes to the model with it (trial.go).
	feedbackDefault string

	e   *engine
	st  *State
	in  *bufio.Reader
	tty *os.File // in, when it is a terminal
	// raw is in itself; answers, once a sandbox was given it as the
	// scripts' stdin, is where answers come from (sandbox.Answers).
	raw     io.Reader
	answers answerer
	out     io.Writer
	errw    io.Writer
	sty     *styles
	opts    LineOptions
	live    *liveRegion // the model's text as it arrives, while busy
}

func newLiner(cfg Config, in io.Reader, out, errw io.Writer, opts LineOptions) *liner {
	cfg.Color = false
	e := newEngine(cfg)
	e.oneShot = true // until Lines says otherwise
	st := NewState(cfg.Dir, cfg.Env, cfg.Home)
	st.History = append(st.History, cfg.History...)
	l := &liner{
		e: e, st: st,
		in: bufio.NewReader(in), raw: in, out: out, errw: errw, sty: newStyles(false), opts: opts,
	}
	if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		l.tty = f
	}
	return l
}

// Lines runs the line mode over in until end of input or exit: each line
// is routed and goes through the same flow as in the REPL, with the
// answers read from the following lines. It returns the last line's
// error, as a shell returns the last command's status.
func Lines(ctx context.Context, cfg Config, in io.Reader, out, errw io.Writer, opts LineOptions) error {
	l := newLiner(cfg, in, out, errw, opts)
	l.e.oneShot = false
	if cfg.BashSession && hasBash() {
		l.st.startBash()
		defer l.st.Close()
	}
	var hist *History
	if cfg.StateDir != "" {
		hist, _ = LoadHistory(historyPath(cfg.StateDir))
	}
	var last error
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		fmt.Fprintf(errw, "%s (%s) > ", l.st.Prompt(), effects.Escape(l.e.currentModel()))
		line, err := l.in.ReadString('\n')
		if line == "" && err != nil {
			fmt.Fprintln(errw)
			return last
		}
		if hist != nil {
			_ = hist.Add(strings.TrimRight(line, "\n"))
		}
		_, last = l.line(ctx, line)
		switch {
		case errors.Is(last, ErrExit):
			return nil
		case errors.Is(last, context.Canceled):
			return last
		case last != nil && !isQuiet(last):
			fmt.Fprintf(errw, "nash: %s\n", effects.EscapeText(last.Error()))
		}
	}
}

// isQuiet reports whether err was already told to the person.
func isQuiet(err error) bool {
	var es ExitStatus
	return errors.As(err, &es) || errors.Is(err, ErrAborted)
}

// OneShot runs one line, as nash -c does: route, plan, review, run,
// summary, commit. With JSON it prints one Record describing the pass.
func OneShot(ctx context.Context, cfg Config, text string, in io.Reader, out, errw io.Writer, opts LineOptions) error {
	l := newLiner(cfg, in, out, errw, opts)
	rec, err := l.line(ctx, text)
	if errors.Is(err, ErrExit) {
		err = nil
	}
	return l.finish(rec, err)
}

// Script is a script in hand that nash runs once, with no planner: the
// script of nash run, or one nash wrote for nash group or nash join.
type Script struct {
	Text string
	// Title, for a script nash wrote, is its own command line: the log
	// keeps it as the request and the record as the input.
	Title string
	// Show prints the script and what it will do before it runs.
	Show bool
}

// RunScript takes s through the flow once, as nash run does: analysis, the
// second confirmation if it needs one, the sandboxed run, the summary and
// the commit (asked, or with --yes). With JSON it prints one Record, the
// same as nash -c prints for the same script typed as a command.
func RunScript(ctx context.Context, cfg Config, s Script, in io.Reader, out, errw io.Writer, opts LineOptions) error {
	l := newLiner(cfg, in, out, errw, opts)
	input := s.Text
	if s.Title != "" {
		input = s.Title
	}
	r, err := l.pass(ctx, job{input: input, route: Command, text: s.Text, title: s.Title, show: s.Show})
	return l.finish(r, err)
}

// Staged is a change nash prepared without a script (nash rollback):
// Stage opens the sandbox and returns the pending change, which the flow
// then shows and commits (asked, or with --yes) or aborts as it does a
// run's.
type Staged struct {
	Title string // nash's own command line: the log keeps it as the request
	Stage func(ctx context.Context) (Sandbox, *sandbox.Pending, error)
}

// RunStaged takes a staged change through the flow once, from its effect
// summary on. With JSON it prints one Record.
func RunStaged(ctx context.Context, cfg Config, s Staged, in io.Reader, out, errw io.Writer, opts LineOptions) error {
	l := newLiner(cfg, in, out, errw, opts)
	r, err := l.pass(ctx, job{input: s.Title, route: Command, title: s.Title, stage: s.Stage})
	return l.finish(r, err)
}

// finish prints the record (--json) and saves the script (--save-script)
// of a one-shot, and returns its error.
func (l *liner) finish(r *flowResult, err error) error {
	if l.opts.JSON && r != nil {
		if err != nil && !isQuiet(err) {
			r.rec.Error = err.Error()
		}
		// Scripts read as written: > stays >, not \u003e.
		if werr := effects.WriteJSON(l.out, r.rec, true); werr != nil {
			return werr
		}
	}
	return err
}

// line handles one line. It returns the flow's result when the line went
// through the flow.
func (l *liner) line(ctx context.Context, line string) (*flowResult, error) {
	r := l.st.Route(line)
	text := strings.TrimSpace(line)
	switch r.Kind {
	case Empty:
		return nil, nil
	case Session:
		out, err := l.st.Apply(r.Text)
		if err != nil && l.st.bash != nil && !errors.Is(err, ErrExit) {
			// bash's own cd (CDPATH, cdable_vars) and its own words.
			return l.pass(ctx, job{input: text, route: Command, text: r.Text})
		}
		if out != "" {
			fmt.Fprintln(l.out, out)
		}
		if err == nil {
			l.st.setStatus(0)
		}
		return &flowResult{rec: &Record{Input: text, Route: r.Kind.String()}}, err
	case Builtin:
		err := l.e.builtin(ctx, r.Text, l.st.Dir, l.st.Committed, l.out)
		return &flowResult{rec: &Record{Input: text, Route: r.Kind.String()}}, err
	case Typo:
		l.st.setStatus(127)
		fmt.Fprintf(l.errw, "nash: %s\n", effects.EscapeText(typoMessage(r)))
		return &flowResult{rec: &Record{Input: text, Route: r.Kind.String()}}, nil
	}
	if r.Kind == Command && l.st.bash != nil && startsJob(r.Text) {
		fmt.Fprintf(l.errw, "nash: %s\n", bgNote)
	}
	// In a session (not a one-shot) a command is one the person typed.
	return l.pass(ctx, job{input: text, route: r.Kind, text: r.Text, typed: r.Kind == Command && !l.e.oneShot, stdin: l.opts.Input})
}

// pass takes j through the flow in the session's directory and
// environment, and keeps what the session needs of it.
func (l *liner) pass(ctx context.Context, j job) (*flowResult, error) {
	j.dir, j.env, j.history, j.opts = l.st.Dir, l.st.Environ(), l.st.History, l.opts.flow()
	var ls *lineSession
	if j.route == Command && l.st.bash != nil {
		var err error
		if ls, err = l.st.bash.line(); err != nil {
			fmt.Fprintf(l.errw, "nash: %s\n", effects.EscapeText(err.Error()))
		} else {
			j.env, j.keep, j.shadowed = ls.environ(j.env), ls.out, ls.defined
		}
	}
	res, err := l.e.flow(ctx, l, j)
	l.e.keep(j, res)
	switch {
	case ls != nil:
		lr := ls.read(res.kept)
		l.st.applyLine(lr, res.ran, exitOf(res))
		for _, n := range lr.notes {
			fmt.Fprintf(l.errw, "nash: %s\n", effects.EscapeText(n))
		}
	case res.ran:
		l.st.setStatus(exitOf(res))
	}
	for _, h := range res.history {
		l.st.Record(h)
	}
	if res.ran {
		l.st.Forget()
	}
	if res.committed != nil {
		l.st.Committed = append(l.st.Committed, *res.committed)
		l.summarize(ctx, res)
	}
	if res.saved != "" {
		l.save(res.saved)
	}
	return res, err
}

// summarize asks for the model's summary of a commit, when a model is
// configured, and shows it; a failure is one line and the commit stands.
func (l *liner) summarize(ctx context.Context, res *flowResult) {
	sum := l.e.cfg.Summarize
	if sum == nil || res.rec.Run == nil {
		return
	}
	text, err := sum(ctx, res.rec.Run.Transaction, res.cs)
	switch {
	case err != nil:
		fmt.Fprintf(l.errw, "nash: no change summary: %s\n", effects.EscapeLine(err.Error()))
	case text != "":
		res.rec.Run.Summary = text
		fmt.Fprintf(l.errw, "nash: summary: %s\n", effects.EscapeLine(text))
	}
}

// The line face: questions read lines, events are plain text on errw.

func (l *liner) busy(ctx context.Context, what string) (context.Context, context.CancelFunc) {
	if l.opts.Live {
		return l.startLive(ctx, what)
	}
	fmt.Fprintf(l.errw, "nash: %s…\n", what)
	return ctx, func() {}
}

func (l *liner) review(*planner.Artifact, string) (action, error) {
	ans, err := l.ask("run it? [y]es, [n]o, [e]dit, [r]evise, e[x]plain, [t]est, [g]ive an example: ", "y", "n", "e", "r", "x", "t", "g")
	if err != nil {
		return actAbort, err
	}
	return map[string]action{"y": actRun, "n": actAbort, "e": actEdit, "r": actRevise, "x": actExplain, "t": actTest, "g": actExample}[ans], nil
}

func (l *liner) confirm(string) (bool, bool, error) {
	ans, err := l.ask("type yes to run it anyway: ")
	if err != nil {
		return false, false, err
	}
	return strings.ToLower(strings.TrimSpace(ans)) == "yes", false, nil
}

func (l *liner) feedback() (string, error) {
	prompt, def := "what should change? ", l.feedbackDefault
	l.feedbackDefault = ""
	if def != "" {
		prompt = fmt.Sprintf("what should change? [%s] ", def)
	}
	fb, err := l.ask(prompt)
	if fb = strings.TrimSpace(fb); fb == "" && err == nil {
		fb = def
	}
	return fb, err
}

// edit opens the script in the editor on the terminal.
func (l *liner) edit(script string) (string, error) {
	cmd, path, err := editCommand(l.e.cfg.Editor, script)
	if err != nil {
		return "", err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = l.opts.ScriptStdin, l.errw, l.errw
	if err := cmd.Run(); err != nil {
		os.Remove(path)
		return "", fmt.Errorf("edit: the editor failed: %w", err)
	}
	return readEdited(path)
}

// run gives the script the terminal as its stdin when there is one (else
// /dev/null), and stdout, unless stdout is for the JSON record.
func (l *liner) run(f runFunc) (*outcome, error) {
	stdin := l.opts.ScriptStdin
	if stdin == nil {
		dn, err := os.Open(os.DevNull)
		if err != nil {
			return nil, err
		}
		defer dn.Close()
		stdin = dn
	}
	stdout := l.out
	if l.opts.JSON {
		stdout = l.errw
	}
	o, err := f(stdin, stdout, l.errw)
	if o != nil && sameReader(l.opts.ScriptStdin, l.raw) {
		l.useAnswers(o.sb)
	}
	return o, err
}

// answerer is a sandbox that says where answers to nash's questions come
// from after a run that had nash's stdin (*sandbox.Sandbox).
type answerer interface{ Answers() io.Reader }

// useAnswers reads answers, from now on, through the sandbox that had the
// liner's input as the scripts' stdin: it read from that input, and keeps
// what the scripts left unread; on a terminal it drops what was typed (or
// injected) before each question.
func (l *liner) useAnswers(sb Sandbox) {
	a, ok := sb.(answerer)
	if !ok {
		return
	}
	l.answers = a
	if l.tty == nil && l.in.Buffered() == 0 {
		l.in.Reset(a.Answers())
	}
}

// sameReader reports whether a and b are the same reader.
func sameReader(a, b io.Reader) (same bool) {
	defer func() {
		if recover() != nil {
			same = false // an uncomparable reader
		}
	}()
	return a != nil && a == b
}

func (l *liner) decide(o *outcome) (decision, error) {
	for {
		ans, err := l.ask("commit these changes? [c]ommit, [a]bort, [d]iff, [p]ick paths: ", "c", "a", "d", "p")
		if err != nil {
			return decision{}, err
		}
		switch ans {
		case "a":
			return decision{abort: true}, nil
		case "c":
			return decision{}, nil
		case "d":
			writeDiff(l.errw, o)
		case "p":
			all := commitPaths(o)
			for i, p := range all {
				fmt.Fprintf(l.errw, "  %d  %s\n", i+1, effects.Quote(p))
			}
			ans, err := l.ask("numbers of the paths to commit (e.g. 1 3): ")
			if err != nil {
				return decision{}, err
			}
			if paths := pickPaths(all, ans); len(paths) > 0 {
				return decision{paths: paths}, nil
			}
			fmt.Fprintln(l.errw, "nash: no path picked")
		}
	}
}

// allowNet asks once about destinations: all, some (by number, from the
// list it shows) or none. End of input is none.
func (l *liner) allowNet(q netQuestion) ([]egress.Rule, error) {
	writeNetOffer(l.errw, q)
	question := "allow them for this run?"
	if q.again {
		question = "allow and run again?"
	}
	for {
		fmt.Fprintf(l.errw, "%s [a]ll %d, [p]ick, [n]one: ", question, len(q.rules))
		line, err := l.in.ReadString('\n')
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "a", "all", "y", "yes":
			return q.rules, nil
		case "n", "none", "no":
			return nil, nil
		case "p", "pick":
			fmt.Fprint(l.errw, "numbers to allow (e.g. 1 3), empty for none: ")
			line, _ := l.in.ReadString('\n')
			var picked []egress.Rule
			ok := true
			for _, f := range strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' || r == '\r' }) {
				n, err := strconv.Atoi(f)
				if err != nil || n < 1 || n > len(q.rules) {
					fmt.Fprintf(l.errw, "nash: %s is not a number from the list\n", effects.Quote(f))
					ok = false
					break
				}
				picked = append(picked, q.rules[n-1])
			}
			if ok {
				return picked, nil
			}
			continue
		}
		if err != nil {
			fmt.Fprintln(l.errw)
			return nil, nil
		}
	}
}

func (l *liner) say(ev event) {
	if l.live != nil {
		// Busy with something that speaks as it goes (the examples
		// run again): the words go above the live region.
		l.live.hide()
		defer l.live.show()
	}
	w := l.errw
	switch ev := ev.(type) {
	case evQuestion:
		fmt.Fprintf(w, "nash: the model asks: %s\n", effects.EscapeLine(ev.text))
	case evAnswer, evStdin:
		l.sayAI(ev)
	case evReview:
		writeReview(w, l.sty, ev.a, 0)
		if ev.reason != "" {
			fmt.Fprintf(w, "nash: careful: %s\n", ev.reason)
		}
	case evExplanation:
		writeExplanation(w, l.sty, ev.x)
	case evFailed:
		fmt.Fprintf(w, "nash: %s\n", effects.EscapeText(ev.err.Error()))
	case evPrint:
		fmt.Fprintln(l.out, strings.TrimRight(ev.script, "\n"))
	case evDryRun:
		if !l.opts.JSON {
			writeReview(l.out, l.sty, ev.a, 0)
		}
	case evAborted:
		switch {
		case ev.kept != "":
			fmt.Fprintf(w, "nash: aborted; nothing was changed. %s\n", l.e.keptHint(ev.kept))
		case ev.ran:
			fmt.Fprintln(w, "nash: aborted; nothing was changed")
		default:
			fmt.Fprintln(w, "nash: aborted; nothing was run")
		}
	case evAutoCommitted:
		fmt.Fprintf(w, "nash: %s\n", autoLine(ev.o, ev.tx.ID, l.e.undoCommand(""), l.e.cfg.Home))
	case evToolsKept:
		// Tools' own bookkeeping: nothing to say.
	case evExit:
		fmt.Fprintf(w, "nash: the script exited with status %d\n", ev.code)
	case evUnsandboxed:
		fmt.Fprintln(w, "nash: ran WITHOUT a sandbox (--unprotected): no summary, nothing to undo")
	case evHostLook:
		fmt.Fprintf(w, "nash: %s\n", effects.EscapeText(hostNote(ev.h)))
	case evNoChanges:
		if !ev.typed {
			fmt.Fprintln(w, "nash: no changes")
		}
	case evOutcome:
		writeOutcome(w, l.sty, ev.o, 0, l.e.cfg.Home)
	case evNotCommitted:
		fmt.Fprintf(w, "nash: not committed: %s\n", effects.EscapeText(ev.err.Error()))
		fmt.Fprintln(w, "nash: pick the other paths to commit them alone, or abort")
	case evNetAgain:
		fmt.Fprintf(w, "nash: running the script again with %s allowed; the first run's changes are set aside\n", quoteRules(ev.rules))
		if ev.kept != "" {
			fmt.Fprintf(w, "nash: %s\n", l.e.keptHint(ev.kept))
		}
	case evNetKept:
		fmt.Fprintf(w, "nash: no file changes; what the run reached is kept as transaction %s (nash show %s)\n", ev.tx.ID, ev.tx.ID)
	case evCommitted:
		fmt.Fprintf(w, "nash: committed as transaction %s (undo with: %s)\n", ev.tx.ID, l.e.undoCommand(ev.tx.ID))
	default:
		l.sayTrial(ev)
	}
}

// ask prints prompt and reads an answer. With choices, it asks again until
// the answer is one of them (by first letter). End of input aborts. On a
// terminal only what is typed after the question counts: what waits
// before it (typed ahead, or injected) is dropped.
func (l *liner) ask(prompt string, choices ...string) (string, error) {
	l.freshAnswer()
	for {
		fmt.Fprint(l.errw, prompt)
		line, err := l.in.ReadString('\n')
		ans := strings.TrimSpace(line)
		if err != nil && line == "" {
			fmt.Fprintln(l.errw)
			fmt.Fprintln(l.errw, "nash: no answer")
			return "", ErrAborted
		}
		if len(choices) == 0 {
			return ans, nil
		}
		low := strings.ToLower(ans)
		for _, c := range choices {
			if low == c || (low != "" && strings.HasPrefix(choiceWord(c), low)) {
				return c, nil
			}
		}
	}
}

// freshAnswer readies in for the answer to a question: on a terminal only
// what is typed after the question counts; what waits before it (typed
// ahead, or injected) is dropped.
func (l *liner) freshAnswer() {
	if l.tty == nil {
		return
	}
	if l.answers != nil {
		l.in.Reset(l.answers.Answers())
	} else {
		l.in.Reset(l.tty)
		sandbox.DiscardInput(l.tty)
	}
}

// choiceWord spells out a one-letter choice, so "yes" and "commit" work.
func choiceWord(c string) string {
	switch c {
	case "y":
		return "yes"
	case "n":
		return "no"
	case "e":
		return "edit"
	case "r":
		return "revise"
	case "x":
		return "xplain"
	case "c":
		return "commit"
	case "a":
		return "abort"
	case "d":
		return "diff"
	case "p":
		return "pick"
	case "t":
		return "test"
	case "g":
		return "give"
	}
	return c
}

// save writes the script for the shell hand-off.
func (l *liner) save(script string) {
	if l.opts.SaveScript == "" {
		return
	}
	if err := os.WriteFile(l.opts.SaveScript, []byte(strings.TrimRight(script, "\n")+"\n"), 0o600); err != nil {
		fmt.Fprintf(l.errw, "nash: %v\n", err)
	}
}

// pickPaths returns the paths whose 1-based numbers appear in ans.
func pickPaths(all []string, ans string) []string {
	var out []string
	seen := map[int]bool{}
	for _, f := range strings.FieldsFunc(ans, func(r rune) bool { return r == ' ' || r == ',' }) {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 || n > len(all) || seen[n] {
			continue
		}
		seen[n] = true
		out = append(out, all[n-1])
	}
	return out
}

func historyPath(stateDir string) string { return stateDir + "/" + HistoryFile }
