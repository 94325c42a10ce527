package shell

import (
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"sync"

	tea "charm.land/bubbletea/v2"
	uv "github.com/charmbracelet/ultraviolet"
	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// ttyInput is the one reader of the person's terminal while the shell
// runs: every key goes through it, in the order typed, to a pipe that
// bubbletea reads. While a script, a host look or the editor has the
// terminal, it stops reading (pause) and gives the terminal the person's
// own settings; what the script left unread is then put into the pipe
// (inject) before it reads on (resume). So keys typed before a run,
// during it and after it reach the prompt in that order, however the
// moments fall: with bubbletea reading the terminal itself, keys it had
// read before a run came after the run, after keys typed later.
//
// Between runs the terminal is in raw mode with output processing left
// on: bubbletea, whose input is a pipe, writes its frames for a terminal
// that turns "\n" into "\r\n".
type ttyInput struct {
	fd    int
	saved *term.State // the terminal's settings when the shell started
	// r is what bubbletea reads; w is written only by loop.
	r, w *os.File
	// wake interrupts loop's poll: a pause, a resume, an injection, the end.
	wakeR, wakeW *os.File
	// The pipes' descriptors, non-blocking (File.Fd would make them
	// blocking again, so it is called once).
	wfd, wakeRfd, wakeWfd int
	done                  chan struct{}

	mu      sync.Mutex
	paused  bool            // loop reads no key while set
	acks    []chan struct{} // pause calls waiting for loop to see paused
	pending []byte          // read or injected, not yet in the pipe
	closing bool
}

// maxPending bounds the keys held while bubbletea reads none: past it
// the terminal is left to hold them.
const maxPending = 1 << 20

// startTTYInput puts the terminal f in raw mode and starts reading it.
func startTTYInput(f *os.File) (*ttyInput, error) {
	fd := int(f.Fd())
	saved, err := term.GetState(fd)
	if err != nil {
		return nil, err
	}
	t := &ttyInput{fd: fd, saved: saved, done: make(chan struct{})}
	if t.r, t.w, err = os.Pipe(); err != nil {
		return nil, err
	}
	if t.wakeR, t.wakeW, err = os.Pipe(); err != nil {
		t.r.Close()
		t.w.Close()
		return nil, err
	}
	t.wfd, t.wakeRfd, t.wakeWfd = int(t.w.Fd()), int(t.wakeR.Fd()), int(t.wakeW.Fd())
	for _, fd := range []int{t.wfd, t.wakeRfd, t.wakeWfd} {
		if err := unix.SetNonblock(fd, true); err != nil {
			t.closeFiles()
			return nil, err
		}
	}
	if err := t.raw(); err != nil {
		t.closeFiles()
		return nil, err
	}
	go t.loop()
	return t, nil
}

// raw puts the terminal in raw mode, output processing kept.
func (t *ttyInput) raw() error {
	tio, err := unix.IoctlGetTermios(t.fd, ioctlGetTermios)
	if err != nil {
		return err
	}
	tio.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	tio.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	tio.Cflag &^= unix.CSIZE | unix.PARENB
	tio.Cflag |= unix.CS8
	tio.Cc[unix.VMIN], tio.Cc[unix.VTIME] = 1, 0
	return unix.IoctlSetTermios(t.fd, ioctlSetTermios, tio)
}

// pause stops reading keys and gives the terminal the person's settings;
// when it returns, no read of the terminal is under way or will start
// before resume.
func (t *ttyInput) pause() {
	ack := make(chan struct{})
	t.mu.Lock()
	t.paused = true
	t.acks = append(t.acks, ack)
	t.mu.Unlock()
	t.wake()
	select {
	case <-ack:
	case <-t.done:
	}
	_ = term.Restore(t.fd, t.saved)
}

// resume puts the terminal back in raw mode and reads keys again.
func (t *ttyInput) resume() {
	_ = t.raw()
	t.mu.Lock()
	t.paused = false
	t.mu.Unlock()
	t.wake()
}

// inject puts keys into the pipe after those read so far.
func (t *ttyInput) inject(b []byte) {
	if len(b) == 0 {
		return
	}
	t.mu.Lock()
	t.pending = append(t.pending, b...)
	t.mu.Unlock()
	t.wake()
}

// close stops reading, gives the terminal its settings back and closes
// the pipe.
func (t *ttyInput) close() {
	t.mu.Lock()
	t.closing = true
	t.mu.Unlock()
	t.wake()
	<-t.done
	_ = term.Restore(t.fd, t.saved)
	t.closeFiles()
}

func (t *ttyInput) closeFiles() {
	for _, f := range []*os.File{t.r, t.w, t.wakeR, t.wakeW} {
		if f != nil {
			f.Close() // a second Close of t.w only returns an error
		}
	}
}

func (t *ttyInput) wake() { _, _ = unix.Write(t.wakeWfd, []byte{0}) }

// loop moves keys from the terminal to the pipe until close.
func (t *ttyInput) loop() {
	defer close(t.done)
	buf := make([]byte, 4096)
	wakeFd, pipeFd := t.wakeRfd, t.wfd
	hungUp, ended := false, false
	for {
		t.mu.Lock()
		if t.closing {
			t.mu.Unlock()
			return
		}
		paused := t.paused
		if paused {
			for _, a := range t.acks {
				close(a)
			}
			t.acks = nil
		}
		// Bytes go to the pipe in the order they came; what it cannot
		// take now waits for it.
		for len(t.pending) > 0 && !ended {
			n, err := unix.Write(pipeFd, t.pending)
			if n > 0 {
				t.pending = t.pending[n:]
			}
			if err != nil {
				break
			}
		}
		if len(t.pending) == 0 {
			t.pending = nil
			if hungUp && !ended {
				// The terminal hung up: bubbletea reads the pipe's end.
				t.w.Close()
				ended = true
			}
		}
		readTTY := !paused && !hungUp && len(t.pending) < maxPending
		waitPipe := len(t.pending) > 0 && !ended
		t.mu.Unlock()

		fds := []unix.PollFd{{Fd: int32(wakeFd), Events: unix.POLLIN}}
		if readTTY {
			fds = append(fds, unix.PollFd{Fd: int32(t.fd), Events: unix.POLLIN})
		}
		if waitPipe {
			fds = append(fds, unix.PollFd{Fd: int32(pipeFd), Events: unix.POLLOUT})
		}
		if _, err := unix.Poll(fds, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return
		}
		if fds[0].Revents != 0 {
			var drain [64]byte
			for {
				if n, _ := unix.Read(wakeFd, drain[:]); n <= 0 {
					break
				}
			}
			continue // the state may have changed: look again before reading
		}
		if !readTTY || fds[1].Revents&(unix.POLLIN|unix.POLLHUP|unix.POLLERR) == 0 {
			continue
		}
		n, err := unix.Read(t.fd, buf)
		if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
			continue
		}
		if n <= 0 || err != nil {
			hungUp = true
			continue
		}
		t.mu.Lock()
		t.pending = append(t.pending, buf[:n]...)
		t.mu.Unlock()
	}
}

// forwardKeys reads the keys (and the terminal's answers to queries) from
// r and hands them to the program, one at a time, in order, until ctx
// ends. It is the program's only source of input: bubbletea's own reader,
// which it stops and starts again around every run, once let keys it had
// read before a run come after keys read after it.
func forwardKeys(ctx context.Context, r io.Reader, termType string, p *tea.Program) {
	events := make(chan uv.Event)
	go func() { _ = uv.NewTerminalReader(r, termType).StreamEvents(ctx, events) }()
	for {
		select {
		case ev := <-events:
			p.Send(ev) // bubbletea turns it into its message
		case <-ctx.Done():
			return
		}
	}
}

// envValue is the value of name in env ("NAME=value" entries), or "".
func envValue(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}
