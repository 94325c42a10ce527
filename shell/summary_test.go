package shell

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nash-shell/nash/effects"
)

// fakeSummarizer records what it was asked and answers text or err.
type fakeSummarizer struct {
	text  string
	err   error
	calls []string
}

func (f *fakeSummarizer) summarize(_ context.Context, id string, cs *effects.ChangeSet) (string, error) {
	f.calls = append(f.calls, id)
	return f.text, f.err
}

func TestLineModeSummaryAfterCommit(t *testing.T) {
	for _, tt := range []struct {
		name string
		sum  *fakeSummarizer
		want string
	}{
		{"a summary", &fakeSummarizer{text: "Greeted in hi.txt\x1b[2J"}, `nash: summary: Greeted in hi.txt\x1b[2J`},
		{"a failing model", &fakeSummarizer{err: errors.New("model down")}, "nash: no change summary: model down"},
		{"no model configured", nil, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := &fakePlanner{script: "echo hi > hi.txt"}
			sb := &fakeSandbox{changes: []string{filepath.Join(dir, "hi.txt")}}
			cfg := Config{
				Planner: func(string) (Planner, error) { return p, nil },
				Open:    sb.open,
				Model:   "test:model",
				Dir:     dir,
				Env:     []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir},
				Home:    dir,
			}
			if tt.sum != nil {
				cfg.Summarize = tt.sum.summarize
			}
			var out, errw bytes.Buffer
			if err := OneShot(context.Background(), cfg, "greet me in a file", strings.NewReader(""), &out, &errw, LineOptions{Yes: true}); err != nil {
				t.Fatalf("one-shot: %v\n%s", err, errw.String())
			}
			got := errw.String()
			if tt.want == "" {
				if strings.Contains(got, "summary") {
					t.Errorf("no model configured, yet: %s", got)
				}
				return
			}
			if !strings.Contains(got, tt.want) || strings.Contains(got, "\x1b") {
				t.Errorf("stderr %q, want it to contain %q and no raw escape", got, tt.want)
			}
			if len(tt.sum.calls) != 1 || tt.sum.calls[0] == "" {
				t.Errorf("summarizer called with %q, want the one transaction", tt.sum.calls)
			}
		})
	}
}

func TestREPLSummaryAfterCommit(t *testing.T) {
	m := newTestModel(t, &fakePlanner{}, &fakeSandbox{})
	cs := &effects.ChangeSet{}
	if cmd := m.summarizeCmd("7", cs); cmd != nil {
		t.Fatal("no model configured, yet a summary command")
	}
	sum := &fakeSummarizer{text: "Added a greeting"}
	m.e.cfg.Summarize = sum.summarize
	cmd := m.summarizeCmd("7", cs)
	if cmd == nil {
		t.Fatal("no summary command with a model configured")
	}
	msg, ok := cmd().(summaryMsg)
	if !ok || msg.text != "Added a greeting" || len(sum.calls) != 1 || sum.calls[0] != "7" {
		t.Fatalf("summary message %+v, calls %q", msg, sum.calls)
	}
	if _, c := m.Update(msg); c == nil {
		t.Error("the summary is not shown")
	}
}
