package index

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// corpus is a small mixed tree used by several tests.
func corpus(tb testing.TB) string {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "home")
	writeFiles(tb, dir, map[string]string{
		"notes/tax-2024.md":           "# Taxes 2024\n\nDentist receipts and the pharmacy invoice go in the folder.\n",
		"notes/holiday.txt":           "Packing list for the trip to Lisbon: sunscreen, passport, charger.\n",
		"notes/recipes/bread.md":      "# Sourdough bread\n\nFeed the starter, knead the dough, bake at 250 degrees.\n",
		"src/server/main.go":          "package main\n\n// main starts the HTTP server that serves invoices.\nfunc main() {}\n",
		"src/server/handler.go":       "package main\n\n// handler renders the quarterly report.\nfunc handler() {}\n",
		"docs/report.html":            "<html><head><title>Quarterly report</title><style>p{color:red}</style></head><body><p>Revenue grew in the third quarter.</p><script>var invoice=1</script></body></html>",
		"docs/big-notes.txt":          strings.Repeat("filler words about nothing in particular\n", 400) + "the hidden treasure is under the old oak tree\n",
		".cache/secret.txt":           "hidden directory content: treasure map\n",
		"build/out.txt":               "generated output: treasure\n",
		"scratch/keep.log":            "a log the ignore file lets through: treasure\n",
		"scratch/drop.log":            "a log the ignore file drops: treasure\n",
		".gitignore":                  "build/\n*.log\n!keep.log\n",
		"notes/recipes/.nashignore":   "draft-*\n",
		"notes/recipes/draft-cake.md": "# Cake draft\n\nflour sugar eggs\n",
	})
	files := map[string][]byte{
		"docs/minutes.docx": makeDOCX("Minutes of the board meeting", "The budget for the garden was approved."),
		"docs/letter.odt":   makeODT("Dear neighbour,", "the fence between our gardens needs paint."),
		"docs/paper.pdf":    makePDF("Measurements of glacier retreat", "in the Alps since 1850"),
	}
	for rel, data := range files {
		if err := os.WriteFile(filepath.Join(dir, rel), data, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	old := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(dir, "notes/holiday.txt"), old, old); err != nil {
		tb.Fatal(err)
	}
	return dir
}

func TestSearch(t *testing.T) {
	ctx := context.Background()
	dir := corpus(t)
	ix := openTest(t)
	st, err := ix.Add(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Skipped) != 0 {
		t.Errorf("skipped %v, want none", st.Skipped)
	}
	tests := []struct {
		name  string
		query string
		opt   SearchOptions
		want  []string // base names, in order when ordered, else as a set
		order bool
	}{
		{"word", "sourdough", SearchOptions{}, []string{"bread.md"}, true},
		{"stemming", "receipt", SearchOptions{}, []string{"tax-2024.md"}, true},
		{"name boosted", "holiday", SearchOptions{}, []string{"holiday.txt"}, true},
		{"html text, not script", "revenue", SearchOptions{}, []string{"report.html"}, true},
		{"html title", "quarterly", SearchOptions{}, []string{"handler.go", "report.html"}, false},
		{"docx", "budget garden", SearchOptions{}, []string{"minutes.docx", "letter.odt"}, true},
		{"odt", "fence neighbour", SearchOptions{}, []string{"letter.odt"}, true},
		{"pdf", "glacier", SearchOptions{}, []string{"paper.pdf"}, true},
		{"phrase", `"board meeting"`, SearchOptions{}, []string{"minutes.docx"}, true},
		{"phrase no match", `"meeting board"`, SearchOptions{}, nil, true},
		{"AND", "invoice AND server", SearchOptions{}, []string{"main.go"}, true},
		{"OR", "sourdough OR glacier", SearchOptions{}, []string{"bread.md", "paper.pdf"}, false},
		{"NOT", "invoice NOT server", SearchOptions{}, []string{"tax-2024.md"}, true},
		{"minus", "quarterly -revenue", SearchOptions{}, []string{"handler.go"}, true},
		{"group", "(sourdough OR glacier) AND alps", SearchOptions{}, []string{"paper.pdf"}, true},
		{"ext filter", "quarterly ext:go", SearchOptions{}, []string{"handler.go"}, true},
		{"ext option", "quarterly", SearchOptions{Ext: []string{".html"}}, []string{"report.html"}, true},
		{"dir option", "invoice", SearchOptions{Dir: filepath.Join(dir, "src")}, []string{"main.go"}, true},
		{"dir filter relative", "invoice dir:notes", SearchOptions{}, []string{"tax-2024.md"}, true},
		{"before", "before:2021-01-01", SearchOptions{}, []string{"holiday.txt"}, true},
		{"after", "passport after:2021", SearchOptions{}, nil, true},
		{"size", "treasure size:>10k", SearchOptions{}, []string{"big-notes.txt"}, true},
		{"size small", "treasure size:<1k", SearchOptions{}, []string{"keep.log"}, true},
		{"size negated", "treasure -size:>10k", SearchOptions{}, []string{"keep.log"}, true},
		{"size only", "size:>10k", SearchOptions{}, []string{"big-notes.txt"}, true},
		{"after option", "packing OR sourdough", SearchOptions{After: time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC)}, []string{"bread.md"}, true},
		{"hidden dir and gitignore", "treasure", SearchOptions{}, []string{"big-notes.txt", "keep.log"}, false},
		{"nashignore", "flour sugar", SearchOptions{}, nil, true},
		{"field scoped", "name:bread", SearchOptions{}, []string{"bread.md"}, true},
		{"n limits", "the", SearchOptions{N: 1}, nil, true}, // a stop word finds nothing
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := ix.Search(ctx, tt.query, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			got := names(res.Hits)
			if !tt.order {
				slices.Sort(got)
				want := slices.Clone(tt.want)
				slices.Sort(want)
				if !slices.Equal(got, want) {
					t.Errorf("Search(%q) = %v, want %v", tt.query, got, want)
				}
				return
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Search(%q) = %v, want %v", tt.query, got, tt.want)
			}
		})
	}
}

// TestSnippetOfLongFile: the snippet and line of a hit are those of its
// best passage, deep in a long file.
func TestSnippetOfLongFile(t *testing.T) {
	ctx := context.Background()
	dir := corpus(t)
	ix := openTest(t)
	if _, err := ix.Add(ctx, dir); err != nil {
		t.Fatal(err)
	}
	res, err := ix.Search(ctx, "treasure oak", SearchOptions{N: 5})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(res.Hits, func(h Hit) bool { return filepath.Base(h.Path) == "big-notes.txt" })
	if i < 0 {
		t.Fatalf("big-notes.txt not found: %v", names(res.Hits))
	}
	h := res.Hits[i]
	// 400 lines of filler, then the treasure.
	if h.Line != 401 {
		t.Errorf("hit = %+v, want line 401", h)
	}
	if !strings.Contains(h.Snippet, "treasure is under the old oak") {
		t.Errorf("snippet = %q, want the matching sentence", h.Snippet)
	}
}

func TestUpdateAndRemove(t *testing.T) {
	ctx := context.Background()
	dir := corpus(t)
	ix := openTest(t)
	st, err := ix.Add(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	first := st.Indexed
	st, err = ix.Add(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Indexed != 0 || st.Unchanged != first {
		t.Errorf("second Add: indexed %d, unchanged %d; want 0 and %d", st.Indexed, st.Unchanged, first)
	}
	// Change one file, delete another.
	writeFiles(t, dir, map[string]string{"notes/holiday.txt": "Packing list: snorkel and fins.\n"})
	if err := os.Remove(filepath.Join(dir, "docs/paper.pdf")); err != nil {
		t.Fatal(err)
	}
	st, err = ix.Update(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Indexed != 1 || st.Removed != 1 {
		t.Errorf("Update: indexed %d, removed %d; want 1 and 1", st.Indexed, st.Removed)
	}
	for q, want := range map[string]int{"snorkel": 1, "passport": 0, "glacier": 0} {
		res, err := ix.Search(ctx, q, SearchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Hits) != want {
			t.Errorf("after update, %q finds %v, want %d hits", q, names(res.Hits), want)
		}
	}
	status, err := ix.Status()
	if err != nil {
		t.Fatal(err)
	}
	if len(status.Roots) != 1 || status.Roots[0] != dir || status.Files != first-1 || status.SizeBytes == 0 {
		t.Errorf("status = %+v", status)
	}
	if _, err := ix.Remove(ctx, filepath.Join(dir, "notes")); err == nil {
		t.Error("Remove of a directory inside a root succeeded, want an error")
	}
	st, err = ix.Remove(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.Removed != first-1 {
		t.Errorf("Remove dropped %d files, want %d", st.Removed, first-1)
	}
	res, err := ix.Search(ctx, "snorkel OR sourdough", SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 0 {
		t.Errorf("after Remove: %v", names(res.Hits))
	}
	if roots, _ := ix.Roots(); len(roots) != 0 {
		t.Errorf("roots after Remove = %v", roots)
	}
}

func TestRebuildAndReopen(t *testing.T) {
	ctx := context.Background()
	dir := corpus(t)
	idx := filepath.Join(t.TempDir(), "index")
	ix, err := Open(ctx, idx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Add(ctx, dir); err != nil {
		t.Fatal(err)
	}
	// A second process cannot open the index while this one holds it.
	if _, err := Open(ctx, idx, LockTimeout(50*time.Millisecond)); !errors.Is(err, ErrLocked) {
		t.Errorf("second Open: %v, want ErrLocked", err)
	}
	st, err := ix.Rebuild(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Indexed == 0 {
		t.Error("Rebuild indexed nothing")
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	ix, err = Open(ctx, idx)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	res, err := ix.Search(ctx, "sourdough", SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(res.Hits); !slices.Equal(got, []string{"bread.md"}) {
		t.Errorf("after reopen: %v", got)
	}
}

func TestParseQuery(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in      string
		want    string // clause summary
		wantErr bool
	}{
		{"tax receipts", "?tax ?receipts", false},
		{`"tax receipts" 2024`, `?"tax receipts" ?2024`, false},
		{"a AND b", "+a +b", false},
		{"a && b || c", "+a +b ?c", false},
		{"a OR b", "?a ?b", false},
		{"a NOT b", "?a -b", false},
		{"+a -b c", "+a -b ?c", false},
		{"(a OR b) AND c", "+(?a ?b) +c", false},
		{"NOT (a b)", "-(?a ?b)", false},
		{"ext:md,txt dir:notes x", "+ext:md,txt +dir:notes ?x", false},
		{"-ext:pdf x", "-ext:pdf ?x", false},
		{"after:7d before:2025-01-01 size:>10k", "+after:7d +before:2025-01-01 +size:>10k", false},
		{`title:"annual report"`, `?title:"annual report"`, false},
		{"foo:bar", "?foo:bar", false},
		{"- + !!", "", false},
		{`"unclosed phrase`, `?"unclosed phrase"`, false},
		{"()", "", false},
		{"(a", "", true},
		{"a)", "", true},
		{"after:tomorrow", "", true},
		{"size:big", "", true},
		{"size:10k..1k", "", true},
		{strings.Repeat("(", 30) + "a" + strings.Repeat(")", 30), "", true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			cl, err := ParseQuery(tt.in, now)
			if tt.wantErr {
				var pe *ParseError
				if !errors.As(err, &pe) {
					t.Fatalf("ParseQuery(%q) error = %v, want a *ParseError", tt.in, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := summarize(cl); got != tt.want {
				t.Errorf("ParseQuery(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

func summarize(cl []Clause) string {
	var parts []string
	for _, c := range cl {
		s := map[Occur]string{Should: "?", Must: "+", MustNot: "-"}[c.Occur]
		switch {
		case c.Group != nil:
			s += "(" + summarize(c.Group) + ")"
		case c.Phrase:
			if c.Field != "" {
				s += c.Field + ":"
			}
			s += `"` + c.Text + `"`
		case c.Field != "":
			s += c.Field + ":" + c.Text
		default:
			s += c.Text
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " ")
}

func TestParseDateAndSize(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	dates := map[string]time.Time{
		"7d":         now.AddDate(0, 0, -7),
		"2w":         now.AddDate(0, 0, -14),
		"1y":         now.AddDate(-1, 0, 0),
		"2025-01-02": time.Date(2025, 1, 2, 0, 0, 0, 0, time.Local),
	}
	for in, want := range dates {
		got, err := parseDate(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseDate(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	sizes := []struct {
		in     string
		lo, hi int64
	}{
		{">10k", 10241, -1}, {"<1M", -1, 1<<20 - 1}, {"1k..2k", 1024, 2048}, {"512", 512, 512}, {">=1.5k", 1536, -1},
	}
	for _, s := range sizes {
		lo, hi, err := parseSizeRange(s.in)
		if err != nil || lo != s.lo || hi != s.hi {
			t.Errorf("parseSizeRange(%q) = %d, %d, %v; want %d, %d", s.in, lo, hi, err, s.lo, s.hi)
		}
	}
}

func TestPlainQuery(t *testing.T) {
	tests := map[string]string{
		`move every invoice from 2025 into one folder`: "move every invoice from 2025 into one folder",
		`"tax" (receipts) -x AND y NOT z ext:pdf`:      "tax receipts x and y not z ext pdf",
	}
	for in, want := range tests {
		if got := PlainQuery(in); got != want {
			t.Errorf("PlainQuery(%q) = %q, want %q", in, got, want)
		}
		if _, err := ParseQuery(PlainQuery(in), time.Now()); err != nil {
			t.Errorf("PlainQuery(%q) does not parse: %v", in, err)
		}
	}
}

// TestConcurrentSearchAndRebuild searches while the index is rebuilt and
// refreshed: run with -race.
func TestConcurrentSearchAndRebuild(t *testing.T) {
	ctx := context.Background()
	dir := corpus(t)
	ix := openTest(t)
	if _, err := ix.Add(ctx, dir); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	errs := make(chan error, 1)
	go func() {
		defer close(errs)
		for {
			select {
			case <-done:
				return
			default:
			}
			if _, err := ix.Search(ctx, "sourdough OR invoice", SearchOptions{}); err != nil {
				errs <- err
				return
			}
			if _, err := ix.Status(); err != nil {
				errs <- err
				return
			}
		}
	}()
	for range 3 {
		if _, err := ix.Rebuild(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := ix.Refresh(ctx, filepath.Join(dir, "notes")); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	if err := <-errs; err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Search(ctx, "x", SearchOptions{}); !errors.Is(err, ErrClosed) {
		t.Errorf("Search after Close: %v, want ErrClosed", err)
	}
	if _, err := ix.Add(ctx, dir); !errors.Is(err, ErrClosed) {
		t.Errorf("Add after Close: %v, want ErrClosed", err)
	}
}

func TestMergeRoots(t *testing.T) {
	tests := []struct {
		old, add, want []string
	}{
		{nil, []string{"/a"}, []string{"/a"}},
		{[]string{"/a"}, []string{"/a/b"}, []string{"/a"}},
		{[]string{"/a/b", "/a/c", "/d"}, []string{"/a"}, []string{"/d", "/a"}},
		{[]string{"/a"}, []string{"/ab"}, []string{"/a", "/ab"}},
		{[]string{"/a"}, []string{"/a"}, []string{"/a"}},
	}
	for _, tt := range tests {
		if got := mergeRoots(tt.old, tt.add); !slices.Equal(got, tt.want) {
			t.Errorf("mergeRoots(%v, %v) = %v, want %v", tt.old, tt.add, got, tt.want)
		}
	}
}
