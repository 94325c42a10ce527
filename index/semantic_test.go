package index

import (
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tmc/langchaingo/embeddings"
	"github.com/tmc/langchaingo/llms/ollama"
)

// TestHybrid runs semantic and hybrid retrieval end to end through
// langchaingo's Ollama client against a local server speaking the Ollama
// embeddings protocol with a deterministic hashing embedder.
func TestHybrid(t *testing.T) {
	ctx := context.Background()
	dir := corpus(t)
	srv, calls := ollamaServer(t, 256)
	llm, err := ollama.New(ollama.WithServerURL(srv.URL), ollama.WithModel("hash-embed"))
	if err != nil {
		t.Fatal(err)
	}
	emb, err := embeddings.NewEmbedder(llm)
	if err != nil {
		t.Fatal(err)
	}
	idx := filepath.Join(t.TempDir(), "index")
	ix, err := Open(ctx, idx, Embeddings(emb, "hash-embed"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := ix.Add(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.EmbedErr != nil {
		t.Fatal(st.EmbedErr)
	}
	status, _ := ix.Status()
	if status.Vectors != status.Chunks || status.Vectors == 0 || status.Model != "hash-embed" {
		t.Errorf("status: %d vectors for %d chunks, model %q", status.Vectors, status.Chunks, status.Model)
	}
	embedded := calls.Load()
	if embedded < int64(status.Chunks) {
		t.Errorf("server embedded %d texts for %d chunks", embedded, status.Chunks)
	}

	// The hashing embedder matches word pieces: "glaciers" shares trigrams
	// with "glacier" and the plural strip, so semantic search finds the PDF.
	res, err := ix.Search(ctx, "glaciers retreating", SearchOptions{Mode: Semantic, N: 3})
	if err != nil {
		t.Fatal(err)
	}
	if res.Mode != Semantic || res.Notice != "" || len(res.Hits) == 0 || filepath.Base(res.Hits[0].Path) != "paper.pdf" {
		t.Errorf("semantic: mode %v notice %q hits %v", res.Mode, res.Notice, names(res.Hits))
	}
	// Semantic hits honour filters.
	res, err = ix.Search(ctx, "glaciers ext:md", SearchOptions{Mode: Semantic})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range res.Hits {
		if !strings.HasSuffix(h.Path, ".md") {
			t.Errorf("semantic with ext:md returned %s", h.Path)
		}
	}
	// Hybrid: a file found by both rankings comes first; Auto is hybrid.
	for _, mode := range []Mode{Hybrid, Auto} {
		res, err = ix.Search(ctx, "sourdough bread", SearchOptions{Mode: mode, N: 3})
		if err != nil {
			t.Fatal(err)
		}
		if res.Mode != Hybrid || len(res.Hits) == 0 || filepath.Base(res.Hits[0].Path) != "bread.md" {
			t.Errorf("%v: mode %v hits %v", mode, res.Mode, names(res.Hits))
		}
		if want := 2.0 / (rrfK + 1); res.Hits[0].Score != want {
			t.Errorf("%v: top fused score %v, want %v (first in both rankings)", mode, res.Hits[0].Score, want)
		}
	}
	hits, err := ix.Retrieve(ctx, "where is my (sourdough) bread recipe?", 2)
	if err != nil || len(hits) == 0 || filepath.Base(hits[0].Path) != "bread.md" {
		t.Errorf("Retrieve: %v, %v", names(hits), err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}

	// Reopened with the same model, nothing is embedded again; vectors load
	// from disk.
	before := calls.Load()
	ix, err = Open(ctx, idx, Embeddings(emb, "hash-embed"))
	if err != nil {
		t.Fatal(err)
	}
	if st, err := ix.Update(ctx); err != nil || st.Indexed != 0 {
		t.Errorf("update after reopen: %+v, %v", st, err)
	}
	if calls.Load() != before {
		t.Errorf("reopen re-embedded %d texts", calls.Load()-before)
	}
	if s, _ := ix.Status(); s.Vectors != status.Vectors {
		t.Errorf("reopened with %d vectors, want %d", s.Vectors, status.Vectors)
	}
	ix.Close()

	// Another model: old vectors are dropped and every file re-embedded.
	ix, err = Open(ctx, idx, Embeddings(emb, "other-model"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if s, _ := ix.Status(); s.Vectors != 0 {
		t.Errorf("vectors of another model kept: %d", s.Vectors)
	}
	st, err = ix.Update(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := ix.Status(); st.Indexed != status.Files || s.Vectors != status.Vectors {
		t.Errorf("model change: re-indexed %d of %d files, %d vectors", st.Indexed, status.Files, s.Vectors)
	}
}

// TestNoEmbedderFallback checks that semantic requests without an embedder
// run as keyword search, and say so. (Expanding the query with related
// words was measured and did not help: expand_test.go.)
func TestNoEmbedderFallback(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"2024/dentist.txt": "receipt from the dentist, paid in cash\n",
		"2024/garden.txt":  "the garden needs water\n",
	})
	ix := openTest(t)
	if _, err := ix.Add(ctx, dir); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []Mode{Semantic, Hybrid} {
		res, err := ix.Search(ctx, "dentist receipt", SearchOptions{Mode: mode})
		if err != nil {
			t.Fatal(err)
		}
		if res.Mode != Keyword || res.Notice != NoticeNoEmbedder {
			t.Errorf("%v without embedder: mode %v notice %q", mode, res.Mode, res.Notice)
		}
		if got := names(res.Hits); !slices.Equal(got, []string{"dentist.txt"}) {
			t.Errorf("%v: found %v, want dentist.txt", mode, got)
		}
	}
	res, err := ix.Search(ctx, "dentist", SearchOptions{Mode: Keyword})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 1 || res.Notice != "" {
		t.Errorf("keyword: %v, notice %q", names(res.Hits), res.Notice)
	}
}

func TestFuseRRF(t *testing.T) {
	h := func(paths ...string) []Hit {
		out := make([]Hit, len(paths))
		for i, p := range paths {
			out[i] = Hit{Path: p}
		}
		return out
	}
	tests := []struct {
		a, b []Hit
		want []string
	}{
		{h("x", "y", "z"), h("y", "x"), []string{"x", "y", "z"}},
		{h("x", "y"), h("z", "y"), []string{"y", "x", "z"}},
		{nil, h("a", "b"), []string{"a", "b"}},
		{nil, nil, nil},
	}
	for _, tt := range tests {
		got := fuseRRF(tt.a, tt.b)
		var paths []string
		for _, g := range got {
			paths = append(paths, g.Path)
		}
		if !slices.Equal(paths, tt.want) {
			t.Errorf("fuseRRF(%v, %v) = %v, want %v", tt.a, tt.b, paths, tt.want)
		}
	}
}

func TestVectorStore(t *testing.T) {
	s := newVectorStore()
	for id, v := range map[string][]float32{"a": {1, 0}, "b": {0, 1}, "c": {1, 1}} {
		if err := s.put(id, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.put("d", []float32{1, 2, 3}); err == nil {
		t.Error("a vector of other dimensions was accepted")
	}
	got, err := s.search([]float32{1, 0.1}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].id != "a" || got[1].id != "c" {
		t.Errorf("search = %v, want a then c", got)
	}
	s.del("a")
	s.del("missing")
	if err := s.put("b", []float32{1, 0}); err != nil { // replace
		t.Fatal(err)
	}
	got, _ = s.search([]float32{1, 0}, 1)
	if s.len() != 2 || got[0].id != "b" {
		t.Errorf("after del and replace: len %d, best %v", s.len(), got)
	}
	if _, err := s.search([]float32{1}, 1); err == nil {
		t.Error("a query of other dimensions was accepted")
	}
}

// TestVectorStoreApprox compares the IVF index with exact search on
// clustered vectors, through puts, replacements and deletes.
func TestVectorStoreApprox(t *testing.T) {
	const n, dims = 6000, 32
	exact, approx := newVectorStore(), newVectorStore()
	approx.threshold = 1000
	vec := func(i int) []float32 {
		v := make([]float32, dims)
		// 40 clusters, each a direction plus a little per-vector spread.
		v[(i%40)%dims] += 4
		v[(i%40*7+3)%dims] += 2
		for j := range v {
			v[j] += float32(((i*31+j*17)%13)-6) / 20
		}
		return v
	}
	id := func(i int) string { return "chunk#" + strconv.Itoa(i) }
	for i := range n {
		for _, s := range []*vectorStore{exact, approx} {
			if err := s.put(id(i), vec(i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	q := vec(12345)
	if _, err := approx.search(q, 10); err != nil { // builds the index
		t.Fatal(err)
	}
	if approx.ivf == nil {
		t.Fatal("no IVF index past the threshold")
	}
	// Churn after the build: deletes, replacements, new vectors.
	for i := 0; i < n; i += 7 {
		exact.del(id(i))
		approx.del(id(i))
	}
	for i := 1; i < n; i += 11 {
		for _, s := range []*vectorStore{exact, approx} {
			s.put(id(i), vec(i+3))
		}
	}
	for i := n; i < n+500; i++ {
		for _, s := range []*vectorStore{exact, approx} {
			s.put(id(i), vec(i))
		}
	}
	if exact.len() != approx.len() {
		t.Fatalf("sizes differ: %d, %d", exact.len(), approx.len())
	}
	listed := 0
	for _, l := range approx.ivf.lists {
		listed += len(l)
	}
	if listed != approx.len() || len(approx.ivf.assign) != approx.len() {
		t.Fatalf("IVF lists %d rows and assigns %d, store has %d", listed, len(approx.ivf.assign), approx.len())
	}
	hit, total := 0, 0
	for qi := range 50 {
		q := vec(qi * 97)
		want, _ := exact.search(q, 10)
		got, _ := approx.search(q, 10)
		in := map[string]bool{}
		for _, g := range got {
			in[g.id] = true
		}
		for _, w := range want {
			total++
			if in[w.id] {
				hit++
			}
		}
	}
	recall := float64(hit) / float64(total)
	t.Logf("IVF recall@10 against exact search: %.3f", recall)
	if recall < 0.9 {
		t.Errorf("IVF recall@10 %.3f, want at least 0.9", recall)
	}
}

// TestRetrieveWithoutEmbedder: without an embedder, Retrieve ranks the
// request's words by keyword, reading them as plain words.
func TestRetrieveWithoutEmbedder(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"dentist.txt": "receipt from the dentist\n", "garden.txt": "water the garden\n"})
	ix := openTest(t)
	if _, err := ix.Add(ctx, dir); err != nil {
		t.Fatal(err)
	}
	hits, err := ix.Retrieve(ctx, "move every (dentist) receipt from 2025 into one folder", 5)
	if err != nil {
		t.Fatal(err)
	}
	if got := names(hits); !slices.Equal(got, []string{"dentist.txt"}) {
		t.Errorf("Retrieve = %v, want dentist.txt", got)
	}
}
