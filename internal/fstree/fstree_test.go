package fstree

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSnapshotAndDiff(t *testing.T) {
	a := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(a, "f"), []byte("x"), 0o644))
	must(os.Mkdir(filepath.Join(a, "d"), 0o755))
	must(os.Symlink("f", filepath.Join(a, "l")))
	s1, err := Snapshot(a)
	must(err)
	if d := Diff(s1, s1); d != "" {
		t.Fatalf("a tree differs from itself: %s", d)
	}
	tests := []struct {
		name   string
		change func()
		want   string
	}{
		{"content", func() { must(os.WriteFile(filepath.Join(a, "f"), []byte("y"), 0o644)) }, `differs "f"`},
		{"mode", func() { must(os.Chmod(filepath.Join(a, "f"), 0o600)) }, `differs "f"`},
		{"target", func() { must(os.Remove(filepath.Join(a, "l"))); must(os.Symlink("g", filepath.Join(a, "l"))) }, `differs "l"`},
		{"added", func() { must(os.WriteFile(filepath.Join(a, "new"), nil, 0o644)) }, `extra "new"`},
		{"removed", func() { must(os.Remove(filepath.Join(a, "d"))) }, `missing "d"`},
		{"hard link", func() { must(os.Link(filepath.Join(a, "f"), filepath.Join(a, "f2"))) }, `differs "f"`},
	}
	for _, tt := range tests {
		tt.change()
		s2, err := Snapshot(a)
		must(err)
		if d := Diff(s1, s2); !strings.Contains(d, tt.want) {
			t.Errorf("%s: diff %q lacks %q", tt.name, d, tt.want)
		}
	}
}
