package index

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// longdocGenerate, when set, makes TestGenerateLongDocData write the
// Debian known-item set (testdata/longdoc) from the machine it runs on:
//
//	go test ./index -run TestGenerateLongDocData -longdoc.generate=../testdata/longdoc
//
// It reads rendered manual pages (man -l), the READMEs and guides under
// /usr/share/doc, the Info manuals, the package synopses (dpkg-query) and
// the packages' copyright files. The set in the repository was made on
// Debian 12 (bookworm); see testdata/longdoc/SOURCE.
var longdocGenerate = flag.String("longdoc.generate", "", "write the Debian known-item set into `DIR`")

// longDoc is one document of a known-item set and the short description
// that must find it.
type longDoc struct {
	ID     string `json:"id"`     // unique, e.g. man/tar.1 or readme/coreutils/README
	Source string `json:"source"` // man, readme, info
	Pkg    string `json:"pkg"`    // the Debian package it comes from
	Name   string `json:"name"`   // file name to write it under
	Query  string `json:"query"`
	Text   string `json:"text"`
}

// Limits of the Debian set: documents shorter than minWords are not long;
// no package gives more than perPkg manual pages, so that the set is not
// all manpages-dev and git.
const (
	genMinWords = 250
	genPerPkg   = 25
)

func TestGenerateLongDocData(t *testing.T) {
	if *longdocGenerate == "" {
		t.Skip("generator of testdata/longdoc: run with -longdoc.generate=DIR")
	}
	out := *longdocGenerate
	summaries := dpkgSummaries(t)
	owner := dpkgOwners(t)
	var docs []longDoc
	docs = append(docs, genManPages(t, summaries, owner)...)
	docs = append(docs, genReadmes(t, summaries)...)
	docs = append(docs, genInfo(t, owner)...)
	docs = dropAmbiguous(docs)
	slices.SortFunc(docs, func(a, b longDoc) int { return strings.Compare(a.ID, b.ID) })
	if err := os.MkdirAll(filepath.Join(out, "copyright"), 0o755); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	enc := json.NewEncoder(zw)
	pkgs := map[string]int{}
	sources := map[string]int{}
	for _, d := range docs {
		if err := enc.Encode(d); err != nil {
			t.Fatal(err)
		}
		pkgs[d.Pkg]++
		sources[d.Source]++
	}
	zw.Close()
	if err := os.WriteFile(filepath.Join(out, "docs.jsonl.gz"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var names []string
	for p := range pkgs {
		names = append(names, p)
		data, err := os.ReadFile(filepath.Join("/usr/share/doc", p, "copyright"))
		if err != nil {
			t.Fatalf("package %s has no copyright file: %v", p, err)
		}
		if err := os.WriteFile(filepath.Join(out, "copyright", p), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(names)
	var vers bytes.Buffer
	for _, p := range names {
		v, err := exec.Command("dpkg-query", "-W", "-f=${Version}", p).Output()
		if err != nil {
			t.Fatalf("version of %s: %v", p, err)
		}
		fmt.Fprintf(&vers, "%s\t%s\t%d\n", p, v, pkgs[p])
	}
	if err := os.WriteFile(filepath.Join(out, "packages.tsv"), vers.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %d documents (%v) from %d packages, %d bytes compressed", len(docs), sources, len(pkgs), buf.Len())
}

// dpkgSummaries maps each installed package to its one-line synopsis.
func dpkgSummaries(t *testing.T) map[string]string {
	out, err := exec.Command("dpkg-query", "-W", "-f=${Package}\t${binary:Summary}\n").Output()
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if p, s, ok := strings.Cut(line, "\t"); ok {
			m[p] = strings.TrimSpace(s)
		}
	}
	return m
}

// dpkgOwners maps installed files to the package holding them.
func dpkgOwners(t *testing.T) map[string]string {
	lists, err := filepath.Glob("/var/lib/dpkg/info/*.list")
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, l := range lists {
		pkg := strings.TrimSuffix(filepath.Base(l), ".list")
		pkg, _, _ = strings.Cut(pkg, ":") // libfoo:amd64
		data, err := os.ReadFile(l)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range strings.Split(string(data), "\n") {
			if f != "" {
				m[f] = pkg
			}
		}
	}
	return m
}

// excludedPkgs are left out: google-cloud-cli has 16,000 generated pages
// of one command.
var excludedPkgs = map[string]bool{"google-cloud-cli": true}

// genManPages renders manual pages and takes the description of their NAME
// section as the query, removing the section from the text.
func genManPages(t *testing.T, summaries, owner map[string]string) []longDoc {
	var files []string
	for _, s := range []string{"1", "2", "3", "4", "5", "7", "8"} {
		dir := "/usr/share/man/man" + s
		ents, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if e.Type().IsRegular() {
				files = append(files, filepath.Join(dir, e.Name()))
			}
		}
	}
	// A stable pseudo-random order, so the per-package cap takes a spread
	// of sections rather than the first alphabetically.
	slices.SortFunc(files, func(a, b string) int { return int(int64(hash32(a)) - int64(hash32(b))) })
	perPkg := map[string]int{}
	var docs []longDoc
	for _, f := range files {
		pkg := owner[f]
		if pkg == "" || excludedPkgs[pkg] || perPkg[pkg] >= genPerPkg || summaries[pkg] == "" {
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		cmd := exec.CommandContext(ctx, "sh", "-c", `man --nh --nj -l "$1" 2>/dev/null | col -bx`, "sh", f)
		cmd.Env = append(os.Environ(), "MANWIDTH=80", "LC_ALL=C.UTF-8", "MAN_KEEP_FORMATTING=0")
		out, err := cmd.Output()
		cancel()
		if err != nil || len(out) == 0 {
			continue
		}
		query, text, ok := cutNameSection(string(out))
		if !ok || len(strings.Fields(text)) < genMinWords || len(strings.Fields(query)) < 3 || len(strings.Fields(query)) > 20 {
			continue
		}
		name := strings.TrimSuffix(filepath.Base(f), ".gz")
		perPkg[pkg]++
		docs = append(docs, longDoc{ID: "man/" + name, Source: "man", Pkg: pkg, Name: name + ".txt", Query: query, Text: text})
	}
	return docs
}

var manHeading = regexp.MustCompile(`^[A-Z][A-Z0-9 /-]*$`)

// cutNameSection returns the description of a rendered page's NAME
// section ("tar - an archiving utility" gives "an archiving utility") and
// the page without that section.
func cutNameSection(page string) (query, rest string, ok bool) {
	lines := strings.Split(page, "\n")
	start := -1
	for i, l := range lines {
		if strings.TrimSpace(l) == "NAME" && !strings.HasPrefix(l, " ") {
			start = i
			break
		}
	}
	if start < 0 {
		return "", "", false
	}
	end := len(lines)
	for i := start + 1; i < len(lines); i++ {
		if lines[i] != "" && !strings.HasPrefix(lines[i], " ") && manHeading.MatchString(strings.TrimSpace(lines[i])) {
			end = i
			break
		}
	}
	name := strings.Join(strings.Fields(strings.Join(lines[start+1:end], " ")), " ")
	_, desc, found := strings.Cut(name, " - ")
	if !found {
		return "", "", false
	}
	rest = strings.Join(append(slices.Clone(lines[:start]), lines[end:]...), "\n")
	return strings.TrimSpace(desc), rest, true
}

// genReadmes takes one README or guide per package under /usr/share/doc,
// with the package's synopsis as the query.
func genReadmes(t *testing.T, summaries map[string]string) []longDoc {
	pkgs, err := os.ReadDir("/usr/share/doc")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[[32]byte]bool{}
	var docs []longDoc
	for _, p := range pkgs {
		pkg := p.Name()
		if !p.IsDir() || summaries[pkg] == "" || excludedPkgs[pkg] {
			continue
		}
		dir := filepath.Join("/usr/share/doc", pkg)
		var best string
		var bestText string
		bestRank := 99
		_ = filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			rank := docRank(d.Name())
			if rank == 0 && filepath.Dir(path) != dir {
				rank = -1 // the README of an example, not of the package
			}
			if rank < 0 || rank > bestRank {
				return nil
			}
			text, err := readMaybeGzip(path)
			if err != nil || !isText(text) || len(strings.Fields(text)) < genMinWords {
				return nil
			}
			if rank < bestRank || len(text) > len(bestText) {
				best, bestText, bestRank = path, text, rank
			}
			return nil
		})
		if best == "" {
			continue
		}
		sum := sha256.Sum256([]byte(bestText))
		if seen[sum] {
			continue
		}
		seen[sum] = true
		rel, _ := filepath.Rel(dir, best)
		name := strings.TrimSuffix(filepath.Base(best), ".gz")
		docs = append(docs, longDoc{ID: "doc/" + pkg + "/" + strings.TrimSuffix(rel, ".gz"), Source: "doc", Pkg: pkg, Name: name, Query: summaries[pkg], Text: bestText})
	}
	return docs
}

// docRank orders the documentation files of a package: READMEs first,
// then guides and manuals; -1 leaves a file out.
func docRank(name string) int {
	n := strings.ToLower(strings.TrimSuffix(name, ".gz"))
	base := strings.TrimSuffix(n, filepath.Ext(n))
	switch {
	case strings.Contains(n, "debian") || strings.Contains(n, "changelog") || n == "copyright" ||
		strings.HasPrefix(n, "news") || strings.HasPrefix(n, "todo") || strings.HasPrefix(n, "authors") ||
		strings.HasPrefix(n, "thanks") || strings.HasPrefix(n, "copying") || strings.HasPrefix(n, "license") ||
		strings.HasPrefix(n, "changes") || strings.HasPrefix(n, "history") || strings.HasPrefix(n, "contributors"):
		return -1
	case base == "readme" && (n == base || slices.Contains([]string{".md", ".txt", ".rst"}, filepath.Ext(n))):
		return 0
	case strings.HasPrefix(n, "readme"):
		return -1 // README.Bugs, README.cross: about a corner, not the package
	case strings.HasSuffix(n, ".md") || strings.HasSuffix(n, ".txt") || strings.HasSuffix(n, ".rst") ||
		strings.HasSuffix(n, ".html") || strings.HasSuffix(n, ".htm") || base == "intro":
		for _, w := range []string{"manual", "guide", "faq", "intro", "tutorial", "overview", "user"} {
			if strings.Contains(base, w) {
				return 1
			}
		}
	}
	return -1
}

// genInfo takes each Info manual with the description of its directory
// entry as the query, the entry removed.
func genInfo(t *testing.T, owner map[string]string) []longDoc {
	files, _ := filepath.Glob("/usr/share/info/*.info.gz")
	entry := regexp.MustCompile(`(?s)START-INFO-DIR-ENTRY\n(.*?)END-INFO-DIR-ENTRY\n?`)
	var docs []longDoc
	for _, f := range files {
		pkg := owner[f]
		if pkg == "" {
			continue
		}
		text, err := readMaybeGzip(f)
		if err != nil {
			continue
		}
		parts, _ := filepath.Glob(strings.TrimSuffix(f, ".gz") + "-*.gz")
		slices.Sort(parts)
		for _, p := range parts {
			if more, err := readMaybeGzip(p); err == nil {
				text += more
			}
		}
		m := entry.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		// "* Tar: (tar).   Making tape (or disk) archives." : the first
		// entry's description, continuation lines joined.
		first := strings.Split(strings.TrimSpace(m[1]), "\n* ")[0]
		i := strings.Index(first, ").")
		if i < 0 {
			continue
		}
		query := strings.Join(strings.Fields(first[i+2:]), " ")
		text = entry.ReplaceAllString(text, "")
		if len(strings.Fields(query)) < 3 || len(strings.Fields(text)) < genMinWords {
			continue
		}
		name := strings.TrimSuffix(filepath.Base(f), ".gz")
		docs = append(docs, longDoc{ID: "info/" + name, Source: "info", Pkg: pkg, Name: name, Query: query, Text: text})
	}
	return docs
}

// dropAmbiguous leaves out documents whose query is shared with another
// (the answer would be ambiguous) or quoted in the text itself (the test
// would measure string search, not retrieval).
func dropAmbiguous(docs []longDoc) []longDoc {
	count := map[string]int{}
	for _, d := range docs {
		count[normWords(d.Query)]++
	}
	return slices.DeleteFunc(docs, func(d longDoc) bool {
		q := normWords(d.Query)
		return count[q] > 1 || strings.Contains(normWords(d.Text), q)
	})
}

// normWords lower-cases s and keeps only its letters and digits, one space
// between words.
func normWords(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 0x7f)
	}), " ")
}

func readMaybeGzip(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var r io.Reader = bufio.NewReader(f)
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(r)
		if err != nil {
			return "", err
		}
		r = zr
	}
	data, err := io.ReadAll(io.LimitReader(r, 8<<20))
	return string(data), err
}

// isText reports whether s looks like text: valid UTF-8 without NULs.
func isText(s string) bool {
	return !strings.ContainsRune(s, 0) && strings.ToValidUTF8(s, "") == s
}

func hash32(s string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return h.Sum32()
}
