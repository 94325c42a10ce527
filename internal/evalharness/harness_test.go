package evalharness

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// dataDir finds the InterCode-ALFA data (../shared/data or $NASH_DATA).
func dataDir(t *testing.T) string {
	t.Helper()
	d := os.Getenv("NASH_DATA")
	if d == "" {
		d = filepath.Join("..", "..", "..", "shared", "data")
	}
	d = filepath.Join(d, "intercode-alfa")
	if _, err := os.Stat(d); err != nil {
		t.Fatalf("InterCode-ALFA data not found at %s (set NASH_DATA to the shared data dir): %v", d, err)
	}
	return d
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

// gold2Differs lists the tasks whose second gold command is not
// execution-equivalent to the first: InterCode-ALFA accepts it through its
// GPT-4 judge of outputs, an exact comparison cannot.
var gold2Differs = map[string]string{
	"fs1/0": format, "fs1/1": format, "fs1/2": format, "fs1/3": verbose, "fs1/5": verbose,
	"fs1/6": errMessage, "fs1/9": format, "fs1/11": errMessage, "fs1/12": "$0 is the shell's name, $SHELL the login shell",
	"fs1/13": "env sets _ to the program's path: /usr/bin/env vs /usr/bin/printenv", "fs1/16": format,
	"fs1/18": "tac | head prints the last lines in reverse order", "fs1/20": format, "fs1/22": format,
	"fs1/23": format, "fs1/24": format, "fs1/26": format, "fs1/27": format, "fs1/28": format, "fs1/29": format,
	"fs1/31": notHere + ": hostname -I prints nothing, -i prints 127.0.0.1", "fs1/37": format, "fs1/41": format,
	"fs1/43": verbose, "fs1/44": format, "fs1/46": notHere + ": echo $TERM prints bash's default, printenv nothing",
	"fs1/48": "pidof bash finds no process called bash (the shell is $0 nash)", "fs1/51": format, "fs1/53": format,
	"fs1/54": format, "fs1/55": format, "fs1/57": format, "fs1/59": format,
	"fs1/72": notHere + ": no boot record, who -b prints nothing", "fs1/73": notHere + ": no swap, swapon prints nothing, free a zero line",
	"fs1/74": varies, "fs1/75": format, "fs1/81": "dirname drops the trailing slash", "fs1/84": "fmt joins lines, fold only breaks them",
	"fs1/85": varies, "fs1/89": format, "fs1/92": "nl numbers the matches instead of counting them",
	"fs1/93": "ls -l adds a total line", "fs1/98": format, "fs1/103": format, "fs1/104": varies,
	"fs1/105": "dd reports its records", "fs1/106": notHere + ": curl fails naming a different host",
	"fs1/107": format, "fs1/108": "ls -1 of a glob lists the directory name with a colon; md5sum fails on it, another hash",
	"fs1/111": format, "fs1/128": "gold sorts the list, gold2 keeps find's order", "fs1/116": format, "fs1/118": format,
	"fs1/121": "cp -r per file with -exec copies a file onto itself and says so",
	"fs1/129": "find \"\" fails where find with nothing searches .", "fs1/135": "awk's regex has no {n} interval here (mawk), so nothing matches",
	"fs1/139": "gold2 archives only files, gold directories too", "fs1/142": "sort -rh | tail picks the 5 smallest in reverse order",
	"fs1/143": format, "fs1/144": format, "fs1/145": "gold2 prints relative paths, gold base names",
	"fs1/147": "gold2 compares files only and prints relative paths", "fs1/152": format,
	"fs2/1": format, "fs2/6": "rmdir fails on non-empty directories and says so, -delete is silent",
	"fs2/8": verbose, "fs2/9": "gold2 renames in folder1, gold in folder2", "fs2/11": "xargs splits the names with spaces",
	"fs2/12": "zcat of a tar gives binary data grep only mentions", "fs2/13": format, "fs2/17": verbose,
	"fs2/23": "find -delete refuses non-empty directories, rm -rf removes them", "fs2/24": verbose,
	"fs2/33": "diff's order is not sorted", "fs2/34": format, "fs2/35": notHere + ": tree is not installed",
	"fs2/36": verbose, "fs2/38": varies, "fs2/41": verbose, "fs2/43": format, "fs2/44": verbose,
	"fs2/45": verbose, "fs2/46": "gold2 keeps only files, gold directories too", "fs2/47": format,
	"fs3/8": format, "fs3/9": format, "fs3/10": "xargs ls sorts and aligns the list, one ls per file does not",
	"fs3/14": format, "fs3/16": format, "fs3/21": format, "fs3/22": format,
	"fs3/24": "gold2 prints relative paths", "fs3/27": format, "fs3/29": "gold sorts, gold2 does not",
	"fs3/31": notHere + ": cpio is not installed", "fs3/33": format, "fs3/43": format,
	"fs3/44": format, "fs3/46": "rev mangles the file's NUL bytes differently from awk",
	"fs3/55": verbose, "fs3/56": "gold2 makes a symbolic link, gold a hard link", "fs4/0": "gold2 prints another part of the kernel version",
	"fs4/2": format, "fs4/4": "the while loop runs in the same shell: SHLVL differs", "fs4/5": format,
	"fs5/3": format, "fs5/5": "du -sh writes a human size, du -s blocks",
	"fs5/7": "grep -rl . skips empty files, find does not", "fs5/10": "ls -d dir/ keeps the trailing slash",
	"fs5/11": format,
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
	"fs4/16": "who: nobody is logged in",
	"fs5/4":  "find -type l: the fixture has no symbolic links",
}

// replayRun runs the harness with a replay answering answer(task).
func replayRun(t *testing.T, answer func(intercode.Task) string) *Result {
	t.Helper()
	data := dataDir(t)
	res, err := Run(context.Background(), Options{
		Data: data, Planner: replay(t, data, answer), WorkDir: t.TempDir(), Select: selection(),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d of %d scored tasks correct (%.1f%%), %d skipped; by difficulty %+v",
		res.Overall.Correct, res.Overall.Total, 100*res.Overall.Accuracy(), res.Skipped, res.ByDifficulty)
	for _, tr := range res.Tasks {
		if tr.Skipped {
			t.Logf("skipped %s %q: %s", tr.ID, tr.Gold, tr.Reason)
		}
	}
	return res
}

// TestReplayGold: answering each task with its own gold command scores
// all but the tasks whose result varies from run to run.
func TestReplayGold(t *testing.T) {
	res := replayRun(t, func(tk intercode.Task) string { return tk.Gold })
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
	// Measured: 277 of 288 (96.2%); a loaded machine shows a few more of
	// the nondeterministic ones.
	if acc := res.Overall.Accuracy(); acc < 0.93 {
		t.Errorf("gold replay accuracy %.3f, want at least 0.93", acc)
	}
}

// TestReplayGold2: the benchmark's second gold command. Every task it
// fails is listed in gold2Differs or nondeterministic with the reason.
func TestReplayGold2(t *testing.T) {
	res := replayRun(t, func(tk intercode.Task) string { return tk.Gold2 })
	failed := map[string]bool{}
	for _, f := range res.Failures() {
		failed[f.ID] = true
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
	// Measured: 177 of 288 (61%) on the full set; the floor leaves room
	// for a machine with a few more differences.
	if acc := res.Overall.Accuracy(); acc < 0.55 {
		t.Errorf("gold2 replay accuracy %.3f, want at least 0.55", acc)
	}
}

// TestReplayTrue: answering `true` to everything scores only the tasks
// whose gold prints nothing and changes nothing.
func TestReplayTrue(t *testing.T) {
	res := replayRun(t, func(intercode.Task) string { return "true" })
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
	// Measured: 14 of 288 (4.9%).
	if acc := res.Overall.Accuracy(); acc > 0.06 {
		t.Errorf("`true` replay accuracy %.3f, want at most 0.06", acc)
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
