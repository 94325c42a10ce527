package planner

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// listServer serves model listings as a provider does, checking the
// authentication each protocol uses and answering by page.
type listServer struct {
	t     *testing.T
	srv   *httptest.Server
	mu    sync.Mutex
	seen  []string // request paths with their queries
	auth  []string // the credential each request carried
	fails int      // answer this many requests with 503 first
}

func newListServer(t *testing.T) *listServer {
	s := &listServer{t: t}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *listServer) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.seen = append(s.seen, r.URL.RequestURI())
	var cred string
	switch {
	case r.Header.Get("Authorization") != "":
		cred = r.Header.Get("Authorization")
	case r.Header.Get("x-api-key") != "":
		cred = "x-api-key " + r.Header.Get("x-api-key") + " version " + r.Header.Get("anthropic-version")
	case r.Header.Get("x-goog-api-key") != "":
		cred = "x-goog-api-key " + r.Header.Get("x-goog-api-key")
	}
	s.auth = append(s.auth, cred)
	fail := s.fails > 0
	if fail {
		s.fails--
	}
	s.mu.Unlock()
	if r.Method != http.MethodGet {
		http.Error(w, `{"error":"method"}`, http.StatusMethodNotAllowed)
		return
	}
	if fail {
		http.Error(w, `{"error":"overloaded"}`, http.StatusServiceUnavailable)
		return
	}
	var file string
	q := r.URL.Query()
	switch r.URL.Path {
	case "/api/tags":
		file = "ollama-tags.json"
	case "/v1/models":
		switch {
		case cred == "Bearer sk-bad":
			http.Error(w, `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","code":"invalid_api_key"}}`, http.StatusUnauthorized)
			return
		case strings.HasPrefix(cred, "Bearer"):
			file = "openai-models.json"
		case q.Get("after_id") == "claude-3-5-haiku-20241022":
			file = "anthropic-models-2.json"
		case q.Get("after_id") == "":
			file = "anthropic-models-1.json"
		}
	case "/v1beta/models":
		switch q.Get("pageToken") {
		case "":
			file = "google-models-1.json"
		case "Ch1tb2RlbHMvZ2VtaW5pLTIuMC1mbGFzaA==":
			file = "google-models-2.json"
		}
	}
	if file == "" {
		http.Error(w, `{"error":"not found"}`, http.StatusNotFound)
		return
	}
	b, err := os.ReadFile(filepath.Join("testdata", "wire", "models", file))
	if err != nil {
		s.t.Error(err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

// TestListModels: each provider's listing API, asked with the credential
// it takes, gives the models it offers, every page of them, sorted, with
// what each provider says about them.
func TestListModels(t *testing.T) {
	date := func(s string) time.Time { return must(time.Parse(time.RFC3339Nano, s)) }
	tests := []struct {
		wire  string
		want  []ModelInfo
		paths []string
		auth  string
	}{
		{
			wire: "ollama",
			want: []ModelInfo{
				{ID: "llama3.2:latest", Created: date("2026-10-18T17:40:11.01234+02:00"), Size: 2019393189, Details: "llama 3.2B Q4_K_M"},
				{ID: "qwen2.5-coder:7b", Created: date("2026-11-02T09:14:05.372711838+01:00"), Size: 4683087332, Details: "qwen2 7.6B Q4_K_M"},
			},
			paths: []string{"/api/tags"},
		},
		{
			wire: "openai",
			want: []ModelInfo{
				{ID: "gpt-4.1", Created: time.Unix(1744316542, 0).UTC(), Details: "owned by system"},
				{ID: "gpt-4o-mini", Created: time.Unix(1721172741, 0).UTC(), Details: "owned by system"},
				{ID: "text-embedding-3-small", Created: time.Unix(1705948997, 0).UTC(), Details: "owned by system"},
			},
			paths: []string{"/v1/models"},
			auth:  "Bearer sk-test",
		},
		{
			wire: "anthropic",
			want: []ModelInfo{
				{ID: "claude-3-5-haiku-20241022", Name: "Claude Haiku 3.5", Created: date("2024-10-22T00:00:00Z")},
				{ID: "claude-3-haiku-20240307", Name: "Claude Haiku 3", Created: date("2024-03-07T00:00:00Z")},
				{ID: "claude-sonnet-4-20250514", Name: "Claude Sonnet 4", Created: date("2025-05-22T00:00:00Z")},
			},
			paths: []string{"/v1/models?limit=1000", "/v1/models?after_id=claude-3-5-haiku-20241022&limit=1000"},
			auth:  "x-api-key sk-ant-test version 2023-06-01",
		},
		{
			wire: "googleai",
			want: []ModelInfo{
				{ID: "gemini-2.0-flash", Name: "Gemini 2.0 Flash", Details: "input up to 1048576 tokens"},
				{ID: "gemini-2.5-pro", Name: "Gemini 2.5 Pro", Details: "input up to 1048576 tokens"},
			},
			paths: []string{"/v1beta/models?pageSize=1000", "/v1beta/models?pageSize=1000&pageToken=Ch1tb2RlbHMvZ2VtaW5pLTIuMC1mbGFzaA%3D%3D"},
			auth:  "x-goog-api-key g-test",
		},
	}
	for _, tt := range tests {
		t.Run(tt.wire, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			s := newListServer(t)
			p := listPlanner(t, tt.wire, s.srv.URL)
			got, err := p.ListModels(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("models (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.paths, s.seen); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
			for _, a := range s.auth {
				if a != tt.auth {
					t.Errorf("credential sent %q, want %q", a, tt.auth)
				}
			}
		})
	}
}

func listPlanner(t *testing.T, provider, url string, opts ...Option) *Planner {
	t.Helper()
	for _, w := range wires() {
		if w.name == provider {
			base := []Option{ModelSpec(provider + ":test-model"), Getenv(mapEnv(w.env(url))), Sleeper((&fakeSleeper{}).sleep), SystemInfo(testSystem())}
			return must(New(append(base, opts...)...))
		}
	}
	t.Fatalf("no wire %s", provider)
	return nil
}

// TestListModelsErrors: the listing fails as a plan does: a wrong key is a
// *StatusError with the provider's words, a 503 is retried, nothing
// listening is ErrNoProvider with setup help, a planner without a provider
// says so.
func TestListModelsErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	s := newListServer(t)
	env := map[string]string{"OPENAI_BASE_URL": s.srv.URL + "/v1", "OPENAI_API_KEY": "sk-bad"}
	p := must(New(ModelSpec("openai:gpt-4o-mini"), Getenv(mapEnv(env)), SystemInfo(testSystem())))
	_, err := p.ListModels(ctx)
	var serr *StatusError
	if !errors.As(err, &serr) || serr.StatusCode != http.StatusUnauthorized || !strings.Contains(err.Error(), "Incorrect API key") {
		t.Errorf("bad key: %v", err)
	}

	s = newListServer(t)
	s.fails = 1
	sl := &fakeSleeper{}
	p = must(New(ModelSpec("ollama:x"), Getenv(mapEnv(map[string]string{"OLLAMA_HOST": s.srv.URL})), Sleeper(sl.sleep), SystemInfo(testSystem())))
	if ms, err := p.ListModels(ctx); err != nil || len(ms) != 2 || len(sl.recorded()) != 1 {
		t.Errorf("after a 503: %d models, %v, waits %v", len(ms), err, sl.recorded())
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	p = must(New(ModelSpec("anthropic"), Getenv(mapEnv(map[string]string{"ANTHROPIC_BASE_URL": "http://" + addr + "/v1", "ANTHROPIC_API_KEY": "k"})), SystemInfo(testSystem())))
	if _, err := p.ListModels(ctx); !errors.Is(err, ErrNoProvider) || !strings.Contains(err.Error(), addr) {
		t.Errorf("nothing listening: %v", err)
	}

	p = must(New(Respond("replay", func(context.Context, Request, int) (string, error) { return "", nil })))
	if _, err := p.ListModels(ctx); !errors.Is(err, ErrNoListing) {
		t.Errorf("responder: %v", err)
	}

	// The key goes in a header, never in a URL an error could print.
	p = must(New(ModelSpec("googleai"), Getenv(mapEnv(map[string]string{"GOOGLEAI_BASE_URL": "http://" + addr + "/v1beta/openai", "GOOGLE_API_KEY": "g-secret"})), SystemInfo(testSystem())))
	if _, err := p.ListModels(ctx); err == nil || strings.Contains(err.Error(), "g-secret") {
		t.Errorf("google error shows the key or is nil: %v", err)
	}
}

func TestHasModel(t *testing.T) {
	ms := []ModelInfo{{ID: "llama3.2:latest"}, {ID: "qwen2.5-coder:7b"}}
	for _, tt := range []struct {
		provider, id string
		want         bool
	}{
		{"ollama", "llama3.2", true},
		{"ollama", "llama3.2:latest", true},
		{"ollama", "qwen2.5-coder", false},
		{"ollama", "qwen2.5-coder:7b", true},
		{"openai", "llama3.2", false},
	} {
		if got := HasModel(ms, tt.provider, tt.id); got != tt.want {
			t.Errorf("HasModel(%s, %s) = %v", tt.provider, tt.id, got)
		}
	}
}
