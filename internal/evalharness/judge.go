package evalharness

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/tmc/langchaingo/llms"
)

// Outputs is what a Judge compares: the outputs of the gold and the
// predicted runs of one task, after their file system changes were found
// to match.
type Outputs struct {
	Query     string // the task
	Gold      string // the gold command
	Predicted string // the predicted script
	// GoldOutput and PredictedOutput are the runs' standard output and
	// error, normalised (trailing blanks and empty lines dropped), with
	// paths as the benchmark names them (/testbed/...).
	GoldOutput, PredictedOutput string
	// Changed lists the paths both runs changed, identically, as the
	// benchmark names them; empty when they changed nothing.
	Changed []string
	// Exists reports whether a path (as the benchmark names it) existed
	// on the fixture before the runs. Never nil when a Judge is called by
	// Run.
	Exists func(path string) bool
}

// A Judge decides whether two runs whose file system changes match give
// equivalent output.
type Judge interface {
	// Name is how reports name the judge: "exact", "similar", "model".
	Name() string
	// Same returns "" when the outputs are equivalent, else a short
	// reason. An error ends the evaluation.
	Same(ctx context.Context, o Outputs) (string, error)
}

// Exact is the strict judge: outputs must be equal once trailing blanks
// and trailing empty lines are dropped.
func Exact() Judge { return exactJudge{} }

type exactJudge struct{}

func (exactJudge) Name() string { return "exact" }

func (exactJudge) Same(_ context.Context, o Outputs) (string, error) {
	if o.GoldOutput == o.PredictedOutput {
		return "", nil
	}
	return "outputs differ", nil
}

// Similar is the lenient lexical judge, the default. When both runs made
// the same changes, lines that only report that work (reportLine) are set
// aside on both sides; then the outputs must be empty on both sides, or
// similar as outputSimilarity measures: the same records, in any order,
// each with more or fewer columns. See the package doc.
func Similar() Judge { return similarJudge{} }

type similarJudge struct{}

func (similarJudge) Name() string { return "similar" }

func (similarJudge) Same(_ context.Context, o Outputs) (string, error) {
	a, b := o.GoldOutput, o.PredictedOutput
	if a == b {
		return "", nil
	}
	if len(o.Changed) > 0 {
		changed := map[string]bool{}
		for _, p := range o.Changed {
			changed[p] = true
		}
		a = normalize([]byte(dropReports(a, changed, o.Exists)))
		b = normalize([]byte(dropReports(b, changed, o.Exists)))
		if a == b {
			return "", nil
		}
	}
	if similarOutputs(a, b) {
		return "", nil
	}
	ca, cb := outputSimilarity(a, b)
	return fmt.Sprintf("outputs not similar: %.0f%% of gold's matched, %.0f%% of the prediction's", 100*ca, 100*cb), nil
}

// maxJudgeText is how much of each output the model judge is shown.
const maxJudgeText = 6000

// judgePrompt is the system prompt of the model judge, after
// InterCode-ALFA's functional-equivalence judge: the task, both commands
// and both outputs, one verdict.
const judgePrompt = `You judge a benchmark of natural-language tasks for a Unix shell.
Two commands were run for the same task on identical fresh machines, and both changed the
file system in exactly the same way. Decide whether the predicted command's output answers
the task as well as the reference command's output does: the same facts, possibly in another
format, order or level of detail. Output that contradicts the reference, misses what the task
asks for, or answers another question is not equivalent.
Answer with JSON only: {"equivalent": true or false, "reason": "one short sentence"}`

// Model returns a judge that asks m, named name, whether the outputs are
// functionally equivalent answers to the task, as InterCode-ALFA's
// execution-plus-LLM judge does. Equal outputs are accepted without a
// call.
func Model(m llms.Model, name string) Judge { return modelJudge{m: m, name: name} }

type modelJudge struct {
	m    llms.Model
	name string
}

func (j modelJudge) Name() string { return "model " + j.name }

func (j modelJudge) Same(ctx context.Context, o Outputs) (string, error) {
	if o.GoldOutput == o.PredictedOutput {
		return "", nil
	}
	show := func(s string) string {
		if s == "" {
			return "(nothing)"
		}
		return clip(s, maxJudgeText)
	}
	user := fmt.Sprintf("Task: %s\n\nReference command: %s\nReference output:\n%s\n\nPredicted command: %s\nPredicted output:\n%s\n",
		o.Query, o.Gold, show(o.GoldOutput), o.Predicted, show(o.PredictedOutput))
	resp, err := j.m.GenerateContent(ctx, []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, judgePrompt),
		llms.TextParts(llms.ChatMessageTypeHuman, user),
	}, llms.WithTemperature(0), llms.WithMaxTokens(200))
	if err != nil {
		return "", fmt.Errorf("judge %s: %w", j.name, err)
	}
	var text strings.Builder
	for _, c := range resp.Choices {
		if c != nil {
			text.WriteString(c.Content)
		}
	}
	same, why, err := parseVerdict(text.String())
	if err != nil {
		return "", fmt.Errorf("judge %s: %w", j.name, err)
	}
	if same {
		return "", nil
	}
	if why == "" {
		why = "no reason given"
	}
	return "the judge model finds the outputs not equivalent: " + clip(why, 200), nil
}

// verdictRE finds a JSON object in a model's answer.
var verdictRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)\{.*\}`) })

// parseVerdict reads a model judge's answer: a JSON object with a boolean
// "equivalent" (possibly wrapped in prose or a code fence), or else an
// answer whose first word is yes or no.
func parseVerdict(s string) (bool, string, error) {
	if m := verdictRE().FindString(s); m != "" {
		var v struct {
			Equivalent *bool  `json:"equivalent"`
			Reason     string `json:"reason"`
		}
		if json.Unmarshal([]byte(m), &v) == nil && v.Equivalent != nil {
			return *v.Equivalent, v.Reason, nil
		}
	}
	first := strings.ToLower(strings.Trim(strings.SplitN(strings.TrimSpace(s)+" ", " ", 2)[0], ".,:!*\"'`"))
	switch first {
	case "yes", "true", "equivalent":
		return true, "", nil
	case "no", "false":
		return false, strings.TrimSpace(s), nil
	}
	return false, "", fmt.Errorf("no verdict in the answer %q", clip(s, 200))
}
