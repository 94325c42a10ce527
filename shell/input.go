package shell

import (
	"strings"
	"unicode"

	tea "charm.land/bubbletea/v2"
)

// lineInput is a one-line editor with the usual readline keys.
type lineInput struct {
	r   []rune
	pos int
}

func (l *lineInput) String() string { return string(l.r) }

func (l *lineInput) set(s string) {
	l.r = []rune(s)
	l.pos = len(l.r)
}

func (l *lineInput) reset() { l.r, l.pos = l.r[:0], 0 }

// update applies an editing key and reports whether the text changed.
func (l *lineInput) update(k tea.KeyPressMsg) (changed bool) {
	switch k.String() {
	case "backspace", "ctrl+h":
		if l.pos > 0 {
			l.r = append(l.r[:l.pos-1], l.r[l.pos:]...)
			l.pos--
			return true
		}
	case "delete":
		if l.pos < len(l.r) {
			l.r = append(l.r[:l.pos], l.r[l.pos+1:]...)
			return true
		}
	case "left", "ctrl+b":
		if l.pos > 0 {
			l.pos--
		}
	case "right", "ctrl+f":
		if l.pos < len(l.r) {
			l.pos++
		}
	case "home", "ctrl+a":
		l.pos = 0
	case "end", "ctrl+e":
		l.pos = len(l.r)
	case "ctrl+u":
		if l.pos > 0 {
			l.r = append(l.r[:0], l.r[l.pos:]...)
			l.pos = 0
			return true
		}
	case "ctrl+k":
		if l.pos < len(l.r) {
			l.r = l.r[:l.pos]
			return true
		}
	case "ctrl+w":
		i := l.pos
		for i > 0 && l.r[i-1] == ' ' {
			i--
		}
		for i > 0 && l.r[i-1] != ' ' {
			i--
		}
		if i < l.pos {
			l.r = append(l.r[:i], l.r[l.pos:]...)
			l.pos = i
			return true
		}
	default:
		if k.Mod&^tea.ModShift == 0 && k.Text != "" {
			return l.insert(k.Text)
		}
	}
	return false
}

// insert puts text at the cursor, as typed or pasted, and reports whether
// anything was inserted. A paste may bring newlines and tabs: the line
// stays one line, and control characters are dropped.
func (l *lineInput) insert(text string) bool {
	clean := make([]rune, 0, len(text))
	for _, r := range text {
		switch {
		case r == '\n' || r == '\r' || r == '\t':
			clean = append(clean, ' ')
		case unicode.IsControl(r):
		default:
			clean = append(clean, r)
		}
	}
	l.r = append(l.r[:l.pos], append(clean, l.r[l.pos:]...)...)
	l.pos += len(clean)
	return len(clean) > 0
}

// view draws the text with a block cursor. Control characters cannot be
// in it (update drops them), so it is safe to print.
func (l *lineInput) view(cursor func(string) string) string {
	var b strings.Builder
	b.WriteString(string(l.r[:l.pos]))
	if l.pos < len(l.r) {
		b.WriteString(cursor(string(l.r[l.pos])))
		b.WriteString(string(l.r[l.pos+1:]))
	} else {
		b.WriteString(cursor(" "))
	}
	return b.String()
}
