package indexserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nash-shell/nash/internal/indexrpc"
)

func TestEmbedderFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, bad := range []string{"ollama", "ollama:", "magic:model"} {
		if _, _, err := embedderFromEnv(env(map[string]string{"NASH_EMBEDDER": bad})); err == nil {
			t.Errorf("NASH_EMBEDDER=%q accepted", bad)
		}
	}
	if e, _, err := embedderFromEnv(env(map[string]string{})); e != nil || err != nil {
		t.Errorf("no NASH_EMBEDDER: %v, %v", e, err)
	}
}

// TestUsage: a bad command line exits 2 and says how to call it.
func TestUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"find", "x"}, {"serve"}, {"serve", "--dir", "d", "extra"}, {"serve", "--bogus"}} {
		var log bytes.Buffer
		if code := Main(context.Background(), args, &log, func(string) string { return "" }); code != exitUsage || log.Len() == 0 {
			t.Errorf("Main(%q) = %d, log %q; want %d and a message", args, code, log.String(), exitUsage)
		}
	}
}

// testServer runs a server on a fresh index in this process and returns a
// client for it (which cannot start servers of its own) and a channel
// that receives serve's result.
func testServer(t *testing.T, idle time.Duration) (*indexrpc.Client, <-chan error) {
	t.Helper()
	return testServerEnv(t, idle, nil)
}

// testServerEnv is testServer with an environment for the server.
func testServerEnv(t *testing.T, idle time.Duration, env map[string]string) (*indexrpc.Client, <-chan error) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "index")
	ctx, cancel := context.WithCancel(context.Background())
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var log lockedBuffer
	done := make(chan error, 1)
	finished := make(chan struct{})
	getenv := func(k string) string {
		if k == "NASH_VERSIONS_BUDGET" {
			return "0"
		}
		return env[k]
	}
	go func() {
		done <- serve(ctx, serveOptions{dir: dir, idle: idle}, w, &log, getenv)
		close(finished)
	}()
	line := make([]byte, 64)
	n, _ := r.Read(line)
	r.Close()
	if strings.TrimSpace(string(line[:n])) != "ready" {
		t.Fatalf("server said %q; log %s", line[:n], log.String())
	}
	t.Cleanup(func() {
		cancel()
		select {
		case <-finished:
		case <-time.After(10 * time.Second):
			t.Error("the server did not stop")
		}
		if t.Failed() {
			t.Logf("server log:\n%s", log.String())
		}
	})
	exe, _ := os.Executable()
	c := &indexrpc.Client{Dir: dir, Expect: indexrpc.Identity{Build: indexrpc.BuildOf(exe), Embedder: indexrpc.EmbedderOf(getenv)}}
	return c, done
}

// TestServerAnswers: a server indexes, searches, reports status, says
// what its watcher re-indexes, and refuses another build's requests.
func TestServerAnswers(t *testing.T) {
	ctx := context.Background()
	c, done := testServer(t, time.Hour)
	files := filepath.Join(t.TempDir(), "files")
	os.MkdirAll(filepath.Join(files, "recipes"), 0o755)
	os.WriteFile(filepath.Join(files, "recipes", "bread.md"), []byte("# Bread\n\nFlour, water and a sourdough starter.\n"), 0o644)
	os.WriteFile(filepath.Join(files, "taxes.txt"), []byte("Receipts for the tax return.\n"), 0o644)

	if _, err := c.Search(ctx, indexrpc.SearchRequest{Query: "bread", N: 10}); !errors.Is(err, indexrpc.ErrEmpty) {
		t.Errorf("search of an empty index: %v, want ErrEmpty", err)
	}
	var progress int
	st, err := c.Add(ctx, []string{files}, false, func(indexrpc.Progress) { progress++ })
	if err != nil || st.Indexed != 2 {
		t.Fatalf("add: %+v, %v", st, err)
	}
	res, err := c.Search(ctx, indexrpc.SearchRequest{Query: "sourdough", N: 10, Snippets: true})
	if err != nil || len(res.Hits) != 1 || res.Hits[0].Path != filepath.Join(files, "recipes", "bread.md") ||
		!strings.Contains(res.Hits[0].Snippet, "sourdough starter") || res.Hits[0].Title != "Bread" {
		t.Fatalf("search: %+v, %v", res, err)
	}
	var re *indexrpc.Error
	if _, err := c.Search(ctx, indexrpc.SearchRequest{Query: "(bread", N: 10}); !errors.As(err, &re) || re.Kind != indexrpc.KindQuery {
		t.Errorf("bad query: %v, want a query error", err)
	}
	if res, err := c.Search(ctx, indexrpc.SearchRequest{Query: "(bread", N: 10, Plain: true}); err != nil || len(res.Hits) != 1 {
		t.Errorf("plain words: %+v, %v", res, err)
	}
	status, err := c.Status(ctx)
	if err != nil || status.Files != 2 || len(status.Roots) != 1 || status.Roots[0] != files {
		t.Errorf("status: %+v, %v", status, err)
	}

	// The watcher: a subscriber hears of a file written under the root,
	// which is searchable at once.
	wctx, stop := context.WithCancel(ctx)
	events := make(chan indexrpc.Event, 16)
	watched := make(chan error, 1)
	go func() { watched <- c.Watch(wctx, 0, func(e indexrpc.Event) { events <- e }) }()
	waitEvent := func(op string) indexrpc.Event {
		t.Helper()
		for {
			select {
			case e := <-events:
				if e.Op == op {
					return e
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("no %s event", op)
			}
		}
	}
	waitEvent("ready")
	soup := filepath.Join(files, "recipes", "soup.md")
	os.WriteFile(soup, []byte("# Soup\n\nLeeks and potatoes.\n"), 0o644)
	if e := waitEvent("sync"); e.Indexed != 1 {
		t.Errorf("sync event %+v, want one file indexed", e)
	}
	if res, err := c.Search(ctx, indexrpc.SearchRequest{Query: "leeks", N: 10}); err != nil || len(res.Hits) != 1 || res.Hits[0].Path != soup {
		t.Errorf("search after the watcher: %+v, %v", res, err)
	}
	stop()
	if err := <-watched; !errors.Is(err, context.Canceled) {
		t.Errorf("watch ended with %v", err)
	}

	// A client that wants another build, or another embedder, stops
	// this server to start its own (which this one cannot).
	other := *c
	other.Expect.Embedder = "ollama:other"
	if _, err := other.Status(ctx); !errors.Is(err, indexrpc.ErrNoServer) {
		t.Errorf("status from another configuration: %v, want ErrNoServer", err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Error("the server of another configuration did not stop")
	}
}

// TestServerLeaves: a server stops when asked, and when idle; a second
// server on the same index says another holds it.
func TestServerLeaves(t *testing.T) {
	ctx := context.Background()
	c, done := testServer(t, time.Hour)
	var log bytes.Buffer
	r, w, _ := os.Pipe()
	err := serve(ctx, serveOptions{dir: c.Dir, idle: time.Hour}, w, &log, func(string) string { return "" })
	line := make([]byte, 64)
	n, _ := r.Read(line)
	if !errors.Is(err, errLocked) || strings.TrimSpace(string(line[:n])) != "locked" {
		t.Errorf("second server: %v, said %q", err, line[:n])
	}
	if err := c.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("stopped server returned %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not stop when asked")
	}
	if _, err := os.Stat(filepath.Join(c.Dir, indexrpc.SocketName)); !os.IsNotExist(err) {
		t.Errorf("the socket is left behind: %v", err)
	}

	_, done = testServer(t, 300*time.Millisecond)
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("idle server returned %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not leave when idle")
	}

	// An index deleted under its server: the server leaves rather than
	// answer for it.
	c, done = testServer(t, time.Hour)
	if err := os.RemoveAll(c.Dir); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the server stayed after its index was deleted")
	}
}

// lockedBuffer is a bytes.Buffer safe for concurrent use.
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

// bagOfWords is a test embedding: each word hashed into one of dims
// buckets.
func bagOfWords(text string, dims int) []float32 {
	v := make([]float32, dims)
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return r < 'a' || r > 'z' }) {
		h := fnv.New32a()
		h.Write([]byte(w))
		v[h.Sum32()%uint32(dims)]++
	}
	return v
}

// embedServer answers Ollama's /api/embed and OpenAI's /v1/embeddings with
// bagOfWords, as those servers do.
func embedServer(t *testing.T) *httptest.Server {
	t.Helper()
	inputs := func(raw json.RawMessage) []string {
		var one string
		if json.Unmarshal(raw, &one) == nil {
			return []string{one}
		}
		var many []string
		json.Unmarshal(raw, &many)
		return many
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/embed", func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Input json.RawMessage }
		json.NewDecoder(r.Body).Decode(&req)
		var out struct {
			Embeddings [][]float32 `json:"embeddings"`
		}
		for _, in := range inputs(req.Input) {
			out.Embeddings = append(out.Embeddings, bagOfWords(in, 256))
		}
		json.NewEncoder(w).Encode(out)
	})
	mux.HandleFunc("POST /v1/embeddings", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			http.Error(w, "no key", http.StatusUnauthorized)
			return
		}
		var req struct {
			Input json.RawMessage
			Model string
		}
		json.NewDecoder(r.Body).Decode(&req)
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		out := struct {
			Object string         `json:"object"`
			Data   []item         `json:"data"`
			Model  string         `json:"model"`
			Usage  map[string]int `json:"usage"`
		}{Object: "list", Model: req.Model, Usage: map[string]int{"prompt_tokens": 1, "total_tokens": 1}}
		for i, in := range inputs(req.Input) {
			out.Data = append(out.Data, item{"embedding", i, bagOfWords(in, 256)})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(out)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// TestServerEmbedders: with an embedder configured, through Ollama's
// protocol or an OpenAI-compatible one, the server embeds files' passages
// and ranks files by meaning and fused.
func TestServerEmbedders(t *testing.T) {
	srv := embedServer(t)
	for _, tt := range []struct {
		spec, url string
	}{{"ollama:test-embed", srv.URL}, {"openai:test-embed", srv.URL + "/v1"}} {
		t.Run(tt.spec, func(t *testing.T) {
			ctx := context.Background()
			c, _ := testServerEnv(t, time.Hour, map[string]string{"NASH_EMBEDDER": tt.spec, "NASH_EMBED_URL": tt.url})
			files := filepath.Join(t.TempDir(), "files")
			os.MkdirAll(files, 0o755)
			os.WriteFile(filepath.Join(files, "bread.md"), []byte("# Bread\n\nFlour, water and a sourdough starter.\n"), 0o644)
			os.WriteFile(filepath.Join(files, "taxes.txt"), []byte("Receipts for the tax return.\n"), 0o644)
			if st, err := c.Add(ctx, []string{files}, false, nil); err != nil || st.Indexed != 2 || st.Chunks != 2 || st.EmbedErr != "" {
				t.Fatalf("add: %+v, %v", st, err)
			}
			if st, err := c.Status(ctx); err != nil || st.Vectors != 2 || st.Model != tt.spec {
				t.Errorf("status: %+v, %v", st, err)
			}
			for _, mode := range []indexrpc.Mode{indexrpc.Semantic, indexrpc.Hybrid, indexrpc.Auto} {
				res, err := c.Search(ctx, indexrpc.SearchRequest{Query: "flour water", Mode: mode, N: 1})
				if err != nil || len(res.Hits) != 1 || filepath.Base(res.Hits[0].Path) != "bread.md" || res.Notice != "" {
					t.Errorf("%q search: %+v, %v", mode, res, err)
				}
			}
		})
	}
}
