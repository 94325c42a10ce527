package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/nash-shell/nash/internal/sandboxinit"
)

// TestCommitRefusesSymlinkedParent plants a symlink where a directory was,
// between the run and the commit: the commit must fail and write nothing
// through it, and the live tree must stay as it was.
func TestCommitRefusesSymlinkedParent(t *testing.T) {
	e := newEnv(t)
	e.sh("mkdir d")
	p := e.run("echo x > d/f")
	elsewhere := t.TempDir()
	if err := os.Rename(e.path("d"), e.path("d.real")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, e.path("d")); err != nil {
		t.Fatal(err)
	}
	e.sb.waitTorndown(p.ID)
	if _, err := e.sb.Commit(context.Background(), p.ID, CommitOptions{}); err == nil {
		t.Fatal("commit through a symlinked parent succeeded")
	}
	if _, err := os.Lstat(filepath.Join(elsewhere, "f")); err == nil {
		t.Fatal("the commit wrote through the planted symlink")
	}
	if entries, _ := os.ReadDir(e.path("d.real")); len(entries) != 0 {
		t.Fatalf("d.real gained %v", entries)
	}
	if left, _ := os.ReadDir(layout(e.state).journalDir()); len(left) != 0 {
		t.Fatalf("a failed commit left its journal: %v", left)
	}
}

// TestConcurrentCommits commits runs from several Sandboxes (as from
// several nash processes) on one state dir at once: the lock serializes
// them and all land.
func TestConcurrentCommits(t *testing.T) {
	e := newEnv(t)
	const n = 4
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	for i := range 2 * n {
		sb, err := New(context.Background(), StateDir(e.state), Dir(e.work), Stdio(nil, nil, nil))
		if err != nil {
			t.Fatal(err)
		}
		defer sb.Close()
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := sb.Run(context.Background(), fmt.Sprintf("mkdir -p out && echo %d > out/f%d", i, i))
			if err != nil {
				errs <- err
				return
			}
			if _, err := sb.Commit(context.Background(), p.ID, CommitOptions{}); err != nil {
				errs <- fmt.Errorf("commit %d: %w", i, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	// Every run created out/ in its own sandbox; the first commit creates
	// it live and the later ones merge their file into it, as the same
	// scripts run one after another would.
	for err := range errs {
		t.Error(err)
	}
	txs, err := e.sb.Log()
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(e.path("out"))
	if len(txs) != 2*n || len(entries) != 2*n {
		t.Fatalf("%d transactions, %d files in out/; want %d of each", len(txs), len(entries), 2*n)
	}
	// Undo them all, last committed first (Log's order): out/ is gone
	// again.
	for i := len(txs) - 1; i >= 0; i-- {
		if _, err := e.sb.Undo(context.Background(), txs[i].ID, UndoOptions{}); err != nil {
			t.Fatalf("undo %s: %v", txs[i].ID, err)
		}
	}
	if _, err := os.Lstat(e.path("out")); err == nil {
		t.Error("out/ is still there after undoing every transaction")
	}
}

// TestScanSyntheticUpper reads an upper dir made by hand with the forms a
// script cannot easily produce: an xattr whiteout in an opaque=x dir, an
// opaque directory, and overlay xattrs that must not count as changes.
func TestScanSyntheticUpper(t *testing.T) {
	live, upper := t.TempDir(), t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{"m", "o"} {
		must(os.Mkdir(filepath.Join(live, d), 0o755))
		must(os.Mkdir(filepath.Join(upper, d), 0o755))
	}
	must(os.WriteFile(filepath.Join(live, "m", "gone"), []byte("x"), 0o644))
	must(os.WriteFile(filepath.Join(live, "m", "kept"), []byte("k"), 0o644))
	must(os.WriteFile(filepath.Join(live, "o", "old"), []byte("o"), 0o644))
	// m: a merged dir with an xattr whiteout for "gone".
	must(unix.Lsetxattr(filepath.Join(upper, "m"), overlayXattrPrefix+"opaque", []byte("x"), 0))
	must(os.WriteFile(filepath.Join(upper, "m", "gone"), nil, 0o644))
	must(unix.Lsetxattr(filepath.Join(upper, "m", "gone"), overlayXattrPrefix+"whiteout", []byte("y"), 0))
	// o: opaque, replaced whole by one new file.
	must(unix.Lsetxattr(filepath.Join(upper, "o"), overlayXattrPrefix+"opaque", []byte("y"), 0))
	must(os.WriteFile(filepath.Join(upper, "o", "new"), []byte("n"), 0o644))

	cs, ops, err := scanLayers([]sandboxinit.Layer{{Point: live, Upper: upper}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range cs.Changes {
		rel, _ := filepath.Rel(live, c.Path)
		got = append(got, rel+" "+string(c.Kind))
	}
	want := []string{"m/gone deleted", "o/new created", "o/old deleted"}
	if !slices.Equal(got, want) {
		t.Errorf("changes %q, want %q", got, want)
	}
	var opPaths []string
	for _, o := range ops {
		rel, _ := filepath.Rel(live, o.Path)
		opPaths = append(opPaths, rel)
	}
	if !slices.Equal(opPaths, []string{"m/gone", "o"}) {
		t.Errorf("ops %q, want [m/gone o]", opPaths)
	}
}

// TestCommitWithoutChanges commits a run that changed nothing, whose
// pending record stays in memory: the transaction still says what ran and
// how it ended, and holds no change.
func TestCommitWithoutChanges(t *testing.T) {
	e := newEnv(t)
	p := e.run("cat /etc/hostname >/dev/null; exit 3")
	if p.ExitCode != 3 || p.Changes.Len() != 0 {
		t.Fatalf("run: exit %d, %d changes", p.ExitCode, p.Changes.Len())
	}
	tx := e.commit(p)
	if tx.ExitCode != 3 || tx.Changes != 0 || !strings.Contains(tx.Script, "exit 3") {
		t.Errorf("transaction: exit %d, %d changes, script %q", tx.ExitCode, tx.Changes, tx.Script)
	}
}
