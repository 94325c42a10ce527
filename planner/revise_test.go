package planner

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/nash-shell/nash/effects"
)

func TestUnifiedDiff(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want string
	}{
		{"equal", "ls\n", "ls\n", ""},
		{"one line changed", "ls\n", "ls -la\n", "--- a\n+++ b\n@@ -1 +1 @@\n-ls\n+ls -la\n"},
		{"line added at end", "a\nb\n", "a\nb\nc\n", "--- a\n+++ b\n@@ -1,2 +1,3 @@\n a\n b\n+c\n"},
		{"from empty", "", "echo hi", "--- a\n+++ b\n@@ -0,0 +1 @@\n+echo hi\n"},
		{"to empty", "echo hi", "", "--- a\n+++ b\n@@ -1 +0,0 @@\n-echo hi\n"},
		{
			"two hunks",
			"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n",
			"1\nTWO\n3\n4\n5\n6\n7\n8\n9\n10\nELEVEN\n12\n",
			"--- a\n+++ b\n@@ -1,5 +1,5 @@\n 1\n-2\n+TWO\n 3\n 4\n 5\n@@ -8,5 +8,5 @@\n 8\n 9\n 10\n-11\n+ELEVEN\n 12\n",
		},
		{
			"close changes share a hunk",
			"a\nb\nc\nd\ne\n",
			"a\nB\nc\nD\ne\n",
			"--- a\n+++ b\n@@ -1,5 +1,5 @@\n a\n-b\n+B\n c\n-d\n+D\n e\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := UnifiedDiff("a", "b", tt.a, tt.b)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestRevise(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	prev := "mkdir -p out\nmv *.jpeg out/\necho done"
	next := "mkdir -p out\nmv *.jpeg *.jpg out/\necho done"
	fake := &scriptedLLM{answers: []string{answerJSON(next, "Also moves .jpg files.")}}
	p := must(New(LLM(fake, "fake"), SystemInfo(testSystem())))
	a, err := p.Revise(ctx, Request{Prompt: "move the photos into out"}, prev, "also the .jpg ones")
	if err != nil {
		t.Fatal(err)
	}
	if a.Script != next || a.Previous != prev {
		t.Errorf("Revise = %q from %q", a.Script, a.Previous)
	}
	wantDiff := "--- a/script\n+++ b/script\n@@ -1,3 +1,3 @@\n mkdir -p out\n-mv *.jpeg out/\n+mv *.jpeg *.jpg out/\n echo done\n"
	if diff := cmp.Diff(wantDiff, a.Diff); diff != "" {
		t.Errorf("diff (-want +got):\n%s", diff)
	}
	sent := fake.lastUser()
	for _, want := range []string{"mv *.jpeg out/", "also the .jpg ones", "changing as little as needed"} {
		if !strings.Contains(sent, want) {
			t.Errorf("revise prompt lacks %q", want)
		}
	}
	if _, err := p.Revise(ctx, Request{Prompt: "x"}, prev, "  "); err == nil {
		t.Error("Revise with empty feedback succeeded")
	}
}

func TestExplain(t *testing.T) {
	tests := []struct {
		name   string
		answer string
		want   *Explanation
	}{
		{
			"json steps",
			`{"summary":"Archives src.","steps":[{"code":"tar czf a.tgz src","explanation":"packs src"}],"warnings":["overwrites a.tgz"]}`,
			&Explanation{Summary: "Archives src.", Steps: []Step{{Code: "tar czf a.tgz src", Explanation: "packs src"}}, Warnings: []string{"overwrites a.tgz"}},
		},
		{
			"prose fallback",
			"It packs the src folder into a.tgz.",
			&Explanation{Summary: "It packs the src folder into a.tgz."},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			fake := &scriptedLLM{answers: []string{tt.answer}}
			p := must(New(LLM(fake, "fake"), SystemInfo(testSystem())))
			got, err := p.Explain(ctx, Request{Cwd: "/home/alice/proj"}, "tar czf a.tgz src > log.txt\nrm -r src")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(Explanation{}, "Report", "Usage")); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if got.Report == nil || got.Report.Risk != effects.Deletes {
				t.Errorf("explanation not grounded in a report with risk deletes: %+v", got.Report)
			}
			sent := fake.lastUser()
			for _, want := range []string{"Risk: deletes", "line 2: rm -r src", "delete /home/alice/proj/src by rm (recursive)", "write /home/alice/proj/log.txt"} {
				if !strings.Contains(sent, want) {
					t.Errorf("explain prompt lacks grounding %q:\n%s", want, sent)
				}
			}
		})
	}
	p := must(New(LLM(&scriptedLLM{answers: []string{"x"}}, "fake"), SystemInfo(testSystem())))
	if _, err := p.Explain(context.Background(), Request{}, "if then fi"); err == nil {
		t.Error("Explain of a script that does not parse succeeded")
	}
}
