package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The tests here are attacks a script makes on the person's session and on
// the descriptors nash holds (issue 12): each fails on a nash that hands the
// script its own terminal and files.

// openPty opens a pseudo-terminal pair of the test's own: the slave is the
// "person's terminal" given to the sandbox, the master is what a terminal
// emulator would hold.
func openPty(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx: %v", err)
	}
	if err := unix.IoctlSetPointerInt(m, unix.TIOCSPTLCK, 0); err != nil {
		t.Fatalf("unlock pty: %v", err)
	}
	sfd, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(m), unix.TIOCGPTPEER, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC)
	s := int(sfd)
	if errno != 0 {
		// Older kernels: open the slave by name.
		n, err := unix.IoctlGetInt(m, unix.TIOCGPTN)
		if err != nil {
			t.Fatalf("pty number: %v", err)
		}
		if s, err = unix.Open("/dev/pts/"+strconv.Itoa(n), unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0); err != nil {
			t.Fatalf("open pty slave: %v", err)
		}
	}
	master, slave = os.NewFile(uintptr(m), "ptmx"), os.NewFile(uintptr(s), "pts")
	t.Cleanup(func() { master.Close(); slave.Close() })
	return master, slave
}

// drain reads everything the master yields until stop is closed, then
// what is left; it returns it all.
func drain(master *os.File, stop <-chan struct{}) <-chan string {
	out := make(chan string, 1)
	go func() {
		var b bytes.Buffer
		buf := make([]byte, 4096)
		for {
			_ = master.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
			n, err := master.Read(buf)
			b.Write(buf[:n])
			if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
				break
			}
			select {
			case <-stop:
				if n == 0 {
					out <- b.String()
					return
				}
			default:
			}
		}
		out <- b.String()
	}()
	return out
}

// pendingInput returns what waits in the input queue of the terminal whose
// slave is given: what a shell reading that terminal would read next.
func pendingInput(t *testing.T, slave *os.File) string {
	t.Helper()
	fd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(int(slave.Fd())), unix.O_RDONLY|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("reopen pty slave: %v", err)
	}
	defer unix.Close(fd)
	// The test's own terminal may be in canonical mode: read what is
	// there, line or not.
	tio, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	raw := *tio
	raw.Lflag &^= unix.ICANON
	raw.Cc[unix.VMIN], raw.Cc[unix.VTIME] = 0, 0
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &raw); err != nil {
		t.Fatal(err)
	}
	defer unix.IoctlSetTermios(fd, unix.TCSETS, tio)
	var b bytes.Buffer
	buf := make([]byte, 256)
	for {
		n, err := unix.Read(fd, buf)
		if n <= 0 || err != nil {
			return b.String()
		}
		b.Write(buf[:n])
	}
}

// selfEnv is the sandbox's environment with the test binary named, so
// scripts can run it as a helper (TestMain's NASH_TEST_* modes).
func selfEnv(t *testing.T, extra ...string) []string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return append(append(os.Environ(), "NASH_SELF="+self), extra...)
}

// tiocstiMain is the helper a script runs to type text into every
// terminal it can reach: its standard streams, /dev/tty, and its stdin
// again after taking it as its controlling terminal in a session of its
// own. It prints which attempts the kernel accepted.
func tiocstiMain(text string) int {
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
			ok = append(ok, fmt.Sprintf("fd%d", fd))
		}
	}
	if fd, err := unix.Open("/dev/tty", unix.O_RDWR, 0); err == nil {
		if inject(fd) {
			ok = append(ok, "/dev/tty")
		}
		unix.Close(fd)
	}
	if _, err := unix.Setsid(); err == nil {
		if unix.IoctlSetInt(0, unix.TIOCSCTTY, 0) == nil && inject(0) {
			ok = append(ok, "fd0-as-ctty")
		}
	}
	fmt.Fprintf(os.Stderr, "injected: %s\n", strings.Join(ok, " "))
	return 0
}

// TestScriptCannotTypeIntoTerminal: a script that types "c" and a command
// into the terminal (TIOCSTI, which dev.tty.legacy_tiocsti allows) must not
// reach the person's terminal, where nash's commit prompt and then the
// parent shell would read them.
func TestScriptCannotTypeIntoTerminal(t *testing.T) {
	master, slave := openPty(t)
	stop := make(chan struct{})
	shown := drain(master, stop)
	e := newEnv(t, Stdio(slave, slave, slave), Env(selfEnv(t, "NASH_TEST_TIOCSTI=c\necho pwned\n")))
	p := e.run(`"$NASH_SELF"; echo done`)
	close(stop)
	screen := <-shown
	if p.ExitCode != 0 || !strings.Contains(screen, "done") {
		t.Fatalf("exit %d; the terminal showed %q", p.ExitCode, screen)
	}
	if got := pendingInput(t, slave); got != "" {
		t.Fatalf("the script typed %q into the person's terminal (%s)", got, strings.TrimSpace(screen))
	}
	// Nor into its own: what is left unread there goes to nash's next
	// prompt as the person's typeahead.
	if !regexp.MustCompile(`injected: *\r?\n`).MatchString(screen) {
		t.Fatalf("the script could type into its own terminal: %q", screen)
	}
}

// TestTerminalInside: the script's terminal is one that exists inside
// the sandbox, with the person's window size, and its standard streams
// are on it.
func TestTerminalInside(t *testing.T) {
	master, slave := openPty(t)
	if err := unix.IoctlSetWinsize(int(slave.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: 33, Col: 101}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	shown := drain(master, stop)
	e := newEnv(t, Stdio(slave, slave, slave))
	p := e.run(`t=$(tty) && [ -c "$t" ] && [ -t 0 ] && [ -t 1 ] && [ -t 2 ] && echo "on $t"; stty size`)
	close(stop)
	screen := <-shown
	if p.ExitCode != 0 || !strings.Contains(screen, "on /dev/pts/") || !strings.Contains(screen, "33 101") {
		t.Fatalf("exit %d; the terminal showed %q", p.ExitCode, screen)
	}
}

// TestOnlyStdioReachScript: descriptors the caller holds beyond 0-2 (even
// without close-on-exec) never reach the script or the init, and its own
// three are not the caller's files: through /proc/self/fd a script could
// otherwise rewrite a file opened read-only, truncate the file nash's output
// goes to, or rewrite the file its stdin was redirected from, all after the
// person aborted.
func TestOnlyStdioReachScript(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data.csv")
	secret := filepath.Join(dir, "secret.txt")
	outFile := filepath.Join(dir, "out.txt")
	for _, p := range []string{data, secret} {
		if err := os.WriteFile(p, []byte("original "+filepath.Base(p)+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A descriptor the caller holds open, read-only and inheritable, as
	// a parent shell's `3<secret.txt` would leave it.
	extra, err := unix.Open(secret, unix.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(extra)
	in, err := os.Open(data)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(outFile)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	if _, err := out.WriteString("nash's earlier output\n"); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, Stdio(in, out, out))
	// The script lists its descriptors, waits while the test looks at the
	// init's, then attacks.
	script := fmt.Sprintf(`cd /proc/$$/fd && for f in *; do [ -e "$f" ] && echo "fd $f"; done
read -r first
echo "read: $first"
sleep 2
echo evil > /proc/self/fd/%d
echo evil > /proc/self/fd/0
: > /proc/self/fd/1
echo after-truncate`, extra)
	type ran struct {
		p   *Pending
		err error
	}
	done := make(chan ran, 1)
	go func() {
		p, err := e.sb.Run(context.Background(), script)
		done <- ran{p, err}
	}()
	initFds := waitInitFds(t)
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if err := e.sb.Abort(r.p.ID); err != nil {
		t.Fatal(err)
	}
	for _, l := range initFds {
		if strings.Contains(l, dir) {
			t.Errorf("the sandbox init holds the caller's file: %s", l)
		}
	}
	got, _ := os.ReadFile(outFile)
	var fds []string
	for _, l := range strings.Split(string(got), "\n") {
		if f, ok := strings.CutPrefix(l, "fd "); ok {
			fds = append(fds, f)
		}
	}
	if strings.Join(fds, " ") != "0 1 2" {
		t.Errorf("the script has descriptors %v, want 0 1 2 only; its output:\n%s", fds, got)
	}
	if !strings.Contains(string(got), "read: original data.csv") {
		t.Errorf("the script did not read its stdin: %q", got)
	}
	for _, want := range []string{"nash's earlier output\n", "after-truncate\n"} {
		if !strings.Contains(string(got), want) {
			t.Errorf("nash's output file lacks %q (truncated by the script?):\n%q", want, got)
		}
	}
	for _, p := range []string{data, secret} {
		if b, _ := os.ReadFile(p); string(b) != "original "+filepath.Base(p)+"\n" {
			t.Errorf("%s was changed by an aborted run: %q", filepath.Base(p), b)
		}
	}
}

// waitInitFds finds the sandbox init this test process started (a child
// that is PID 1 of its own pid namespace) and lists where its descriptors
// point.
func waitInitFds(t *testing.T) []string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if pid := sandboxInit(); pid > 0 {
			time.Sleep(100 * time.Millisecond) // let it start the script
			// This run's init has the script as its child; an init of an
			// earlier run, on its way out, has none.
			var kids string
			tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
			for _, f := range tasks {
				b, _ := os.ReadFile(f)
				kids += strings.TrimSpace(string(b))
			}
			entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
			if err != nil || kids == "" {
				continue
			}
			var out []string
			for _, e := range entries {
				l, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, e.Name()))
				out = append(out, e.Name()+" -> "+l)
			}
			return out
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the sandbox init never appeared")
	return nil
}

// sandboxInit returns the pid of a child of this process that is PID 1 of
// its own pid namespace (and not a zombie), or 0.
func sandboxInit() int {
	tasks, _ := filepath.Glob("/proc/self/task/*/children")
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, kid := range strings.Fields(string(b)) {
			st, err := os.ReadFile("/proc/" + kid + "/status")
			if err != nil || strings.Contains(string(st), "\nState:\tZ") {
				continue
			}
			for _, l := range strings.Split(string(st), "\n") {
				if f, ok := strings.CutPrefix(l, "NSpid:"); ok {
					if ns := strings.Fields(f); len(ns) == 2 && ns[1] == "1" {
						n, _ := strconv.Atoi(ns[0])
						return n
					}
				}
			}
		}
	}
	return 0
}

// rootCaps is what a script run by root keeps: what root needs to act on
// files and users in its own user namespace (README: The sandbox).
const rootCaps = 1<<unix.CAP_CHOWN | 1<<unix.CAP_DAC_OVERRIDE | 1<<unix.CAP_DAC_READ_SEARCH |
	1<<unix.CAP_FOWNER | 1<<unix.CAP_FSETID | 1<<unix.CAP_KILL | 1<<unix.CAP_SETGID | 1<<unix.CAP_SETUID

// TestScriptCapabilities: an ordinary user's script has no capability in
// any set; root's keeps exactly rootCaps, none of them in the inheritable
// or ambient sets, so nothing it runs gains more.
func TestScriptCapabilities(t *testing.T) {
	e := newEnv(t)
	p := e.run(`grep ^Cap /proc/self/status; sh -c 'grep ^Cap /proc/self/status'`)
	if p.ExitCode != 0 {
		t.Fatalf("exit %d: %s", p.ExitCode, e.stderr.String())
	}
	var want uint64
	if os.Getuid() == 0 {
		want = rootCaps
	}
	sets := map[string]uint64{"CapInh": 0, "CapPrm": want, "CapEff": want, "CapBnd": want, "CapAmb": 0}
	seen := 0
	for _, l := range strings.Split(e.stdout.String(), "\n") {
		name, val, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		w, known := sets[name]
		if !known {
			continue
		}
		seen++
		got, err := strconv.ParseUint(strings.TrimSpace(val), 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		if got != w {
			t.Errorf("%s = %#x, want %#x", name, got, w)
		}
	}
	if seen != 2*len(sets) {
		t.Fatalf("read %d capability sets, want %d:\n%s", seen, 2*len(sets), e.stdout.String())
	}
}

// TestAnswersDropPendingInput: after a run on a terminal, the reader a
// prompt reads its answer from has nothing of what waited before: keys
// typed ahead, or what a terminal sent back to queries a script printed.
func TestAnswersDropPendingInput(t *testing.T) {
	master, slave := openPty(t)
	stop := make(chan struct{})
	shown := drain(master, stop)
	e := newEnv(t, Stdio(slave, slave, slave))
	e.run(`echo x > f`)
	close(stop)
	<-shown
	if _, err := master.WriteString("c\n"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	in := e.sb.Answers()
	if _, err := master.WriteString("a\n"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 16)
	n, err := in.Read(buf)
	if err != nil || string(buf[:n]) != "a\n" {
		t.Fatalf("the answer read %q, %v; want only what came after the question", buf[:n], err)
	}
}

// TestUnreadInputIsHandedBack: what a script leaves unread of a piped
// stdin stays for the answer, and only that: bytes the script writes into
// its own stdin (by reopening it) are not taken for the person's.
func TestUnreadInputIsHandedBack(t *testing.T) {
	for _, tt := range []struct{ name, script, input, want string }{
		{"unread", `read -r first; echo "got $first"`, "one\nc\n", "c\n"},
		{"injected", `read -r first; echo c > /proc/self/fd/0`, "one\n", ""},
		{"injected after unread", `echo c > /proc/self/fd/0`, "a\n", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, Stdio(strings.NewReader(tt.input), io.Discard, io.Discard))
			e.run(tt.script)
			rest, err := io.ReadAll(e.sb.Answers())
			if err != nil || string(rest) != tt.want {
				t.Fatalf("after the run the input holds %q, %v; want %q", rest, err, tt.want)
			}
		})
	}
}

// TestOutputKeepsOrder: with stdout and stderr one file (2>&1), the
// script's writes to both reach it in the order it made them, as they
// would without nash between.
func TestOutputKeepsOrder(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fd, err := unix.Dup(int(f.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	f2 := os.NewFile(uintptr(fd), "log")
	defer f2.Close()
	e := newEnv(t, Stdio(nil, f, f2))
	e.run(`for i in 1 2 3 4 5; do echo out$i; echo err$i >&2; done`)
	b, _ := os.ReadFile(f.Name())
	if want := "out1\nerr1\nout2\nerr2\nout3\nerr3\nout4\nerr4\nout5\nerr5\n"; string(b) != want {
		t.Fatalf("the log reads %q, want %q", b, want)
	}
}
