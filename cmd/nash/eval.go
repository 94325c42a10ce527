package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/internal/evalharness"
	"github.com/nash-shell/nash/planner"
	"github.com/nash-shell/nash/sandbox"
)

// evalOptions are the flags of nash eval intercode-alfa, plus what tests
// swap in.
type evalOptions struct {
	data       string
	model      string
	json       bool
	limit      int
	judge      string // exact, similar or model; empty: similar
	judgeModel string // the model judge's spec; empty: the planner's

	getenv      func(string) string // provider settings and NASH_MODEL
	workDir     string              // where fixtures go; empty: $TMPDIR
	plannerOpts []planner.Option    // tests add a replay provider here
}

func newEvalCmd(g *options, io stdio) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "eval BENCHMARK",
		Short: "measure the planner with a model on a benchmark",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError{fmt.Sprintf("eval: unknown benchmark %q (known: intercode-alfa)", args[0])}
			}
			return usageError{"eval: name a benchmark: nash eval intercode-alfa --data DIR"}
		},
	}
	var o evalOptions
	ic := &cobra.Command{
		Use:   "intercode-alfa --data DIR [--model provider:model] [--judge exact|similar|model] [--json] [--limit N]",
		Short: "score the planner on InterCode-ALFA's 300 tasks by execution equivalence",
		Long: `Run each of InterCode-ALFA's 300 natural-language tasks through the planner,
then run the predicted command and the task's gold command on the task's
fixture in the sandbox (nothing on disk changes), and count the prediction
correct when both runs change the same files in the same way and a judge
finds their output (standard output and error together) equivalent.
Prints the accuracy overall and per difficulty, and the judge used;
progress goes to standard error. Tasks whose gold command needs a program
not installed here are skipped and counted apart.

Judges (--judge):
  similar  the default: the same records, in any order, each with more or
           fewer columns (ls and ls -l, md5sum with or without names): more
           than half of each output, by weighted tokens, matches the other;
           lines that only name files both runs changed or that were there
           before (cp -v, tar -v) are set aside
  exact    outputs equal but for trailing blanks
  model    ask a model whether the outputs answer the task alike, as the
           benchmark's own judge does (--judge-model, default the planner's)

DIR holds nl2bash_fs_{1..5}.json, setup_nl2b_fs_{1..5}.sh and the
Dockerfiles. The model is --model, else NASH_MODEL, else
` + planner.DefaultSpec + `.

Published figures for scale: gpt-4o about 74%, qwen2.5-coder 7B about 62%,
judged by GPT-4 where outputs differ. The benchmark's own second gold
commands score about 85% with the similar judge and 61% with the exact one.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.getenv = g.getenv
			if o.model == "" {
				o.model = g.model
			}
			for _, m := range []string{o.model, o.judgeModel} {
				if _, err := planner.ParseSpec(m); m != "" && err != nil {
					return usageError{err.Error()}
				}
			}
			return runEvalInterCode(cmd.Context(), o, io)
		},
	}
	f := ic.Flags()
	f.StringVar(&o.data, "data", "", "the InterCode-ALFA data `DIR`")
	f.StringVar(&o.model, "model", "", "the model, as `provider:model` (default $NASH_MODEL, else "+planner.DefaultSpec+")")
	f.BoolVar(&o.json, "json", false, "print the result, every task included, as JSON")
	f.IntVar(&o.limit, "limit", 0, "evaluate only the first `N` tasks (0: all)")
	f.StringVar(&o.judge, "judge", "similar", "how outputs are compared: exact, `similar` or model")
	f.StringVar(&o.judgeModel, "judge-model", "", "the model judge's model, as `provider:model` (default the planner's)")
	cmd.AddCommand(ic)
	return cmd
}

// evalJudge returns the judge o asks for. The model judge uses
// --judge-model, else the planner's spec, through the same providers as
// the planner.
func evalJudge(o evalOptions, plannerSpec string, getenv func(string) string) (evalharness.Judge, error) {
	switch o.judge {
	case "exact":
		return evalharness.Exact(), nil
	case "model":
		s := o.judgeModel
		if s == "" {
			s = plannerSpec
		}
		spec, err := planner.ParseSpec(s)
		if err != nil {
			return nil, err
		}
		m, _, err := planner.NewModel(spec, getenv, &http.Client{Timeout: 2 * time.Minute})
		if err != nil {
			return nil, err
		}
		return evalharness.Model(m, spec.String()), nil
	}
	return evalharness.Similar(), nil
}

// plannerError is a planner that cannot be built or used (exit 5).
type plannerError struct{ err error }

func (e plannerError) Error() string { return e.err.Error() }
func (e plannerError) Unwrap() error { return e.err }

// runEvalInterCode runs the evaluation and prints its result.
func runEvalInterCode(ctx context.Context, o evalOptions, io stdio) error {
	if o.data == "" {
		return usageError{"eval intercode-alfa: --data DIR is required (the intercode-alfa data directory)"}
	}
	if o.limit < 0 {
		return usageError{"eval intercode-alfa: --limit must be 0 or more"}
	}
	switch o.judge {
	case "", "exact", "similar", "model":
	default:
		return usageError{fmt.Sprintf("eval intercode-alfa: unknown judge %q (want exact, similar or model)", o.judge)}
	}
	if _, err := os.Stat(o.data); err != nil {
		return fmt.Errorf("eval intercode-alfa: %w", err)
	}
	getenv := o.getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	spec := o.model
	if spec == "" {
		spec = getenv("NASH_MODEL")
	}
	judge, err := evalJudge(o, spec, getenv)
	if err != nil {
		return plannerError{err}
	}
	// No memory: remembered requests would leak answers between runs and
	// make the figures depend on the person's history.
	opts := append([]planner.Option{planner.ModelSpec(spec), planner.Getenv(getenv)}, o.plannerOpts...)
	p, err := planner.New(opts...)
	if err != nil {
		return plannerError{err}
	}
	fmt.Fprintf(io.err, "InterCode-ALFA with %s, judge %s\n", p.Model(), judge.Name())
	res, err := evalharness.Run(ctx, evalharness.Options{
		Data:    o.data,
		Planner: p,
		WorkDir: o.workDir,
		Limit:   o.limit,
		Judge:   judge,
		Progress: func(r evalharness.TaskResult, done, total int) {
			verdict := "ok"
			switch {
			case r.Skipped:
				verdict = "skipped  " + r.Reason
			case !r.Correct:
				verdict = "WRONG  " + r.Reason
			}
			fmt.Fprintf(io.err, "[%*d/%d] %-7s %s\n", len(fmt.Sprint(total)), done, total, r.ID, effects.EscapeLine(verdict))
		},
	})
	if res != nil && res.Model == "" {
		res.Model = p.Model()
	}
	if res != nil && res.Judge == "" {
		res.Judge = judge.Name()
	}
	var ue *sandbox.UnavailableError
	switch {
	case err == nil:
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		if res != nil && len(res.Tasks) > 0 {
			printEval(io, res, o.json)
		}
		return err
	case errors.Is(err, planner.ErrNoProvider):
		return plannerError{err}
	case errors.As(err, &ue):
		return err
	default:
		return err
	}
	printEval(io, res, o.json)
	return nil
}

// evalJSON is the --json output.
type evalJSON struct {
	Benchmark    string                   `json:"benchmark"`
	Model        string                   `json:"model"`
	Judge        string                   `json:"judge"`
	Overall      scoreJSON                `json:"overall"`
	ByDifficulty []scoreJSON              `json:"by_difficulty"`
	Tasks        []evalharness.TaskResult `json:"tasks"`
}

type scoreJSON struct {
	Difficulty *int    `json:"difficulty,omitempty"`
	Name       string  `json:"name,omitempty"`
	Correct    int     `json:"correct"`
	Total      int     `json:"total"`
	Accuracy   float64 `json:"accuracy"`
}

// difficultyName names InterCode-ALFA's difficulty levels.
func difficultyName(d int) string {
	switch d {
	case 0:
		return "easy"
	case 1:
		return "medium"
	case 2:
		return "hard"
	}
	return fmt.Sprintf("level %d", d)
}

func printEval(io stdio, res *evalharness.Result, asJSON bool) {
	if asJSON {
		out := evalJSON{
			Benchmark: "intercode-alfa",
			Model:     res.Model,
			Judge:     res.Judge,
			Overall:   scoreJSON{Correct: res.Overall.Correct, Total: res.Overall.Total, Accuracy: res.Overall.Accuracy()},
			Tasks:     res.Tasks,
		}
		for _, d := range res.ByDifficulty {
			lvl := d.Difficulty
			out.ByDifficulty = append(out.ByDifficulty, scoreJSON{
				Difficulty: &lvl, Name: difficultyName(lvl),
				Correct: d.Correct, Total: d.Total, Accuracy: d.Accuracy(),
			})
		}
		if out.Tasks == nil {
			out.Tasks = []evalharness.TaskResult{}
		}
		_ = effects.WriteJSON(io.out, out, true)
		return
	}
	fmt.Fprintf(io.out, "InterCode-ALFA, model %s, judge %s\n", effects.EscapeLine(res.Model), effects.EscapeLine(res.Judge))
	line := func(name string, s evalharness.Score) {
		fmt.Fprintf(io.out, "  %-14s %5.1f%%  (%d/%d)\n", name, 100*s.Accuracy(), s.Correct, s.Total)
	}
	line("overall", res.Overall)
	for _, d := range res.ByDifficulty {
		line(fmt.Sprintf("%s (%d)", difficultyName(d.Difficulty), d.Difficulty), d.Score)
	}
	if res.Skipped > 0 {
		fmt.Fprintf(io.out, "  %d task(s) skipped: their gold command needs a program not installed here\n", res.Skipped)
	}
	var noScript, unstable int
	for _, t := range res.Tasks {
		if t.NoScript {
			noScript++
		}
		if t.Unstable && !t.Correct {
			unstable++
		}
	}
	if noScript > 0 {
		fmt.Fprintf(io.out, "  %d task(s) got no script from the planner\n", noScript)
	}
	if unstable > 0 {
		fmt.Fprintf(io.out, "  %d wrong task(s) have a gold command whose result varies between runs\n", unstable)
	}
}
