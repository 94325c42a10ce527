// Command nash is a natural-language shell: it turns requests into short
// scripts, runs them in a sandbox, shows what changed and keeps every
// committed change undoable.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/nash-shell/nash/planner"
	"github.com/nash-shell/nash/sandbox"
)

// Exit codes that are not the script's own. A script's own exit code passes
// through unchanged; these are chosen above the range shells use for signals
// and command-not-found, and documented in the README.
const (
	exitOK          = 0
	exitFailure     = 1   // nash itself failed (bad flags, I/O error, ...)
	exitUsage       = 2   // bad command line
	exitAborted     = 3   // the person aborted at review or at the commit prompt
	exitConflict    = 4   // undo refused: paths changed since the commit
	exitPlanner     = 5   // the planner could not produce a script
	exitNoSandbox   = 6   // the sandbox is unavailable or incomplete
	exitInterrupted = 130 // ctrl+c
)

// memoryLimit is nash's default soft limit on Go's memory.
const memoryLimit = 96 << 20

// stdio is where a command reads and writes; tests pass buffers.
type stdio struct {
	in       io.Reader
	out, err io.Writer
}

// exitError carries an exit code up to main without printing anything more.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func main() {
	if sandbox.IsChild() {
		sandbox.ChildMain() // never returns
	}
	// A soft limit on the Go heap: committing 100,000 files keeps about
	// 50 MB live, and without a limit the collector lets the heap grow to
	// twice that. GOMEMLIMIT overrides it.
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	io := stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr}
	os.Exit(run(ctx, os.Args[1:], io))
}

// run executes nash with args and returns the process exit code.
func run(ctx context.Context, args []string, io stdio) int {
	root := newRootCmd(io)
	root.SetArgs(args)
	root.SetIn(io.in)
	root.SetOut(io.out)
	root.SetErr(io.err)
	err := root.ExecuteContext(ctx)
	return exitCode(ctx, err, io)
}

// exitCode maps an error to an exit code, printing a one-line message for
// errors the person should see.
func exitCode(ctx context.Context, err error, io stdio) int {
	var ee exitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		fmt.Fprintln(io.err, "nash: interrupted")
		return exitInterrupted
	}
	fmt.Fprintf(io.err, "nash: %v\n", err)
	var ce codedError
	if errors.As(err, &ce) {
		return ce.ExitCode()
	}
	var ue usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	return exitFailure
}

// codedError is an error that knows its exit code.
type codedError interface {
	error
	ExitCode() int
}

// usageError marks a bad command line.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// minArgs accepts at least n arguments; fewer is a usage error.
func minArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return usageError{fmt.Sprintf("%s needs at least %d argument(s): %s", cmd.CommandPath(), n, cmd.Use)}
		}
		return nil
	}
}

func newRootCmd(io stdio) *cobra.Command {
	var so shellOptions
	root := &cobra.Command{
		Use:           "nash [-c [--yes] [--dry-run] [--print] [--json] TEXT]",
		Short:         "a natural-language shell that shows what a script will touch and keeps every change undoable",
		Long:          shellLong,
		Args:          shellArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runShell(cmd.Context(), cmd, so, args, io)
		},
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err.Error()} })
	root.PersistentFlags().String("state-dir", "", "where nash keeps its transactions and undo layers (default $XDG_STATE_HOME/nash)")
	root.PersistentFlags().String("model", "", "the model, as provider:model (default from config, NASH_MODEL, else "+planner.DefaultSpec+")")
	addShellFlags(root, &so)
	root.AddCommand(
		newRunCmd(io),
		newLogCmd(io),
		newShowCmd(io),
		newUndoCmd(io),
		newForgetCmd(io),
		newGCCmd(io),
		newLockCmd(io),
		newUnlockCmd(io),
		newHistoryCmd(io),
		newRollbackCmd(io),
		newGroupCmd(io),
		newJoinCmd(io),
		newExplainCmd(io),
		newIndexCmd(io),
		newFindCmd(io),
		newShareCmd(io),
		newServeCmd(io),
		newEvalCmd(io),
		newInitCmd(io),
		newVersionCmd(io),
	)
	return root
}

func newVersionCmd(io stdio) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "print nash's version",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprintln(io.out, "nash", version)
			return nil
		},
	}
}

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"
