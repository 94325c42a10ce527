//go:build !lean

package main

import (
	"github.com/spf13/cobra"

	"github.com/nash-shell/nash/planner"
)

// This file, with shell.go, eval.go, index.go, group.go, share.go,
// serve.go and summary.go, makes the whole of nash: the build make installs as
// nash-shell, and what go install gives. Built with -tags lean, nash keeps
// only the commands that need neither the planner nor the terminal UI and
// hands the rest to nash-shell (lean.go).

const modelFlagHelp = "the model, as provider:model (default from config, NASH_MODEL, else " + planner.DefaultSpec + ")"

// addFullCommands makes root the shell (its flags, its help, running it)
// and adds the commands that use the planner, the index or the network.
func addFullCommands(root *cobra.Command, io stdio) {
	var so shellOptions
	root.Long = shellLong
	root.Args = shellArgs
	root.RunE = func(cmd *cobra.Command, args []string) error {
		return runShell(cmd.Context(), cmd, so, args, io)
	}
	addShellFlags(root, &so)
	root.AddCommand(
		newIndexCmd(io),
		newFindCmd(io),
		newGroupCmd(io),
		newEvalCmd(io),
		newShareCmd(io),
		newServeCmd(io),
	)
}

// handOver does nothing in the whole program: it runs every command.
func handOver([]string) {}
