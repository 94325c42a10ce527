package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// BenchmarkKeystrokeToScreen is the time from a key written to nash's
// terminal to the redrawn prompt coming back, with 10,000 history
// entries: the pty both ways, Update, View and the renderer's next frame.
// Budget: 16 ms.
func BenchmarkKeystrokeToScreen(b *testing.B) {
	scriptCmd, self, env, home := ptyBenchSetup(b)
	cmd := exec.CommandContext(context.Background(), scriptCmd, "-qfec", shQuote(self), "/dev/null")
	cmd.Env, cmd.Dir = env, home
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	}()
	waitPrompt(b, out)
	pipe, ok := out.(*os.File)
	if !ok {
		b.Fatal("stdout pipe is not a file")
	}
	buf := make([]byte, 64<<10)
	// Each key appends a q (a letter nothing else on the screen holds),
	// and its frame is read up to the q: a frame may come in several
	// writes, and a key that changes nothing (an erase merged with the
	// next letter into one frame) would draw no frame at all. Every 64
	// keys the line is cleared, off the clock.
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i > 0 && i%64 == 0 {
			b.StopTimer()
			if _, err := in.Write([]byte{0x15}); err != nil { // ctrl+u
				b.Fatal(err)
			}
			drainFor(b, pipe, buf, 100*time.Millisecond)
			b.StartTimer()
		}
		if _, err := in.Write([]byte("q")); err != nil {
			b.Fatal(err)
		}
		for {
			n, err := pipe.Read(buf)
			if err != nil {
				b.Fatal(err)
			}
			if bytes.IndexByte(buf[:n], 'q') >= 0 {
				break
			}
		}
	}
}

// drainFor reads what f yields until it has been quiet for d.
func drainFor(b *testing.B, f *os.File, buf []byte, d time.Duration) {
	b.Helper()
	defer f.SetReadDeadline(time.Time{})
	for {
		if err := f.SetReadDeadline(time.Now().Add(d)); err != nil {
			b.Fatal(err)
		}
		if _, err := f.Read(buf); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return
			}
			b.Fatal(err)
		}
	}
}

// ptyBenchSetup finds script(1) and prepares a home with 10,000 history
// entries and an unreachable model.
func ptyBenchSetup(b *testing.B) (scriptCmd, self string, env []string, home string) {
	b.Helper()
	scriptCmd, err := exec.LookPath("script")
	if err != nil {
		b.Fatalf("script(1) from util-linux is needed: %v", err)
	}
	self = testBin(b, "nash")
	home = b.TempDir()
	state := filepath.Join(home, ".local", "state", "nash")
	if err := os.MkdirAll(state, 0o700); err != nil {
		b.Fatal(err)
	}
	var hist bytes.Buffer
	for i := 0; i < 10000; i++ {
		hist.WriteString(`"git commit -m 'change' && echo done"` + "\n")
	}
	if err := os.WriteFile(filepath.Join(state, "history"), hist.Bytes(), 0o600); err != nil {
		b.Fatal(err)
	}
	env = []string{
		"HOME=" + home, "PATH=" + os.Getenv("PATH"), "TERM=xterm-256color",
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"), "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		// Unreachable on purpose: a network call at startup would stall.
		"NASH_MODEL=openai:x", "OPENAI_API_KEY=sk-x", "OPENAI_BASE_URL=http://192.0.2.1:9/v1",
	}
	return scriptCmd, self, env, home
}

// waitPrompt reads nash's terminal until the first prompt. The queries
// bubbletea sends as the shell starts (synchronized output, keyboard
// modes) are left unanswered, as by a terminal that knows none of them:
// nothing waits for their answers.
func waitPrompt(b *testing.B, out io.Reader) {
	b.Helper()
	var seen bytes.Buffer
	buf := make([]byte, 4096)
	for !bytes.Contains(seen.Bytes(), []byte("[   ]")) {
		n, err := out.Read(buf)
		seen.Write(buf[:n])
		if err != nil {
			b.Fatalf("nash ended before its prompt: %v\n%q", err, seen.String())
		}
	}
}

// BenchmarkStartToPrompt is the time from starting nash on a terminal (a
// pty from script(1)) to the first prompt on it, with 10,000 history
// entries and no model or index reachable: startup contacts neither.
// Budget: 100 ms.
func BenchmarkStartToPrompt(b *testing.B) {
	scriptCmd, self, env, home := ptyBenchSetup(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		cmd := exec.CommandContext(context.Background(), scriptCmd, "-qfec", shQuote(self), "/dev/null")
		cmd.Env, cmd.Dir = env, home
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		out, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		// An open stdin that sends nothing: at end of input script(1)
		// would end the session.
		if _, err := cmd.StdinPipe(); err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		waitPrompt(b, out)
		b.StopTimer()
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		b.StartTimer()
	}
}
