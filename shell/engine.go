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
	cfg Config
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
	return &engine{cfg: cfg, model: cfg.Model}
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
		t, cs, err := sb.Show(args[0])
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "transaction %s  %s  %s\n", t.ID, t.Time.Local().Format(time.DateTime), t.State)
		if t.Prompt != "" {
			fmt.Fprintf(w, "request: %s\n", effects.EscapeLine(t.Prompt))
		}
		if t.Script != "" {
			fmt.Fprintf(w, "script:\n%s\n", indentText(effects.EscapeText(strings.TrimRight(t.Script, "\n"))))
		}
		return effects.WriteSummary(w, cs, effects.SummaryOptions{Home: e.cfg.Home})
	case "undo":
		id := ""
		if len(args) > 0 && isDigits(args[0]) {
			id, args = args[0], args[1:]
		}
		force := false
		var paths []string
		for _, a := range args {
			if a == "--force" {
				force = true
				continue
			}
			if !filepath.IsAbs(a) {
				a = filepath.Join(dir, a)
			}
			paths = append(paths, filepath.Clean(a))
		}
		sb, err := open()
		if err != nil {
			return err
		}
		u, err := sb.Undo(ctx, id, sandbox.UndoOptions{Paths: paths, Force: force})
		var ce *sandbox.ConflictError
		if errors.As(err, &ce) {
			fmt.Fprintln(w, "nothing was changed; these paths changed after that commit:")
			for _, c := range ce.Conflicts {
				fmt.Fprintf(w, "  %s: %s\n", effects.Quote(c.Path), effects.EscapeLine(c.Reason))
			}
			fmt.Fprintf(w, "undo them anyway with %s --force (their current versions are kept)\n", e.undoCommand("ID"))
			return nil
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "undid transaction %s as transaction %s (%d path(s)); %s to redo\n", u.Undoes, u.ID, u.Ops, e.undoCommand(u.ID))
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

// undoCommand is how to undo transaction id where nash's words are read:
// ":undo ID" in a session, "nash undo ID" after a one-shot.
func (e *engine) undoCommand(id string) string {
	if e.oneShot {
		return "nash undo " + id
	}
	return ":undo " + id
}

func isDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
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
or "ask" (anything else). Start with ! to force a command, ? to force English.

  cd DIR, cd -, export K=V, unset K, exit    change this session
  :undo [ID] [PATH...] [--force]            undo a commit (default: the last)
  :log                                      list transactions
  :show ID                                  what a transaction changed
  :find QUERY                               search the file index
  :export FILE                              this session's committed scripts as one script
  :model [NAME] [--save]                    the model in use and its provider's others;
                                            switch to NAME (--save: in the config too)
  :help                                     this text

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
