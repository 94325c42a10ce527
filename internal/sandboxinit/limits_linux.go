package sandboxinit

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// PidHeadroom is how far beyond MaxProcs the pid namespace's pid_max is
// set: the kernel hands out pids below 300 only before the first wrap,
// and the init keeps room for threads of its own. An ordinary user's run
// is held to MaxProcs exactly by RLIMIT_NPROC; root, whom that limit
// spares, by pid_max, so up to MaxProcs+PidHeadroom.
const PidHeadroom = 364

// capPids caps the pids of the sandbox's pid namespace, its threads
// included (pid_max is per pid namespace since Linux 6.14). It reports
// whether the kernel took the cap.
func capPids(maxProcs int) bool {
	const f = "/proc/sys/kernel/pid_max"
	b, err := os.ReadFile(f)
	if err != nil {
		return false
	}
	cur, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return false
	}
	want := min(maxProcs+PidHeadroom, cur)
	if err := os.WriteFile(f, []byte(strconv.Itoa(want)), 0); err != nil {
		return false
	}
	return true
}

// sealProcSys makes /proc/sys read-only: the kernel lets root in the
// sandbox's user namespace write the pid namespace's pid_max, which
// would lift the cap.
func sealProcSys() error {
	const p = "/proc/sys"
	if err := unix.Mount(p, p, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s: %w", p, err)
	}
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(-1, p, unix.AT_RECURSIVE, attr); err != nil {
		return fmt.Errorf("make %s read-only: %w", p, err)
	}
	return nil
}

// spareThreads is how many idle threads the init makes before root's
// script starts: a fork bomb fills the pid namespace to pid_max, and a Go
// runtime that then needs a new thread (a goroutine blocked in a system
// call, the signal handler) could not make one and would die, taking the
// run's result with it. The runtime takes an idle thread before making one.
const spareThreads = 12

// reserveThreads leaves n idle threads in the runtime: n goroutines, each
// on a thread of its own at once, let their threads go together.
func reserveThreads(n int) {
	var started, release sync.WaitGroup
	started.Add(n)
	release.Add(1)
	var done sync.WaitGroup
	done.Add(n)
	for range n {
		go func() {
			defer done.Done()
			runtime.LockOSThread()
			started.Done()
			release.Wait()
			runtime.UnlockOSThread()
		}()
	}
	started.Wait()
	release.Done()
	done.Wait()
}
