package shell

import (
	"fmt"
	"strings"
	"unicode"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/nash-shell/nash/effects"
)

// maxListed bounds the names a second Tab lists.
const maxListed = 100

// Complete is what Tab does at cursor (a rune index) in line, in this
// session: see complete. In a line that goes to the model (a request, a
// typo, ?…) only a command's name completes, not its arguments.
func (s *State) Complete(line string, cursor int) Completion {
	r := []rune(line)
	cursor = max(0, min(cursor, len(r)))
	if w := lastWord(r, cursor); w.index > 0 {
		// The line as far as the cursor, its open quote closed, is
		// what the person has typed of it so far.
		typed := string(r[:cursor])
		if w.quote != 0 {
			typed += string(w.quote)
		}
		if k := s.Route(typed).Kind; k == English || k == Typo {
			return Completion{Start: w.start, End: cursor}
		}
	}
	return s.complete(r, cursor)
}

// tab completes the word under the cursor: one candidate completes in
// place, several complete their common prefix, and a second Tab in a row
// lists them (as readline does, the Tab that completed the prefix counts
// as the first). Nothing matching: nothing happens.
func (m *model) tab() (tea.Model, tea.Cmd) {
	m.tabs++
	c := m.st.Complete(m.input.String(), m.input.pos)
	if len(c.Candidates) == 0 {
		return m, nil
	}
	before := string(m.input.r[c.Start:c.End])
	if c.Insert != before && strings.HasPrefix(c.Insert, before) || c.Unique() {
		m.input.r = append(m.input.r[:c.Start], append([]rune(c.Insert), m.input.r[c.End:]...)...)
		m.input.pos = c.Start + len([]rune(c.Insert))
		m.reroute()
		if c.Unique() {
			m.tabs = 0
		}
		return m, nil
	}
	if m.tabs < 2 {
		return m, nil
	}
	m.tabs = 0
	return m, m.println(listColumns(c.Candidates, m.width))
}

// listColumns lays names out in columns across width, as bash lists
// completions, at most maxListed of them. Names are escaped for the
// terminal.
func listColumns(names []string, width int) string {
	more := 0
	if len(names) > maxListed {
		more = len(names) - maxListed
		names = names[:maxListed]
	}
	shown := make([]string, len(names))
	colw := 0
	for i, n := range names {
		shown[i] = effects.Escape(n)
		colw = max(colw, ansi.StringWidth(shown[i])+2)
	}
	cols := max(1, (width-1)/colw)
	rows := (len(shown) + cols - 1) / cols
	var b strings.Builder
	for r := 0; r < rows; r++ {
		var line strings.Builder
		for c := 0; c < cols; c++ {
			i := c*rows + r
			if i >= len(shown) {
				break
			}
			line.WriteString(shown[i])
			if c < cols-1 && i+rows < len(shown) {
				line.WriteString(strings.Repeat(" ", colw-ansi.StringWidth(shown[i])))
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " "))
		if r < rows-1 || more > 0 {
			b.WriteByte('\n')
		}
	}
	if more > 0 {
		fmt.Fprintf(&b, "… and %d more: type more of the name", more)
	}
	return b.String()
}

// printable reports whether a name can be completed: one with a control
// character in it is left out (it could not be typed, nor shown safely).
func printable(n string) bool {
	for _, r := range n {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}
