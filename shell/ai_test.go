package shell

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/nash-shell/nash/internal/conversation"
	"github.com/nash-shell/nash/planner"
)

const tarAnswer = "`tar -xzf` extracts a gzip-compressed archive.\n\n" +
	"```sh\ntar -xzf backup.tar.gz -C out\n```\n\nList it first with:\n\n```sh\ntar -tzf backup.tar.gz\n```\n"

// TestAnswerInREPL: a question gets the answer rendered into the
// transcript, its commands numbered; picking one takes it through the
// review like any planned script, and its run is committed with the
// tokens the answer cost.
func TestAnswerInREPL(t *testing.T) {
	p := &fakePlanner{answer: tarAnswer, usage: planner.Usage{InputTokens: 612, OutputTokens: 58, Calls: 1}}
	sb := &fakeSandbox{}
	m := newTestModel(t, p, sb)
	sb.changes = []string{filepath.Join(m.st.Dir, "out")}
	typeText(m, "what does tar xzf do")
	printed := drive(t, m, key(m, "enter"))
	for _, want := range []string{"extracts a gzip-compressed archive", "[1] tar -xzf backup.tar.gz -C out", "[2] tar -tzf backup.tar.gz", "612 tokens in, 58 out (1 call)"} {
		if !strings.Contains(printed, want) {
			t.Errorf("the transcript lacks %q:\n%s", want, printed)
		}
	}
	if m.state != stSnippet || !strings.Contains(m.view(), "1-2 review and run that command") {
		t.Fatalf("after the answer: state %v, view %q", m.state, m.view())
	}
	if len(sb.runs) != 0 {
		t.Fatalf("an answer ran something: %q", sb.runs)
	}
	printed = drive(t, m, runeKey(m, '1'))
	if m.state != stReview || m.art == nil || m.art.Script != "tar -xzf backup.tar.gz -C out" {
		t.Fatalf("after picking [1]: state %v, artifact %+v", m.state, m.art)
	}
	if !strings.Contains(printed, "what it will do") {
		t.Errorf("the picked command was not reviewed:\n%s", printed)
	}
	drive(t, m, key(m, "enter"))
	if len(sb.runs) != 1 || sb.runs[0] != "tar -xzf backup.tar.gz -C out" {
		t.Fatalf("runs %q, want the picked command", sb.runs)
	}
	drive(t, m, runeKey(m, 'c'))
	if len(sb.tokens) != 1 || sb.tokens[0] == nil || sb.tokens[0].Input != 612 || sb.tokens[0].Output != 58 {
		t.Errorf("the commit was told tokens %+v, want 612 in and 58 out", sb.tokens)
	}
	if len(m.st.History) < 2 || m.st.History[0].Answer != tarAnswer || m.st.History[1].Script != "tar -xzf backup.tar.gz -C out" {
		t.Errorf("history %+v, want the answer then the command", m.st.History)
	}
}

// TestAnswerNonePicked: enter at the answer's commands ends the pass;
// nothing runs.
func TestAnswerNonePicked(t *testing.T) {
	p := &fakePlanner{answer: tarAnswer}
	sb := &fakeSandbox{}
	m := newTestModel(t, p, sb)
	typeText(m, "what does tar xzf do")
	drive(t, m, key(m, "enter"))
	drive(t, m, key(m, "enter"))
	if m.state != stInput || len(sb.runs) != 0 {
		t.Fatalf("state %v, runs %q; want the prompt and nothing run", m.state, sb.runs)
	}
}

// TestOneShotAnswer: nash -c prints the answer on stdout in the style
// asked for; --json holds it, its commands and the tokens, and runs
// nothing; a person at a terminal may pick a command to review and run.
func TestOneShotAnswer(t *testing.T) {
	usage := planner.Usage{InputTokens: 100, OutputTokens: 20, Calls: 1, Priced: true, Cost: 0.0012, Currency: "USD"}
	cfgFor := func(t *testing.T, p *fakePlanner, sb *fakeSandbox) Config {
		dir := t.TempDir()
		return Config{
			Planner: func(string) (Planner, error) { return p, nil },
			Open:    sb.open, Model: "test:model", Dir: dir, Home: dir,
			Env: []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir},
		}
	}
	t.Run("source", func(t *testing.T) {
		sb := &fakeSandbox{}
		var out, errw bytes.Buffer
		err := OneShot(context.Background(), cfgFor(t, &fakePlanner{answer: tarAnswer, usage: usage}, sb), "what does tar xzf do", strings.NewReader(""), &out, &errw, LineOptions{})
		if err != nil {
			t.Fatalf("one-shot: %v\n%s", err, errw.String())
		}
		if out.String() != tarAnswer {
			t.Errorf("stdout %q, want the Markdown as written", out.String())
		}
		if !strings.Contains(errw.String(), "100 tokens in, 20 out (1 call, $0.0012)") {
			t.Errorf("stderr lacks the token use:\n%s", errw.String())
		}
		if strings.Contains(errw.String(), "review and run") || len(sb.runs) != 0 {
			t.Errorf("offered or ran a command without a person at a terminal:\n%s", errw.String())
		}
	})
	t.Run("plain layout", func(t *testing.T) {
		var out, errw bytes.Buffer
		err := OneShot(context.Background(), cfgFor(t, &fakePlanner{answer: tarAnswer}, &fakeSandbox{}), "what does tar xzf do", strings.NewReader(""), &out, &errw, LineOptions{Answers: AnswerPlain, Width: 60})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "[1] tar -xzf backup.tar.gz -C out") || strings.Contains(out.String(), "```") || strings.Contains(out.String(), "\x1b") {
			t.Errorf("stdout is not the plain layout:\n%q", out.String())
		}
	})
	t.Run("json", func(t *testing.T) {
		var out, errw bytes.Buffer
		err := OneShot(context.Background(), cfgFor(t, &fakePlanner{answer: tarAnswer, usage: usage}, &fakeSandbox{}), "what does tar xzf do", strings.NewReader(""), &out, &errw, LineOptions{JSON: true, Pick: true})
		if err != nil {
			t.Fatal(err)
		}
		var rec Record
		if err := json.Unmarshal(out.Bytes(), &rec); err != nil {
			t.Fatalf("%v: %s", err, out.String())
		}
		want := Record{Input: "what does tar xzf do", Route: "english", Answer: tarAnswer, Model: "test:model", Usage: &usage,
			Snippets: []planner.Snippet{{Code: "tar -xzf backup.tar.gz -C out", Lang: "sh"}, {Code: "tar -tzf backup.tar.gz", Lang: "sh"}}}
		if diff := cmp.Diff(want, rec); diff != "" {
			t.Errorf("record (-want +got):\n%s", diff)
		}
	})
	t.Run("pick", func(t *testing.T) {
		sb := &fakeSandbox{}
		cfg := cfgFor(t, &fakePlanner{answer: tarAnswer}, sb)
		var out, errw bytes.Buffer
		err := OneShot(context.Background(), cfg, "what does tar xzf do", strings.NewReader("2\ny\n"), &out, &errw, LineOptions{Pick: true})
		if err != nil {
			t.Fatalf("%v\n%s", err, errw.String())
		}
		if !strings.Contains(errw.String(), "[2] tar -tzf backup.tar.gz") || !strings.Contains(errw.String(), "review and run one? 1-2") {
			t.Errorf("the commands were not offered:\n%s", errw.String())
		}
		if len(sb.runs) != 1 || sb.runs[0] != "tar -tzf backup.tar.gz" {
			t.Errorf("runs %q, want the second command", sb.runs)
		}
	})
	t.Run("print", func(t *testing.T) {
		var out, errw bytes.Buffer
		err := OneShot(context.Background(), cfgFor(t, &fakePlanner{answer: tarAnswer}, &fakeSandbox{}), "what does tar xzf do", strings.NewReader(""), &out, &errw, LineOptions{Print: true})
		var pe *PlanError
		if !errors.As(err, &pe) || !errors.Is(err, planner.ErrNoScript) {
			t.Errorf("--print of an answer: %v, want a planner error (no script)", err)
		}
		if out.Len() != 0 || !strings.Contains(errw.String(), "extracts a gzip-compressed archive") {
			t.Errorf("--print: stdout %q (want nothing: no script), stderr %q (want the answer)", out.String(), errw.String())
		}
	})
}

// TestOneShotInput: what was piped to nash -c goes with the request, and
// how much of it the model was sent is said and recorded.
func TestOneShotInput(t *testing.T) {
	dir := t.TempDir()
	p := &fakePlanner{answer: "It failed because the disk is full."}
	cfg := Config{Planner: func(string) (Planner, error) { return p, nil }, Open: (&fakeSandbox{}).open, Model: "test:model", Dir: dir, Home: dir}
	in := &planner.Input{Name: "stdin", Head: "Nov 3 disk full\n", Size: 16}
	var out, errw bytes.Buffer
	if err := OneShot(context.Background(), cfg, "why did it fail", strings.NewReader(""), &out, &errw, LineOptions{Input: in}); err != nil {
		t.Fatal(err)
	}
	if len(p.inputs) != 1 || p.inputs[0] != in {
		t.Errorf("the planner got input %v, want the piped one", p.inputs)
	}
	// The planner reports what it sent; the fake sends nothing, so the
	// words come from the stats alone (see TestStdinLine).
	if !strings.Contains(out.String(), "disk is full") {
		t.Errorf("stdout %q", out.String())
	}
}

func TestStdinLine(t *testing.T) {
	for _, tt := range []struct {
		in   planner.InputStats
		want string
	}{
		{planner.InputStats{Name: "stdin", Size: 3400, Sent: 3400}, "stdin: sent the model all 3.3 KiB"},
		{planner.InputStats{Name: "stdin", Size: 2 << 20, Sent: 8000, Cut: true}, "stdin: sent the model 7.8 KiB of 2.0 MiB, its start and its end; the 2.0 MiB between were cut (the model is told so)"},
		{planner.InputStats{Name: "stdin", Size: 5000, Binary: true}, "stdin: 4.9 KiB of binary data; not sent to the model, only its size"},
	} {
		if got := stdinLine(&tt.in); got != tt.want {
			t.Errorf("stdinLine(%+v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestUsageLine(t *testing.T) {
	for _, tt := range []struct {
		u    planner.Usage
		want string
	}{
		{planner.Usage{}, ""},
		{planner.Usage{InputTokens: 612, OutputTokens: 58, Calls: 1}, "612 tokens in, 58 out (1 call)"},
		{planner.Usage{InputTokens: 1300, OutputTokens: 90, Calls: 2, Estimated: true}, "about 1300 tokens in, 90 out (2 calls)"},
		{planner.Usage{InputTokens: 10, OutputTokens: 1, Calls: 1, Priced: true, Cost: 2.5}, "10 tokens in, 1 out (1 call, $2.50)"},
		{planner.Usage{InputTokens: 10, OutputTokens: 1, Calls: 1, Priced: true, Cost: 0.0421, Currency: "EUR"}, "10 tokens in, 1 out (1 call, 0.042 EUR)"},
	} {
		if got := usageLine(tt.u); got != tt.want {
			t.Errorf("usageLine(%+v) = %q, want %q", tt.u, got, tt.want)
		}
	}
}

// nextMsg runs cmd (and the commands of a batch) until one yields a
// message of type T, within a deadline for a hung test.
func nextMsg[T tea.Msg](t *testing.T, cmd tea.Cmd) T {
	t.Helper()
	got := make(chan T, 1)
	go func() {
		for _, msg := range runCmd(t, cmd) {
			if m, ok := msg.(T); ok {
				got <- m
				return
			}
		}
	}()
	select {
	case m := <-got:
		return m
	case <-time.After(10 * time.Second):
		var zero T
		t.Fatalf("no %T came", zero)
		return zero
	}
}

// TestStreamInREPL: while the model writes, the view shows the script so
// far, the time taken and the tokens; ctrl+c cancels.
func TestStreamInREPL(t *testing.T) {
	p := &fakePlanner{block: true, chunks: []string{`{"script": "echo one`, `\necho two`, `\necho three`}}
	m := newTestModel(t, p, &fakeSandbox{})
	typeText(m, "count to three")
	busy := nextMsg[flowBusyMsg](t, key(m, "enter"))
	_, listen := m.Update(busy)
	// The progress posts one message at a time; Update takes the latest.
	for i := 0; i < 10 && !strings.Contains(m.view(), "echo three"); i++ {
		msg := nextMsg[flowProgressMsg](t, listen)
		_, listen = m.Update(msg)
	}
	v := m.view()
	for _, want := range []string{"echo one", "echo two", "echo three", "planning… 3.0s", "(ctrl+c cancels)"} {
		if !strings.Contains(v, want) {
			t.Errorf("the view lacks %q while the model writes:\n%s", want, v)
		}
	}
	key(m, "ctrl+c")
	printed := drive(t, m, listen)
	if m.state != stInput || !strings.Contains(printed, "cancelled") || m.live != nil {
		t.Errorf("after ctrl+c: state %v, printed %q", m.state, printed)
	}
	if strings.Contains(m.view(), "echo three") {
		t.Errorf("the model's text stayed in the view: %q", m.view())
	}
}

// screen plays the few terminal sequences liveRegion writes (text, \r,
// \n, cursor up, clear to the end of the screen) and returns the rows
// left on the screen. \n also goes back to column 0, as a terminal's
// output processing (onlcr) makes it.
func screen(out string) []string {
	rows := []string{""}
	row, col := 0, 0
	csi := regexp.MustCompile(`^\x1b\[(\d*)([AJ])`)
	for len(out) > 0 {
		if m := csi.FindStringSubmatch(out); m != nil {
			n, _ := strconv.Atoi(m[1])
			switch m[2] {
			case "A":
				row = max(row-max(n, 1), 0)
			case "J":
				rows[row] = string([]rune(rows[row])[:min(col, len([]rune(rows[row])))])
				rows = rows[:row+1]
			}
			out = out[len(m[0]):]
			continue
		}
		c, size := utf8.DecodeRuneInString(out)
		out = out[size:]
		switch c {
		case '\r':
			col = 0
		case '\n':
			row, col = row+1, 0
			if row == len(rows) {
				rows = append(rows, "")
			}
		default:
			r := []rune(rows[row])
			for len(r) < col {
				r = append(r, ' ')
			}
			rows[row] = string(r[:col]) + string(c) + string(r[min(col+1, len(r)):])
			col++
		}
	}
	for len(rows) > 0 && rows[len(rows)-1] == "" {
		rows = rows[:len(rows)-1]
	}
	return rows
}

// TestLiveRegion: nash -c's display of the model's text on a terminal
// redraws in place (the last lines, each cut to the width) and leaves
// nothing behind when the model is done.
func TestLiveRegion(t *testing.T) {
	var w bytes.Buffer
	r := startLive(&w, newStyles(false), 40, "planning")
	text := `{"script": "`
	for i := 1; i <= 12; i++ {
		text += "echo line " + strconv.Itoa(i) + `\n`
		r.update(planner.Progress{Kind: planner.TextArrived, Text: text, Elapsed: 1500 * time.Millisecond})
		r.draw()
	}
	r.update(planner.Progress{Kind: planner.TextArrived, Text: text + `echo a very long line that is wider than the terminal is`, Elapsed: 1500 * time.Millisecond})
	r.draw()
	rows := screen(w.String())
	if len(rows) != maxLiveLines+1 {
		t.Fatalf("%d rows on the screen, want the last %d lines and the status:\n%s", len(rows), maxLiveLines, strings.Join(rows, "\n"))
	}
	if rows[0] != "echo line 6" || !strings.HasPrefix(rows[maxLiveLines-1], "echo a very long line") || !strings.HasPrefix(rows[maxLiveLines], "planning… ") {
		t.Errorf("the screen shows:\n%s", strings.Join(rows, "\n"))
	}
	for _, row := range rows {
		if len([]rune(row)) > 39 {
			t.Errorf("row %q is wider than the terminal", row)
		}
	}
	r.end()
	if rows := screen(w.String()); len(rows) != 0 {
		t.Errorf("the region left on the screen:\n%s", strings.Join(rows, "\n"))
	}
}

// TestLiveRegionSay: what nash -c says while the live region is up (the
// examples run again after a revision) stays on the screen above it; the
// region's redraws do not erase it.
func TestLiveRegionSay(t *testing.T) {
	var w bytes.Buffer
	l := &liner{errw: &w, sty: newStyles(false), opts: LineOptions{Live: true, Width: 40}}
	_, done := l.busy(context.Background(), "running the examples again")
	l.live.draw()
	l.say(evFailed{errors.New("example 1: boom")})
	l.live.draw()
	l.say(evFailed{errors.New("example 2: bang")})
	l.live.draw()
	rows := screen(w.String())
	if len(rows) != 3 || rows[0] != "nash: example 1: boom" || rows[1] != "nash: example 2: bang" ||
		!strings.HasPrefix(rows[2], "running the examples again… ") {
		t.Fatalf("while busy the screen shows:\n%s", strings.Join(rows, "\n"))
	}
	done()
	if rows := screen(w.String()); len(rows) != 2 || rows[1] != "nash: example 2: bang" {
		t.Errorf("after the work the screen shows:\n%s", strings.Join(rows, "\n"))
	}
}

// TestModelBuiltin: :model lists the provider's models, switches this
// session to another (the prompt shows it, the next request goes to it),
// refuses one the provider does not have, and saves with --save.
func TestModelBuiltin(t *testing.T) {
	var built, saved []string
	p := &fakePlanner{script: "true"}
	listed := []planner.ModelInfo{{ID: "gpt-4o"}, {ID: "gpt-4o-mini"}}
	dir := t.TempDir()
	cfg := Config{
		Planner: func(model string) (Planner, error) { built = append(built, model); return p, nil },
		Models: func(_ context.Context, model string) ([]planner.ModelInfo, error) {
			if !strings.HasPrefix(model, "openai:") {
				return nil, errors.New("nothing answers")
			}
			return listed, nil
		},
		SaveModel: func(model string) error { saved = append(saved, model); return nil },
		Model:     "openai:gpt-4o", Dir: dir, Home: dir, Open: (&fakeSandbox{}).open,
	}
	e := newEngine(cfg)
	run := func(line string) (string, error) {
		var b bytes.Buffer
		err := e.builtin(context.Background(), line, dir, nil, &b)
		return b.String(), err
	}
	out, err := run("model")
	if err != nil || !strings.Contains(out, "* gpt-4o\n") || !strings.Contains(out, "  gpt-4o-mini") {
		t.Errorf(":model = %q, %v; want the list with gpt-4o marked", out, err)
	}
	if _, err := run("model gpt-5-nonesuch"); err == nil || !strings.Contains(err.Error(), "openai has no model gpt-5-nonesuch") {
		t.Errorf(":model of a model not listed: %v", err)
	}
	out, err = run("model gpt-4o-mini")
	if err != nil || e.currentModel() != "openai:gpt-4o-mini" || !strings.Contains(out, "for this session") {
		t.Fatalf(":model gpt-4o-mini: %q, %v, now %s", out, err, e.currentModel())
	}
	if _, err := e.getPlanner(); err != nil || !slicesEqual(built, []string{"openai:gpt-4o-mini"}) {
		t.Errorf("planners built %q, want the switched one", built)
	}
	out, err = run("model ollama:llama3.2 --save")
	if err != nil || !strings.Contains(out, "could not check") || !slicesEqual(saved, []string{"ollama:llama3.2"}) {
		t.Errorf(":model ollama:llama3.2 --save: %q, %v, saved %q", out, err, saved)
	}
}

func slicesEqual(a, b []string) bool { return strings.Join(a, "\x00") == strings.Join(b, "\x00") }

// TestKeepExchanges: each step of a pass reaches Config.Keep, so the
// conversation can go on (nash -c --continue, nash --resume); and a
// session started with History sends it to the model.
func TestKeepExchanges(t *testing.T) {
	dir := t.TempDir()
	var kept []conversation.Exchange
	p := &fakePlanner{script: "echo hi > hi.txt"}
	sb := &fakeSandbox{changes: []string{filepath.Join(dir, "hi.txt")}}
	earlier := []planner.HistoryEntry{{Prompt: "what is in here", Answer: "Two files."}}
	cfg := Config{
		Planner: func(string) (Planner, error) { return p, nil }, Open: sb.open, Model: "test:model", Dir: dir, Home: dir,
		History: earlier, Keep: func(ex conversation.Exchange) { kept = append(kept, ex) },
	}
	var out, errw bytes.Buffer
	if err := OneShot(context.Background(), cfg, "greet me in a file", strings.NewReader(""), &out, &errw, LineOptions{Yes: true}); err != nil {
		t.Fatal(err)
	}
	if len(p.histories) != 1 || len(p.histories[0]) != 1 || p.histories[0][0].Answer != "Two files." {
		t.Errorf("the planner saw history %+v, want the earlier exchange", p.histories)
	}
	if len(kept) != 1 || kept[0].Kind != "script" || kept[0].Prompt != "greet me in a file" || kept[0].Script != "echo hi > hi.txt" || kept[0].TxID != "t1" || kept[0].Dir != dir {
		t.Errorf("kept %+v", kept)
	}
	p.answer = "Yes."
	kept = nil
	if err := OneShot(context.Background(), cfg, "is that all", strings.NewReader(""), &out, &errw, LineOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(kept) != 1 || kept[0].Kind != "answer" || kept[0].Answer != "Yes." {
		t.Errorf("kept %+v", kept)
	}
}
