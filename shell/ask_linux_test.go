package shell

import (
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// openTestPty opens a pseudo-terminal pair with the standard library
// alone: the slave plays the person's terminal, the master the keyboard.
func openTestPty(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx: %v", err)
	}
	var unlock, n int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatalf("unlock pty: %v", e)
	}
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatalf("pty number: %v", e)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open pty slave: %v", err)
	}
	t.Cleanup(func() { m.Close(); s.Close() })
	return m, s
}

// TestAskDropsPendingInput: in line mode on a terminal, what waits in the
// terminal's input before nash asks (typed ahead, or a terminal's answer
// to a query a script printed) does not answer the question; what is
// typed after it does.
func TestAskDropsPendingInput(t *testing.T) {
	master, slave := openTestPty(t)
	l := newLiner(Config{}, slave, os.Stderr, devNull(t), LineOptions{})
	if _, err := master.WriteString("c\n"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond) // the line discipline has it
	got := make(chan string, 1)
	go func() {
		ans, _ := l.ask("commit? ", "c", "a")
		got <- ans
	}()
	select {
	case ans := <-got:
		t.Fatalf("input that was there before the question answered it: %q", ans)
	case <-time.After(300 * time.Millisecond):
	}
	if _, err := master.WriteString("a\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case ans := <-got:
		if ans != "a" {
			t.Fatalf("answer %q, want a", ans)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the answer typed after the question was not read")
	}
}

func devNull(t *testing.T) *os.File {
	t.Helper()
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
