package scripttest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nash-shell/nash/internal/fstree"
	"github.com/nash-shell/nash/sandbox"
)

// defectCorpus is scripts with classic defects, each with the variant that
// must fail (its name starts with fails) and a careful version of the same
// script on which no variant may fail. Today's tree is files (a name
// ending in / is a directory; a file holds "content of NAME").
var defectCorpus = []struct {
	name    string
	files   []string
	env     []string
	script  string
	fails   string
	careful string
	timeout time.Duration
	// unprivileged is set when only an ordinary user can be shown the
	// defect: root writes where the mode says no, live as in the
	// sandbox, so no read-only variant is tried for it.
	unprivileged bool
}{
	{
		name:    "for f in $(ls)",
		files:   []string{"a.log", "b.log", "notes.txt"},
		script:  `for f in $(ls *.log); do gzip $f; done`,
		fails:   "name-space",
		careful: `for f in ./*.log; do [ -e "$f" ] || continue; gzip -- "$f"; done`,
	},
	{
		name:    "unquoted $f",
		files:   []string{"a.txt", "b.txt", "keep.md"},
		script:  `for f in *.txt; do mv $f ${f%.txt}.md.bak; done`,
		fails:   "name-space",
		careful: `shopt -s nullglob; for f in *.txt; do mv -- "$f" "${f%.txt}.md.bak"; done`,
	},
	{
		name:    "rm -rf \"$DIR/\"* with DIR unset",
		files:   []string{"build/", "build/a.o", "build/b.o", "main.c"},
		env:     []string{"DIR=$WORK/build"},
		script:  `rm -rf "$DIR/"*`,
		fails:   "var-unset DIR",
		careful: `rm -rf -- "${DIR:?DIR is not set}/"*`,
		timeout: 2 * time.Second,
	},
	{
		name:    "a glob that fails without nullglob",
		files:   []string{"a.csv", "b.csv"},
		script:  `for f in *.csv; do wc -l "$f" > "$f.count"; done`,
		fails:   "glob-none",
		careful: `shopt -s nullglob; for f in *.csv; do wc -l < "$f" > "$f.count"; done`,
	},
	{
		name:    "cd dir; rm * without checking cd",
		files:   []string{"cache/", "cache/a.tmp", "cache/b.tmp", "report.doc", "thesis.tex"},
		script:  `cd cache; rm *`,
		fails:   "missing cache",
		careful: `cd cache || exit 1; rm -f -- *`,
	},
	{
		name:    "parsing ls -l",
		files:   []string{"a.txt", "b.txt", "backup/"},
		script:  `ls -l *.txt | awk '{print $9}' | xargs -I{} cp {} backup/`,
		fails:   "name-space",
		careful: `shopt -s nullglob; for f in *.txt; do cp -- "$f" backup/; done`,
	},
	{
		name:         "going on after a failed write",
		files:        []string{"names.txt", "sorted.txt"},
		script:       `sort names.txt > sorted.txt; rm names.txt`,
		fails:        "read-only sorted.txt",
		careful:      `sort names.txt > sorted.txt && rm names.txt`,
		unprivileged: true,
	},
	{
		name:    "find | xargs without -print0",
		files:   []string{"a.tmp", "b.tmp", "keep.txt"},
		script:  `find . -name '*.tmp' | xargs rm`,
		fails:   "name-space",
		careful: `find . -name '*.tmp' -exec rm -- {} +`,
	},
}

// TestDefectCorpus tests each script of the corpus and its careful
// version: the defect's variant must fail and be named; the careful
// version must pass every variant. The live tree (today's files and a
// directory beside them) must be byte-identical after every test.
func TestDefectCorpus(t *testing.T) {
	for _, c := range defectCorpus {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			work, check := liveTree(t, c.files)
			timeout := 10 * time.Second
			if c.timeout > 0 {
				timeout = c.timeout
			}
			tr := New(Dir(work), Env(testEnv(t, work, c.env...)), Timeout(timeout), ManyFiles(manyFiles()),
				Sandbox(sandbox.StateDir(t.TempDir())))
			rep := test(t, tr, c.script)
			check()
			t.Logf("%s\n%s", c.script, describe(rep))
			failed, tried := false, false
			for _, v := range rep.Variants {
				if strings.HasPrefix(v.Name, c.fails) {
					tried = true
					failed = failed || v.Verdict == Fail
				}
			}
			switch {
			case c.unprivileged && os.Geteuid() == 0:
				if tried {
					t.Errorf("%s: as root, variant %q was tried\n%s", c.script, c.fails, describe(rep))
				}
			case !failed:
				t.Errorf("%s: no variant %q failed\n%s", c.script, c.fails, describe(rep))
			}
			rep = test(t, tr, c.careful)
			check()
			t.Logf("%s\n%s", c.careful, describe(rep))
			if rep.Failed > 0 {
				t.Errorf("careful %s: %d variants failed\n%s", c.careful, rep.Failed, describe(rep))
			}
		})
	}
}

// manyFiles is how many files the many-files variant makes: fewer with
// -short.
func manyFiles() int {
	if testing.Short() {
		return 30
	}
	return 50
}

// test runs tr.Test and fails the test on error.
func test(t *testing.T, tr *Tester, script string) *Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rep, err := tr.Test(ctx, script)
	if err != nil {
		t.Fatalf("test %q: %v", script, err)
	}
	return rep
}

// liveTree makes today's files in a new working directory, next to a
// directory of files outside it, and returns a check that both are as
// made, byte for byte.
func liveTree(t *testing.T, files []string) (string, func()) {
	t.Helper()
	base := t.TempDir()
	work := filepath.Join(base, "work")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{work, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "keep"), []byte("outside the working directory\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		p := filepath.Join(work, f)
		if strings.HasSuffix(f, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("content of "+f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before, err := fstree.Snapshot(base)
	if err != nil {
		t.Fatal(err)
	}
	return work, func() {
		t.Helper()
		after, err := fstree.Snapshot(base)
		if err != nil {
			t.Fatal(err)
		}
		if d := fstree.Diff(before, after); d != "" {
			t.Fatalf("the live tree changed:\n%s", d)
		}
		if _, err := os.Lstat("/tmp/nash-test-elsewhere"); err == nil {
			t.Fatal("a symlink variant's target is in the live /tmp")
		}
	}
}

// testEnv is a small environment for scripts, with HOME in the working
// directory's parent and extra variables, in which $WORK is the working
// directory.
func testEnv(t *testing.T, work string, extra ...string) []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Dir(work), "LANG=C.UTF-8", "TERM=dumb"}
	for _, e := range extra {
		env = append(env, strings.ReplaceAll(e, "$WORK", work))
	}
	return env
}

// describe renders a report for a test's failure message.
func describe(r *Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d variants, %d failed, in %s\n", len(r.Variants), r.Failed, r.Elapsed.Round(time.Millisecond))
	for _, v := range r.Variants {
		fmt.Fprintf(&b, "  [%s] %s: %s (exit %d, %d changes)\n", v.Verdict, v.Name, v.Title, v.ExitCode, v.NumChanges)
		for _, p := range v.Problems {
			fmt.Fprintf(&b, "      fails, %s: %s\n", p.Kind, p.Reason)
		}
		for _, p := range v.Differences {
			fmt.Fprintf(&b, "      differs, %s: %s\n", p.Kind, p.Reason)
		}
		if v.SetupError != "" {
			fmt.Fprintf(&b, "      setup: %s\n", v.SetupError)
		}
		if v.Verdict == Fail && v.Stderr != "" {
			fmt.Fprintf(&b, "      stderr: %.300q\n", v.Stderr)
		}
	}
	return b.String()
}
