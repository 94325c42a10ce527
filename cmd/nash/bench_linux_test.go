package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// These benchmarks build nash and its helper binaries and run them in a fresh
// process per operation, exactly as a person runs them; compare each with
// its native counterpart measured in the same run.

// buildBinaries builds nash, nash-sandbox and nash-index as make build does (statically, without cgo), so the benchmarks measure
// what a person runs.
func buildBinaries(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	for _, bin := range []string{"nash", "nash-sandbox", "nash-index"} {
		cmd := exec.Command("go", "build", "-o", filepath.Join(dir, bin), "github.com/nash-shell/nash/cmd/"+bin)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("build %s: %v\n%s", bin, err, out)
		}
	}
	return filepath.Join(dir, "nash")
}

func benchNash(b *testing.B, nash, dir, state string, args ...string) *os.ProcessState {
	b.Helper()
	cmd := exec.Command(nash, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "NASH_STATE_DIR="+state)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		b.Fatalf("nash %v: %v\n%s", args, err, errb.String())
	}
	return cmd.ProcessState
}

func benchSh(b *testing.B, dir, script string) *os.ProcessState {
	b.Helper()
	cmd := exec.Command("sh", "-c", script)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("sh: %v\n%s", err, out)
	}
	return cmd.ProcessState
}

// cpu adds up the CPU time of a process and everything it waited for: a
// figure much less disturbed than wall time on a shared machine.
type cpu struct{ total float64 }

func (c *cpu) add(ps *os.ProcessState) { c.total += (ps.UserTime() + ps.SystemTime()).Seconds() }

func (c *cpu) report(b *testing.B) { b.ReportMetric(c.total*1000/float64(b.N), "cpu-ms/op") }

// BenchmarkOverhead compares `nash run --yes -- true` with `sh -c true`;
// the difference is what the sandbox adds to a command.
func BenchmarkOverhead(b *testing.B) {
	nash := buildBinaries(b)
	dir, state := b.TempDir(), filepath.Join(b.TempDir(), "state")
	b.Run("sh", func(b *testing.B) {
		var c cpu
		for b.Loop() {
			c.add(benchSh(b, dir, "true"))
		}
		c.report(b)
	})
	b.Run("nash", func(b *testing.B) {
		var c cpu
		for b.Loop() {
			c.add(benchNash(b, nash, dir, state, "run", "--yes", "--", "true"))
		}
		c.report(b)
	})
}

const create10k = `mkdir -p out && cd out && i=0; while [ $i -lt 10000 ]; do echo "file $i" > f$i; i=$((i+1)); done`

// Benchmark10kFiles creates 10,000 small files natively, and through nash
// with commit, and then undoes them. ext4's time to create the files
// varies several-fold from one minute to the next here (it depends on how
// the last thousands of creates and deletes left its bitmaps), so the
// side-by-side case alternates the two in one loop and reports both, and
// their ratio, from the same minutes.
func Benchmark10kFiles(b *testing.B) {
	nash := buildBinaries(b)
	b.Run("side-by-side", func(b *testing.B) {
		var native, sandboxed time.Duration
		for b.Loop() {
			dir := b.TempDir()
			t0 := time.Now()
			benchSh(b, dir, create10k)
			native += time.Since(t0)
			dir, state := b.TempDir(), filepath.Join(b.TempDir(), "state")
			t0 = time.Now()
			benchNash(b, nash, dir, state, "run", "--yes", "--", create10k)
			sandboxed += time.Since(t0)
		}
		b.ReportMetric(float64(native.Milliseconds())/float64(b.N), "native-ms/op")
		b.ReportMetric(float64(sandboxed.Milliseconds())/float64(b.N), "nash-ms/op")
		b.ReportMetric(float64(sandboxed)/float64(native), "nash/native")
	})
	b.Run("native", func(b *testing.B) {
		var c cpu
		for b.Loop() {
			dir := b.TempDir()
			c.add(benchSh(b, dir, create10k))
		}
		c.report(b)
	})
	b.Run("nash-run-commit", func(b *testing.B) {
		var c cpu
		for b.Loop() {
			dir, state := b.TempDir(), filepath.Join(b.TempDir(), "state")
			c.add(benchNash(b, nash, dir, state, "run", "--yes", "--", create10k))
		}
		c.report(b)
	})
	b.Run("nash-undo", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			dir, state := b.TempDir(), filepath.Join(b.TempDir(), "state")
			benchNash(b, nash, dir, state, "run", "--yes", "--", create10k)
			b.StartTimer()
			benchNash(b, nash, dir, state, "undo")
		}
	})
}

// Benchmark1GiBChange changes a 1 GiB file and commits: the commit moves
// the new version in and the old one to the undo layer by rename.
func Benchmark1GiBChange(b *testing.B) {
	nash := buildBinaries(b)
	for b.Loop() {
		b.StopTimer()
		dir, state := b.TempDir(), filepath.Join(b.TempDir(), "state")
		benchSh(b, dir, "head -c 1073741824 /dev/zero > big")
		b.StartTimer()
		benchNash(b, nash, dir, state, "run", "--yes", "--", "echo tail >> big")
	}
}

// BenchmarkCommit100kRSS reports nash's peak RSS while it runs and commits
// a script that creates 100,000 files.
func BenchmarkCommit100kRSS(b *testing.B) {
	nash := buildBinaries(b)
	const create = `mkdir -p out && cd out && for d in $(seq 100); do mkdir d$d; for i in $(seq 1000); do : > d$d/f$i; done; done`
	var maxRSS int64
	for b.Loop() {
		b.StopTimer()
		dir, state := b.TempDir(), filepath.Join(b.TempDir(), "state")
		b.StartTimer()
		ps := benchNash(b, nash, dir, state, "run", "--yes", "--", create)
		if ru, ok := ps.SysUsage().(*syscall.Rusage); ok && ru.Maxrss > maxRSS {
			maxRSS = ru.Maxrss
		}
	}
	b.ReportMetric(float64(maxRSS)/1024, "peak-MB")
}
