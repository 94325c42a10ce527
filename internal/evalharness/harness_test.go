package evalharness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/nash-shell/nash/internal/datasets"
	"github.com/nash-shell/nash/internal/intercode"
	"github.com/nash-shell/nash/planner"
	"github.com/nash-shell/nash/sandbox"
)

// TestMain lets the test binary be the sandbox's init.
func TestMain(m *testing.M) {
	if sandbox.IsChild() {
		sandbox.ChildMain()
	}
	os.Exit(m.Run())
}

// dataDir finds the InterCode-ALFA data in the repository's testdata (or
// $NASH_DATA).
func dataDir(t *testing.T) string {
	t.Helper()
	return datasets.Must(t, datasets.InterCode)
}

// replay returns a planner that answers each query with answer(task).
func replay(t *testing.T, data string, answer func(intercode.Task) string) *planner.Planner {
	t.Helper()
	tasks, err := intercode.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	byQuery := map[string]intercode.Task{}
	for _, tk := range tasks {
		byQuery[tk.Query] = tk
	}
	p, err := planner.New(planner.Respond("replay", func(_ context.Context, req planner.Request, _ int) (string, error) {
		tk, ok := byQuery[req.Prompt]
		if !ok {
			t.Errorf("replay: unknown query %q", req.Prompt)
			return `{"script": "false"}`, nil
		}
		return scriptJSON(answer(tk)), nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func scriptJSON(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\t", `\t`)
	return `{"script": "` + r.Replace(s) + `", "explanation": "replayed"}`
}

// selection keeps every task, or every tenth under -short, or those whose
// id starts with $NASH_TEST_ONLY (to rerun a few).
func selection() func(intercode.Task) bool {
	only := os.Getenv("NASH_TEST_ONLY")
	return func(tk intercode.Task) bool {
		switch {
		case only != "":
			return strings.HasPrefix(tk.ID(), only)
		case testing.Short():
			return tk.Index%10 == 0
		}
		return true
	}
}

// Why a task's verdict is what it is, for the tables below.
const (
	varies      = "its output varies between runs (clock, memory and disk use, process ids, random salt)"
	sandboxView = "the sandbox's own processes and mounts show (its init's threads, a fresh overlay device per run)"
	format      = "gold2 prints the same facts in another format or with more or less detail (another flag or tool)"
	verbose     = "gold2 adds -v, which prints what it does, where gold prints nothing"
	errMessage  = "both fail, with different error messages"
	notHere     = "the fixture machine differs from the benchmark's (no network, no utmp, no swap, TERM unset, tree missing)"
	otherResult = "gold2 gives a different result"
)

// nondeterministic are gold commands whose result varies between runs;
// the harness usually catches them (Unstable), but not every time.
var nondeterministic = map[string]string{
	"fs1/2": varies, "fs1/9": varies, "fs1/22": varies, "fs1/23": varies, "fs1/25": sandboxView,
	"fs1/26": sandboxView, "fs1/27": varies, "fs1/28": varies, "fs1/41": sandboxView, "fs1/48": sandboxView,
	"fs1/74": varies, "fs1/85": varies, "fs1/104": varies, "fs2/10": "tee >(wc -l): where wc's line lands in the output races with tee",
	"fs2/34": varies, "fs2/38": varies, "fs4/5": sandboxView,
	"fs1/49":  "time reports the elapsed time",
	"fs1/106": "curl prints its progress meter only when the (failing) request takes long",
	"fs2/45":  "curl prints its progress meter only when the (failing) request takes long",
}

// gold2Differs lists the tasks whose second gold command the similar
// judge does not find equivalent to the first: they change files
// differently, or print different facts, or the same facts in a shape too
// far apart for a lexical comparison (InterCode-ALFA's GPT-4 judge would
// accept some of those).
var gold2Differs = map[string]string{
	// The file system changes differ.
	"fs1/104": varies + ": openssl enc salts at random, so the encrypted files differ",
	"fs1/139": "gold2 archives only files, gold directories too",
	"fs2/9":   "gold2 renames in folder1, gold in folder2",
	"fs2/23":  "find -delete refuses non-empty directories, rm -rf removes them",
	"fs2/38":  varies + ": the date is written to the file in two formats",
	"fs3/31":  notHere + ": cpio is not installed",
	"fs3/56":  "gold2 makes a symbolic link, gold a hard link",
	"fs5/5":   "du -sh writes a human size, du -s blocks",

	// Another result.
	"fs1/2":   sandboxView + ": lsof -i lists network files, and the sandbox has none",
	"fs1/31":  notHere + ": hostname -I prints nothing, -i prints 127.0.0.1",
	"fs1/46":  notHere + ": echo $TERM prints bash's default, printenv nothing",
	"fs1/48":  notHere + ": bash -c runs pidof in its own place, and no other bash runs in the sandbox",
	"fs1/72":  notHere + ": no boot record, who -b prints nothing",
	"fs1/73":  notHere + ": no swap, swapon prints nothing, free a zero line",
	"fs1/92":  "nl numbers the matches instead of counting them",
	"fs1/93":  "ls -l adds a total line",
	"fs1/105": "dd reports its records, naming no path",
	"fs1/108": "ls -1 of a glob lists the directory name with a colon; md5sum fails on it, another hash",
	"fs1/129": "find \"\" fails where find with nothing searches .",
	"fs1/135": "awk's regex has no {n} interval here (mawk), so nothing matches",
	"fs2/6":   "rmdir fails on non-empty directories and says so, -delete is silent",
	"fs2/12":  "zcat of a tar gives binary data grep only mentions",
	"fs2/35":  notHere + ": tree is not installed",
	"fs3/46":  "rev mangles the file's NUL bytes differently from awk",
	"fs4/0":   "gold2 prints another part of the kernel version",

	// The same facts, shaped too differently.
	"fs1/26": "pstree -p shows each thread of the sandbox's init apart, pstree folds them into 6*[{exe}]",
	"fs1/27": "free -h rounds every figure to a unit (23Gi for 24684092): no number is shared",
	"fs1/37": "openssl version -a adds nine lines of build details to the one line gold prints",
	"fs1/41": "stat -t prints bare numbers (mode in hex, times in epoch seconds) where stat labels them",
	"fs1/44": "apt show and apt-cache show describe the package with different fields",
	"fs1/54": "lscpu and /proc/cpuinfo state the CPU's facts under different names",
	"fs1/55": "lsmem lists memory blocks, /proc/meminfo usage counters",
	"fs1/59": "lsblk -f shows file system columns instead of sizes",
	"fs1/89": "prlimit prints a table with a header around the one word ulimit prints",
	"fs2/34": "gold prints df's table with its header, gold2 only the one figure",
	"fs2/43": "od -c prints characters, hexdump -C hex bytes",
	"fs2/44": "tar -v adds a notice about --mtime besides listing the members",
	"fs3/14": "du -h lists every directory, du -sh only the total",
	"fs3/16": "du -h writes sizes with a unit (48K), du bare blocks (48): the lines share only the path",
	"fs3/33": "du -sh writes sizes with a unit (48K), du bare blocks (48): the lines share only the path",
	"fs4/2":  "stat spreads over eight labelled lines what ls -l puts on one",
	"fs4/5":  sandboxView + ": pstree -a and ps --forest show them differently",
}

// trueMatches are the tasks that `true` answers correctly: their gold
// prints nothing and changes nothing on the fixture.
var trueMatches = map[string]string{
	"fs1/21": "history is empty in a non-interactive shell",
	"fs1/31": "hostname -I: no addresses but loopback in the sandbox",
	"fs1/45": "jobs: there are none",
	"fs1/60": "find -size +100M: there is no such file",
	"fs1/72": "who -b: no boot record in the sandbox",
	"fs1/73": "swapon --show: no swap",
	"fs1/82": "wall: no terminals to write to",
	"fs1/99": "find -empty at depth 1: there is no such file",
	"fs2/7":  "rmdir -p --ignore-fail-on-non-empty: the empty directories' parents are not empty, so nothing goes",
	"fs3/2":  "find -cmin +60: the fixture was just built",
	"fs3/3":  "find -amin +60: the fixture was just built",
	"fs3/46": "rev | cut | rev on a file of NUL bytes prints nothing",
	"fs4/10": "dig +short: no network in the sandbox, so it prints nothing (where dig is installed; elsewhere the task is skipped)",
	"fs4/16": "who: nobody is logged in",
	"fs5/4":  "find -type l: the fixture has no symbolic links",
}

// wrongMatches are the tasks where the gold of the next task of the same
// fixture (TestReplayWrong) is judged correct by the similar judge.
var wrongMatches = map[string]string{
	// Outputs equal: the exact judge accepts these too.
	"fs1/35":  "last and last -w print the same (no logins)",
	"fs1/72":  "who -b and swapon --show both print nothing",
	"fs1/113": "both print False",
	"fs1/123": "both count the same 4 lines",
	"fs2/18":  "both delete nothing",
	"fs3/2":   "find -cmin +60 and -amin +60 both find nothing on a fresh fixture",
	"fs3/5":   "find -empty, and ls of each empty file, print the same",
	"fs3/17":  "the first line of long.txt and the last of a.txt are the same text",
	// Near-right: the same facts.
	"fs1/0":   "ls -a adds only . and .., which name nothing",
	"fs1/23":  "w's first line is uptime's line",
	"fs1/62":  "chown and chgrp fail on the same missing file, with the same message",
	"fs1/63":  "chgrp and chmod fail on the same missing file, with the same message",
	"fs1/133": "the same wc -l lines, in reverse order",
	"fs3/28":  "the same sums and paths, columns swapped, sorted",
	// Wrong, and accepted: the judge's known weaknesses.
	"fs1/29":  "the host name is one field of uname -a (matched as uname -r would be)",
	"fs1/39":  "the one word hello is found in the one line grep prints",
	"fs1/50":  "groups prints root, one word of id's line",
	"fs1/66":  "sort and uniq print the file's lines in another order; order is not compared",
	"fs1/77":  "the users and the groups share most of their names",
	"fs1/101": "21 of grep's 26 lines are also those of the narrower grep",
}

// recorder is a Judge that decides as main does and records, for each
// task's first comparison, the verdict of other: one run measures two
// judges.
type recorder struct {
	main, other Judge
	other1      map[string]string // by query
}

func (r *recorder) Name() string { return r.main.Name() + "+" + r.other.Name() }

func (r *recorder) Same(ctx context.Context, o Outputs) (string, error) {
	if _, done := r.other1[o.Query]; !done {
		why, err := r.other.Same(ctx, o)
		if err != nil {
			return "", err
		}
		r.other1[o.Query] = why
	}
	return r.main.Same(ctx, o)
}

// otherCorrect scores res as the recorder's other judge would have. A
// task's first judged comparison is the prediction's, when the file
// system changes matched: the task is then correct, or wrong on its
// output. Any other task (changes differ, a timeout, outputs too large
// to keep, no script) is judged alike by both.
func (r *recorder) otherCorrect(res *Result) map[string]bool {
	out := map[string]bool{}
	for _, tr := range res.Tasks {
		if tr.Skipped {
			continue
		}
		judged := tr.Correct || strings.HasPrefix(tr.Reason, "output differs (")
		why, seen := r.other1[tr.Query]
		out[tr.ID] = judged && (seen && why == "" || !seen && tr.Correct)
	}
	return out
}

// replayRun runs the harness with a replay answering answer(task), judged
// by main, recording other's verdicts.
func replayRun(t *testing.T, main, other Judge, answer func(intercode.Task) string) (*Result, map[string]bool) {
	t.Helper()
	data := dataDir(t)
	rec := &recorder{main: main, other: other, other1: map[string]string{}}
	res, err := Run(context.Background(), Options{
		Data: data, Planner: replay(t, data, answer), WorkDir: t.TempDir(), Select: selection(), Judge: rec,
	})
	if err != nil {
		t.Fatal(err)
	}
	oc := rec.otherCorrect(res)
	n := 0
	for _, ok := range oc {
		if ok {
			n++
		}
	}
	t.Logf("%s judge: %d of %d scored tasks correct (%.1f%%), %d skipped; by difficulty %+v",
		main.Name(), res.Overall.Correct, res.Overall.Total, 100*res.Overall.Accuracy(), res.Skipped, res.ByDifficulty)
	t.Logf("%s judge: %d of %d (%.1f%%)", other.Name(), n, res.Overall.Total, 100*float64(n)/float64(max(res.Overall.Total, 1)))
	for _, tr := range res.Tasks {
		if tr.Skipped {
			t.Logf("skipped %s %q: %s", tr.ID, tr.Gold, tr.Reason)
		}
	}
	return res, oc
}

// checkLenient fails for a task that the exact judge accepts and the
// similar judge does not: the similar judge must accept every equal
// output.
func checkLenient(t *testing.T, similar map[string]bool, exact map[string]bool) {
	t.Helper()
	for id, ok := range exact {
		if ok && !similar[id] {
			t.Errorf("%s: the exact judge accepts it, the similar judge does not", id)
		}
	}
}

// share is the fraction of the scored tasks marked true.
func share(m map[string]bool) float64 {
	n := 0
	for _, ok := range m {
		if ok {
			n++
		}
	}
	return float64(n) / float64(max(len(m), 1))
}

// correct maps each scored task to its verdict.
func correct(res *Result) map[string]bool {
	out := map[string]bool{}
	for _, tr := range res.Tasks {
		if !tr.Skipped {
			out[tr.ID] = tr.Correct
		}
	}
	return out
}

// TestReplayGold: answering each task with its own gold command scores
// all but the tasks whose result varies from run to run, under the exact
// judge, and so under the similar judge too.
func TestReplayGold(t *testing.T) {
	res, similar := replayRun(t, Exact(), Similar(), func(tk intercode.Task) string { return tk.Gold })
	for _, f := range res.Failures() {
		why, known := nondeterministic[f.ID]
		switch {
		case known:
			t.Logf("wrong, as expected, %s %q: %s (%s)", f.ID, f.Gold, why, f.Reason)
		case f.Unstable:
			t.Logf("wrong, gold not reproducible, %s %q: %s", f.ID, f.Gold, f.Reason)
		default:
			t.Errorf("the gold itself is judged wrong: %s %q: %s", f.ID, f.Gold, f.Reason)
		}
	}
	checkLenient(t, similar, correct(res))
	// Measured: 277 of 288 (96.2%) exact, 283 (98.3%) similar; a loaded
	// machine shows a few more of the nondeterministic ones.
	if acc := res.Overall.Accuracy(); acc < 0.93 {
		t.Errorf("gold replay accuracy %.3f (exact), want at least 0.93", acc)
	}
	if acc := share(similar); acc < 0.95 {
		t.Errorf("gold replay accuracy %.3f (similar), want at least 0.95", acc)
	}
}

// TestReplayGold2: the benchmark's second gold command. Under the similar
// judge every task it fails is listed in gold2Differs or nondeterministic
// with the reason; the exact judge, measured in the same run, accepts a
// subset.
func TestReplayGold2(t *testing.T) {
	res, exact := replayRun(t, Similar(), Exact(), func(tk intercode.Task) string { return tk.Gold2 })
	for _, f := range res.Failures() {
		why, known := gold2Differs[f.ID]
		if !known {
			why, known = nondeterministic[f.ID]
		}
		switch {
		case known:
			t.Logf("wrong, as expected, %s %q for %q: %s", f.ID, f.Predicted, f.Gold, why)
		case f.Unstable:
			t.Logf("wrong, gold not reproducible, %s %q for %q: %s", f.ID, f.Predicted, f.Gold, f.Reason)
		default:
			t.Errorf("gold2 judged wrong, not known to differ: %s %q for %q: %s", f.ID, f.Predicted, f.Gold, f.Reason)
		}
	}
	for _, tr := range res.Tasks {
		if _, listed := gold2Differs[tr.ID]; listed && tr.Correct {
			t.Logf("listed as differing but judged correct here: %s", tr.ID)
		}
	}
	checkLenient(t, correct(res), exact)
	// Measured: 244 of 288 (84.7%) similar, 177 (61.5%) exact on the full
	// set; the floors leave room for a machine with a few more
	// differences.
	if acc := res.Overall.Accuracy(); acc < 0.80 {
		t.Errorf("gold2 replay accuracy %.3f (similar), want at least 0.80", acc)
	}
	if acc := share(exact); acc < 0.55 {
		t.Errorf("gold2 replay accuracy %.3f (exact), want at least 0.55", acc)
	}
}

// TestReplayTrue: answering `true` to everything scores only the tasks
// whose gold prints nothing and changes nothing, under either judge.
func TestReplayTrue(t *testing.T) {
	res, exact := replayRun(t, Similar(), Exact(), func(intercode.Task) string { return "true" })
	for _, tr := range res.Tasks {
		if !tr.Correct {
			continue
		}
		if why, ok := trueMatches[tr.ID]; ok {
			t.Logf("correct, as expected, %s %q: %s", tr.ID, tr.Gold, why)
		} else {
			t.Errorf("`true` judged correct for %s %q", tr.ID, tr.Gold)
		}
	}
	checkLenient(t, correct(res), exact)
	// Measured: 14 of 288 (4.9%) under both judges.
	if acc := res.Overall.Accuracy(); acc > 0.06 {
		t.Errorf("`true` replay accuracy %.3f, want at most 0.06", acc)
	}
}

// nextGold answers each task with the gold of the next task of the same
// fixture (the first, for the last): a real command on the same files,
// for another request.
func nextGold(t *testing.T) func(intercode.Task) string {
	tasks, err := intercode.Load(dataDir(t))
	if err != nil {
		t.Fatal(err)
	}
	next := map[string]string{}
	for i, tk := range tasks {
		j := i + 1
		if j == len(tasks) || tasks[j].FS != tk.FS {
			for j = i; j > 0 && tasks[j-1].FS == tk.FS; j-- {
			}
		}
		next[tk.ID()] = tasks[j].Gold
	}
	return func(tk intercode.Task) string { return next[tk.ID()] }
}

// TestReplayWrong: answering each task with another task's gold must
// score near zero under the lenient judge too: it still tells right from
// wrong. Every task it accepts is listed in wrongMatches.
func TestReplayWrong(t *testing.T) {
	res, exact := replayRun(t, Similar(), Exact(), nextGold(t))
	for _, tr := range res.Tasks {
		if !tr.Correct {
			continue
		}
		if why, ok := wrongMatches[tr.ID]; ok {
			t.Logf("correct, as expected, %s %q for %q: %s", tr.ID, tr.Predicted, tr.Gold, why)
		} else {
			t.Errorf("another task's gold judged correct for %s: %q for %q", tr.ID, tr.Predicted, tr.Gold)
		}
	}
	checkLenient(t, correct(res), exact)
	// Measured: 20 of 288 (6.9%) similar, 8 (2.8%) exact.
	if acc := res.Overall.Accuracy(); acc > 0.10 {
		t.Errorf("wrong-answer replay accuracy %.3f (similar), want at most 0.10", acc)
	}
	if acc := share(exact); acc > 0.05 {
		t.Errorf("wrong-answer replay accuracy %.3f (exact), want at most 0.05", acc)
	}
}

// TestMisbehavingPlanner: answers that give no script, scripts that hang
// or flood, and planner errors each make a task wrong; the run goes on.
func TestMisbehavingPlanner(t *testing.T) {
	data := dataDir(t)
	answers := []struct {
		text     string
		err      error
		noScript bool
		reason   string
	}{
		{text: "{not json at all", noScript: true, reason: "planner"},
		{text: "I'm sorry, but I can't help with that.", noScript: true, reason: "refused"},
		{text: `{"question": "Which directory do you mean?"}`, noScript: true, reason: "asked"},
		{err: errors.New("model exploded"), noScript: true, reason: "model exploded"},
		{text: `{"script": "if then fi"}`, noScript: true, reason: "planner"},
		{text: `{"script": "sleep 600"}`, reason: "timed out"},
		{text: `{"script": "yes | head -c 20000000"}`, reason: "output differs"},
		{text: `{"script": "rm -rf /testbed /system /workspace"}`, reason: "did not"},
	}
	var i int
	p, err := planner.New(planner.MaxRepairs(0), planner.Respond("misbehaving", func(context.Context, planner.Request, int) (string, error) {
		a := answers[i%len(answers)]
		i++
		return a.text, a.err
	}))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), Options{
		Data: data, Planner: p, WorkDir: t.TempDir(), Limit: len(answers), Timeout: 5 * time.Second,
		Select: func(tk intercode.Task) bool { return tk.FS == 1 && tk.Index != 2 }, // not lsof, whose output varies
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(res.Tasks) != len(answers) || res.Overall.Correct != 0 {
		t.Fatalf("%d tasks, %d correct; want %d, 0", len(res.Tasks), res.Overall.Correct, len(answers))
	}
	for j, tr := range res.Tasks {
		a := answers[j]
		if tr.Correct || tr.NoScript != a.noScript || !strings.Contains(tr.Reason, a.reason) {
			t.Errorf("%s (answer %q, %v): correct %v, no script %v, reason %q; want no script %v, reason with %q",
				tr.ID, a.text, a.err, tr.Correct, tr.NoScript, tr.Reason, a.noScript, a.reason)
		}
	}
}

// TestRunStops: a planner with no provider, or a cancelled context, ends
// the run with the error and the tasks done so far.
func TestRunStops(t *testing.T) {
	data := dataDir(t)
	p, err := planner.New(planner.Respond("gone", func(context.Context, planner.Request, int) (string, error) {
		return "", fmt.Errorf("connect: %w", planner.ErrNoProvider)
	}))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), Options{Data: data, Planner: p, WorkDir: t.TempDir(), Limit: 3})
	if !errors.Is(err, planner.ErrNoProvider) || res == nil || len(res.Tasks) != 0 {
		t.Errorf("no provider: result %+v, error %v; want no tasks and ErrNoProvider", res, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err = Run(ctx, Options{
		Data: data, Planner: replay(t, data, func(tk intercode.Task) string { return tk.Gold }), WorkDir: t.TempDir(), Limit: 5,
		Progress: func(_ TaskResult, done, _ int) {
			if done == 2 {
				cancel()
			}
		},
	})
	if !errors.Is(err, context.Canceled) || res == nil || len(res.Tasks) != 2 {
		t.Errorf("cancelled: %v tasks, error %v; want 2 and context.Canceled", len(res.Tasks), err)
	}

	if _, err := Run(context.Background(), Options{Data: data}); err == nil {
		t.Error("Run without a planner gave no error")
	}
	if _, err := Run(context.Background(), Options{Data: t.TempDir(), Planner: p}); err == nil {
		t.Error("Run on an empty data directory gave no error")
	}
}
