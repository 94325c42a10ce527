package shell

import (
	"io"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// readN reads n bytes from r, or fails after a while.
func readN(t *testing.T, r io.Reader, n int) string {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		b := make([]byte, n)
		k, _ := io.ReadFull(r, b)
		got <- string(b[:k])
	}()
	select {
	case s := <-got:
		return s
	case <-time.After(10 * time.Second):
		t.Fatalf("read %d bytes: nothing came", n)
		return ""
	}
}

func lflag(t *testing.T, f *os.File) (icanon, opost bool) {
	t.Helper()
	tio, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	return tio.Lflag&unix.ICANON != 0, tio.Oflag&unix.OPOST != 0
}

// TestTTYInputKeepsOrder: keys read before a pause, keys put in while
// paused (what a run left unread) and keys typed while paused come out
// in that order; the terminal has its own settings while paused, raw
// mode (output processing kept) otherwise, and its own settings again
// after close.
func TestTTYInputKeepsOrder(t *testing.T) {
	master, tty := openTestPty(t)
	if icanon, _ := lflag(t, tty); !icanon {
		t.Fatal("a new terminal is not in canonical mode")
	}
	ti, err := startTTYInput(tty)
	if err != nil {
		t.Fatal(err)
	}
	if icanon, opost := lflag(t, tty); icanon || !opost {
		t.Fatalf("while reading: canonical %v, output processing %v; want false, true", icanon, opost)
	}
	if _, err := master.Write([]byte("ab")); err != nil {
		t.Fatal(err)
	}
	if got := readN(t, ti.r, 2); got != "ab" {
		t.Fatalf("read %q, want ab", got)
	}
	ti.pause()
	if icanon, _ := lflag(t, tty); !icanon {
		t.Fatal("paused: the terminal is not back in canonical mode")
	}
	// Typed while paused: a run reads it, not the shell. Raw mode is
	// off, so a line needs its end to be read.
	if _, err := master.Write([]byte("cd\r")); err != nil {
		t.Fatal(err)
	}
	ti.inject([]byte("XY"))
	if got := readN(t, ti.r, 2); got != "XY" {
		t.Fatalf("read %q while paused, want only what was put in (XY)", got)
	}
	ti.resume()
	if got := readN(t, ti.r, 3); got != "cd\n" {
		t.Fatalf("after resume read %q, want the keys typed while paused (cd, its line ended)", got)
	}
	ti.inject([]byte("1"))
	if _, err := master.Write([]byte("2")); err != nil {
		t.Fatal(err)
	}
	if got := readN(t, ti.r, 2); got != "12" {
		t.Fatalf("read %q, want 12", got)
	}
	ti.close()
	if icanon, _ := lflag(t, tty); !icanon {
		t.Fatal("after close the terminal is not back in canonical mode")
	}
}
