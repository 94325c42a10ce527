package planner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// pastRequests is a small memory of accepted requests used by the tables.
var pastRequests = []Record{
	{Prompt: "move every invoice from 2025 into one folder", Script: "mkdir -p invoices-2025 && mv -- *invoice*2025* invoices-2025/"},
	{Prompt: "rename all .jpeg files to .jpg", Script: `for f in *.jpeg; do mv -- "$f" "${f%.jpeg}.jpg"; done`},
	{Prompt: "delete log files older than 30 days", Script: "find . -name '*.log' -mtime +30 -delete"},
	{Prompt: "count lines of code in the go files", Script: "find . -name '*.go' -exec cat {} + | wc -l"},
	{Prompt: "compress the photos folder into a tarball", Script: "tar czf photos.tar.gz photos"},
	{Prompt: "show the ten largest files here", Script: "du -ah . | sort -rh | head -n 10"},
	{Prompt: "find duplicate photos by checksum", Script: "find photos -type f -exec md5sum {} + | sort | uniq -w32 -D"},
	{Prompt: "convert every png image to jpg", Script: `for f in *.png; do convert "$f" "${f%.png}.jpg"; done`},
}

func TestMemorySearch(t *testing.T) {
	m := NewMemory()
	for _, r := range pastRequests {
		if err := m.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		query string
		k     int
		want  []string // prompts, best first
	}{
		{"put the invoices from 2025 in a folder", 1, []string{"move every invoice from 2025 into one folder"}},
		{"rename the .jpeg pictures to .jpg", 1, []string{"rename all .jpeg files to .jpg"}},
		{"remove old log files", 1, []string{"delete log files older than 30 days"}},
		{"how many lines of go code are there", 1, []string{"count lines of code in the go files"}},
		{"make a tarball of the music folder", 1, []string{"compress the photos folder into a tarball"}},
		{"photos", 2, []string{"find duplicate photos by checksum", "compress the photos folder into a tarball"}},
		{"which files are the largest", 1, []string{"show the ten largest files here"}},
		{"convert png images", 1, []string{"convert every png image to jpg"}},
		{"what is the weather in Paris", 3, nil}, // nothing shared: no examples
		{"the and of", 3, nil},                   // only stop words
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			var got []string
			for _, mt := range m.Search(tt.query, tt.k) {
				got = append(got, mt.Prompt)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Search(%q) (-want +got):\n%s", tt.query, diff)
			}
		})
	}
}

func TestMemoryDedupAndNewest(t *testing.T) {
	m := NewMemory()
	for i := range 3 {
		if err := m.Add(Record{Prompt: "List PDFs", Script: "ls *.pdf", Outcome: fmt.Sprint("run ", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Add(Record{Prompt: "list pdfs", Script: "ls -1 *.pdf"}); err != nil {
		t.Fatal(err)
	}
	got := m.Search("list the pdfs", 5)
	if len(got) != 2 {
		t.Fatalf("got %d matches, want 2 (same prompt and script appear once): %+v", len(got), got)
	}
	if got[0].Script != "ls -1 *.pdf" || got[1].Outcome != "run 2" {
		t.Errorf("want newest first and newest of the duplicates, got %+v", got)
	}
}

func TestMemoryPersistence(t *testing.T) {
	dir := t.TempDir()
	m, err := OpenMemory(dir)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	for _, r := range pastRequests[:3] {
		r.Time = at
		r.Cwd = "/home/alice"
		r.Outcome = "committed"
		if err := m.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Add(Record{Prompt: "", Script: "ls"}); err == nil {
		t.Error("Add with an empty prompt succeeded")
	}
	// A crash in the middle of a write leaves a torn last line.
	f, err := os.OpenFile(filepath.Join(dir, MemoryFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"time":"2026-11-20T10:00:00Z","prompt":"half`)
	f.Close()

	m2, err := OpenMemory(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(m.List(), m2.List()); diff != "" {
		t.Errorf("reloaded memory differs (-want +got):\n%s", diff)
	}
	if got := m2.Search("delete old logs", 1); len(got) != 1 || !strings.Contains(got[0].Script, "-delete") {
		t.Errorf("reloaded search = %+v", got)
	}
	if err := m2.Clear(); err != nil {
		t.Fatal(err)
	}
	m3, err := OpenMemory(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m2.Len() != 0 || m3.Len() != 0 || len(m3.Search("logs", 3)) != 0 {
		t.Errorf("after Clear: %d and %d records", m2.Len(), m3.Len())
	}
	if err := m3.Add(pastRequests[0]); err != nil {
		t.Fatal(err)
	}
	if m3.Len() != 1 {
		t.Errorf("Add after Clear: %d records", m3.Len())
	}
}

// TestPlanUsesMemoryAndCommands checks what goes into the prompt: the
// relevant past requests as examples, and nash's own commands only when
// the request calls for them.
func TestPlanUsesMemoryAndCommands(t *testing.T) {
	m := NewMemory()
	for _, r := range pastRequests {
		if err := m.Add(r); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		prompt       string
		wantExamples []string
		wantCommands []string
	}{
		// Grouping files into a folder is what nash group does (issue 7).
		{"put the 2025 invoices into one folder", []string{"move every invoice from 2025 into one folder"}, []string{"nash group ARGS"}},
		{"undo the rename of the jpeg files", []string{"rename all .jpeg files to .jpg"}, []string{"nash undo ARGS"}},
		{"find the documents that talk about the lease", nil, []string{"nash find ARGS"}},
		{"what changed yesterday?", nil, []string{"nash log ARGS"}},
		// Shares one rare word ("show") of three: weak, but above the
		// cover threshold, unlike one common word ("files") below.
		{"show transaction 12 in detail", []string{"show the ten largest files here"}, []string{"nash show ARGS"}},
		{"list hidden files", nil, nil}, // shares only "files": too weak to be an example
	}
	for _, tt := range tests {
		t.Run(tt.prompt, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			fake := &scriptedLLM{answers: []string{answerJSON("true", "ok")}}
			p := must(New(LLM(fake, "fake"), UseMemory(m), SystemInfo(testSystem()), Commands(triggerCommands())))
			a, err := p.Plan(ctx, Request{Prompt: tt.prompt})
			if err != nil {
				t.Fatal(err)
			}
			var ex, cmds []string
			for _, r := range a.Examples {
				ex = append(ex, r.Prompt)
			}
			for _, c := range a.Commands {
				cmds = append(cmds, c.Usage)
			}
			if diff := cmp.Diff(tt.wantExamples, ex); diff != "" {
				t.Errorf("examples (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantCommands, cmds); diff != "" {
				t.Errorf("commands (-want +got):\n%s", diff)
			}
			sent := fake.lastUser()
			for _, e := range ex {
				if !strings.Contains(sent, e) {
					t.Errorf("example %q not in the prompt", e)
				}
			}
			if strings.Contains(sent, "nash undo") != contains(cmds, "nash undo ARGS") {
				t.Errorf("nash undo in prompt = %v, want %v", strings.Contains(sent, "nash undo"), !strings.Contains(sent, "nash undo"))
			}
		})
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// writeRecords writes records to a memory file in one go, for benchmarks.
func writeRecords(path string, rs []Record) error {
	var b strings.Builder
	for _, r := range rs {
		line, err := json.Marshal(r)
		if err != nil {
			return err
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return os.WriteFile(path, []byte(b.String()), 0o600)
}

// TestMemoryShared: two nash processes share one memory file; each sees
// what the other adds and clears, and a torn line from a crash does not
// swallow the next record.
func TestMemoryShared(t *testing.T) {
	dir := t.TempDir()
	a, err := OpenMemory(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := OpenMemory(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Add(pastRequests[0]); err != nil {
		t.Fatal(err)
	}
	if got := b.Search("invoices from 2025", 1); len(got) != 1 || got[0].Prompt != pastRequests[0].Prompt {
		t.Errorf("b does not see a's record: %+v", got)
	}
	if err := b.Add(pastRequests[1]); err != nil {
		t.Fatal(err)
	}
	if a.Len() != 2 || b.Len() != 2 {
		t.Errorf("Len = %d and %d, want 2", a.Len(), b.Len())
	}

	// A crash leaves half a line; the next Add must still be whole.
	f, err := os.OpenFile(filepath.Join(dir, MemoryFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"prompt":"torn`)
	f.Close()
	if err := a.Add(pastRequests[2]); err != nil {
		t.Fatal(err)
	}
	c, err := OpenMemory(dir)
	if err != nil {
		t.Fatal(err)
	}
	var prompts []string
	for _, r := range c.List() {
		prompts = append(prompts, r.Prompt)
	}
	want := []string{pastRequests[0].Prompt, pastRequests[1].Prompt, pastRequests[2].Prompt}
	if diff := cmp.Diff(want, prompts); diff != "" {
		t.Errorf("records after a torn line (-want +got):\n%s", diff)
	}

	if err := b.Clear(); err != nil {
		t.Fatal(err)
	}
	if n := a.Len(); n != 0 {
		t.Errorf("a still has %d records after b cleared", n)
	}
	if err := a.Add(pastRequests[3]); err != nil {
		t.Fatal(err)
	}
	if got := b.List(); len(got) != 1 || got[0].Prompt != pastRequests[3].Prompt {
		t.Errorf("b after a's Add following Clear: %+v", got)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "*.tmp"))
	if len(matches) != 0 {
		t.Errorf("Clear left temp files: %v", matches)
	}
}

// TestPlanConcurrently: plans and remembers from many goroutines at once,
// as an eval run or two shells do; run with -race.
func TestPlanConcurrently(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	m, err := OpenMemory(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	p := must(New(Respond("echo", func(_ context.Context, req Request, _ int) (string, error) {
		return answerJSON("echo "+strings.Fields(req.Prompt)[0], "ok"), nil
	}), UseMemory(m), SystemInfo(testSystem())))
	const n = 8
	errs := make(chan error, n)
	for i := range n {
		go func() {
			prompt := fmt.Sprintf("request%d about files", i)
			a, err := p.Plan(ctx, Request{Prompt: prompt})
			if err == nil && a.Script != fmt.Sprintf("echo request%d", i) {
				err = fmt.Errorf("plan %d got %q", i, a.Script)
			}
			if err == nil {
				err = p.Remember(Record{Prompt: prompt, Script: a.Script, Outcome: "committed"})
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if m.Len() != n {
		t.Errorf("memory has %d records, want %d", m.Len(), n)
	}
}
