package sandbox

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// editKeepingSizeAndMtime rewrites p in place with other bytes of the same
// length and puts its mtime back: only its ctime tells.
func editKeepingSizeAndMtime(t *testing.T, p string) {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond) // a ctime the clock can tell apart
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte("EDITED"), fi.Size()/2); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if after, _ := os.Stat(p); after.Size() != fi.Size() || !after.ModTime().Equal(fi.ModTime()) {
		t.Fatal("the edit changed size or mtime")
	}
}

// bigContent is more than the fingerprint hashes (hashLimit), so only metadata
// tells an edit apart.
var bigContent = bytes.Repeat([]byte("0123456789abcdef"), hashLimit/8)

// TestUndoNamesInPlaceEdit: an edit made after the commit that keeps the
// size and the mtime is a conflict, named; undo changes nothing.
func TestUndoNamesInPlaceEdit(t *testing.T) {
	e := newEnv(t)
	if err := os.WriteFile(e.path("data.bin"), bigContent, 0o644); err != nil {
		t.Fatal(err)
	}
	tx := e.commit(e.run(`printf 'new' >> data.bin`))
	editKeepingSizeAndMtime(t, e.path("data.bin"))
	edited, _ := os.ReadFile(e.path("data.bin"))
	_, err := e.sb.Undo(context.Background(), tx.ID, UndoOptions{})
	var ce *ConflictError
	if !errors.As(err, &ce) || len(ce.Conflicts) != 1 || ce.Conflicts[0].Path != e.path("data.bin") {
		t.Fatalf("undo after an edit that kept size and mtime: %v, want a conflict on data.bin", err)
	}
	if now, _ := os.ReadFile(e.path("data.bin")); !bytes.Equal(now, edited) {
		t.Fatal("the refused undo changed data.bin")
	}
}

// TestUndoChainKeepsFingerprints: undo, redo (undo of the undo) and undo
// of the redo each move the same objects by rename, which changes their
// ctime; none of that is a change made since.
func TestUndoChainKeepsFingerprints(t *testing.T) {
	e := newEnv(t)
	if err := os.WriteFile(e.path("data.bin"), bigContent, 0o644); err != nil {
		t.Fatal(err)
	}
	tx := e.commit(e.run(`printf 'new' >> data.bin; mkdir d; echo x > d/f`))
	id := tx.ID
	for i := 0; i < 3; i++ {
		time.Sleep(10 * time.Millisecond) // a ctime the clock can tell apart
		u, err := e.sb.Undo(context.Background(), id, UndoOptions{})
		if err != nil {
			t.Fatalf("undo %d of the chain: %v", i+1, err)
		}
		id = u.ID
	}
	if b, _ := os.ReadFile(e.path("data.bin")); !bytes.Equal(b, bigContent) {
		t.Fatal("after undo, redo and undo, data.bin is not back to before")
	}
}

// TestOldRecordsIgnoreCtime: fingerprints recorded by a nash that did not
// keep ctime up to date (no CtimeKept) never conflict on ctime alone.
func TestOldRecordsIgnoreCtime(t *testing.T) {
	e := newEnv(t)
	if err := os.WriteFile(e.path("data.bin"), bigContent, 0o644); err != nil {
		t.Fatal(err)
	}
	tx := e.commit(e.run(`printf 'new' >> data.bin`))
	manifest := filepath.Join(layout(e.state).layerDir(tx.ID), manifestFile)
	recs, err := readManifest(manifest)
	if err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		recs[i].Post.CtimeKept = false
		recs[i].Post.Ctime -= int64(time.Hour)
	}
	if err := writeManifest(manifest, recs); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(e.path("data.bin"), 0o644); err != nil { // a new ctime
		t.Fatal(err)
	}
	if _, err := e.sb.Undo(context.Background(), tx.ID, UndoOptions{}); err != nil {
		t.Fatalf("undo with an old record: %v", err)
	}
}
