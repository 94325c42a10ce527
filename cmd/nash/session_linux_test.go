package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSandboxSession drives the sandbox commands the way a person would.
func TestSandboxSession(t *testing.T) {
	dir := t.TempDir()
	n := newNash(t, dir)
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return "<missing>"
		}
		return string(b)
	}

	// A run with --json --yes: committed, exit code passed through.
	out, errOut, code := n.run("", "run", "--json", "--yes", "--", "echo one > f; exit 3")
	if code != 3 {
		t.Fatalf("exit code %d, want the script's 3; stderr: %s", code, errOut)
	}
	res := decodeRun(t, out)
	if !res.Committed || res.ExitCode != 3 || len(res.Changes) != 1 || res.Changes[0].Path != filepath.Join(dir, "f") || res.Changes[0].Kind != "created" {
		t.Fatalf("--json result %+v", res)
	}
	if read("f") != "one\n" {
		t.Fatalf("f = %q after commit", read("f"))
	}

	// Without --json nash says the status is the script's.
	_, errOut, code = n.run("", "run", "--yes", "--", "exit 4")
	if code != 4 || !strings.Contains(errOut, "the script exited with status 4") {
		t.Fatalf("exit 4: code %d, stderr %q", code, errOut)
	}

	// The prompt: ask for the diff, then commit.
	_, errOut, code = n.run("d\nc\n", "run", "--", "echo two > f")
	if code != 0 || !strings.Contains(errOut, "-one") || !strings.Contains(errOut, "+two") || !strings.Contains(errOut, "committed as transaction") {
		t.Fatalf("diff then commit: exit %d, stderr:\n%s", code, errOut)
	}
	// End of input at the prompt aborts: nothing changes.
	_, errOut, code = n.run("", "run", "--", "echo three > f")
	if code != exitAborted || read("f") != "two\n" || !strings.Contains(errOut, "nothing was changed") {
		t.Fatalf("abort at EOF: exit %d, f = %q, stderr:\n%s", code, read("f"), errOut)
	}

	// log and show.
	out, _, code = n.run("", "log")
	if code != 0 || !strings.Contains(out, "echo one > f") || !strings.Contains(out, "echo two > f") {
		t.Fatalf("log:\n%s", out)
	}
	out, _, code = n.run("", "show", "--diff", res.Transaction)
	if code != 0 || !strings.Contains(out, "created") {
		t.Fatalf("show:\n%s", out)
	}

	// undo the last transaction: f is "one" again; undo that undo: "two".
	out, errOut, code = n.run("", "undo")
	if code != 0 || read("f") != "one\n" {
		t.Fatalf("undo: exit %d, f = %q, %s%s", code, read("f"), out, errOut)
	}
	out, _, _ = n.run("", "log", "--json")
	var txs []struct {
		ID     string `json:"id"`
		Undoes string `json:"undoes"`
	}
	if err := json.Unmarshal([]byte(out), &txs); err != nil || len(txs) != 3 {
		t.Fatalf("log --json: %v %q", err, out)
	}
	if _, errOut, code = n.run("", "undo", txs[2].ID); code != 0 || read("f") != "two\n" {
		t.Fatalf("redo: exit %d, f = %q, %s", code, read("f"), errOut)
	}

	// A change outside nash is a conflict: named, nothing changed.
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code = n.run("", "undo")
	if code != exitConflict || read("f") != "mine\n" || !strings.Contains(errOut, filepath.Join(dir, "f")) {
		t.Fatalf("conflict: exit %d, f = %q, stderr:\n%s", code, read("f"), errOut)
	}
	// --force undoes anyway and keeps "mine" in the undo's layer.
	out, errOut, code = n.run("", "undo", "--force", "--json")
	if code != 0 || read("f") != "one\n" {
		t.Fatalf("undo --force: exit %d, f = %q, %s", code, read("f"), errOut)
	}
	var forced struct{ ID string }
	if err := json.Unmarshal([]byte(out), &forced); err != nil {
		t.Fatalf("undo --json: %v %q", err, out)
	}
	if _, errOut, code = n.run("", "undo", forced.ID); code != 0 || read("f") != "mine\n" {
		t.Fatalf("undoing the forced undo: exit %d, f = %q, %s", code, read("f"), errOut)
	}

	// A locked file: a run that edits it is refused at commit, nothing
	// changes; unlocked, the same run commits.
	if _, errOut, code = n.run("", "lock", "f"); code != 0 {
		t.Fatalf("lock: %s", errOut)
	}
	_, errOut, code = n.run("", "run", "--yes", "--", "chmod u+w f; echo five > f")
	if code != exitLocked || read("f") != "mine\n" || !strings.Contains(errOut, "locked") || !strings.Contains(errOut, filepath.Join(dir, "f")) {
		t.Fatalf("commit of a locked file: exit %d, f = %q, stderr:\n%s", code, read("f"), errOut)
	}
	if out, _, _ = n.run("", "lock", "--list"); strings.TrimSpace(out) != filepath.Join(dir, "f") {
		t.Fatalf("lock --list: %q", out)
	}
	if _, errOut, code = n.run("", "unlock", "f"); code != 0 {
		t.Fatalf("unlock: %s", errOut)
	}
	if _, errOut, code = n.run("", "run", "--yes", "--", "echo five > f"); code != 0 || read("f") != "five\n" {
		t.Fatalf("commit after unlock: exit %d, f = %q, %s", code, read("f"), errOut)
	}

	// history lists the versions nash knows; rollback makes one current
	// again as a transaction; undo brings the current one back.
	out, errOut, code = n.run("", "history", "--json", "f")
	var vs []struct {
		N      int
		Source string
	}
	if code != 0 || json.Unmarshal([]byte(out), &vs) != nil || len(vs) < 3 || vs[len(vs)-1].Source != "current" {
		t.Fatalf("history: exit %d, %s%s", code, out, errOut)
	}
	// rollback shows the change and asks, as after a run: abort
	// changes nothing; --yes --json commits and prints the run's record.
	if _, errOut, code = n.run("a\n", "rollback", "f", "--back", "1"); code != exitAborted || read("f") != "five\n" ||
		!strings.Contains(errOut, "modified f") || !strings.Contains(errOut, "commit these changes?") {
		t.Fatalf("rollback --back 1, aborted: exit %d, f = %q, %s", code, read("f"), errOut)
	}
	out, errOut, code = n.run("", "rollback", "f", "--back", "1", "--yes", "--json")
	if res := decodeRun(t, out); code != 0 || read("f") == "five\n" || !res.Committed || len(res.Changes) != 1 || res.Changes[0].Path != filepath.Join(dir, "f") {
		t.Fatalf("rollback --back 1 --yes: exit %d, f = %q, %+v, %s", code, read("f"), res, errOut)
	}
	if _, errOut, code = n.run("", "undo"); code != 0 || read("f") != "five\n" {
		t.Fatalf("undo of the rollback: exit %d, f = %q, %s", code, read("f"), errOut)
	}
	if _, errOut, code = n.run("", "rollback", "f"); code != exitUsage {
		t.Fatalf("rollback without a version: exit %d, %s", code, errOut)
	}

	// forget and gc release layers; a forgotten transaction cannot be undone.
	if _, errOut, code = n.run("", "forget", res.Transaction); code != 0 {
		t.Fatalf("forget: %s", errOut)
	}
	if _, errOut, code = n.run("", "undo", res.Transaction); code == 0 || !strings.Contains(errOut, "forgotten") {
		t.Fatalf("undo of a forgotten transaction: exit %d, %s", code, errOut)
	}
	if out, errOut, code = n.run("", "gc", "--max-size", "0"); code != 0 || !strings.Contains(out, "released") {
		t.Fatalf("gc: exit %d, %s%s", code, out, errOut)
	}
}

func TestSandboxCommandsBadInput(t *testing.T) {
	n := newNash(t, t.TempDir())
	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"run"}, exitUsage, "nothing to run"},
		{[]string{"run", "--", "   "}, exitUsage, "empty"},
		{[]string{"run", "-f", "/nonexistent/script.sh"}, exitFailure, "read script"},
		{[]string{"run", "--bogus"}, exitUsage, "unknown flag"},
		{[]string{"undo"}, exitFailure, "nothing to undo"},
		{[]string{"undo", "999"}, exitFailure, "no transaction 999"},
		{[]string{"show", "999"}, exitFailure, "no transaction 999"},
		{[]string{"gc"}, exitUsage, "--older-than"},
		{[]string{"gc", "--older-than", "soon"}, exitUsage, "duration"},
		{[]string{"gc", "--max-size", "lots"}, exitUsage, "size"},
	}
	for _, tt := range tests {
		_, errOut, code := n.run("", tt.args...)
		if code != tt.code || !strings.Contains(errOut, tt.msg) {
			t.Errorf("nash %v: exit %d, stderr %q; want exit %d mentioning %q", tt.args, code, errOut, tt.code, tt.msg)
		}
		if strings.Contains(errOut, "goroutine") || strings.Contains(errOut, "panic") {
			t.Errorf("nash %v printed a stack trace: %s", tt.args, errOut)
		}
	}
}
