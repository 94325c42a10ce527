package planner

import (
	"context"
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
	"time"
)

// reply is one scripted answer of a fake provider.
type reply struct {
	content string            // the model's text, put into the envelope
	status  int               // HTTP status; 0 means 200
	header  map[string]string // extra response headers
	body    string            // raw body instead of the envelope
	hang    bool              // never answer; return when the client gives up
	// chunks is how many pieces the content is streamed in when the
	// client asks for a stream (0 means 8); stall > 0 stops the stream
	// after that many pieces and holds the connection until the client
	// gives up.
	chunks  int
	stall   int
	noUsage bool // send no usage counts
}

// wire is a protocol a fake provider speaks.
type wire struct {
	name     string // provider in the spec
	path     string // the request path the client uses
	envelope string // testdata/wire file
	env      func(url string) map[string]string
}

func wires() []wire {
	return []wire{
		{name: "ollama", path: "/api/chat", envelope: "ollama.json", env: func(u string) map[string]string {
			return map[string]string{"OLLAMA_HOST": u}
		}},
		{name: "openai", path: "/v1/chat/completions", envelope: "openai.json", env: func(u string) map[string]string {
			return map[string]string{"OPENAI_BASE_URL": u + "/v1", "OPENAI_API_KEY": "sk-test"}
		}},
		{name: "anthropic", path: "/v1/messages", envelope: "anthropic.json", env: func(u string) map[string]string {
			return map[string]string{"ANTHROPIC_BASE_URL": u + "/v1", "ANTHROPIC_API_KEY": "sk-ant-test"}
		}},
		{name: "googleai", path: "/v1beta/openai/chat/completions", envelope: "openai.json", env: func(u string) map[string]string {
			return map[string]string{"GOOGLEAI_BASE_URL": u + "/v1beta/openai", "GOOGLE_API_KEY": "g-test"}
		}},
	}
}

// fakeProvider serves scripted replies in order, recording each request
// body. After the script runs out it answers 500.
type fakeProvider struct {
	t        *testing.T
	w        wire
	envelope string
	srv      *httptest.Server

	mu      sync.Mutex
	replies []reply
	bodies  []map[string]any
	headers []http.Header
	// gone is closed when a stalled stream's client has hung up.
	gone     chan struct{}
	goneOnce sync.Once
}

func newFakeProvider(t *testing.T, w wire, replies ...reply) *fakeProvider {
	t.Helper()
	env, err := os.ReadFile(filepath.Join("testdata", "wire", w.envelope))
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeProvider{t: t, w: w, envelope: strings.TrimSpace(string(env)), replies: replies, gone: make(chan struct{})}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeProvider) serve(rw http.ResponseWriter, r *http.Request) {
	if r.URL.Path != f.w.path {
		http.Error(rw, `{"error":"not found: `+r.URL.Path+`"}`, http.StatusNotFound)
		return
	}
	b, _ := io.ReadAll(r.Body)
	var body map[string]any
	if err := json.Unmarshal(b, &body); err != nil {
		http.Error(rw, `{"error":"bad json"}`, http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.bodies = append(f.bodies, body)
	f.headers = append(f.headers, r.Header.Clone())
	var rep reply
	if len(f.replies) > 0 {
		rep, f.replies = f.replies[0], f.replies[1:]
	} else {
		rep = reply{status: 500, body: `{"error":"script exhausted"}`}
	}
	f.mu.Unlock()

	if rep.hang {
		select {
		case <-r.Context().Done():
		case <-time.After(30 * time.Second):
		}
		return
	}
	for k, v := range rep.header {
		rw.Header().Set(k, v)
	}
	if body["stream"] == true && rep.status == 0 && rep.body == "" {
		f.stream(rw, r, body, rep)
		return
	}
	rw.Header().Set("Content-Type", "application/json")
	if rep.status != 0 {
		rw.WriteHeader(rep.status)
	}
	if rep.body != "" {
		io.WriteString(rw, rep.body)
		return
	}
	c, _ := json.Marshal(rep.content)
	io.WriteString(rw, strings.Replace(f.envelope, "{{CONTENT}}", string(c), 1)+"\n")
}

// stream sends rep.content as the provider streams it: Server-Sent Events
// for OpenAI (and Google's OpenAI-compatible endpoint) and Anthropic,
// newline-delimited JSON for Ollama, with the usage counts where each
// protocol puts them.
func (f *fakeProvider) stream(rw http.ResponseWriter, r *http.Request, body map[string]any, rep reply) {
	n := rep.chunks
	if n == 0 {
		n = 8
	}
	pieces := splitN(rep.content, n)
	flusher, _ := rw.(http.Flusher)
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	send := func(s string) {
		io.WriteString(rw, s)
		if flusher != nil {
			flusher.Flush()
		}
	}
	stall := func(i int) bool {
		if rep.stall <= 0 || i < rep.stall {
			return false
		}
		select {
		case <-r.Context().Done():
			f.goneOnce.Do(func() { close(f.gone) })
		case <-time.After(30 * time.Second):
		}
		return true
	}
	in, out := 612, 58
	switch f.w.name {
	case "ollama":
		rw.Header().Set("Content-Type", "application/x-ndjson")
		for i, p := range pieces {
			if stall(i) {
				return
			}
			send(js(map[string]any{"model": "qwen2.5-coder:7b", "created_at": "2026-11-20T10:12:31.403519Z", "message": map[string]any{"role": "assistant", "content": p}, "done": false}) + "\n")
		}
		if stall(len(pieces)) {
			return
		}
		final := map[string]any{"model": "qwen2.5-coder:7b", "created_at": "2026-11-20T10:12:33.1Z", "message": map[string]any{"role": "assistant", "content": ""}, "done_reason": "stop", "done": true, "total_duration": 1839403917}
		if !rep.noUsage {
			final["prompt_eval_count"], final["eval_count"] = in, out
		}
		send(js(final) + "\n")
	case "anthropic":
		rw.Header().Set("Content-Type", "text/event-stream")
		ev := func(name string, v any) { send("event: " + name + "\ndata: " + js(v) + "\n\n") }
		ev("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": "msg_01", "type": "message", "role": "assistant", "content": []any{}, "model": "claude-3-5-haiku-20241022", "stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": in, "output_tokens": 1}}})
		ev("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		ev("ping", map[string]any{"type": "ping"})
		for i, p := range pieces {
			if stall(i) {
				return
			}
			ev("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0, "delta": map[string]any{"type": "text_delta", "text": p}})
		}
		if stall(len(pieces)) {
			return
		}
		ev("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
		ev("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": "end_turn", "stop_sequence": nil}, "usage": map[string]any{"output_tokens": out}})
		ev("message_stop", map[string]any{"type": "message_stop"})
	default: // openai, googleai
		rw.Header().Set("Content-Type", "text/event-stream")
		chunk := func(delta map[string]any, finish any) string {
			return "data: " + js(map[string]any{"id": "chatcmpl-AXh3", "object": "chat.completion.chunk", "created": 1763633551, "model": "gpt-4o-mini-2024-07-18",
				"choices": []any{map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish}}}) + "\n\n"
		}
		send(chunk(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil))
		for i, p := range pieces {
			if stall(i) {
				return
			}
			send(chunk(map[string]any{"content": p}, nil))
		}
		if stall(len(pieces)) {
			return
		}
		send(chunk(map[string]any{}, "stop"))
		if so, _ := body["stream_options"].(map[string]any); so["include_usage"] == true && !rep.noUsage {
			send("data: " + js(map[string]any{"id": "chatcmpl-AXh3", "object": "chat.completion.chunk", "created": 1763633551, "model": "gpt-4o-mini-2024-07-18",
				"choices": []any{}, "usage": map[string]any{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out}}) + "\n\n")
		}
		send("data: [DONE]\n\n")
	}
}

// splitN cuts s into n pieces of about the same size, on rune boundaries.
func splitN(s string, n int) []string {
	r := []rune(s)
	if n > len(r) {
		n = max(len(r), 1)
	}
	var out []string
	for i := range n {
		out = append(out, string(r[i*len(r)/n:(i+1)*len(r)/n]))
	}
	return out
}

// requests returns the request bodies received so far.
func (f *fakeProvider) requests() []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]any(nil), f.bodies...)
}

// fakeSleeper records waits instead of sleeping.
type fakeSleeper struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (s *fakeSleeper) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.waits = append(s.waits, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *fakeSleeper) recorded() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.waits...)
}

func mapEnv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func testSystem() System {
	return System{OS: "linux", Distro: "Debian GNU/Linux 12 (bookworm)", Shell: "bash", User: "alice", Home: "/home/alice"}
}

// newWirePlanner returns a planner that talks to f with the real
// langchaingo client for f's protocol.
func newWirePlanner(t *testing.T, f *fakeProvider, sl *fakeSleeper, opts ...Option) *Planner {
	t.Helper()
	base := []Option{
		ModelSpec(f.w.name + ":test-model"),
		Getenv(mapEnv(f.w.env(f.srv.URL))),
		Sleeper(sl.sleep),
		SystemInfo(testSystem()),
		Timeout(5 * time.Second),
	}
	p, err := New(append(base, opts...)...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return p
}

// messagesText concatenates every text a request body sends, whatever the
// protocol's shape.
func messagesText(body map[string]any) string {
	var b strings.Builder
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case string:
			b.WriteString(v)
			b.WriteString("\n")
		case []any:
			for _, x := range v {
				walk(x)
			}
		case map[string]any:
			for _, k := range []string{"system", "messages", "content", "text"} {
				if x, ok := v[k]; ok {
					walk(x)
				}
			}
		}
	}
	walk(body)
	return b.String()
}

func answerJSON(script, explanation string) string {
	b, _ := json.Marshal(Answer{Script: script, Explanation: explanation})
	return string(b)
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(fmt.Sprint(err))
	}
	return v
}
