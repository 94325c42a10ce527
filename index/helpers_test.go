package index

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"unicode"

	"github.com/tmc/langchaingo/embeddings"
	"github.com/tmc/langchaingo/llms/ollama"
)

// writeFiles creates files under dir from a map of relative path to content.
func writeFiles(tb testing.TB, dir string, files map[string]string) {
	tb.Helper()
	for rel, content := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
}

// makePDF returns a minimal one-page PDF showing each line of text.
func makePDF(lines ...string) []byte {
	var content strings.Builder
	content.WriteString("BT /F1 12 Tf 72 720 Td 14 TL\n")
	for _, l := range lines {
		fmt.Fprintf(&content, "(%s) Tj T*\n", l)
	}
	content.WriteString("ET\n")
	return makePDFContent(content.String())
}

// makePDFContent returns a one-page PDF with the given content stream and
// Helvetica as font /F1.
func makePDFContent(content string) []byte {
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%sendstream", len(content), content),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// makeZip returns a zip archive holding the given members.
func makeZip(members map[string]string) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, content := range members {
		w, _ := zw.Create(name)
		w.Write([]byte(content))
	}
	zw.Close()
	return b.Bytes()
}

func makeDOCX(paragraphs ...string) []byte {
	var body strings.Builder
	for _, p := range paragraphs {
		fmt.Fprintf(&body, `<w:p><w:r><w:t>%s</w:t></w:r></w:p>`, p)
	}
	return makeZip(map[string]string{
		"[Content_Types].xml": `<?xml version="1.0"?><Types/>`,
		"word/document.xml": `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>` +
			body.String() + `</w:body></w:document>`,
	})
}

func makeODT(paragraphs ...string) []byte {
	var body strings.Builder
	for _, p := range paragraphs {
		fmt.Fprintf(&body, `<text:p>%s</text:p>`, p)
	}
	return makeZip(map[string]string{
		"mimetype": "application/vnd.oasis.opendocument.text",
		"content.xml": `<?xml version="1.0" encoding="UTF-8"?><office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:body><office:text>` +
			body.String() + `</office:text></office:body></office:document-content>`,
	})
}

// hashEmbed is a deterministic test embedding: words (lower-cased, with a
// crude plural strip) and their character trigrams hashed into dims signed
// buckets. Texts sharing words or word pieces get similar vectors; it knows
// no synonyms.
func hashEmbed(text string, dims int) []float32 {
	v := make([]float32, dims)
	add := func(s string, w float32) {
		h := fnv.New64a()
		h.Write([]byte(s))
		x := h.Sum64()
		sign := float32(1)
		if x>>63 == 1 {
			sign = -1
		}
		v[x%uint64(dims)] += sign * w
	}
	for _, word := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		word = strings.TrimSuffix(word, "s")
		add("w:"+word, 1)
		padded := "^" + word + "$"
		for i := 0; i+3 <= len(padded); i++ {
			add("t:"+padded[i:i+3], 0.3)
		}
	}
	var n float64
	for _, x := range v {
		n += float64(x * x)
	}
	if n > 0 {
		for i := range v {
			v[i] /= float32(math.Sqrt(n))
		}
	}
	return v
}

// ollamaServer serves hashEmbed over the Ollama /api/embed protocol and
// counts the texts it embedded.
func ollamaServer(tb testing.TB, dims int) (*httptest.Server, *atomic.Int64) {
	tb.Helper()
	calls := new(atomic.Int64)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/embed", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string          `json:"model"`
			Input json.RawMessage `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var inputs []string
		var one string
		if err := json.Unmarshal(req.Input, &one); err == nil {
			inputs = []string{one}
		} else if err := json.Unmarshal(req.Input, &inputs); err != nil {
			http.Error(w, "input must be a string or a list of strings", http.StatusBadRequest)
			return
		}
		out := struct {
			Model      string      `json:"model"`
			Embeddings [][]float32 `json:"embeddings"`
		}{Model: req.Model}
		for _, in := range inputs {
			out.Embeddings = append(out.Embeddings, hashEmbed(in, dims))
		}
		calls.Add(int64(len(inputs)))
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(out)
	})
	srv := httptest.NewServer(mux)
	tb.Cleanup(srv.Close)
	return srv, calls
}

// testEmbedder returns a langchaingo embedder talking to an Ollama-protocol
// test server through langchaingo's own Ollama client.
func testEmbedder(tb testing.TB) Embedder {
	tb.Helper()
	srv, _ := ollamaServer(tb, 256)
	llm, err := ollama.New(ollama.WithServerURL(srv.URL), ollama.WithModel("hash-embed"))
	if err != nil {
		tb.Fatal(err)
	}
	e, err := embeddings.NewEmbedder(llm)
	if err != nil {
		tb.Fatal(err)
	}
	return e
}

// openTest opens an index in a temporary directory, closed at cleanup.
func openTest(tb testing.TB, opts ...Option) *Index {
	tb.Helper()
	ix, err := Open(context.Background(), filepath.Join(tb.TempDir(), "index"), opts...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ix.Close() })
	return ix
}

// names returns the base names of the hits.
func names(hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = filepath.Base(h.Path)
	}
	return out
}
