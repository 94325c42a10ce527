package scripttest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nash-shell/nash/internal/datasets"
	"github.com/nash-shell/nash/internal/fstree"
	"github.com/nash-shell/nash/internal/intercode"
	"github.com/nash-shell/nash/sandbox"
)

// goldDefects explains, per gold command ("fs1/124#1": task fs1/124,
// first gold command), why some variant rightly fails it: the gold
// commands are right for their tasks on their fixtures, but not on every
// starting state. An alarm on a command not listed here is a false alarm;
// without -short, so is a listed command that no longer alarms.
var goldDefects = map[string]string{
	"fs1/107#1": "md5sum of a glob that matches nothing gets the pattern itself",
	"fs1/108#2": "ls of a glob that matches nothing; ls | xargs splits names at spaces and newlines",
	"fs1/123#1": "find | xargs without -0 splits names at spaces and newlines",
	"fs1/124#1": "find | xargs without -0 splits names at spaces and newlines",
	"fs1/124#2": "find | xargs without -0 splits names at spaces and newlines",
	"fs1/126#1": "find | xargs without -0 splits names at spaces and newlines",
	"fs1/128#1": "find | sort | xargs splits names at spaces and newlines",
	"fs1/129#1": "grep reads a name that is not UTF-8 as binary and prints no line for it",
	"fs1/131#1": "find | xargs without -0 splits names at spaces and newlines",
	"fs1/133#1": "find | sort | xargs splits names at spaces and newlines",
	"fs1/134#1": "find | xargs without -0 splits names at spaces and newlines",
	"fs1/136#1": "find | xargs without -0 splits names at spaces and newlines",
	"fs1/137#1": "find | xargs without -0 splits names at spaces and newlines",
	"fs1/144#2": "grep reads an ls line with a name that is not UTF-8 as binary",
	"fs2/5#1":   "rm of a glob that matches nothing gets the pattern itself",
	"fs2/8#1":   "find | xargs rm without -0 splits names at spaces and newlines",
	"fs2/9#2":   "the mv it runs names a directory that does not exist, for any file that matches",
	"fs2/16#1":  "find | xargs rm without -0 deletes the file named after a name's first word; without -r it runs rm with nothing",
	"fs2/17#1":  "find of a glob that matches nothing gets the pattern itself",
	"fs2/24#1":  "find | xargs rm without -0 splits names at spaces and newlines",
	"fs3/10#2":  "find | xargs without -0 splits names at spaces and newlines",
	"fs3/27#1":  "find | xargs without -0 splits names at spaces and newlines",
	"fs3/32#2":  "stat | sort | head | xargs reads a name with a newline as two",
	"fs3/34#1":  "find | xargs without -0 splits names at spaces and newlines",
	"fs5/10#1":  "ls of a glob that matches nothing gets the pattern itself",
}

// TestInterCodeAlarms tests every InterCode-ALFA gold command (every 25th
// task with -short) on the fixture its task was written for, and prints
// how many have a failing variant, by the kind of the first problem, with
// each alarm, and how many of those are false alarms: not a defect of the
// command that goldDefects names. At most 2% (and at least one) may be;
// the fixtures must be byte-identical afterwards.
func TestInterCodeAlarms(t *testing.T) {
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
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "LANG=C.UTF-8", "TERM=dumb"}
	state := t.TempDir()
	roots := map[int]string{}
	for fs := 1; fs <= intercode.NumFS; fs++ {
		base := filepath.Join(work, fmt.Sprintf("fs%d", fs))
		if err := os.Mkdir(base, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := intercode.Build(data, fs, base); err != nil {
			t.Fatal(err)
		}
		roots[fs] = base
	}
	before, err := fstree.Snapshot(work)
	if err != nil {
		t.Fatal(err)
	}
	step := 1
	if testing.Short() {
		step = 25
	}
	var tested, parseErrors, variants int
	var alarms, falseAlarms []string
	alarmed := map[string]bool{}
	byKind := map[string]int{}
	var elapsed time.Duration
	only := os.Getenv("NASH_TEST_ONLY") // a task id prefix, to look at a few closely
	if only != "" {
		step = 1
	}
	for i := 0; i < len(tasks); i += step {
		task := tasks[i]
		base := roots[task.FS]
		tr := New(Dir(base), Env(env), Timeout(5*time.Second), ManyFiles(50), Sandbox(sandbox.StateDir(state)))
		for g, gold := range []string{task.Gold, task.Gold2} {
			id := fmt.Sprintf("%s#%d", task.ID(), g+1)
			if only != "" && !strings.HasPrefix(id, only) {
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			rep, err := tr.Test(ctx, intercode.Map(gold, base))
			cancel()
			if err != nil {
				if strings.Contains(err.Error(), "parse script") {
					parseErrors++
					continue
				}
				t.Fatalf("%s %q: %v", id, gold, err)
			}
			tested++
			if only != "" {
				t.Logf("%s %q:\n%s", id, gold, describe(rep))
			}
			variants += len(rep.Variants)
			elapsed += rep.Elapsed
			if rep.Failed == 0 {
				continue
			}
			var first []string
			for _, v := range rep.Variants {
				if v.Verdict == Fail {
					first = append(first, v.Name+": "+v.Problems[0].Kind+": "+v.Problems[0].Reason)
					byKind[v.Kind.String()+"/"+v.Problems[0].Kind]++
				}
			}
			line := fmt.Sprintf("%s %q:\n      %s", id, gold, strings.ReplaceAll(strings.Join(first, "\n      "), base+"/", ""))
			alarms = append(alarms, line)
			alarmed[id] = true
			if _, ok := goldDefects[id]; !ok {
				falseAlarms = append(falseAlarms, line)
			}
		}
	}
	after, err := fstree.Snapshot(work)
	if err != nil {
		t.Fatal(err)
	}
	if d := fstree.Diff(before, after); d != "" {
		t.Fatalf("the fixtures changed:\n%s", d)
	}
	rate := float64(len(alarms)) / float64(max(tested, 1))
	falseRate := float64(len(falseAlarms)) / float64(max(tested, 1))
	t.Logf("InterCode-ALFA: %d gold commands tested (%d did not parse), %d variants, %s in all (%s a command)",
		tested, parseErrors, variants, elapsed.Round(time.Second), (elapsed / time.Duration(max(tested, 1))).Round(time.Millisecond))
	t.Logf("commands with a failing variant: %d of %d (%.3f); false alarms (no defect of the command explains them): %d (%.3f)",
		len(alarms), tested, rate, len(falseAlarms), falseRate)
	kinds := make([]string, 0, len(byKind))
	for k := range byKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		t.Logf("  failing variants, %s: %d", k, byKind[k])
	}
	for _, a := range alarms {
		t.Logf("  %s", a)
	}
	if allowed := max(1, tested/50); len(falseAlarms) > allowed {
		t.Errorf("%d false alarms, at most %d may be:\n  %s", len(falseAlarms), allowed, strings.Join(falseAlarms, "\n  "))
	}
	if !testing.Short() && only == "" {
		var stale []string
		for id := range goldDefects {
			if !alarmed[id] {
				stale = append(stale, id)
			}
		}
		sort.Strings(stale)
		if len(stale) > 0 {
			t.Errorf("listed in goldDefects but no longer alarmed (remove them, or say why a variant no longer fails): %s", strings.Join(stale, ", "))
		}
	}
}
