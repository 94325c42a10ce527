package sandbox

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// crasherMain commits or undoes in a process of its own, so the test can
// kill it at any instant. It prints "go" just before it starts.
func crasherMain() int {
	ctx := context.Background()
	sb, err := New(ctx, StateDir(os.Getenv("NASH_TEST_STATE")), Dir("/"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	id := os.Getenv("NASH_TEST_ID")
	fmt.Println("go")
	switch os.Getenv("NASH_TEST_CRASHER") {
	case "commit":
		_, err = sb.Commit(ctx, id, CommitOptions{})
	case "undo":
		_, err = sb.Undo(ctx, id, UndoOptions{})
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

const crashSetup = `
for i in $(seq 0 199); do echo "file $i" > f$i; done
mkdir d k; for i in $(seq 0 49); do echo "d $i" > d/x$i; echo "k $i" > k/y$i; done
ln f0 f0-link
mkdir -p m/sub e g; for i in $(seq 0 19); do echo "m $i" > m/x$i; done; echo s > m/sub/s; echo g > g/g`

const crashScript = `
for i in $(seq 0 99); do echo changed >> f$i; done
for i in $(seq 100 149); do rm f$i; done
for i in $(seq 0 99); do echo new > n$i; done
rm -rf k; mkdir nd; for i in $(seq 0 49); do echo nd > nd/z$i; done
chmod 700 d; mv f150 renamed
mv m m2; echo changed >> m2/x0; rm m2/x1; echo new > m2/new; mv g e`

// TestCrashSafety kills nash with SIGKILL at random instants during commit
// and during undo; after recovery every path must be all-before or
// all-after, nothing lost, and no journal left.
func TestCrashSafety(t *testing.T) {
	trials := 100
	if testing.Short() {
		trials = 10
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// Calibrate: how long does an uninterrupted commit and undo take here?
	e := newEnv(t)
	e.sh(crashSetup)
	p := e.run(crashScript)
	e.sb.waitTorndown(p.ID)
	start := time.Now()
	tx := e.commit(p)
	commitDur := time.Since(start)
	start = time.Now()
	e.undo(tx.ID)
	undoDur := time.Since(start)
	t.Logf("uninterrupted: commit %v, undo %v", commitDur, undoDur)

	var stats struct{ before, after, rolledBack, completed int }
	for i := 0; i < trials; i++ {
		e := newEnv(t)
		e.sh(crashSetup)
		orig := snapshot(t, e.work)
		native := filepath.Join(t.TempDir(), "native")
		if out, err := exec.Command("cp", "-a", e.work+"/.", native).CombinedOutput(); err != nil {
			t.Fatalf("copy: %v\n%s", err, out)
		}
		cmd := exec.Command("bash", "-c", crashScript)
		cmd.Dir = native
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("native: %v\n%s", err, out)
		}
		after := snapshot(t, native)
		p := e.run(crashScript)
		e.sb.waitTorndown(p.ID)

		// Crash during commit.
		crash(t, self, e.state, "commit", p.ID, commitDur)
		rep := recoverState(t, e.state)
		stats.rolledBack += len(rep.RolledBack)
		stats.completed += len(rep.Completed)
		now := snapshot(t, e.work)
		switch {
		case diffTrees(orig, now) == "":
			stats.before++
			// The run is still pending: commit it for real.
			e.commit(p)
			if d := diffTrees(after, snapshot(t, e.work)); d != "" {
				t.Fatalf("trial %d: commit after recovery differs from native:\n%s", i, d)
			}
		case diffTrees(after, now) == "":
			stats.after++
		default:
			t.Fatalf("trial %d: after a crash during commit the tree is neither before nor after:\nvs before:\n%s\nvs after:\n%s",
				i, diffTrees(orig, now), diffTrees(after, now))
		}

		// Crash during undo.
		txs, err := e.sb.Log()
		if err != nil || len(txs) == 0 {
			t.Fatalf("trial %d: no transaction after the commit: %v", i, err)
		}
		txID := txs[len(txs)-1].ID
		crash(t, self, e.state, "undo", txID, undoDur)
		rep = recoverState(t, e.state)
		stats.rolledBack += len(rep.RolledBack)
		stats.completed += len(rep.Completed)
		now = snapshot(t, e.work)
		switch {
		case diffTrees(after, now) == "":
			stats.after++
			e.undo(txID)
			if d := diffTrees(orig, snapshot(t, e.work)); d != "" {
				t.Fatalf("trial %d: undo after recovery differs from before:\n%s", i, d)
			}
		case diffTrees(orig, now) == "":
			stats.before++
		default:
			t.Fatalf("trial %d: after a crash during undo the tree is neither before nor after:\nvs before:\n%s\nvs after:\n%s",
				i, diffTrees(orig, now), diffTrees(after, now))
		}
	}
	t.Logf("%d trials x 2 crashes: %d all-before, %d all-after; recovery rolled back %d, completed %d",
		trials, stats.before, stats.after, stats.rolledBack, stats.completed)
	if !testing.Short() && (stats.rolledBack == 0 || stats.before == 0 || stats.after == 0) {
		t.Errorf("the kills never landed mid-transaction (rolled back %d, before %d, after %d): the test proved nothing", stats.rolledBack, stats.before, stats.after)
	}
}

// crash starts a crasher and kills it at a random instant within about
// one uninterrupted duration of its work.
func crash(t *testing.T, self, state, mode, id string, dur time.Duration) {
	t.Helper()
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), "NASH_TEST_CRASHER="+mode, "NASH_TEST_STATE="+state, "NASH_TEST_ID="+id)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "go\n" {
		_ = cmd.Wait()
		t.Fatalf("crasher did not start: %q %s", line, stderr.String())
	}
	time.Sleep(time.Duration(rand.Int64N(int64(dur)*12/10 + 1)))
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
}

// recoverState opens the sandbox as the next nash start would, and checks
// that no journal is left behind.
func recoverState(t *testing.T, state string) *RecoveryReport {
	t.Helper()
	sb, err := New(context.Background(), StateDir(state), Dir("/"))
	if err != nil {
		t.Fatalf("recover: %v", err)
	}
	defer sb.Close()
	left, _ := os.ReadDir(layout(state).journalDir())
	if len(left) > 0 {
		t.Fatalf("journal left behind after recovery: %v", left)
	}
	return sb.lastRecovery
}
