package main

import (
	"github.com/spf13/cobra"

	"github.com/nash-shell/nash/planner"
)

// plannerCommands describes to the planner the nash commands a script may
// use: the usage line and one-line help of each command in the tree that
// planner.Triggers names, so what the model reads is what nash parses.
func plannerCommands(root *cobra.Command) []planner.Command {
	triggers := planner.Triggers()
	var out []planner.Command
	for _, c := range root.Commands() {
		if tr, ok := triggers[c.Name()]; ok {
			out = append(out, planner.Command{Usage: "nash " + c.Use, Description: c.Short, Triggers: tr})
		}
	}
	return out
}
