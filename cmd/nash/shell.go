//go:build !lean

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/planner"
	"github.com/nash-shell/nash/sandbox"
	"github.com/nash-shell/nash/shell"
)

// shellOptions are the root command's flags: nash [-c TEXT] ...
type shellOptions struct {
	command    bool
	yes        bool
	dryRun     bool
	print      bool
	json       bool
	saveScript string
}

// addShellFlags adds the flags of the shell and of nash -c to root.
func addShellFlags(root *cobra.Command, o *shellOptions) {
	f := root.Flags()
	f.BoolVarP(&o.command, "command", "c", false, "run TEXT (the arguments, joined) as one line, then exit")
	f.BoolVarP(&o.yes, "yes", "y", false, "with -c: approve the script and commit its changes without asking")
	f.BoolVar(&o.dryRun, "dry-run", false, "with -c: plan and show the review, run nothing")
	f.BoolVar(&o.print, "print", false, "with -c: print the script only, run nothing")
	f.BoolVar(&o.json, "json", false, "with -c: print one JSON object describing the step")
	f.StringVar(&o.saveScript, "save-script", "", "with -c: write the script that ran to `FILE` (for nash init)")
}

const shellLong = `nash turns a request in English into a short script, shows what it will
touch, runs it in a sandbox, shows what changed, and commits only what you
accept. Every commit can be undone.

With no arguments on a terminal, nash starts the interactive shell; with
standard input from a pipe or file it reads lines in plain text (line mode).
nash -c TEXT runs one line and exits.

Exit codes: the script's own; 2 bad usage; 3 aborted by you (nothing
changed); 4 undo conflict; 5 the planner produced no script; 6 the sandbox
is unavailable; 130 interrupted.

Configuration: $XDG_CONFIG_HOME/nash/config.yaml (model, editor, index
roots, key bindings) < NASH_MODEL, NASH_EDITOR, NASH_INDEX_ROOTS < flags.`

// shellArgs checks the root command's arguments: TEXT only with -c.
func shellArgs(cmd *cobra.Command, args []string) error {
	c, _ := cmd.Flags().GetBool("command")
	switch {
	case c && len(args) == 0:
		return usageError{"-c needs TEXT: nash -c 'what you want'"}
	case !c && len(args) > 0:
		return usageError{fmt.Sprintf("unknown command %q; to run a line use nash -c TEXT", args[0])}
	}
	return nil
}

// runShell is the root command: the REPL, the line mode or a one-shot.
func runShell(ctx context.Context, cmd *cobra.Command, o shellOptions, args []string, io stdio) error {
	if !o.command && (o.yes || o.dryRun || o.print || o.json || o.saveScript != "") {
		return usageError{"--yes, --dry-run, --print, --json and --save-script go with -c TEXT"}
	}
	if o.print && (o.dryRun || o.json) {
		return usageError{"--print excludes --dry-run and --json"}
	}
	cfg, err := shellConfig(cmd, io)
	if err != nil {
		return err
	}
	interactive := isTerminal(io.in) && isTerminal(io.out)
	if o.command {
		opts := shell.LineOptions{Yes: o.yes, DryRun: o.dryRun, Print: o.print, JSON: o.json, SaveScript: o.saveScript}
		if isTerminal(io.in) || o.yes {
			opts.ScriptStdin = io.in
		}
		return shellError(shell.OneShot(ctx, cfg, strings.Join(args, " "), io.in, io.out, io.err, opts))
	}
	if interactive {
		return shellError(shell.Run(ctx, cfg, io.in.(*os.File), io.out.(*os.File)))
	}
	var lo shell.LineOptions
	if isTerminal(io.in) {
		lo.ScriptStdin = io.in // scripts may read the terminal, as nash does
	}
	return shellError(shell.Lines(ctx, cfg, io.in, io.out, io.err, lo))
}

// shellConfig builds the shell's configuration. It opens nothing: the
// planner is built on the first request, the sandbox per run.
func shellConfig(cmd *cobra.Command, io stdio) (shell.Config, error) {
	c, err := loadConfig(os.Getenv)
	if err != nil {
		return shell.Config{}, err
	}
	if m, _ := cmd.Flags().GetString("model"); m != "" {
		c.Model = m
	}
	keys, err := c.keyMap()
	if err != nil {
		return shell.Config{}, err
	}
	limits, err := c.sandboxLimits(os.Getenv)
	if err != nil {
		return shell.Config{}, err
	}
	stateDir, err := stateDirFor(cmd)
	if err != nil {
		return shell.Config{}, err
	}
	dir, err := os.Getwd()
	if err != nil {
		return shell.Config{}, fmt.Errorf("find working directory: %w", err)
	}
	home, _ := os.UserHomeDir()
	model := c.Model
	if model == "" {
		model = planner.DefaultSpec
	}
	_, noColor := os.LookupEnv("NO_COLOR")
	return shell.Config{
		Planner: func() (shell.Planner, error) {
			mem, err := planner.OpenMemory(stateDir)
			if err != nil {
				return nil, err
			}
			return planner.New(planner.ModelSpec(model), planner.Getenv(os.Getenv), planner.UseMemory(mem),
				planner.UseRetriever(indexRetriever{cmd}, 5))
		},
		Open: func(ctx context.Context, s shell.OpenSpec) (shell.Sandbox, error) {
			opts := append([]sandbox.Option{sandbox.StateDir(stateDir), sandbox.Network(s.Network)}, limits...)
			if s.Dir != "" {
				opts = append(opts, sandbox.Dir(s.Dir))
			}
			if s.Env != nil {
				opts = append(opts, sandbox.Env(s.Env))
			}
			in, out, errw := s.Stdin, s.Stdout, s.Stderr
			if in == nil {
				in = io.in
			}
			if out == nil {
				out = io.out
			}
			if errw == nil {
				errw = io.err
			}
			opts = append(opts, sandbox.Stdio(in, out, errw))
			return sandbox.New(ctx, opts...)
		},
		Find:      shellFind(cmd, c.IndexRoots),
		Summarize: shellSummarizer(c.Model, stateDir),
		Background: func(ctx context.Context) (func(), error) {
			return startIndexWatch(ctx, cmd, stateDir)
		},
		Model:    model,
		StateDir: stateDir,
		Dir:      dir,
		Env:      os.Environ(),
		Home:     home,
		Editor:   c.Editor,
		Color:    !noColor && os.Getenv("TERM") != "dumb",
		Keys:     keys,
	}, nil
}

// stateDirFor is --state-dir, NASH_STATE_DIR or the XDG default.
func stateDirFor(cmd *cobra.Command) (string, error) {
	dir, _ := cmd.Flags().GetString("state-dir")
	if dir == "" {
		dir = os.Getenv("NASH_STATE_DIR")
	}
	if dir == "" {
		return sandbox.DefaultStateDir()
	}
	return dir, nil
}

// shellFind is :find: nash find over the index, or ErrNoIndex when there
// is none.
func shellFind(cmd *cobra.Command, roots []string) shell.FindFunc {
	return func(ctx context.Context, query string, w io.Writer) error {
		if !indexExists() {
			if len(roots) > 0 {
				return fmt.Errorf("%w (your config names roots: nash index add %s)", shell.ErrNoIndex, quoteAll(roots))
			}
			return shell.ErrNoIndex
		}
		err := forwardIndex(ctx, cmd, []string{"find", "-n", "10", "--snippets", "--", query}, stdio{in: strings.NewReader(""), out: w, err: w})
		var ee exitError
		if errors.As(err, &ee) && ee.code == exitFailure {
			fmt.Fprintln(w, "no matches")
			return nil
		}
		if errors.As(err, &ee) {
			return nil // nash find has said what went wrong
		}
		return err
	}
}

// shellError gives the shell's errors their exit codes.
func shellError(err error) error {
	var es shell.ExitStatus
	var pe *shell.PlanError
	var ce *shell.ConfirmError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, shell.ErrAborted):
		return exitError{exitAborted}
	case errors.As(err, &es):
		return exitError{int(es)}
	case errors.As(err, &pe):
		return plannerError{err}
	case errors.As(err, &ce):
		return codedErr{err, exitAborted}
	}
	return wrapSandboxErr(err)
}

// plannerError is a planner failure: exit code 5.
type plannerError struct{ err error }

func (e plannerError) Error() string { return e.err.Error() }
func (e plannerError) Unwrap() error { return e.err }

// ExitCode is exitPlanner.
func (e plannerError) ExitCode() int { return exitPlanner }

// codedErr is an error with a given exit code.
type codedErr struct {
	err  error
	code int
}

func (e codedErr) Error() string { return e.err.Error() }
func (e codedErr) Unwrap() error { return e.err }

// ExitCode is the code given.
func (e codedErr) ExitCode() int { return e.code }

// shellSummarizer summarizes the shell's commits with the configured model;
// with none configured (the default model is not used for this) it is
// nil, so the shell makes no call at all.
func shellSummarizer(model, stateDir string) shell.SummarizeFunc {
	if model == "" {
		return nil
	}
	return func(ctx context.Context, id string, cs *effects.ChangeSet) (string, error) {
		sb, err := sandbox.New(ctx, sandbox.StateDir(stateDir), sandbox.Stdio(nil, nil, nil))
		if err != nil {
			return "", err
		}
		defer sb.Close()
		return summarizeTx(ctx, model, sb, id, cs)
	}
}

// keyMap is the key bindings: the defaults with the config's over them.
func (c config) keyMap() (shell.KeyMap, error) {
	var k shell.KeyMap
	for name, keys := range c.Keys {
		dst := map[string]*[]string{
			"run": &k.Run, "edit": &k.Edit, "revise": &k.Revise, "explain": &k.Explain,
			"abort": &k.Abort, "commit": &k.Commit, "diff": &k.Diff, "pick": &k.Pick,
		}[name]
		if dst == nil {
			return k, checkKeys(map[string]keyList{name: keys})
		}
		*dst = keys
	}
	return shell.DefaultKeys().Merge(k), nil
}
