package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// runTerm drives `nash run` in a real terminal (a tmux pane).
type runTerm struct {
	t      *testing.T
	socket string
	target string
}

func startRunTerm(t *testing.T, dir, state string, args ...string) *runTerm {
	t.Helper()
	self := testBin(t, "nash")
	rt := &runTerm{t: t, socket: filepath.Join(t.TempDir(), "tmux.sock"), target: "nashrun"}
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	command := fmt.Sprintf("cd %s && env NASH_STATE_DIR=%s TERM=xterm %s %s; echo NASH-EXIT=$?; sleep 600",
		dir, state, self, strings.Join(quoted, " "))
	rt.tmux("new-session", "-d", "-s", rt.target, "-x", "100", "-y", "30", command)
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", rt.socket, "kill-server").Run() })
	return rt
}

func (rt *runTerm) tmux(args ...string) string {
	rt.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", rt.socket}, args...)...).CombinedOutput()
	if err != nil {
		rt.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (rt *runTerm) screen() string { return rt.tmux("capture-pane", "-p", "-t", rt.target) }

// waitFor waits until the screen matches pattern; a failure shows it.
func (rt *runTerm) waitFor(pattern string) {
	rt.t.Helper()
	re := regexp.MustCompile(pattern)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if re.MatchString(rt.screen()) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	rt.t.Fatalf("the screen never matched %q; it shows:\n%s", pattern, rt.screen())
}

func (rt *runTerm) send(keys ...string) {
	rt.tmux(append([]string{"send-keys", "-t", rt.target}, keys...)...)
}

// TestRunInTerminal runs interactive programs inside the sandbox with the
// real terminal: less pages a file, read takes a line, vi edits a file;
// then the commit prompt commits what vi and the script wrote.
func TestRunInTerminal(t *testing.T) {
	for _, tool := range []string{"tmux", "less", "vi"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed for this test (.ci/run installs it): %v", tool, err)
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "story.txt"), []byte("once upon a time\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rt := startRunTerm(t, dir, filepath.Join(t.TempDir(), "state"), "run", "--",
		`less story.txt; read -p "name? " n; echo "hi $n" > greeting; vi notes.txt`)
	rt.waitFor("once upon a time")
	rt.send("q")
	rt.waitFor(`name\?`)
	rt.send("bob", "Enter")
	rt.waitFor(`notes\.txt`) // vi's status line
	rt.send("i", "written in vi", "Escape", ":wq", "Enter")
	rt.waitFor(`commit these changes\?`)
	if s := rt.screen(); !strings.Contains(s, "greeting") || !strings.Contains(s, "notes.txt") {
		t.Fatalf("the summary does not list greeting and notes.txt:\n%s", s)
	}
	rt.send("c", "Enter")
	rt.waitFor(`NASH-EXIT=0`)
	for name, want := range map[string]string{"greeting": "hi bob\n", "notes.txt": "written in vi\n"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q\nscreen:\n%s", name, b, err, want, rt.screen())
		}
	}
}
