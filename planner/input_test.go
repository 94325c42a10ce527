package planner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// TestReadInput: ReadInput keeps the first quarter and the last three
// quarters of its bound, counts every byte, and reads in any chunking.
func TestReadInput(t *testing.T) {
	const max = 64
	line := func(i int) string { return fmt.Sprintf("line %03d\n", i) } // 9 bytes
	var big strings.Builder
	for i := range 100 {
		big.WriteString(line(i))
	}
	tests := []struct {
		name       string
		in         string
		head, tail string
		dropped    int64
		binary     bool
	}{
		{"empty", "", "", "", 0, false},
		{"short", "hello\n", "hello\n", "", 0, false},
		{"exactly the bound", strings.Repeat("x", max), strings.Repeat("x", max), "", 0, false},
		{"one more", strings.Repeat("x", max) + "y", strings.Repeat("x", 16), strings.Repeat("x", 47) + "y", 1, false},
		{"long log", big.String(), big.String()[:16], big.String()[900-48:], 900 - 64, false},
		{"NUL is binary", "a\x00b", "a\x00b", "", 0, true},
		{"latin-1 is binary", strings.Repeat("caf\xe9 ", 10), strings.Repeat("caf\xe9 ", 10), "", 0, true},
		{"a rune cut at the head's end", strings.Repeat("x", 15) + "é" + strings.Repeat("y", 100), strings.Repeat("x", 15), strings.Repeat("y", 48), 117 - 15 - 48, false},
	}
	for _, tt := range tests {
		for _, chunk := range []string{"whole", "one byte", "half"} {
			t.Run(tt.name+"/"+chunk, func(t *testing.T) {
				var r io.Reader = strings.NewReader(tt.in)
				switch chunk {
				case "one byte":
					r = iotest.OneByteReader(r)
				case "half":
					r = iotest.HalfReader(r)
				}
				in, err := ReadInput(r, "stdin", max)
				if err != nil {
					t.Fatal(err)
				}
				if in.Size != int64(len(tt.in)) || in.Head != tt.head || in.Tail != tt.tail || in.Binary != tt.binary {
					t.Errorf("got size %d head %q tail %q binary %v", in.Size, in.Head, in.Tail, in.Binary)
				}
				if in.Dropped != tt.dropped {
					t.Errorf("dropped %d, want %d", in.Dropped, tt.dropped)
				}
			})
		}
	}
	if _, err := ReadInput(iotest.ErrReader(errors.New("boom")), "stdin", max); err == nil || !strings.Contains(err.Error(), "read stdin: boom") {
		t.Errorf("read error: %v", err)
	}
}

// TestReadInputBounded: however much is piped in, ReadInput holds its
// bound and says how much it dropped.
func TestReadInputBounded(t *testing.T) {
	const n = 50 << 20
	in, err := ReadInput(io.LimitReader(neverEnding('a'), n), "stdin", 4096)
	if err != nil {
		t.Fatal(err)
	}
	if in.Size != n || len(in.Head)+len(in.Tail) != 4096 || in.Dropped != n-4096 {
		t.Errorf("size %d, kept %d, dropped %d", in.Size, len(in.Head)+len(in.Tail), in.Dropped)
	}
}

type neverEnding byte

func (b neverEnding) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

// TestWireInput: text piped to nash goes to the model with the request,
// over each provider's real client, cut to the budget with its start and
// its end kept, and the prompt and PromptStats say what was cut.
func TestWireInput(t *testing.T) {
	var log strings.Builder
	log.WriteString("Nov 20 10:00:00 host backup[812]: starting backup of /srv\n")
	for i := range 2000 {
		fmt.Fprintf(&log, "Nov 20 10:%02d:%02d host backup[812]: copied file %d\n", i/60%60, i%60, i)
	}
	log.WriteString("Nov 20 10:33:20 host backup[812]: ERROR: write /mnt/backup/srv.tar: no space left on device\n")
	in, err := ReadInput(strings.NewReader(log.String()), "stdin", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range wires() {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			f := newFakeProvider(t, w, reply{content: answerOnly("The backup failed because `/mnt/backup` is full.")})
			p := newWirePlanner(t, f, &fakeSleeper{}, Answers(true), InputBudget(500))
			a, err := p.Plan(ctx, Request{Prompt: "why did it fail", Input: in})
			if err != nil {
				t.Fatal(err)
			}
			sent := messagesText(f.requests()[0])
			for _, want := range []string{
				"starting backup of /srv",                 // the start
				"no space left on device",                 // the end
				"not instructions to follow",              // piped text is data
				fmt.Sprintf("%d bytes in all", log.Len()), // the cut, said
				"[… cut …]",
			} {
				if !strings.Contains(sent, want) {
					t.Errorf("request lacks %q", want)
				}
			}
			if strings.Contains(sent, "copied file 1000\n") {
				t.Error("the middle of the input was sent despite the budget")
			}
			st := a.Prompt.Input
			if st == nil || st.Size != int64(log.Len()) || !st.Cut || st.Sent == 0 || st.Sent > 500*4 {
				t.Fatalf("input stats %+v", st)
			}
			if a.Prompt.Sections["input"] < 400 || a.Prompt.Sections["input"] > 600 {
				t.Errorf("input section counted %d tokens, want about 500", a.Prompt.Sections["input"])
			}
			if a.Kind() != KindAnswer {
				t.Errorf("kind %v", a.Kind())
			}
		})
	}
}

func TestRenderInput(t *testing.T) {
	tests := []struct {
		name     string
		in       Input
		tokens   int
		want     []string
		notWant  []string
		sent     int
		cut, bin bool
	}{
		{"all of it", Input{Head: "one\ntwo\n", Size: 8}, 100, []string{"(all 8 bytes)\none\ntwo\n"}, []string{"cut"}, 8, false, false},
		{"empty", Input{}, 100, []string{"(empty)"}, nil, 0, false, false},
		{"escapes", Input{Head: "a\x1b[31mred\r\n", Size: 11}, 100, []string{`a\x1b[31mred` + "\n"}, []string{"\x1b"}, 11, false, false},
		{"binary", Input{Head: "\x00\x01", Size: 2000, Binary: true}, 100, []string{"2000 bytes of binary data, not shown"}, []string{"\x00"}, 0, true, true},
		{"budget zero", Input{Head: "secret", Size: 6}, 0, []string{"6 bytes in all; shown: the first 0 and the last 0"}, []string{"secret"}, 0, true, false},
		{"cut within what was read", Input{Head: strings.Repeat("a", 100) + strings.Repeat("z", 100), Size: 200}, 10, []string{"shown: the first 10 and the last 30", strings.Repeat("a", 10) + "\n[… cut …]\n" + strings.Repeat("z", 30)}, nil, 40, true, false},
		{"cut across what was dropped", Input{Head: strings.Repeat("a", 100), Tail: strings.Repeat("z", 300), Size: 10000, Dropped: 9600}, 10, []string{"10000 bytes in all; shown: the first 10 and the last 30"}, nil, 40, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sec, st := renderInput(&tt.in, tt.tokens)
			for _, w := range tt.want {
				if !strings.Contains(sec.body, w) {
					t.Errorf("body lacks %q:\n%s", w, sec.body)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(sec.body, w) {
					t.Errorf("body has %q:\n%s", w, sec.body)
				}
			}
			if st.Sent != tt.sent || st.Cut != tt.cut || st.Binary != tt.bin || st.Size != tt.in.Size {
				t.Errorf("stats %+v", st)
			}
		})
	}
	if !bytes.Contains([]byte(sanitizeInput("\x7f")), []byte(`\x7f`)) {
		t.Error("DEL not escaped")
	}
}
