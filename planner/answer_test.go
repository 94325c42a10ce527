package planner

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const tarAnswer = "`tar -xzf a.tgz` **extracts** the gzip-compressed archive `a.tgz` into the current directory:\n\n" +
	"- `-x` extracts, `-z` decompresses with gzip, `-f` names the file.\n\n" +
	"To list what is inside first:\n\n```bash\ntar -tzf a.tgz\n```\n\n" +
	"A placeholder is not runnable as written:\n\n```bash\ntar -xzf <archive>\n```\n"

func answerOnly(markdown string) string {
	b, _ := json.Marshal(Answer{Markdown: markdown})
	return string(b)
}

// TestWireAnswer: with Answers on, a question gets a Markdown answer over
// every provider's real client, streamed; the commands quoted in it that
// parse are its Snippets; nothing in it is a script to run.
func TestWireAnswer(t *testing.T) {
	for _, w := range wires() {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			f := newFakeProvider(t, w, reply{content: answerOnly(tarAnswer)})
			p := newWirePlanner(t, f, &fakeSleeper{}, Answers(true))
			var log progressLog
			a, err := p.Plan(ctx, Request{Prompt: "what does tar -xzf do", Stream: log.add})
			if err != nil {
				t.Fatal(err)
			}
			if a.Kind() != KindAnswer || a.Script != "" || a.Report != nil {
				t.Fatalf("kind %v, script %q, report %v; want an answer and nothing to run", a.Kind(), a.Script, a.Report)
			}
			if a.Answer != strings.TrimSpace(tarAnswer) {
				t.Errorf("Answer = %q", a.Answer)
			}
			if diff := cmp.Diff([]Snippet{{Code: "tar -tzf a.tgz", Lang: "bash"}}, a.Snippets); diff != "" {
				t.Errorf("snippets (-want +got):\n%s", diff)
			}
			if !strings.Contains(messagesText(f.requests()[0]), `"answer"`) {
				t.Error("the instructions do not offer the model an answer")
			}
			// The display could show the answer while it arrived.
			var partial string
			for _, e := range log.all() {
				if e.Kind == TextArrived {
					if m := e.Partial().Markdown; len(m) > 0 && len(m) < len(a.Answer) {
						partial = m
					}
				}
			}
			if partial == "" || !strings.HasPrefix(a.Answer, partial) {
				t.Errorf("no partial answer shown while streaming (last %q)", partial)
			}
		})
	}
}

// TestAnswersOff: without Answers the instructions ask only for scripts,
// and an answer in prose is sent back for a script.
func TestAnswersOff(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	f := newFakeProvider(t, wires()[1], reply{content: answerOnly(tarAnswer)}, reply{content: answerJSON("tar -xzf a.tgz", "Extracts a.tgz.")})
	p := newWirePlanner(t, f, &fakeSleeper{})
	a, err := p.Plan(ctx, Request{Prompt: "what does tar -xzf a.tgz do"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Kind() != KindScript || a.Script != "tar -xzf a.tgz" || a.Answer != "" {
		t.Errorf("got %v %q %q, want the script of the second answer", a.Kind(), a.Script, a.Answer)
	}
	reqs := f.requests()
	if strings.Contains(messagesText(reqs[0]), `"answer"`) {
		t.Error("the instructions offer an answer though Answers is off")
	}
	if len(reqs) != 2 || !strings.Contains(messagesText(reqs[1]), "not an answer in prose") {
		t.Errorf("%d requests; the second does not ask for a script", len(reqs))
	}
}

func TestAnswerPrecedence(t *testing.T) {
	tests := []struct {
		raw  string
		want Answer
	}{
		{`{"script":"ls","answer":"It lists."}`, Answer{Script: "ls", Explanation: "It lists."}},
		{`{"script":"ls","explanation":"Lists.","answer":"It lists."}`, Answer{Script: "ls", Explanation: "Lists."}},
		{`{"script":"","answer":"Use ip addr.","question":"Which interface?"}`, Answer{Markdown: "Use ip addr."}},
		{`{"script":"","answer":"","question":"Which interface?"}`, Answer{Question: "Which interface?"}},
		{`{"markdown":"Use ip addr."}`, Answer{Markdown: "Use ip addr."}},
	}
	for _, tt := range tests {
		got, err := ParseAnswer(tt.raw)
		if err != nil {
			t.Errorf("ParseAnswer(%s): %v", tt.raw, err)
			continue
		}
		if got != tt.want {
			t.Errorf("ParseAnswer(%s) = %+v, want %+v", tt.raw, got, tt.want)
		}
	}
}

func TestSnippets(t *testing.T) {
	tests := []struct {
		name, md string
		want     []Snippet
	}{
		{"none", "Just prose, `ls` inline.", nil},
		{"bash and sh", "```bash\nip -4 addr show\n```\ntext\n```sh\ncurl -s https://ifconfig.me\n```", []Snippet{{"ip -4 addr show", "bash"}, {"curl -s https://ifconfig.me", "sh"}}},
		{"no language", "```\nhostname -I\n```", []Snippet{{"hostname -I", ""}}},
		{"other language left out", "```python\nprint(1)\n```\n```json\n{}\n```", nil},
		{"placeholder does not parse", "```bash\nping -c1 <host>\n```", nil},
		{"console keeps commands only", "```console\n$ ls\na.txt  b.txt\n$ wc -l a.txt\n3 a.txt\n```", []Snippet{{"ls\nwc -l a.txt", "console"}}},
		{"dollar prompts in bash", "```bash\n$ cd /tmp\n$ ls\n```", []Snippet{{"cd /tmp\nls", "bash"}}},
		{"multi-line script", "```bash\nfor f in *.log; do\n  gzip \"$f\"\ndone\n```", []Snippet{{"for f in *.log; do\n  gzip \"$f\"\ndone", "bash"}}},
		{"unclosed last fence", "```bash\ndf -h", []Snippet{{"df -h", "bash"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Snippets(tt.md)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestHistoryAnswer: an earlier answer goes back to the model as an
// answer, not as a script that ran.
func TestHistoryAnswer(t *testing.T) {
	fake := &scriptedLLM{answers: []string{answerJSON("ip -4 addr show", "Shows the addresses.")}}
	p := must(New(LLM(fake, "fake"), SystemInfo(testSystem()), Answers(true)))
	_, err := p.Plan(context.Background(), Request{Prompt: "do that for IPv4 only", History: []HistoryEntry{
		{Prompt: "how do I find my IP", Answer: "Run `ip addr`:\n```bash\nip addr\n```"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	sent := fake.lastUser()
	if !strings.Contains(sent, "Answer:\n    Run `ip addr`") || strings.Contains(sent, "Exit code") {
		t.Errorf("history not sent as an answer:\n%s", sent)
	}
}
