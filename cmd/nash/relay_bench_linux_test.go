package main

import (
	"bytes"

	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// The benchmarks here measure what the script's own terminal and pipes
// cost: output through nash against the same command natively, side by
// side in one loop (the machine's load swings), and a keystroke's echo in
// vim through the relay against vim on a terminal of its own.

// benchPty opens a pseudo-terminal pair: the benchmark holds the master,
// as a terminal emulator does; the slave becomes the terminal of the
// process started on it.
func benchPty(b *testing.B) (master, slave *os.File) {
	b.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		b.Fatal(err)
	}
	var unlock, n int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		b.Fatal(e)
	}
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		b.Fatal(e)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		b.Fatal(err)
	}
	ws := [4]uint16{50, 160, 0, 0}
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, s.Fd(), syscall.TIOCSWINSZ, uintptr(unsafe.Pointer(&ws))); e != 0 {
		b.Fatal(e)
	}
	b.Cleanup(func() { m.Close(); s.Close() })
	return m, s
}

// onTerminal makes cmd a session leader whose controlling terminal, and
// stdin, stdout and stderr, are slave: as a shell starts a command.
func onTerminal(cmd *exec.Cmd, slave *os.File) {
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
}

// drainCount reads the master until it fails and returns how much it read.
func drainCount(master *os.File) <-chan int {
	done := make(chan int, 1)
	go func() {
		buf := make([]byte, 256<<10)
		n := 0
		for {
			k, err := master.Read(buf)
			n += k
			if err != nil {
				done <- n
				return
			}
		}
	}()
	return done
}

const seqScript = "seq 1 5000000" // about 39 MB

// BenchmarkOutputThroughNash runs seq 1 5000000 natively and through nash
// run, alternately, with the output going to a file (through a pipe nash
// owns) and to a terminal (through the script's own terminal and nash's
// relay). Target: nash at most 1.2 times native.
func BenchmarkOutputThroughNash(b *testing.B) {
	nash := buildBinaries(b)
	dir, state := b.TempDir(), filepath.Join(b.TempDir(), "state")
	b.Run("file", func(b *testing.B) {
		out := filepath.Join(b.TempDir(), "out")
		var native, through time.Duration
		run := func(cmd *exec.Cmd) time.Duration {
			f, err := os.Create(out)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			cmd.Dir, cmd.Stdout = dir, f
			var errb bytes.Buffer
			cmd.Stderr = &errb
			t0 := time.Now()
			if err := cmd.Run(); err != nil {
				b.Fatalf("%v: %v\n%s", cmd.Args, err, errb.String())
			}
			d := time.Since(t0)
			if fi, _ := f.Stat(); fi.Size() != 38888896 {
				b.Fatalf("%v wrote %d bytes", cmd.Args, fi.Size())
			}
			return d
		}
		var ratios []float64
		for b.Loop() {
			n := run(exec.Command("sh", "-c", seqScript))
			cmd := exec.Command(nash, "run", "--yes", "--", seqScript)
			cmd.Env = append(os.Environ(), "NASH_STATE_DIR="+state)
			t := run(cmd)
			native, through = native+n, through+t
			ratios = append(ratios, float64(t)/float64(n))
		}
		reportSideBySide(b, native, through, ratios)
	})
	b.Run("terminal", func(b *testing.B) {
		var native, through time.Duration
		run := func(cmd *exec.Cmd) time.Duration {
			master, slave := benchPty(b)
			onTerminal(cmd, slave)
			cmd.Dir = dir
			t0 := time.Now()
			if err := cmd.Start(); err != nil {
				b.Fatal(err)
			}
			slave.Close()
			got := drainCount(master)
			if err := cmd.Wait(); err != nil {
				b.Fatalf("%v: %v", cmd.Args, err)
			}
			n := <-got // the terminal is drained: the output was shown
			d := time.Since(t0)
			// Output processing turns each newline into two bytes.
			if n < 38888896 {
				b.Fatalf("%v showed %d bytes", cmd.Args, n)
			}
			return d
		}
		var ratios []float64
		for b.Loop() {
			n := run(exec.Command("sh", "-c", seqScript))
			cmd := exec.Command(nash, "run", "--yes", "--", seqScript)
			cmd.Env = append(os.Environ(), "NASH_STATE_DIR="+state)
			t := run(cmd)
			native, through = native+n, through+t
			ratios = append(ratios, float64(t)/float64(n))
		}
		reportSideBySide(b, native, through, ratios)
	})
}

// reportSideBySide reports the mean times and the median of the
// per-iteration ratios, which the machine's load swings disturb least.
func reportSideBySide(b *testing.B, native, through time.Duration, ratios []float64) {
	sort.Float64s(ratios)
	b.ReportMetric(float64(native.Microseconds())/1000/float64(b.N), "native-ms/op")
	b.ReportMetric(float64(through.Microseconds())/1000/float64(b.N), "nash-ms/op")
	b.ReportMetric(ratios[len(ratios)/2], "median-nash/native")
}

// editor is vim, else vi, started without any configuration.
func editor(b *testing.B) []string {
	b.Helper()
	for _, e := range []string{"vim", "vi"} {
		if p, err := exec.LookPath(e); err == nil {
			return []string{p, "-u", "NONE", "-N", "-n", "-i", "NONE"}
		}
	}
	b.Fatal("vim or vi is needed")
	return nil
}

// vimSession is vim on a terminal the benchmark holds, in insert mode.
type vimSession struct {
	cmd    *exec.Cmd
	master *os.File
	out    chan []byte
}

func startVim(b *testing.B, cmd *exec.Cmd) *vimSession {
	b.Helper()
	master, slave := benchPty(b)
	onTerminal(cmd, slave)
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	slave.Close()
	v := &vimSession{cmd: cmd, master: master, out: make(chan []byte, 1024)}
	go func() {
		for {
			buf := make([]byte, 64<<10)
			n, err := master.Read(buf)
			if n > 0 {
				v.out <- buf[:n]
			}
			if err != nil {
				close(v.out)
				return
			}
		}
	}()
	// Until vim has drawn its screen and is quiet, then insert mode.
	v.settle(b, 500*time.Millisecond)
	if _, err := master.Write([]byte("i")); err != nil {
		b.Fatal(err)
	}
	v.settle(b, 200*time.Millisecond)
	return v
}

// settle reads until nothing comes for quiet.
func (v *vimSession) settle(b *testing.B, quiet time.Duration) {
	b.Helper()
	for {
		select {
		case _, ok := <-v.out:
			if !ok {
				b.Fatal("vim ended")
			}
		case <-time.After(quiet):
			return
		}
	}
}

// key types one key and returns the time until vim's answer shows: for a
// letter, output holding it; for a backspace, any output.
func (v *vimSession) key(b *testing.B, k byte) time.Duration {
	t0 := time.Now()
	if _, err := v.master.Write([]byte{k}); err != nil {
		b.Fatal(err)
	}
	for {
		select {
		case chunk, ok := <-v.out:
			if !ok {
				b.Fatal("vim ended")
			}
			if k == 0x7f || bytes.IndexByte(chunk, k) >= 0 {
				return time.Since(t0)
			}
		case <-time.After(10 * time.Second):
			b.Fatal("vim did not answer a key")
		}
	}
}

func (v *vimSession) quit(b *testing.B) {
	_, _ = v.master.Write([]byte("\x1b:q!\r"))
	done := make(chan error, 1)
	go func() { done <- v.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = v.cmd.Process.Kill()
		b.Error("vim did not quit")
	}
}

// BenchmarkKeystrokeEchoInVim types into vim, natively and through nash
// run's relay, a key to each in turn, and reports the medians of the time
// from the key to its echo on the terminal.
func BenchmarkKeystrokeEchoInVim(b *testing.B) {
	nash := buildBinaries(b)
	dir, state := b.TempDir(), filepath.Join(b.TempDir(), "state")
	vim := editor(b)
	native := exec.Command(vim[0], append(vim[1:], "native.txt")...)
	native.Dir = dir
	nv := startVim(b, native)
	through := exec.Command(nash, "run", "--yes", "--", shQuote(vim[0])+" -u NONE -N -n -i NONE through.txt")
	through.Dir, through.Env = dir, append(os.Environ(), "NASH_STATE_DIR="+state)
	tv := startVim(b, through)
	var nd, td []time.Duration
	keys := []byte{'x', 0x7f}
	for i := 0; b.Loop(); i++ {
		k := keys[i%2]
		nd = append(nd, nv.key(b, k))
		td = append(td, tv.key(b, k))
	}
	nv.quit(b)
	tv.quit(b)
	median := func(d []time.Duration) float64 {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return float64(d[len(d)/2].Microseconds())
	}
	b.ReportMetric(median(nd), "native-us/key")
	b.ReportMetric(median(td), "nash-us/key")
}
