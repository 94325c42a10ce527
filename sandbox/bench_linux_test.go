package sandbox

import (
	"context"
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
