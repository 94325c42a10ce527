package index

import (
	"context"
	"path/filepath"
	"testing"
)

// TestSplitDotsAndUnderscores checks that dotted and snake_case names
// match their parts, and whole.
func TestSplitDotsAndUnderscores(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"a.txt": "see https://docs.pelican.example/guide for more\n",
		"b.txt": "set max_retry_count in settings.yaml\n",
	})
	ix := openTest(t)
	if _, err := ix.Add(ctx, dir); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ query, want string }{
		{"pelican", "a.txt"},
		{"docs.pelican.example", "a.txt"},
		{"retry count", "b.txt"},
		{"max_retry_count", "b.txt"},
		{"settings yaml", "b.txt"},
	}
	for _, tt := range tests {
		res, err := ix.Search(ctx, tt.query, SearchOptions{Mode: Keyword})
		if err != nil {
			t.Fatal(err)
		}
		if got := names(res.Hits); len(got) != 1 || got[0] != tt.want {
			t.Errorf("Search(%q) = %v, want [%s]", tt.query, got, tt.want)
		}
	}
}

// TestOldFormat checks that an index of an older layout says that it
// wants a rebuild (and finds nothing: its documents are not files), and is
// current after one.
func TestOldFormat(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.txt": "the heron stands in the reeds\n"})
	ixDir := filepath.Join(t.TempDir(), "index")
	ix, err := Open(ctx, ixDir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Add(ctx, dir); err != nil {
		t.Fatal(err)
	}
	if err := ix.text.DeleteInternal(keyFormat); err != nil { // as before versions
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	ix, err = Open(ctx, ixDir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	search := func() *Result {
		t.Helper()
		res, err := ix.Search(ctx, "heron", SearchOptions{Mode: Keyword})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if !ix.NeedsRebuild() {
		t.Error("NeedsRebuild is false for an index of an older layout")
	}
	if res := search(); res.Notice != NoticeOldFormat || len(res.Hits) != 0 {
		t.Errorf("old index: %v, Notice %q; want nothing and %q", names(res.Hits), res.Notice, NoticeOldFormat)
	}
	if _, err := ix.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	if res := search(); res.Notice != "" || len(res.Hits) != 1 {
		t.Errorf("after Rebuild: %v, Notice %q; want a.txt and none", names(res.Hits), res.Notice)
	}
}
