package conversation

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/nash-shell/nash/planner"
)

func testStore(t *testing.T) (*Store, *time.Time) {
	now := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	s := Open(t.TempDir())
	s.now = func() time.Time { return now }
	return s, &now
}

// TestContinue: a one-shot exchange saved is the last one-shot
// conversation; read back, it gives the planner its history, answers as
// answers and scripts with their outcome.
func TestContinue(t *testing.T) {
	s, now := testStore(t)
	if _, err := s.Last(OneShot); !errors.Is(err, ErrNone) {
		t.Fatalf("empty store: %v, want ErrNone", err)
	}
	c := s.New(OneShot, "/home/alice")
	c.Add(Exchange{Time: *now, Prompt: "how do I find my IP", Dir: "/home/alice", Kind: "answer", Answer: "Run `ip addr`."})
	c.Add(Exchange{Time: now.Add(time.Minute), Prompt: "show only IPv4", Dir: "/tmp", Kind: "script", Script: "ip -4 addr", ExitCode: 0, Output: "inet 10.0.0.2/24", TxID: ""})
	if err := s.Save(c); err != nil {
		t.Fatal(err)
	}
	got, err := s.Last(OneShot)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(c, got); diff != "" {
		t.Errorf("read back (-want +got):\n%s", diff)
	}
	if got.Dir != "/tmp" || !got.Updated.Equal(now.Add(time.Minute)) {
		t.Errorf("dir %q updated %v", got.Dir, got.Updated)
	}
	want := []planner.HistoryEntry{
		{Prompt: "how do I find my IP", Answer: "Run `ip addr`."},
		{Prompt: "show only IPv4", Script: "ip -4 addr", Output: "inet 10.0.0.2/24"},
	}
	if diff := cmp.Diff(want, got.History()); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
	if _, err := s.Last(Shell); !errors.Is(err, ErrNone) {
		t.Errorf("a one-shot conversation answered for the shell: %v", err)
	}
	fi, _ := os.Stat(filepath.Join(s.dir, c.ID+".json"))
	di, _ := os.Stat(s.dir)
	if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
		t.Errorf("modes %v %v: conversations hold outputs, they are private", fi.Mode(), di.Mode())
	}
}

// TestResume: the shell's session saved after each step resumes with its
// directory; two sessions each save under their own id, the later is last.
func TestResume(t *testing.T) {
	s, now := testStore(t)
	a := s.New(Shell, "/home/alice")
	a.Add(Exchange{Time: *now, Dir: "/home/alice/src", Kind: "command", Script: "cd src"})
	if err := s.Save(a); err != nil {
		t.Fatal(err)
	}
	*now = now.Add(time.Second)
	b := s.New(Shell, "/srv")
	if a.ID == b.ID {
		t.Fatal("two conversations share an id")
	}
	b.Add(Exchange{Time: *now, Dir: "/srv/www", Kind: "script", Prompt: "list the sites", Script: "ls"})
	if err := s.Save(b); err != nil {
		t.Fatal(err)
	}
	got, err := s.Last(Shell)
	if err != nil || got.ID != b.ID || got.Dir != "/srv/www" {
		t.Fatalf("Last = %+v, %v; want %s in /srv/www", got, err, b.ID)
	}
	if old, err := s.Load(a.ID); err != nil || old.Dir != "/home/alice/src" {
		t.Errorf("the first session: %+v, %v", old, err)
	}
}

func TestBounds(t *testing.T) {
	s, now := testStore(t)
	c := s.New(OneShot, "")
	for i := range MaxExchanges + 7 {
		c.Add(Exchange{Time: now.Add(time.Duration(i) * time.Second), Kind: "command", Script: fmt.Sprint("echo ", i)})
	}
	if len(c.Exchanges) != MaxExchanges || c.Exchanges[0].Script != "echo 7" {
		t.Errorf("%d exchanges, first %q", len(c.Exchanges), c.Exchanges[0].Script)
	}
	out := strings.Repeat("é", 3000) + "THE END"
	c.Add(Exchange{Kind: "script", Script: "x", Output: out})
	got := c.Exchanges[len(c.Exchanges)-1].Output
	if len(got) > MaxOutput+40 || !strings.HasSuffix(got, "THE END") || !strings.Contains(got, "bytes cut") || !strings.HasPrefix(got, "é") {
		t.Errorf("output cut to %d bytes: %.40q … %q", len(got), got, got[len(got)-20:])
	}
	for _, r := range got {
		if r == '\uFFFD' {
			t.Fatal("a character was cut in two")
		}
	}
}

// TestPrune: the store keeps the newest MaxConversations, and the last of
// each kind whatever its age.
func TestPrune(t *testing.T) {
	s, now := testStore(t)
	shell := s.New(Shell, "/")
	if err := s.Save(shell); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(filepath.Join(s.dir, shell.ID+".json"), now.Add(-time.Hour), now.Add(-time.Hour))
	var first string
	for i := range MaxConversations + 5 {
		*now = now.Add(time.Second)
		c := s.New(OneShot, "/")
		if i == 0 {
			first = c.ID
		}
		if err := s.Save(c); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(s.dir, c.ID+".json")
		os.Chtimes(p, *now, *now)
	}
	ents, _ := filepath.Glob(filepath.Join(s.dir, "*.json"))
	if len(ents) != MaxConversations+1 {
		t.Errorf("%d conversations kept, want %d and the last shell session", len(ents), MaxConversations)
	}
	if _, err := s.Last(Shell); err != nil {
		t.Errorf("the last shell session was pruned: %v", err)
	}
	if _, err := s.Load(first); !errors.Is(err, ErrNone) {
		t.Errorf("the oldest one-shot conversation was kept: %v", err)
	}
}

func TestBadIDs(t *testing.T) {
	s, _ := testStore(t)
	for _, id := range []string{"", "../etc/passwd", "a/b", "ABC", strings.Repeat("1", 65)} {
		if _, err := s.Load(id); err == nil {
			t.Errorf("Load(%q) succeeded", id)
		}
	}
	if err := s.Save(&Conversation{ID: "../x", Kind: OneShot}); err == nil {
		t.Error("saved under a bad id")
	}
	os.MkdirAll(s.dir, 0o700)
	os.WriteFile(filepath.Join(s.dir, "last-shell"), []byte("20261120-100000-abcdef\n"), 0o600)
	os.WriteFile(filepath.Join(s.dir, "20261120-100000-abcdef.json"), []byte("{not json"), 0o600)
	if _, err := s.Last(Shell); err == nil || errors.Is(err, ErrNone) {
		t.Errorf("a damaged file: %v, want an error that says so", err)
	}
}
