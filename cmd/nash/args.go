package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// The argument checks of every command: a wrong count is a usage error
// (exit 2) that shows how the command is used. cobra's own checks return
// plain errors, which exitCode could not tell from a failure.

// noArgs accepts no arguments.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageError{fmt.Sprintf("%s takes no arguments, got %q; usage: %s", subject(cmd), args[0], usageLine(cmd))}
	}
	return nil
}

// exactArgs accepts exactly n arguments.
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError{fmt.Sprintf("%s needs %d argument(s), got %d; usage: %s", subject(cmd), n, len(args), usageLine(cmd))}
		}
		return nil
	}
}

// minArgs accepts at least n arguments.
func minArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return usageError{fmt.Sprintf("%s needs at least %d argument(s); usage: %s", subject(cmd), n, usageLine(cmd))}
		}
		return nil
	}
}

// usageLine is how cmd is used, from nash on: "nash show ID [--diff] [--json]".
func usageLine(cmd *cobra.Command) string {
	if !cmd.HasParent() {
		return cmd.Use
	}
	return cmd.Parent().CommandPath() + " " + cmd.Use
}

// subject names cmd in a message that nash: already begins: "show",
// "eval intercode-alfa".
func subject(cmd *cobra.Command) string {
	return strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
}
