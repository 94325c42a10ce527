package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/nash-shell/nash/planner"
	"github.com/nash-shell/nash/sandbox"
	"github.com/nash-shell/nash/shell"
)

// TestExitCode is the exit-code table of the README, error by error, and
// whether nash says something for it (an error told already is not told
// twice).
func TestExitCode(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	wrap := func(err error) error { return fmt.Errorf("commit: %w", err) }
	tests := []struct {
		name string
		ctx  context.Context
		err  error
		code int
		says string // "" means nothing is written
	}{
		{"ok", nil, nil, exitOK, ""},
		{"failure", nil, errors.New("disk on fire"), exitFailure, "nash: disk on fire"},
		{"not found", nil, &sandbox.NotFoundError{ID: "9"}, exitFailure, "no transaction 9"},
		{"usage", nil, usageError{"show needs 1 argument(s)"}, exitUsage, "show needs"},
		{"config", nil, configError{errors.New("config x: yaml: bad")}, exitUsage, "config x"},
		{"aborted", nil, shell.ErrAborted, exitAborted, ""},
		{"refused under --yes", nil, &shell.ConfirmError{Reason: "it deletes outside /p"}, exitAborted, "--yes does not cover this"},
		{"conflict", nil, wrap(&sandbox.ConflictError{Conflicts: []sandbox.Conflict{{Path: "/p/f", Reason: "changed"}}}), exitConflict, "/p/f"},
		{"planner", nil, &shell.PlanError{Err: errors.New("no usable script")}, exitPlanner, "no usable script"},
		{"eval planner", nil, plannerError{planner.ErrNoProvider}, exitPlanner, "no model provider"},
		{"no sandbox", nil, wrap(&sandbox.UnavailableError{Reason: "no user namespaces"}), exitNoSandbox, "no user namespaces"},
		{"locked", nil, wrap(&sandbox.LockedError{Paths: []string{"/p/f"}}), exitLocked, "locked"},
		{"script's own", nil, shell.ExitStatus(42), 42, ""},
		{"told already", nil, exitError{9}, 9, ""},
		{"interrupted", nil, context.Canceled, exitInterrupted, "interrupted"},
		{"interrupted while failing", cancelled, errors.New("read: bad file descriptor"), exitInterrupted, "interrupted"},
		{"escaped", nil, errors.New("name \x1b[2J"), exitFailure, `\x1b[2J`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := tt.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			var w bytes.Buffer
			if code := exitCode(ctx, tt.err, &w); code != tt.code {
				t.Errorf("exit code %d, want %d", code, tt.code)
			}
			switch {
			case tt.says == "" && w.Len() > 0:
				t.Errorf("said %q, want nothing", w.String())
			case !strings.Contains(w.String(), tt.says):
				t.Errorf("said %q, want %q in it", w.String(), tt.says)
			case strings.Count(w.String(), "\x1b") > 0:
				t.Errorf("said %q: an escape reached the terminal", w.String())
			}
		})
	}
}

// TestArgCountIsUsage: for every command, a wrong number of arguments is
// a usage error (exit 2), never cobra's plain error (exit 1).
func TestArgCountIsUsage(t *testing.T) {
	root := newRootCmd(stdio{in: strings.NewReader(""), out: io.Discard, err: io.Discard}, os.LookupEnv)
	var walk func(c *cobra.Command)
	checked := 0
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if c.Args == nil || c.DisableFlagParsing {
			return // takes any arguments, or they are another program's
		}
		for _, n := range []int{0, 1, 2, 3, 50} {
			err := c.Args(c, make([]string, n))
			var ue usageError
			if err != nil && !errors.As(err, &ue) {
				t.Errorf("%s with %d arguments: %T %v, want a usage error", c.CommandPath(), n, err, err)
			}
			if err != nil {
				checked++
			}
		}
	}
	walk(root)
	if checked == 0 {
		t.Fatal("no command refused any argument count")
	}
}
