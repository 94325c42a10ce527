package sandbox

import (
	"context"
	"errors"
	"os"
	"slices"
	"strconv"
	"testing"
)

// TestMoveRollsBackWhole: a commit and an undo that move a directory
// (a rename, with changes inside it) and fail at any point after the
// journal leave the tree exactly as before, the moved directory back
// where it was with its inodes, and nothing of the transaction behind;
// without a failure both go through.
func TestMoveRollsBackWhole(t *testing.T) {
	e := newEnv(t)
	e.sh(`mkdir lib && echo a > lib/a && echo b > lib/b`)
	before := snapshot(t, e.work)
	ino := inodes(t, e.work)
	script := `mv lib src && echo new > src/c && echo changed > src/a`
	injected := errors.New("injected failure")
	failAt := func(at string) func(string) error {
		return func(point string) error {
			if point == at {
				return injected
			}
			return nil
		}
	}
	checkBack := func(what string, want map[string]uint64) {
		t.Helper()
		if left, _ := os.ReadDir(layout(e.state).journalDir()); len(left) != 0 {
			t.Fatalf("%s: journal left: %v", what, left)
		}
		got := inodes(t, e.work)
		for p, n := range want {
			if got[p] != n {
				t.Errorf("%s: %s has inode %d, had %d", what, p, got[p], n)
			}
		}
	}
	points := []string{"stashed"}
	for i := range 4 {
		points = append(points, "apply:"+strconv.Itoa(i))
	}
	var p *Pending
	failed := 0
	for _, at := range points {
		p = e.run(script)
		if got := kinds(p, e.work); !slices.Contains(got, "src renamed") {
			t.Fatalf("the move is not read as a rename: %q", got)
		}
		e.sb.waitTorndown(p.ID)
		e.sb.fault = failAt(at)
		_, err := e.sb.Commit(context.Background(), p.ID, CommitOptions{})
		e.sb.fault = nil
		if err == nil {
			break // past the last op: the commit went through
		}
		if !errors.Is(err, injected) {
			t.Fatalf("commit failing at %s: %v", at, err)
		}
		if d := diffTrees(before, snapshot(t, e.work)); d != "" {
			t.Fatalf("commit failing at %s: the tree differs from before:\n%s", at, d)
		}
		checkBack("commit failing at "+at, ino)
		if err := e.sb.Abort(p.ID); err != nil {
			t.Fatal(err)
		}
		failed++
	}
	if failed < 3 {
		t.Fatalf("only %d commits failed: the points %v are not reached", failed, points)
	}
	if _, err := os.Stat(e.path("src/c")); err != nil {
		t.Fatalf("the commit did not go through in the end: %v", err)
	}
	if got := inodes(t, e.work); got["src/b"] != ino["lib/b"] {
		t.Errorf("src/b is not lib/b moved: inode %d, was %d", got["src/b"], ino["lib/b"])
	}
	committed := snapshot(t, e.work)
	cino := inodes(t, e.work)
	txs, err := e.sb.Log()
	if err != nil || len(txs) == 0 {
		t.Fatalf("log: %v, %v", txs, err)
	}
	id := txs[len(txs)-1].ID
	failed = 0
	for _, at := range points {
		e.sb.fault = failAt(at)
		_, err := e.sb.Undo(context.Background(), id, UndoOptions{})
		e.sb.fault = nil
		if err == nil {
			break
		}
		if !errors.Is(err, injected) {
			t.Fatalf("undo failing at %s: %v", at, err)
		}
		if d := diffTrees(committed, snapshot(t, e.work)); d != "" {
			t.Fatalf("undo failing at %s: the tree differs from the committed one:\n%s", at, d)
		}
		checkBack("undo failing at "+at, cino)
		failed++
	}
	if failed < 3 {
		t.Fatalf("only %d undos failed: the points %v are not reached", failed, points)
	}
	if d := diffTrees(before, snapshot(t, e.work)); d != "" {
		t.Fatalf("after the undo the tree differs from before:\n%s", d)
	}
	if got := inodes(t, e.work); got["lib/b"] != ino["lib/b"] {
		t.Errorf("lib/b after the undo: inode %d, was %d", got["lib/b"], ino["lib/b"])
	}
}
