package planner

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkPlanOverhead measures what the planner adds to a request, model
// time excluded (the model is an in-process fake that answers at once):
// context gathering with a 40-file listing and session history, memory
// search over 10,000 remembered requests, prompt assembly, answer parsing
// and the bash syntax check. It reports the prompt's estimated tokens.
func BenchmarkPlanOverhead(b *testing.B) {
	_, src, dir := typicalSetup(b, 10000)
	// The memory is file-backed, as in nash, so each plan also pays for
	// the check for other processes' additions.
	stateDir := b.TempDir()
	if err := writeRecords(filepath.Join(stateDir, MemoryFile), src.List()); err != nil {
		b.Fatal(err)
	}
	m, err := OpenMemory(stateDir)
	if err != nil || m.Len() != 10000 {
		b.Fatalf("OpenMemory: %v", err)
	}
	fake := &scriptedLLM{answers: []string{answerJSON(goodScript, "Moves the invoices.")}}
	p, err := New(LLM(fake, "fake"), UseMemory(m), SystemInfo(testSystem()))
	if err != nil {
		b.Fatal(err)
	}
	req := typicalRequest(dir)
	ctx := context.Background()
	var a *Artifact
	b.ResetTimer()
	for b.Loop() {
		var err error
		a, err = p.Plan(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(a.Prompt.Total), "prompt-tokens")
	b.ReportMetric(float64(a.Prompt.Fixed), "fixed-tokens")
}

// BenchmarkMemorySearch measures choosing examples among 10,000 requests.
func BenchmarkMemorySearch(b *testing.B) {
	_, m, _ := typicalSetup(b, 10000)
	for b.Loop() {
		if len(m.Search("move every invoice from 2025 into one folder", 3)) == 0 {
			b.Fatal("no match")
		}
	}
}

// BenchmarkOpenMemory measures loading 10,000 requests from disk.
func BenchmarkOpenMemory(b *testing.B) {
	_, src, _ := typicalSetup(b, 10000)
	dir := b.TempDir()
	// Write the records directly: 10,000 fsyncs would dominate setup.
	if err := writeRecords(filepath.Join(dir, MemoryFile), src.List()); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		m, err := OpenMemory(dir)
		if err != nil || m.Len() != 10000 {
			b.Fatalf("OpenMemory: %d records, %v", m.Len(), err)
		}
	}
}

// BenchmarkPartialAnswer measures reading a 2 kB answer still arriving,
// what a display pays each time it draws.
func BenchmarkPartialAnswer(b *testing.B) {
	full := answerJSON(strings.Repeat("find . -name '*.log' -mtime +7 -print -delete\n", 40), "Deletes old logs.")
	half := full[:len(full)/2]
	for b.Loop() {
		if PartialAnswer(half).Script == "" {
			b.Fatal("no script")
		}
	}
}
