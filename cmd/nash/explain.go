package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/planner"
	"github.com/nash-shell/nash/shell"
)

// explainOptions are the flags of nash explain.
type explainOptions struct {
	json bool
	file string
	// model is --model: "" without it, configuredModel for the model in
	// use, or the provider:model given as --model=SPEC.
	model string
}

// configuredModel is --model given without a value: explain's --model
// shadows the global --model SPEC, so that "nash explain --model rm -r x"
// does not read rm as the model.
const configuredModel = "(configured)"

func newExplainCmd(g *options, io stdio) *cobra.Command {
	var opts explainOptions
	cmd := &cobra.Command{
		Use:   "explain [--json] [--model] (SCRIPT | -f FILE)",
		Short: "show what a script would run and touch, without running it",
		Long: "explain parses a shell script and prints what it would do: the commands it can run,\n" +
			"the paths it reads, writes, creates and deletes, its network use, privilege and risk.\n" +
			"Nothing is run. Quote the script, or put it after --: nash explain -- rm -rf build\n" +
			"--model adds the model's explanation, step by step, grounded in that report.",
		RunE: func(cmd *cobra.Command, args []string) error {
			return runExplain(cmd.Context(), g, opts, args, io)
		},
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the report as JSON")
	cmd.Flags().StringVarP(&opts.file, "file", "f", "", "read the script from `FILE` (- for standard input)")
	cmd.Flags().StringVar(&opts.model, "model", "", "add the model's explanation (--model=provider:model for another model than the configured one)")
	cmd.Flags().Lookup("model").NoOptDefVal = configuredModel
	return cmd
}

// runExplain prints the static report of a script.
func runExplain(ctx context.Context, g *options, opts explainOptions, args []string, io stdio) error {
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
	if opts.model != "" {
		return explainWithModel(ctx, g, opts, script, rep, io)
	}
	if opts.json {
		return writeJSON(io.out, rep)
	}
	return writeReport(io.out, script, rep)
}

// writeJSON writes v as indented JSON, escaped for a terminal.
func writeJSON(w io.Writer, v any) error {
	if err := effects.WriteJSON(w, v, true); err != nil {
		return fmt.Errorf("explain: write report: %w", err)
	}
	return nil
}

// modelExplanation is nash explain --model --json: the static report and
// the model's explanation grounded in it.
type modelExplanation struct {
	Report   *effects.Report `json:"report"`
	Model    string          `json:"model"`
	Summary  string          `json:"summary"`
	Steps    []planner.Step  `json:"steps"`
	Warnings []string        `json:"warnings,omitempty"`
	Usage    planner.Usage   `json:"usage"`
}

// explainWithModel prints the static report, then asks the model to
// explain the script step by step (its text shown as it arrives on a
// terminal) and prints that. A model that fails leaves the report printed
// and exits 5.
func explainWithModel(ctx context.Context, g *options, opts explainOptions, script string, rep *effects.Report, io stdio) error {
	model := opts.model
	if model == configuredModel {
		model = g.planModel()
	}
	if !opts.json {
		if err := writeReport(io.out, script, rep); err != nil {
			return err
		}
	}
	p, err := planner.New(g.plannerOptions(model)...)
	if err != nil {
		return plannerError{err}
	}
	req := planner.Request{}
	if wd, err := os.Getwd(); err == nil {
		req.Cwd = wd
	}
	var live *shell.Live
	if isTerminal(io.err) {
		live = shell.StartLive(io.err, g.color, termWidth(io.err), "explaining")
		req.Stream = live.Progress
	}
	x, err := p.Explain(ctx, req, script)
	if live != nil {
		live.End()
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return plannerError{err}
	}
	if opts.json {
		return writeJSON(io.out, modelExplanation{Report: rep, Model: model, Summary: x.Summary, Steps: x.Steps, Warnings: x.Warnings, Usage: x.Usage})
	}
	bw := bufio.NewWriter(io.out)
	fmt.Fprintf(bw, "the model's explanation (%s):\n", effects.Escape(model))
	if s := strings.TrimSpace(x.Summary); s != "" {
		fmt.Fprintf(bw, "  %s\n", strings.ReplaceAll(effects.EscapeText(s), "\n", "\n  "))
	}
	for _, s := range x.Steps {
		fmt.Fprintf(bw, "  %s\n      %s\n", effects.EscapeLine(strings.TrimSpace(s.Code)), effects.EscapeLine(strings.TrimSpace(s.Explanation)))
	}
	for _, w := range x.Warnings {
		fmt.Fprintf(bw, "  warning: %s\n", effects.EscapeLine(w))
	}
	if u := x.Usage; u.Calls > 0 {
		fmt.Fprintf(bw, "  (%s)\n", tokenText(usageTokens(u)))
	}
	return bw.Flush()
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
