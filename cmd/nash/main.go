// Command nash is a natural-language shell: it turns requests into short
// scripts, runs them in a sandbox, shows what changed and keeps every
// committed change undoable.
package main

import (
	"context"
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

// memoryLimit is nash's default soft limit on Go's memory.
const memoryLimit = 96 << 20

// stdio is where a command reads and writes; tests pass buffers.
type stdio struct {
	in       io.Reader
	out, err io.Writer
}

func main() {
	if sandbox.IsChild() {
		sandbox.ChildMain() // never returns
	}
	os.Exit(Main(os.Args[1:]))
}

// Main runs nash with args on the process's own streams and environment
// and returns its exit code. The tests run it as the command nash
// (testscript.Main).
func Main(args []string) int {
	// A soft limit on the Go heap: committing 100,000 files keeps about
	// 50 MB live, and without a limit the collector lets the heap grow to
	// twice that. GOMEMLIMIT overrides it.
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(ctx, args, stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr}, os.LookupEnv)
}

// run executes nash with args and returns the exit code. lookup reads the
// environment.
func run(ctx context.Context, args []string, io stdio, lookup func(string) (string, bool)) int {
	root := newRootCmd(io, lookup)
	root.SetArgs(args)
	root.SetIn(io.in)
	root.SetOut(io.out)
	root.SetErr(io.err)
	return exitCode(ctx, root.ExecuteContext(ctx), io.err)
}

// newRootCmd builds the command tree. Its flags and the environment are
// resolved into one options value before any command runs; every command
// gets that value, never the cobra.Command.
func newRootCmd(io stdio, lookup func(string) (string, bool)) *cobra.Command {
	g := &options{}
	var gf globalFlags
	var so shellOptions
	var root *cobra.Command
	root = &cobra.Command{
		Use:           "nash [-c [--yes] [--dry-run] [--print] [--json] TEXT]",
		Short:         "a natural-language shell that shows what a script will touch and keeps every change undoable",
		Long:          shellLong,
		Args:          shellArgs(&so),
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			if so.version {
				return nil // nash --version needs no settings
			}
			o, err := resolveOptions(lookup, gf)
			if err != nil {
				return err
			}
			o.commands = func() []planner.Command { return plannerCommands(root) }
			*g = *o
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if so.version {
				fmt.Fprintln(io.out, "nash", version)
				return nil
			}
			return runShell(cmd.Context(), g, so, args, io)
		},
	}
	// Not cobra's Version: its version template would link text/template,
	// whose reflection keeps every exported method in the binary (3.6 MB
	// more to map at every start).
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err.Error()} })
	pf := root.PersistentFlags()
	pf.StringVar(&gf.stateDir, "state-dir", "", "where nash keeps its transactions and undo layers (default $XDG_STATE_HOME/nash)")
	pf.StringVar(&gf.model, "model", "", "the model, as provider:model (default from config, NASH_MODEL, else "+planner.DefaultSpec+")")
	addShellFlags(root, &so)
	root.AddCommand(
		newRunCmd(g, io),
		newLogCmd(g, io),
		newShowCmd(g, io),
		newUndoCmd(g, io),
		newRedoCmd(g, io),
		newCommitCmd(g, io),
		newForgetCmd(g, io),
		newGCCmd(g, io),
		newLockCmd(g, io),
		newUnlockCmd(g, io),
		newHistoryCmd(g, io),
		newRollbackCmd(g, io),
		newGroupCmd(g, io),
		newJoinCmd(g, io),
		newExplainCmd(g, io),
		newTestCmd(g, io),
		newIndexCmd(g, io),
		newFindCmd(g, io),
		newShareCmd(g, io),
		newServeCmd(g, io),
		newEvalCmd(g, io),
		newModelsCmd(g, io),
		newDoctorCmd(g, io),
		newInitCmd(g, io),
		newVersionCmd(io),
	)
	return root
}

func newVersionCmd(io stdio) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "print nash's version",
		Args:  noArgs,
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprintln(io.out, "nash", version)
			return nil
		},
	}
}

// version is set at build time with -ldflags "-X main.version=..." (make
// build puts git describe there).
var version = "dev"
