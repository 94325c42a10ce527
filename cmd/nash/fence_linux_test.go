package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nash-shell/nash/internal/sandboxinit"
)

// runFenced runs script natively, without overlays, for comparison with
// nash: in its own user, mount, pid and network namespaces where every
// mount is read-only except dir, /tmp and a private /dev/shm, so a command
// from a benchmark cannot damage the machine the tests run on.
func runFenced(t *testing.T, dir, script string, env ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(testBin(t, fenceName))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NASH_TEST_FENCE="+dir, "NASH_TEST_SCRIPT="+script)
	cmd.Env = append(cmd.Env, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	uid, gid := os.Getuid(), os.Getgid()
	attr := &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID | syscall.CLONE_NEWNET, Pdeathsig: syscall.SIGKILL}
	if uid == 0 {
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
		attr.GidMappingsEnableSetgroups = true
	} else {
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		attr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP, unix.CAP_NET_ADMIN}
	}
	// The supplementary groups nash's sandbox maps, the fence maps too,
	// so that id and groups say the same in both.
	extra, newgidmap := fenceGroups()
	if len(extra) > 0 {
		attr.GidMappings = nil
		cmd.Env = append(cmd.Env, "NASH_TEST_FENCE_GIDS=1")
	}
	cmd.SysProcAttr = attr
	err := cmd.Start()
	if err == nil && len(extra) > 0 {
		args := []string{strconv.Itoa(cmd.Process.Pid), strconv.Itoa(gid), strconv.Itoa(gid), "1"}
		for _, g := range extra {
			args = append(args, strconv.Itoa(g), strconv.Itoa(g), "1")
		}
		if out, merr := exec.Command(newgidmap, args...).CombinedOutput(); merr != nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			t.Fatalf("fence: newgidmap: %v: %s", merr, out)
		}
	}
	if err == nil {
		err = cmd.Wait()
	}
	if ee, ok := err.(*exec.ExitError); ok {
		if ee.ExitCode() == 125 && strings.HasPrefix(errb.String(), "fence:") {
			t.Fatalf("%s", errb.String())
		}
		return out.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatalf("fence: %v", err)
	}
	return out.String(), 0
}

// fenceName is the command that runs fenceMain (see TestMain).
const fenceName = "nash-test-fence"

// fenceGroups returns the supplementary gids an ordinary user's sandbox
// maps (as sandbox/ids_linux.go works them out: the user's groups that
// /etc/subgid grants them, where newgidmap is installed), and newgidmap.
func fenceGroups() ([]int, string) {
	if os.Getuid() == 0 {
		return nil, ""
	}
	newgidmap, err := exec.LookPath("newgidmap")
	if err != nil {
		return nil, ""
	}
	groups, _ := os.Getgroups()
	u, _ := user.LookupId(strconv.Itoa(os.Getuid()))
	b, _ := os.ReadFile("/etc/subgid")
	var out []int
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Split(strings.TrimSpace(line), ":")
		if len(f) != 3 || (u == nil || f[0] != u.Username) && f[0] != strconv.Itoa(os.Getuid()) {
			continue
		}
		start, err1 := strconv.Atoi(f[1])
		count, err2 := strconv.Atoi(f[2])
		if err1 != nil || err2 != nil {
			continue
		}
		for _, g := range groups {
			if g != os.Getgid() && g >= start && g < start+count && !slices.Contains(out, g) {
				out = append(out, g)
			}
		}
	}
	slices.Sort(out)
	return out, newgidmap
}

// fenceMain is the fenced process: it seals the mounts, drops its
// capabilities and becomes bash.
func fenceMain() int {
	runtime.LockOSThread()
	dir := os.Getenv("NASH_TEST_FENCE")
	fail := func(what string, err error) int {
		fmt.Fprintf(os.Stderr, "fence: %s: %v\n", what, err)
		return 125
	}
	if os.Getenv("NASH_TEST_FENCE_GIDS") != "" {
		// The parent maps the gids with newgidmap once this process runs.
		for i := 0; ; i++ {
			if b, err := os.ReadFile("/proc/self/gid_map"); err == nil && len(b) > 0 {
				break
			}
			if i == 5000 {
				return fail("gid map", errors.New("never written"))
			}
			time.Sleep(time.Millisecond)
		}
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fail("private", err)
	}
	if err := unix.Mount(dir, dir, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fail("bind", err)
	}
	if err := unix.MountSetattr(-1, "/", unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		return fail("read-only", err)
	}
	if err := unix.MountSetattr(-1, dir, 0, &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}); err != nil {
		return fail("writable dir", err)
	}
	// Temp dirs stay writable, as natively: /tmp bound onto itself (the
	// fixture may live below it), /dev/shm a private tmpfs.
	if err := unix.Mount("/tmp", "/tmp", "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fail("bind /tmp", err)
	}
	if err := unix.MountSetattr(-1, "/tmp", unix.AT_RECURSIVE, &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}); err != nil {
		return fail("writable /tmp", err)
	}
	if err := unix.Mount("shm", "/dev/shm", "tmpfs", 0, "mode=1777"); err != nil {
		return fail("tmpfs /dev/shm", err)
	}
	if err := unix.Mount("proc", "/proc", "proc", 0, ""); err != nil {
		return fail("proc", err)
	}
	if err := sandboxinit.LoopbackUp(); err != nil {
		return fail("loopback", err)
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fail("ambient", err)
	}
	for _, c := range []int{unix.CAP_SYS_ADMIN, unix.CAP_SYS_PTRACE} {
		_ = unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
	}
	if err := os.Chdir(dir); err != nil {
		return fail("chdir", err)
	}
	env := []string{}
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, "NASH_TEST_FENCE=") && !strings.HasPrefix(e, "NASH_TEST_SCRIPT=") && !strings.HasPrefix(e, "NASH_TEST_FENCE_GIDS=") {
			env = append(env, e)
		}
	}
	err := syscall.Exec("/bin/bash", []string{"bash", "-c", os.Getenv("NASH_TEST_SCRIPT"), "bash"}, env)
	return fail("exec", err)
}
