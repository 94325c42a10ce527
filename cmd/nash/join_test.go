//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nash-shell/nash/internal/fstree"
)

// joinTree writes files with hostile names and returns the directory and a
// nash that runs there with no model.
func joinTree(t *testing.T, files map[string]string) (string, *nashCmd) {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	n := newNash(t, dir)
	emptyTrashOnCleanup(t, n)
	n.env = append(n.env, "NASH_MODEL=", "NASH_CONFIG="+filepath.Join(t.TempDir(), "none.yaml"))
	return dir, n
}

// TestJoinIntoAndUndo concatenates three files with hostile names into a
// new file with a hostile name; the inputs stay; undo removes the result.
func TestJoinIntoAndUndo(t *testing.T) {
	a, b, c := "-a first.txt", "new\nline $(touch pwned).txt", "it's \x1b[2J.txt"
	dir, n := joinTree(t, map[string]string{a: "one\n", b: "two\n", c: "three"})
	before := snapshot(t, dir)
	into := "-joined; rm -rf ~.txt"
	out, errOut, code := n.run("", "join", "--into", into, "--yes", "--", a, b, c)
	if code != 0 {
		t.Fatalf("join --into: code %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	if !strings.Contains(errOut, "script\n") || !strings.Contains(errOut, "set -e -o noclobber") || !strings.Contains(errOut, "what it will do") {
		t.Errorf("script not shown:\n%s", errOut)
	}
	if strings.ContainsRune(errOut, 0x1b) {
		t.Errorf("an escape sequence from a file name reached the terminal:\n%q", errOut)
	}
	if got, err := os.ReadFile(filepath.Join(dir, into)); err != nil || string(got) != "one\ntwo\nthree" {
		t.Errorf("joined file: %q, %v", got, err)
	}
	after := snapshot(t, dir)
	delete(after, into)
	if d := fstree.Diff(before, after); d != "" {
		t.Errorf("join --into changed its inputs:\n%s", d)
	}
	if _, err := os.Lstat(filepath.Join(dir, "pwned")); err == nil {
		t.Error("a file name ran a command")
	}
	if _, _, code := n.run("", "undo"); code != 0 {
		t.Fatal("undo failed")
	}
	if d := fstree.Diff(before, snapshot(t, dir)); d != "" {
		t.Errorf("undo did not restore the tree:\n%s", d)
	}
}

// TestJoinAppendAndUndo appends B to A and removes B; --json reports the
// two changes; undo brings both back as they were.
func TestJoinAppendAndUndo(t *testing.T) {
	a, b := "notes.txt", "--more notes.txt"
	dir, n := joinTree(t, map[string]string{a: "monday\n", b: "tuesday\n"})
	before := snapshot(t, dir)
	out, errOut, code := n.run("", "join", "--yes", "--json", "--", a, b)
	if code != 0 {
		t.Fatalf("join: code %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	res := decodeRun(t, out)
	if !res.Committed || len(res.Changes) != 2 {
		t.Fatalf("--json: %+v\n%s", res, out)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, a)); string(got) != "monday\ntuesday\n" {
		t.Errorf("%s = %q", a, got)
	}
	if _, err := os.Lstat(filepath.Join(dir, b)); err == nil {
		t.Errorf("%s was not removed", b)
	}
	logOut, _, _ := n.run("", "show", res.Transaction)
	if !strings.Contains(logOut, "request: nash join") {
		t.Errorf("show does not name the request:\n%s", logOut)
	}
	if _, _, code := n.run("", "undo", res.Transaction); code != 0 {
		t.Fatal("undo failed")
	}
	if d := fstree.Diff(before, snapshot(t, dir)); d != "" {
		t.Errorf("undo did not restore the tree:\n%s", d)
	}
}

// TestJoinAbort answers abort at the question: nothing changes.
func TestJoinAbort(t *testing.T) {
	dir, n := joinTree(t, map[string]string{"a": "1\n", "b": "2\n"})
	before := snapshot(t, dir)
	_, errOut, code := n.run("a\n", "join", "a", "b")
	if code != exitAborted || !strings.Contains(errOut, "commit these changes?") {
		t.Fatalf("code %d, want %d\n%s", code, exitAborted, errOut)
	}
	if d := fstree.Diff(before, snapshot(t, dir)); d != "" {
		t.Errorf("abort changed the tree:\n%s", d)
	}
}

func TestJoinRefusals(t *testing.T) {
	dir, n := joinTree(t, map[string]string{"a": "1\n", "b": "2\n", "c": "3\n"})
	for _, mk := range []func() error{
		func() error { return os.Mkdir(filepath.Join(dir, "d"), 0o755) },
		func() error { return os.Symlink("a", filepath.Join(dir, "to-a")) },
		func() error { return os.Link(filepath.Join(dir, "a"), filepath.Join(dir, "hard-a")) },
	} {
		if err := mk(); err != nil {
			t.Fatal(err)
		}
	}
	before := snapshot(t, dir)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"join", "a"}, "at least 2"},
		{[]string{"join", "a", "missing"}, "no such file"},
		{[]string{"join", "a", "d"}, "not a regular file"},
		{[]string{"join", "a", "to-a"}, "symlink"},
		{[]string{"join", "a", "a"}, "same file"},
		{[]string{"join", "a", "hard-a"}, "same file"},
		{[]string{"join", "a", "b", "--into", "c"}, "exists"},
		{[]string{"join", "a", "b", "--into", "a"}, "exists"},
		{[]string{"join", "a", "b", "--into", "no/such/dir/x"}, "no directory"},
	}
	for _, tt := range tests {
		_, errOut, code := n.run("", append(tt.args, "--yes")...)
		if code != exitUsage || !strings.Contains(errOut, tt.want) {
			t.Errorf("nash %q: code %d, stderr %q; want code %d and %q", tt.args, code, errOut, exitUsage, tt.want)
		}
	}
	if d := fstree.Diff(before, snapshot(t, dir)); d != "" {
		t.Errorf("a refused join changed the tree:\n%s", d)
	}
}
