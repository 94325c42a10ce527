package shell

import (
	"strings"
	"time"
	"unicode"

	tea "charm.land/bubbletea/v2"
)

// typedAhead turns what a script's terminal held unread after the run
// into text for the prompt. Its line discipline has applied the person's
// edits already; lines end in "\n" (a "\r" ends one too, for a terminal
// that does not map it); a tab stays a tab (it completes); escape
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
			out.WriteByte('\t')
		case c == 0x1b:
			i = skipEscape(b, i)
		case c < 0x20 || c == 0x7f:
		default:
			out.WriteByte(c)
		}
	}
	// C1 controls (U+0080 to U+009F) are dropped as well.
	return strings.Map(func(r rune) rune {
		if r != '\n' && r != '\t' && unicode.IsControl(r) {
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

// The person's typeahead is kept as keys, in the order typed: keys
// pressed while nash itself works (the planner, the sandbox starting or
// its changes being read) and, in between, what they typed while the
// script ran that it left unread. Once the prompt is back they are played
// into it, as bash's readline reads typeahead: a line whose Enter was
// typed runs, Tab completes, an unfinished line waits in the editor. A
// question drops them: a key typed before a question appeared never
// answers it.

// holdKey keeps a key pressed while nash works, for the prompt.
func (m *model) holdKey(k tea.KeyPressMsg) {
	switch k.String() {
	case "ctrl+c", "ctrl+d":
		// ctrl+c has done its work (cancelled, or reached the script);
		// ctrl+d would end nash at the prompt.
		return
	}
	m.typed = append(m.typed, k)
}

// runTypeahead schedules what the script left unread for the held keys,
// where the shell does not read the terminal itself (ttyinput.go puts it
// in its place among the keys instead): after the keys bubbletea read
// before the run took the terminal, which it may deliver only once the
// run is over. They come at once; typeaheadSettle later the unread keys
// follow them.
func (m *model) runTypeahead(b []byte) tea.Cmd {
	keys := keysOf(typedAhead(b))
	if len(keys) == 0 {
		return nil
	}
	return tea.Tick(typeaheadSettle, func(time.Time) tea.Msg { return typeaheadMsg{keys} })
}

// typeaheadSettle is how long the unread keys wait for the keys bubbletea
// still holds from before the run.
const typeaheadSettle = 30 * time.Millisecond

// typeaheadMsg brings the keys a run left unread.
type typeaheadMsg struct{ keys []tea.KeyPressMsg }

// typeaheadCame holds the keys a run left unread, and plays them when the
// prompt is free; a question on the screen drops them.
func (m *model) typeaheadCame(msg typeaheadMsg) tea.Cmd {
	if asks(m.state) {
		return nil
	}
	m.typed = append(m.typed, msg.keys...)
	return m.replayTyped()
}

// keysOf is text as the keys that type it.
func keysOf(text string) []tea.KeyPressMsg {
	var keys []tea.KeyPressMsg
	for _, r := range text {
		switch r {
		case '\n':
			keys = append(keys, tea.KeyPressMsg{Code: tea.KeyEnter})
		case '\t':
			keys = append(keys, tea.KeyPressMsg{Code: tea.KeyTab})
		default:
			keys = append(keys, tea.KeyPressMsg{Code: r, Text: string(r)})
		}
	}
	return keys
}

// keyBytes is typeahead text as a terminal in raw mode sends it: Enter
// is a carriage return.
func keyBytes(text string) []byte {
	return []byte(strings.ReplaceAll(text, "\n", "\r"))
}

// dropTyped forgets the held keys: a question is on the screen.
func (m *model) dropTyped() { m.typed = nil }

// replayTyped plays the held keys into the prompt while it is free; a
// key that starts a pass leaves the rest held for the next prompt.
func (m *model) replayTyped() tea.Cmd {
	var cmds []tea.Cmd
	for len(m.typed) > 0 && m.state == stInput && !m.rcLoading && len(m.queued) == 0 {
		k := m.typed[0]
		m.typed = m.typed[1:]
		_, cmd := m.key(k)
		cmds = append(cmds, cmd)
	}
	return tea.Sequence(cmds...)
}
