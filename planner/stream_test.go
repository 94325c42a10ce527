package planner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/google/go-cmp/cmp"
)

// progressLog collects what a Request's Stream receives.
type progressLog struct {
	mu     sync.Mutex
	events []Progress
	// onText, when set, is called with each TextArrived event.
	onText func(Progress)
}

func (l *progressLog) add(p Progress) {
	l.mu.Lock()
	l.events = append(l.events, p)
	f := l.onText
	l.mu.Unlock()
	if f != nil && p.Kind == TextArrived {
		f(p)
	}
}

func (l *progressLog) all() []Progress {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Progress(nil), l.events...)
}

func (l *progressLog) kinds() []ProgressKind {
	var k []ProgressKind
	for _, e := range l.all() {
		if len(k) == 0 || k[len(k)-1] != e.Kind {
			k = append(k, e.Kind)
		}
	}
	return k
}

// TestStreamPlan: with Stream set, each provider's real client asks for a
// stream and the planner hands on the text as it arrives, in order, with
// elapsed time; the final artifact is parsed as without streaming, and
// carries the usage the stream reported.
func TestStreamPlan(t *testing.T) {
	good := answerJSON(goodScript, "Moves the 2025 invoices into invoices/2025.")
	for _, w := range wires() {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			f := newFakeProvider(t, w, reply{content: good, chunks: 12})
			p := newWirePlanner(t, f, &fakeSleeper{})
			var log progressLog
			a, err := p.Plan(ctx, Request{Prompt: "put the 2025 invoices in one folder", Stream: log.add})
			if err != nil {
				t.Fatal(err)
			}
			if a.Script != goodScript || a.Kind() != KindScript {
				t.Errorf("Script = %q (%v), want %q", a.Script, a.Kind(), goodScript)
			}
			body := f.requests()[0]
			if body["stream"] != true {
				t.Errorf("request did not ask for a stream: stream = %v", body["stream"])
			}
			if diff := cmp.Diff([]ProgressKind{CallStarted, TextArrived, CallDone}, log.kinds()); diff != "" {
				t.Errorf("event kinds (-want +got):\n%s", diff)
			}
			var chunks []string
			var texts int
			var last time.Duration
			for _, e := range log.all() {
				if e.Elapsed < last {
					t.Errorf("elapsed went back: %v after %v", e.Elapsed, last)
				}
				last = e.Elapsed
				if e.Kind != TextArrived {
					continue
				}
				texts++
				chunks = append(chunks, e.Chunk)
				if e.Text != strings.Join(chunks, "") {
					t.Fatalf("Text %q is not the chunks so far %q", e.Text, strings.Join(chunks, ""))
				}
				if part := e.Partial().Script; !strings.HasPrefix(goodScript, part) {
					t.Errorf("partial script %q is not a prefix of the script", part)
				}
			}
			if texts < 12 {
				t.Errorf("%d text events, want the 12 pieces sent", texts)
			}
			if got := strings.Join(chunks, ""); got != good {
				t.Errorf("streamed text %q, want %q", got, good)
			}
			done := log.all()[len(log.all())-1]
			want := Usage{InputTokens: 612, OutputTokens: 58, Calls: 1}
			if diff := cmp.Diff(want, done.Usage); diff != "" {
				t.Errorf("CallDone usage (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(want, a.Usage); diff != "" {
				t.Errorf("artifact usage (-want +got):\n%s", diff)
			}
			if done.Text != good || a.Raw != good {
				t.Errorf("final text %q, raw %q", done.Text, a.Raw)
			}
		})
	}
}

// TestStreamCancelHalfWay: a plan cancelled while its answer streams in
// stops at once with context.Canceled, hangs up on the provider, makes no
// repair attempt, and the display got the part that had arrived. Cut
// after all its text but before the stream's end, the answer is not taken
// either (some clients end a cut stream without an error).
func TestStreamCancelHalfWay(t *testing.T) {
	good := answerJSON(goodScript, "Moves the invoices.")
	for _, w := range wires() {
		for _, stall := range []int{3, 8} {
			t.Run(fmt.Sprintf("%s/after %d of 8", w.name, stall), func(t *testing.T) {
				t.Parallel()
				testStreamCancel(t, w, good, stall)
			})
		}
	}
}

func testStreamCancel(t *testing.T, w wire, good string, stall int) {
	f := newFakeProvider(t, w, reply{content: good, chunks: 8, stall: stall})
	p := newWirePlanner(t, f, &fakeSleeper{}, Timeout(time.Minute))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	log := progressLog{}
	log.onText = func(e Progress) {
		if e.Text == strings.Join(splitN(good, 8)[:stall], "") {
			cancel() // what ctrl+c does, once some pieces are shown
		}
	}
	bound, stop := context.WithTimeout(ctx, 20*time.Second)
	defer stop()
	a, err := p.Plan(bound, Request{Prompt: "put the 2025 invoices in one folder", Stream: log.add})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Plan = %+v, %v; want context.Canceled", a, err)
	}
	select {
	case <-f.gone:
	case <-time.After(10 * time.Second):
		t.Fatal("the provider's connection stayed open after the cancel")
	}
	if n := len(f.requests()); n != 1 {
		t.Errorf("server got %d requests, want 1 (no repair after a cancel)", n)
	}
	events := log.all()
	if len(events) == 0 || events[len(events)-1].Kind != CallDone {
		t.Fatalf("events %v do not end with CallDone", log.kinds())
	}
	var shown string
	for _, e := range events {
		if e.Kind == TextArrived {
			shown = e.Text
		}
	}
	if want := strings.Join(splitN(good, 8)[:stall], ""); shown != want {
		t.Errorf("shown %q before the cancel, want %q", shown, want)
	}
}

// TestStreamRepair: a repair starts a new answer: CallStarted with the
// next attempt, then its own text; usage adds up over both calls.
func TestStreamRepair(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	broken := answerJSON("for f in *.pdf; do echo \"$f\"", "Lists PDFs.")
	good := answerJSON(goodScript, "ok")
	f := newFakeProvider(t, wires()[1], reply{content: broken}, reply{content: good})
	p := newWirePlanner(t, f, &fakeSleeper{}, Pricing(Price{Input: 0.15, Output: 0.60}))
	var log progressLog
	a, err := p.Plan(ctx, Request{Prompt: "put the 2025 invoices in one folder", Stream: log.add})
	if err != nil {
		t.Fatal(err)
	}
	var starts []int
	for _, e := range log.all() {
		if e.Kind == CallStarted {
			starts = append(starts, e.Attempt)
		}
		if e.Kind == TextArrived && e.Attempt == 1 && !strings.HasPrefix(good, e.Text) {
			t.Errorf("second answer's text %q carries the first", e.Text)
		}
	}
	if diff := cmp.Diff([]int{0, 1}, starts); diff != "" {
		t.Errorf("attempts started (-want +got):\n%s", diff)
	}
	want := Usage{InputTokens: 1224, OutputTokens: 116, Calls: 2, Cost: (1224*0.15 + 116*0.60) / 1e6, Currency: "USD", Priced: true}
	if diff := cmp.Diff(want, a.Usage); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
}

// TestStreamResponder: a model that does not stream (a Responder) still
// gives the display its answer, as one piece, and an estimated usage.
func TestStreamResponder(t *testing.T) {
	good := answerJSON("ls -la", "Lists the files.")
	p := must(New(Respond("replay", func(context.Context, Request, int) (string, error) { return good, nil }), SystemInfo(testSystem())))
	var log progressLog
	a, err := p.Plan(context.Background(), Request{Prompt: "list the files", Stream: log.add})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]ProgressKind{CallStarted, TextArrived, CallDone}, log.kinds()); diff != "" {
		t.Errorf("event kinds (-want +got):\n%s", diff)
	}
	if !a.Usage.Estimated || a.Usage.OutputTokens != EstimateTokens(good) || a.Usage.InputTokens < a.Prompt.Total/2 {
		t.Errorf("usage %+v, want estimated counts (prompt about %d tokens)", a.Usage, a.Prompt.Total)
	}
}

func TestPartialAnswer(t *testing.T) {
	tests := []struct {
		in   string
		want Answer
	}{
		{``, Answer{}},
		{`{`, Answer{}},
		{`{"scr`, Answer{}},
		{`{"script": "ls -l`, Answer{Script: "ls -l"}},
		{`{"script": "echo \"hi`, Answer{Script: `echo "hi`}},
		{`{"script": "a\`, Answer{Script: "a"}},
		{`{"script": "a\n`, Answer{Script: "a"}},
		{`{"script": "a\nb\u00e9\u`, Answer{Script: "a\nbé"}},
		{`{"script": "", "answer": "**tar** extracts`, Answer{Markdown: "**tar** extracts"}},
		{`{"needs_network": true, "script": "curl -s x`, Answer{Script: "curl -s x", NeedsNetwork: true}},
		{`{"steps": [{"code": "\"}"}], "script": "ls`, Answer{Script: "ls"}},
		{"```json\n{\"script\": \"du -sh", Answer{Script: "du -sh"}},
		{"```bash\nfind . -name '*.log'", Answer{Script: "find . -name '*.log'"}},
		{"Sure! Here it is", Answer{}},
		{"Sure! Here it is:\n{\"script\": \"ls -t", Answer{Script: "ls -t"}},
		{"Sure, {braces} first. Then:\n```sh\nls -S", Answer{Script: "ls -S"}},
		{"Run:\n```bash\nls -l\n```\nand {\"x\": 1}", Answer{Script: "ls -l"}},
		{`{"script": "x\ud83d\ude00y"}`, Answer{Script: "x😀y"}},
		{`{"script": "x\ud83d`, Answer{Script: "x"}},
		{"{\"script\": \"caf\xc3", Answer{Script: "caf"}},
	}
	for _, tt := range tests {
		if got := PartialAnswer(tt.in); got != tt.want {
			t.Errorf("PartialAnswer(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

// FuzzPartialAnswer: on every prefix of a well-formed answer, the script
// PartialAnswer reads is a prefix of the whole script, and on the whole
// answer it agrees with ParseAnswer. It never panics on any text.
func FuzzPartialAnswer(f *testing.F) {
	f.Add("ls -la\n", "Lists \"all\" files.", "", true)
	f.Add("", "", "`tar -xzf` extracts:\n```bash\ntar -xzf a.tgz\n```", false)
	f.Add("echo é😀\\u0041 \x01 <&>", "x", "", false)
	f.Fuzz(func(t *testing.T, script, explanation, markdown string, net bool) {
		PartialAnswer(script) // any text
		b, err := json.Marshal(Answer{Script: script, Explanation: explanation, Markdown: markdown, NeedsNetwork: net})
		if err != nil {
			t.Fatal(err)
		}
		full := string(b)
		var sent Answer // what the JSON says, invalid UTF-8 replaced
		if err := json.Unmarshal(b, &sent); err != nil {
			t.Fatal(err)
		}
		if want, err := ParseAnswer(full); err == nil && !strings.Contains(sent.Script, "```") {
			if got := PartialAnswer(full); got != want {
				t.Errorf("whole answer: PartialAnswer = %+v, ParseAnswer = %+v", got, want)
			}
		}
		whole := strings.TrimLeftFunc(sent.Script, unicode.IsSpace)
		for i := range len(full) {
			if p := PartialAnswer(full[:i]); !strings.HasPrefix(whole, p.Script) {
				t.Fatalf("prefix %d: script %q is not a prefix of %q", i, p.Script, whole)
			}
		}
	})
}
