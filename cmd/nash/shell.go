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
	"github.com/nash-shell/nash/sandbox/egress"
	"github.com/nash-shell/nash/shell"
)

// shellOptions are the root command's flags: nash [-c TEXT] ...
type shellOptions struct {
	version    bool
	command    bool
	yes        bool
	dryRun     bool
	print      bool
	json       bool
	saveScript string
	cont       bool // -c --continue: go on with the last nash -c's conversation
	resume     bool // --resume: the shell where its last session left off
}

// addShellFlags adds the flags of the shell and of nash -c to root.
func addShellFlags(root *cobra.Command, o *shellOptions) {
	f := root.Flags()
	f.BoolVar(&o.version, "version", false, "print nash's version")
	f.BoolVarP(&o.command, "command", "c", false, "run TEXT (the arguments, joined) as one line, then exit")
	f.BoolVarP(&o.yes, "yes", "y", false, "with -c: approve the script and commit its changes without asking")
	f.BoolVar(&o.dryRun, "dry-run", false, "with -c: plan and show the review, run nothing")
	f.BoolVar(&o.print, "print", false, "with -c: print the script only, run nothing")
	f.BoolVar(&o.json, "json", false, "with -c: print one JSON object describing the step")
	f.StringVar(&o.saveScript, "save-script", "", "with -c: write the script that ran to `FILE` (for nash init)")
	f.BoolVar(&o.cont, "continue", false, "with -c: go on with the last nash -c's exchange (the model sees it)")
	f.BoolVar(&o.resume, "resume", false, "start the shell where its last session left off: its directory, and what the model saw")
}

const shellLong = `nash turns a request in English into a short script, shows what it will
touch, runs it in a sandbox, shows what changed, and commits only what you
accept. Every commit can be undone.

With no arguments on a terminal, nash starts the interactive shell; with
standard input from a pipe or file it reads lines in plain text (line mode).
nash -c TEXT runs one line and exits.

` + exitCodesHelp + `

Configuration: $XDG_CONFIG_HOME/nash/config.yaml (model, editor, index
roots, key bindings) < NASH_MODEL, NASH_EDITOR, NASH_INDEX_ROOTS < flags.`

// shellArgs checks the root command's arguments: TEXT only with -c.
func shellArgs(o *shellOptions) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		switch {
		case o.command && len(args) == 0:
			return usageError{"-c needs TEXT: nash -c 'what you want'"}
		case !o.command && len(args) > 0:
			return usageError{fmt.Sprintf("unknown command %q; to run a line use nash -c TEXT", args[0])}
		}
		return nil
	}
}

// runShell is the root command: the REPL, the line mode or a one-shot.
func runShell(ctx context.Context, g *options, o shellOptions, args []string, io stdio) error {
	if !o.command && (o.yes || o.dryRun || o.print || o.json || o.saveScript != "" || o.cont) {
		return usageError{"--yes, --dry-run, --print, --json, --save-script and --continue go with -c TEXT"}
	}
	if o.command && o.resume {
		return usageError{"--resume starts the shell; with -c TEXT use --continue"}
	}
	if o.print && (o.dryRun || o.json) {
		return usageError{"--print excludes --dry-run and --json"}
	}
	cfg, err := shellConfig(g, io)
	if err != nil {
		return err
	}
	if o.command {
		return oneShot(ctx, g, o, cfg, strings.Join(args, " "), io)
	}
	if err := resumeSession(g, &cfg, o.resume, io.err); err != nil {
		return err
	}
	interactive := isTerminal(io.in) && isTerminal(io.out)
	if interactive {
		cfg.FirstStart = firstStart(g)
		return shell.Run(ctx, cfg, io.in.(*os.File), io.out.(*os.File))
	}
	var lo shell.LineOptions
	if isTerminal(io.in) {
		lo.ScriptStdin = io.in // scripts may read the terminal, as nash does
	}
	return shell.Lines(ctx, cfg, io.in, io.out, io.err, lo)
}

// shellConfig builds the shell's configuration. It opens nothing: the
// planner is built on the first request, the sandbox per run.
func shellConfig(g *options, io stdio) (shell.Config, error) {
	dir, err := os.Getwd()
	if err != nil {
		return shell.Config{}, fmt.Errorf("find working directory: %w", err)
	}
	model, stateDir := g.planModel(), g.stateDir
	return shell.Config{
		Planner: func(model string) (shell.Planner, error) { return requestPlanner(g, model) },
		Models: func(ctx context.Context, model string) ([]planner.ModelInfo, error) {
			return listModels(ctx, g, model)
		},
		SaveModel: func(model string) error { return saveModel(g, model) },
		Open: func(ctx context.Context, s shell.OpenSpec) (shell.Sandbox, error) {
			opts := append([]sandbox.Option{sandbox.StateDir(stateDir), sandbox.Unprotected(s.Unprotected)}, g.limits...)
			if s.Network {
				opts = append(opts, sandbox.Network(true))
			} else {
				// The config's allow and deny lists, with what --net
				// and the person allowed for this run.
				plan, err := resolveNet(g.net, s.Dir)
				if err != nil {
					return nil, err
				}
				opts = append(opts, plan.allow(s.Allow).options()...)
			}
			if s.Dir != "" {
				opts = append(opts, sandbox.Dir(s.Dir))
			}
			if s.Env != nil {
				opts = append(opts, sandbox.Env(s.Env))
			}
			if s.Keep != "" {
				opts = append(opts, sandbox.Keep(s.Keep))
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
			opts = append(opts, sandbox.Stdio(in, out, errw), sandbox.Warn(warnUnwritable(errw)))
			return sandbox.New(ctx, opts...)
		},
		Net: func(dir string) (egress.Policy, error) {
			plan, err := resolveNet(g.net, dir)
			return plan.policy, err
		},
		Find:      shellFind(g),
		Tester:    scriptTester(stateDir),
		Summarize: shellSummarizer(g),
		Background: func(ctx context.Context) (func(), error) {
			return startIndexWatch(ctx, g)
		},
		BashSession: true,
		ReadBashrc:  true,
		Model:       model,
		StateDir:    stateDir,
		Dir:         dir,
		Env:         os.Environ(),
		Home:        g.home,
		Editor:      g.editor,
		Color:       g.color,
		Keys:        g.keys,
		Typed:       g.typed,
		ToolFiles:   g.toolFiles,
	}, nil
}

// shellFind is :find: nash find over the index, or ErrNoIndex when there
// is none.
func shellFind(g *options) shell.FindFunc {
	return func(ctx context.Context, query string, w io.Writer) error {
		if !indexExists(g) {
			if len(g.indexRoots) > 0 {
				return fmt.Errorf("%w (your config names roots: nash index add %s)", shell.ErrNoIndex, quoteAll(g.indexRoots))
			}
			return shell.ErrNoIndex
		}
		opts := findOptions{n: 10, snippets: true, index: indexOpts(g, "")}
		err := runFind(ctx, opts, query, stdio{in: strings.NewReader(""), out: w, err: w})
		var ee exitError
		if errors.As(err, &ee) && ee.code == exitFailure {
			fmt.Fprintln(w, "no matches")
			return nil
		}
		return err
	}
}

// shellSummarizer summarizes the shell's commits with the configured model;
// with none configured (the default model is not used for this) it is
// nil, so the shell makes no call at all.
func shellSummarizer(g *options) shell.SummarizeFunc {
	if g.model == "" {
		return nil
	}
	return func(ctx context.Context, id string, cs *effects.ChangeSet) (string, error) {
		sb, err := sandbox.New(ctx, sandbox.StateDir(g.stateDir), sandbox.Stdio(nil, nil, nil))
		if err != nil {
			return "", err
		}
		defer sb.Close()
		return summarizeTx(ctx, g, sb, id, cs)
	}
}
