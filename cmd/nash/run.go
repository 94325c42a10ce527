package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/sandbox"
)

type runOptions struct {
	yes         bool
	json        bool
	net         bool
	unprotected bool
	file        string
}

func newRunCmd(io stdio) *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run [--yes] [--json] [--net] (-- SCRIPT | -f FILE)",
		Short: "run a shell script in the sandbox, show what it changed, then commit or abort",
		Long: `Run a script (bash syntax) in a sandbox: the live files stay untouched while
it runs; afterwards nash shows exactly what changed and asks whether to
commit or abort. Every commit can be undone with 'nash undo'.

The script's exit code becomes nash's exit code.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRun(cmd.Context(), cmd, o, args, io)
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&o.yes, "yes", "y", false, "commit without asking")
	f.BoolVar(&o.json, "json", false, "print one JSON object describing the run")
	f.BoolVar(&o.net, "net", false, "give the script the network (default: loopback only)")
	f.BoolVar(&o.unprotected, "unprotected", false, "run even where the sandbox cannot hold back changes (they happen live)")
	f.StringVarP(&o.file, "file", "f", "", "read the script from `FILE` (- for stdin)")
	return cmd
}

// runResult is the --json output of nash run.
type runResult struct {
	ID          string             `json:"id"`
	ExitCode    int                `json:"exit_code"`
	Committed   bool               `json:"committed"`
	Changes     []jsonChange       `json:"changes"`
	Unprotected []string           `json:"unprotected,omitempty"`
	Unsandboxed bool               `json:"unsandboxed,omitempty"`
	Conflicts   []sandbox.Conflict `json:"conflicts,omitempty"`
	// ScratchFull is the size of the scratch space the script filled:
	// its writes outside the working directory beyond it failed.
	ScratchFull int64 `json:"scratch_full,omitempty"`
	// Summary is the model's summary of a committed change, when a model
	// is configured and answered.
	Summary string `json:"summary,omitempty"`
}

type jsonChange struct {
	Path string       `json:"path"`
	Kind effects.Kind `json:"kind"`
}

func readScript(o runOptions, args []string, io stdio) (string, error) {
	switch {
	case o.file != "" && len(args) > 0:
		return "", usageError{"give the script as arguments or with -f, not both"}
	case o.file == "-":
		b, err := readAll(io.in)
		return string(b), err
	case o.file != "":
		b, err := os.ReadFile(o.file)
		if err != nil {
			return "", fmt.Errorf("read script: %w", err)
		}
		return string(b), nil
	case len(args) == 0:
		return "", usageError{"nothing to run: give a script after -- or a file with -f"}
	}
	return strings.Join(args, " "), nil
}

func runRun(ctx context.Context, cmd *cobra.Command, o runOptions, args []string, io stdio) error {
	script, err := readScript(o, args, io)
	if err != nil {
		return err
	}
	if strings.TrimSpace(script) == "" {
		return usageError{"the script is empty"}
	}
	return runScript(ctx, cmd, o, script, "", io)
}

// runScript is the flow of nash run for a script in hand, shared by the
// commands that build their script (nash group, nash join): the sandboxed
// run, the effect summary, the question (or --yes), the commit and, when a
// model is configured, a summary of the change. prompt, when set, is kept
// in the log as the request that produced the script.
func runScript(ctx context.Context, cmd *cobra.Command, o runOptions, script, prompt string, io stdio) error {
	c, err := loadConfig(os.Getenv)
	if err != nil {
		return err
	}
	limits, err := c.sandboxLimits(os.Getenv)
	if err != nil {
		return err
	}
	sb, err := openSandbox(ctx, cmd, io, append(limits, sandbox.Network(o.net), sandbox.Unprotected(o.unprotected))...)
	if err != nil {
		return wrapSandboxErr(err)
	}
	p, err := sb.Run(ctx, script)
	if err != nil {
		return wrapSandboxErr(err)
	}
	res := runResult{ID: p.ID, ExitCode: p.ExitCode, Unprotected: p.Unprotected, Unsandboxed: p.Unsandboxed, Changes: []jsonChange{}, ScratchFull: p.ScratchFull}
	for _, c := range p.Changes.Changes {
		res.Changes = append(res.Changes, jsonChange{Path: c.Path, Kind: c.Kind})
	}
	msg := io.err // nash's own words go to stderr; the script owns stdout
	if p.Unsandboxed {
		fmt.Fprintln(msg, "nash: ran WITHOUT a sandbox (--unprotected): no summary, nothing to undo")
		return finishRun(o, res, io)
	}
	if len(p.Unprotected) > 0 {
		fmt.Fprintf(msg, "nash: these paths were NOT protected and were changed live: %s\n", quoteAll(p.Unprotected))
	}
	writeLimits(msg, p)
	if p.Changes.Len() == 0 {
		_ = sb.Abort(p.ID)
		if !o.json {
			fmt.Fprintln(msg, "nash: no changes")
		}
		return finishRun(o, res, io)
	}
	if !o.json || !o.yes {
		sum := summaryOptions(msg)
		if err := effects.WriteSummary(msg, p.Changes, sum); err != nil {
			return err
		}
		// Where the run did other than the script's text said, show it
		// loudly next to the summary (invariant 4). A script that does
		// not parse has no prediction: nothing more is shown then.
		if cwd, err := os.Getwd(); err == nil {
			if rep, err := effects.Analyze(script, effects.Dir(cwd), effects.Home(sum.Home)); err == nil {
				if err := effects.WriteSurprises(msg, effects.Compare(rep, p.Changes), sum); err != nil {
					return err
				}
			}
		}
	}
	commit := o.yes
	if !commit {
		commit, err = askCommit(sb, p, io)
		if err != nil {
			_ = sb.Abort(p.ID)
			return err
		}
	}
	if !commit {
		if err := sb.Abort(p.ID); err != nil {
			return err
		}
		if !o.json {
			fmt.Fprintln(msg, "nash: aborted; nothing was changed")
		}
		if err := finishRun(o, res, io); err != nil {
			return err
		}
		return exitError{exitAborted}
	}
	tx, err := sb.Commit(ctx, p.ID, sandbox.CommitOptions{Prompt: prompt})
	if err != nil {
		var ce *sandbox.ConflictError
		var le *sandbox.LockedError
		if errors.As(err, &le) {
			_ = sb.Abort(p.ID)
		}
		if errors.As(err, &ce) {
			_ = sb.Abort(p.ID)
			res.Conflicts = ce.Conflicts
			if o.json {
				_ = finishRun(o, res, io)
				return exitError{exitConflict}
			}
		}
		return wrapSandboxErr(err)
	}
	res.Committed = true
	if !o.json {
		fmt.Fprintf(msg, "nash: committed as transaction %s (undo with: nash undo %s)\n", tx.ID, tx.ID)
	}
	res.Summary = summarizeCommit(ctx, cmd, sb, tx.ID, p.Changes, o.json, io)
	return finishRun(o, res, io)
}

// summarizeCommit asks the configured model for a plain-English summary
// of what transaction id changed, records it with the transaction and
// shows it (unless quiet). It is best effort: with no model configured it
// does nothing at all; a failure is reported in one line and the commit
// stands. It returns the summary, or "".
func summarizeCommit(ctx context.Context, cmd *cobra.Command, sb *sandbox.Sandbox, id string, cs *effects.ChangeSet, quiet bool, io stdio) string {
	model, err := configuredModel(cmd)
	if err == nil && model == "" {
		return ""
	}
	text := ""
	if err == nil {
		text, err = summarizeTx(ctx, model, sb, id, cs)
	}
	if err != nil {
		fmt.Fprintf(io.err, "nash: no change summary: %s\n", oneLine(strings.Join(strings.Fields(err.Error()), " "), 200))
		return ""
	}
	if !quiet {
		fmt.Fprintf(io.err, "nash: summary: %s\n", text)
	}
	return text
}

// configuredModel is the model named by --model, NASH_MODEL or the config
// file, or "" when none is: unlike the shell, a summary never falls back
// to the default model.
func configuredModel(cmd *cobra.Command) (string, error) {
	if m, _ := cmd.Flags().GetString("model"); m != "" {
		return m, nil
	}
	c, err := loadConfig(os.Getenv)
	if err != nil {
		return "", err
	}
	return c.Model, nil
}

// finishRun prints the JSON result if asked and passes the script's exit
// code on.
func finishRun(o runOptions, res runResult, io stdio) error {
	if o.json {
		if err := effects.WriteJSON(io.out, res, false); err != nil {
			return err
		}
	}
	if res.ExitCode != 0 {
		if !o.json {
			// nash's own exit codes are small numbers too: say whose it is.
			fmt.Fprintf(io.err, "nash: the script exited with status %d\n", res.ExitCode)
		}
		return exitError{res.ExitCode}
	}
	return nil
}

// askCommit asks on stderr and reads stdin until the person chooses.
// End of input means abort: nothing is ever committed by default. The
// answer comes through the sandbox (Answers): on a terminal, only what is
// typed after the question counts.
func askCommit(sb *sandbox.Sandbox, p *sandbox.Pending, io stdio) (bool, error) {
	in := bufio.NewReader(sb.Answers())
	for {
		fmt.Fprint(io.err, "commit these changes? [c]ommit, [a]bort, [d]iff: ")
		line, err := in.ReadString('\n')
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "c", "commit", "y", "yes":
			return true, nil
		case "a", "abort", "n", "no":
			return false, nil
		case "d", "diff":
			sandbox.WriteDiff(io.err, sb, p)
			continue
		}
		if err != nil {
			fmt.Fprintln(io.err)
			return false, nil
		}
	}
}

// writeLimits says which of the run's limits it hit, or could not have.
func writeLimits(w io.Writer, p *sandbox.Pending) {
	if p.ScratchFull > 0 {
		fmt.Fprintf(w, "nash: the script filled its scratch space (%d MiB): what it wrote outside the working directory beyond that failed with \"No space left on device\"; sandbox.scratch_size in the config allows more\n", p.ScratchFull>>20)
	}
	for _, l := range p.Unlimited {
		fmt.Fprintf(w, "nash: this system could not cap the run's %s\n", l)
	}
}

func quoteAll(ps []string) string {
	q := make([]string, len(ps))
	for i, p := range ps {
		q[i] = effects.Quote(p)
	}
	return strings.Join(q, ", ")
}

// lstatReason says in a few words why a path cannot be used.
func lstatReason(err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return "no such file"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// showScript prints the script nash is about to run, escaped, on stderr:
// nothing hides what will run.
func showScript(io stdio, script string) {
	fmt.Fprintf(io.err, "nash: running this script in the sandbox:\n%s\n", indent(effects.EscapeText(script)))
}
