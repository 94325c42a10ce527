package planner

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestRespond(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	gold := map[string]string{
		"count the files here": "ls | wc -l",
		"show disk usage":      "du -sh .",
	}
	var seen []int
	p := must(New(Respond("replay", func(_ context.Context, req Request, attempt int) (string, error) {
		seen = append(seen, attempt)
		if req.Prompt == "show disk usage" && attempt == 0 {
			return "```bash\ndu -sh . |\n```", nil // does not parse: repaired
		}
		cmd, ok := gold[req.Prompt]
		if !ok {
			return "", errors.New("no recorded answer")
		}
		return "```bash\n" + cmd + "\n```", nil
	}), SystemInfo(testSystem())))
	for prompt, want := range gold {
		seen = nil
		a, err := p.Plan(ctx, Request{Prompt: prompt, Cwd: t.TempDir()})
		if err != nil {
			t.Fatalf("%s: %v", prompt, err)
		}
		if a.Script != want || a.Model != "replay" || a.Report == nil {
			t.Errorf("%s: got %q from %s, report %v", prompt, a.Script, a.Model, a.Report)
		}
		wantAttempts := 1
		if prompt == "show disk usage" {
			wantAttempts = 2
		}
		if len(seen) != wantAttempts || seen[len(seen)-1] != wantAttempts-1 {
			t.Errorf("%s: attempts seen %v", prompt, seen)
		}
	}
	if _, err := p.Plan(ctx, Request{Prompt: "unknown"}); err == nil {
		t.Error("a responder error did not fail the plan")
	}
}
