package evalharness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nash-shell/nash/internal/intercode"
	"github.com/nash-shell/nash/planner"
)

// Planner turns a request into a script. *planner.Planner implements it.
type Planner interface {
	Plan(ctx context.Context, req planner.Request) (*planner.Artifact, error)
}

// Options says what to evaluate and how.
type Options struct {
	// Data is the InterCode-ALFA directory (nl2bash_fs_*.json and
	// setup_nl2b_fs_*.sh). Required.
	Data string
	// Planner answers the tasks. Required.
	Planner Planner
	// WorkDir is where a temporary directory for the fixtures and the
	// sandbox's state is made; it is removed when Run returns. Empty means
	// the system's temporary directory.
	WorkDir string
	// Select keeps the tasks it returns true for; nil keeps all.
	Select func(intercode.Task) bool
	// Limit keeps at most the first Limit selected tasks; 0 keeps all.
	Limit int
	// Timeout bounds each sandboxed run (default 30s). A predicted command
	// that runs longer is wrong.
	Timeout time.Duration
	// Env is the environment both commands run with (default DefaultEnv).
	Env []string
	// Judge compares the outputs of runs whose file system changes
	// match (default Similar()).
	Judge Judge
	// Progress, if set, is called after each task with the number of
	// tasks done and the number to do.
	Progress func(r TaskResult, done, total int)
}

// DefaultEnv is the environment commands run with unless Options.Env says
// otherwise: a standard PATH, the C locale (as in the benchmark's
// containers, so sort orders and messages match), and HOME.
func DefaultEnv() []string {
	env := []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C"}
	if home, err := os.UserHomeDir(); err == nil {
		env = append(env, "HOME="+home)
	}
	return env
}

// TaskResult is the verdict on one task.
type TaskResult struct {
	ID         string `json:"id"` // like "fs2/17"
	Difficulty int    `json:"difficulty"`
	Query      string `json:"query"`
	Gold       string `json:"gold"`
	Predicted  string `json:"predicted"` // the planner's script, unmapped; empty if none
	Correct    bool   `json:"correct"`
	// Skipped is set when the gold command cannot run here (a command it
	// needs is not installed); the task is not scored.
	Skipped bool `json:"skipped,omitempty"`
	// NoScript is set when the planner gave no script: an error, a
	// refusal or a clarifying question.
	NoScript bool `json:"no_script,omitempty"`
	// Unstable is set when the gold command, run twice, did not give the
	// same result: its output depends on time, process ids or the like.
	Unstable bool `json:"unstable,omitempty"`
	// Reason says why a wrong prediction is wrong: the first differences
	// found, or the planner's error. Paths are shown as the benchmark
	// names them (/testbed/...). Empty when Correct.
	Reason string `json:"reason,omitempty"`
}

// Score counts correct tasks among those evaluated.
type Score struct {
	Correct int `json:"correct"`
	Total   int `json:"total"`
}

// Accuracy is Correct/Total, or 0 when nothing was evaluated.
func (s Score) Accuracy() float64 {
	if s.Total == 0 {
		return 0
	}
	return float64(s.Correct) / float64(s.Total)
}

// DifficultyScore is the score on the tasks of one difficulty (0, 1 or 2
// in InterCode-ALFA: easy, medium, hard).
type DifficultyScore struct {
	Difficulty int `json:"difficulty"`
	Score
}

// Result is a whole evaluation.
type Result struct {
	Model        string            `json:"model"` // as the artifacts name it
	Judge        string            `json:"judge"` // the Judge's name
	Overall      Score             `json:"overall"`
	ByDifficulty []DifficultyScore `json:"by_difficulty"` // ascending
	Skipped      int               `json:"skipped"`       // tasks not scored (TaskResult.Skipped)
	Tasks        []TaskResult      `json:"tasks"`
}

// Failures returns the scored tasks that were not correct, in task order.
func (r *Result) Failures() []TaskResult {
	var out []TaskResult
	for _, t := range r.Tasks {
		if !t.Correct && !t.Skipped {
			out = append(out, t)
		}
	}
	return out
}

// Add counts one task result into the result.
func (r *Result) Add(t TaskResult) {
	r.Tasks = append(r.Tasks, t)
	if t.Skipped {
		r.Skipped++
		return
	}
	r.Overall.Total++
	i := sort.Search(len(r.ByDifficulty), func(i int) bool { return r.ByDifficulty[i].Difficulty >= t.Difficulty })
	if i == len(r.ByDifficulty) || r.ByDifficulty[i].Difficulty != t.Difficulty {
		r.ByDifficulty = append(r.ByDifficulty, DifficultyScore{})
		copy(r.ByDifficulty[i+1:], r.ByDifficulty[i:])
		r.ByDifficulty[i] = DifficultyScore{Difficulty: t.Difficulty}
	}
	r.ByDifficulty[i].Total++
	if t.Correct {
		r.Overall.Correct++
		r.ByDifficulty[i].Correct++
	}
}

// Run evaluates opts.Planner on the selected tasks. On an error that ends
// the run early (no provider, cancelled, no sandbox) it returns the tasks
// done so far with the error.
func Run(ctx context.Context, opts Options) (*Result, error) {
	if opts.Planner == nil {
		return nil, errors.New("eval: no planner")
	}
	if opts.Data == "" {
		return nil, errors.New("eval: no data directory")
	}
	tasks, err := intercode.Load(opts.Data)
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	var sel []intercode.Task
	for _, t := range tasks {
		if opts.Select != nil && !opts.Select(t) {
			continue
		}
		if opts.Limit > 0 && len(sel) == opts.Limit {
			break
		}
		sel = append(sel, t)
	}
	work, err := os.MkdirTemp(opts.WorkDir, "nash-eval-")
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	defer removeTree(work)
	h := &harness{
		data:    opts.Data,
		planner: opts.Planner,
		state:   filepath.Join(work, "state"),
		work:    work,
		timeout: opts.Timeout,
		env:     opts.Env,
		judge:   opts.Judge,
	}
	if h.judge == nil {
		h.judge = Similar()
	}
	// Whether the gold reproduces is asked of the lexical judge when the
	// judge is a model: a model would only add calls.
	h.stable = h.judge
	if _, ok := h.judge.(modelJudge); ok {
		h.stable = Similar()
	}
	if h.timeout <= 0 {
		h.timeout = 30 * time.Second
	}
	if h.env == nil {
		h.env = DefaultEnv()
	}
	res := &Result{Judge: h.judge.Name()}
	for i, t := range sel {
		tr, err := h.task(ctx, t)
		if err != nil {
			return res, fmt.Errorf("eval %s: %w", t.ID(), err)
		}
		res.Add(tr)
		if opts.Progress != nil {
			opts.Progress(tr, i+1, len(sel))
		}
	}
	res.Model = h.model
	return res, nil
}

// harness holds what one Run shares across tasks.
type harness struct {
	data    string
	planner Planner
	state   string // the sandbox's state directory
	work    string
	timeout time.Duration
	env     []string
	model   string
	judge   Judge
	stable  Judge // for the gold against itself

	fs      int      // the fixture built at base, 0 for none
	base    string   // the mapped "/" of fixture fs
	fsEnv   []string // env for fixture fs: env plus its Dockerfile's ENV
	fsShell string   // the shell the benchmark runs fixture fs's commands with
}

// fixture makes sure fixture fs is built at h.base.
func (h *harness) fixture(fs int) error {
	if h.fs == fs {
		return nil
	}
	if h.base != "" {
		removeTree(h.base)
	}
	h.fs, h.base = 0, filepath.Join(h.work, fmt.Sprintf("fs%d", fs))
	if err := os.Mkdir(h.base, 0o755); err != nil {
		return fmt.Errorf("fixture: %w", err)
	}
	// The Dockerfile copies the setup script to / first; some tasks
	// read it.
	setup := fmt.Sprintf("setup_nl2b_fs_%d.sh", fs)
	b, err := os.ReadFile(filepath.Join(h.data, setup))
	if err != nil {
		return fmt.Errorf("fixture: %w", err)
	}
	if err := os.WriteFile(filepath.Join(h.base, setup), b, 0o755); err != nil {
		return fmt.Errorf("fixture: %w", err)
	}
	if err := intercode.Build(h.data, fs, h.base); err != nil {
		return err
	}
	extra, err := dockerEnv(filepath.Join(h.data, fmt.Sprintf("nl2bash%d.Dockerfile", fs)))
	if err != nil {
		return err
	}
	h.fsEnv = append([]string(nil), h.env...)
	for _, kv := range extra {
		h.fsEnv = append(h.fsEnv, intercode.Map(kv, h.base))
	}
	// InterCode-ALFA runs fixture 5's commands with /bin/sh, the others
	// with /bin/bash (IMAGE_TO_SETTINGS in its bash_env.py).
	h.fsShell = "/bin/bash"
	if fs == 5 {
		h.fsShell = "/bin/sh"
	}
	h.fs = fs
	return nil
}

// dockerEnv reads the ENV lines of a fixture's Dockerfile as KEY=value
// pairs (one pair per line, value optionally double-quoted). A missing
// Dockerfile gives none.
func dockerEnv(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("fixture environment: %w", err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "ENV ")
		if !ok {
			continue
		}
		k, v, ok := strings.Cut(strings.TrimSpace(rest), "=")
		if !ok {
			continue
		}
		if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
			v = v[1 : len(v)-1]
		}
		out = append(out, k+"="+v)
	}
	return out, nil
}

// task runs the gold, plans, runs the prediction and judges one task.
// Errors are those that end the run.
func (h *harness) task(ctx context.Context, t intercode.Task) (TaskResult, error) {
	tr := TaskResult{ID: t.ID(), Difficulty: t.Difficulty, Query: t.Query, Gold: t.Gold}
	if err := h.fixture(t.FS); err != nil {
		return tr, err
	}
	gold, err := h.run(ctx, intercode.Map(t.Gold, h.base))
	if err != nil {
		return tr, err
	}
	defer gold.abort()
	if missing := commandNotFound(gold); missing != "" {
		tr.Skipped = true
		tr.Reason = "the gold command cannot run here: " + h.show(missing)
		return tr, nil
	}

	art, err := h.planner.Plan(ctx, planner.Request{Prompt: t.Query, Cwd: h.base})
	var refusal *planner.RefusalError
	switch {
	case ctx.Err() != nil:
		return tr, ctx.Err()
	case errors.Is(err, planner.ErrNoProvider):
		return tr, err
	case errors.As(err, &refusal):
		tr.NoScript, tr.Reason = true, "planner refused: "+clip(refusal.Error(), 200)
		return tr, nil
	case err != nil:
		tr.NoScript, tr.Reason = true, "planner: "+clip(err.Error(), 300)
		return tr, nil
	case art == nil:
		tr.NoScript, tr.Reason = true, "planner gave nothing"
		return tr, nil
	}
	if h.model == "" {
		h.model = art.Model
	}
	switch {
	case art.Question != "":
		tr.NoScript, tr.Reason = true, "planner asked instead: "+clip(art.Question, 200)
		return tr, nil
	case strings.TrimSpace(art.Script) == "":
		tr.NoScript, tr.Reason = true, "planner gave an empty script"
		return tr, nil
	}
	tr.Predicted = art.Script

	pred, err := h.run(ctx, intercode.Map(art.Script, h.base))
	if err != nil {
		return tr, err
	}
	defer pred.abort()
	diff, err := h.compare(ctx, h.judge, t, art.Script, gold, pred, "gold", "predicted")
	if err != nil {
		return tr, err
	}
	if diff == "" {
		tr.Correct = true
		return tr, nil
	}
	tr.Reason = diff
	// Is the gold itself reproducible?
	again, err := h.run(ctx, intercode.Map(t.Gold, h.base))
	if err != nil {
		return tr, err
	}
	defer again.abort()
	unstable, err := h.compare(ctx, h.stable, t, t.Gold, gold, again, "gold", "gold again")
	if err != nil {
		return tr, err
	}
	if unstable != "" {
		tr.Unstable = true
		tr.Reason += "; the gold is not reproducible: " + unstable
	}
	return tr, nil
}

// notFound matches the shells' messages for a missing command (the
// sandbox runs scripts with $0 set to the shell's name): bash's "bash:
// line 1: tree: command not found", dash's "sh: 1: tree: not found".
var notFound = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^(bash|sh|dash): (line )?[0-9]+: .+: (command )?not found$`)
})

// commandNotFound returns the shell's message when a run could not find a
// command it ran, or "".
func commandNotFound(e *execution) string {
	if e.timedOut {
		return ""
	}
	return notFound().FindString(string(e.output.head))
}

// show turns a mapped path or text back into the benchmark's names.
func (h *harness) show(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, h.base+"/", "/"), h.base, "/")
}

// removeTree removes a tree, making its directories writable first where
// a fixture made them read-only.
func removeTree(dir string) {
	if os.RemoveAll(dir) == nil {
		return
	}
	_ = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = os.Chmod(p, 0o700)
		}
		return nil
	})
	_ = os.RemoveAll(dir)
}

// clip shortens s to about n bytes for a reason.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "..."
}
