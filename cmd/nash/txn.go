package main

import (
	"errors"
	"fmt"
	goio "io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/internal/size"
	"github.com/nash-shell/nash/sandbox"
	"github.com/nash-shell/nash/shell"
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
			if err := tw.Flush(); err != nil {
				return err
			}
			return writeKept(io.out, sb)
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
			if sandbox.IsRunID(args[0]) {
				return showKept(io, sb, args[0], asJSON)
			}
			if !sandbox.IsTxID(args[0]) {
				return fmt.Errorf("%s is not a transaction id (a number: nash log lists them) nor a kept run's (r and a number)", effects.Quote(args[0]))
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
			own, tools := shell.SplitTools(cs, t.Tools)
			if t.Bookkeeping {
				fmt.Fprintln(io.out, "bookkeeping: only tools' own files changed")
			}
			if own.Len() > 0 || tools.Len() == 0 {
				if err := effects.WriteSummary(io.out, own, summaryOptions(io.out)); err != nil {
					return err
				}
			}
			if tools.Len() > 0 {
				fmt.Fprintln(io.out, "tools' own files (committed with the run, undone with it):")
				if err := effects.WriteSummary(io.out, tools, summaryOptions(io.out)); err != nil {
					return err
				}
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
created. Without an ID, undo takes back the latest change still in effect,
further back each time; nash redo brings back what undo took away. A path
that changed after that commit is a conflict: undo names the conflicts and
changes nothing, unless --force (the current versions are then kept in the
undo's own layer). An undo is a transaction too, so it can itself be undone.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			id := ""
			if len(args) > 0 && isTxID(args[0]) {
				id, args = args[0], args[1:]
			}
			paths, err := absPaths(args)
			if err != nil {
				return err
			}
			var notThere []string
			for i, p := range paths {
				if _, err := os.Lstat(p); err != nil {
					notThere = append(notThere, args[i])
				}
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
			var nt *sandbox.NothingThereError
			switch {
			case errors.As(err, &nt) && len(notThere) > 0:
				return fmt.Errorf("%s: not a transaction id (a number: nash log lists them), and transaction %s changed no such path", quoteAll(notThere), nt.ID)
			case errors.Is(err, sandbox.ErrNothingToUndo):
				return errors.New("nothing to undo: every change is undone already")
			case err != nil:
				return err
			}
			if asJSON {
				return effects.WriteJSON(io.out, map[string]any{"undone": true, "id": u.ID, "undoes": u.Undoes, "ops": u.Ops}, false)
			}
			fmt.Fprintf(io.out, "undid transaction %s as transaction %s (%d path(s)); nash redo brings it back\n", u.Undoes, u.ID, u.Ops)
			return nil
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "undo even paths that changed since")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// isTxID tells a transaction id (a number, or N.M) from a path.
func isTxID(s string) bool {
	if !sandbox.IsTxID(s) {
		return false
	}
	_, err := os.Lstat(s)
	return err != nil // a file named like a number is a path
}

func newRedoCmd(g *options, io stdio) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "redo [--json]",
		Short: "bring back what the last undo took away",
		Long: `Bring back the changes of the latest undo, as a new transaction: after undo,
undo, redo, redo, everything is as before the undos. A change made after an
undo ends what can be redone.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			sb, err := openSandbox(cmd.Context(), g, io)
			if err != nil {
				return err
			}
			u, err := sb.Redo(cmd.Context())
			var ce *sandbox.ConflictError
			switch {
			case errors.As(err, &ce):
				fmt.Fprintln(io.err, "nash: nothing was changed; these paths changed after that undo:")
				for _, c := range ce.Conflicts {
					fmt.Fprintf(io.err, "  %s: %s\n", effects.Quote(c.Path), c.Reason)
				}
				return exitError{exitConflict}
			case errors.Is(err, sandbox.ErrNothingToRedo):
				return errors.New("nothing to redo: redo brings back only undone changes that nothing came after")
			case err != nil:
				return err
			}
			if asJSON {
				return effects.WriteJSON(io.out, map[string]any{"redone": true, "id": u.ID, "undoes": u.Undoes, "ops": u.Ops}, false)
			}
			fmt.Fprintf(io.out, "redid the changes undone by transaction %s as transaction %s (%d path(s)); nash undo undoes them again\n", u.Undoes, u.ID, u.Ops)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newCommitCmd(g *options, io stdio) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "commit ID [--json]",
		Short: "apply an aborted run that was kept (rN), as a transaction",
		Long: `An aborted run that created or modified files is kept for a while (nash log
lists them, nash show rN shows one). nash commit rN applies it now, as a
transaction like any other. A path that changed since the run is a conflict:
commit names it and changes nothing. nash gc --older-than discards old ones.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !sandbox.IsRunID(args[0]) {
				return usageError{fmt.Sprintf("%s is not a kept run's id (r and a number: nash log lists them)", effects.Quote(args[0]))}
			}
			sb, err := openSandbox(cmd.Context(), g, io)
			if err != nil {
				return err
			}
			if _, _, err := sb.ShowKept(args[0]); err != nil {
				return err
			}
			tx, err := sb.Commit(cmd.Context(), args[0], sandbox.CommitOptions{})
			var ce *sandbox.ConflictError
			if errors.As(err, &ce) {
				if asJSON {
					_ = effects.WriteJSON(io.out, map[string]any{"committed": false, "conflicts": ce.Conflicts}, false)
				} else {
					fmt.Fprintln(io.err, "nash: nothing was changed; these paths changed after that run:")
					for _, c := range ce.Conflicts {
						fmt.Fprintf(io.err, "  %s: %s\n", effects.Quote(c.Path), c.Reason)
					}
				}
				return exitError{exitConflict}
			}
			if err != nil {
				return err
			}
			if asJSON {
				return effects.WriteJSON(io.out, map[string]any{"committed": true, "run": args[0], "id": tx.ID, "changes": tx.Changes}, false)
			}
			fmt.Fprintf(io.out, "committed run %s as transaction %s (%d change(s)); nash undo undoes it\n", args[0], tx.ID, tx.Changes)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// showKept is nash show rN.
func showKept(io stdio, sb *sandbox.Sandbox, id string, asJSON bool) error {
	k, cs, err := sb.ShowKept(id)
	if err != nil {
		return err
	}
	if asJSON {
		return effects.WriteJSON(io.out, struct {
			*sandbox.KeptRun
			ChangeList []effects.Change `json:"change_list"`
		}{k, cs.Changes}, false)
	}
	fmt.Fprintf(io.out, "run %s  aborted %s, kept: nash commit %s applies it\n", k.ID, k.Aborted.Local().Format(time.DateTime), k.ID)
	if k.Prompt != "" {
		fmt.Fprintf(io.out, "request: %s\n", effects.EscapeLine(k.Prompt))
	}
	if k.Script != "" {
		fmt.Fprintf(io.out, "script:\n%s\n", indent(effects.EscapeText(k.Script)))
	}
	return effects.WriteSummary(io.out, cs, summaryOptions(io.out))
}

// writeKept lists the aborted runs that are kept, under nash log.
func writeKept(w goio.Writer, sb *sandbox.Sandbox) error {
	runs, err := sb.Kept()
	if err != nil || len(runs) == 0 {
		return err
	}
	fmt.Fprintln(w, "\naborted runs kept (nash show ID, nash commit ID; nash gc --older-than discards them):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, k := range runs {
		what := k.Prompt
		if what == "" {
			what = k.Script
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", k.ID, k.Aborted.Local().Format("2006-01-02 15:04"), oneLine(what, 60))
	}
	return tw.Flush()
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
		Short: "release old undo layers, and discard old aborted runs kept",
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
			if len(res.Discarded) > 0 {
				fmt.Fprintf(io.out, "discarded %d aborted run(s) kept since before then: %s\n", len(res.Discarded), strings.Join(res.Discarded, ", "))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&olderThan, "older-than", "", "release layers older than `DURATION` (e.g. 7d, 36h), and discard aborted runs kept longer")
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
