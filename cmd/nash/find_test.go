package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestFind(t *testing.T) {
	t.Setenv("NASH_EMBEDDER", "")
	idx := filepath.Join(t.TempDir(), "index")
	t.Setenv("NASH_INDEX_DIR", idx)
	dir := indexTree(t)
	if _, errOut, code := runIndexCLI(t, "index", "add", dir); code != 0 {
		t.Fatalf("index add: %d %s", code, errOut)
	}
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  []string // lines of stdout, in order
		wantErr  string   // substring of stderr
	}{
		{"paths in a pipe", []string{"find", "receipts"}, 0,
			[]string{filepath.Join(dir, "taxes/receipts-2025.md"), filepath.Join(dir, "code/main.go")}, ""},
		{"n", []string{"find", "-n", "1", "receipts"}, 0, []string{filepath.Join(dir, "taxes/receipts-2025.md")}, ""},
		{"dir", []string{"find", "--dir", filepath.Join(dir, "code"), "receipts"}, 0, []string{filepath.Join(dir, "code/main.go")}, ""},
		{"query words joined", []string{"find", "tax", "office"}, 0, []string{filepath.Join(dir, "taxes/letter.txt"), filepath.Join(dir, "taxes/receipts-2025.md")}, ""},
		{"keyword", []string{"find", "-k", "sourdough"}, 0, []string{filepath.Join(dir, "recipes/bread.md")}, ""},
		{"semantic falls back", []string{"find", "-s", "sourdough"}, 0, []string{filepath.Join(dir, "recipes/bread.md")}, "ranked by keyword only"},
		{"nothing found", []string{"find", "zeppelin"}, exitFailure, nil, ""},
		{"modes exclude", []string{"find", "-k", "-s", "x"}, exitUsage, nil, "exclude each other"},
		{"bad n", []string{"find", "-n", "0", "x"}, exitUsage, nil, "-n"},
		{"bad query", []string{"find", "(x"}, exitUsage, nil, "unclosed"},
		{"no query", []string{"find"}, exitUsage, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, errOut, code := runIndexCLI(t, tt.args...)
			if code != tt.wantCode {
				t.Fatalf("code %d, want %d; stderr %q", code, tt.wantCode, errOut)
			}
			var lines []string
			if out != "" {
				lines = strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			}
			if strings.Join(lines, "\n") != strings.Join(tt.wantOut, "\n") {
				t.Errorf("stdout:\n%s\nwant:\n%s", out, strings.Join(tt.wantOut, "\n"))
			}
			if !strings.Contains(errOut, tt.wantErr) {
				t.Errorf("stderr %q, want %q", errOut, tt.wantErr)
			}
		})
	}

	out, _, code := runIndexCLI(t, "find", "--json", "sourdough starter")
	if code != 0 {
		t.Fatalf("find --json: code %d", code)
	}
	var hits []struct {
		Path    string  `json:"path"`
		Score   float64 `json:"score"`
		Snippet string  `json:"snippet"`
	}
	if err := json.Unmarshal([]byte(out), &hits); err != nil {
		t.Fatalf("find --json output %q: %v", out, err)
	}
	if len(hits) != 1 || hits[0].Path != filepath.Join(dir, "recipes/bread.md") || hits[0].Score <= 0 ||
		!strings.Contains(hits[0].Snippet, "sourdough starter") {
		t.Errorf("find --json = %+v", hits)
	}

	out, _, _ = runIndexCLI(t, "find", "--snippets", "sourdough")
	if !strings.Contains(out, filepath.Join(dir, "recipes/bread.md")+":3  ") || !strings.Contains(out, "    Flour, water") {
		t.Errorf("find --snippets:\n%s", out)
	}
}

// TestFindHybrid indexes with an embedder served over the Ollama protocol
// and checks that find fuses rankings by default and honours -s.
func TestFindHybrid(t *testing.T) {
	srv := ollamaEmbedServer(t)
	t.Setenv("NASH_EMBEDDER", "ollama:test-embed")
	t.Setenv("NASH_EMBED_URL", srv.URL)
	t.Setenv("NASH_INDEX_DIR", filepath.Join(t.TempDir(), "index"))
	dir := indexTree(t)
	if out, errOut, code := runIndexCLI(t, "index", "add", dir); code != 0 || errOut != "" {
		t.Fatalf("index add: %d %q %q", code, out, errOut)
	}
	out, _, _ := runIndexCLI(t, "index", "status")
	if !strings.Contains(out, "semantic: 4 passages embedded (ollama:test-embed)") {
		t.Errorf("status:\n%s", out)
	}
	for _, args := range [][]string{{"find", "-n", "1", "flour", "water"}, {"find", "-s", "-n", "1", "flour", "water"}, {"find", "--hybrid", "-n", "1", "flour"}} {
		out, errOut, code := runIndexCLI(t, args...)
		if code != 0 || strings.TrimSpace(out) != filepath.Join(dir, "recipes/bread.md") || errOut != "" {
			t.Errorf("%v: code %d out %q err %q", args, code, out, errOut)
		}
	}
	// An embedder that cannot be reached fails the semantic search clearly.
	t.Setenv("NASH_EMBED_URL", "http://127.0.0.1:1")
	_, errOut, code := runIndexCLI(t, "find", "-s", "flour")
	if code != exitFailure || !strings.Contains(errOut, "embed query") {
		t.Errorf("unreachable embedder: code %d, stderr %q", code, errOut)
	}
}

// lockedBuffer is a bytes.Buffer safe for a writer and a reader goroutine.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestFindWhileWatching runs nash index watch, which holds the index, and
// checks that nash find is answered by it over the query socket, including
// files the watcher indexed since.
func TestFindWhileWatching(t *testing.T) {
	t.Setenv("NASH_EMBEDDER", "")
	t.Setenv("NASH_INDEX_DIR", filepath.Join(t.TempDir(), "index"))
	dir := indexTree(t)
	if _, errOut, code := runIndexCLI(t, "index", "add", dir); code != 0 {
		t.Fatalf("index add: %d %s", code, errOut)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb lockedBuffer
	codes := make(chan int, 1)
	go func() {
		codes <- run(ctx, []string{"index", "watch"}, stdio{in: strings.NewReader(""), out: &out, err: &errb}, os.LookupEnv)
	}()
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not before the deadline; watch stdout %q stderr %q", what, out.String(), errb.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitFor("watch ready", func() bool { return strings.Contains(out.String(), "watching") })

	got, errOut, code := runIndexCLI(t, "find", "sourdough")
	if code != 0 || strings.TrimSpace(got) != filepath.Join(dir, "recipes/bread.md") {
		t.Errorf("find while watching: code %d out %q err %q", code, got, errOut)
	}
	_, errOut, code = runIndexCLI(t, "find", "(sourdough")
	if code != exitUsage || !strings.Contains(errOut, "unclosed") {
		t.Errorf("bad query while watching: code %d err %q", code, errOut)
	}
	if err := os.WriteFile(filepath.Join(dir, "recipes", "soup.md"), []byte("# Soup\n\nLeeks and potatoes.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	waitFor("new file found through the watcher", func() bool {
		got, _, _ := runIndexCLI(t, "find", "leeks")
		return strings.TrimSpace(got) == filepath.Join(dir, "recipes/soup.md")
	})
	// Every command goes through the same server.
	out2, errOut, code := runIndexCLI(t, "index", "status")
	if code != 0 || !strings.Contains(out2, "files: 5") {
		t.Errorf("status while watching: code %d out %q err %q", code, out2, errOut)
	}
	cancel()
	if code := <-codes; code != exitInterrupted {
		t.Errorf("watch ended with %d, want %d; stderr %q", code, exitInterrupted, errb.String())
	}
	// The server stays until it is idle, and answers.
	got, _, code = runIndexCLI(t, "find", "leeks")
	if code != 0 || strings.TrimSpace(got) != filepath.Join(dir, "recipes/soup.md") {
		t.Errorf("find after watch: code %d out %q", code, got)
	}
}
