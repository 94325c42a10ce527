// Package conversation keeps what nash and the model said to each other,
// so that it can go on later: nash -c --continue sends the last one-shot
// exchange back with the next request, and nash --resume starts the shell
// where its last session left off (its directory and what the planner saw
// of it). Conversations live as small JSON files under the state
// directory, written atomically, the newest MaxConversations kept.
//
// The environment of a session is not kept: it may hold secrets.
package conversation

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/nash-shell/nash/internal/atomicfile"
	"github.com/nash-shell/nash/planner"
)

// Bounds on what is kept.
const (
	// MaxExchanges is how many exchanges a conversation keeps, the newest.
	MaxExchanges = 50
	// MaxOutput is how many bytes of a script's output an exchange keeps
	// (its start and its end).
	MaxOutput = 2 << 10
	// MaxConversations is how many conversations the store keeps.
	MaxConversations = 100
)

// Dir is the directory of conversations in the state directory.
const Dir = "conversations"

// Kinds of conversation.
const (
	OneShot = "oneshot" // nash -c
	Shell   = "shell"   // the interactive shell
)

// ErrNone is matched by errors.Is when there is no conversation to go on
// with.
var ErrNone = errors.New("no conversation to go on with")

// Exchange is one step: what was asked, and what came of it.
type Exchange struct {
	Time   time.Time `json:"time"`
	Prompt string    `json:"prompt,omitempty"` // "" for a typed command
	Dir    string    `json:"dir,omitempty"`
	// Kind is "script", "answer" or "question" (planner.Kind), or
	// "command" for a command typed as is.
	Kind     string `json:"kind"`
	Script   string `json:"script,omitempty"`
	Answer   string `json:"answer,omitempty"` // the answer, or the question asked
	ExitCode int    `json:"exit_code,omitempty"`
	Output   string `json:"output,omitempty"` // cut to MaxOutput
	TxID     string `json:"tx,omitempty"`     // the transaction it committed
	Model    string `json:"model,omitempty"`
}

// Conversation is a sequence of exchanges: a chain of nash -c --continue,
// or a shell session.
type Conversation struct {
	ID        string     `json:"id"`
	Kind      string     `json:"kind"`
	Started   time.Time  `json:"started"`
	Updated   time.Time  `json:"updated"`
	Dir       string     `json:"dir,omitempty"` // the working directory at the end
	Exchanges []Exchange `json:"exchanges"`
}

// Add appends e, cutting its output and dropping the oldest exchanges
// beyond MaxExchanges, and moves the conversation's directory to e's.
func (c *Conversation) Add(e Exchange) {
	e.Output = cutMiddle(e.Output, MaxOutput)
	c.Exchanges = append(c.Exchanges, e)
	if n := len(c.Exchanges) - MaxExchanges; n > 0 {
		c.Exchanges = slices.Delete(c.Exchanges, 0, n)
	}
	if e.Dir != "" {
		c.Dir = e.Dir
	}
	if e.Time.After(c.Updated) {
		c.Updated = e.Time
	}
}

// History is the conversation as the planner reads it, oldest first.
func (c *Conversation) History() []planner.HistoryEntry {
	h := make([]planner.HistoryEntry, 0, len(c.Exchanges))
	for _, e := range c.Exchanges {
		he := planner.HistoryEntry{Prompt: e.Prompt, Script: e.Script, ExitCode: e.ExitCode, Output: e.Output}
		switch e.Kind {
		case "answer":
			he.Answer = e.Answer
		case "question":
			// A question the model asked: the person's answer is the
			// next prompt.
			he.Answer = "(asked) " + e.Answer
		}
		h = append(h, he)
	}
	return h
}

// Store keeps conversations in a directory.
type Store struct {
	dir string
	now func() time.Time
}

// Open returns the store in stateDir/conversations; it is created on the
// first Save.
func Open(stateDir string) *Store {
	return &Store{dir: filepath.Join(stateDir, Dir), now: time.Now}
}

// New starts a conversation of kind (OneShot or Shell) in dir.
func (s *Store) New(kind, dir string) *Conversation {
	now := s.now().UTC()
	var r [3]byte
	_, _ = rand.Read(r[:])
	return &Conversation{
		ID:      now.Format("20060102-150405") + "-" + hex.EncodeToString(r[:]),
		Kind:    kind,
		Started: now,
		Updated: now,
		Dir:     dir,
	}
}

// Save writes c, marks it the last of its kind, and drops the oldest
// conversations beyond MaxConversations.
func (s *Store) Save(c *Conversation) error {
	if !validID(c.ID) || !validKind(c.Kind) {
		return fmt.Errorf("save conversation: bad id %q or kind %q", c.ID, c.Kind)
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("save conversation: %w", err)
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("save conversation: %w", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(s.dir, c.ID+".json"), append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("save conversation: %w", err)
	}
	if err := atomicfile.WriteFile(filepath.Join(s.dir, "last-"+c.Kind), []byte(c.ID+"\n"), 0o600); err != nil {
		return fmt.Errorf("save conversation: %w", err)
	}
	return s.prune()
}

// Load reads the conversation id.
func (s *Store) Load(id string) (*Conversation, error) {
	if !validID(id) {
		return nil, fmt.Errorf("no conversation %q", id)
	}
	b, err := os.ReadFile(filepath.Join(s.dir, id+".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("conversation %s: %w", id, ErrNone)
	}
	if err != nil {
		return nil, fmt.Errorf("read conversation: %w", err)
	}
	var c Conversation
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("read conversation %s: %w", id, err)
	}
	return &c, nil
}

// Last reads the conversation of kind saved last; ErrNone when there is
// none.
func (s *Store) Last(kind string) (*Conversation, error) {
	if !validKind(kind) {
		return nil, fmt.Errorf("no conversation kind %q", kind)
	}
	b, err := os.ReadFile(filepath.Join(s.dir, "last-"+kind))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNone
	}
	if err != nil {
		return nil, fmt.Errorf("read conversation: %w", err)
	}
	return s.Load(strings.TrimSpace(string(b)))
}

// prune removes the oldest conversations beyond MaxConversations, by
// modification time; one marked last is kept whatever its age.
func (s *Store) prune() error {
	ents, err := os.ReadDir(s.dir)
	if err != nil {
		return fmt.Errorf("prune conversations: %w", err)
	}
	type file struct {
		name string
		mod  time.Time
	}
	var files []file
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".json") || !validID(strings.TrimSuffix(e.Name(), ".json")) {
			continue
		}
		if fi, err := e.Info(); err == nil {
			files = append(files, file{e.Name(), fi.ModTime()})
		}
	}
	if len(files) <= MaxConversations {
		return nil
	}
	keep := map[string]bool{}
	for _, k := range []string{OneShot, Shell} {
		if b, err := os.ReadFile(filepath.Join(s.dir, "last-"+k)); err == nil {
			keep[strings.TrimSpace(string(b))+".json"] = true
		}
	}
	slices.SortFunc(files, func(a, b file) int { return b.mod.Compare(a.mod) })
	for _, f := range files[MaxConversations:] {
		if keep[f.name] {
			continue
		}
		if err := os.Remove(filepath.Join(s.dir, f.name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("prune conversations: %w", err)
		}
	}
	return nil
}

func validKind(k string) bool { return k == OneShot || k == Shell }

// validID accepts the ids New makes: digits, a dash, hex.
func validID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, r := range id {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f' || r == '-') {
			return false
		}
	}
	return true
}

// cutMiddle keeps the start and end of s within n bytes, saying how much
// was cut, on rune boundaries.
func cutMiddle(s string, n int) string {
	if len(s) <= n {
		return s
	}
	h := n / 4
	t := n - h
	for h > 0 && !isRuneStart(s[h]) {
		h--
	}
	start := len(s) - t
	for start < len(s) && !isRuneStart(s[start]) {
		start++
	}
	return s[:h] + fmt.Sprintf("\n[… %d bytes cut …]\n", start-h) + s[start:]
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
