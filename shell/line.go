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
)

// LineOptions shape the line mode.
type LineOptions struct {
	Yes    bool // approve and commit without asking (not the second confirmation)
	DryRun bool // plan and show the review; run nothing
	Print  bool // print the script only
	JSON   bool // print one JSON object describing the step on out
	// SaveScript, when set, receives the script that was committed (or
	// ran without changes), for the shell hand-off of nash init.
	SaveScript string
	// ScriptStdin is the scripts' standard input: the terminal when one
	// is attached. Nil means none (/dev/null), so a script cannot eat the
	// answers meant for nash.
	ScriptStdin io.Reader
}

// liner is the line mode: the flow in plain text. Answers are read from
// in, nash's words go to errw, scripts write to out and errw, and the
// dry-run review, --print and --json go to out.
type liner struct {
	e    *engine
	st   *State
	in   *bufio.Reader
	tty  *os.File // in, when it is a terminal
	out  io.Writer
	errw io.Writer
	sty  *styles
	opts LineOptions
	json *stepJSON
}

func newLiner(cfg Config, in io.Reader, out, errw io.Writer, opts LineOptions) *liner {
	cfg.Color = false
	l := &liner{
		e: newEngine(cfg), st: NewState(cfg.Dir, cfg.Env, cfg.Home),
		in: bufio.NewReader(in), out: out, errw: errw, sty: newStyles(errw, false), opts: opts,
	}
	if f, ok := in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		l.tty = f
	}
	return l
}

// Lines runs the line mode over in until end of input or exit: each line
// is routed and goes through the same review, run and commit as in the
// REPL, with the answers read from the following lines. It returns the
// last line's error, as a shell returns the last command's status.
func Lines(ctx context.Context, cfg Config, in io.Reader, out, errw io.Writer, opts LineOptions) error {
	l := newLiner(cfg, in, out, errw, opts)
	var hist *History
	if cfg.StateDir != "" {
		hist, _ = LoadHistory(historyPath(cfg.StateDir))
	}
	var last error
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		fmt.Fprintf(errw, "%s (%s) > ", l.st.Prompt(), effects.Escape(cfg.Model))
		line, err := l.in.ReadString('\n')
		if line == "" && err != nil {
			fmt.Fprintln(errw)
			return last
		}
		if hist != nil {
			_ = hist.Add(strings.TrimRight(line, "\n"))
		}
		last = l.line(ctx, line)
		switch {
		case errors.Is(last, ErrExit):
			return nil
		case errors.Is(last, context.Canceled):
			return last
		case last != nil && !isQuiet(last):
			fmt.Fprintf(errw, "nash: %v\n", last)
		}
	}
}

// isQuiet reports whether err was already told to the person.
func isQuiet(err error) bool {
	var es ExitStatus
	return errors.As(err, &es) || errors.Is(err, ErrAborted)
}

// OneShot runs one line, as nash -c does: route, plan, review, run,
// summary, commit. With JSON it prints one object describing the step.
func OneShot(ctx context.Context, cfg Config, text string, in io.Reader, out, errw io.Writer, opts LineOptions) error {
	l := newLiner(cfg, in, out, errw, opts)
	if opts.JSON {
		l.json = &stepJSON{Input: text}
	}
	err := l.line(ctx, text)
	if errors.Is(err, ErrExit) {
		err = nil
	}
	if l.json != nil {
		if err != nil && !isQuiet(err) {
			l.json.Error = err.Error()
		}
		if werr := effects.WriteJSON(out, l.json, true); werr != nil {
			return werr
		}
	}
	return err
}

// stepJSON is what nash -c --json prints.
type stepJSON struct {
	Input       string          `json:"input"`
	Route       string          `json:"route"`
	Script      string          `json:"script,omitempty"`
	Explanation string          `json:"explanation,omitempty"`
	Question    string          `json:"question,omitempty"`
	Report      *effects.Report `json:"report,omitempty"`
	Run         *runJSON        `json:"run,omitempty"`
	Aborted     bool            `json:"aborted,omitempty"`
	Error       string          `json:"error,omitempty"`
}

type runJSON struct {
	ID          string             `json:"id"`
	ExitCode    int                `json:"exit_code"`
	Changes     []effects.Change   `json:"changes"`
	Surprises   *effects.Surprises `json:"surprises,omitempty"`
	Committed   bool               `json:"committed"`
	Transaction string             `json:"transaction,omitempty"`
	Paths       []string           `json:"committed_paths,omitempty"`
	Conflicts   []sandbox.Conflict `json:"conflicts,omitempty"`
	Unprotected []string           `json:"unprotected,omitempty"`
}

// line handles one line.
func (l *liner) line(ctx context.Context, line string) error {
	r := RouteLine(line, l.st.IsCommand)
	if l.json != nil {
		l.json.Route = r.Kind.String()
	}
	switch r.Kind {
	case Empty:
		return nil
	case Session:
		out, err := l.st.Apply(r.Text)
		if out != "" {
			fmt.Fprintln(l.out, out)
		}
		return err
	case Builtin:
		return l.e.builtin(ctx, r.Text, l.st.Dir, l.st.Committed, l.out)
	case Command:
		return l.command(ctx, r.Text)
	}
	return l.request(ctx, r.Text)
}

// command runs a typed command: no planner and no review, unless it needs
// the second confirmation.
func (l *liner) command(ctx context.Context, script string) error {
	rep := l.e.analyze(script, l.st.Dir)
	a := &planner.Artifact{Script: script, Report: rep}
	if l.json != nil {
		l.json.Script, l.json.Report = script, rep
	}
	switch {
	case l.opts.Print:
		fmt.Fprintln(l.out, script)
		return nil
	case l.opts.DryRun:
		if l.json == nil {
			writeReview(l.out, l.sty, a, 0)
		}
		return nil
	}
	if reason := confirmReason(rep, l.st.Dir); reason != "" {
		writeReview(l.errw, l.sty, a, 0)
		if l.opts.Yes {
			return &ConfirmError{reason}
		}
		if err := l.confirm(reason); err != nil {
			return err
		}
	}
	return l.runAndCommit(ctx, "", script, rep, rep.Network)
}

// request plans text and takes the script through review.
func (l *liner) request(ctx context.Context, text string) error {
	req := request{prompt: text, dir: l.st.Dir, history: l.st.History}
	fmt.Fprintln(l.errw, "nash: planning…")
	a, err := l.e.plan(ctx, req)
	if err != nil {
		return err
	}
	for {
		if l.json != nil {
			l.json.Script, l.json.Explanation, l.json.Question, l.json.Report = a.Script, a.Explanation, a.Question, a.Report
		}
		if a.Question != "" {
			fmt.Fprintf(l.errw, "nash: the model asks: %s\n", effects.EscapeLine(a.Question))
			l.st.Record(planner.HistoryEntry{Prompt: text, Output: "the model asked: " + a.Question})
			return &PlanError{fmt.Errorf("the model asked a question instead of writing a script; say more and ask again")}
		}
		if a.Report == nil {
			a.Report = l.e.analyze(a.Script, l.st.Dir)
		}
		switch {
		case l.opts.Print:
			fmt.Fprintln(l.out, strings.TrimRight(a.Script, "\n"))
			return nil
		case l.opts.DryRun:
			if l.json == nil {
				writeReview(l.out, l.sty, a, 0)
			}
			return nil
		}
		writeReview(l.errw, l.sty, a, 0)
		reason := confirmReason(a.Report, l.st.Dir)
		if l.opts.Yes {
			if reason != "" {
				return &ConfirmError{reason}
			}
			return l.runAndCommit(ctx, text, a.Script, a.Report, a.NeedsNetwork || a.Report.Network)
		}
		ans, err := l.ask("run it? [y]es, [n]o, [e]dit, [r]evise, e[x]plain: ", "y", "n", "e", "r", "x")
		if err != nil {
			return err
		}
		switch ans {
		case "n":
			fmt.Fprintln(l.errw, "nash: aborted; nothing was run")
			l.abortJSON()
			return ErrAborted
		case "y":
			if reason != "" {
				if err := l.confirm(reason); err != nil {
					return err
				}
			}
			return l.runAndCommit(ctx, text, a.Script, a.Report, a.NeedsNetwork || a.Report.Network)
		case "e":
			edited, err := l.edit(a.Script)
			if err != nil {
				fmt.Fprintf(l.errw, "nash: %v\n", err)
				continue
			}
			a = editedArtifact(a, edited, l.e.analyze(edited, l.st.Dir))
		case "r":
			fb, err := l.ask("what should change? ")
			if err != nil {
				return err
			}
			if strings.TrimSpace(fb) == "" {
				continue
			}
			fmt.Fprintln(l.errw, "nash: revising…")
			na, err := l.e.revise(ctx, req, a.Script, fb)
			if err != nil {
				fmt.Fprintf(l.errw, "nash: %v\n", err)
				continue
			}
			a = na
		case "x":
			x, err := l.e.explain(ctx, req, a.Script)
			if err != nil {
				fmt.Fprintf(l.errw, "nash: %v\n", err)
				continue
			}
			writeExplanation(l.errw, l.sty, x)
		}
	}
}

// editedArtifact is a copy of a with the person's edit as its script.
func editedArtifact(a *planner.Artifact, script string, rep *effects.Report) *planner.Artifact {
	na := *a
	na.Previous, na.Script, na.Report = a.Script, script, rep
	na.Diff = planner.UnifiedDiff("a/script", "b/script (edited)", a.Script, script)
	if a.Script == script {
		na.Diff = ""
	}
	return &na
}

func (l *liner) abortJSON() {
	if l.json != nil {
		l.json.Aborted = true
	}
}

// confirm asks for the second confirmation: the word yes.
func (l *liner) confirm(reason string) error {
	fmt.Fprintf(l.errw, "nash: careful: %s\n", reason)
	ans, err := l.ask("type yes to run it anyway: ")
	if err != nil {
		return err
	}
	if strings.ToLower(strings.TrimSpace(ans)) != "yes" {
		fmt.Fprintln(l.errw, "nash: aborted; nothing was run")
		l.abortJSON()
		return ErrAborted
	}
	return nil
}

// ask prints prompt and reads an answer. With choices, it asks again until
// the answer is one of them (by first letter). End of input aborts. On a
// terminal only what is typed after the question counts: what waits
// before it (typed ahead, or injected) is dropped.
func (l *liner) ask(prompt string, choices ...string) (string, error) {
	if l.tty != nil {
		l.in.Reset(l.tty)
		sandbox.DiscardInput(l.tty)
	}
	for {
		fmt.Fprint(l.errw, prompt)
		line, err := l.in.ReadString('\n')
		ans := strings.TrimSpace(line)
		if err != nil && line == "" {
			fmt.Fprintln(l.errw)
			fmt.Fprintln(l.errw, "nash: no answer; aborted, nothing was changed")
			l.abortJSON()
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
	}
	return c
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

// runAndCommit runs script, shows the summary and commits, aborts or
// commits some paths as the person says.
func (l *liner) runAndCommit(ctx context.Context, prompt, script string, rep *effects.Report, network bool) error {
	stdin := l.opts.ScriptStdin
	if stdin == nil {
		f, err := os.Open(os.DevNull)
		if err != nil {
			return err
		}
		defer f.Close()
		stdin = f
	}
	spec := OpenSpec{Dir: l.st.Dir, Env: l.st.Environ(), Stdin: stdin, Stdout: l.out, Stderr: l.errw, Network: network}
	if l.json != nil {
		spec.Stdout = l.errw // stdout is for the JSON object
	}
	o, err := l.e.run(ctx, spec, prompt, script, rep)
	if err != nil {
		return err
	}
	l.st.Forget()
	code := o.pending.ExitCode
	var rj *runJSON
	if l.json != nil {
		rj = &runJSON{ID: o.pending.ID, ExitCode: code, Changes: o.pending.Changes.Changes, Unprotected: o.pending.Unprotected}
		if rj.Changes == nil {
			rj.Changes = []effects.Change{}
		}
		if rep != nil {
			s := effects.Compare(rep, o.pending.Changes)
			rj.Surprises = &s
		}
		l.json.Run = rj
	}
	status := func() error {
		l.st.Record(planner.HistoryEntry{Prompt: prompt, Script: script, ExitCode: code})
		if code != 0 {
			fmt.Fprintf(l.errw, "nash: the script exited with status %d\n", code)
			return ExitStatus(code)
		}
		return nil
	}
	if !o.changed() && len(o.pending.Unprotected) == 0 {
		_ = o.sb.Abort(o.pending.ID)
		fmt.Fprintln(l.errw, "nash: no changes")
		l.save(script)
		return status()
	}
	writeOutcome(l.errw, l.sty, o, 0, l.e.cfg.Home)
	var paths []string
	if !l.opts.Yes {
	loop:
		for {
			ans, err := l.ask("[c]ommit, [a]bort, [d]iff, [p]ick paths: ", "c", "a", "d", "p")
			if err != nil {
				_ = o.sb.Abort(o.pending.ID)
				return err
			}
			switch ans {
			case "a":
				_ = o.sb.Abort(o.pending.ID)
				fmt.Fprintln(l.errw, "nash: aborted; nothing was changed")
				l.abortJSON()
				l.st.Record(planner.HistoryEntry{Prompt: prompt, Script: script, ExitCode: code, Output: "(aborted)"})
				return ErrAborted
			case "d":
				writeDiff(l.errw, o)
			case "c":
				break loop
			case "p":
				all := commitPaths(o)
				for i, p := range all {
					fmt.Fprintf(l.errw, "  %d  %s\n", i+1, effects.Quote(p))
				}
				ans, err := l.ask("numbers of the paths to commit (e.g. 1 3): ")
				if err != nil {
					_ = o.sb.Abort(o.pending.ID)
					return err
				}
				paths = pickPaths(all, ans)
				if len(paths) == 0 {
					fmt.Fprintln(l.errw, "nash: no path picked")
					continue
				}
				break loop
			}
		}
	}
	tx, step, err := l.e.commit(ctx, o, paths)
	if err != nil {
		var ce *sandbox.ConflictError
		if errors.As(err, &ce) && rj != nil {
			rj.Conflicts = ce.Conflicts
		}
		return err
	}
	l.st.Committed = append(l.st.Committed, step)
	if rj != nil {
		rj.Committed, rj.Transaction, rj.Paths = true, tx.ID, paths
	}
	fmt.Fprintf(l.errw, "nash: committed as transaction %s (undo with :undo %s or nash undo %s)\n", tx.ID, tx.ID, tx.ID)
	if sum := l.e.cfg.Summarize; sum != nil {
		if text, err := sum(ctx, tx.ID, o.pending.Changes); err != nil {
			fmt.Fprintf(l.errw, "nash: no change summary: %s\n", effects.Escape(err.Error()))
		} else if text != "" {
			fmt.Fprintf(l.errw, "nash: summary: %s\n", effects.Escape(text))
		}
	}
	l.save(script)
	return status()
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
