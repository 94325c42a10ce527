package sandbox

import (
	"context"
	"errors"
	"os"
	"slices"
	"testing"
)

func TestLockedBy(t *testing.T) {
	locks := []Lock{{Path: "/w/f"}, {Path: "/w/dir"}}
	tests := []struct {
		name    string
		changes []change
		want    []string
	}{
		{"the locked file", []change{{Path: "/w/f"}}, []string{"/w/f"}},
		{"another file", []change{{Path: "/w/g"}}, nil},
		{"inside a locked dir", []change{{Path: "/w/dir/new"}}, []string{"/w/dir"}},
		{"mode of the parent", []change{{Path: "/w"}}, nil},
		{"parent deleted whole", []change{{Path: "/w", Subtree: true}}, []string{"/w/dir", "/w/f"}},
		{"a sibling with a common prefix", []change{{Path: "/w/ff"}, {Path: "/w/dirt", Subtree: true}}, nil},
	}
	for _, tt := range tests {
		if got := lockedBy(locks, tt.changes); !slices.Equal(got, tt.want) {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestLockedFileRefusedAtCommit locks a file; a script that edits it and
// creates another is refused at commit and changes nothing; the other
// change can still be committed alone; after unlock the edit commits.
func TestLockedFileRefusedAtCommit(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.sh("echo keep > f")
	if err := e.sb.Lock(ctx, e.path("f")); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(e.path("f")); fi.Mode().Perm()&0o222 != 0 {
		t.Fatalf("locked f is %v, want read-only", fi.Mode())
	}
	p := e.run("chmod u+w f; echo changed > f; echo new > g")
	_, err := e.sb.Commit(ctx, p.ID, CommitOptions{})
	var le *LockedError
	if !errors.As(err, &le) || !slices.Equal(le.Paths, []string{e.path("f")}) {
		t.Fatalf("commit: %v, want LockedError naming f", err)
	}
	if b, _ := os.ReadFile(e.path("f")); string(b) != "keep\n" {
		t.Fatalf("f = %q after a refused commit", b)
	}
	if _, err := os.Lstat(e.path("g")); err == nil {
		t.Fatal("a refused commit created g")
	}
	// Nothing else is lost: g alone commits.
	if _, err := e.sb.Commit(ctx, p.ID, CommitOptions{Paths: []string{e.path("g")}}); err != nil {
		t.Fatalf("commit of g alone: %v", err)
	}
	if b, _ := os.ReadFile(e.path("g")); string(b) != "new\n" {
		t.Fatalf("g = %q", b)
	}
	if err := e.sb.Unlock(ctx, e.path("f")); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(e.path("f")); fi.Mode().Perm() != 0o644 {
		t.Fatalf("unlocked f is %v, want its old mode", fi.Mode())
	}
	e.commit(e.run("echo changed > f"))
	if b, _ := os.ReadFile(e.path("f")); string(b) != "changed\n" {
		t.Fatalf("f = %q after unlock and commit", b)
	}
	if err := e.sb.Unlock(ctx, e.path("f")); err == nil {
		t.Error("unlocking a path that is not locked succeeded")
	}
}
