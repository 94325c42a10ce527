package planner

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nash-shell/nash/effects"
)

const goodScript = `mkdir -p invoices/2025 && mv -- invoice-2025-*.pdf invoices/2025/`

// TestWireScenarios drives the real langchaingo clients against fake
// Ollama, OpenAI, Anthropic and Google AI servers with recorded envelopes.
// Every scenario ends with a script or a clear error, within a deadline.
func TestWireScenarios(t *testing.T) {
	good := answerJSON(goodScript, "Moves the 2025 invoices into invoices/2025.")
	broken := answerJSON("for f in *.pdf; do echo \"$f\"", "Lists PDFs.")
	_, brokenErr := check("for f in *.pdf; do echo \"$f\"", "", "")
	if brokenErr == nil {
		t.Fatal("test script unexpectedly parses")
	}
	huge := answerJSON("echo "+strings.Repeat("x", 2<<20), "huge")

	tests := []struct {
		name       string
		replies    []reply
		wantScript string
		wantQ      string
		wantErr    []error // each must match errors.Is
		wantAs     any     // a pointer to an error type errors.As must match
		wantCalls  int     // requests the server must have received
		wantWaits  []time.Duration
		check      func(t *testing.T, reqs []map[string]any)
		timeout    time.Duration // per model call; 0 means a generous 15 s
	}{
		{
			name:       "good answer",
			replies:    []reply{{content: good}},
			wantScript: goodScript,
			wantCalls:  1,
		},
		{
			name:       "JSON wrapped in prose",
			replies:    []reply{{content: "Sure! Here is what I would run:\n" + good + "\nLet me know if you need anything else."}},
			wantScript: goodScript,
			wantCalls:  1,
		},
		{
			name:       "JSON in a code fence",
			replies:    []reply{{content: "```json\n" + good + "\n```"}},
			wantScript: goodScript,
			wantCalls:  1,
		},
		{
			name:       "bare shell in a code fence",
			replies:    []reply{{content: "You can do it like this:\n```bash\n" + goodScript + "\n```\nThis creates the folder first."}},
			wantScript: goodScript,
			wantCalls:  1,
		},
		{
			name:       "invalid shell then fixed",
			replies:    []reply{{content: broken}, {content: good}},
			wantScript: goodScript,
			wantCalls:  2,
			check: func(t *testing.T, reqs []map[string]any) {
				second := messagesText(reqs[1])
				want := errors.Unwrap(brokenErr).Error()
				if !strings.Contains(second, want) {
					t.Errorf("second request does not carry the parse error %q", want)
				}
				if !strings.Contains(second, "for f in *.pdf") {
					t.Errorf("second request does not carry the previous answer")
				}
			},
		},
		{
			name:      "invalid shell three times",
			replies:   []reply{{content: broken}, {content: broken}, {content: broken}},
			wantErr:   []error{ErrNoScript},
			wantAs:    new(*ScriptError),
			wantCalls: 3,
		},
		{
			name:      "empty answer",
			replies:   []reply{{content: ""}, {content: ""}, {content: "  \n"}},
			wantErr:   []error{ErrNoScript, ErrEmptyAnswer},
			wantCalls: 3,
		},
		{
			name:       "empty answer then good",
			replies:    []reply{{content: ""}, {content: good}},
			wantScript: goodScript,
			wantCalls:  2,
		},
		{
			name:      "refusal",
			replies:   []reply{{content: "I'm sorry, but I can't help with deleting system files."}},
			wantAs:    new(*RefusalError),
			wantCalls: 1,
		},
		{
			name:      "clarifying question",
			replies:   []reply{{content: `{"script":"","explanation":"","needs_network":false,"question":"Which folder holds the invoices?"}`}},
			wantQ:     "Which folder holds the invoices?",
			wantCalls: 1,
		},
		{
			name:      "malformed JSON",
			replies:   []reply{{content: `{"script": "ls -la", "explanation": `}, {content: `{"script": 'ls'}`}, {content: `{"script": "ls`}},
			wantErr:   []error{ErrNoScript, ErrMalformedAnswer},
			wantCalls: 3,
		},
		{
			name:      "enormous answer",
			replies:   []reply{{content: huge}},
			wantErr:   []error{ErrAnswerTooLarge},
			wantCalls: 1,
		},
		{
			name: "429 with Retry-After",
			replies: []reply{
				{status: 429, header: map[string]string{"Retry-After": "7"}, body: `{"error":{"message":"rate limited"}}`},
				{content: good},
			},
			wantScript: goodScript,
			wantCalls:  2,
			wantWaits:  []time.Duration{7 * time.Second},
		},
		{
			name:      "429 asking for longer than we wait",
			replies:   []reply{{status: 429, header: map[string]string{"Retry-After": "3600"}, body: `{"error":{"message":"quota"}}`}},
			wantAs:    new(*StatusError),
			wantCalls: 1,
		},
		{
			name:      "500 every time",
			replies:   []reply{{status: 500, body: `{"error":"boom"}`}, {status: 500, body: `{"error":"boom"}`}, {status: 502, body: "bad gateway"}},
			wantAs:    new(*StatusError),
			wantCalls: 3,
			wantWaits: []time.Duration{time.Second, 2 * time.Second},
		},
		{
			name:       "500 then good",
			replies:    []reply{{status: 500, body: `{"error":"boom"}`}, {content: good}},
			wantScript: goodScript,
			wantCalls:  2,
			wantWaits:  []time.Duration{time.Second},
		},
		{
			name:      "401 is not retried",
			replies:   []reply{{status: 401, body: `{"error":{"message":"invalid x-api-key"}}`}},
			wantAs:    new(*StatusError),
			wantCalls: 1,
		},
		{
			name:      "timeout",
			replies:   []reply{{hang: true}},
			wantErr:   []error{ErrTimeout, context.DeadlineExceeded},
			wantCalls: 1,
			timeout:   time.Second,
		},
	}
	for _, w := range wires() {
		for _, tt := range tests {
			t.Run(w.name+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				f := newFakeProvider(t, w, tt.replies...)
				sl := &fakeSleeper{}
				timeout := tt.timeout
				if timeout == 0 {
					timeout = 15 * time.Second
				}
				p := newWirePlanner(t, f, sl, Timeout(timeout))
				a, err := p.Plan(ctx, Request{Prompt: "put the 2025 invoices in one folder"})
				reqs := f.requests()
				if len(reqs) != tt.wantCalls {
					t.Errorf("server got %d requests, want %d", len(reqs), tt.wantCalls)
				}
				if diff := cmp.Diff(tt.wantWaits, sl.recorded()); diff != "" {
					t.Errorf("waits (-want +got):\n%s", diff)
				}
				if tt.check != nil && len(reqs) >= tt.wantCalls {
					tt.check(t, reqs)
				}
				if tt.wantErr != nil || tt.wantAs != nil {
					if err == nil {
						t.Fatalf("Plan = %+v, want an error", a)
					}
					for _, e := range tt.wantErr {
						if !errors.Is(err, e) {
							t.Errorf("error %q does not match %v", err, e)
						}
					}
					if tt.wantAs != nil && !errors.As(err, tt.wantAs) {
						t.Errorf("error %q (%T) is not %T", err, err, tt.wantAs)
					}
					if len(err.Error()) > 2000 {
						t.Errorf("error message is %d bytes; a clear error is short", len(err.Error()))
					}
					return
				}
				if err != nil {
					t.Fatalf("Plan: %v", err)
				}
				if a.Script != tt.wantScript || a.Question != tt.wantQ {
					t.Errorf("Plan = script %q question %q, want %q %q", a.Script, a.Question, tt.wantScript, tt.wantQ)
				}
				if last := tt.replies[len(tt.replies)-1]; a.Raw != last.content {
					t.Errorf("Raw = %q, want the last answer %q", clip(a.Raw, 80), clip(last.content, 80))
				}
				if (a.Report != nil) != (a.Script != "") {
					t.Errorf("Report = %v for script %q; every script carries its report", a.Report, a.Script)
				}
				if a.Attempts != tt.wantCalls-len(tt.wantWaits) {
					t.Errorf("Attempts = %d, want %d", a.Attempts, tt.wantCalls-len(tt.wantWaits))
				}
			})
		}
	}
}

// TestWireRequestShape checks what goes on the wire: JSON mode where the
// provider has one, the model name, and the context of the request.
func TestWireRequestShape(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"invoice-2025-01.pdf", "invoice-2024-12.pdf", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, w := range wires() {
		t.Run(w.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			f := newFakeProvider(t, w, reply{content: answerJSON(goodScript, "ok")})
			p := newWirePlanner(t, f, &fakeSleeper{})
			_, err := p.Plan(ctx, Request{
				Prompt:  "put the 2025 invoices in one folder",
				Cwd:     dir,
				History: []HistoryEntry{{Prompt: "show the pdfs", Script: "ls *.pdf", ExitCode: 0, Output: "invoice-2025-01.pdf"}},
			})
			if err != nil {
				t.Fatal(err)
			}
			body := f.requests()[0]
			if body["model"] != "test-model" {
				t.Errorf("model = %v, want test-model", body["model"])
			}
			switch w.name {
			case "ollama":
				if body["format"] != "json" {
					t.Errorf("ollama format = %v, want json", body["format"])
				}
			case "openai", "googleai":
				rf, _ := body["response_format"].(map[string]any)
				if rf["type"] != "json_object" {
					t.Errorf("response_format = %v, want json_object", body["response_format"])
				}
			}
			text := messagesText(body)
			for _, want := range []string{"Debian GNU/Linux 12", "invoice-2024-12.pdf", "ls *.pdf", "put the 2025 invoices", `"script"`} {
				if !strings.Contains(text, want) {
					t.Errorf("request lacks %q", want)
				}
			}
		})
	}
}

// TestConnectionRefused: with nothing listening, the error says how to set
// up a provider, and matches ErrNoProvider.
func TestConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	for _, w := range wires() {
		t.Run(w.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			sl := &fakeSleeper{}
			p, err := New(ModelSpec(w.name+":m"), Getenv(mapEnv(w.env("http://"+addr))), Sleeper(sl.sleep), SystemInfo(testSystem()))
			if err != nil {
				t.Fatal(err)
			}
			_, err = p.Plan(ctx, Request{Prompt: "list files"})
			if !errors.Is(err, ErrNoProvider) {
				t.Fatalf("err = %v, want ErrNoProvider", err)
			}
			var pe *ProviderError
			if !errors.As(err, &pe) || !strings.Contains(err.Error(), "ollama serve") || !strings.Contains(err.Error(), addr) {
				t.Errorf("error lacks setup help or address: %v", err)
			}
			if len(sl.recorded()) != 0 {
				t.Errorf("waited %v before failing; refused connections are not retried", sl.recorded())
			}
		})
	}
}

// TestCancel: cancelling the caller's context stops a hanging call at once
// and reports context.Canceled, not a timeout.
func TestCancel(t *testing.T) {
	w := wires()[1]
	f := newFakeProvider(t, w, reply{hang: true})
	p := newWirePlanner(t, f, &fakeSleeper{}, Timeout(time.Minute))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for len(f.requests()) == 0 {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	bound, stop := context.WithTimeout(ctx, 20*time.Second)
	defer stop()
	_, err := p.Plan(bound, Request{Prompt: "list files"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// TestDestructiveScriptIsOnlyReturned: a model that answers with a
// destructive script yields an artifact; the planner runs nothing.
func TestDestructiveScriptIsOnlyReturned(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "precious.txt")
	if err := os.WriteFile(victim, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	script := "rm -rf -- " + dir + " ~/"
	for _, w := range wires() {
		t.Run(w.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			f := newFakeProvider(t, w, reply{content: answerJSON(script, "Deletes everything.")})
			p := newWirePlanner(t, f, &fakeSleeper{})
			a, err := p.Plan(ctx, Request{Prompt: "clean up", Cwd: dir})
			if err != nil {
				t.Fatal(err)
			}
			if a.Script != script {
				t.Errorf("Script = %q, want %q", a.Script, script)
			}
			if a.Report == nil || a.Report.Risk < effects.Deletes {
				t.Fatalf("report does not mark the script destructive: %+v", a.Report)
			}
			deleted := a.Report.PathsWith(effects.Delete)
			if !slices.Contains(deleted, dir) || !slices.Contains(deleted, testSystem().Home) {
				t.Errorf("report deletes %q, want %s and the home directory", deleted, dir)
			}
			if b, err := os.ReadFile(victim); err != nil || string(b) != "keep me" {
				t.Errorf("file touched by planning: %q, %v", b, err)
			}
		})
	}
}

// TestJSONModeFallback: an OpenAI-compatible server that rejects
// response_format gets the request again without it, and no longer gets it.
func TestJSONModeFallback(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	good := reply{content: answerJSON(goodScript, "ok")}
	f := newFakeProvider(t, wires()[1],
		reply{status: 400, body: `{"error":{"message":"response_format is not supported"}}`}, good, good)
	p := newWirePlanner(t, f, &fakeSleeper{})
	for range 2 {
		a, err := p.Plan(ctx, Request{Prompt: "put the 2025 invoices in one folder"})
		if err != nil {
			t.Fatal(err)
		}
		if a.Script != goodScript {
			t.Errorf("Script = %q", a.Script)
		}
	}
	var got []bool
	for _, r := range f.requests() {
		_, has := r["response_format"]
		got = append(got, has)
	}
	if diff := cmp.Diff([]bool{true, false, false}, got); diff != "" {
		t.Errorf("response_format sent (-want +got):\n%s", diff)
	}
}

// TestOllamaModelNotPulled: Ollama's 404 for a missing model says how to
// pull it.
func TestOllamaModelNotPulled(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f := newFakeProvider(t, wires()[0], reply{status: 404, body: `{"error":"model \"test-model\" not found, try pulling it first"}`})
	p := newWirePlanner(t, f, &fakeSleeper{})
	_, err := p.Plan(ctx, Request{Prompt: "list files"})
	if !errors.Is(err, ErrNoProvider) || !strings.Contains(err.Error(), "ollama pull test-model") {
		t.Fatalf("err = %v, want ErrNoProvider with pull advice", err)
	}
}

func TestRequestLimits(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	fake := &scriptedLLM{answers: []string{answerJSON("ls", "ok")}}
	p := must(New(LLM(fake, "fake"), SystemInfo(testSystem()), TokenBudget(100), Timeout(0)))
	if _, err := p.Plan(ctx, Request{Prompt: "  "}); err == nil {
		t.Error("empty request planned")
	}
	if _, err := p.Plan(ctx, Request{Prompt: strings.Repeat("word ", 200)}); !errors.Is(err, ErrRequestTooLong) {
		t.Errorf("long request: err = %v, want ErrRequestTooLong", err)
	}
	if a, err := p.Plan(ctx, Request{Prompt: "list files"}); err != nil || a.Script != "ls" {
		t.Errorf("with Timeout(0): %+v, %v", a, err)
	}
	if len(fake.calls) != 1 {
		t.Errorf("model called %d times, want 1 (refused requests do not reach it)", len(fake.calls))
	}
}

// TestCancelDuringRetryWait: ctrl+c while waiting out a Retry-After stops
// the wait at once (the real Sleep is used here).
func TestCancelDuringRetryWait(t *testing.T) {
	w := wires()[1]
	f := newFakeProvider(t, w, reply{status: 429, header: map[string]string{"Retry-After": "25"}, body: "{}"})
	p, err := New(ModelSpec(w.name+":m"), Getenv(mapEnv(w.env(f.srv.URL))), SystemInfo(testSystem()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for len(f.requests()) == 0 {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	bound, stop := context.WithTimeout(ctx, 20*time.Second)
	defer stop()
	_, err = p.Plan(bound, Request{Prompt: "list files"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if n := len(f.requests()); n != 1 {
		t.Errorf("server got %d requests, want 1", n)
	}
}
