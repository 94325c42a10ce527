package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// listen opens a host listener on loopback and reports whether anything
// connected within the window.
func listen(t *testing.T) (port int, connected func() bool) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	got := make(chan struct{}, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			c.Close()
			got <- struct{}{}
		}
	}()
	return ln.Addr().(*net.TCPAddr).Port, func() bool {
		select {
		case <-got:
			return true
		case <-time.After(500 * time.Millisecond):
			return false
		}
	}
}

func TestNetworkOffByDefault(t *testing.T) {
	port, connected := listen(t)
	e := newEnv(t)
	p := e.run(fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && echo hello >&3 && read -t 5 line <&3; echo \"got $line\"", port))
	if connected() || !strings.Contains(e.stdout.String(), "got \n") {
		t.Fatalf("the script reached a host listener: exit %d, stdout %q", p.ExitCode, e.stdout.String())
	}
	// The attempt is recorded, denied (see net_linux_test.go).
	want := fmt.Sprintf("127.0.0.1:%d", port)
	if len(p.Network) != 1 || p.Network[0].Destination() != want || p.Network[0].Allowed {
		t.Errorf("want one denied attempt at %s recorded, got %+v", want, p.Network)
	}
}

// TestHostNetworkUnseen checks that nothing in the sandbox shows the host's
// network: not the script's own /proc/net, nor the init's /proc/1/net, nor
// that of any of the init's threads.
func TestHostNetworkUnseen(t *testing.T) {
	e := newEnv(t)
	// A thread may end between the glob and cat: only the first cat must
	// succeed.
	p := e.run("cat /proc/net/dev /proc/1/net/dev && { cat /proc/1/task/*/net/dev 2>/dev/null; true; }")
	if p.ExitCode != 0 || !strings.Contains(e.stdout.String(), "lo:") {
		t.Fatalf("exit %d, stdout %q, stderr %q", p.ExitCode, e.stdout.String(), e.stderr.String())
	}
	for _, line := range strings.Split(e.stdout.String(), "\n") {
		name, _, ok := strings.Cut(line, ":")
		if name = strings.TrimSpace(name); ok && name != "lo" {
			t.Errorf("the sandbox sees the host's interface %q", name)
		}
	}
}

func TestNetworkOnWithNet(t *testing.T) {
	port, connected := listen(t)
	e := newEnv(t, Network(true))
	p := e.run(fmt.Sprintf("exec 3<>/dev/tcp/127.0.0.1/%d && echo CONNECTED", port))
	if p.ExitCode != 0 || !connected() {
		t.Fatalf("with the network on, the script could not connect: exit %d, stderr %q", p.ExitCode, e.stderr.String())
	}
}

// marked lists host processes whose command line contains mark.
func marked(mark string) []string {
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && strings.Contains(string(b), mark) {
			out = append(out, p)
		}
	}
	return out
}

func TestNoProcessOutlivesTheRun(t *testing.T) {
	mark := fmt.Sprintf("nashbg%d", time.Now().UnixNano())
	// Control: the detector finds such a process when it does outlive its
	// parent.
	ctl := exec.Command("bash", "-c", "(exec -a "+mark+"-control sleep 60) &")
	if err := ctl.Run(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(marked(mark+"-control")) == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if len(marked(mark+"-control")) == 0 {
		t.Fatal("control: a native background process was not found; the detector is broken")
	}
	_ = exec.Command("pkill", "-f", mark+"-control").Run()

	e := newEnv(t)
	e.run(`(exec -a ` + mark + `-bg sleep 60) &
setsid bash -c 'exec -a ` + mark + `-setsid sleep 60' &
bash -c '(bash -c "(exec -a ` + mark + `-double sleep 60) &" &)'
nohup bash -c 'exec -a ` + mark + `-nohup sleep 60' >/dev/null 2>&1 &
sleep 0.2`)
	if left := marked(mark); len(left) > 0 {
		t.Fatalf("processes outlived the run: %v", left)
	}
}

func TestScriptCannotUnmountOrSeeState(t *testing.T) {
	e := newEnv(t)
	p := e.run(`umount -l /proc 2>/dev/null && echo UNMOUNTED
umount -l "$PWD" 2>/dev/null && echo UNMOUNTED
ls -A ` + e.state + ` | wc -l
touch ` + e.state + `/x 2>/dev/null && echo WROTE-STATE
grep -c . /proc/self/status >/dev/null && echo PROC-OK
exit 7`)
	out := e.stdout.String()
	if strings.Contains(out, "UNMOUNTED") || strings.Contains(out, "WROTE-STATE") {
		t.Fatalf("the script escaped: %q", out)
	}
	if !strings.HasPrefix(out, "0\n") || !strings.Contains(out, "PROC-OK") {
		t.Errorf("stdout %q: want the state dir empty inside and /proc readable", out)
	}
	if p.ExitCode != 7 {
		t.Errorf("exit code %d, want 7", p.ExitCode)
	}
}

func TestHostUnchangedUntilCommit(t *testing.T) {
	e := newEnv(t)
	e.sh("echo old > f")
	outside := filepath.Join(t.TempDir(), "outside")
	p := e.run("echo new > f; echo out > " + outside + "; rm -f f2")
	if b, _ := os.ReadFile(e.path("f")); string(b) != "old\n" {
		t.Fatalf("f is %q before commit", b)
	}
	if _, err := os.Stat(outside); err == nil {
		t.Fatal("a file outside the working directory appeared before commit")
	}
	if err := e.sb.Abort(p.ID); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(e.path("f")); string(b) != "old\n" {
		t.Fatalf("f is %q after abort", b)
	}
	if _, err := os.Stat(outside); err == nil {
		t.Fatal("abort left a file outside the working directory")
	}
	runs, _ := os.ReadDir(layout(e.state).runsDir())
	if len(runs) != 0 {
		t.Errorf("abort left run dirs: %v", runs)
	}
}

func TestChangesOutsideCwdAndHome(t *testing.T) {
	home := t.TempDir()
	tmp := t.TempDir()
	e := newEnv(t, Env(append(os.Environ(), "HOME="+home)))
	p := e.run(`echo h > ~/in-home; mkdir "` + tmp + `/t" && echo t > "` + tmp + `/t/f"`)
	got := kinds(p, e.work)
	want := []string{filepath.Join(home, "in-home") + " created", filepath.Join(tmp, "t") + " created", filepath.Join(tmp, "t", "f") + " created"}
	if strings.Join(got, "\n") != strings.Join(sortedCopy(want), "\n") {
		t.Fatalf("changes %q, want %q", got, sortedCopy(want))
	}
	tx := e.commit(p)
	if b, _ := os.ReadFile(filepath.Join(home, "in-home")); string(b) != "h\n" {
		t.Fatalf("home file %q after commit", b)
	}
	e.undo(tx.ID)
	for _, q := range []string{filepath.Join(home, "in-home"), filepath.Join(tmp, "t")} {
		if _, err := os.Lstat(q); err == nil {
			t.Errorf("%s still there after undo", q)
		}
	}
}

func TestExitCodeAndSignals(t *testing.T) {
	e := newEnv(t)
	if p := e.run("exit 42"); p.ExitCode != 42 {
		t.Errorf("exit 42: got %d", p.ExitCode)
	}
	if p := e.run("kill -TERM $$"); p.ExitCode != 128+int(syscall.SIGTERM) {
		t.Errorf("killed by SIGTERM: got %d, want %d", p.ExitCode, 128+int(syscall.SIGTERM))
	}
}

func TestCancelStopsTheScript(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := e.sb.Run(ctx, "sleep 30")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want deadline exceeded", err)
	}
	if time.Since(start) > 20*time.Second {
		t.Fatal("the script was not stopped")
	}
	runs, _ := os.ReadDir(layout(e.state).runsDir())
	if len(runs) != 0 {
		t.Errorf("a cancelled run left run dirs: %v", runs)
	}
}

func TestRefusesWhenAPathCannotBeOverlaid(t *testing.T) {
	e := newEnv(t)
	e.sb.breakOverlay = e.work
	_, err := e.sb.Run(context.Background(), "echo x > f")
	var ue *UnavailableError
	// The path named is the overlay's mount point, which covers e.work.
	if !errors.As(err, &ue) || len(ue.Paths) != 1 || !under(e.work, strings.Fields(ue.Paths[0])[0]) {
		t.Fatalf("err = %v, want UnavailableError naming the mount point over %s", err, e.work)
	}
	if _, err := os.Stat(e.path("f")); err == nil {
		t.Fatal("the script ran although the sandbox was incomplete")
	}
	// With Unprotected the run goes ahead, names the path, and the change
	// is live.
	e2 := newEnv(t, Unprotected(true))
	e2.sb.breakOverlay = e2.work
	p, err := e2.sb.Run(context.Background(), "echo x > f")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Unprotected) != 1 || !under(e2.work, p.Unprotected[0]) {
		t.Errorf("Unprotected = %v, want the mount point over %s", p.Unprotected, e2.work)
	}
	if b, _ := os.ReadFile(e2.path("f")); string(b) != "x\n" {
		t.Errorf("unprotected write not live: %q", b)
	}
}

func TestUnavailableMessage(t *testing.T) {
	err := unavailable(&os.SyscallError{Syscall: "clone", Err: syscall.EPERM})
	var ue *UnavailableError
	if !errors.As(err, &ue) || !strings.Contains(ue.Error(), "user namespaces") {
		t.Fatalf("EPERM from clone: got %v", err)
	}
	if err := unavailable(errors.New("exec format error")); errors.As(err, &ue) {
		t.Fatalf("an unrelated error became UnavailableError: %v", err)
	}
}

func sortedCopy(s []string) []string {
	c := append([]string(nil), s...)
	for i := 1; i < len(c); i++ {
		for j := i; j > 0 && c[j] < c[j-1]; j-- {
			c[j], c[j-1] = c[j-1], c[j]
		}
	}
	return c
}

// TestUnixSocketsHiddenWithoutNetwork checks that a host daemon's socket in
// the runtime dir (XDG_RUNTIME_DIR, where dbus, ssh-agent and systemd --user
// live) cannot be reached when the network is off, and can with it on (the
// control).
func TestUnixSocketsHiddenWithoutNetwork(t *testing.T) {
	runtimeDir := t.TempDir()
	sock := filepath.Join(runtimeDir, "daemon.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	env := append(os.Environ(), "XDG_RUNTIME_DIR="+runtimeDir)
	script := "test -S " + sock + " && echo VISIBLE"
	e := newEnv(t, Env(env))
	e.run(script)
	if strings.Contains(e.stdout.String(), "VISIBLE") {
		t.Fatalf("the host socket %s is visible with the network off", sock)
	}
	e2 := newEnv(t, Env(env), Network(true))
	e2.run(script)
	if !strings.Contains(e2.stdout.String(), "VISIBLE") {
		t.Fatalf("control: the host socket is not visible even with the network on; stderr %q", e2.stderr.String())
	}
}

// TestLeftoversAreCleaned checks that a run whose state dir was deleted
// leaves nothing behind for long: its scratch dir on tmpfs is removed by
// the next nash once the owner is gone, and what a discarded run leaves in
// a state dir can be removed by its owner with rm -r.
func TestLeftoversAreCleaned(t *testing.T) {
	// A scratch dir owned by a process that is gone.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	orphan := filepath.Join(scratchBase, fmt.Sprintf("%s%d-%s-test", scratchPrefix, dead.Process.Pid, "1"))
	if err := os.MkdirAll(filepath.Join(orphan, "work", "0", "work"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(orphan, "work", "0", "work"), 0); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	p := e.run("echo x > f")
	if err := e.sb.Abort(p.ID); err != nil {
		t.Fatal(err)
	}
	if err := e.sb.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(orphan); err == nil {
		t.Errorf("the orphaned scratch dir %s is still there", orphan)
	}
	// What a discarded run leaves in the state dir can be removed by its
	// owner at once (overlayfs's mode-000 work dirs are opened up), even
	// before the background sweep. As root this cannot fail; CI also runs
	// it as an ordinary user, where it can.
	e2 := newEnv(t)
	p2 := e2.run("echo x > f")
	if err := e2.sb.Abort(p2.ID); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("rm", "-rf", e2.state).CombinedOutput(); err != nil {
		t.Errorf("rm -rf of a state dir failed: %v\n%s", err, out)
	}
	_ = e2.sb.Close()
}

// TestOneWriterForBothStreams passes the same writer as stdout and stderr:
// output keeps its order and the race detector sees no two writers.
func TestOneWriterForBothStreams(t *testing.T) {
	var both syncBuffer
	base := t.TempDir()
	sb, err := New(context.Background(), StateDir(filepath.Join(base, "state")), Dir(base), Stdio(nil, &both, &both))
	if err != nil {
		t.Fatal(err)
	}
	defer sb.Close()
	p, err := sb.Run(context.Background(), "for i in 1 2 3; do echo out$i; echo err$i >&2; done")
	if err != nil {
		t.Fatal(err)
	}
	_ = sb.Abort(p.ID)
	if got, want := both.String(), "out1\nerr1\nout2\nerr2\nout3\nerr3\n"; got != want {
		t.Fatalf("combined output %q, want %q", got, want)
	}
}

// TestMountPointsKeepTheirModes: the top of each overlay shows the mode of
// the directory it covers (not its upper dir's 0700): /tmp stays 1777. For
// an ordinary user, who is shown as the owner of every top, the owner's
// bits of another's directory are what the user may do there outside, so
// that /etc stays closed to them.
func TestMountPointsKeepTheirModes(t *testing.T) {
	e := newEnv(t)
	var points []string
	for _, p := range []string{"/tmp", "/dev/shm", "/etc", "/usr", e.work} {
		if _, err := os.Stat(p); err == nil {
			points = append(points, p)
		}
	}
	var want strings.Builder
	for _, p := range points {
		var st unix.Stat_t
		if err := unix.Stat(p, &st); err != nil {
			t.Fatal(err)
		}
		mode := st.Mode & 0o7777
		if os.Getuid() != 0 && int(st.Uid) != os.Getuid() {
			// Shown as the user's: the owner's bits are what the user
			// may do there outside (dirAttrs).
			mode = mode&^0o700 | accessBits(p)
		}
		fmt.Fprintf(&want, "%s %o\n", p, mode)
	}
	e.run(`for p in ` + strings.Join(points, " ") + `; do printf '%s %s\n' "$p" "$(stat -c %a "$p")"; done`)
	if got := e.stdout.String(); got != want.String() {
		t.Errorf("modes inside the sandbox:\n%swant:\n%s", got, want.String())
	}
}
