package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// update rewrites the cmp files of the scripts with what nash printed:
// go test -run TestScripts -u (as shfmt's tests do).
var update = flag.Bool("u", false, "update the testscript files with the output nash gives")

// TestScripts runs the sessions in testdata/script: nash end to end, with
// the sandbox for real and a model that answers from the script's
// "answers" file (see fakeModel).
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Setup:               setupNashEnv,
		UpdateScripts:       *update,
		Cmds:                map[string]func(ts *testscript.TestScript, neg bool, args []string){"lines": cmdLines},
	})
}

// cmdLines writes a file of numbered lines, too big to keep in a script:
//
//	lines FILE N PREFIX
//
// writes "PREFIX 1" to "PREFIX N", one a line.
func cmdLines(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: lines FILE N PREFIX")
	}
	n, err := strconv.Atoi(args[1])
	ts.Check(err)
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%s %d\n", args[2], i)
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(b.String()), 0o644))
}

// setupNashEnv points HOME and XDG_* into the work dir and starts the
// fake model. nash is this test binary, on PATH (see TestMain).
func setupNashEnv(e *testscript.Env) error {
	home := filepath.Join(e.WorkDir, "home")
	for _, d := range []string{home, filepath.Join(home, ".config"), filepath.Join(home, ".local", "state")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	e.Setenv("HOME", home)
	e.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	e.Setenv("XDG_STATE_HOME", filepath.Join(home, ".local", "state"))
	e.Setenv("XDG_DATA_HOME", filepath.Join(home, ".local", "share"))
	e.Setenv("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
	e.Setenv("NO_COLOR", "1")
	// For golden files compared with cmpenv: who owns what nash creates.
	e.Setenv("UID", strconv.Itoa(os.Getuid()))
	e.Setenv("GID", strconv.Itoa(os.Getgid()))
	// The index server nash starts (see TestMain), stopped at the end.
	e.Setenv("NASH_INDEX_IDLE", os.Getenv("NASH_INDEX_IDLE"))
	e.Defer(func() {
		stop := exec.Command("nash", "index", "stop")
		stop.Env = e.Vars
		_ = stop.Run()
	})
	m := newFakeModel(e.WorkDir)
	e.Defer(m.srv.Close)
	e.Setenv("OPENAI_BASE_URL", m.srv.URL+"/v1")
	e.Setenv("OPENAI_API_KEY", "sk-test")
	e.Setenv("NASH_MODEL", "openai:test-model")
	return nil
}

// fakeModel is an OpenAI-compatible server. Each chat completion takes
// the next answer from the file "answers" in the work dir, where answers
// are separated by lines "---", and appends the request's messages to
// "requests.log". When the answers run out it answers 400 (not retried).
// A request that asks for a stream (as nash's always do) gets the answer
// as server-sent events, a few characters each, with the usage at the end
// when asked; an answer holding <HOLD> is streamed up to it, then the
// server waits for the client to go away and logs that it did. GET
// /v1/models lists the models in the file "models" (one id a line), else
// test-model alone.
type fakeModel struct {
	dir string
	srv *httptest.Server

	mu   sync.Mutex
	next int
}

// holdMark in an answer stops the stream there until the client gives up.
const holdMark = "<HOLD>"

func newFakeModel(dir string) *fakeModel {
	m := &fakeModel{dir: dir}
	m.srv = httptest.NewServer(http.HandlerFunc(m.serve))
	return m
}

func (m *fakeModel) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/models") {
		m.models(w)
		return
	}
	if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
		Stream        bool `json:"stream"`
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	_ = json.Unmarshal(body, &req)
	m.mu.Lock()
	n := m.next + 1
	if f, err := os.OpenFile(filepath.Join(m.dir, "requests.log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
		streamed := ""
		if req.Stream {
			streamed = " (streamed)"
		}
		fmt.Fprintf(f, "=== request %d%s\n", n, streamed)
		for _, msg := range req.Messages {
			fmt.Fprintf(f, "--- %s\n%v\n", msg.Role, msg.Content)
		}
		f.Close()
	}
	b, err := os.ReadFile(filepath.Join(m.dir, "answers"))
	var answers []string
	if err == nil {
		answers = splitAnswers(string(b))
	}
	// A change summary after a commit gets a fixed answer and leaves the
	// scripted answers to the requests the script is about.
	summary := false
	for _, msg := range req.Messages {
		if s, ok := msg.Content.(string); ok && msg.Role == "system" && strings.Contains(s, "one-line entry of a change log") {
			summary = true
		}
	}
	if summary {
		answers = []string{"Changed the files the request asked for."}
	} else if m.next >= len(answers) {
		m.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"error":{"message":"the fake model has no more answers","type":"invalid_request_error"}}`)
		return
	}
	content := ""
	if summary {
		content = answers[0]
	} else {
		content = answers[m.next]
		m.next++
	}
	m.mu.Unlock()
	usage := map[string]any{"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}
	if !req.Stream {
		resp := map[string]any{
			"id": "chatcmpl-test", "object": "chat.completion", "created": 1763633551, "model": "test-model",
			"choices": []any{map[string]any{
				"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": strings.Replace(content, holdMark, "", 1)},
			}},
			"usage": usage,
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(resp)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	flusher, _ := w.(http.Flusher)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1763633551, "model": "test-model",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	send(chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	before, after, hold := strings.Cut(content, holdMark)
	for _, piece := range pieces(before, 6) {
		send(chunk(map[string]any{"content": piece}, nil))
	}
	if hold {
		select {
		case <-r.Context().Done():
			m.log(fmt.Sprintf("=== request %d: the client went away during the stream\n", n))
		case <-time.After(waitLimit):
		}
		return
	}
	for _, piece := range pieces(after, 6) {
		send(chunk(map[string]any{"content": piece}, nil))
	}
	send(chunk(map[string]any{}, "stop"))
	if req.StreamOptions.IncludeUsage {
		send(map[string]any{"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1763633551, "model": "test-model",
			"choices": []any{}, "usage": usage})
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// models answers GET /v1/models as OpenAI does.
func (m *fakeModel) models(w http.ResponseWriter) {
	ids := []string{"test-model"}
	if b, err := os.ReadFile(filepath.Join(m.dir, "models")); err == nil {
		ids = strings.Fields(string(b))
	}
	var data []any
	for _, id := range ids {
		data = append(data, map[string]any{"id": id, "object": "model", "created": 1715367049, "owned_by": "test"})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
}

// log appends line to requests.log.
func (m *fakeModel) log(line string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if f, err := os.OpenFile(filepath.Join(m.dir, "requests.log"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
		f.WriteString(line)
		f.Close()
	}
}

// pieces cuts s into pieces of n runes, as a model's tokens arrive.
func pieces(s string, n int) []string {
	var out []string
	r := []rune(s)
	for len(r) > 0 {
		k := min(n, len(r))
		out = append(out, string(r[:k]))
		r = r[k:]
	}
	return out
}

func splitAnswers(s string) []string {
	var out []string
	var cur []string
	for _, l := range strings.Split(s, "\n") {
		if l == "---" {
			out = append(out, strings.Join(cur, "\n"))
			cur = nil
			continue
		}
		cur = append(cur, l)
	}
	if t := strings.TrimSpace(strings.Join(cur, "\n")); t != "" {
		out = append(out, strings.Join(cur, "\n"))
	}
	return out
}
