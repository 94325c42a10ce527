package shell

import (
	"strings"
	"testing"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
)

// FuzzRouteLine: any line routes without panicking, a forced prefix always
// wins, and the text sent on is the line without its prefix.
func FuzzRouteLine(f *testing.F) {
	for _, s := range []string{"ls -la", "tidy up my photos", "!rm -r x", "?ls", ":undo 3", "cd -", "export A=$B", "f() { :; }; f", "$(", "'", "for"} {
		f.Add(s)
	}
	isCmd := func(n string) bool { return n == "ls" || n == "git" }
	f.Fuzz(func(t *testing.T, line string) {
		r := RouteLine(line, isCmd)
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "?") && r.Kind != Empty && r.Kind != English:
			t.Errorf("%q: ? gave %v", line, r.Kind)
		case strings.HasPrefix(trimmed, "!") && r.Kind != Empty && r.Kind != Command && r.Kind != Session:
			t.Errorf("%q: ! gave %v", line, r.Kind)
		}
		if r.Kind != Empty && !strings.Contains(trimmed, r.Text) {
			t.Errorf("%q: text %q is not part of the line", line, r.Text)
		}
	})
}

// FuzzLineInput: any keys keep the cursor inside the line and the line
// free of control characters, so drawing it is safe.
func FuzzLineInput(f *testing.F) {
	f.Add("hello world", []byte{0, 1, 2, 3, 4, 5, 6, 7, 8})
	f.Add("\x1b[31mred\n", []byte{9, 9, 1})
	keys := []string{"backspace", "delete", "left", "right", "home", "end", "ctrl+u", "ctrl+k", "ctrl+w", "text"}
	f.Fuzz(func(t *testing.T, text string, ops []byte) {
		if !utf8.ValidString(text) {
			return
		}
		var l lineInput
		for _, op := range ops {
			if name := keys[int(op)%len(keys)]; name == "text" {
				l.update(tea.KeyPressMsg{Code: tea.KeyExtended, Text: text})
			} else {
				l.update(keyMsg(name))
			}
			if l.pos < 0 || l.pos > len(l.r) {
				t.Fatalf("cursor %d outside a line of %d", l.pos, len(l.r))
			}
		}
		for _, r := range l.r {
			if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
				t.Fatalf("control character %U in the line %q", r, string(l.r))
			}
		}
	})
}
