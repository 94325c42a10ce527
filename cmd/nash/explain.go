package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nash-shell/nash/effects"
)

// explainOptions are the flags of nash explain.
type explainOptions struct {
	json bool
	file string
}

func newExplainCmd(_ *options, io stdio) *cobra.Command {
	var opts explainOptions
	cmd := &cobra.Command{
		Use:   "explain [--json] (SCRIPT | -f FILE)",
		Short: "show what a script would run and touch, without running it",
		Long: "explain parses a shell script and prints what it would do: the commands it can run,\n" +
			"the paths it reads, writes, creates and deletes, its network use, privilege and risk.\n" +
			"Nothing is run. Quote the script, or put it after --: nash explain -- rm -rf build",
		RunE: func(cmd *cobra.Command, args []string) error {
			return runExplain(cmd.Context(), opts, args, io)
		},
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the report as JSON")
	cmd.Flags().StringVarP(&opts.file, "file", "f", "", "read the script from `FILE` (- for standard input)")
	return cmd
}

// runExplain prints the static report of a script.
func runExplain(ctx context.Context, opts explainOptions, args []string, io stdio) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var script string
	switch {
	case opts.file != "" && len(args) > 0:
		return usageError{"explain: give a script or -f FILE, not both"}
	case opts.file == "-":
		b, err := readAllLimited(io.in)
		if err != nil {
			return fmt.Errorf("explain: read standard input: %w", err)
		}
		script = string(b)
	case opts.file != "":
		f, err := os.Open(opts.file)
		if err != nil {
			return fmt.Errorf("explain: %w", err)
		}
		b, err := readAllLimited(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("explain: read %s: %w", effects.Quote(opts.file), err)
		}
		script = string(b)
	case len(args) == 0:
		return usageError{"explain: missing SCRIPT (or -f FILE)"}
	default:
		script = strings.Join(args, " ")
	}
	var aopts []effects.Option
	if wd, err := os.Getwd(); err == nil {
		aopts = append(aopts, effects.Dir(wd))
	}
	if home, err := os.UserHomeDir(); err == nil {
		aopts = append(aopts, effects.Home(home))
	}
	rep, err := effects.Analyze(script, aopts...)
	if err != nil {
		return fmt.Errorf("explain: %w", err)
	}
	if opts.json {
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return fmt.Errorf("explain: encode report: %w", err)
		}
		b = append(effects.EscapeJSON(b), '\n')
		if _, err := io.out.Write(b); err != nil {
			return fmt.Errorf("explain: write report: %w", err)
		}
		return nil
	}
	return writeReport(io.out, script, rep)
}

// maxScriptBytes bounds the script explain reads.
const maxScriptBytes = 4 << 20

// readAllLimited reads r up to maxScriptBytes.
func readAllLimited(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxScriptBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxScriptBytes {
		return nil, fmt.Errorf("script larger than %d bytes", maxScriptBytes)
	}
	return b, nil
}

// writeReport prints the script and its report for people.
func writeReport(w io.Writer, script string, rep *effects.Report) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw, "script:")
	for _, line := range strings.Split(strings.TrimRight(effects.EscapeText(script), "\n"), "\n") {
		fmt.Fprintf(bw, "  %s\n", line)
	}
	if err := effects.WriteReport(bw, rep, effects.SummaryOptions{MaxLines: -1}); err != nil {
		return fmt.Errorf("explain: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("explain: write report: %w", err)
	}
	return nil
}
