//go:build lean

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/sandbox"
)

// The lean nash (make build: go build -tags lean) links the sandbox, the
// effects analysis and the commands built on them, but not the terminal
// UI, the model clients or the index: every nash process starts and exits
// about 2 ms sooner for it, which nash run pays on every script. Whatever
// it does not do (the shell, nash -c, eval, index, find, group, share,
// serve, help for those, and run or join when a model is configured to
// summarize the commit) it hands to nash-shell, the whole program, by
// exec: same arguments, same terminal, same exit code.

const (
	modelFlagHelp = "the model, as provider:model (default from config, NASH_MODEL, else nash's default)"
	fullBinName   = "nash-shell"
)

// addFullCommands hands run and join to nash-shell when a model is
// configured, before they do anything: the commit's summary needs it.
func addFullCommands(root *cobra.Command, _ stdio) {
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		switch cmd.Name() {
		case "run", "join":
			if m, err := configuredModel(cmd); err == nil && m != "" {
				return execFull(os.Args[1:])
			}
		}
		return nil
	}
}

// handOver execs nash-shell for a command line this build does not serve.
func handOver(args []string) {
	if leanCommand(args) {
		return
	}
	err := execFull(args)
	fmt.Fprintf(os.Stderr, "nash: %v\n", err)
	os.Exit(exitFailure)
}

// execFull replaces this process with nash-shell and the same arguments.
// It returns only on failure.
func execFull(args []string) error {
	bin, err := findHelper(fullBinName, "NASH_SHELL_BIN", "this command")
	if err != nil {
		return err
	}
	err = syscall.Exec(bin, append([]string{"nash"}, args...), os.Environ())
	return fmt.Errorf("start %s: %w", effects.Quote(bin), err)
}

// summarizeTx is never reached in this build (a configured model hands the
// command to nash-shell first); should it be, the commit stands unsummarized.
func summarizeTx(context.Context, string, *sandbox.Sandbox, string, *effects.ChangeSet) (string, error) {
	return "", errors.New("summaries are written by nash-shell")
}
