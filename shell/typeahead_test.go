package shell

import (
	tea "charm.land/bubbletea/v2"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestTypedAhead(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"ls\n", "ls\n"},
		{"ls\npart", "ls\npart"},
		{"ls\r", "ls\n"},
		{"a\tb", "a\tb"},
		{"x\x1b[Ay", "xy"},            // an arrow key
		{"x\x1b[1;5Cy", "xy"},         // ctrl+right
		{"x\x1bOPy", "xy"},            // F1
		{"x\x1bby", "xy"},             // alt+b
		{"x\x1b", "x"},                // a lone escape at the end
		{"x\x1b[12", "x"},             // an unfinished sequence
		{"a\x07b\x7fc", "abc"},        // other controls
		{"caf\xc3\xa9\xff!", "café!"}, // invalid UTF-8 dropped
	} {
		if got := typedAhead([]byte(tt.in)); got != tt.want {
			t.Errorf("typedAhead(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzTypedAhead: whatever a terminal held, the prompt gets valid text
// whose only control characters are newlines (Enter) and tabs (Tab).
func FuzzTypedAhead(f *testing.F) {
	for _, s := range []string{"ls\n", "x\x1b[1;5Cy", "\x1bO", "a\rb\tc", "\xff\xfe"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got := typedAhead(b)
		if !utf8.ValidString(got) {
			t.Fatalf("typedAhead(%q) = %q: not UTF-8", b, got)
		}
		if i := strings.IndexFunc(got, func(r rune) bool { return r != '\n' && r != '\t' && unicode.IsControl(r) }); i >= 0 {
			t.Fatalf("typedAhead(%q) = %q: a control character at %d", b, got, i)
		}
		if strings.Count(got, "\n") != strings.Count(string(b), "\n")+strings.Count(string(b), "\r") &&
			!strings.Contains(string(b), "\x1b") {
			t.Fatalf("typedAhead(%q) = %q: lines lost or made", b, got)
		}
	})
}

// TestNewlineEndsLine: a newline (ctrl+j) ends the line as Enter does, as
// in readline. Enter typed while the terminal is back in its cooked mode,
// between a run and the prompt, arrives as one (CR mapped to NL).
func TestNewlineEndsLine(t *testing.T) {
	m := newTestModel(t, &fakePlanner{}, &fakeSandbox{})
	typeText(m, ":help")
	m.Update(tea.KeyPressMsg{Code: 'j', Mod: tea.ModCtrl})
	if m.state != stWaiting || m.input.String() != "" {
		t.Fatalf("after ctrl+j: state %v, input %q; want the line submitted", m.state, m.input.String())
	}
}
