package index

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzParseQuery: the parser never panics, and whatever it accepts builds
// a bleve query that runs.
func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{
		"tax receipts", `"board meeting" AND (budget OR garden) -draft`, "ext:md,txt dir:/home size:1k..2M after:7d",
		"NOT NOT a", "((((a))))", `title:"x`, "+-+-", "a:b:c", "size:>>1", "before:2025-13-45", "(", ")", `"`,
	} {
		f.Add(s)
	}
	ix := openTest(f)
	writeFiles(f, f.TempDir(), map[string]string{"a.txt": "a b c\n"})
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, q string) {
		if _, err := ParseQuery(q, now); err != nil {
			return
		}
		if _, err := ix.Search(context.Background(), q, SearchOptions{Mode: Keyword, N: 3}); err != nil &&
			!strings.Contains(err.Error(), "query") {
			t.Errorf("Search(%q): %v", q, err)
		}
		if _, err := ParseQuery(PlainQuery(q), now); err != nil {
			t.Errorf("PlainQuery(%q) = %q does not parse: %v", q, PlainQuery(q), err)
		}
	})
}

// FuzzExtract: no extractor panics or returns invalid UTF-8, whatever the
// bytes and the name.
func FuzzExtract(f *testing.F) {
	f.Add("a.pdf", makePDF("hello"))
	f.Add("a.docx", makeDOCX("hello"))
	f.Add("a.odt", makeODT("hello"))
	f.Add("a.html", []byte("<title>x</title><script>y</script><p>z"))
	f.Add("a.md", []byte("# t\nbody"))
	f.Add("a.txt", []byte("x\x00y"))
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		doc, err := Extract(name, data)
		if err != nil {
			return
		}
		if !utf8.ValidString(doc.Text) || !utf8.ValidString(doc.Title) {
			t.Errorf("Extract(%q) returned invalid UTF-8", name)
		}
		for _, c := range SplitChunks(doc.Text, 50, 10) {
			if !strings.Contains(doc.Text, c.Text) {
				t.Errorf("chunk %d is not part of the text", c.Seq)
			}
		}
	})
}

// FuzzIgnore: any ignore file parses and matches without panicking.
func FuzzIgnore(f *testing.F) {
	f.Add("*.log\n!keep.log\nbuild/\n/a/**/b\n[a-\n\\", "/r/a/x/b")
	f.Fuzz(func(t *testing.T, rules, path string) {
		parseIgnore("/r", []byte(rules)).ignored("/r/"+strings.TrimPrefix(path, "/"), len(path)%2 == 0)
	})
}
