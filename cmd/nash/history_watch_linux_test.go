package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHistoryOfChangesOutsideNash: the index server, held up by nash
// index watch, records each new version of an indexed file changed
// outside nash, so nash history lists the earlier one and nash rollback
// brings it back.
func TestHistoryOfChangesOutsideNash(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(f, []byte("first draft\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	n := newNash(t, dir)
	n.env = []string{"NASH_INDEX_DIR=" + filepath.Join(t.TempDir(), "index")}
	if _, errOut, code := n.run("", "index", "add", dir); code != 0 {
		t.Fatalf("index add: %s", errOut)
	}
	t.Cleanup(func() { n.run("", "index", "stop") }) // before the temp dirs go
	watch := exec.Command(testBin(t, "nash"), "index", "watch")
	watch.Dir = dir
	watch.Env = append(os.Environ(), "NASH_STATE_DIR="+n.state)
	watch.Env = append(watch.Env, n.env...)
	out, err := watch.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := watch.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = watch.Process.Kill(); _ = watch.Wait() })
	lines := bufio.NewScanner(out)
	for lines.Scan() && !strings.Contains(lines.Text(), "watching") {
	}
	go func() {
		for lines.Scan() {
		}
	}()

	history := func() []string {
		stdout, errOut, code := n.run("", "history", "--json", f)
		if code != 0 {
			t.Fatalf("history: %s", errOut)
		}
		var vs []struct{ Source string }
		if err := json.Unmarshal([]byte(stdout), &vs); err != nil {
			t.Fatalf("history --json %q: %v", stdout, err)
		}
		var src []string
		for _, v := range vs {
			src = append(src, v.Source)
		}
		return src
	}
	// Two edits outside nash: the watcher records each new content; the
	// first one becomes an earlier version once the second lands.
	if err := os.WriteFile(f, []byte("second draft\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The recorder keeps its copies in the state dir's versions/.
	waitUntil(t, func() bool {
		copies, _ := filepath.Glob(filepath.Join(n.state, "versions", "*", "[0-9]*"))
		return len(copies) == 1
	}, "the watcher to record the first edit")
	if err := os.WriteFile(f, []byte("third draft\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, func() bool { h := history(); return len(h) == 2 && h[0] == "recorded" }, "a recorded earlier version")
	if _, errOut, code := n.run("", "rollback", f, "--back", "1", "--yes"); code != 0 {
		t.Fatalf("rollback: %s", errOut)
	}
	if b, _ := os.ReadFile(f); string(b) != "second draft\n" {
		t.Fatalf("after rollback notes.txt = %q", b)
	}
}

// waitUntil polls cond for up to 20 s; it checks behaviour, not speed.
func waitUntil(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if cond() {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}
