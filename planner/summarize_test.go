package planner

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestSummarize(t *testing.T) {
	tests := []struct {
		name, answer, want string
	}{
		{"plain", "Moved the three tax receipts into taxes/.", "Moved the three tax receipts into taxes/."},
		{"lines joined", "Moved receipts.\n\nRemoved  the old folder.\n", "Moved receipts. Removed the old folder."},
		{"json", `{"summary": "Joined b.txt onto a.txt."}`, "Joined b.txt onto a.txt."},
		{"fenced", "```\nAppended notes.\n```", "Appended notes."},
		{"label and quotes", `Summary: "Renamed x to y."`, "Renamed x to y."},
		{"escape sequence", "Changed \x1b[2Jthe file.", `Changed \x1b[2Jthe file.`},
		{"bidi control", "Renamed \u202egnp.exe", `Renamed \u202egnp.exe`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &scriptedLLM{answers: []string{tt.answer}}
			p, err := New(LLM(m, "test"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.Summarize(context.Background(), "created /w/a.txt\n--- a\n+++ b\n")
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("Summarize = %q, want %q", got, tt.want)
			}
			if !strings.Contains(m.lastUser(), "created /w/a.txt") {
				t.Errorf("the diff was not sent: %q", m.lastUser())
			}
		})
	}
}

// TestSummarizeBounds checks that a large diff is cut before it is sent,
// at a line, and that a long answer is cut to SummaryMaxBytes.
func TestSummarizeBounds(t *testing.T) {
	m := &scriptedLLM{answers: []string{strings.Repeat("word ", 500)}}
	p, err := New(LLM(m, "test"))
	if err != nil {
		t.Fatal(err)
	}
	diff := strings.Repeat("+a line of the diff\n", 5000) // ~95 KB
	got, err := p.Summarize(context.Background(), diff)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) > SummaryMaxBytes || !strings.HasSuffix(got, "…") {
		t.Errorf("summary of %d bytes, want at most %d ending in …", len(got), SummaryMaxBytes)
	}
	sent := m.lastUser()
	if len(sent) > SummaryInputBytes+200 {
		t.Errorf("sent %d bytes of diff, limit %d", len(sent), SummaryInputBytes)
	}
	if !strings.Contains(sent, "(cut: ") || !strings.Contains(sent, "+a line of the diff\n(cut") {
		t.Errorf("diff not cut at a line with a note: ...%q", sent[max(0, len(sent)-80):])
	}
}

func TestSummarizeErrors(t *testing.T) {
	p, err := New(LLM(&scriptedLLM{answers: []string{"   \n"}}, "test"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Summarize(context.Background(), "modified /w/a\n"); !errors.Is(err, ErrEmptyAnswer) {
		t.Errorf("empty answer: %v, want ErrEmptyAnswer", err)
	}
	if _, err := p.Summarize(context.Background(), " \n"); err == nil {
		t.Error("an empty diff was summarized")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Summarize(ctx, "modified /w/a\n"); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v, want context.Canceled", err)
	}
}
