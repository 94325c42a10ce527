package shell

import (
	"strings"
	"unicode"

	tea "charm.land/bubbletea/v2"
)

// typedAhead turns what a script's terminal held unread after the run
// into text for the prompt. Its line discipline has applied the person's
// edits already; lines end in "\n" (a "\r" ends one too, for a terminal
// that does not map it); a tab is a space, as in a paste; escape
// sequences (arrow keys and the like), other control characters and
// what is not UTF-8 are dropped.
func typedAhead(b []byte) string {
	var out strings.Builder
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '\n' || c == '\r':
			out.WriteByte('\n')
		case c == '\t':
			out.WriteByte(' ')
		case c == 0x1b:
			i = skipEscape(b, i)
		case c < 0x20 || c == 0x7f:
		default:
			out.WriteByte(c)
		}
	}
	// C1 controls (U+0080 to U+009F) are dropped as well.
	return strings.Map(func(r rune) rune {
		if r != '\n' && unicode.IsControl(r) {
			return -1
		}
		return r
	}, strings.ToValidUTF8(out.String(), ""))
}

// skipEscape returns the index of the last byte of the escape sequence
// that starts at b[i]: a control sequence (ESC [ … final), an SS3 key
// (ESC O x), or ESC and one character.
func skipEscape(b []byte, i int) int {
	if i+1 >= len(b) {
		return i
	}
	switch b[i+1] {
	case '[':
		for j := i + 2; j < len(b); j++ {
			if b[j] >= 0x40 && b[j] <= 0x7e {
				return j
			}
		}
		return len(b) - 1
	case 'O':
		return min(i+2, len(b)-1)
	}
	return i + 1
}

// nextAhead submits the next line typed ahead, when the prompt is free
// and no line read with ~/.bashrc waits. What is left of an unfinished
// line goes into the editor, before whatever was typed since the run.
func (m *model) nextAhead() tea.Cmd {
	if m.ahead == "" || m.rcLoading || len(m.queued) > 0 || m.state != stInput {
		return nil
	}
	line, rest, complete := strings.Cut(m.ahead, "\n")
	since := m.input.String()
	if !complete {
		m.ahead = ""
		m.input.set(line + since)
		m.reroute()
		return nil
	}
	m.ahead = rest
	m.input.set(line)
	_, cmd := m.submit()
	if since != "" {
		m.input.set(since)
		m.reroute()
	}
	if m.state == stInput {
		return tea.Sequence(cmd, m.nextAhead())
	}
	return cmd
}
