package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/sandbox"
	"github.com/nash-shell/nash/sandbox/egress"
)

type runOptions struct {
	yes         bool
	json        bool
	net         string // --net: "" none, "*" the host's network, else HOST[:PORT] rules
	unprotected bool
	file        string
}

func newRunCmd(io stdio) *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run [--yes] [--json] [--net[=HOST[:PORT],...]] (-- SCRIPT | -f FILE)",
		Short: "run a shell script in the sandbox, show what it changed, then commit or abort",
		Long: `Run a script (bash syntax) in a sandbox: the live files stay untouched while
it runs; afterwards nash shows exactly what changed and asks whether to
commit or abort. Every commit can be undone with 'nash undo'.

By default the script reaches nothing outside the sandbox: every attempt
(DNS lookup, connection) is recorded and refused, and the summary lists
them; nash then offers to run it again with those destinations allowed.
--net=HOST[:PORT],... allows those destinations (*.example.com: any name
below example.com; an address; a port or any), for every program; --net
alone gives the script the host's network, all of it, unwatched. The
config file's net: section allows or denies destinations for every run or
per directory; --yes never allows what the flag or the config did not.

The script's exit code becomes nash's exit code.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRun(cmd.Context(), cmd, o, args, io)
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&o.yes, "yes", "y", false, "commit without asking")
	f.BoolVar(&o.json, "json", false, "print one JSON object describing the run")
	f.StringVar(&o.net, "net", "", "allow these destinations (`HOST[:PORT],...`); --net alone: the host's whole network")
	f.Lookup("net").NoOptDefVal = netAllFlag
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
	// Summary is the model's summary of a committed change, when a model
	// is configured and answered.
	Summary string `json:"summary,omitempty"`
	// Network lists what the run tried to reach, allowed or not;
	// NetworkError says why that could not be watched.
	Network      []egress.Contact `json:"network,omitempty"`
	NetworkError string           `json:"network_error,omitempty"`
}

type jsonChange struct {
	Path string       `json:"path"`
	Kind effects.Kind `json:"kind"`
	// A renamed directory moved from From to To (its Path).
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
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
	cfg, err := loadConfig(os.Getenv)
	if err != nil {
		return err
	}
	cwd, _ := os.Getwd()
	plan, err := resolveNet(o.net, cfg.Net, cwd)
	if err != nil {
		return err
	}
	in := bufio.NewReader(io.in)
	msg := io.err // nash's own words go to stderr; the script owns stdout
	asked := map[string]bool{}
	if !o.yes && !plan.host {
		// Before the run: the destinations the script's text names, in
		// one question. Declined ones are not asked about again.
		var offer []egress.Rule
		for _, r := range egress.Predict(script, cwd) {
			if !asked[r.String()] && !plan.covers(r) {
				asked[r.String()] = true
				offer = append(offer, r)
			}
		}
		if len(offer) > 0 {
			fmt.Fprintf(msg, "network: the script names %d destination(s); it reaches none unless allowed:\n", len(offer))
			for i, r := range offer {
				fmt.Fprintf(msg, "  %2d %s\n", i+1, effects.Quote(r.String()))
			}
			plan = plan.allow(askNetwork(in, msg, "allow them for this run?", offer))
		}
	}
	var sb *sandbox.Sandbox
	var p *sandbox.Pending
	for {
		sb, err = openSandbox(ctx, cmd, io, append(plan.options(), sandbox.Unprotected(o.unprotected), sandbox.Warn(warnUnwritable(io.err)))...)
		if err != nil {
			return wrapSandboxErr(err)
		}
		p, err = sb.Run(ctx, script)
		if err != nil {
			return wrapSandboxErr(err)
		}
		if p.Unsandboxed {
			break
		}
		if !o.json || !o.yes {
			if err := writeRunSummary(msg, script, p); err != nil {
				return err
			}
		}
		// One question for every destination the run was refused,
		// asked once each: allowing runs the script again with them.
		if o.yes {
			break
		}
		var offer []egress.Rule
		for _, r := range deniedRules(p.Network) {
			if !asked[r.String()] {
				asked[r.String()] = true
				offer = append(offer, r)
			}
		}
		chosen := askNetwork(in, msg, "allow and run again?", offer)
		if len(chosen) == 0 {
			break
		}
		if err := sb.Abort(p.ID); err != nil {
			return err
		}
		_ = sb.Close()
		plan = plan.allow(chosen)
		names := make([]string, len(chosen))
		for i, r := range chosen {
			names[i] = effects.Quote(r.String())
		}
		fmt.Fprintf(msg, "nash: running the script again with %s allowed; the first run's changes are discarded\n", strings.Join(names, ", "))
	}
	res := runResult{ID: p.ID, ExitCode: p.ExitCode, Unprotected: p.Unprotected, Unsandboxed: p.Unsandboxed, Changes: []jsonChange{},
		Network: p.Network, NetworkError: p.NetworkError}
	for _, c := range p.Changes.Changes {
		jc := jsonChange{Path: c.Path, Kind: c.Kind}
		if c.Kind == effects.Renamed {
			jc.From, jc.To = c.From, c.Path
		}
		res.Changes = append(res.Changes, jc)
	}
	if p.Unsandboxed {
		fmt.Fprintln(msg, "nash: ran WITHOUT a sandbox (--unprotected): no summary, nothing to undo")
		return finishRun(o, res, io)
	}
	if len(p.Unprotected) > 0 {
		fmt.Fprintf(msg, "nash: these paths were NOT protected and were changed live: %s\n", quoteAll(p.Unprotected))
	}
	if p.Changes.Len() == 0 {
		if !reachedNetwork(p) {
			_ = sb.Abort(p.ID)
			if !o.json {
				fmt.Fprintln(msg, "nash: no changes")
			}
			return finishRun(o, res, io)
		}
		// Nothing changed here, but the run reached the network: that is
		// kept in the history, as a transaction with no file changes.
		tx, err := sb.Commit(ctx, p.ID, sandbox.CommitOptions{Prompt: prompt})
		if err != nil {
			_ = sb.Abort(p.ID)
			return wrapSandboxErr(err)
		}
		if !o.json {
			fmt.Fprintf(msg, "nash: no file changes; what the run reached is kept as transaction %s (nash show %s)\n", tx.ID, tx.ID)
		}
		return finishRun(o, res, io)
	}
	commit := o.yes
	if !commit {
		commit, err = askCommit(sb, p, in, io)
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

// warnUnwritable says, before the script starts, what it may not be able
// to change in the sandbox as it could outside, and why.
func warnUnwritable(w io.Writer) func([]sandbox.Warning) {
	return func(ws []sandbox.Warning) {
		for _, x := range ws {
			fmt.Fprintf(w, "nash: warning: %s: %s\n", effects.Quote(x.Path), effects.EscapeLine(x.Reason))
		}
	}
}

// writeRunSummary shows what a run changed (and where that differs from
// what the script's text predicted) and what it tried to reach.
func writeRunSummary(w io.Writer, script string, p *sandbox.Pending) error {
	sum := summaryOptions(w)
	if p.Changes.Len() > 0 {
		if err := effects.WriteSummary(w, p.Changes, sum); err != nil {
			return err
		}
		// Where the run did other than the script's text said, show it
		// loudly next to the summary (invariant 4). A script that does
		// not parse has no prediction: nothing more is shown then.
		if cwd, err := os.Getwd(); err == nil {
			if rep, err := effects.Analyze(script, effects.Dir(cwd), effects.Home(sum.Home)); err == nil {
				if err := effects.WriteSurprises(w, effects.Compare(rep, p.Changes), sum); err != nil {
					return err
				}
			}
		}
	}
	writeNetSummary(w, p)
	return nil
}

// reachedNetwork reports whether a run reached some destination.
func reachedNetwork(p *sandbox.Pending) bool {
	for _, c := range p.Network {
		if c.Allowed && c.Proto == egress.ProtoTCP && c.Error == "" {
			return true
		}
	}
	return false
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
		enc := json.NewEncoder(io.out)
		if err := enc.Encode(res); err != nil {
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
// End of input means abort: nothing is ever committed by default.
func askCommit(sb *sandbox.Sandbox, p *sandbox.Pending, in *bufio.Reader, io stdio) (bool, error) {
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
