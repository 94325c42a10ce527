package shell

import (
	"strings"
	"unicode"

	tea "github.com/charmbracelet/bubbletea"
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
func (l *lineInput) update(k tea.KeyMsg) (changed bool) {
	switch k.Type {
	case tea.KeyRunes, tea.KeySpace:
		rs := k.Runes
		if k.Type == tea.KeySpace {
			rs = []rune{' '}
		}
		// A paste may bring newlines and tabs: keep it one line.
		clean := make([]rune, 0, len(rs))
		for _, r := range rs {
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
	case tea.KeyBackspace, tea.KeyCtrlH:
		if l.pos > 0 {
			l.r = append(l.r[:l.pos-1], l.r[l.pos:]...)
			l.pos--
			return true
		}
	case tea.KeyDelete:
		if l.pos < len(l.r) {
			l.r = append(l.r[:l.pos], l.r[l.pos+1:]...)
			return true
		}
	case tea.KeyLeft, tea.KeyCtrlB:
		if l.pos > 0 {
			l.pos--
		}
	case tea.KeyRight, tea.KeyCtrlF:
		if l.pos < len(l.r) {
			l.pos++
		}
	case tea.KeyHome, tea.KeyCtrlA:
		l.pos = 0
	case tea.KeyEnd, tea.KeyCtrlE:
		l.pos = len(l.r)
	case tea.KeyCtrlU:
		if l.pos > 0 {
			l.r = append(l.r[:0], l.r[l.pos:]...)
			l.pos = 0
			return true
		}
	case tea.KeyCtrlK:
		if l.pos < len(l.r) {
			l.r = l.r[:l.pos]
			return true
		}
	case tea.KeyCtrlW:
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
	}
	return false
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
