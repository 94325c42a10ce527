package scripttest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/sandbox"
)

// TestRunExample runs scripts on the person's examples: a script that
// does what an example says passes; one that does not fails with the
// difference (what is missing, what is there that should not be, how a
// file or the output differs, the exit status). Today's files are not
// the example's, and stay as they are.
func TestRunExample(t *testing.T) {
	work, check := liveTree(t, []string{"today.jpeg", "notes.txt"})
	tr := New(Dir(work), Env(testEnv(t, work)), Timeout(10*time.Second), Sandbox(sandbox.StateDir(t.TempDir())))
	rename := mustExample(t, `a.jpeg 'my photo.jpeg' old/ => a.jpg 'my photo.jpg' old/`)
	count := mustExample(t, `a.txt='x\ny' b.txt=z => stdout: 3 total`)
	for _, c := range []struct {
		script  string
		ex      Example
		pass    bool
		kinds   []string // mismatch kind and path
		inDiffs string   // text some mismatch's diff holds
	}{
		{script: `for f in *.jpeg; do mv -- "$f" "${f%.jpeg}.jpg"; done`, ex: rename, pass: true},
		{script: `for f in *.jpeg; do mv $f ${f%.jpeg}.jpg; done`, ex: rename,
			kinds: []string{"unexpected my photo.jpeg", "missing my photo.jpg", "exit "}},
		{script: `for f in *.jpeg; do cp -- "$f" "${f%.jpeg}.jpg"; done`, ex: rename,
			kinds: []string{"unexpected a.jpeg", "unexpected my photo.jpeg"}},
		{script: `cat *.txt | wc -l | sed 's/$/ total/'`, ex: count, pass: true},
		{script: `wc -l *.txt | head -1`, ex: count, kinds: []string{"stdout "}, inDiffs: "+2 a.txt"},
		{script: `echo hi > a.txt; echo 3 total`, ex: mustExample(t, `a.txt=x => a.txt=hello stdout: 3 total`),
			kinds: []string{"content a.txt"}, inDiffs: "+hi"},
		{script: `ls today.jpeg`, ex: mustExample(t, `=>`), kinds: []string{"exit "}},
	} {
		res, err := tr.RunExample(context.Background(), c.script, c.ex)
		if err != nil {
			t.Fatalf("%s: %v", c.script, err)
		}
		check()
		var kinds []string
		diffs := ""
		for _, m := range res.Mismatches {
			kinds = append(kinds, m.Kind+" "+m.Path)
			diffs += m.Diff
		}
		if res.Pass != c.pass || strings.Join(kinds, ", ") != strings.Join(c.kinds, ", ") || !strings.Contains(diffs, c.inDiffs) {
			t.Errorf("%s: pass %v, mismatches %q; want pass %v, %q with %q in a diff\ngot tree %v\nstdout %q stderr %q\n%s",
				c.script, res.Pass, kinds, c.pass, c.kinds, c.inDiffs, res.Got, res.Stdout, res.Stderr, diffs)
		}
	}
}

// TestExportedTests runs a file WriteTests wrote, in the sandbox: it
// passes for the scripts its examples were written for, and fails, naming
// the example and the difference, for a script that no longer does what
// they say. The file reads back the same (TestTestsRoundTrip).
func TestExportedTests(t *testing.T) {
	work, check := liveTree(t, []string{"today.jpeg"})
	tr := New(Dir(work), Env(testEnv(t, work)), Timeout(20*time.Second), Sandbox(sandbox.StateDir(t.TempDir())))
	good := []Tested{
		{Name: "rename the jpegs", Script: `for f in *.jpeg; do mv -- "$f" "${f%.jpeg}.jpg"; done`,
			Examples: []Example{mustExample(t, `a.jpeg 'my photo.jpeg' $'line\nbreak.jpeg' old/ => a.jpg 'my photo.jpg' $'line\nbreak.jpg' old/`)}},
		{Name: "count lines", Script: `cat *.txt | wc -l`, Examples: []Example{mustExample(t, `a.txt='x\ny' => stdout: 2`)}},
	}
	bad := []Tested{good[0], good[1]}
	bad[0].Script = `for f in *.jpeg; do mv $f ${f%.jpeg}.jpg; done`
	for _, c := range []struct {
		tests []Tested
		exit  int
		out   []string
	}{
		{good, 0, []string{"pass: example 1.1 (rename the jpegs)", "pass: example 2.1 (count lines)"}},
		{bad, 1, []string{"FAIL: example 1.1 (rename the jpegs)", "leaves another tree", "pass: example 2.1 (count lines)"}},
	} {
		var b bytes.Buffer
		if err := WriteTests(&b, c.tests); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		file := filepath.Join(dir, "exported.test")
		if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		bx, err := tr.newBox(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		r, err := tr.runCode(context.Background(), bx, "bash "+shellQuote(file), func(*effects.ChangeSet, host) {})
		bx.close()
		if err != nil {
			t.Fatal(err)
		}
		check()
		for _, want := range c.out {
			if !strings.Contains(r.stdout, want) {
				t.Errorf("exported test prints no %q:\n%s%s", want, r.stdout, r.stderr)
			}
		}
		if r.exit != c.exit {
			t.Errorf("exported test exits %d, want %d:\n%s%s", r.exit, c.exit, r.stdout, r.stderr)
		}
	}
}

func mustExample(t *testing.T, s string) Example {
	t.Helper()
	ex, err := ParseExample(s)
	if err != nil {
		t.Fatal(err)
	}
	return ex
}
