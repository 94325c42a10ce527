package effects

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// hostile holds names and outputs meant to hide or spoof what a terminal
// shows, with how Escape must render them.
var hostile = []struct {
	name, in, want string
}{
	{"plain", "report.txt", "report.txt"},
	{"unicode letters", "résumé-日本.txt", "résumé-日本.txt"},
	{"space", "my file", "my file"},
	{"backslash doubled", `a\x1b`, `a\\x1b`},
	{"newline", "a\nb", `a\nb`},
	{"tab", "a\tb", `a\tb`},
	{"carriage return overwrites line", "safe.txt\rrm -rf ~", `safe.txt\rrm -rf ~`},
	{"erase line CSI", "x\x1b[2K\x1b[1Gok", `x\x1b[2K\x1b[1Gok`},
	{"cursor up", "\x1b[1A\x1b[2Kdone", `\x1b[1A\x1b[2Kdone`},
	{"color", "\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
	{"OSC 8 link BEL", "\x1b]8;;http://evil/\x07click\x1b]8;;\x07", `\x1b]8;;http://evil/\x07click\x1b]8;;\x07`},
	{"OSC 8 link ST", "\x1b]8;;http://evil/\x1b\\click", `\x1b]8;;http://evil/\x1b\\click`},
	{"OSC title", "\x1b]0;owned\x07", `\x1b]0;owned\x07`},
	{"C1 CSI rune", "\u009b2J", `\u009b2J`},
	{"C1 CSI raw byte", "\x9b2J", `\x9b2J`},
	{"NEL", "a\u0085b", `a\u0085b`},
	{"RTL override", "invoice\u202egpj.exe", `invoice\u202egpj.exe`},
	{"LTR override", "a\u202db", `a\u202db`},
	{"RTL isolate", "a\u2067b\u2069", `a\u2067b\u2069`},
	{"LRM RLM", "a\u200eb\u200fc", `a\u200eb\u200fc`},
	{"arabic letter mark", "a\u061cb", `a\u061cb`},
	{"zero width space", "rm\u200b", `rm\u200b`},
	{"zero width joiner", "a\u200db", `a\u200db`},
	{"BOM", "\ufeffa", `\ufeffa`},
	{"word joiner", "a\u2060b", `a\u2060b`},
	{"soft hyphen", "a\u00adb", `a\u00adb`},
	{"no-break space", "a\u00a0b", `a\u00a0b`},
	{"line separator", "a\u2028b", `a\u2028b`},
	{"hangul filler", "a\u3164b", `a\u3164b`},
	{"tag character", "a\U000e0041", `a\U000e0041`},
	{"private use", "\ue000", `\ue000`},
	{"invalid utf8", "a\xffb\xc3", `a\xffb\xc3`},
	{"surrogate bytes", "\xed\xa0\x80", `\xed\xa0\x80`},
	{"NUL", "a\x00b", `a\x00b`},
	{"DEL", "a\x7fb", `a\x7fb`},
	{"bell backspace", "a\x07\x08b", `a\x07\x08b`},
	{"empty", "", ""},
}

func TestEscape(t *testing.T) {
	for _, tt := range hostile {
		t.Run(tt.name, func(t *testing.T) {
			got := Escape(tt.in)
			if got != tt.want {
				t.Errorf("Escape(%q) = %q, want %q", tt.in, got, tt.want)
			}
			assertSafe(t, got, false)
		})
	}
}

func TestEscapeText(t *testing.T) {
	tests := []struct{ in, want string }{
		{"echo hi\nls -l\n", "echo hi\nls -l\n"},
		{"find . -exec rm {} \\;", "find . -exec rm {} \\;"},
		{"echo a\rb", `echo a\rb`},
		{"\x1b[2Kecho safe\n", "\\x1b[2Kecho safe\n"},
		{"a\tb\n\u202ec", "a\\tb\n\\u202ec"},
		{"bad \xff\n", "bad \\xff\n"},
	}
	for _, tt := range tests {
		got := EscapeText(tt.in)
		if got != tt.want {
			t.Errorf("EscapeText(%q) = %q, want %q", tt.in, got, tt.want)
		}
		assertSafe(t, got, true)
	}
}

func TestEscapeLongName(t *testing.T) {
	long := strings.Repeat("\x1b[2K", 2500) // 10,000 bytes
	got := Escape(long)
	if want := strings.Repeat(`\x1b[2K`, 2500); got != want {
		t.Errorf("Escape of a 10,000-byte name: got %d bytes, want %d", len(got), len(want))
	}
	assertSafe(t, got, false)
	name := strings.Repeat("a", 10000)
	if got := Escape(name); got != name {
		t.Errorf("Escape changed a plain 10,000-character name")
	}
}

func TestEscapeNoAlloc(t *testing.T) {
	s := "/home/user/src/nash/effects/escape.go"
	if n := testing.AllocsPerRun(100, func() { _ = Escape(s) }); n != 0 {
		t.Errorf("Escape of a plain path allocates %v times, want 0", n)
	}
}

func TestQuote(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "''"},
		{"report.txt", "report.txt"},
		{"/home/u/a-b_c.d", "/home/u/a-b_c.d"},
		{"my file", "'my file'"},
		{"it's", `'it'\''s'`},
		{"$HOME", "'$HOME'"},
		{"~user", "'~user'"},
		{"a~b", "a~b"},
		{"*.go", "'*.go'"},
		{"a\nb", `$'a\nb'`},
		{"it's\x1b[2K", `$'it\'s\x1b[2K'`},
		{`back\slash`, `'back\slash'`},
		{"x\u202eexe.txt", `$'x\u202eexe.txt'`},
		{"bad\xff", `$'bad\xff'`},
		{"résumé", "résumé"},
	}
	for _, tt := range tests {
		got := Quote(tt.in)
		if got != tt.want {
			t.Errorf("Quote(%q) = %q, want %q", tt.in, got, tt.want)
		}
		assertSafe(t, got, false)
	}
}

// assertSafe fails when s holds anything a terminal could act on or hide.
func assertSafe(t *testing.T, s string, text bool) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Errorf("output %q is not valid UTF-8", s)
	}
	for _, r := range s {
		if r == '\n' && text {
			continue
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || !visible(r) && r >= 0x80 {
			t.Errorf("output %q holds %U", s, r)
		}
	}
}

func FuzzEscape(f *testing.F) {
	for _, tt := range hostile {
		f.Add(tt.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := Escape(s)
		assertSafe(t, e, false)
		assertSafe(t, EscapeText(s), true)
		assertSafe(t, Quote(s), false)
		if strings.ContainsRune(e, '\n') {
			t.Errorf("Escape(%q) holds a newline", s)
		}
		// Escape is injective: decoding gives s back.
		if d := unescape(e); d != s {
			t.Errorf("unescape(Escape(%q)) = %q", s, d)
		}
	})
}

// unescape reverses Escape, to check that it loses nothing.
func unescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '\\':
			b.WriteByte('\\')
		case 'x':
			var v byte
			fmt.Sscanf(s[i+1:i+3], "%02x", &v)
			b.WriteByte(v)
			i += 2
		case 'u':
			var v rune
			fmt.Sscanf(s[i+1:i+5], "%04x", &v)
			b.WriteRune(v)
			i += 4
		case 'U':
			var v rune
			fmt.Sscanf(s[i+1:i+9], "%08x", &v)
			b.WriteRune(v)
			i += 8
		}
	}
	return b.String()
}

func ExampleEscape() {
	fmt.Println(Escape("invoice\u202egpj.exe"))
	fmt.Println(Escape("ok\x1b[2K\rrm -rf ~"))
	// Output:
	// invoice\u202egpj.exe
	// ok\x1b[2K\rrm -rf ~
}

func ExampleQuote() {
	fmt.Println(Quote("notes.txt"))
	fmt.Println(Quote("my notes.txt"))
	fmt.Println(Quote("evil\x1b]8;;http://x/\x07.txt"))
	// Output:
	// notes.txt
	// 'my notes.txt'
	// $'evil\x1b]8;;http://x/\x07.txt'
}

func ExampleEscapeText() {
	fmt.Print(EscapeText("echo 'done'\x1b[1A\x1b[2K\nrm -rf ~\n"))
	// Output:
	// echo 'done'\x1b[1A\x1b[2K
	// rm -rf ~
}

// TestWriteJSON: C1 controls and bidi controls (and every other rune
// Escape makes visible) come out of WriteJSON escaped, and read back.
func TestWriteJSON(t *testing.T) {
	in := map[string]string{"path": "a\u0085b\u009b2J\u202ec\u2066d\u2069\u200e\u200f\u061c\u202a\u202b\u202c\u202d<&>"}
	for _, indent := range []bool{false, true} {
		var b strings.Builder
		if err := WriteJSON(&b, in, indent); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, r := range in["path"] {
			if r >= 0x80 && strings.ContainsRune(out, r) {
				t.Errorf("WriteJSON(indent %v) leaves U+%04X raw: %q", indent, r, out)
			}
		}
		var back map[string]string
		if err := json.Unmarshal([]byte(out), &back); err != nil || back["path"] != in["path"] {
			t.Errorf("WriteJSON(indent %v) = %q reads back as %q, %v", indent, out, back["path"], err)
		}
		if !strings.HasSuffix(out, "}\n") {
			t.Errorf("WriteJSON(indent %v) = %q: no final newline", indent, out)
		}
	}
}
