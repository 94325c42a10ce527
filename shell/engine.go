package shell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/planner"
	"github.com/nash-shell/nash/sandbox"
)

// engine does the I/O of the flow for both faces. Its methods never touch
// the State: callers pass what they need and apply the results, so the
// REPL can call them from tea.Cmds while Update owns the State.
type engine struct {
	cfg   Config
	tools *effects.ToolMatcher // Config.ToolFiles, for the session's home
	// oneShot says nash runs one line and exits (nash -c, nash run):
	// there is no :undo to name, only nash undo.
	oneShot bool

	// mu guards the model in use, which :model switches from a built-in
	// while the prompt shows it, and the planners built so far.
	mu       sync.Mutex
	model    string
	planners map[string]plannerOnce
}

// plannerOnce is a planner built, or the error building it gave.
type plannerOnce struct {
	p   Planner
	err error
}

func newEngine(cfg Config) *engine {
	if cfg.Keys.Run == nil {
		cfg.Keys = DefaultKeys().Merge(cfg.Keys)
	}
	list := cfg.ToolFiles
	if list == nil {
		list = effects.DefaultToolFiles()
	}
	env := func(k string) string {
		for i := len(cfg.Env) - 1; i >= 0; i-- {
			if v, ok := strings.CutPrefix(cfg.Env[i], k+"="); ok {
				return v
			}
		}
		return ""
	}
	return &engine{cfg: cfg, model: cfg.Model, tools: effects.NewToolMatcher(list, cfg.Home, env)}
}

// currentModel is the model requests go to.
func (e *engine) currentModel() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.model
}

// useModel makes model the one requests go to from now on.
func (e *engine) useModel(model string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.model = model
}

// getPlanner builds the current model's planner on first use, so starting
// contacts nothing.
func (e *engine) getPlanner() (Planner, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if b, ok := e.planners[e.model]; ok {
		return b.p, b.err
	}
	var b plannerOnce
	if e.cfg.Planner == nil {
		b.err = fmt.Errorf("%w: none configured", planner.ErrNoProvider)
	} else {
		b.p, b.err = e.cfg.Planner(e.model)
	}
	if e.planners == nil {
		e.planners = map[string]plannerOnce{}
	}
	e.planners[e.model] = b
	return b.p, b.err
}

// request is a planner request from the session's view.
type request struct {
	prompt  string
	dir     string
	history []planner.HistoryEntry
	input   *planner.Input         // piped to nash -c
	stream  func(planner.Progress) // the face's display of the model's text
}

func (r request) planner() planner.Request {
	return planner.Request{Prompt: r.prompt, Cwd: r.dir, History: r.history, Input: r.input, Stream: r.stream}
}

func (e *engine) plan(ctx context.Context, r request) (*planner.Artifact, error) {
	p, err := e.getPlanner()
	if err != nil {
		return nil, &PlanError{err}
	}
	a, err := p.Plan(ctx, r.planner())
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &PlanError{err}
	}
	return a, nil
}

func (e *engine) revise(ctx context.Context, r request, previous, feedback string) (*planner.Artifact, error) {
	p, err := e.getPlanner()
	if err != nil {
		return nil, &PlanError{err}
	}
	a, err := p.Revise(ctx, r.planner(), previous, feedback)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &PlanError{err}
	}
	return a, nil
}

func (e *engine) explain(ctx context.Context, r request, script string) (*planner.Explanation, error) {
	p, err := e.getPlanner()
	if err != nil {
		return nil, &PlanError{err}
	}
	x, err := p.Explain(ctx, r.planner(), script)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &PlanError{err}
	}
	return x, nil
}

// analyze is the static report of a script run in dir. A script that does
// not parse gets a report that says so rather than none.
func (e *engine) analyze(script, dir string) *effects.Report {
	rep, err := effects.Analyze(script, effects.Dir(dir), effects.Home(e.cfg.Home), effects.Files(os.DirFS("/")))
	if err != nil {
		return &effects.Report{Risk: effects.CannotUndo, Irreversible: true, Findings: []effects.Finding{{
			Risk: effects.CannotUndo, Kind: "unparsed", Reason: "the script does not parse: " + effects.EscapeLine(err.Error()),
		}}}
	}
	return rep
}

// writeDiff writes unified diffs of the created and modified regular files.
func writeDiff(w io.Writer, o *outcome) {
	if sandbox.WriteDiff(w, o.sb, o.pending) == 0 {
		fmt.Fprintln(w, "no file contents to compare (only deletions, directories or metadata)")
	}
}

// commitPaths lists the top-level changed paths a person can pick from.
func commitPaths(o *outcome) []string {
	var out []string
	for _, c := range o.pending.Changes.Changes {
		covered := false
		for _, p := range out {
			if strings.HasPrefix(c.Path, p+"/") {
				covered = true
				break
			}
		}
		if !covered {
			out = append(out, c.Path)
		}
	}
	return out
}

// editCommand writes script to a temporary file and returns the editor
// command for it and the file's path; readEdited reads the result.
func editCommand(editor, script string) (*exec.Cmd, string, error) {
	f, err := os.CreateTemp("", "nash-*.sh")
	if err != nil {
		return nil, "", fmt.Errorf("edit: %w", err)
	}
	if _, err := f.WriteString(script); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, "", fmt.Errorf("edit: %w", err)
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return nil, "", fmt.Errorf("edit: %w", err)
	}
	if editor == "" {
		editor = "vi"
	}
	// The editor setting may hold arguments ("code -w"), as shells allow.
	cmd := exec.Command("/bin/sh", "-c", editor+` "$1"`, "nash-edit", f.Name())
	return cmd, f.Name(), nil
}

// readEdited reads and removes the edited file.
func readEdited(path string) (string, error) {
	b, err := os.ReadFile(path)
	os.Remove(path)
	if err != nil {
		return "", fmt.Errorf("edit: %w", err)
	}
	return string(b), nil
}

// builtin runs a nash built-in (":" already removed) and writes its output
// to w. dir is the session's directory, for relative paths.
func (e *engine) builtin(ctx context.Context, text, dir string, committed []Step, w io.Writer) error {
	name, rest, _ := strings.Cut(strings.TrimSpace(text), " ")
	args := strings.Fields(rest)
	open := func() (Sandbox, error) {
		if e.cfg.Open == nil {
			return nil, errors.New("no sandbox configured")
		}
		return e.cfg.Open(ctx, OpenSpec{Dir: dir})
	}
	switch name {
	case "help", "h":
		writeHelp(w, e.cfg.Keys)
		return nil
	case "model":
		return e.modelBuiltin(ctx, args, w)
	case "log":
		sb, err := open()
		if err != nil {
			return err
		}
		txs, err := sb.Log()
		if err != nil {
			return err
		}
		if len(txs) == 0 {
			fmt.Fprintln(w, "no transactions yet")
			return nil
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tTIME\tSTATE\tCHANGES\tWHAT")
		for _, t := range txs {
			what := t.Prompt
			if what == "" {
				what = t.Script
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", t.ID, t.Time.Local().Format("2006-01-02 15:04"), t.State, t.Changes, firstLine(what, 60))
		}
		return tw.Flush()
	case "show":
		if len(args) != 1 {
			return errors.New("usage: :show ID")
		}
		sb, err := open()
		if err != nil {
			return err
		}
		return e.show(w, sb, args[0])
	case "undo":
		return e.undo(ctx, w, open, args, dir)
	case "redo":
		if len(args) != 0 {
			return errors.New("usage: :redo (it brings back what the last undo took away)")
		}
		sb, err := open()
		if err != nil {
			return err
		}
		u, err := sb.Redo(ctx)
		if err != nil {
			return e.undoError(w, err)
		}
		fmt.Fprintf(w, "redid %s as transaction %s (%d path(s)); %s undoes it again\n", redone(u), u.ID, u.Ops, e.undoCommand(""))
		return nil
	case "commit":
		if len(args) != 1 || !sandbox.IsRunID(args[0]) {
			return errors.New("usage: :commit ID, the id of an aborted run that was kept (r and a number)")
		}
		sb, err := open()
		if err != nil {
			return err
		}
		tx, err := sb.Commit(ctx, args[0], sandbox.CommitOptions{})
		var ce *sandbox.ConflictError
		if errors.As(err, &ce) {
			fmt.Fprintln(w, "nothing was changed; these paths changed after that run:")
			for _, c := range ce.Conflicts {
				fmt.Fprintf(w, "  %s: %s\n", effects.Quote(c.Path), effects.EscapeLine(c.Reason))
			}
			return nil
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "committed run %s as transaction %s (%d change(s)); %s undoes it\n", args[0], tx.ID, tx.Changes, e.undoCommand(""))
		return nil
	case "find":
		if strings.TrimSpace(rest) == "" {
			return errors.New("usage: :find QUERY")
		}
		if e.cfg.Find == nil {
			return ErrNoIndex
		}
		return e.cfg.Find(ctx, strings.TrimSpace(rest), w)
	case "export":
		if len(args) != 1 {
			return errors.New("usage: :export FILE")
		}
		if len(committed) == 0 {
			return errors.New("export: nothing committed in this session yet")
		}
		p := args[0]
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if err := os.WriteFile(p, []byte(exportScript(committed)), 0o755); err != nil {
			return fmt.Errorf("export: %w", err)
		}
		fmt.Fprintf(w, "wrote %d script(s) to %s\n", len(committed), effects.Quote(p))
		return exportTests(p, committed, w)
	}
	return fmt.Errorf("unknown built-in :%s (try :help)", effects.Escape(name))
}

// show writes a transaction, or an aborted run that was kept.
func (e *engine) show(w io.Writer, sb Sandbox, id string) error {
	if sandbox.IsRunID(id) {
		k, cs, err := sb.ShowKept(id)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "run %s  aborted %s, kept: %s applies it\n", k.ID, k.Aborted.Local().Format(time.DateTime), e.command("commit", k.ID))
		if k.Prompt != "" {
			fmt.Fprintf(w, "request: %s\n", effects.EscapeLine(k.Prompt))
		}
		if k.Script != "" {
			fmt.Fprintf(w, "script:\n%s\n", indentText(effects.EscapeText(strings.TrimRight(k.Script, "\n"))))
		}
		return effects.WriteSummary(w, cs, effects.SummaryOptions{Home: e.cfg.Home})
	}
	if !sandbox.IsTxID(id) {
		return fmt.Errorf("%s is not a transaction id (a number; %s lists them) nor a kept run's (r and a number)", effects.Quote(id), e.command("log", ""))
	}
	t, cs, err := sb.Show(id)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "transaction %s  %s  %s\n", t.ID, t.Time.Local().Format(time.DateTime), t.State)
	if t.Undoes != "" {
		fmt.Fprintf(w, "undoes transaction %s\n", t.Undoes)
	}
	if t.Prompt != "" {
		fmt.Fprintf(w, "request: %s\n", effects.EscapeLine(t.Prompt))
	}
	if t.Script != "" {
		fmt.Fprintf(w, "script:\n%s\n", indentText(effects.EscapeText(strings.TrimRight(t.Script, "\n"))))
	}
	own, tools := SplitTools(cs, t.Tools)
	if err := effects.WriteSummary(w, own, effects.SummaryOptions{Home: e.cfg.Home}); err != nil {
		return err
	}
	if tools.Len() > 0 {
		fmt.Fprintln(w, "tools' own files:")
		for _, c := range tools.Changes {
			fmt.Fprintf(w, "  %s %s\n", kindVerb(c.Kind), tildePath(c.Path, e.cfg.Home))
		}
	}
	return nil
}

// SplitTools parts a transaction's changes into the person's and those
// recorded as tools' own files (sandbox.Tx.Tools).
func SplitTools(cs *effects.ChangeSet, tools []string) (own, tool *effects.ChangeSet) {
	own, tool = &effects.ChangeSet{}, &effects.ChangeSet{}
	set := make(map[string]bool, len(tools))
	for _, p := range tools {
		set[p] = true
	}
	if cs == nil {
		return own, tool
	}
	for _, c := range cs.Changes {
		if set[c.Path] {
			tool.Changes = append(tool.Changes, c)
		} else {
			own.Changes = append(own.Changes, c)
		}
	}
	return own, tool
}

// undo runs :undo [ID] [PATH...] [--force].
func (e *engine) undo(ctx context.Context, w io.Writer, open func() (Sandbox, error), args []string, dir string) error {
	id := ""
	if len(args) > 0 && sandbox.IsTxID(args[0]) {
		if _, err := os.Lstat(filepath.Join(dir, args[0])); err != nil {
			id, args = args[0], args[1:] // a file named like a number is a path
		}
	}
	force := false
	var paths, notThere []string
	for _, a := range args {
		if a == "--force" {
			force = true
			continue
		}
		if !filepath.IsAbs(a) {
			a = filepath.Join(dir, a)
		}
		a = filepath.Clean(a)
		if _, err := os.Lstat(a); err != nil {
			notThere = append(notThere, a)
		}
		paths = append(paths, a)
	}
	sb, err := open()
	if err != nil {
		return err
	}
	u, err := sb.Undo(ctx, id, sandbox.UndoOptions{Paths: paths, Force: force})
	var ce *sandbox.ConflictError
	var nt *sandbox.NothingThereError
	switch {
	case errors.As(err, &ce):
		fmt.Fprintln(w, "nothing was changed; these paths changed after that commit:")
		for _, c := range ce.Conflicts {
			fmt.Fprintf(w, "  %s: %s\n", effects.Quote(c.Path), effects.EscapeLine(c.Reason))
		}
		again := id
		if again == "" {
			again = "ID"
		}
		fmt.Fprintf(w, "undo them anyway with %s --force (their current versions are kept)\n", e.undoCommand(again))
		return nil
	case errors.As(err, &nt) && len(notThere) > 0:
		q := make([]string, len(notThere))
		for i, p := range notThere {
			q[i] = effects.Quote(relOrAbs(p, dir))
		}
		return fmt.Errorf("%s: not a transaction id (a number; %s lists them), and transaction %s changed no such path", strings.Join(q, ", "), e.command("log", ""), nt.ID)
	case err != nil:
		return e.undoError(w, err)
	}
	if u.Undoes != "" && strings.HasPrefix(u.Script, "nash redo") {
		fmt.Fprintf(w, "redid %s as transaction %s (%d path(s)); %s undoes it again\n", redone(u), u.ID, u.Ops, e.undoCommand(""))
		return nil
	}
	fmt.Fprintf(w, "undid transaction %s as transaction %s (%d path(s)); %s brings it back\n", u.Undoes, u.ID, u.Ops, e.command("redo", ""))
	return nil
}

// undoError words what undo and redo refuse.
func (e *engine) undoError(w io.Writer, err error) error {
	switch {
	case errors.Is(err, sandbox.ErrNothingToUndo):
		fmt.Fprintln(w, "nothing to undo: every change is undone already")
		return nil
	case errors.Is(err, sandbox.ErrNothingToRedo):
		fmt.Fprintf(w, "nothing to redo: %s brings back only undone changes that nothing came after\n", e.command("redo", ""))
		return nil
	}
	return err
}

// redone names what a redo brought back: "transaction 34".
func redone(u *sandbox.Tx) string {
	// The script of a redo says "nash redo T (undo U)".
	if rest, ok := strings.CutPrefix(u.Script, "nash redo "); ok {
		if t, _, ok := strings.Cut(rest, " "); ok {
			return "transaction " + t
		}
	}
	return "the undo " + u.Undoes
}

func relOrAbs(p, dir string) string {
	if rel, err := filepath.Rel(dir, p); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return p
}

// undoCommand is how to undo transaction id (the last one when "") where
// nash's words are read: ":undo ID" in a session, "nash undo ID" after a
// one-shot.
func (e *engine) undoCommand(id string) string {
	return e.command("undo", id)
}

// command is how to run nash command name with arg where nash's words are
// read: ":name ARG" in a session, "nash name ARG" after a one-shot.
func (e *engine) command(name, arg string) string {
	c := ":" + name
	if e.oneShot {
		c = "nash " + name
	}
	if arg != "" {
		c += " " + arg
	}
	return c
}

// keptHint says how to reach an aborted run that was kept.
func (e *engine) keptHint(id string) string {
	return fmt.Sprintf("The run is kept as %s for a while: %s shows it, %s applies it.", id, e.command("show", id), e.command("commit", id))
}

func firstLine(s string, n int) string {
	first, _, more := strings.Cut(strings.TrimSpace(s), "\n")
	r := []rune(effects.Escape(first))
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	if more {
		return string(r) + " …"
	}
	return string(r)
}

// writeHelp describes what can be typed.
func writeHelp(w io.Writer, k KeyMap) {
	var b bytes.Buffer
	fmt.Fprintf(&b, `Type a request in English, or a shell command. The marker before the
cursor says which it will be: "cmd" (first word is a builtin or on PATH)
or "ask" (anything else, and a command's name followed by plain English, as
in "find the biggest files here"). A typo of a command ("cmd?") says "did
you mean" and runs nothing. Start with ! to force a command, ? to force
English. Tab completes commands, paths and $VARIABLES.

What a typed command changes is committed when it ends and can be undone;
a request's script is shown first and its changes wait for your commit.

  cd DIR, cd -, export K=V, unset K, exit    change this session
  :undo [ID] [PATH...] [--force]            undo a commit (default: the last, further back each time)
  :redo                                     bring back what the last :undo took away
  :log                                      list transactions
  :show ID                                  what a transaction (or a kept run, rN) changed
  :commit ID                                apply an aborted run that was kept (rN)
  :find QUERY                               search the file index
  :export FILE                              this session's committed scripts as one script
  :model [NAME] [--save]                    the model in use and its provider's others;
                                            switch to NAME (--save: in the config too)
  :help                                     this text
  :exit, :quit                              leave nash (as exit and ctrl+d do)

review:  %s run, %s edit, %s revise, %s explain, %s test, %s example, %s abort
  %s tries the script on other starting states (no match, names with spaces,
  a missing input, an unset variable, ...); %s runs it on an example you give:
  files before => files after, or => stdout: what it prints
    a.jpeg 'my photo.jpeg' => a.jpg 'my photo.jpg'
    notes.txt='b\na' sub/ => stdout: 2
  (NAME=TEXT is a file holding TEXT, \n a line break; NAME/ a directory;
  NAME->TARGET a symlink). Examples run again on every revision, %s sends
  what failed to the model, and :export FILE writes them to FILE.test.
after a run:  %s commit, %s pick paths to commit, %s diff, %s abort
keys:  up/down history, ctrl+r search history, ctrl+c cancel, ctrl+d quit
`, first(k.Run), first(k.Edit), first(k.Revise), first(k.Explain), first(k.Test), first(k.Example), first(k.Abort),
		first(k.Test), first(k.Example), first(k.Revise),
		first(k.Commit), first(k.Pick), first(k.Diff), first(k.Abort))
	_, _ = w.Write(b.Bytes())
}
