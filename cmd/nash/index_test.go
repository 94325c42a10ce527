package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"hash/fnv"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nash-shell/nash/planner"
)

// runIndexCLI runs nash with args and returns stdout, stderr and the exit
// code.
func runIndexCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, stdio{in: strings.NewReader(""), out: &out, err: &errb}, os.LookupEnv)
	return out.String(), errb.String(), code
}

// indexTree writes a few files and returns their directory. The index
// server the test starts is stopped when it ends.
func indexTree(t *testing.T) string {
	t.Helper()
	t.Cleanup(func() {
		if _, errOut, code := runIndexCLI(t, "index", "stop"); code != 0 {
			t.Errorf("index stop: %d %s", code, errOut)
		}
	})
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

// TestIndexRetriever: the planner's retriever finds files through
// the index server, and finds nothing when there is no index.
func TestIndexRetriever(t *testing.T) {
	ctx := context.Background()
	t.Setenv("NASH_EMBEDDER", "")
	t.Setenv("NASH_INDEX_DIR", "")
	t.Setenv("XDG_DATA_HOME", t.TempDir())
	g, err := resolveOptions(os.LookupEnv, globalFlags{stateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	r := indexRetriever{g}
	if docs, err := r.Retrieve(ctx, "bread", 2); err != nil || len(docs) != 0 {
		t.Fatalf("Retrieve without an index = %+v, %v; want nothing", docs, err)
	}
	dir := indexTree(t)
	if _, errOut, code := runIndexCLI(t, "index", "add", dir); code != 0 {
		t.Fatalf("index add: %s", errOut)
	}
	var p planner.Retriever = r
	docs, err := p.Retrieve(ctx, "where is my (sourdough) bread recipe?", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) == 0 || docs[0].Path != filepath.Join(dir, "recipes/bread.md") || docs[0].Score <= 0 ||
		!strings.Contains(docs[0].Snippet, "sourdough") {
		t.Errorf("Retrieve = %+v", docs)
	}
}

// TestTmuxShellWatchesIndex: with an index set up, the interactive shell
// keeps its server up and so the index in step with the disk while it
// runs, longer than the server would stay idle: a file written from
// outside is found by :find and by nash find elsewhere. When the shell
// exits, the server leaves once idle.
func TestTmuxShellWatchesIndex(t *testing.T) {
	t.Setenv("NASH_EMBEDDER", "")
	t.Setenv("NASH_INDEX_IDLE", "2s")
	indexDir := filepath.Join(t.TempDir(), "index")
	t.Setenv("NASH_INDEX_DIR", indexDir)
	dir := indexTree(t)
	if _, errOut, code := runIndexCLI(t, "index", "add", dir); code != 0 {
		t.Fatalf("index add: %s", errOut)
	}
	tn := startNash(t, "", "NASH_INDEX_DIR="+indexDir)
	watchLogPath := filepath.Join(tn.home, ".local", "state", "nash", watchLog)
	deadline := time.Now().Add(waitLimit)
	for {
		b, _ := os.ReadFile(watchLogPath)
		if strings.Contains(string(b), "watching") {
			break
		}
		if time.Now().After(deadline) {
			tn.fatalf("the shell started no index watcher; its log says %q", b)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The watcher holds the index: nash find asks it.
	fresh := filepath.Join(dir, "fresh.md")
	written := time.Now()
	if err := os.WriteFile(fresh, []byte("# Zanzibarite\n\nA mineral nobody has heard of.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for {
		out, errOut, code := runIndexCLI(t, "find", "zanzibarite")
		if code == 0 && strings.Contains(out, fresh) {
			t.Logf("a file written under a root was found %v later", time.Since(written).Round(time.Millisecond))
			break
		}
		if code != 0 && code != exitFailure {
			t.Fatalf("nash find while the shell watches: code %d, stderr %q", code, errOut)
		}
		if time.Since(written) > waitLimit {
			tn.fatalf("a file written under a root was never found; last answer %q %q", out, errOut)
		}
		time.Sleep(50 * time.Millisecond)
	}
	tn.typeLine(":find zanzibarite")
	tn.waitFor(`fresh\.md:\d+`)
	// Idle for longer than the server's limit, it stays: the shell holds it.
	sock := filepath.Join(indexDir, "server.sock")
	before, err := os.Stat(sock)
	if err != nil {
		t.Fatalf("no index server socket while the shell runs: %v", err)
	}
	time.Sleep(3 * time.Second)
	if after, err := os.Stat(sock); err != nil || !os.SameFile(before, after) {
		tn.fatalf("the index server left or was replaced while the shell ran (%v)", err)
	}
	tn.typeLine("exit")
	deadline = time.Now().Add(waitLimit)
	for {
		if _, err := os.Stat(sock); errors.Is(err, fs.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the index server stayed after the shell exited")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
