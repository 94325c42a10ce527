package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/nash-shell/nash/effects"
)

// TestStageVersion stages an earlier version of a file as a pending run:
// it shows one modification, an abort leaves the file as it is, a commit
// makes the version current as an undoable transaction; a version of a
// file whose directory is gone since brings the directory back.
func TestStageVersion(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	f := e.path("d/f")
	e.sh("mkdir d && echo v1 > d/f && chmod 640 d/f")
	e.commit(e.run("echo v2 > d/f"))
	vs, err := e.sb.History(f)
	if err != nil || len(vs) != 2 {
		t.Fatalf("history: %+v, %v", vs, err)
	}

	p, err := e.sb.StageVersion(ctx, f, vs[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Changes.Changes) != 1 || p.Changes.Changes[0].Path != f || p.Changes.Changes[0].Kind != effects.Modified {
		t.Fatalf("staged changes %+v, want one modification of %s", p.Changes.Changes, f)
	}
	if err := e.sb.Abort(p.ID); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(f); string(b) != "v2\n" {
		t.Fatalf("after abort f = %q, want v2", b)
	}

	p, err = e.sb.StageVersion(ctx, f, vs[0])
	if err != nil {
		t.Fatal(err)
	}
	tx := e.commit(p)
	if b, _ := os.ReadFile(f); string(b) != "v1\n" {
		t.Fatalf("after commit f = %q, want v1", b)
	}
	if fi, err := os.Stat(f); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("mode after commit: %v, %v; want 0640 as the version had", fi.Mode(), err)
	}
	e.undo(tx.ID)
	if b, _ := os.ReadFile(f); string(b) != "v2\n" {
		t.Fatalf("after undoing the rollback f = %q, want v2", b)
	}

	if err := os.RemoveAll(e.path("d")); err != nil {
		t.Fatal(err)
	}
	p, err = e.sb.StageVersion(ctx, f, vs[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Changes.Changes) != 2 || p.Changes.Changes[0].Path != filepath.Dir(f) || p.Changes.Changes[0].Kind != effects.Created {
		t.Fatalf("staged changes %+v, want d and d/f created", p.Changes.Changes)
	}
	e.commit(p)
	if b, _ := os.ReadFile(f); string(b) != "v1\n" {
		t.Fatalf("after commit into a removed directory f = %q, want v1", b)
	}

	if _, err := e.sb.StageVersion(ctx, f, Version{Source: "current", Content: f}); err == nil {
		t.Error("staging the current version succeeded")
	}
}
