package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/sandbox"
	"github.com/nash-shell/nash/shell"
)

// Exit codes that are not the script's own. A script's own exit code passes
// through unchanged; these are documented in the README and in nash --help.
const (
	exitOK          = 0
	exitFailure     = 1   // nash itself failed (an I/O error, no such transaction, ...)
	exitTestFailed  = 1   // nash test: the script failed in a starting state or on an example
	exitUsage       = 2   // bad command line or configuration
	exitAborted     = 3   // aborted at review or at the commit prompt, or refused under --yes: nothing changed
	exitConflict    = 4   // paths changed since (undo or commit refused): nothing changed
	exitPlanner     = 5   // the planner produced no script
	exitNoSandbox   = 6   // the sandbox is unavailable or incomplete
	exitLocked      = 7   // the commit or undo would change locked paths: nothing changed
	exitInterrupted = 130 // ctrl+c
)

// exitCodesHelp is the table above for nash --help.
const exitCodesHelp = `Exit codes: the script's own (nash test: 1 when the script fails in a
starting state or on an example); 2 bad usage or configuration; 3 aborted
(nothing changed); 4 paths changed since (undo or commit refused); 5 the
planner produced no script; 6 the sandbox is unavailable; 7 locked paths
(commit or undo refused); 130 interrupted.`

// usageError marks a bad command line or configuration.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// exitError carries an exit code whose reason has been told already (or
// needs none: nash find that finds nothing).
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// exitCode is the one place that turns an error into nash's exit code. It
// writes the error on w, in one line when it can, unless it has been told
// already.
func exitCode(ctx context.Context, err error, w io.Writer) int {
	var (
		ee exitError
		es shell.ExitStatus
		ue usageError
		ce configError
		pe *shell.PlanError
		pl plannerError
		fe *shell.ConfirmError
		xe *sandbox.ConflictError
		le *sandbox.LockedError
		ne *sandbox.UnavailableError
		te *shell.TestFailedError
	)
	code := exitFailure
	quiet := false
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		code, quiet = ee.code, true
	case errors.As(err, &es):
		code, quiet = int(es), true
	case errors.As(err, &te):
		code, quiet = exitTestFailed, true
	case errors.Is(err, shell.ErrAborted):
		code, quiet = exitAborted, true
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		fmt.Fprintln(w, "nash: interrupted")
		return exitInterrupted
	case errors.As(err, &ue), errors.As(err, &ce):
		code = exitUsage
	case errors.As(err, &fe):
		code = exitAborted
	case errors.As(err, &xe):
		code = exitConflict
	case errors.As(err, &le):
		code = exitLocked
	case errors.As(err, &pe), errors.As(err, &pl):
		code = exitPlanner
	case errors.As(err, &ne):
		code = exitNoSandbox
	}
	if !quiet {
		fmt.Fprintf(w, "nash: %s\n", strings.TrimRight(effects.EscapeText(err.Error()), "\n"))
	}
	return code
}
