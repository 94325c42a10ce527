package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/nash-shell/nash/planner"
)

// TestPlannerCommandsFromTree: every command the planner has triggers for
// is a command of nash, described by its own usage line and help.
func TestPlannerCommandsFromTree(t *testing.T) {
	root := newRootCmd(stdio{in: strings.NewReader(""), out: io.Discard, err: io.Discard}, os.LookupEnv)
	cmds := plannerCommands(root)
	var names []string
	for _, c := range cmds {
		names = append(names, strings.Fields(c.Usage)[1])
		if c.Description == "" || len(c.Triggers) == 0 {
			t.Errorf("%s: no description or no triggers", c.Usage)
		}
	}
	for name := range planner.Triggers() {
		if !slices.Contains(names, name) {
			t.Errorf("the planner has triggers for nash %s, which is not a command", name)
		}
	}
}

// TestPlannerUsageParses: every usage line the planner may show, expanded
// into command lines (each alternative, optional parts left out and put
// in, placeholders given a value), is one nash accepts: the flags parse,
// the arguments fit, and it reaches the command it names.
func TestPlannerUsageParses(t *testing.T) {
	root := newRootCmd(stdio{in: strings.NewReader(""), out: io.Discard, err: io.Discard}, os.LookupEnv)
	home := t.TempDir()
	for _, c := range plannerCommands(root) {
		lines, err := expandUsage(c.Usage)
		if err != nil {
			t.Errorf("%s: %v", c.Usage, err)
			continue
		}
		if len(lines) == 0 {
			t.Errorf("%s: expands to nothing", c.Usage)
		}
		for _, args := range lines {
			if args[0] != "nash" {
				t.Errorf("%s: %q does not start with nash", c.Usage, args)
				continue
			}
			args = args[1:]
			if err := checkArgs(args, home); err != nil {
				t.Errorf("%s: nash %s: %v", c.Usage, strings.Join(args, " "), err)
			}
		}
	}
}

// checkArgs runs nash's command tree on args with every command's work
// replaced by a no-op, and reports what the command line itself gets
// wrong.
func checkArgs(args []string, home string) error {
	lookup := func(k string) (string, bool) {
		switch k {
		case "HOME":
			return home, true
		case "NASH_CONFIG":
			return filepath.Join(home, "none.yaml"), true
		}
		return "", false
	}
	root := newRootCmd(stdio{in: strings.NewReader(""), out: io.Discard, err: io.Discard}, lookup)
	var ran string
	var noop func(c *cobra.Command)
	noop = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			noop(sub)
		}
		if c.RunE != nil {
			c.RunE = func(c *cobra.Command, _ []string) error { ran = c.Name(); return nil }
		}
	}
	noop(root)
	root.SetArgs(args)
	root.SetOut(io.Discard)
	root.SetErr(io.Discard)
	if err := root.ExecuteContext(context.Background()); err != nil {
		return err
	}
	if ran != args[0] {
		return errors.New("it ran " + ran)
	}
	return nil
}

// TestExpandUsage pins the usage grammar the planner's lines are read by.
func TestExpandUsage(t *testing.T) {
	got, err := expandUsage("nash lock (PATH... | --list) [--json] -n N --by a|b")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range got {
		lines = append(lines, strings.Join(l, " "))
	}
	want := []string{
		"nash lock x -n 2 --by a",
		"nash lock x -n 2 --by b",
		"nash lock x --json -n 2 --by a",
		"nash lock x --json -n 2 --by b",
		"nash lock x y -n 2 --by a",
		"nash lock x y -n 2 --by b",
		"nash lock x y --json -n 2 --by a",
		"nash lock x y --json -n 2 --by b",
		"nash lock --list -n 2 --by a",
		"nash lock --list -n 2 --by b",
		"nash lock --list --json -n 2 --by a",
		"nash lock --list --json -n 2 --by b",
	}
	slices.Sort(lines)
	slices.Sort(want)
	if !slices.Equal(lines, want) {
		t.Errorf("expandUsage:\ngot  %q\nwant %q", lines, want)
	}
	for _, bad := range []string{"nash (a", "nash a]", "nash [a | ]"} {
		if _, err := expandUsage(bad); err == nil {
			t.Errorf("expandUsage(%q) accepted", bad)
		}
	}
}

// expandUsage turns a usage line into the command lines it stands for:
// [x] optional, (x | y) one of, a|b one of, X... once or twice, and an
// upper-case word a placeholder given a value (see sample).
func expandUsage(usage string) ([][]string, error) {
	toks := tokenize(usage)
	alts, rest, err := parseAlt(toks)
	if err != nil {
		return nil, err
	}
	if len(rest) > 0 {
		return nil, errors.New("unexpected " + rest[0])
	}
	return alts, nil
}

func tokenize(s string) []string {
	s = strings.NewReplacer("[", " [ ", "]", " ] ", "(", " ( ", ")", " ) ", " | ", " | ").Replace(s)
	return strings.Fields(s)
}

// parseAlt reads seq (| seq)* up to a closing bracket or the end.
func parseAlt(toks []string) ([][]string, []string, error) {
	var out [][]string
	for {
		seq, rest, err := parseSeq(toks)
		if err != nil {
			return nil, nil, err
		}
		if len(seq) == 0 || (len(seq) == 1 && len(seq[0]) == 0) {
			return nil, nil, errors.New("an empty alternative")
		}
		out = append(out, seq...)
		if len(rest) > 0 && rest[0] == "|" {
			toks = rest[1:]
			continue
		}
		return out, rest, nil
	}
}

// parseSeq reads items up to |, a closing bracket or the end, and returns
// every command line the sequence stands for.
func parseSeq(toks []string) ([][]string, []string, error) {
	lines := [][]string{{}}
	for len(toks) > 0 {
		tok := toks[0]
		var choices [][]string
		switch tok {
		case "|", "]", ")":
			return lines, toks, nil
		case "[", "(":
			inner, rest, err := parseAlt(toks[1:])
			if err != nil {
				return nil, nil, err
			}
			closing := map[string]string{"[": "]", "(": ")"}[tok]
			if len(rest) == 0 || rest[0] != closing {
				return nil, nil, errors.New("no " + closing)
			}
			toks = rest[1:]
			choices = inner
			if tok == "[" {
				choices = append([][]string{{}}, inner...)
			}
		default:
			toks = toks[1:]
			word, many := strings.CutSuffix(tok, "...")
			for _, w := range strings.Split(word, "|") {
				choices = append(choices, []string{sample(w, 0)})
				if many {
					choices = append(choices, []string{sample(w, 0), sample(w, 1)})
				}
			}
		}
		var next [][]string
		for _, l := range lines {
			for _, c := range choices {
				next = append(next, append(slices.Clip(l), c...))
			}
		}
		lines = next
	}
	return lines, toks, nil
}

// sample gives a placeholder (an upper-case word) a value of its kind,
// the i-th for a repeated one; other words stand for themselves.
func sample(w string, i int) string {
	if w == "" || strings.ToUpper(w) != w || strings.ToLower(w) == w {
		return w // a literal: nash, --json, -n, bash, --, ...
	}
	switch w {
	case "N":
		return "2"
	case "ID":
		return "3"
	case "DATE":
		return "2025-01-02"
	case "DURATION":
		return "3d"
	case "SIZE":
		return "2G"
	case "HOST:PORT":
		return "127.0.0.1:7707"
	}
	return []string{"x", "y"}[i]
}
