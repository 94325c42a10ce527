package sandbox

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/internal/datasets"
	"github.com/nash-shell/nash/internal/intercode"
)

// missedDeletes explains, per gold command ("fs2/13#1": task fs2/13, first
// gold command), why the static analysis cannot say where a path the run
// deleted is. A miss not listed here fails the test, so every miss has a
// reason; so does a listed command that no longer misses (without
// -short). It is empty: on this corpus every deleted path is predicted.
var missedDeletes = map[string]string{}

// irreversibleGold are the gold commands that do something the sandbox
// cannot undo, judged by hand since a change set cannot show it: the
// cannot-undo label is right for these and wrong for every other command.
var irreversibleGold = map[string]string{
	"fs1/82#1": "wall writes to every logged-in terminal",
	"fs1/82#2": "wall writes to every logged-in terminal",
}

// predictionClasses are the classes the test reports, in order: what a
// person reads in a summary. Type changes count with modified paths.
var predictionClasses = []effects.Kind{effects.Created, effects.Modified, effects.Deleted, effects.MetaChanged}

// TestInterCodePrediction runs every InterCode-ALFA gold command in the
// sandbox, on the fixture its task was written for, and compares the paths
// effects.Analyze predicted with the changes the sandbox observed. It
// prints precision and recall per class of change (created,
// written/modified, deleted, metadata changed), overall and per fixture,
// and requires a recall of deleted paths of at least 0.95, with every
// missed delete explained in missedDeletes.
//
// A deleted path is a miss unless a predicted deletion that says where
// covers it: "rm <input>" or "rm $f" with nothing known about the input
// covers any path, so a path only it covers is a miss too (and the delete
// recall is printed, and must hold, both ways). A predicted write or
// creation counts as a created-path prediction when nothing at its path
// existed before the run, else as a modified-path one; a file whose only
// change is its mtime counts as predicted by a write (effects.ScoreKinds).
//
// What counts: every change the sandbox observed, anywhere, except a
// directory's times changing because an entry in it changed, and parents
// made on the way to a predicted path (effects.Compare treats both as
// implied). Each command runs with cwd at the mapped fixture root and HOME
// at a private, empty directory, so writes to ~ (a tool's cache or
// history) are observed and count like any other change; the environment
// is minimal (PATH, HOME, USER, LANG, TERM) so the host's settings do not
// leak in. Predictions of device and kernel files (/dev/null, /proc/...)
// are not counted, since the sandbox does not observe them. Every run is
// aborted, so the fixtures stay as built and are reused.
//
// With -short only every 10th task runs.
func TestInterCodePrediction(t *testing.T) {
	data := datasets.Must(t, datasets.InterCode)
	tasks, err := intercode.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	home := filepath.Join(work, "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	runEnv := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "USER=" + userName(), "LANG=C.UTF-8", "TERM=dumb"}
	// A file, not a reader: the sandbox then copies no input in a
	// goroutine of its own, which a later run's would race with.
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	state := filepath.Join(work, "state")
	roots := map[int]string{}
	boxes := map[int]*Sandbox{}
	for fs := 1; fs <= intercode.NumFS; fs++ {
		base := filepath.Join(work, fmt.Sprintf("fs%d", fs))
		if err := os.Mkdir(base, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := intercode.Build(data, fs, base); err != nil {
			t.Fatal(err)
		}
		sb, err := New(context.Background(), StateDir(state), Dir(base), Env(runEnv),
			Stdio(null, io.Discard, io.Discard))
		if err != nil {
			t.Fatalf("new sandbox: %v", err)
		}
		roots[fs], boxes[fs] = base, sb
	}
	t.Cleanup(func() { // a run left pending by a failed check
		runs, _ := os.ReadDir(layout(state).runsDir())
		for _, r := range runs {
			_ = boxes[1].Abort(r.Name())
		}
	})

	step := 1
	if testing.Short() {
		step = 10
	}
	total := map[effects.Kind]effects.Accuracy{}
	succeeded := map[effects.Kind]effects.Accuracy{} // commands that exited 0
	perFS := map[int]map[effects.Kind]effects.Accuracy{}
	var misses, unexplained, others, outside, notDone []string
	var boundedDel effects.Accuracy // deletions predicted with a place
	missedIDs := map[string]bool{}
	var ran, parseErrors int
	labels := newLabelEval()
	only := os.Getenv("NASH_TEST_ONLY") // a task id prefix, to look at a few closely
	for i := 0; i < len(tasks); i += step {
		task := tasks[i]
		base, sb := roots[task.FS], boxes[task.FS]
		for g, gold := range []string{task.Gold, task.Gold2} {
			id := fmt.Sprintf("%s#%d", task.ID(), g+1)
			if only != "" && !strings.HasPrefix(id, only) {
				continue
			}
			cmd := intercode.Map(gold, base)
			rep, err := effects.Analyze(cmd, effects.Dir(base), effects.Home(home), effects.Files(os.DirFS("/")))
			if err != nil {
				parseErrors++
				rep = &effects.Report{}
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			p, err := sb.Run(ctx, cmd)
			cancel()
			if err != nil {
				t.Fatalf("%s %q: run: %v", id, gold, err)
			}
			truth := observeLabels(sb, p, rep, base)
			_, truth.did[effects.CannotUndo] = irreversibleGold[id]
			truth.known[effects.CannotUndo] = true
			labels.add(id, gold, rep, truth)
			if err := sb.Abort(p.ID); err != nil {
				t.Fatalf("%s: abort: %v", id, err)
			}
			ran++
			if only != "" {
				logRun(t, id, gold, base, rep, p)
			}
			sc := effects.ScoreKinds(rep, p.Changes, existedIn)
			if perFS[task.FS] == nil {
				perFS[task.FS] = map[effects.Kind]effects.Accuracy{}
			}
			for _, k := range predictionClasses {
				if p.ExitCode == 0 {
					succeeded[k] = succeeded[k].Add(sc[k])
				}
				total[k] = total[k].Add(sc[k])
				perFS[task.FS][k] = perFS[task.FS][k].Add(sc[k])
			}
			boundedDel = boundedDel.Add(effects.ScoreKinds(bounded(rep), p.Changes, existedIn)[effects.Deleted])
			loose := map[string]bool{} // covered by some prediction, bounded or not
			for _, c := range p.Changes.Changes {
				loose[c.Path] = true
			}
			for _, c := range effects.Uncovered(rep, p.Changes) {
				loose[c.Path] = false
				if c.Kind != effects.Deleted {
					others = append(others, fmt.Sprintf("%s %q: %s %s", id, gold, c.Kind, rel(base, c.Path)))
				}
			}
			for _, c := range p.Changes.Changes {
				if !within(c.Path, base) && !within(c.Path, home) {
					outside = append(outside, fmt.Sprintf("%s %q: %s %s", id, gold, c.Kind, c.Path))
				}
			}
			for _, u := range effects.Compare(rep, p.Changes).Missed {
				notDone = append(notDone, fmt.Sprintf("%s %q: %s %s (exit %d)", id, gold, u.Access, rel(base, u.Path), p.ExitCode))
			}
			var missed []string
			for _, c := range effects.Uncovered(bounded(rep), p.Changes) {
				if c.Kind != effects.Deleted {
					continue
				}
				if loose[c.Path] {
					missed = append(missed, rel(base, c.Path)+" (predicted only as a deletion of any path)")
				} else {
					missed = append(missed, rel(base, c.Path))
				}
			}
			if len(missed) == 0 {
				continue
			}
			why, ok := missedDeletes[id]
			if !ok {
				why = "UNEXPLAINED"
				unexplained = append(unexplained, id)
			}
			missedIDs[id] = true
			misses = append(misses, fmt.Sprintf("%s %q: %s: %s", id, gold, strings.Join(missed, ", "), why))
		}
	}

	t.Logf("InterCode-ALFA prediction: %d gold commands run, %d did not parse", ran, parseErrors)
	logTable := func(name string, acc map[effects.Kind]effects.Accuracy) {
		for _, k := range predictionClasses {
			a := acc[k]
			t.Logf("  %-4s %-13s precision %5.3f (%4d of %4d predicted happened)  recall %5.3f (%4d of %4d observed predicted)",
				name, k, a.Precision(), a.Matched, a.Predicted, a.Recall(), a.Covered, a.Observed)
		}
	}
	logTable("all", total)
	logTable("ok", succeeded) // a failed command does little of what it says
	for fs := 1; fs <= intercode.NumFS; fs++ {
		if perFS[fs] != nil {
			logTable(fmt.Sprintf("fs%d", fs), perFS[fs])
		}
	}
	labels.log(t, "InterCode-ALFA")
	t.Logf("deleted paths predicted by a deletion that names where (not \"any path\"): recall %.3f (%d of %d)",
		boundedDel.Recall(), boundedDel.Covered, boundedDel.Observed)
	t.Logf("commands with missed deletes (%d):", len(misses))
	for _, m := range misses {
		t.Logf("  %s", m)
	}
	t.Logf("predicted changes that did not happen (%d):", len(notDone))
	for _, n := range notDone {
		t.Logf("  %s", n)
	}
	t.Logf("changes outside the fixture and home (%d):", len(outside))
	for _, o := range outside {
		t.Logf("  %s", o)
	}
	t.Logf("other changes not predicted (%d):", len(others))
	for _, o := range others {
		t.Logf("  %s", o)
	}
	if !testing.Short() {
		var stale []string
		for id := range missedDeletes {
			if !missedIDs[id] {
				stale = append(stale, id)
			}
		}
		sort.Strings(stale)
		for _, id := range stale {
			t.Errorf("missedDeletes explains %s, which no longer misses a delete: remove it", id)
		}
	}
	for _, id := range unexplained {
		t.Errorf("%s: a missed delete without an explanation in missedDeletes", id)
	}
	for _, l := range judgedLabels {
		if p := labels[l].Precision(); p < 0.95 {
			t.Errorf("label %s: precision %.3f, want at least 0.95", l, p)
		}
	}
	for _, l := range []effects.Risk{effects.WritesOutside, effects.Deletes} {
		if r := labels[l].Recall(); r < 1 {
			t.Errorf("label %s: recall %.3f, want 1", l, r)
		}
	}
	if r := total[effects.Deleted].Recall(); r < 0.95 {
		t.Errorf("recall of deleted paths %.3f, want at least 0.95", r)
	}
	if r := boundedDel.Recall(); r < 0.95 {
		t.Errorf("recall of deleted paths by deletions that name where %.3f, want at least 0.95", r)
	}
}

// logRun shows what was predicted and observed for one command.
func logRun(t *testing.T, id, gold, base string, rep *effects.Report, p *Pending) {
	t.Helper()
	t.Logf("%s %q (exit %d)", id, gold, p.ExitCode)
	for _, u := range rep.Paths {
		t.Logf("  predicted %-6s %s (pattern %s, recursive %v, existed %v)", u.Access, rel(base, u.Path), rel(base, u.Pattern), u.Recursive, existedIn(u.Pattern))
	}
	for _, c := range p.Changes.Changes {
		t.Logf("  observed  %-12s %s %v", c.Kind, rel(base, c.Path), c.Meta)
	}
}

// within reports whether p is dir or below it.
func within(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }

func rel(base, p string) string {
	if r, err := filepath.Rel(base, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

// bounded returns r without the predicted deletions whose pattern matches
// any path at all ("<input>", "$f"): those say a deletion happens, not
// where.
func bounded(r *effects.Report) *effects.Report {
	b := *r
	b.Paths = nil
	for _, u := range r.Paths {
		if u.Access == effects.Delete && strings.Trim(u.Pattern, "*/") == "" {
			continue
		}
		b.Paths = append(b.Paths, u)
	}
	return &b
}

// existedIn reports whether some path matching the glob pattern exists:
// runs are aborted, so the live tree is the tree before the run.
func existedIn(pattern string) bool {
	m, _ := filepath.Glob(pattern)
	return len(m) > 0
}

func userName() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "root"
}
