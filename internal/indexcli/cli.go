// Package indexcli is the command line of nash's file index: nash index
// (add, rm, status, rebuild, watch) and nash find. It runs in its own
// binary, nash-index, which nash starts for these commands: the index links
// bleve, whose start-up alone costs several milliseconds, and every other
// nash command (nash run above all) should not pay for it.
//
// nash passes what it resolved from its own flags and config in the
// environment: NASH_STATE_DIR (for the version recorder of watch) and
// NASH_INDEX_ROOTS (the config's index.roots).
package indexcli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/nash-shell/nash/sandbox"
)

// Exit codes, the same as nash's (see its README).
const (
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2
	exitNoSandbox   = 6
	exitInterrupted = 130
)

// stdio is where a command reads and writes; tests pass buffers.
type stdio struct {
	in       io.Reader
	out, err io.Writer
}

// exitError carries an exit code up to Main without printing anything more.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// usageError marks a bad command line.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// Main runs the index command line with args (e.g. "index", "add", PATH or
// "find", QUERY) and returns the exit code.
func Main(ctx context.Context, args []string, in io.Reader, out, errw io.Writer) int {
	io := stdio{in: in, out: out, err: errw}
	root := &cobra.Command{
		Use:           "nash",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err.Error()} })
	root.AddCommand(newIndexCmd(io), newFindCmd(io))
	root.SetArgs(args)
	root.SetIn(in)
	root.SetOut(out)
	root.SetErr(errw)
	err := root.ExecuteContext(ctx)
	var ee exitError
	var ue usageError
	var sue *sandbox.UnavailableError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		return exitInterrupted
	}
	fmt.Fprintf(errw, "nash: %v\n", err)
	switch {
	case errors.As(err, &ue):
		return exitUsage
	case errors.As(err, &sue):
		return exitNoSandbox
	}
	return exitFailure
}

// isTerminal reports whether w is a terminal.
func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// indexRoots is the config's index.roots, as nash passes them.
func indexRoots() []string {
	var roots []string
	for _, r := range strings.Split(os.Getenv("NASH_INDEX_ROOTS"), string(os.PathListSeparator)) {
		if r != "" {
			roots = append(roots, r)
		}
	}
	return roots
}
