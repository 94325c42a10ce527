package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// escape presses Esc alone, as a person does: an Esc followed at once by
// a key is that key with Alt, in any terminal.
func (tn *tmuxNash) escape() {
	tn.t.Helper()
	tn.send("Escape")
	time.Sleep(150 * time.Millisecond)
}

// A day in nash with a bash user's habits (issue 19): no keystroke loses
// work, tools' bookkeeping never asks, undo and redo step through history.

// TestTmuxVimThenEscKeepsTheFile: vim, :wq, then Esc and a command typed
// at speed, by habit. The essay is committed when vim ends; nothing typed
// after it can lose it.
func TestTmuxVimThenEscKeepsTheFile(t *testing.T) {
	tn := startNash(t, "")
	tn.typeLine("vim essay.txt")
	tn.waitFor(`"essay\.txt" \[New`) // vim is up: the screen named essay.txt before
	tn.send("i")
	tn.tmux("send-keys", "-t", tn.target, "-l", "my essay")
	tn.send("Escape")
	tn.typeLine(":wq")
	tn.waitFor(`created essay\.txt · and tools' own files \(vim\) · transaction 1 · :undo`)
	tn.escape()
	tn.typeLine("apt-get --version >/dev/null; echo next")
	tn.waitFor(`(?m)^next`)
	if got := tn.file("essay.txt"); got != "my essay\n" {
		tn.fatalf("essay.txt = %q after vim, Esc and the next command", got)
	}
}

// TestTmuxVimFromARequestEscKeepsTheFile: a request that runs vim stops
// at its summary; Esc there, and "apt" typed by habit, lose nothing.
func TestTmuxVimFromARequestEscKeepsTheFile(t *testing.T) {
	tn := startNash(t, `{"script": "vim essay.txt", "explanation": "Opens the essay in vim."}`)
	tn.typeLine("please open my essay")
	tn.waitFor(`review: enter run`)
	tn.send("Enter")
	tn.waitFor(`"essay\.txt" \[New`) // vim is up: the screen named essay.txt before
	tn.send("i")
	tn.tmux("send-keys", "-t", tn.target, "-l", "drafted")
	tn.send("Escape")
	tn.typeLine(":wq")
	tn.waitFor(`changes: c commit`)
	tn.escape()
	// a asks again; p and t, typed before that question appeared, are
	// no answer to it.
	tn.tmux("send-keys", "-t", tn.target, "-l", "apt")
	tn.waitFor(`a key typed before the question appeared is not an answer`)
	tn.send("n")
	tn.waitFor(`not aborted`)
	s := tn.screen(false)
	if strings.Contains(s, "aborted; nothing was changed") {
		tn.fatalf("Esc or apt aborted the run")
	}
	tn.send("c")
	tn.waitFor(`committed as transaction 1`)
	if got := tn.file("essay.txt"); got != "drafted\n" {
		tn.fatalf("essay.txt = %q", got)
	}
}

// TestTmuxToolBookkeepingNeverAsks: git status (which refreshes the
// index) and less with a search (which writes its history) run without a
// question; the log keeps git's bookkeeping under a minor id.
func TestTmuxToolBookkeepingNeverAsks(t *testing.T) {
	tn := startNash(t, "")
	if err := os.WriteFile(filepath.Join(tn.dir, "a.txt"), []byte(strings.Repeat("line of text\n", 200)), 0o644); err != nil {
		t.Fatal(err)
	}
	setup := exec.Command("sh", "-c", "git init -q && git add a.txt && git -c user.name=t -c user.email=t@t commit -qm a && touch -d '2 hours ago' a.txt")
	setup.Dir = tn.dir
	if out, err := setup.CombinedOutput(); err != nil {
		t.Fatalf("git setup: %v\n%s", err, out)
	}
	index := filepath.Join(tn.dir, ".git", "index")
	before, _ := os.ReadFile(index)
	tn.typeLineDone("git status")
	tn.waitFor(`nothing to commit, working tree clean`)
	tn.typeLineDone("echo after-git")
	tn.waitFor(`(?m)^after-git`)
	after, _ := os.ReadFile(index)
	if string(after) == string(before) {
		tn.fatalf("git status did not refresh the index (the test would show nothing)")
	}
	tn.typeLine("less a.txt")
	tn.waitFor(`(?m)^line of text`)
	tn.tmux("send-keys", "-t", tn.target, "-l", "/text")
	tn.waitFor(`(?m)^/text`)
	tn.send("Enter")
	tn.waitFor(`(?m)^:\s*$`) // the search done, less waits for a command
	tn.send("q")
	tn.waitCount(`\(openai:test-model\) \[   \]`, 1)
	tn.typeLine("echo after-less")
	tn.waitFor(`(?m)^after-less`)
	s := tn.screen(false)
	for _, no := range []string{"changes: c commit", "NOT PREDICTED"} {
		if strings.Contains(s, no) {
			tn.fatalf("a tool's bookkeeping brought %q", no)
		}
	}
	// less wrote no history in the sandbox here (unexplained: outside
	// nash the same keys write ~/.lesshst), so only git's bookkeeping is
	// in the log; less is shown asking nothing.
	tn.typeLine(":log")
	tn.waitFor(`(?m)^0\.1 .*git status`)
}

// TestTmuxUndoTwiceThenRedo: :undo steps back one transaction at a time,
// :redo forward.
func TestTmuxUndoTwiceThenRedo(t *testing.T) {
	tn := startNash(t, "")
	tn.typeLine("echo one > f.txt")
	tn.waitFor(`created f\.txt · transaction 1 · :undo`)
	tn.typeLine("echo two > f.txt")
	tn.waitFor(`modified f\.txt · transaction 2 · :undo`)
	steps := []struct{ line, screen, want string }{
		{":undo", `undid transaction 2 as transaction 3`, "one\n"},
		{":undo", `undid transaction 1 as transaction 4`, "<missing>"},
		{":redo", `redid transaction 1 as transaction 5`, "one\n"},
		{":redo", `redid transaction 2 as transaction 6`, "two\n"},
		{":redo", `nothing to redo`, "two\n"},
	}
	for _, s := range steps {
		tn.typeLine(s.line)
		tn.waitFor(s.screen)
		got, err := os.ReadFile(filepath.Join(tn.dir, "f.txt"))
		if err != nil {
			got = []byte("<missing>")
		}
		if string(got) != s.want {
			tn.fatalf("after %s f.txt is %q, want %q", s.line, got, s.want)
		}
	}
	tn.typeLine(":undo abc")
	tn.waitFor(`"?abc"?: not a transaction id`)
}

// TestTmuxRecoveredAbort: an aborted run that made a file is kept; the
// message names how to see it and apply it, and :commit applies it.
func TestTmuxRecoveredAbort(t *testing.T) {
	tn := startNash(t, greeting)
	tn.typeLine("a greeting file please")
	tn.waitFor(`review: enter run`)
	tn.send("Enter")
	tn.waitFor(`changes: c commit`)
	tn.send("a")
	tn.waitFor(`y abort`)
	tn.send("y")
	s := tn.waitFor(`kept as r\d+ for a while: :show r\d+ shows it, :commit r\d+ applies it`)
	id := regexp.MustCompile(`kept as (r\d+)`).FindStringSubmatch(s)[1]
	if _, err := os.Stat(filepath.Join(tn.dir, "hello.txt")); err == nil {
		tn.fatalf("hello.txt exists after the abort")
	}
	tn.typeLineDone(":show " + id)
	tn.waitFor(`created\s+hello\.txt`)
	tn.typeLine(":commit " + id)
	tn.waitFor(`committed run ` + id + ` as transaction 1`)
	if got := tn.file("hello.txt"); got != "hello\n" {
		tn.fatalf("hello.txt = %q after :commit", got)
	}
}
