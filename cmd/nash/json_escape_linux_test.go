package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hostileName holds what JSON encoders leave raw and a terminal acts on:
// C1 controls (CSI, NEL), bidi overrides, embeddings, isolates and marks.
const hostileName = "in\u202evoice\u0085\u009b2J\u2066x\u2069\u200e\u200f\u061c\u202a\u202b\u202c\u202d.txt"

// rawHostile lists the runes of hostileName that must never reach a
// terminal as themselves.
var rawHostile = []rune{0x202e, 0x85, 0x9b, 0x2066, 0x2069, 0x200e, 0x200f, 0x61c, 0x202a, 0x202b, 0x202c, 0x202d}

// TestJSONEscapesControlsAndBidi: every --json of nash writes C1 controls
// and bidi controls as \uXXXX escapes, and the JSON still reads back to
// the same file name.
func TestJSONEscapesControlsAndBidi(t *testing.T) {
	dir := t.TempDir()
	n := newNash(t, dir)
	script := "echo x > '" + hostileName + "'"
	check := func(what, out string, named bool) {
		t.Helper()
		for _, r := range rawHostile {
			if strings.ContainsRune(out, r) {
				t.Errorf("%s prints U+%04X raw:\n%q", what, r, out)
			}
		}
		if !json.Valid([]byte(strings.TrimSpace(out))) && !validLines(out) {
			t.Errorf("%s is not JSON: %q", what, out)
		}
		if named && !strings.Contains(out, `\u202e`) {
			t.Errorf("%s lacks the escaped name: %q", what, out)
		}
	}
	out, errOut, code := n.run("", "run", "--yes", "--json", "--", script)
	if code != 0 {
		t.Fatalf("run: exit %d, %s", code, errOut)
	}
	check("nash run --json", out, true)
	var res struct {
		Run struct {
			Changes []struct{ Path string } `json:"changes"`
		} `json:"run"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Run.Changes) != 1 || filepath.Base(res.Run.Changes[0].Path) != hostileName {
		t.Errorf("nash run --json does not read back to the name: %+v, %v", res, err)
	}
	out, _, _ = n.run("", "log", "--json")
	check("nash log --json", out, true)
	out, _, _ = n.run("", "show", "1", "--json")
	check("nash show --json", out, true)
	out, _, _ = n.run("", "history", "--json", filepath.Join(dir, hostileName))
	check("nash history --json", out, false)
	out, _, _ = n.run("", "explain", "--json", script)
	check("nash explain --json", out, true)
	// A conflict names the path: change it outside nash, then undo.
	if err := os.WriteFile(filepath.Join(dir, hostileName), []byte("changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, _, code = n.run("", "undo", "--json")
	if code != exitConflict {
		t.Fatalf("undo: exit %d, want a conflict", code)
	}
	check("nash undo --json (conflict)", out, true)
	// nash find --json names the file the index found.
	n.env = append(n.env, "NASH_INDEX_DIR="+filepath.Join(t.TempDir(), "index"), "NASH_EMBEDDER=")
	if _, errOut, code := n.run("", "index", "add", dir); code != 0 {
		t.Fatalf("index add: exit %d, %s", code, errOut)
	}
	t.Cleanup(func() { n.run("", "index", "stop") }) // before the temp dirs go
	out, errOut, code = n.run("", "find", "--json", "changed")
	if code != 0 {
		t.Fatalf("find: exit %d, %s", code, errOut)
	}
	check("nash find --json", out, true)
}

// validLines reports whether every non-empty line of s is JSON.
func validLines(s string) bool {
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if !json.Valid([]byte(l)) {
			return false
		}
	}
	return true
}
