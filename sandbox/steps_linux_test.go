package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTransactionIDsConsecutive: runs take ids of their own, so the
// transactions are numbered 1, 2, 3 whatever was aborted between them; a
// transaction of tools' own files takes a minor id and no number.
func TestTransactionIDsConsecutive(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	var ids []string
	for i, script := range []string{"echo a > a", "echo b > b", "echo c > c", "echo d > d"} {
		p := e.run(script)
		if !IsRunID(p.ID) || IsTxID(p.ID) {
			t.Fatalf("run id %q: want r and a number", p.ID)
		}
		switch i {
		case 1: // aborted: takes no transaction id
			if err := e.sb.Abort(p.ID); err != nil {
				t.Fatal(err)
			}
			continue
		case 2: // tools' own files only
			tx, err := e.sb.Commit(ctx, p.ID, CommitOptions{Bookkeeping: true, Tools: []string{e.path("c")}})
			if err != nil {
				t.Fatal(err)
			}
			if !tx.Bookkeeping || len(tx.Tools) != 1 {
				t.Errorf("bookkeeping transaction %+v", tx)
			}
			ids = append(ids, tx.ID)
			continue
		}
		ids = append(ids, e.commit(p).ID)
	}
	// An undo is a transaction a person sees: it takes the next number.
	u := e.undo("")
	ids = append(ids, u.ID)
	if got, want := strings.Join(ids, " "), "1 1.1 2 3"; got != want {
		t.Errorf("transaction ids %q, want %q", got, want)
	}
	if u.Undoes != "2" {
		t.Errorf("undo without an id undid %s, want 2 (the last change, not the bookkeeping)", u.Undoes)
	}
	// A new Sandbox (a later nash) goes on from there.
	sb2, err := New(ctx, StateDir(e.state), Dir(e.work))
	if err != nil {
		t.Fatal(err)
	}
	defer sb2.Close()
	p, err := sb2.Run(ctx, "echo e > e")
	if err != nil {
		t.Fatal(err)
	}
	tx, err := sb2.Commit(ctx, p.ID, CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tx.ID != "4" {
		t.Errorf("next transaction %s, want 4", tx.ID)
	}
}

// TestUndoStepsBackRedoStepsForward: undo without an id goes further back
// each time; redo brings the undone changes back, latest undone first, and
// stops at a new change.
func TestUndoStepsBackRedoStepsForward(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.sh("echo 0 > f")
	read := func() string {
		b, err := os.ReadFile(e.path("f"))
		if err != nil {
			return "<gone>"
		}
		return strings.TrimSpace(string(b))
	}
	for _, v := range []string{"1", "2", "3"} {
		e.commit(e.run("echo " + v + " > f"))
	}
	steps := []struct {
		do   string
		want string
	}{
		{"undo", "2"}, {"undo", "1"}, {"redo", "2"}, {"undo", "1"}, {"undo", "0"},
		{"redo", "1"}, {"redo", "2"}, {"redo", "3"}, {"redo", ""}, {"undo", "2"},
	}
	for i, s := range steps {
		var err error
		if s.do == "undo" {
			_, err = e.sb.Undo(ctx, "", UndoOptions{})
		} else {
			_, err = e.sb.Redo(ctx)
		}
		if s.want == "" {
			if !errors.Is(err, ErrNothingToRedo) {
				t.Fatalf("step %d %s: %v, want nothing to redo", i, s.do, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("step %d %s: %v", i, s.do, err)
		}
		if got := read(); got != s.want {
			t.Fatalf("step %d %s: f is %q, want %q", i, s.do, got, s.want)
		}
	}
	// A new change ends what can be redone.
	e.commit(e.run("echo 4 > f"))
	if _, err := e.sb.Redo(ctx); !errors.Is(err, ErrNothingToRedo) {
		t.Errorf("redo after a new change: %v", err)
	}
	// Undo all the way back, then there is nothing left.
	for read() != "0" {
		if _, err := e.sb.Undo(ctx, "", UndoOptions{}); err != nil {
			t.Fatalf("undo back to the start (f is %s): %v", read(), err)
		}
	}
	if _, err := e.sb.Undo(ctx, "", UndoOptions{}); !errors.Is(err, ErrNothingToUndo) {
		t.Errorf("undo with everything undone: %v", err)
	}
	// An undo of a path the transaction never changed says so.
	g := e.commit(e.run("echo g > g"))
	_, err := e.sb.Undo(ctx, g.ID, UndoOptions{Paths: []string{e.path("abc")}})
	var nt *NothingThereError
	if !errors.As(err, &nt) || nt.ID != g.ID {
		t.Errorf("undo of a path not changed: %v", err)
	}
}

// TestKeptRunCommittedLater: an aborted run that is kept changes nothing
// live, survives its nash (a later one's recovery leaves it), can be
// shown and committed later; a path changed since is a conflict.
func TestKeptRunCommittedLater(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.sh("echo old > essay.txt; echo old > other.txt")
	before := snapshot(t, e.work)
	// /tmp is another overlay than the working directory's: it lives on
	// the scratch dir when that is another file system.
	tmpName := filepath.Join(os.TempDir(), "nash-kept-test-"+filepath.Base(e.work))
	t.Cleanup(func() { os.Remove(tmpName) })
	p := e.run("echo new > essay.txt; echo x > made.txt; echo t > " + tmpName)
	if err := e.sb.Keep(ctx, p.ID, "rewrite the essay"); err != nil {
		t.Fatal(err)
	}
	if d := diffTrees(before, snapshot(t, e.work)); d != "" {
		t.Fatalf("keeping a run changed the live tree:\n%s", d)
	}
	if _, err := os.Lstat(tmpName); err == nil {
		t.Fatalf("keeping a run made %s live", tmpName)
	}
	e.sb.Close()

	// A later nash: its recovery leaves the kept run alone, and its
	// sweep does not take the scratch dir.
	sb2, err := New(ctx, StateDir(e.state), Dir(e.work))
	if err != nil {
		t.Fatal(err)
	}
	defer sb2.Close()
	if rep := sb2.lastRecovery; len(rep.Discarded) > 0 {
		t.Fatalf("recovery discarded %v", rep.Discarded)
	}
	sweepScratch()
	kept, err := sb2.Kept()
	if err != nil || len(kept) != 1 || kept[0].ID != p.ID || kept[0].Prompt != "rewrite the essay" {
		t.Fatalf("kept runs %+v, %v", kept, err)
	}
	k, cs, err := sb2.ShowKept(p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if k.Aborted.IsZero() || cs.Len() != 3 {
		t.Fatalf("show kept: %+v, changes %v", k, cs.Changes)
	}
	tx, err := sb2.Commit(ctx, p.ID, CommitOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tx.ID != "1" || tx.Prompt != "rewrite the essay" {
		t.Errorf("committed kept run as %+v", tx)
	}
	if got := readFile(t, e.path("essay.txt")); got != "new\n" {
		t.Errorf("essay.txt is %q after committing the kept run", got)
	}
	if got := readFile(t, tmpName); got != "t\n" {
		t.Errorf("%s is %q after committing the kept run", tmpName, got)
	}
	if kept, _ := sb2.Kept(); len(kept) != 0 {
		t.Errorf("still kept after commit: %+v", kept)
	}

	// A kept run whose path changed since is a conflict, named.
	p = e.run("echo newer > other.txt")
	if err := e.sb.Keep(ctx, p.ID, ""); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	e.sh("echo edited > other.txt")
	_, err = e.sb.Commit(ctx, p.ID, CommitOptions{})
	var ce *ConflictError
	if !errors.As(err, &ce) || len(ce.Conflicts) != 1 || ce.Conflicts[0].Path != e.path("other.txt") {
		t.Fatalf("commit of a kept run over a changed path: %v", err)
	}
	if got := readFile(t, e.path("other.txt")); got != "edited\n" {
		t.Errorf("other.txt is %q", got)
	}
}

// TestGCDiscardsOldKeptRuns: gc discards the runs kept longer than it is
// told, scratch dir and all, and leaves the younger ones.
func TestGCDiscardsOldKeptRuns(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	tmpName := filepath.Join(os.TempDir(), "nash-gc-test-"+filepath.Base(e.work))
	old := e.run("echo a > a; echo t > " + tmpName)
	if err := e.sb.Keep(ctx, old.ID, ""); err != nil {
		t.Fatal(err)
	}
	rec, err := e.sb.layout().readKept(old.ID)
	if err != nil {
		t.Fatal(err)
	}
	// Make it look kept a day ago.
	rec.Kept = time.Now().Add(-24 * time.Hour)
	if err := writeGob(filepath.Join(e.sb.layout().runDir(old.ID), runFile), rec); err != nil {
		t.Fatal(err)
	}
	young := e.run("echo b > b")
	if err := e.sb.Keep(ctx, young.ID, ""); err != nil {
		t.Fatal(err)
	}
	res, err := e.sb.GC(ctx, time.Hour, -1)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Discarded) != 1 || res.Discarded[0] != old.ID {
		t.Fatalf("gc discarded %v, want %s", res.Discarded, old.ID)
	}
	e.sb.Close()
	if rec.Scratch != "" {
		if _, err := os.Stat(rec.Scratch); err == nil {
			t.Errorf("the discarded run's scratch dir %s is still there", rec.Scratch)
		}
	}
	kept, _ := e.sb.Kept()
	if len(kept) != 1 || kept[0].ID != young.ID {
		t.Errorf("kept after gc: %+v", kept)
	}
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

// TestKeepRefusesChangesHeldInMemory: what a run wrote outside the working
// directory's file system is on its scratch tmpfs, freed with the process
// that ran it, so such a run is not kept (NotKeptError): nothing live
// changes, and it is aborted as before.
func TestKeepRefusesChangesHeldInMemory(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	shm := filepath.Join("/dev/shm", "nash-notkept-"+filepath.Base(e.work))
	t.Cleanup(func() { os.Remove(shm) })
	p := e.run("echo x > made.txt && echo t > " + shm)
	if p.ExitCode != 0 || p.Changes.Len() != 2 {
		t.Fatalf("the run: exit %d, changes %v", p.ExitCode, p.Changes.Changes)
	}
	err := e.sb.Keep(ctx, p.ID, "")
	var nk *NotKeptError
	if !errors.As(err, &nk) || nk.ID != p.ID || nk.Point != "/dev/shm" {
		t.Fatalf("keep of a run with changes on tmpfs: %v", err)
	}
	for _, f := range []string{shm, e.path("made.txt")} {
		if _, err := os.Lstat(f); err == nil {
			t.Errorf("%s is live after a refused keep", f)
		}
	}
	if err := e.sb.Abort(p.ID); err != nil {
		t.Fatal(err)
	}
	if kept, err := e.sb.Kept(); err != nil || len(kept) != 0 {
		t.Errorf("kept runs %+v, %v", kept, err)
	}
}
