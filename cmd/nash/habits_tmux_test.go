package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// A bash user's day in nash, in a real terminal: the habits of a bash
// session keep working although each line runs in a fresh sandbox.

const habitsBashrc = `# a person's ~/.bashrc
alias ll='ls -l'
greet() { echo "hello, $1"; }
export PATH="$HOME/bin:$PATH"
`

// requests counts the requests the fake model was sent.
func (tn *tmuxNash) requests() int {
	b, err := os.ReadFile(filepath.Join(filepath.Dir(tn.dir), "requests.log"))
	if err != nil {
		return 0
	}
	return strings.Count(string(b), "=== request ")
}

// typeLineDone types a line and waits for the prompt after it, for a test
// that means the next keys for the prompt rather than for the line (what
// a line leaves unread goes to the prompt: TestTmuxTypeahead).
func (tn *tmuxNash) typeLineDone(text string) {
	tn.t.Helper()
	prompt := regexp.MustCompile(`\(openai:test-model\) `)
	n := len(prompt.FindAllStringIndex(tn.screen(false), -1))
	tn.typeLine(text)
	tn.waitCount(`\(openai:test-model\) \[   \]`, 1)
	tn.waitCount(`\(openai:test-model\) `, n+1)
	tn.settle()
}

// settle waits until two captures of the screen a frame or more apart are
// the same. bubbletea prints above the frame on the screen at once and
// draws the next frame at its next tick, so for that long the screen
// can show a line's echo above the prompt drawn before the line ran.
func (tn *tmuxNash) settle() {
	tn.t.Helper()
	deadline := time.Now().Add(waitLimit)
	last := tn.screen(false)
	for {
		time.Sleep(60 * time.Millisecond)
		s := tn.screen(false)
		if s == last {
			return
		}
		if time.Now().After(deadline) {
			tn.t.Fatalf("the screen never settled; it shows:\n%s", s)
		}
		last = s
	}
}

func TestTmuxBashSession(t *testing.T) {
	tn := startNashIn(t, "", map[string]string{
		"home/.bashrc":  habitsBashrc,
		"home/bin/mine": "#!/bin/sh\necho mine ran\n",
		"work/lib.sh":   "LIBVAR=sourced\nfromlib() { echo \"lib says $LIBVAR\"; }\n",
	})
	if err := os.Chmod(filepath.Join(tn.home, "bin", "mine"), 0o755); err != nil {
		t.Fatal(err)
	}
	// An alias from ~/.bashrc is a command (it used to go to the model).
	tn.tmux("send-keys", "-t", tn.target, "-l", "ll")
	tn.waitFor(`\[cmd\] ll`)
	tn.send("Enter")
	tn.waitFor(`(?m)^total `)
	tn.typeLine("greet you; mine")
	tn.waitFor(`(?m)^hello, you\s*\n\s*mine ran`)
	// Variables and $? carry from line to line.
	tn.typeLine("X=42; false")
	tn.waitFor(`exit status 1`)
	tn.typeLine(`echo "x=$X status=$?"`)
	tn.waitFor(`(?m)^x=42 status=1`)
	// source defines what the next lines use.
	tn.typeLineDone("source lib.sh")
	tn.typeLine("fromlib")
	tn.waitFor(`(?m)^lib says sourced`)
	// cd in a compound line moves the session; pushd/popd keep a stack.
	tn.typeLine("cd /tmp && pushd / >/dev/null")
	tn.waitFor(`(?m)^/ \(openai:test-model\) \[   \]`)
	tn.typeLine("popd")
	tn.waitFor(`(?m)^/tmp\s*$`)
	if n := tn.requests(); n != 0 {
		tn.fatalf("typed commands sent %d request(s) to the model", n)
	}
	if s := tn.screen(false); strings.Contains(s, "no changes") {
		tn.fatalf("read-only lines said no changes")
	}
}

func TestTmuxBackgroundJobNote(t *testing.T) {
	tn := startNash(t, "")
	tn.typeLine("sleep 0.3 & echo started")
	tn.waitFor(`background jobs end with their line: it waits for them`)
	tn.waitFor(`(?m)^started`)
	tn.waitFor(`\[   \]`)
}

// TestTmuxTypeahead: what the person types while a line runs, and the
// line does not read, goes to the next prompt, as in bash: a finished line
// runs, an unfinished one waits in the editor.
func TestTmuxTypeahead(t *testing.T) {
	tn := startNashIn(t, "", map[string]string{"work/quarterly report.txt": "q1 figures\n"})
	tn.typeLine("echo running; sleep 3")
	tn.waitFor(`(?m)^running`)
	tn.typeLine("echo ahead-$((6*7))")
	tn.tmux("send-keys", "-t", tn.target, "-l", "cat quar")
	tn.send("Tab")
	tn.send("Enter")
	tn.tmux("send-keys", "-t", tn.target, "-l", "echo part")
	tn.waitFor(`(?m)^ahead-42\s*$`)
	tn.waitFor(`(?m)^q1 figures\s*$`)
	tn.waitFor(`\(openai:test-model\) (\[cmd\] )?echo part`)
	tn.send("Enter")
	tn.waitFor(`(?m)^part\s*$`)
	// Lines typed one after another, as fast as tmux sends them: keys
	// reach nash while it starts a run, while the run has the terminal
	// and while it ends; each line runs once, in order. What a line
	// prints (out-1) differs from what was typed (echo out-$((1))), which
	// the running line's terminal echoes, as bash's would.
	for i := 1; i <= 3; i++ {
		tn.typeLine(fmt.Sprintf("echo out-$((%d))", i))
	}
	s := tn.waitFor(`out-3\s*\n`)
	if !regexp.MustCompile(`(?s)out-1\s*\n.*out-2\s*\n.*out-3\s*\n`).MatchString(s) {
		tn.fatalf("the lines typed ahead did not run in order")
	}
	for i := 1; i <= 3; i++ {
		if n := len(regexp.MustCompile(fmt.Sprintf(`out-%d\b`, i)).FindAllString(s, -1)); n != 1 {
			tn.fatalf("the line printing out-%d ran %d times", i, n)
		}
	}
	if n := tn.requests(); n != 0 {
		tn.fatalf("typed-ahead lines sent %d request(s) to the model", n)
	}
}

// TestTmuxScriptCannotTypeAhead: a script that types a line into its own
// terminal (TIOCSTI) does not get it run at nash's next prompt: the
// sandbox refuses TIOCSTI, so what is left unread there is the person's.
func TestTmuxScriptCannotTypeAhead(t *testing.T) {
	tn := startNash(t, "")
	tn.typeLine(`perl -e 'ioctl(STDIN, 0x5412, $_) or $no++ for split //, "echo pwned\n"; print $no ? "refused\n" : "typed\n"'`)
	tn.waitFor(`(?m)^(refused|typed)\s*$`)
	tn.typeLineDone("echo after")
	s := tn.waitFor(`(?m)^after\s*$`)
	if regexp.MustCompile(`(?m)^pwned`).MatchString(s) || !regexp.MustCompile(`(?m)^refused`).MatchString(s) {
		tn.fatalf("a line the script typed ran at nash's prompt")
	}
}
