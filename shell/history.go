package shell

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// MaxHistory is how many lines the history keeps.
const MaxHistory = 20000

// History is the lines typed, oldest first, kept in a file of JSON strings
// one a line, so a line holding a newline stays one entry. Each Add appends
// to the file, so several nash sessions add to one history.
type History struct {
	path    string // "" keeps the history in memory only
	entries []string
}

// LoadHistory reads the history file at path; a missing file is an empty
// history, and unreadable lines are skipped.
func LoadHistory(path string) (*History, error) {
	h := &History{path: path}
	if path == "" {
		return h, nil
	}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return h, nil
	}
	if err != nil {
		return h, fmt.Errorf("read history: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var s string
		if json.Unmarshal(sc.Bytes(), &s) == nil && s != "" {
			h.entries = append(h.entries, s)
		}
	}
	if len(h.entries) > MaxHistory {
		h.entries = h.entries[len(h.entries)-MaxHistory:]
	}
	return h, sc.Err()
}

// NewHistory returns a history in memory holding entries.
func NewHistory(entries []string) *History { return &History{entries: entries} }

// Len is the number of entries.
func (h *History) Len() int { return len(h.entries) }

// At returns entry i, 0 being the oldest.
func (h *History) At(i int) string { return h.entries[i] }

// Add appends line and saves it; see Append.
func (h *History) Add(line string) error {
	line = strings.TrimRight(line, "\n")
	if !h.Append(line) {
		return nil
	}
	return h.Save(line)
}

// Append adds line in memory, unless it is empty, starts with a space (as
// with HISTCONTROL=ignorespace) or repeats the last entry; it reports
// whether it did.
func (h *History) Append(line string) bool {
	if strings.TrimSpace(line) == "" || strings.HasPrefix(line, " ") {
		return false
	}
	if n := len(h.entries); n > 0 && h.entries[n-1] == line {
		return false
	}
	h.entries = append(h.entries, line)
	return true
}

// Save appends line to the history file. It only reads h's path, so it
// may run in another goroutine than Append.
func (h *History) Save(line string) error {
	if h.path == "" {
		return nil
	}
	b, err := json.Marshal(line)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(h.path), 0o700); err != nil {
		return fmt.Errorf("save history: %w", err)
	}
	f, err := os.OpenFile(h.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("save history: %w", err)
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("save history: %w", err)
	}
	return nil
}

// Search returns the index of the newest entry before index before that
// contains q, or -1.
func (h *History) Search(q string, before int) int {
	if before > len(h.entries) {
		before = len(h.entries)
	}
	for i := before - 1; i >= 0; i-- {
		if strings.Contains(h.entries[i], q) {
			return i
		}
	}
	return -1
}
