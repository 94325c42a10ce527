package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The tests here run nash in a real terminal (tmux) from an interactive
// bash, as a person does, and attack what the person sees and types
// (issue 12), or check that the terminal still passes through.

// shellTerm is bash in a tmux pane with nash (this test binary) on PATH.
type shellTerm struct {
	*tmuxNash
	root string
}

// startShell starts an interactive bash, with job control, in a 100x30
// pane in a fresh directory; env adds variables for nash.
func startShell(t *testing.T, env ...string) *shellTerm {
	t.Helper()
	for _, tool := range []string{"tmux", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("%s is needed for this test (.ci/run installs it): %v", tool, err)
		}
	}
	self, tiocsti := testBin(t, "nash"), testBin(t, tiocstiName)
	root := t.TempDir()
	bin, home, dir := filepath.Join(root, "bin"), filepath.Join(root, "home"), filepath.Join(root, "work")
	for _, d := range []string{bin, home, dir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	wrapper := fmt.Sprintf("#!/bin/sh\nexec %s \"$@\"\n", shQuote(self))
	if err := os.WriteFile(filepath.Join(bin, "nash"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	vars := []string{
		"HOME=" + home, "PATH=" + bin + ":" + os.Getenv("PATH"), "TERM=xterm-256color", "LANG=C.UTF-8",
		"PS1=bash$ ", "HISTFILE=", "XDG_STATE_HOME=" + filepath.Join(home, "state"),
		"GORACE=log_path=" + filepath.Join(root, "race"), "NASH_TIOCSTI=" + tiocsti,
	}
	if tmp := os.Getenv("TMPDIR"); tmp != "" {
		vars = append(vars, "TMPDIR="+tmp)
	}
	vars = append(vars, env...)
	var launch strings.Builder
	launch.WriteString("#!/bin/sh\nexec env -i")
	for _, v := range vars {
		fmt.Fprintf(&launch, " %s", shQuote(v))
	}
	launch.WriteString(" bash --norc --noprofile -i\n")
	script := filepath.Join(root, "launch.sh")
	if err := os.WriteFile(script, []byte(launch.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	st := &shellTerm{tmuxNash: &tmuxNash{t: t, sock: filepath.Join(root, "tmux.sock"), dir: dir, home: home, target: "sh"}, root: root}
	st.tmux("new-session", "-d", "-s", "sh", "-x", "100", "-y", "30", "-c", dir, script)
	t.Cleanup(func() {
		killTmux(st.sock, root)
		logs, _ := filepath.Glob(filepath.Join(root, "race.*"))
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			t.Errorf("nash had a data race:\n%s", b)
		}
	})
	st.waitFor(`bash\$ `)
	return st
}

// flags reads tmux's view of the pane's modes (see FORMATS in tmux(1)).
func (tn *tmuxNash) flags(names ...string) map[string]string {
	tn.t.Helper()
	var f strings.Builder
	for _, n := range names {
		fmt.Fprintf(&f, "%s=#{%s} ", n, n)
	}
	out := tn.tmux("display-message", "-p", "-t", tn.target, f.String())
	m := map[string]string{}
	for _, kv := range strings.Fields(out) {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// sgr matches one SGR sequence in capture-pane -e output.
var sgr = regexp.MustCompile(`\x1b\[([0-9;:]*)m`)

// concealedAt reports whether the text at the first match of pattern on
// the screen is drawn concealed (SGR 8) or invisible (foreground as
// background, as a script might set), following the attributes
// capture-pane -e shows up to it.
func (tn *tmuxNash) concealedAt(pattern string) bool {
	tn.t.Helper()
	s := tn.screen(true)
	i := regexp.MustCompile(pattern).FindStringIndex(s)
	if i == nil {
		tn.fatalf("no %q on the screen", pattern)
	}
	concealed := false
	for _, m := range sgr.FindAllStringSubmatch(s[:i[0]], -1) {
		for _, p := range strings.Split(m[1], ";") {
			switch p {
			case "", "0":
				concealed = false
			case "8":
				concealed = true
			case "28":
				concealed = false
			}
		}
	}
	return concealed
}

// hostileTerminal is what a script prints to hide nash's summary: a fake
// summary, then concealed text, the alternate screen, a hidden cursor,
// mouse and focus reporting, bracketed paste, a scroll region, origin
// mode, the line-drawing character set and no autowrap.
const hostileTerminal = `printf "fake: nothing changed\n\033[?1049h\033[8m\033[?25l\033[?1000h\033[?1004h\033[?2004h\033[5;10r\033[?6h\033(0\033[?7l"`

// TestTmuxTerminalRestoredAfterRun: whatever modes the script left the
// terminal in, nash run's summary and prompt are drawn on a restored one.
func TestTmuxTerminalRestoredAfterRun(t *testing.T) {
	st := startShell(t)
	st.typeLine(`nash run -- '` + hostileTerminal + `; echo x > f'; echo NASH-EXIT=$?`)
	st.waitFor(`commit these changes\?`)
	checkRestored(t, st.tmuxNash, `commit these changes\?`, true)
	st.typeLine("a")
	st.waitFor(`NASH-EXIT=3`)
}

// TestTmuxShellRestoredAfterRun is the same in the interactive nash.
func TestTmuxShellRestoredAfterRun(t *testing.T) {
	tn := startNash(t, "")
	tn.typeLine(hostileTerminal + `; echo x > f`)
	// A typed line is committed when it ends, in one line (issue 19).
	tn.waitFor(`created f · transaction 1 · :undo`)
	// The interactive nash hides the cursor itself: it draws its own.
	checkRestored(t, tn, `created f · transaction`, false)
}

func checkRestored(t *testing.T, tn *tmuxNash, prompt string, cursor bool) {
	t.Helper()
	want := map[string]string{
		"alternate_on": "0", "mouse_any_flag": "0", "origin_flag": "0",
		"wrap_flag": "1", "scroll_region_upper": "0", "scroll_region_lower": "29",
	}
	if cursor {
		want["cursor_flag"] = "1"
	}
	var names []string
	for n := range want {
		names = append(names, n)
	}
	got := tn.flags(names...)
	for n, w := range want {
		if got[n] != w {
			tn.fatalf("after the run the terminal has %s=%s, want %s", n, got[n], w)
		}
	}
	if tn.concealedAt(prompt) {
		tn.fatalf("nash's prompt is drawn concealed")
	}
	if s := tn.screen(true); strings.Contains(s[:strings.Index(s, "created")+1], "\x1b(0") {
		tn.fatalf("nash's summary is drawn in the line-drawing character set")
	}
}

// tiocstiName is the command scripts run ($NASH_TIOCSTI) to type
// NASH_TEST_TIOCSTI into their terminal: tiocstiHelper.
const tiocstiName = "nash-test-tiocsti"

// tiocstiHelper is run by scripts (NASH_TEST_TIOCSTI): it types text into
// every terminal it can reach, as TIOCSTI allows where
// dev.tty.legacy_tiocsti is 1.
func tiocstiHelper(text string) int {
	inject := func(fd int) bool {
		for i := 0; i < len(text); i++ {
			b := text[i]
			if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.TIOCSTI, uintptr(unsafe.Pointer(&b))); e != 0 {
				return false
			}
		}
		return true
	}
	var ok []string
	for fd := 0; fd <= 2; fd++ {
		if inject(fd) {
			ok = append(ok, "fd"+strconv.Itoa(fd))
		}
	}
	if fd, err := unix.Open("/dev/tty", unix.O_RDWR, 0); err == nil {
		if inject(fd) {
			ok = append(ok, "/dev/tty")
		}
		unix.Close(fd)
	}
	fmt.Fprintf(os.Stderr, "injected: %s\n", strings.Join(ok, " "))
	return 0
}

// TestTmuxScriptCannotAnswerPrompt: a script that types "c" and Enter
// into the terminal does not commit itself at nash run's prompt.
func TestTmuxScriptCannotAnswerPrompt(t *testing.T) {
	st := startShell(t, `NASH_TEST_TIOCSTI=c
`)
	st.typeLine(`nash run -- '"$NASH_TIOCSTI"; echo x > f'; echo NASH-EXIT=$?`)
	st.waitFor(`commit these changes\?`)
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		if strings.Contains(st.screen(false), "committed") {
			st.fatalf("the script answered nash's prompt")
		}
		time.Sleep(50 * time.Millisecond)
	}
	st.typeLine("a")
	st.waitFor(`NASH-EXIT=3`)
	if _, err := os.Stat(filepath.Join(st.dir, "f")); err == nil {
		st.fatalf("f exists: the run was committed")
	}
}

// TestTmuxScriptCannotTypeIntoShell: what a script types into the
// terminal does not reach the parent shell after nash exits.
func TestTmuxScriptCannotTypeIntoShell(t *testing.T) {
	st := startShell(t, `NASH_TEST_TIOCSTI=echo pwned > pwned.txt
`)
	st.typeLine(`nash run --yes -- '"$NASH_TIOCSTI"'; echo NASH-EXIT=$?`)
	st.waitFor(`NASH-EXIT=0`)
	time.Sleep(time.Second)
	if _, err := os.Stat(filepath.Join(st.dir, "pwned.txt")); err == nil {
		st.fatalf("the parent shell ran what the script typed")
	}
	if strings.Contains(st.screen(false), "bash$ echo pwned") {
		st.fatalf("the script typed into the parent shell's line")
	}
}

// TestTmuxTerminalPassesThrough: keys, raw mode without echo (read -s),
// end of input (ctrl+d), the window size and its changes, ctrl+\ and the
// exit status all pass through nash run's relay.
func TestTmuxTerminalPassesThrough(t *testing.T) {
	st := startShell(t)
	st.typeLine(`nash run -- 'tty; stty size; read -s -p "secret? " pw; echo; echo "got ${#pw} chars"; cat > typed.txt; read -r _; stty size; echo started; sleep 600'; echo NASH-EXIT=$?`)
	st.waitFor(`(?m)^/dev/pts/\d+\s*\n30 100\s*\nsecret\? `)
	st.typeLine("hunter2")
	st.waitFor(`got 7 chars`)
	if strings.Contains(st.screen(false), "hunter2") {
		st.fatalf("read -s echoed the secret")
	}
	st.typeLine("line one")
	st.send("C-d")
	st.tmux("resize-window", "-t", st.target, "-x", "60", "-y", "20")
	st.typeLine("")
	st.waitFor(`(?m)^20 60\s*\nstarted`)
	st.send(`C-\`)
	st.waitFor(`commit these changes\?`)
	st.typeLine("c")
	st.waitFor(`the script exited with status 131`)
	st.waitFor(`NASH-EXIT=131`)
	if got := st.file("typed.txt"); got != "line one\n" {
		st.fatalf("typed.txt = %q", got)
	}
}

// TestTmuxCtrlZSuspendsAndResumes: ctrl+z stops the script and gives the
// person their shell back, on a terminal in its usual mode; fg resumes
// both.
func TestTmuxCtrlZSuspendsAndResumes(t *testing.T) {
	st := startShell(t)
	// Not in a list: bash would go on with the list when the job stops.
	st.typeLine(`nash run -- 'echo started; read -r line; echo "$line" > resumed.txt'`)
	st.waitFor(`(?m)^started`)
	st.send("C-z")
	st.waitFor(`Stopped[^\n]*\n+bash\$ `)
	st.typeLine(`echo shell-works`)
	st.waitFor(`(?m)^shell-works`)
	st.typeLine("fg")
	st.waitCount(`nash run -- 'echo started`, 3) // typed, stopped, resumed
	time.Sleep(200 * time.Millisecond)
	st.typeLine("after fg")
	st.waitFor(`commit these changes\?`)
	st.typeLine("c")
	st.waitFor(`committed as transaction`)
	st.typeLine(`echo NASH-EXIT=$?`)
	st.waitFor(`NASH-EXIT=0`)
	if got := st.file("resumed.txt"); got != "after fg\n" {
		st.fatalf("resumed.txt = %q", got)
	}
}
