package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/internal/doctor"
	"github.com/nash-shell/nash/internal/indexrpc"
	"github.com/nash-shell/nash/planner"
	"github.com/nash-shell/nash/sandbox"
)

func newDoctorCmd(g *options, io stdio) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "doctor [--json]",
		Short: "check what nash needs on this machine, and say how to fix what is missing",
		Long: `doctor checks what nash needs: user namespaces (naming Ubuntu's AppArmor
restriction and its fix), overlayfs, bash, free space for undo layers, a real
sandboxed run whose write must be held back until commit, the configured
model answering, and the index. Each problem comes with what to do about it.
It exits 1 when what running scripts in the sandbox needs is missing (a
model and an index are optional).`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDoctor(cmd.Context(), g, asJSON, io)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the results as JSON")
	return cmd
}

// runDoctor runs the checks and prints their results.
func runDoctor(ctx context.Context, g *options, asJSON bool, io stdio) error {
	exe, _ := os.Executable()
	cfg := doctor.Config{
		Machine:  doctor.Host(),
		StateDir: g.stateDir,
		Exe:      exe,
		Sandbox:  sandboxProbe,
		Model:    modelProbe(g, g.planModel()),
		Index:    func(ctx context.Context) (doctor.IndexState, error) { return indexProbe(ctx, g) },
	}
	results := doctor.Run(ctx, doctor.Checks(cfg))
	if err := ctx.Err(); err != nil {
		return err
	}
	if asJSON {
		if err := effects.WriteJSON(io.out, results, true); err != nil {
			return err
		}
	} else {
		writeDoctor(io.out, results)
	}
	if doctor.Worst(sandboxResults(results)) == doctor.Fail {
		return exitError{exitFailure}
	}
	return nil
}

// sandboxResults are the results of what running scripts needs: all but
// the model and the index, without which nash is still a sandboxed shell
// with undo.
func sandboxResults(results []doctor.Result) []doctor.Result {
	var out []doctor.Result
	for _, r := range results {
		if r.Check != "model" && r.Check != "index" {
			out = append(out, r)
		}
	}
	return out
}

// writeDoctor prints one line per check, and under a problem what to do.
func writeDoctor(w io.Writer, results []doctor.Result) {
	for _, r := range results {
		fmt.Fprintf(w, "%-4s  %-9s %s\n", r.Status, r.Check, effects.EscapeLine(r.Detail))
		for _, f := range r.Fix {
			fmt.Fprintf(w, "                fix: %s\n", effects.EscapeLine(f))
		}
	}
	switch {
	case doctor.Worst(sandboxResults(results)) == doctor.Fail:
		fmt.Fprintln(w, "nash cannot run scripts in its sandbox here: see the fixes above")
	case doctor.Worst(results) == doctor.Fail:
		fmt.Fprintln(w, "nash runs commands in its sandbox here; requests in English need a model: see the fixes above")
	case doctor.Worst(results) == doctor.Warn:
		fmt.Fprintln(w, "nash works here; the warnings above say what could be better")
	default:
		fmt.Fprintln(w, "nash has everything it needs")
	}
}

// modelProbe is the model check's view of model: how to list its
// provider's models, or why no planner can be built for it.
func modelProbe(g *options, model string) doctor.ModelConfig {
	mc := doctor.ModelConfig{Spec: model}
	p, err := planner.New(g.plannerOptions(model)...)
	if err != nil {
		mc.Err = err
		return mc
	}
	mc.List = p.ListModels
	return mc
}

// sandboxProbe runs a script that writes a file in a real sandbox, in a
// directory and state directory of its own, and checks that the write
// was seen and held back from the live directory until commit, and that
// aborting leaves the directory as it was.
func sandboxProbe(ctx context.Context) error {
	tmp, err := os.MkdirTemp("", "nash-doctor-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	work := filepath.Join(tmp, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		return err
	}
	var out bytes.Buffer
	sb, err := sandbox.New(ctx, sandbox.StateDir(filepath.Join(tmp, "state")), sandbox.Dir(work),
		sandbox.Stdio(strings.NewReader(""), &out, &out))
	if err != nil {
		return err
	}
	defer sb.Close()
	p, err := sb.Run(ctx, "echo held > probe.txt")
	if err != nil {
		return err
	}
	defer sb.Abort(p.ID)
	probe := filepath.Join(work, "probe.txt")
	switch {
	case p.ExitCode != 0:
		return fmt.Errorf("the probe script exited with status %d: %s", p.ExitCode, strings.TrimSpace(out.String()))
	case p.Unsandboxed || len(p.Unprotected) > 0:
		return errors.New("the probe ran without the sandbox holding its change back")
	case p.Changes == nil:
		return errors.New("the sandbox saw no change, want the probe's one file")
	case p.Changes.Len() != 1 || p.Changes.Changes[0].Path != probe:
		return fmt.Errorf("the sandbox saw %d changes, want the probe's one file", p.Changes.Len())
	}
	if _, err := os.Lstat(probe); err == nil {
		return errors.New("the probe's write reached the live directory before commit")
	}
	if err := sb.Abort(p.ID); err != nil {
		return fmt.Errorf("abort the probe: %w", err)
	}
	return nil
}

// indexProbe reports on the index: whether there is one, and how many
// files it holds, from its server's status.
func indexProbe(ctx context.Context, g *options) (doctor.IndexState, error) {
	c, err := indexClient(indexOpts(g, ""))
	if err != nil {
		return doctor.IndexState{}, err
	}
	st := doctor.IndexState{Dir: c.Dir}
	if !c.Exists() {
		return st, nil
	}
	st.Exists = true
	s, err := c.Status(ctx)
	if errors.Is(err, indexrpc.ErrEmpty) {
		return st, nil
	}
	if err != nil {
		return st, indexError("index status", err)
	}
	st.Files = s.Files
	return st, nil
}

// firstStartFile marks in the state dir that the first interactive start
// has checked the model.
const firstStartFile = "first-start"

// firstStart is the shell's first interactive start: when no model
// answers, a few lines say how to set one up (nash doctor's model check).
// It runs once per state dir, after the first prompt is drawn.
func firstStart(g *options) func(ctx context.Context) string {
	marker := filepath.Join(g.stateDir, firstStartFile)
	if _, err := os.Stat(marker); err == nil {
		return nil
	}
	model := g.planModel()
	return func(ctx context.Context) string {
		r := doctor.CheckModel(ctx, modelProbe(g, model))
		if ctx.Err() != nil {
			return "" // nash is ending: check again next time
		}
		if err := os.MkdirAll(g.stateDir, 0o700); err == nil {
			_ = os.WriteFile(marker, []byte(r.Status.String()+"\n"), 0o600)
		}
		if r.Status == doctor.OK {
			return ""
		}
		var b strings.Builder
		fmt.Fprintf(&b, "no model to plan requests: %s\n", effects.EscapeLine(r.Detail))
		for i, f := range r.Fix {
			if i == 4 {
				break
			}
			fmt.Fprintf(&b, "  %s\n", effects.EscapeLine(f))
		}
		b.WriteString("commands still run sandboxed, with undo; :model NAME switches, nash doctor checks the rest")
		return b.String()
	}
}
