package main

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/sandbox"
)

func newHistoryCmd(io stdio) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "history PATH [--json]",
		Short: "list the versions of a file that nash knows (undo layers, recorded changes, current)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			paths, err := absPaths(args)
			if err != nil {
				return err
			}
			sb, err := openSandbox(cmd.Context(), cmd, io)
			if err != nil {
				return wrapSandboxErr(err)
			}
			vs, err := sb.History(paths[0])
			if err != nil {
				return err
			}
			if asJSON {
				return effects.WriteJSON(io.out, vs, false)
			}
			tw := tabwriter.NewWriter(io.out, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "VERSION\tUNTIL\tSIZE\tFROM")
			for _, v := range vs {
				until := "now"
				if !v.Until.IsZero() {
					until = v.Until.Local().Format("2006-01-02 15:04:05")
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", v.N, until, humanBytes(v.Size), v.Source)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newRollbackCmd(io stdio) *cobra.Command {
	var number, back int
	var date string
	cmd := &cobra.Command{
		Use:   "rollback PATH (--to-version N | --to-date DATE | --back N)",
		Short: "make an earlier version of a file current again, as a transaction you can undo",
		Long: `Make an earlier version of a file (see nash history) its content again.
DATE is 2006-01-02, 2006-01-02 15:04, RFC 3339, or an age such as 2h or 3d.
The current content goes to the transaction's undo layer: nash undo brings it back.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			set := 0
			for _, b := range []bool{number > 0, date != "", back > 0} {
				if b {
					set++
				}
			}
			if set != 1 {
				return usageError{"say which version with exactly one of --to-version N, --to-date DATE, --back N"}
			}
			var when time.Time
			if date != "" {
				var err error
				if when, err = parseWhen(date, time.Now()); err != nil {
					return usageError{err.Error()}
				}
			}
			paths, err := absPaths(args)
			if err != nil {
				return err
			}
			sb, err := openSandbox(cmd.Context(), cmd, io)
			if err != nil {
				return wrapSandboxErr(err)
			}
			vs, err := sb.History(paths[0])
			if err != nil {
				return err
			}
			v, err := sandbox.PickVersion(vs, number, when, back)
			if err != nil {
				return err
			}
			tx, err := sb.Rollback(cmd.Context(), paths[0], v)
			if err != nil {
				return wrapSandboxErr(err)
			}
			fmt.Fprintf(io.out, "rolled %s back to version %d (%s) as transaction %s; undo with: nash undo %s\n",
				effects.Quote(paths[0]), v.N, v.Source, tx.ID, tx.ID)
			return nil
		},
	}
	cmd.Flags().IntVar(&number, "to-version", 0, "the version `N` of nash history")
	cmd.Flags().StringVar(&date, "to-date", "", "the version that was current at `DATE`")
	cmd.Flags().IntVar(&back, "back", 0, "`N` versions before the current one")
	return cmd
}

// parseWhen reads a date, a date and time, RFC 3339, or an age (2h, 3d).
func parseWhen(s string, now time.Time) (time.Time, error) {
	for _, layout := range []string{time.RFC3339, "2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	if d, err := parseAge(s); err == nil {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("date %q: want 2006-01-02, 2006-01-02 15:04, RFC 3339, or an age such as 2h or 3d", s)
}
