package planner

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"unicode/utf8"
)

// System describes the machine a script will run on. It goes into every
// request so the model picks tools that exist there.
type System struct {
	OS     string // "linux"
	Distro string // PRETTY_NAME from /etc/os-release
	Shell  string // the shell scripts run with
	User   string
	Home   string
}

// DetectSystem fills a System from getenv and /etc/os-release. Scripts are
// always run with bash by nash, whatever $SHELL says.
func DetectSystem(getenv func(string) string) System {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	s := System{OS: runtime.GOOS, Shell: "bash", User: getenv("USER"), Home: getenv("HOME")}
	if s.User == "" {
		s.User = getenv("LOGNAME")
	}
	if f, err := os.Open("/etc/os-release"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "PRETTY_NAME="); ok {
				s.Distro = strings.Trim(v, `"'`)
			}
		}
	}
	return s
}

// HistoryEntry is one earlier step of the session, most recent last in a
// Request.
type HistoryEntry struct {
	Prompt   string // what the person asked; empty for a typed command
	Script   string // what ran; empty when the step was an answer
	ExitCode int
	Output   string // combined output; the planner truncates it
	Answer   string // the answer given instead of a script, in Markdown
}

// Request is one thing the person asked for.
type Request struct {
	Prompt  string
	Cwd     string         // working directory; its listing goes in the prompt
	History []HistoryEntry // recent session history, oldest first

	// Input is text piped to nash, sent with the request within
	// InputBudget; PromptStats.Input says how much of it went.
	Input *Input

	// Stream, when set, receives the model's answer as it arrives (see
	// Progress), from one goroutine at a time, in order. It must return
	// quickly: it holds up the reading of the answer. Cancel the request's
	// context to stop it.
	Stream func(Progress)
}

// Document is a file the index found for a request.
type Document struct {
	Path    string
	Snippet string // the matching part of the text
	Score   float64
}

// Retriever finds files by what they contain. The index package implements
// it; the planner calls it only when a request names files by content.
type Retriever interface {
	Retrieve(ctx context.Context, query string, k int) ([]Document, error)
}

// EstimateTokens estimates how many tokens s costs: about four bytes of
// English or shell per token, as BPE tokenizers average. It does not
// download a tokenizer.
func EstimateTokens(s string) int {
	if s == "" {
		return 0
	}
	n := utf8.RuneCountInString(s)
	return (n + 3) / 4
}

// listDir returns a bounded listing of dir: at most limit entries, names
// escaped, directories marked with a slash, and a count of the rest. It
// reads at most limit entries plus maxCount names, so a huge directory
// costs little; the entries shown are the first limit in directory order,
// sorted.
func listDir(dir string, limit int) (string, error) {
	const maxCount = 10000
	f, err := os.Open(dir)
	if err != nil {
		return "", fmt.Errorf("list %s: %w", dir, err)
	}
	defer f.Close()
	entries, err := f.ReadDir(limit)
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("list %s: %w", dir, err)
	}
	rest := 0
	if len(entries) == limit {
		more, err := f.Readdirnames(maxCount)
		if err != nil && !errors.Is(err, io.EOF) {
			return "", fmt.Errorf("list %s: %w", dir, err)
		}
		rest = len(more)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		n := escapeName(e.Name())
		if e.IsDir() {
			n += "/"
		} else if e.Type()&os.ModeSymlink != 0 {
			n += "@"
		}
		names = append(names, n)
	}
	slices.Sort(names)
	var b strings.Builder
	b.WriteString(strings.Join(names, "  "))
	switch {
	case rest == maxCount:
		fmt.Fprintf(&b, "  (and more than %d more)", rest)
	case rest > 0:
		fmt.Fprintf(&b, "  (and %d more)", rest)
	}
	if len(entries) == 0 {
		b.WriteString("(empty)")
	}
	return b.String(), nil
}

// escapeName quotes control characters so that a hostile file name cannot
// inject lines into the prompt.
func escapeName(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f || r == utf8.RuneError }) {
		return s
	}
	q := fmt.Sprintf("%q", s)
	return q
}

// truncateMiddle keeps the start and end of s within n bytes.
func truncateMiddle(s string, n int) string {
	if len(s) <= n {
		return s
	}
	half := n / 2
	head, tail := s[:half], s[len(s)-half:]
	for len(head) > 0 && !utf8.ValidString(head) {
		head = head[:len(head)-1]
	}
	for len(tail) > 0 && !utf8.ValidString(tail) {
		tail = tail[1:]
	}
	return head + fmt.Sprintf("\n… (%d bytes cut) …\n", len(s)-len(head)-len(tail)) + tail
}

// wantsRetrieval reports whether a prompt names files by what they contain,
// so that asking the index is worth it.
func wantsRetrieval(prompt string) bool {
	l := " " + strings.ToLower(prompt) + " "
	for _, p := range []string{
		" about ", " mention", " contain", " containing ", " related to ", " regarding ",
		" talk about ", " talks about ", " discuss", " that say", " which say", " whose content",
		" on the topic", " with the word", " refer to ", " refers to ", " concerning ",
	} {
		if strings.Contains(l, p) {
			return true
		}
	}
	return false
}

// relPath shows p relative to home as ~/..., for shorter prompts.
func relPath(p, home string) string {
	if home == "" || home == "/" {
		return p
	}
	if p == home {
		return "~"
	}
	if r, ok := strings.CutPrefix(p, home+string(filepath.Separator)); ok {
		return "~/" + r
	}
	return p
}
