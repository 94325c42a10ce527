//go:build linux

package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// summaryModel is an OpenAI-compatible server that answers each chat
// completion with the next of its answers (a status, for an error) and
// records every request it gets, whatever the path.
type summaryModel struct {
	srv *httptest.Server

	mu       sync.Mutex
	answers  []string
	status   int // when not 0, every chat completion fails with it
	requests []string
}

func newSummaryModel(t *testing.T, answers ...string) *summaryModel {
	m := &summaryModel{answers: answers}
	m.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		m.mu.Lock()
		defer m.mu.Unlock()
		m.requests = append(m.requests, r.URL.Path+"\n"+string(body))
		w.Header().Set("Content-Type", "application/json")
		if !strings.HasSuffix(r.URL.Path, "/chat/completions") || m.status != 0 || len(m.answers) == 0 {
			w.WriteHeader(max(m.status, http.StatusBadRequest))
			fmt.Fprint(w, `{"error":{"message":"no answer here","type":"invalid_request_error"}}`)
			return
		}
		content := m.answers[0]
		m.answers = m.answers[1:]
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-test", "object": "chat.completion", "created": 1763633551, "model": "test",
			"choices": []any{map[string]any{
				"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": content},
			}},
		})
	}))
	t.Cleanup(m.srv.Close)
	return m
}

func (m *summaryModel) sent() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.requests...)
}

// modelNash is a nash in a fresh directory whose model is m (NASH_MODEL
// when spec is set), with no config file.
func modelNash(t *testing.T, m *summaryModel, spec string) (string, *nashCmd) {
	dir := t.TempDir()
	n := newNash(t, dir)
	emptyTrashOnCleanup(t, n)
	n.env = append(n.env,
		"NASH_MODEL="+spec, "NASH_CONFIG="+filepath.Join(t.TempDir(), "none.yaml"),
		"OPENAI_BASE_URL="+m.srv.URL+"/v1", "OPENAI_API_KEY=sk-test",
		"OLLAMA_HOST="+m.srv.URL, "ANTHROPIC_BASE_URL="+m.srv.URL, "GOOGLEAI_BASE_URL="+m.srv.URL)
	return dir, n
}

// txJSON is the part of nash log --json a test reads.
type txJSON struct {
	ID      string `json:"id"`
	Summary string `json:"summary"`
}

func logJSON(t *testing.T, n *nashCmd) []txJSON {
	t.Helper()
	out, errOut, code := n.run("", "log", "--json")
	var txs []txJSON
	if code != 0 || json.Unmarshal([]byte(out), &txs) != nil {
		t.Fatalf("log --json: code %d\n%s%s", code, out, errOut)
	}
	return txs
}

// TestChangeSummary: with a model configured, a commit by nash run and by
// nash join gets a summary made from the diff, shown after the commit,
// stored with the transaction and shown, escaped, by nash log and show.
func TestChangeSummary(t *testing.T) {
	m := newSummaryModel(t, "Created greeting.txt saying hello.", "Summary: Appended b to a and \x1b[2Jremoved b.")
	dir, n := modelNash(t, m, "openai:test")

	_, errOut, code := n.run("", "run", "--yes", "--", "echo hello > greeting.txt")
	if code != 0 {
		t.Fatalf("run: code %d\n%s", code, errOut)
	}
	if !strings.Contains(errOut, "nash: committed as transaction") || !strings.Contains(errOut, "nash: summary: Created greeting.txt saying hello.\n") {
		t.Errorf("no summary after the commit:\n%s", errOut)
	}
	sent := m.sent()
	if len(sent) != 1 || !strings.Contains(sent[0], "greeting.txt") || !strings.Contains(sent[0], "+hello") {
		t.Errorf("the model was not sent the diff: %q", sent)
	}
	txs := logJSON(t, n)
	if len(txs) != 1 || txs[0].Summary != "Created greeting.txt saying hello." {
		t.Fatalf("log --json: %+v", txs)
	}
	out, _, _ := n.run("", "log")
	if !strings.Contains(out, "Created greeting.txt saying hello.") {
		t.Errorf("log does not show the summary:\n%s", out)
	}
	out, _, _ = n.run("", "show", txs[0].ID)
	if !strings.Contains(out, "summary: Created greeting.txt saying hello.\n") {
		t.Errorf("show does not show the summary:\n%s", out)
	}

	// nash join goes through the same flow; a hostile answer is stored
	// and shown escaped.
	for name, body := range map[string]string{"a": "1\n", "b": "2\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, errOut, code = n.run("", "join", "a", "b", "--yes")
	if code != 0 {
		t.Fatalf("join: code %d\n%s", code, errOut)
	}
	txs = logJSON(t, n)
	const want = `Appended b to a and \x1b[2Jremoved b.`
	if len(txs) != 2 || txs[1].Summary != want {
		t.Fatalf("log --json after join: %+v", txs)
	}
	out, _, _ = n.run("", "show", txs[1].ID)
	if strings.ContainsRune(out+errOut, 0x1b) || !strings.Contains(out, "summary: "+want) {
		t.Errorf("the summary is not shown escaped:\n%q\n%q", out, errOut)
	}
	if sent := m.sent(); len(sent) != 2 || !strings.Contains(sent[1], "deleted") {
		t.Errorf("the join's changes were not sent: %q", sent)
	}

	// Undo still works, and the undone transaction keeps its summary.
	if _, errOut, code := n.run("", "undo"); code != 0 {
		t.Fatalf("undo: %s", errOut)
	}
	if txs = logJSON(t, n); txs[1].Summary != want {
		t.Errorf("summary lost by undo: %+v", txs)
	}
}

// TestChangeSummaryModelFlag: --model alone configures the summary.
func TestChangeSummaryModelFlag(t *testing.T) {
	m := newSummaryModel(t, "Made x.")
	_, n := modelNash(t, m, "")
	_, errOut, code := n.run("", "--model", "openai:test", "run", "--yes", "--", "echo x > x")
	if code != 0 || !strings.Contains(errOut, "nash: summary: Made x.") {
		t.Fatalf("code %d\n%s", code, errOut)
	}
	if txs := logJSON(t, n); len(txs) != 1 || txs[0].Summary != "Made x." {
		t.Errorf("log --json: %+v", txs)
	}
}

// TestChangeSummaryFailure: a model that fails does not undo or block the
// commit; the failure is one line and no summary is stored.
func TestChangeSummaryFailure(t *testing.T) {
	m := newSummaryModel(t)
	m.mu.Lock()
	m.status = http.StatusBadRequest
	m.mu.Unlock()
	dir, n := modelNash(t, m, "openai:test")
	out, errOut, code := n.run("", "run", "--yes", "--json", "--", "echo hi > f")
	if code != 0 {
		t.Fatalf("code %d\n%s%s", code, out, errOut)
	}
	if res := decodeRun(t, out); !res.Committed || res.Summary != "" {
		t.Errorf("--json: %+v", res)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "f")); string(b) != "hi\n" {
		t.Errorf("f = %q: the commit did not stand", b)
	}
	var failLines []string
	for _, l := range strings.Split(errOut, "\n") {
		if strings.Contains(l, "summary") {
			failLines = append(failLines, l)
		}
	}
	if len(failLines) != 1 || !strings.HasPrefix(failLines[0], "nash: no change summary: ") {
		t.Errorf("want one line reporting the failure, got:\n%s", errOut)
	}
	if len(m.sent()) == 0 {
		t.Error("the model was never asked")
	}
	if txs := logJSON(t, n); len(txs) != 1 || txs[0].Summary != "" {
		t.Errorf("log --json: %+v", txs)
	}
}

// TestNoModelNoSummary: with no model configured (no flag, no NASH_MODEL,
// no config), nothing is asked of any provider, including the default
// one, and no summary is shown, stored or reported missing.
func TestNoModelNoSummary(t *testing.T) {
	m := newSummaryModel(t, "should never be asked")
	dir, n := modelNash(t, m, "")
	if err := os.WriteFile(filepath.Join(dir, "a"), []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"run", "--yes", "--", "echo hi > f"},
		{"join", "a", "f", "--into", "g", "--yes"},
	} {
		_, errOut, code := n.run("", args...)
		if code != 0 {
			t.Fatalf("%q: code %d\n%s", args, code, errOut)
		}
		if strings.Contains(errOut, "summary") {
			t.Errorf("%q: summary mentioned with no model:\n%s", args, errOut)
		}
	}
	if sent := m.sent(); len(sent) != 0 {
		t.Errorf("a provider was contacted with no model configured: %q", sent)
	}
	for _, tx := range logJSON(t, n) {
		if tx.Summary != "" {
			t.Errorf("transaction %s has a summary: %q", tx.ID, tx.Summary)
		}
	}
}
