package sandbox

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nash-shell/nash/internal/sandboxinit"
)

// nsTasks counts the tasks (processes and their threads) in the pid
// namespace whose init has host pid initPid.
func nsTasks(initPid int) int {
	ns, err := os.Readlink(fmt.Sprintf("/proc/%d/ns/pid", initPid))
	if err != nil {
		return 0
	}
	n := 0
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		if l, err := os.Readlink(p + "/ns/pid"); err != nil || l != ns {
			continue
		}
		tasks, _ := os.ReadDir(p + "/task")
		n += len(tasks)
	}
	return n
}

// TestForkBombContained runs a fork bomb: the run's processes stay within
// the cap (for root, whom RLIMIT_NPROC spares, within the pid namespace's
// pid_max), the run ends, and the machine never sees more.
func TestForkBombContained(t *testing.T) {
	const limit = 200
	allowed := limit
	if os.Getuid() == 0 {
		allowed += sandboxinit.PidHeadroom
	}
	e := newEnv(t, MaxProcesses(limit))
	done := make(chan error, 1)
	var p *Pending
	go func() {
		var err error
		// The bomb goes off in a subshell: the script's own shell must
		// not need a fork once the cap is reached.
		p, err = e.sb.Run(context.Background(), `(bomb() { bomb | bomb & }; bomb); exec sleep 4`)
		done <- err
	}()
	most := 0
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("at most %d tasks in the sandbox (cap %d, allowed %d)", most, limit, allowed)
			if most > allowed {
				t.Fatalf("the sandbox had %d tasks, over its cap of %d", most, allowed)
			}
			if most < limit/2 {
				t.Fatalf("the bomb never came near the cap (%d tasks): the test proved nothing", most)
			}
			if p.ExitCode != 0 {
				t.Errorf("the script's own sleep failed: exit %d", p.ExitCode)
			}
			return
		default:
		}
		if pid := sandboxInit(); pid > 0 {
			n := nsTasks(pid)
			most = max(most, n)
			if n > allowed+200 {
				// Uncapped: stop it before it hurts the machine.
				_ = killPid(pid)
				<-done
				t.Fatalf("the fork bomb is not contained: %d tasks and counting (cap %d)", n, limit)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func killPid(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

// meminfo reads one field of /proc/meminfo, in bytes.
func meminfo(t *testing.T, field string) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/meminfo", field)
	return 0
}

// TestScratchCapped writes 3 GiB outside the working directory (to the
// home directory, whose overlay's upper dir is the run's scratch space,
// as the working directory is elsewhere): the
// write fails inside with ENOSPC at the default cap, the host's memory
// never holds the 3 GiB, the run says its scratch space filled up, and
// the memory is released as soon as the run is aborted.
func TestScratchCapped(t *testing.T) {
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t)
	if under(e.work, home) {
		t.Fatalf("the test's working directory %s is in the home directory %s", e.work, home)
	}
	before := meminfo(t, "Shmem")
	p := e.run(`head -c 3221225472 /dev/zero > "$HOME/nash-scratch-test"; echo "status $?"`)
	during := meminfo(t, "Shmem")
	t.Logf("shared memory: %d MiB before, %d MiB with the run pending; cap %d MiB",
		before>>20, during>>20, e.sb.scratchSize>>20)
	if !strings.Contains(e.stdout.String(), "status 1") || !strings.Contains(e.stderr.String(), "No space left on device") {
		t.Fatalf("the 3 GiB write did not fail inside: stdout %q, stderr %q", e.stdout.String(), e.stderr.String())
	}
	if p.ScratchFull != e.sb.scratchSize {
		t.Errorf("ScratchFull = %d, want the cap %d", p.ScratchFull, e.sb.scratchSize)
	}
	if grew := during - before; grew > e.sb.scratchSize+256<<20 {
		t.Errorf("the host's shared memory grew by %d MiB, more than the %d MiB cap", grew>>20, e.sb.scratchSize>>20)
	}
	if err := e.sb.Abort(p.ID); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		after := meminfo(t, "Shmem")
		if after < during-e.sb.scratchSize/2 {
			t.Logf("%d MiB after the abort", after>>20)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the scratch space was not released after the abort: %d MiB shared, %d MiB with the run pending", after>>20, during>>20)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
