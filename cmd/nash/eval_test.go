package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/nash-shell/nash/internal/intercode"
	"github.com/nash-shell/nash/planner"
)

// replayOpts returns planner options that answer each InterCode-ALFA query
// with answer(task).
func replayOpts(t *testing.T, data string, answer func(intercode.Task) string) []planner.Option {
	t.Helper()
	tasks, err := intercode.Load(data)
	if err != nil {
		t.Fatal(err)
	}
	byQuery := map[string]intercode.Task{}
	for _, tk := range tasks {
		byQuery[tk.Query] = tk
	}
	return []planner.Option{planner.Respond("replay", func(_ context.Context, req planner.Request, _ int) (string, error) {
		tk, ok := byQuery[req.Prompt]
		if !ok {
			t.Errorf("replay: unknown query %q", req.Prompt)
			return "", nil
		}
		b, err := json.Marshal(map[string]string{"script": answer(tk), "explanation": "replayed"})
		return string(b), err
	})}
}

// TestEvalInterCodeJSON runs the first tasks with a replay that answers
// the gold command for even-numbered tasks and `true` for odd ones, and
// checks the verdicts and the scores that --json prints.
func TestEvalInterCodeJSON(t *testing.T) {
	data := dataDir(t, "intercode-alfa")
	answer := func(tk intercode.Task) string {
		if tk.Index%2 == 0 {
			return tk.Gold
		}
		return "true"
	}
	var out, errb bytes.Buffer
	o := evalOptions{data: data, json: true, limit: 6, workDir: t.TempDir(), plannerOpts: replayOpts(t, data, answer)}
	if err := runEvalInterCode(context.Background(), o, stdio{in: strings.NewReader(""), out: &out, err: &errb}); err != nil {
		t.Fatalf("eval: %v\n%s", err, errb.String())
	}
	var res evalJSON
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out.String())
	}
	if res.Benchmark != "intercode-alfa" || res.Model != "replay" || res.Judge != "similar" || len(res.Tasks) != 6 {
		t.Fatalf("benchmark %q, model %q, judge %q, %d tasks; want intercode-alfa, replay, similar, 6", res.Benchmark, res.Model, res.Judge, len(res.Tasks))
	}
	verdict := map[string]bool{}
	correct := 0
	for _, tr := range res.Tasks {
		verdict[tr.ID] = tr.Correct
		if tr.Correct {
			correct++
		}
	}
	// fs1/0 "ls" answered with "ls"; fs1/1 "ls -a", fs1/3 cp and fs1/5
	// mkdir answered with "true". (fs1/2 is lsof: its output varies.)
	for id, want := range map[string]bool{"fs1/0": true, "fs1/1": false, "fs1/3": false, "fs1/4": true, "fs1/5": false} {
		if got, ok := verdict[id]; !ok || got != want {
			t.Errorf("%s: correct = %v (present %v), want %v", id, got, ok, want)
		}
	}
	if res.Overall.Total != 6 || res.Overall.Correct != correct {
		t.Errorf("overall %+v, want %d/6", res.Overall, correct)
	}
	sum := 0
	for _, d := range res.ByDifficulty {
		sum += d.Total
		if d.Difficulty == nil || d.Name == "" {
			t.Errorf("difficulty score without level or name: %+v", d)
		}
	}
	if sum != 6 {
		t.Errorf("per-difficulty totals add up to %d, want 6", sum)
	}
	for _, want := range []string{"[1/6] fs1/0   ok", "[2/6] fs1/1   WRONG", "[6/6] fs1/5"} {
		if !strings.Contains(errb.String(), want) {
			t.Errorf("progress on stderr lacks %q:\n%s", want, errb.String())
		}
	}
}

// TestEvalInterCodeText checks the plain report, and --judge: the second
// gold commands of the first two tasks (ls -l for ls, ls -alh for ls -a)
// are right for the similar judge, wrong for the exact one.
func TestEvalInterCodeText(t *testing.T) {
	data := dataDir(t, "intercode-alfa")
	for _, tt := range []struct {
		judge, score string
	}{
		{"", "100.0%  (2/2)"},
		{"similar", "100.0%  (2/2)"},
		{"exact", "0.0%  (0/2)"},
	} {
		var out, errb bytes.Buffer
		o := evalOptions{data: data, limit: 2, workDir: t.TempDir(), judge: tt.judge,
			plannerOpts: replayOpts(t, data, func(tk intercode.Task) string { return tk.Gold2 })}
		if err := runEvalInterCode(context.Background(), o, stdio{in: strings.NewReader(""), out: &out, err: &errb}); err != nil {
			t.Fatalf("eval --judge %q: %v\n%s", tt.judge, err, errb.String())
		}
		name := cmp.Or(tt.judge, "similar")
		for _, want := range []string{"InterCode-ALFA, model replay, judge " + name, "overall", tt.score, "easy (0)"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("--judge %q: report lacks %q:\n%s", tt.judge, want, out.String())
			}
		}
		if !strings.Contains(errb.String(), "judge "+name) {
			t.Errorf("--judge %q: stderr does not name the judge:\n%s", tt.judge, errb.String())
		}
	}
}

// TestEvalJudgeModel: --judge model asks the configured model, over the
// OpenAI chat-completions protocol, about each pair of outputs that
// differ once the file changes match, and follows its verdict.
func TestEvalJudgeModel(t *testing.T) {
	data := dataDir(t, "intercode-alfa")
	for _, tt := range []struct {
		verdict string
		correct bool
	}{
		{`{"equivalent": true, "reason": "both list the files"}`, true},
		{`{"equivalent": false, "reason": "the listing has other columns"}`, false},
	} {
		var mu sync.Mutex
		var asked []string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			asked = append(asked, string(b))
			mu.Unlock()
			content, _ := json.Marshal(tt.verdict)
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1763633551,"model":"judge",`+
				`"choices":[{"index":0,"message":{"role":"assistant","content":`+string(content)+`},"finish_reason":"stop"}]}`)
		}))
		env := map[string]string{"OPENAI_BASE_URL": srv.URL + "/v1", "OPENAI_API_KEY": "sk-test"}
		var out, errb bytes.Buffer
		o := evalOptions{data: data, limit: 2, json: true, workDir: t.TempDir(), judge: "model", judgeModel: "openai:judge",
			getenv:      func(k string) string { return env[k] },
			plannerOpts: replayOpts(t, data, func(tk intercode.Task) string { return tk.Gold2 })}
		err := runEvalInterCode(context.Background(), o, stdio{in: strings.NewReader(""), out: &out, err: &errb})
		srv.Close()
		if err != nil {
			t.Fatalf("eval: %v\n%s", err, errb.String())
		}
		var res evalJSON
		if err := json.Unmarshal(out.Bytes(), &res); err != nil {
			t.Fatalf("--json output: %v\n%s", err, out.String())
		}
		if res.Judge != "model openai:judge" || len(res.Tasks) != 2 {
			t.Fatalf("judge %q, %d tasks; want model openai:judge, 2", res.Judge, len(res.Tasks))
		}
		for _, tr := range res.Tasks {
			if tr.Correct != tt.correct {
				t.Errorf("verdict %s: %s correct %v, reason %q", tt.verdict, tr.ID, tr.Correct, tr.Reason)
			}
			if !tt.correct && !strings.Contains(tr.Reason, "the listing has other columns") {
				t.Errorf("%s: reason %q lacks the model's", tr.ID, tr.Reason)
			}
		}
		if len(asked) != 2 {
			t.Fatalf("the judge model was asked %d times, want 2", len(asked))
		}
		for _, want := range []string{"list files in the current directory", `Reference command: ls\n`, "Predicted command: ls -l", "setup_nl2b_fs_1.sh"} {
			if !strings.Contains(asked[0], want) {
				t.Errorf("the first question lacks %q:\n%s", want, asked[0])
			}
		}
	}
}

// TestEvalNoProvider: with no model answering, nash eval prints the
// planner's setup help and exits with the planner's code, no stack trace;
// a model naming an unknown provider is a usage error.
func TestEvalNoProvider(t *testing.T) {
	data, err := filepath.Abs(dataDir(t, "intercode-alfa")) // nash runs elsewhere
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	tests := []struct {
		name string
		args []string
		env  []string
		code int
	}{
		{"refused", []string{"--model", "ollama:qwen2.5-coder:7b"}, []string{"OLLAMA_HOST=http://" + closed}, exitPlanner},
		{"default model from NASH_MODEL", nil, []string{"NASH_MODEL=ollama", "OLLAMA_HOST=http://" + closed}, exitPlanner},
		{"unknown provider", []string{"--model", "nosuch:model"}, nil, exitUsage},
		{"missing key", []string{"--model", "openai:gpt-4o-mini"}, []string{"OPENAI_API_KEY=", "OPENAI_BASE_URL="}, exitPlanner},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := newNash(t, t.TempDir())
			n.env = append([]string{"TMPDIR=" + t.TempDir()}, tt.env...)
			args := append([]string{"eval", "intercode-alfa", "--data", data, "--limit", "3"}, tt.args...)
			out, errOut, code := n.run("", args...)
			if code != tt.code {
				t.Errorf("exit code %d, want %d; stdout %q; stderr %q", code, tt.code, out, errOut)
			}
			if !strings.Contains(errOut, "set up a model provider") {
				t.Errorf("stderr lacks the setup help: %q", errOut)
			}
			if strings.Contains(errOut, "goroutine ") || strings.Contains(errOut, "panic") {
				t.Errorf("stderr has a stack trace: %q", errOut)
			}
			if out != "" {
				t.Errorf("stdout %q, want nothing", out)
			}
		})
	}
}

// TestEvalUsage: bad command lines exit 2.
func TestEvalUsage(t *testing.T) {
	for _, args := range [][]string{
		{"eval"},
		{"eval", "nosuch-benchmark"},
		{"eval", "intercode-alfa"},
		{"eval", "intercode-alfa", "--data", "x", "--limit", "-1"},
		{"eval", "intercode-alfa", "--nosuchflag"},
		{"eval", "intercode-alfa", "--data", "x", "--judge", "nosuch"},
	} {
		var out, errb bytes.Buffer
		if code := run(context.Background(), args, stdio{in: strings.NewReader(""), out: &out, err: &errb}, os.LookupEnv); code != exitUsage {
			t.Errorf("nash %v: exit %d, want %d; stderr %q", args, code, exitUsage, errb.String())
		}
	}
}
