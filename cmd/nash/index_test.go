package main

import (
	"bytes"
	"context"
	"encoding/json"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nash-shell/nash/index"
	"github.com/nash-shell/nash/planner"
)

// runIndexCLI runs nash with args and returns stdout, stderr and the exit
// code.
func runIndexCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, stdio{in: strings.NewReader(""), out: &out, err: &errb})
	return out.String(), errb.String(), code
}

// indexTree writes a few files and returns their directory.
func indexTree(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "files")
	files := map[string]string{
		"taxes/receipts-2025.md": "# Receipts 2025\n\nDentist and pharmacy receipts for the tax return.\n",
		"taxes/letter.txt":       "Letter from the tax office about the 2024 return.\n",
		"recipes/bread.md":       "# Bread\n\nFlour, water, salt and a sourdough starter.\n",
		"code/main.go":           "package main\n\n// main prints the receipts total.\nfunc main() {}\n",
		"photo.png":              "\x89PNG not text",
	}
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestIndexCommands(t *testing.T) {
	t.Setenv("NASH_EMBEDDER", "")
	t.Setenv("NASH_INDEX_DIR", "")
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	dir := indexTree(t)

	out, errOut, code := runIndexCLI(t, "index", "add", "-v", dir)
	if code != 0 {
		t.Fatalf("index add: code %d, stderr %q", code, errOut)
	}
	if !strings.Contains(out, "indexed 4 files") || !strings.Contains(out, "1 skipped") ||
		!strings.Contains(out, "photo.png: binary") {
		t.Errorf("index add output:\n%s", out)
	}
	// The index went to $XDG_DATA_HOME/nash/index.
	if _, err := os.Stat(filepath.Join(os.Getenv("XDG_DATA_HOME"), "nash", "index", "catalog.db")); err != nil {
		t.Errorf("index not in XDG_DATA_HOME: %v", err)
	}

	out, _, code = runIndexCLI(t, "index", "status")
	if code != 0 || !strings.Contains(out, dir) || !strings.Contains(out, "files: 4") || !strings.Contains(out, "semantic: off") {
		t.Errorf("index status: code %d\n%s", code, out)
	}

	out, _, code = runIndexCLI(t, "index", "add", dir)
	if code != 0 || !strings.Contains(out, "indexed 0 files") || !strings.Contains(out, "5 unchanged") {
		t.Errorf("second index add: code %d\n%s", code, out)
	}

	out, _, code = runIndexCLI(t, "index", "rebuild")
	if code != 0 || !strings.Contains(out, "indexed 4 files") {
		t.Errorf("index rebuild: code %d\n%s", code, out)
	}

	_, errOut, code = runIndexCLI(t, "index", "rm", filepath.Join(dir, "taxes"))
	if code != exitFailure || !strings.Contains(errOut, "inside root") {
		t.Errorf("index rm inside a root: code %d, stderr %q", code, errOut)
	}
	out, _, code = runIndexCLI(t, "index", "rm", dir)
	if code != 0 || !strings.Contains(out, "removed 4 files") {
		t.Errorf("index rm: code %d\n%s", code, out)
	}
	_, errOut, code = runIndexCLI(t, "find", "receipts")
	if code != exitFailure || !strings.Contains(errOut, "index is empty") {
		t.Errorf("find on an empty index: code %d, stderr %q", code, errOut)
	}

	t.Setenv("NASH_CONFIG", filepath.Join(t.TempDir(), "none.yaml"))
	t.Setenv("NASH_INDEX_ROOTS", "")
	_, errOut, code = runIndexCLI(t, "index", "add")
	if code != exitUsage || !strings.Contains(errOut, "index.roots") {
		t.Errorf("index add without paths or configured roots: code %d, stderr %q", code, errOut)
	}
	// Roots from the config file.
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("index:\n  roots: ["+filepath.Join(dir, "recipes")+"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("NASH_CONFIG", cfg)
	out, errOut, code = runIndexCLI(t, "index", "add")
	if code != 0 || !strings.Contains(out, "indexed 1 files") {
		t.Errorf("index add from config roots: code %d out %q err %q", code, out, errOut)
	}
	_, errOut, code = runIndexCLI(t, "index", "add", filepath.Join(dir, "missing"))
	if code != exitFailure || !strings.Contains(errOut, "no such file") {
		t.Errorf("index add of a missing path: code %d, stderr %q", code, errOut)
	}
}

func TestIndexDirFor(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	tests := []struct {
		flag string
		env  map[string]string
		want string
	}{
		{"/flag", map[string]string{"NASH_INDEX_DIR": "/env"}, "/flag"},
		{"", map[string]string{"NASH_INDEX_DIR": "/env", "XDG_DATA_HOME": "/xdg"}, "/env"},
		{"", map[string]string{"XDG_DATA_HOME": "/xdg", "HOME": "/home/u"}, "/xdg/nash/index"},
		{"", map[string]string{"XDG_DATA_HOME": "relative", "HOME": "/home/u"}, "/home/u/.local/share/nash/index"},
		{"", map[string]string{"HOME": "/home/u"}, "/home/u/.local/share/nash/index"},
	}
	for _, tt := range tests {
		got, err := indexDirFor(tt.flag, env(tt.env))
		if err != nil || got != tt.want {
			t.Errorf("indexDirFor(%q, %v) = %q, %v; want %q", tt.flag, tt.env, got, err, tt.want)
		}
	}
	for _, bad := range []string{"ollama", "ollama:", "magic:model"} {
		if _, _, err := embedderFromEnv(env(map[string]string{"NASH_EMBEDDER": bad})); err == nil {
			t.Errorf("NASH_EMBEDDER=%q accepted", bad)
		}
	}
	if e, _, err := embedderFromEnv(env(map[string]string{})); e != nil || err != nil {
		t.Errorf("no NASH_EMBEDDER: %v, %v", e, err)
	}
}

// ollamaEmbedServer answers the Ollama /api/embed protocol with a
// deterministic bag-of-words hash embedding.
func ollamaEmbedServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/embed" {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Input string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		v := make([]float32, 512)
		for _, word := range strings.Fields(strings.ToLower(req.Input)) {
			h := fnv.New32a()
			h.Write([]byte(strings.Trim(word, ".,:#/")))
			v[h.Sum32()%512]++
		}
		json.NewEncoder(w).Encode(map[string]any{"embeddings": [][]float32{v}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestIndexRetriever(t *testing.T) {
	ctx := context.Background()
	dir := indexTree(t)
	ix, err := index.Open(ctx, filepath.Join(t.TempDir(), "index"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if _, err := ix.Add(ctx, dir); err != nil {
		t.Fatal(err)
	}
	var r planner.Retriever = indexRetriever{ix}
	docs, err := r.Retrieve(ctx, "where is my (sourdough) bread recipe?", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) == 0 || docs[0].Path != filepath.Join(dir, "recipes/bread.md") || docs[0].Score <= 0 ||
		!strings.Contains(docs[0].Snippet, "sourdough") {
		t.Errorf("Retrieve = %+v", docs)
	}
}
