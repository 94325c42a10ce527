package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/nash-shell/nash/sandbox"
	"github.com/nash-shell/nash/scripttest"
	"github.com/nash-shell/nash/shell"
)

// testOptions are the flags of nash test.
type testOptions struct {
	json     bool
	file     string
	examples []string
	timeout  time.Duration
	many     int
}

func newTestCmd(g *options, io stdio) *cobra.Command {
	var o testOptions
	cmd := &cobra.Command{
		Use:   "test [--json] [-e EXAMPLE]... [--timeout D] [--many N] (SCRIPT | -f FILE)",
		Short: "try a script on other starting states and on your examples, in throwaway sandboxes",
		Long: `Test a script before trusting it. From what the script reads, writes,
matches and uses, nash makes starting states that differ from today's files
where scripts often go wrong: a glob that matches nothing, one file or many;
names with spaces, a newline, a leading dash or bytes that are not UTF-8; a
missing or empty input; an output that exists or is read-only; a symlink
where a file is expected; a variable the script uses, unset or empty. It
runs the script on each in a throwaway sandbox over this directory (the
live files are never touched), and reports per state what happened and
what went wrong, or what differs in kind from the run on today's files.

-e runs the script on an example too: the files before => the files
after, or => stdout: what it prints, in a directory of its own:
  nash test -e "a.jpeg 'my photo.jpeg' => a.jpg 'my photo.jpg'" -f rename.sh
NAME=TEXT is a file holding TEXT (\n a line break), NAME/ a directory,
NAME->TARGET a symlink, any other word an empty file.

Exit status 0 when no starting state and no example fails, 1 when one
does (or nash itself failed).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTest(cmd.Context(), g, o, args, io)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.json, "json", false, "print one JSON object: every starting state and example (see the README)")
	f.StringVarP(&o.file, "file", "f", "", "read the script from `FILE` (- for stdin)")
	f.StringArrayVarP(&o.examples, "example", "e", nil, "also run the script on `EXAMPLE` (files before => files after, or => stdout: text)")
	f.DurationVar(&o.timeout, "timeout", 0, "stop the script after `D` in each starting state (default 5s)")
	f.IntVar(&o.many, "many", 0, "how many files the many-files state makes (default 50)")
	return cmd
}

// runTest tests a script as shell.TestScript does, in the working
// directory.
func runTest(ctx context.Context, g *options, o testOptions, args []string, io stdio) error {
	script, err := readScript(runOptions{file: o.file}, args, io)
	if err != nil {
		return err
	}
	if strings.TrimSpace(script) == "" {
		return usageError{"the script is empty"}
	}
	if o.timeout < 0 || o.many < 0 {
		return usageError{"--timeout and --many take positive values"}
	}
	var examples []scripttest.Example
	for i, text := range o.examples {
		ex, err := scripttest.ParseExample(text)
		if err != nil {
			return usageError{fmt.Sprintf("example %d: %s", i+1, err)}
		}
		ex.Name = strings.TrimSpace(text)
		examples = append(examples, ex)
	}
	cfg, err := shellConfig(g, io)
	if err != nil {
		return err
	}
	return shell.TestScript(ctx, cfg, script, examples, io.out, shell.TestOptions{JSON: o.json, Timeout: o.timeout, ManyFiles: o.many})
}

// scriptTester makes the shell's Tester: scripttest over nash's state
// dir, so its sandboxes recover and clean up with nash's own.
func scriptTester(stateDir string) shell.TesterFunc {
	return func(s shell.TestSpec) shell.Tester {
		opts := []scripttest.Option{scripttest.Dir(s.Dir), scripttest.Env(s.Env), scripttest.Sandbox(sandbox.StateDir(stateDir))}
		if s.Timeout > 0 {
			opts = append(opts, scripttest.Timeout(s.Timeout))
		}
		if s.ManyFiles > 0 {
			opts = append(opts, scripttest.ManyFiles(s.ManyFiles))
		}
		return scripttest.New(opts...)
	}
}
