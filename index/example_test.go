package index_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nash-shell/nash/index"
)

// Index a directory on disk, then search it by keyword with a filter.
func ExampleIndex_Search() {
	ctx := context.Background()
	tmp, _ := os.MkdirTemp("", "nash-example")
	defer os.RemoveAll(tmp)
	docs := filepath.Join(tmp, "docs")
	os.MkdirAll(filepath.Join(docs, "taxes"), 0o755)
	os.WriteFile(filepath.Join(docs, "taxes", "receipts.md"), []byte("# Receipts\n\nDentist receipts for the 2025 tax return.\n"), 0o644)
	os.WriteFile(filepath.Join(docs, "bread.txt"), []byte("Flour, water, salt and a sourdough starter.\n"), 0o644)

	ix, err := index.Open(ctx, filepath.Join(tmp, "index"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ix.Close()
	st, _ := ix.Add(ctx, docs)
	fmt.Println("indexed", st.Indexed)

	res, _ := ix.Search(ctx, `receipt ext:md`, index.SearchOptions{N: 5})
	for _, h := range res.Hits {
		fmt.Printf("%s: %s\n", filepath.Base(h.Path), h.Snippet)
	}
	// Output:
	// indexed 2
	// receipts.md: # Receipts Dentist receipts for the 2025 tax return.
}

// Semantic search without an embedder falls back to keyword search with
// query expansion, and says so.
func ExampleIndex_Search_fallback() {
	ctx := context.Background()
	tmp, _ := os.MkdirTemp("", "nash-example")
	defer os.RemoveAll(tmp)
	os.WriteFile(filepath.Join(tmp, "dentist.txt"), []byte("receipt from the dentist\n"), 0o644)
	ix, err := index.Open(ctx, filepath.Join(tmp, ".index"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ix.Close()
	ix.Add(ctx, tmp)
	res, _ := ix.Search(ctx, "dentist receipts", index.SearchOptions{Mode: index.Semantic})
	fmt.Println(res.Mode, "-", res.Notice)
	for _, h := range res.Hits {
		fmt.Println(filepath.Base(h.Path))
	}
	// Output:
	// keyword - no embedder configured: ranked by keyword only (set NASH_EMBEDDER to search by meaning)
	// dentist.txt
}

func ExampleParseQuery() {
	clauses, err := index.ParseQuery(`"tax return" AND (receipts OR invoices) -draft ext:pdf after:2025-01-01`, time.Now())
	if err != nil {
		fmt.Println(err)
		return
	}
	occur := map[index.Occur]string{index.Should: "should", index.Must: "must", index.MustNot: "must not"}
	for _, c := range clauses {
		switch {
		case c.Group != nil:
			fmt.Printf("%s: group of %d\n", occur[c.Occur], len(c.Group))
		case c.Field != "":
			fmt.Printf("%s: %s:%s\n", occur[c.Occur], c.Field, c.Text)
		default:
			fmt.Printf("%s: %q phrase=%v\n", occur[c.Occur], c.Text, c.Phrase)
		}
	}
	// Output:
	// must: "tax return" phrase=true
	// must: group of 2
	// must not: "draft" phrase=false
	// must: ext:pdf
	// must: after:2025-01-01
}

func ExampleExtract() {
	doc, err := index.Extract("page.html", []byte("<title>Hello</title><p>Visible &amp; kept</p><script>dropped()</script>"))
	fmt.Printf("%s %q %q %v\n", doc.Format, doc.Title, doc.Text, err)
	// Output:
	// html "Hello" "Hello\n\nVisible & kept\n\n" <nil>
}
