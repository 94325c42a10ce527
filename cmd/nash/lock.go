package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/nash-shell/nash/effects"
)

func newLockCmd(g *options, io stdio) *cobra.Command {
	var list bool
	cmd := &cobra.Command{
		Use:   "lock (PATH... | --list)",
		Short: "make files read-only and refuse any commit or undo that would change them",
		RunE: func(cmd *cobra.Command, args []string) error {
			if list == (len(args) > 0) {
				return usageError{"give paths to lock, or --list"}
			}
			sb, err := openSandbox(cmd.Context(), g, io)
			if err != nil {
				return err
			}
			if list {
				locks, err := sb.Locks()
				if err != nil {
					return err
				}
				for _, l := range locks {
					fmt.Fprintln(io.out, effects.Quote(l.Path))
				}
				return nil
			}
			paths, err := absPaths(args)
			if err != nil {
				return err
			}
			if err := sb.Lock(cmd.Context(), paths...); err != nil {
				return err
			}
			fmt.Fprintf(io.out, "locked %s\n", quoteAll(paths))
			return nil
		},
	}
	cmd.Flags().BoolVar(&list, "list", false, "list the locked paths")
	return cmd
}

func newUnlockCmd(g *options, io stdio) *cobra.Command {
	return &cobra.Command{
		Use:   "unlock PATH...",
		Short: "give locked files their write permission back",
		Args:  minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			paths, err := absPaths(args)
			if err != nil {
				return err
			}
			sb, err := openSandbox(cmd.Context(), g, io)
			if err != nil {
				return err
			}
			if err := sb.Unlock(cmd.Context(), paths...); err != nil {
				return err
			}
			fmt.Fprintf(io.out, "unlocked %s\n", quoteAll(paths))
			return nil
		},
	}
}
