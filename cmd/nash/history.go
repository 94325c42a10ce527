package main

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/sandbox"
	"github.com/nash-shell/nash/shell"
)

func newHistoryCmd(g *options, io stdio) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "history PATH [--json]",
		Short: "list the versions of a file that nash knows (undo layers, recorded changes, current)",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			paths, err := absPaths(args)
			if err != nil {
				return err
			}
			sb, err := openSandbox(cmd.Context(), g, io)
			if err != nil {
				return err
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

// rollbackOptions are the flags of nash rollback.
type rollbackOptions struct {
	run    runOptions // --yes, --json
	number int
	date   string
	back   int
}

func newRollbackCmd(g *options, io stdio) *cobra.Command {
	var o rollbackOptions
	cmd := &cobra.Command{
		Use:   "rollback PATH (--to-version N | --to-date DATE | --back N) [--yes] [--json]",
		Short: "make an earlier version of a file current again, as a transaction you can undo",
		Long: `Make an earlier version of a file (see nash history) its content again.
DATE is 2006-01-02, 2006-01-02 15:04, RFC 3339, or an age such as 2h or 3d.
nash shows the change and asks, as after a run: commit or abort (--yes
commits). The current content goes to the transaction's undo layer: nash
undo brings it back.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRollback(cmd.Context(), g, o, args[0], io)
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.number, "to-version", 0, "the version `N` of nash history")
	f.StringVar(&o.date, "to-date", "", "the version that was current at `DATE`")
	f.IntVar(&o.back, "back", 0, "`N` versions before the current one")
	addRunFlags(f, &o.run)
	return cmd
}

// runRollback stages the chosen version as a pending change and takes it
// through the run flow: the effect summary, then commit or abort.
func runRollback(ctx context.Context, g *options, o rollbackOptions, arg string, io stdio) error {
	set := 0
	for _, b := range []bool{o.number > 0, o.date != "", o.back > 0} {
		if b {
			set++
		}
	}
	if set != 1 {
		return usageError{"say which version with exactly one of --to-version N, --to-date DATE, --back N"}
	}
	var when time.Time
	if o.date != "" {
		var err error
		if when, err = parseWhen(o.date, time.Now()); err != nil {
			return usageError{err.Error()}
		}
	}
	paths, err := absPaths([]string{arg})
	if err != nil {
		return err
	}
	path := paths[0]
	title := "nash rollback " + effects.Quote(path)
	switch {
	case o.number > 0:
		title += fmt.Sprintf(" --to-version %d", o.number)
	case o.back > 0:
		title += fmt.Sprintf(" --back %d", o.back)
	default:
		title += " --to-date " + effects.Quote(o.date)
	}
	stage := func(ctx context.Context) (shell.Sandbox, *sandbox.Pending, error) {
		sb, err := openSandbox(ctx, g, io)
		if err != nil {
			return nil, nil, err
		}
		vs, err := sb.History(path)
		if err != nil {
			return nil, nil, err
		}
		v, err := sandbox.PickVersion(vs, o.number, when, o.back)
		if err != nil {
			return nil, nil, err
		}
		fmt.Fprintf(io.err, "nash: rolling %s back to version %d (%s)\n", effects.Quote(path), v.N, v.Source)
		p, err := sb.StageVersion(ctx, path, v)
		return sb, p, err
	}
	cfg, err := shellConfig(g, io)
	if err != nil {
		return err
	}
	opts := shell.LineOptions{Yes: o.run.yes, JSON: o.run.json}
	return shell.RunStaged(ctx, cfg, shell.Staged{Title: title, Stage: stage}, io.in, io.out, io.err, opts)
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
