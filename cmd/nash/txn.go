package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/internal/size"
	"github.com/nash-shell/nash/sandbox"
)

func newLogCmd(g *options, io stdio) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "log [--json]",
		Short: "list transactions: id, time, script, state, changes, undo bytes held",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sb, err := openSandbox(cmd.Context(), g, io)
			if err != nil {
				return err
			}
			txs, err := sb.Log()
			if err != nil {
				return err
			}
			if asJSON {
				if txs == nil {
					txs = []*sandbox.Tx{}
				}
				return effects.WriteJSON(io.out, txs, false)
			}
			tw := tabwriter.NewWriter(io.out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tTIME\tSTATE\tCHANGES\tUNDO\tSCRIPT")
			for _, t := range txs {
				what := t.Prompt
				if what == "" {
					what = t.Script
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", t.ID, t.Time.Local().Format("2006-01-02 15:04"),
					t.State, t.Changes, humanBytes(t.UndoBytes), oneLine(what, 60))
				if t.Summary != "" {
					// On a line of its own, under the script.
					fmt.Fprintf(tw, "\t\t\t\t\t%s\n", oneLine(t.Summary, 100))
				}
				if len(t.Network) > 0 {
					fmt.Fprintf(tw, "\t\t\t\t\t%s\n", oneLine(netBrief(t.Network), 100))
				}
				if t.Tokens != nil {
					fmt.Fprintf(tw, "\t\t\t\t\tmodel: %s\n", tokenText(*t.Tokens))
				}
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newShowCmd(g *options, io stdio) *cobra.Command {
	var diff, asJSON bool
	cmd := &cobra.Command{
		Use:   "show ID [--diff] [--json]",
		Short: "show what a transaction changed",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sb, err := openSandbox(cmd.Context(), g, io)
			if err != nil {
				return err
			}
			t, cs, err := sb.Show(args[0])
			if err != nil {
				return err
			}
			if asJSON {
				return effects.WriteJSON(io.out, struct {
					*sandbox.Tx
					ChangeList []effects.Change `json:"change_list"`
				}{t, cs.Changes}, false)
			}
			fmt.Fprintf(io.out, "transaction %s  %s  %s\n", t.ID, t.Time.Local().Format(time.DateTime), t.State)
			for _, k := range t.Kept {
				// A rolled-back transaction that could not put these back.
				if k.Object != "" {
					fmt.Fprintf(io.out, "kept aside: the old version of %s is at %s\n", effects.Quote(k.Path), effects.Quote(k.Object))
				} else {
					fmt.Fprintf(io.out, "kept aside: %s could not be reached\n", effects.Quote(k.Path))
				}
			}
			if t.Undoes != "" {
				fmt.Fprintf(io.out, "undoes transaction %s\n", t.Undoes)
			}
			if t.Prompt != "" {
				fmt.Fprintf(io.out, "request: %s\n", effects.EscapeLine(t.Prompt))
			}
			if t.Summary != "" {
				fmt.Fprintf(io.out, "summary: %s\n", effects.EscapeLine(t.Summary))
			}
			if t.Tokens != nil {
				fmt.Fprintf(io.out, "model: %s\n", tokenText(*t.Tokens))
			}
			if t.Script != "" {
				fmt.Fprintf(io.out, "script:\n%s\n", indent(effects.EscapeText(t.Script)))
			}
			if err := effects.WriteSummary(io.out, cs, summaryOptions(io.out)); err != nil {
				return err
			}
			writeTxNetwork(io.out, t.Network)
			if diff {
				for _, c := range cs.Changes {
					if c.Kind != effects.Modified {
						continue
					}
					oldPath, ok := sb.OldVersion(t.ID, c.Path)
					if !ok {
						continue
					}
					ob, err1 := os.ReadFile(oldPath)
					nb, err2 := os.ReadFile(c.Path)
					if err1 != nil || err2 != nil {
						fmt.Fprintf(io.out, "%s: cannot diff (changed or removed since)\n", effects.Quote(c.Path))
						continue
					}
					if err := effects.Diff(io.out, c.Path, ob, nb, effects.DiffOptions{}); err != nil {
						return err
					}
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&diff, "diff", false, "show diffs of modified text files")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newUndoCmd(g *options, io stdio) *cobra.Command {
	var force, asJSON bool
	cmd := &cobra.Command{
		Use:   "undo [ID] [PATH...] [--force] [--json]",
		Short: "restore the old versions of a transaction (default: the last), all or some paths",
		Long: `Restore what a committed transaction replaced or deleted, and remove what it
created. A path that changed after that commit is a conflict: undo names the
conflicts and changes nothing, unless --force (the current versions are then
kept in the undo's own layer). An undo is a transaction too: undo it to redo.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			id := ""
			if len(args) > 0 && isTxID(args[0]) {
				id, args = args[0], args[1:]
			}
			paths, err := absPaths(args)
			if err != nil {
				return err
			}
			sb, err := openSandbox(cmd.Context(), g, io)
			if err != nil {
				return err
			}
			u, err := sb.Undo(cmd.Context(), id, sandbox.UndoOptions{Paths: paths, Force: force})
			var ce *sandbox.ConflictError
			if errors.As(err, &ce) {
				if asJSON {
					_ = effects.WriteJSON(io.out, map[string]any{"undone": false, "conflicts": ce.Conflicts}, false)
				} else {
					fmt.Fprintln(io.err, "nash: nothing was changed; these paths changed after that commit:")
					for _, c := range ce.Conflicts {
						fmt.Fprintf(io.err, "  %s: %s\n", effects.Quote(c.Path), c.Reason)
					}
					fmt.Fprintln(io.err, "nash: undo them anyway with --force (their current versions are kept and can be restored)")
				}
				return exitError{exitConflict}
			}
			if err != nil {
				return err
			}
			if asJSON {
				return effects.WriteJSON(io.out, map[string]any{"undone": true, "id": u.ID, "undoes": u.Undoes, "ops": u.Ops}, false)
			}
			fmt.Fprintf(io.out, "undid transaction %s as transaction %s (%d path(s)); undo %s to redo\n", u.Undoes, u.ID, u.Ops, u.ID)
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "undo even paths that changed since")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// isTxID tells a transaction id (digits) from a path.
func isTxID(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	_, err := os.Lstat(s)
	return err != nil // a file named like a number is a path
}

func newForgetCmd(g *options, io stdio) *cobra.Command {
	return &cobra.Command{
		Use:   "forget ID...",
		Short: "release transactions' undo layers (they can no longer be undone)",
		Args:  minArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sb, err := openSandbox(cmd.Context(), g, io)
			if err != nil {
				return err
			}
			for _, id := range args {
				if err := sb.Forget(cmd.Context(), id); err != nil {
					return err
				}
				fmt.Fprintf(io.out, "forgot transaction %s\n", id)
			}
			return nil
		},
	}
}

func newGCCmd(g *options, io stdio) *cobra.Command {
	var olderThan, maxSize string
	cmd := &cobra.Command{
		Use:   "gc [--older-than DURATION] [--max-size SIZE]",
		Short: "release old undo layers",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var age time.Duration
			limit := int64(-1)
			var err error
			if olderThan == "" && maxSize == "" {
				return usageError{"say what to release: --older-than DURATION and/or --max-size SIZE"}
			}
			if olderThan != "" {
				if age, err = parseAge(olderThan); err != nil {
					return usageError{err.Error()}
				}
			}
			if maxSize != "" {
				if limit, err = size.Parse(maxSize); err != nil {
					return usageError{err.Error()}
				}
			}
			sb, err := openSandbox(cmd.Context(), g, io)
			if err != nil {
				return err
			}
			res, err := sb.GC(cmd.Context(), age, limit)
			if err != nil {
				return err
			}
			fmt.Fprintf(io.out, "released %d undo layer(s), %s; %s still held\n", len(res.Forgotten), humanBytes(res.Freed), humanBytes(res.Kept))
			return nil
		},
	}
	cmd.Flags().StringVar(&olderThan, "older-than", "", "release layers older than `DURATION` (e.g. 7d, 36h)")
	cmd.Flags().StringVar(&maxSize, "max-size", "", "release the oldest layers until at most `SIZE` is held (e.g. 2G)")
	return cmd
}

func humanBytes(n int64) string { return size.Format(n) }

// oneLine shows the first line of s, escaped and cut to n runes.
func oneLine(s string, n int) string {
	first, _, more := strings.Cut(strings.TrimSpace(s), "\n")
	first = effects.Escape(first)
	r := []rune(first)
	if len(r) > n {
		return string(r[:n-1]) + "…"
	}
	if more {
		return first + " …"
	}
	return first
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}
