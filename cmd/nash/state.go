package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/term"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/sandbox"
)

// openSandbox opens the sandbox in the state dir the options name. It
// recovers unfinished transactions.
func openSandbox(ctx context.Context, g *options, io stdio, opts ...sandbox.Option) (*sandbox.Sandbox, error) {
	opts = append([]sandbox.Option{sandbox.StateDir(g.stateDir)}, opts...)
	opts = append(opts, sandbox.Stdio(io.in, io.out, io.err))
	sb, err := sandbox.New(ctx, opts...)
	if err == nil && sb.Unrecovered() != nil {
		// nash works on; the person learns what is left and what to do.
		fmt.Fprintf(io.err, "nash: %v\n", sb.Unrecovered())
	}
	return sb, err
}

// isTerminal reports whether r is a terminal.
func isTerminal(r any) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// termWidth is the width of the terminal w writes to, or 0.
func termWidth(w any) int {
	f, ok := w.(*os.File)
	if !ok {
		return 0
	}
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil {
		return 0
	}
	return width
}

func summaryOptions(w any) effects.SummaryOptions {
	home, _ := os.UserHomeDir()
	return effects.SummaryOptions{Width: termWidth(w), Home: home}
}

// absPaths makes command-line paths absolute.
func absPaths(args []string) ([]string, error) {
	out := make([]string, 0, len(args))
	for _, a := range args {
		p, err := filepath.Abs(a)
		if err != nil {
			return nil, fmt.Errorf("path %s: %w", effects.Quote(a), err)
		}
		out = append(out, p)
	}
	return out, nil
}

// parseAge reads durations like 36h or 7d.
func parseAge(s string) (time.Duration, error) {
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseFloat(d, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("duration %q: want e.g. 7d or 36h", s)
		}
		return time.Duration(n * float64(24*time.Hour)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("duration %q: want e.g. 7d or 36h", s)
	}
	return d, nil
}
