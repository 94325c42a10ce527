package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
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
	waitPrompt(b, in, out)
	buf := make([]byte, 64<<10)
	keys := [][]byte{[]byte("x"), {0x7f}} // type, then erase
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := in.Write(keys[i%2]); err != nil {
			b.Fatal(err)
		}
		// The frame is one write of the changed prompt line.
		if _, err := out.Read(buf); err != nil {
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

// waitPrompt reads nash's terminal until the first prompt, answering the
// colour and cursor queries bubbletea's package init sends, as a terminal
// emulator does.
func waitPrompt(b *testing.B, in io.Writer, out io.Reader) {
	b.Helper()
	var seen bytes.Buffer
	buf := make([]byte, 4096)
	answered := false
	for !bytes.Contains(seen.Bytes(), []byte("[   ]")) {
		n, err := out.Read(buf)
		seen.Write(buf[:n])
		if err != nil {
			b.Fatalf("nash ended before its prompt: %v\n%q", err, seen.String())
		}
		if !answered && bytes.Contains(seen.Bytes(), []byte("\x1b[6n")) {
			answered = true
			if _, err := in.Write([]byte("\x1b]11;rgb:0000/0000/0000\x1b\\\x1b[1;1R")); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkStartToPrompt is the time from starting nash on a terminal (a
// pty from script(1)) to the first prompt on it, with 10,000 history
// entries and no model or index reachable: startup contacts neither.
// Like a terminal emulator, the benchmark answers the colour and cursor
// queries that bubbletea's package init sends (through termenv).
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
		in, err := cmd.StdinPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		waitPrompt(b, in, out)
		b.StopTimer()
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		b.StartTimer()
	}
}
