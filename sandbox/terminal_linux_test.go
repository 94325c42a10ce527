package sandbox

import (
	"strings"
	"testing"
)

// TestOutputTracker: the reset after a run undoes what the output left
// (alternate screen, scroll region, origin mode) and starts nash's words
// on a line of their own, whatever cuts the output into reads.
func TestOutputTracker(t *testing.T) {
	for _, tt := range []struct {
		name   string
		chunks []string
		want   []string // in the reset, in order
		not    []string // never in the reset
	}{
		{"ends with a newline", []string{"hello\n"}, []string{terminalReset, "\x1b[J"}, []string{"\r\n", "\x1b[?1049l", "\x1b[r"}},
		{"ends mid-line", []string{"hello"}, []string{terminalReset, "\r\n", "\x1b[J"}, nil},
		{"carriage return", []string{"50%\r"}, nil, []string{"\r\n"}},
		{"vim: alternate screen left", []string{"$ \n\x1b[?1049h\x1b[H~\n~ text", "\x1b[?1049l"}, nil, []string{"\x1b[?1049l", "\r\n"}},
		{"left in the alternate screen", []string{"prompt\n\x1b[?1049h\x1b[2;5Hfake"}, []string{"\x1b[?1049l", terminalReset}, []string{"\r\n"}},
		{"47, split across reads", []string{"x\n\x1b[?4", "7h junk"}, []string{"\x1b[?47l"}, nil},
		{"scroll region", []string{"\x1b[5;10r", "text\n"}, []string{"\x1b[r\x1b[999;1H"}, nil},
		{"scroll region reset by the script", []string{"\x1b[5;10r\x1b[r", "ok\n"}, nil, []string{"\x1b[999;1H"}},
		{"origin mode", []string{"\x1b[?6h"}, []string{"\x1b[?6l"}, nil},
		{"cursor to column 1", []string{"abc\x1b[10;1H"}, nil, []string{"\r\n"}},
		{"cursor to column 8", []string{"abc\n\x1b[3G"}, []string{"\r\n"}, nil},
		{"OSC title, cut by a read", []string{"\x1b]0;ti", "tle\x07done\n"}, nil, []string{"\r\n"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var o outputTracker
			for _, c := range tt.chunks {
				o.scan([]byte(c))
			}
			got := string(o.reset())
			at := 0
			for _, w := range tt.want {
				i := strings.Index(got[at:], w)
				if i < 0 {
					t.Fatalf("reset %q lacks %q (in order)", got, w)
				}
				at += i + len(w)
			}
			for _, n := range tt.not {
				if strings.Contains(got, n) {
					t.Errorf("reset %q has %q", got, n)
				}
			}
			if !strings.HasSuffix(got, "\x1b[J") {
				t.Errorf("reset %q does not end by clearing below the cursor", got)
			}
		})
	}
}

// TestOutputTrackerSeesControls: the reset follows output that can change
// a terminal's settings, and only such output: plain text, UTF-8 letters
// included, leaves the terminal as it was.
func TestOutputTrackerSeesControls(t *testing.T) {
	for _, tt := range []struct {
		out string
		ctl bool
	}{
		{"hello\n", false},
		{"", false},
		{"caf\u00e9 \u00fcber\n", false},
		{"\x00", false},
		{"\x1b[8m", true},
		{"text\x0e", true},
		{"csi \u009b2J", true},
		{"raw \x9b2J", true},
	} {
		var o outputTracker
		o.scan([]byte(tt.out))
		if o.ctl != tt.ctl {
			t.Errorf("%q: ctl %v, want %v", tt.out, o.ctl, tt.ctl)
		}
	}
}
