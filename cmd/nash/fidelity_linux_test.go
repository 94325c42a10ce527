package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/nash-shell/nash/internal/datasets"
	"github.com/nash-shell/nash/internal/fstree"
	"github.com/nash-shell/nash/internal/intercode"
	"github.com/nash-shell/nash/sandbox"
)

// dataDir finds a data set in the repository's testdata (or $NASH_DATA).
func dataDir(t *testing.T, sub string) string {
	t.Helper()
	return datasets.Must(t, sub)
}

// fidelityExclusions are gold commands whose native and sandboxed runs
// legitimately differ, with the reason. Every other difference fails.
var fidelityExclusions = map[string]string{
	"fs1/25#1":  processView,
	"fs1/25#2":  processView,
	"fs1/26#1":  processView,
	"fs1/26#2":  processView,
	"fs1/48#1":  processView,
	"fs4/5#1":   processView,
	"fs4/5#2":   processView,
	"fs1/48#2":  hostView,
	"fs1/2#1":   hostView,
	"fs1/2#2":   hostView,
	"fs1/68#1":  hostView,
	"fs1/68#2":  hostView,
	"fs1/69#1":  hostView,
	"fs1/69#2":  hostView,
	"fs1/28#1":  overlayView,
	"fs1/28#2":  overlayView,
	"fs2/34#1":  overlayView,
	"fs4/14#1":  overlayView,
	"fs4/14#2":  overlayView,
	"fs4/2#2":   overlayView,
	"fs1/59#1":  mountView,
	"fs1/59#2":  mountView,
	"fs2/10#1":  "tee >(wc -l): the process substitution's output races with the pipeline, so its place in stdout varies",
	"fs3/31#1":  writesOutside,
	"fs3/41#1":  writesOutside,
	"fs3/41#2":  writesOutside,
	"fs2/34#2":  "df reports free space, which changes between two runs",
	"fs1/27#1":  "free reports memory in use, which changes between two runs (nash's own processes change it)",
	"fs1/27#2":  "free reports memory in use, which changes between two runs (nash's own processes change it)",
	"fs1/22#1":  "vmstat reports free memory and running processes, which change between two runs (nash's own processes change them)",
	"fs1/22#2":  "vmstat reports free memory and running processes, which change between two runs (nash's own processes change them)",
	"fs1/85#1":  "getconf -a reports free memory pages, which change between two runs",
	"fs1/85#2":  "getconf -a reports free memory pages, which change between two runs",
	"fs1/106#1": deniedNetwork,
	"fs1/106#2": deniedNetwork,
	"fs2/45#1":  deniedNetwork,
	"fs2/45#2":  deniedNetwork,
	"fs1/88#1":  processCap,
	"fs1/88#2":  processCap,
	"fs2/38#1":  clockInFile,
	"fs2/38#2":  clockInFile,
}

const (
	processView   = "ps, pstree, $$: in the sandbox PID 1 is nash's init and the script is not PID 1; PIDs are arbitrary natively too"
	hostView      = "pidof, lsof, netstat: in nash a line that only looks at the host runs there (host looks), as it would natively, while the fenced native run has namespaces of its own"
	overlayView   = "df, stat: inside the sandbox files sit on overlayfs, so the file system and device reported are the overlay's"
	mountView     = "lsblk prints mount points, and the sandbox's mount table (like the fenced native run's) differs from the host's"
	deniedNetwork = "curl of a name: the fenced native run has no network (could not resolve, exit 6); in nash the name gets a stand-in address, the connection is recorded and reset (exit 56) and the summary offers to allow it"
	processCap    = "ulimit -u: nash caps a run's processes (sandbox.max_processes, 4096 by default), and ulimit -u reports the cap"
	clockInFile   = "appends the time to the second to a file: the native and nash runs differ whenever a second boundary falls between them"
	writesOutside = "writes outside the fixture (/usr, ~): nash lets it, as a native run would, but the fenced native run is read-only there"
)

// TestInterCodeFidelity runs every InterCode-ALFA gold command natively
// (fenced) on one copy of its fixture and through `nash run --yes` on
// another at the same path: the trees must be identical and so must stdout
// where the command is deterministic. Then `nash undo` must restore the
// fixture exactly, and an aborted run must leave it untouched.
func TestInterCodeFidelity(t *testing.T) {
	data := dataDir(t, "intercode-alfa")
	tasks, err := intercode.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	base := filepath.Join(work, "root") // the mapped "/" of the fixtures
	templates := map[int]string{}
	for fs := 1; fs <= intercode.NumFS; fs++ {
		if err := os.Mkdir(base, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := intercode.Build(data, fs, base); err != nil {
			t.Fatal(err)
		}
		tpl := filepath.Join(work, fmt.Sprintf("template%d", fs))
		if out, err := exec.Command("cp", "-a", base, tpl).CombinedOutput(); err != nil {
			t.Fatalf("copy fixture: %v\n%s", err, out)
		}
		templates[fs] = tpl
		if err := os.RemoveAll(base); err != nil {
			t.Fatal(err)
		}
	}
	reset := func(fs int) fstree.Tree {
		t.Helper()
		if err := os.RemoveAll(base); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("cp", "-a", templates[fs], base).CombinedOutput(); err != nil {
			t.Fatalf("copy fixture: %v\n%s", err, out)
		}
		tree, err := fstree.Snapshot(base)
		if err != nil {
			t.Fatal(err)
		}
		return tree
	}
	snap := func() fstree.Tree {
		t.Helper()
		tree, err := fstree.Snapshot(base)
		if err != nil {
			t.Fatal(err)
		}
		return tree
	}
	n := newNash(t, base)
	// The fenced native run sees exactly the environment nash's script does.
	fenceEnv := []string{"NASH_STATE_DIR=" + n.state}
	only := os.Getenv("NASH_TEST_ONLY") // a task id prefix, to rerun a few
	var passed int
	var failures, excluded []string
	// Every command, except under -short (every 10th) and under the race
	// detector (every 6th: its nash processes are several times slower;
	// make test's unprivileged pass runs all 600 without it).
	step := 1
	switch {
	case testing.Short():
		step = 10
	case raceEnabled:
		step = 6
	}
	t.Logf("running every %d command(s) of 600", step)
	for i := 0; i < len(tasks); i += step {
		task := tasks[i]
		for g, gold := range []string{task.Gold, task.Gold2} {
			id := fmt.Sprintf("%s#%d", task.ID(), g+1)
			if only != "" && !strings.HasPrefix(id, only) {
				continue
			}
			cmd := intercode.Map(gold, base)
			fail := func(format string, args ...any) {
				msg := fmt.Sprintf("%s %q: %s", id, gold, fmt.Sprintf(format, args...))
				if why, ok := fidelityExclusions[id]; ok {
					excluded = append(excluded, fmt.Sprintf("%s %q: %s", id, gold, why))
					return
				}
				failures = append(failures, msg)
			}

			if msg := checkFidelity(t, n, base, cmd, fenceEnv, func() fstree.Tree { return reset(task.FS) }, snap); msg != "" {
				fail("%s", msg)
				continue
			}
			passed++
		}
	}
	sort.Strings(excluded)
	t.Logf("InterCode-ALFA fidelity: %d of %d commands passed; %d excluded:",
		passed, passed+len(failures)+len(excluded), len(excluded))
	for _, e := range excluded {
		t.Logf("  excluded %s", e)
	}
	for _, f := range failures {
		t.Errorf("%s", f)
	}
}

// checkFidelity runs cmd natively (fenced) and through nash on fresh
// copies of the fixture at base, and describes the first difference, or
// returns "". Whatever happens, a transaction nash committed is undone
// before it returns, so nothing a command did outside the fixture stays.
func checkFidelity(t *testing.T, n *nashCmd, base, cmd string, fenceEnv []string, reset func() fstree.Tree, snap func() fstree.Tree) (msg string) {
	t.Helper()
	orig := reset()
	nativeOut, nativeCode := runFenced(t, base, cmd, fenceEnv...)
	nativeTree := snap()

	reset()
	before := txCount(t, n)
	undo := func() string {
		if txCount(t, n) == before {
			return ""
		}
		if _, errOut, code := n.run("", "undo"); code != 0 {
			return fmt.Sprintf("undo failed (exit %d): %s", code, errOut)
		}
		return ""
	}
	defer func() {
		if m := undo(); m != "" && msg == "" {
			msg = m
		}
	}()
	runYes := func() (string, string, int) {
		out, errOut, code := n.run("", "run", "--yes", "--", cmd)
		if code == exitAborted && strings.Contains(errOut, "--yes does not cover this") {
			// What the analysis says cannot be undone (wall, service)
			// takes the word yes, which --yes never gives.
			return n.run("yes\nc\n", "run", "--", cmd)
		}
		return out, errOut, code
	}
	out, errOut, code := runYes()
	if code != nativeCode {
		return fmt.Sprintf("exit code %d, native %d; stderr: %s", code, nativeCode, clip(errOut))
	}
	if d := fstree.Diff(nativeTree, snap()); d != "" {
		return fmt.Sprintf("tree after nash run --yes differs from native:\n%s", d)
	}
	if out != nativeOut {
		// Deterministic? Run natively once more on a fresh copy.
		if m := undo(); m != "" {
			return m
		}
		reset()
		again, _ := runFenced(t, base, cmd, fenceEnv...)
		if again == nativeOut {
			return fmt.Sprintf("stdout differs from line %d:\nnative: %q\nnash:   %q", firstDiffLine(nativeOut, out), clip(fromDiff(nativeOut, out)), clip(fromDiff(out, nativeOut)))
		}
		reset()
		before = txCount(t, n)
		if _, errOut, code := runYes(); code != nativeCode {
			return fmt.Sprintf("exit code %d, native %d; stderr: %s", code, nativeCode, clip(errOut))
		}
	}
	if m := undo(); m != "" {
		return m
	}
	before = txCount(t, n)
	if d := fstree.Diff(orig, snap()); d != "" {
		return fmt.Sprintf("after undo the fixture differs:\n%s", d)
	}
	if _, errOut, code := n.run("a\n", "run", "--", cmd); code != nativeCode && code != exitAborted {
		return fmt.Sprintf("aborted run: exit code %d, native %d; stderr: %s", code, nativeCode, clip(errOut))
	}
	if d := fstree.Diff(orig, snap()); d != "" {
		return fmt.Sprintf("an aborted run changed the fixture:\n%s", d)
	}
	return ""
}

func txCount(t *testing.T, n *nashCmd) int {
	t.Helper()
	out, errOut, code := n.run("", "log", "--json")
	if code != 0 {
		t.Fatalf("nash log: %s", errOut)
	}
	var txs []sandbox.Tx
	if err := json.Unmarshal([]byte(out), &txs); err != nil {
		t.Fatalf("nash log --json: %v: %q", err, out)
	}
	return len(txs)
}

// firstDiffLine is the 1-based number of the first line where a and b differ.
func firstDiffLine(a, b string) int {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return i + 1
		}
	}
	return min(len(la), len(lb)) + 1
}

// fromDiff is a from the start of the first line where it differs from b.
func fromDiff(a, b string) string {
	lines := strings.SplitAfter(a, "\n")
	n := firstDiffLine(a, b) - 1
	if n >= len(lines) {
		return ""
	}
	return strings.Join(lines[n:], "")
}

func clip(s string) string {
	if len(s) > 400 {
		return s[:400] + "..."
	}
	return s
}
