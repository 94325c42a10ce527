package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// BenchmarkCommit1GiB times only the commit of a change to a 1 GiB file
// (the run, where overlayfs copies the file up, is not timed), next to
// copying the file once, which is what a commit by copy would cost.
func BenchmarkCommit1GiB(b *testing.B) {
	b.Run("commit", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			e := newEnv(b)
			e.sh("head -c 1073741824 /dev/zero > big")
			p := e.run("echo tail >> big")
			e.sb.waitTorndown(p.ID)
			b.StartTimer()
			if _, err := e.sb.Commit(context.Background(), p.ID, CommitOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cp", func(b *testing.B) {
		dir := b.TempDir()
		if out, err := exec.Command("sh", "-c", "head -c 1073741824 /dev/zero > "+dir+"/big").CombinedOutput(); err != nil {
			b.Fatalf("%v %s", err, out)
		}
		for b.Loop() {
			if out, err := exec.Command("cp", dir+"/big", dir+"/copy").CombinedOutput(); err != nil {
				b.Fatalf("%v %s", err, out)
			}
		}
	})
}

// benchOptions returns options for a sandbox with its state in a fresh
// temporary dir and /dev/null for the script's streams, as `nash run`
// gives it files, not pipes. NASH_BENCH_INIT names the init binary to use.
func benchOptions(b *testing.B) []Option {
	b.Helper()
	base := b.TempDir()
	work := filepath.Join(base, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		b.Fatal(err)
	}
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { null.Close() })
	opts := []Option{StateDir(filepath.Join(base, "state")), Dir(work), Stdio(null, null, null)}
	if exe := os.Getenv("NASH_BENCH_INIT"); exe != "" {
		// A built nash-sandbox, as nash runs it, instead of this test
		// binary, whose start-up initialises every test dependency.
		opts = append(opts, Executable(exe))
	}
	return opts
}

// BenchmarkRunTrue times what `nash run --yes -- true` costs inside the
// sandbox package: New (with its recovery), Run of "true", Abort and Close,
// the start-up of the nash process itself apart.
func BenchmarkRunTrue(b *testing.B) {
	opts := benchOptions(b)
	ctx := context.Background()
	var m medianTimer
	for b.Loop() {
		m.start()
		sb, err := New(ctx, opts...)
		if err != nil {
			b.Fatal(err)
		}
		p, err := sb.Run(ctx, "true")
		if err != nil {
			b.Fatal(err)
		}
		if err := sb.Abort(p.ID); err != nil {
			b.Fatal(err)
		}
		if err := sb.Close(); err != nil {
			b.Fatal(err)
		}
		m.stop()
	}
	m.report(b)
}

// BenchmarkRun times Run of "true" and its Abort alone, on one Sandbox.
func BenchmarkRun(b *testing.B) {
	ctx := context.Background()
	sb, err := New(ctx, benchOptions(b)...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = sb.Close() })
	var m medianTimer
	for b.Loop() {
		m.start()
		p, err := sb.Run(ctx, "true")
		if err != nil {
			b.Fatal(err)
		}
		if err := sb.Abort(p.ID); err != nil {
			b.Fatal(err)
		}
		m.stop()
	}
	m.report(b)
}

// medianTimer times iterations one by one: on a shared machine the median
// says more than the mean that ns/op is.
type medianTimer struct {
	t0 time.Time
	d  []time.Duration
}

func (m *medianTimer) start() { m.t0 = time.Now() }
func (m *medianTimer) stop()  { m.d = append(m.d, time.Since(m.t0)) }

// report adds the median as the metric med-ns/op.
func (m *medianTimer) report(b *testing.B) {
	if len(m.d) == 0 {
		return
	}
	slices.Sort(m.d)
	b.ReportMetric(float64(m.d[len(m.d)/2].Nanoseconds()), "med-ns/op")
}

// benchInit is the option for the init NASH_BENCH_INIT names, if any.
func benchInit() []Option {
	if exe := os.Getenv("NASH_BENCH_INIT"); exe != "" {
		return []Option{Executable(exe)}
	}
	return nil
}

// BenchmarkRenames renames 10,000 files and 1,000 directories (of three
// files each), one rename(2) each, natively and in the sandbox, side by
// side in one loop: once where they existed before the run (the overlay
// copies each file up, and the init moves each directory's entries into
// a directory of the upper layer), then commits; and once where the run
// created them, where the overlay copies nothing, so that what is left is
// the cost of the init's look at each call. The figures are the times of
// the rename loops alone, as the renaming program measures them.
func BenchmarkRenames(b *testing.B) {
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	prog := func(mode string) string { return "NASH_TEST_RENAMES='10000 1000 " + mode + "' " + self }
	times := func(out string) (files, dirs time.Duration) {
		var f, d int64
		if _, err := fmt.Sscanf(out, "%d %d", &f, &d); err != nil {
			b.Fatalf("renaming program said %q", out)
		}
		return time.Duration(f), time.Duration(d)
	}
	native := func(dir, script string) string {
		cmd := exec.Command("sh", "-c", script)
		cmd.Dir = dir
		var out bytes.Buffer
		cmd.Stdout = &out
		if err := cmd.Run(); err != nil {
			b.Fatalf("native: %v", err)
		}
		return out.String()
	}
	var m struct{ natF, natD, runF, runD, commit, newNatF, newNatD, newRunF, newRunD time.Duration }
	for b.Loop() {
		e := newEnv(b, benchInit()...)
		e.sh(prog("setup"))
		nat := filepath.Join(b.TempDir(), "native")
		if out, err := exec.Command("cp", "-a", e.work, nat).CombinedOutput(); err != nil {
			b.Fatalf("%v %s", err, out)
		}
		f, d := times(native(nat, prog("")))
		m.natF, m.natD = m.natF+f, m.natD+d
		p := e.run(prog(""))
		if p.ExitCode != 0 || p.Changes.Len() != 20000+1000 {
			b.Fatalf("exit %d, %d changes; stderr %s", p.ExitCode, p.Changes.Len(), e.stderr.String())
		}
		f, d = times(e.stdout.String())
		m.runF, m.runD = m.runF+f, m.runD+d
		t0 := time.Now()
		e.commit(p)
		m.commit += time.Since(t0)

		f, d = times(native(b.TempDir(), prog("create")))
		m.newNatF, m.newNatD = m.newNatF+f, m.newNatD+d
		e2 := newEnv(b, benchInit()...)
		p = e2.run(prog("create"))
		if p.ExitCode != 0 {
			b.Fatalf("exit %d; stderr %s", p.ExitCode, e2.stderr.String())
		}
		f, d = times(e2.stdout.String())
		m.newRunF, m.newRunD = m.newRunF+f, m.newRunD+d
		_ = e2.sb.Abort(p.ID)
	}
	n := float64(b.N)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / n }
	b.ReportMetric(ms(m.natF), "old-files-native-ms")
	b.ReportMetric(ms(m.runF), "old-files-nash-ms")
	b.ReportMetric(ms(m.natD), "old-dirs-native-ms")
	b.ReportMetric(ms(m.runD), "old-dirs-nash-ms")
	b.ReportMetric(ms(m.commit), "commit-ms")
	b.ReportMetric(ms(m.newNatF), "new-files-native-ms")
	b.ReportMetric(ms(m.newRunF), "new-files-nash-ms")
	b.ReportMetric(ms(m.newNatD), "new-dirs-native-ms")
	b.ReportMetric(ms(m.newRunD), "new-dirs-nash-ms")
}

// BenchmarkGitMv moves a directory of 10,000 committed files with git mv,
// natively and in the sandbox (then commits), side by side.
func BenchmarkGitMv(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Fatal("git is needed")
	}
	const setup = `git init -q . && git config gc.auto 0 && mkdir src && for i in $(seq 0 9999); do echo $i > src/f$i; done && git add -A && git -c user.name=n -c user.email=n@n commit -qm init`
	var native, sandboxed, commit time.Duration
	for b.Loop() {
		e := newEnv(b, benchInit()...)
		e.sh(setup)
		nat := filepath.Join(b.TempDir(), "native")
		if out, err := exec.Command("cp", "-a", e.work, nat).CombinedOutput(); err != nil {
			b.Fatalf("%v %s", err, out)
		}
		t0 := time.Now()
		cmd := exec.Command("git", "mv", "src", "lib")
		cmd.Dir = nat
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("native: %v %s", err, out)
		}
		native += time.Since(t0)
		t0 = time.Now()
		p := e.run("git mv src lib")
		sandboxed += time.Since(t0)
		if p.ExitCode != 0 {
			b.Fatalf("exit %d; stderr %s", p.ExitCode, e.stderr.String())
		}
		t0 = time.Now()
		e.commit(p)
		commit += time.Since(t0)
	}
	n := float64(b.N)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / n }
	b.ReportMetric(ms(native), "native-ms/op")
	b.ReportMetric(ms(sandboxed), "run-ms/op")
	b.ReportMetric(ms(commit), "commit-ms/op")
	b.ReportMetric(float64(sandboxed)/float64(native), "run/native")
}
