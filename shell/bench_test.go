package shell

import (
	"fmt"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// benchModel is a REPL model with n history entries.
func benchModel(b *testing.B, n int) *model {
	b.Helper()
	entries := make([]string, n)
	for i := range entries {
		entries[i] = fmt.Sprintf("git commit -m 'change number %d' && echo done %d", i, i)
	}
	m := newTestModel(b, &fakePlanner{}, &fakeSandbox{})
	m.hist = NewHistory(entries)
	m.histPos = n
	m.width = 120
	return m
}

// BenchmarkKeystrokeRedraw is one key typed at the prompt: Update (with
// the route recomputed) and View, as bubbletea does per key, with 10,000
// history entries. Budget: 16 ms.
func BenchmarkKeystrokeRedraw(b *testing.B) {
	for _, mode := range []string{"type", "history-up", "search"} {
		b.Run(mode, func(b *testing.B) {
			m := benchModel(b, 10000)
			typeText(m, "find the biggest log files under var and ")
			if mode == "search" {
				m.Update(keyMsg("ctrl+r"))
			}
			keys := []tea.KeyPressMsg{{Code: 'x', Text: "x"}, keyMsg("backspace")}
			if mode == "history-up" {
				keys = []tea.KeyPressMsg{keyMsg("up"), keyMsg("down")}
			}
			if mode == "search" {
				// A query that matches nothing scans all 10,000 entries.
				keys = []tea.KeyPressMsg{{Code: '#', Text: "#"}, keyMsg("backspace")}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				m.Update(keys[i%2])
				_ = m.View()
			}
		})
	}
}
