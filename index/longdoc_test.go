package index

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/nash-shell/nash/internal/datasets"
)

// The long-document known-item sets: each document is to be found from a
// short description of what it is about, which the document does not
// quote (dropAmbiguous).
//
//   - debian: manual pages (the description of their NAME section, which is
//     cut out), READMEs and guides under /usr/share/doc (the package's
//     synopsis) and Info manuals (their directory entry, cut out), from
//     Debian 12, kept in testdata/longdoc with the packages' copyright
//     files (made by TestGenerateLongDocData).
//   - go: the packages of the Go toolchain's sources, each made one
//     document of its non-test files with the package comment cut out; the
//     query is that comment's first sentence without "Package name". Built
//     by the test from GOROOT, which every machine that runs the tests has.
//
// Each set is split in two by a hash of the document's id: the tuning half,
// on which the ranking's parameters were chosen, and the held-out half,
// looked at only to report.

// loadDebianDocs reads the Debian set from the repository's testdata.
func loadDebianDocs(tb testing.TB) []longDoc {
	tb.Helper()
	dir := datasets.Must(tb, datasets.LongDoc)
	f, err := os.Open(filepath.Join(dir, "docs.jsonl.gz"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(bufio.NewReader(f))
	if err != nil {
		tb.Fatal(err)
	}
	var docs []longDoc
	dec := json.NewDecoder(zr)
	for dec.More() {
		var d longDoc
		if err := dec.Decode(&d); err != nil {
			tb.Fatalf("read %s: %v", f.Name(), err)
		}
		docs = append(docs, d)
	}
	if len(docs) < 500 {
		tb.Fatalf("the Debian set has %d documents, want over 500", len(docs))
	}
	return docs
}

// goPackageDocs builds the Go set from GOROOT/src: one document per
// package with a package comment of at least four words.
func goPackageDocs(tb testing.TB) []longDoc {
	tb.Helper()
	src := filepath.Join(runtime.GOROOT(), "src")
	var docs []longDoc
	err := filepath.WalkDir(src, func(dir string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if n := d.Name(); n == "testdata" || strings.HasPrefix(n, ".") || strings.HasPrefix(n, "_") {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(src, dir)
		if doc, ok := goPackageDoc(dir, rel); ok {
			docs = append(docs, doc)
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	if len(docs) < 300 {
		tb.Fatalf("GOROOT %s gave %d package documents, want over 300", src, len(docs))
	}
	return dropAmbiguous(docs)
}

// goPackageDoc makes the document of the package in dir: its non-test Go
// files, package comments cut out, and the query from that comment.
func goPackageDoc(dir, rel string) (longDoc, bool) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return longDoc{}, false
	}
	fset := token.NewFileSet()
	var text strings.Builder
	var comment, pkgName string
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			continue
		}
		f, err := parser.ParseFile(fset, n, data, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			continue
		}
		if strings.Contains(string(data[:min(len(data), 200)]), "//go:build ignore") {
			continue // a generator, not part of the package
		}
		if f.Doc != nil {
			if c := f.Doc.Text(); len(c) > len(comment) {
				comment, pkgName = c, f.Name.Name
			}
			tf := fset.File(f.Doc.Pos())
			start, end := tf.Offset(f.Doc.Pos()), tf.Offset(f.Doc.End())
			data = append(data[:start:start], data[end:]...)
		}
		text.Write(data)
		text.WriteByte('\n')
	}
	if comment == "" {
		return longDoc{}, false
	}
	var p doc.Package
	query := p.Synopsis(comment)
	if f := strings.Fields(query); len(f) > 2 && f[0] == "Package" && strings.EqualFold(f[1], pkgName) {
		query = strings.Join(f[2:], " ")
	}
	if len(strings.Fields(query)) < 4 {
		return longDoc{}, false
	}
	return longDoc{
		ID: "go/" + rel, Source: "go", Pkg: rel,
		Name:  filepath.Base(rel) + ".go",
		Query: query,
		Text:  text.String(),
	}, true
}

// heldOut reports whether a document belongs to the held-out half.
func heldOut(d longDoc) bool { return hash32("split:"+d.ID)%2 == 1 }

// splitDocs returns the tuning or the held-out half of docs.
func splitDocs(docs []longDoc, held bool) []longDoc {
	return slices.DeleteFunc(slices.Clone(docs), func(d longDoc) bool { return heldOut(d) != held })
}

// writeLongDocs writes docs under dir, each at a path of its own
// (dir/source/.../name), and returns the known items.
func writeLongDocs(tb testing.TB, dir string, docs []longDoc) []knownItem {
	tb.Helper()
	items := make([]knownItem, 0, len(docs))
	for _, d := range docs {
		sub := filepath.Dir(d.ID)
		if d.Source == "go" {
			sub = filepath.Join("go", filepath.Dir(d.Pkg))
		}
		p := filepath.Join(dir, sub, d.Name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if _, err := os.Stat(p); err == nil {
			tb.Fatalf("two documents at %s", p)
		}
		if err := os.WriteFile(p, []byte(d.Text), 0o644); err != nil {
			tb.Fatal(err)
		}
		items = append(items, knownItem{query: d.Query, path: p})
	}
	return items
}
