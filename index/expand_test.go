package index

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nash-shell/nash/internal/datasets"
)

// Query expansion, measured and not kept: a semantic search without an
// embedder could add words related to the query's. TestLongDocExpansion
// (knownitem_test.go) measured it on the known-item sets, with the small
// groups below and with WordNet's synonyms (testdata/wordnet): no variant
// raised MRR@10 on the long documents (0.715 without; 0.704 to 0.713 with)
// nor clearly on tldr (0.569; 0.566 to 0.570), so nash ranks by keyword
// instead and says so. The machinery stays here, with the evaluation.

// synonymGroups are small sets of words people use for the same thing
// when looking for files (what nash used before the measurement).
var synonymGroups = [][]string{
	{"picture", "photo", "image", "img", "screenshot", "jpeg", "png"},
	{"movie", "video", "film", "clip"},
	{"song", "music", "audio", "track", "mp3"},
	{"invoice", "bill", "receipt", "payment"},
	{"tax", "taxes", "irs", "return", "deduction"},
	{"salary", "payslip", "payroll", "wage", "income"},
	{"contract", "agreement", "lease"},
	{"resume", "cv", "curriculum"},
	{"letter", "correspondence", "mail", "email"},
	{"note", "notes", "memo", "journal"},
	{"todo", "task", "checklist"},
	{"meeting", "minutes", "agenda"},
	{"report", "summary", "analysis"},
	{"presentation", "slides", "deck"},
	{"spreadsheet", "table", "csv", "sheet"},
	{"doc", "document", "documentation", "manual", "guide", "readme"},
	{"config", "configuration", "settings", "preferences", "options"},
	{"log", "logs", "journal", "trace"},
	{"error", "failure", "bug", "crash", "exception"},
	{"test", "tests", "spec", "check"},
	{"build", "compile", "make"},
	{"delete", "remove", "erase", "rm"},
	{"copy", "duplicate", "cp"},
	{"move", "rename", "mv"},
	{"archive", "compress", "zip", "tar", "backup"},
	{"download", "fetch", "get"},
	{"network", "net", "internet", "http", "web"},
	{"password", "credential", "secret", "key"},
	{"disk", "drive", "storage", "partition", "filesystem"},
	{"process", "job", "task", "pid"},
	{"user", "account", "login"},
	{"search", "find", "locate", "grep", "query"},
	{"edit", "modify", "change", "update"},
	{"show", "display", "print", "list", "view"},
	{"start", "launch", "run", "execute"},
	{"stop", "kill", "terminate", "end"},
	{"recipe", "cooking", "food"},
	{"travel", "trip", "flight", "hotel", "booking"},
	{"medical", "health", "doctor", "prescription"},
	{"bank", "statement", "account", "finance"},
	{"car", "vehicle", "insurance"},
	{"house", "home", "rent", "mortgage"},
	{"code", "source", "program", "script"},
	{"paper", "article", "publication", "thesis"},
}

// groupSynonyms returns the words sharing a group with w, excluding w.
func groupSynonyms(w string) []string {
	w = strings.ToLower(w)
	var out []string
	for _, g := range synonymGroups {
		for _, s := range g {
			if s == w {
				for _, o := range g {
					if o != w {
						out = append(out, o)
					}
				}
				break
			}
		}
	}
	return out
}

// thesaurus maps a word to its synonyms in WordNet.
type thesaurus map[string][]string

// loadThesaurus reads testdata/wordnet/synonyms.txt.gz.
func loadThesaurus(tb testing.TB) thesaurus {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join(datasets.Must(tb, datasets.WordNet), "synonyms.txt.gz"))
	if err != nil {
		tb.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		tb.Fatal(err)
	}
	text, err := io.ReadAll(zr)
	if err != nil {
		tb.Fatal(err)
	}
	t := thesaurus{}
	for line := range strings.Lines(string(text)) {
		if strings.HasPrefix(line, "#") {
			continue
		}
		if f := strings.Fields(line); len(f) > 1 {
			t[f[0]] = f[1:]
		}
	}
	return t
}

// synonyms returns the synonyms of w, looked up as written and, failing
// that, without a plural or verb ending.
func (t thesaurus) synonyms(w string) []string {
	w = strings.ToLower(w)
	if s, ok := t[w]; ok {
		return s
	}
	for _, c := range []struct{ suffix, repl string }{{"ies", "y"}, {"es", ""}, {"s", ""}, {"ing", ""}, {"ing", "e"}, {"ed", ""}, {"ed", "e"}} {
		if base, ok := strings.CutSuffix(w, c.suffix); ok && len(base) > 2 {
			if s, ok := t[base+c.repl]; ok {
				return s
			}
		}
	}
	return nil
}

func TestThesaurus(t *testing.T) {
	th := loadThesaurus(t)
	if len(th) < 40000 {
		t.Fatalf("the WordNet table has %d words, want over 40,000", len(th))
	}
	for w, want := range map[string]string{"pictures": "image", "deleted": "cancel", "display": "show"} {
		found := false
		for _, s := range th.synonyms(w) {
			found = found || s == want
		}
		if !found {
			t.Errorf("synonyms(%q) = %v, want %q among them", w, th.synonyms(w), want)
		}
	}
}
