package sandbox

import (
	"bytes"
	"errors"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/nash-shell/nash/internal/sandboxinit"
)

// A script never holds the person's terminal: with it, TIOCSTI types into
// the person's input (answering nash's prompt, or the parent shell's), and
// whatever mode it leaves the terminal in hides what nash shows next. It
// gets a pseudo-terminal of its own instead, made by the init in the
// sandbox's devpts (so that tty names a terminal that exists inside) and
// handed to nash over the control socket, as runc's console socket does.
// nash relays it as sudo's use_pty, ssh and tmux do: the person's terminal
// in raw mode while the script runs, keys to the script's terminal, whose
// line discipline turns ctrl+c, ctrl+z and ctrl+\ into signals for the
// script's foreground job; its output back; window size changes; a stop
// (ctrl+z) suspends nash in turn and continues the script when the person
// resumes nash. Afterwards nash restores the person's terminal settings and
// resets what the script's output may have changed (terminalReset), so
// nash's own words are drawn on a terminal in a known state.

// terminal is the person's terminal during one run.
type terminal struct {
	streams uint8    // which of the script's streams are on the terminal
	fd      int      // the terminal, for its settings
	in      int      // where keys come from: the terminal as stdin, or -1
	out     *os.File // where the script's terminal output goes
	saved   *unix.Termios

	master    int // the script's terminal, once the init sent it
	wake      [2]int
	outDone   chan struct{}
	inDone    chan struct{}
	winch     chan os.Signal
	winchDone chan struct{}
	mu        sync.Mutex // serializes raw mode and its restoring
	raw       bool
	// typeahead is what the person typed that the script left unread,
	// taken from its terminal once the sandbox is gone.
	typeahead []byte

	// What the output did that the reset must undo.
	track outputTracker
	// dumb is set for a terminal that takes no escape sequences (TERM
	// dumb or unset): the reset is then only a new line, if need be.
	dumb bool
}

// dumbTerminal reports whether env's TERM names no terminal that takes
// escape sequences.
func dumbTerminal(env []string) bool {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], "TERM="); ok {
			return v == "" || v == "dumb"
		}
	}
	return true
}

// newTerminal finds the person's terminal among the sandbox's streams:
// the first that is one; the others count only when they are the same
// terminal. It returns nil when there is none.
func newTerminal(in any, out, errw any) *terminal {
	var files [3]*os.File
	for i, v := range []any{in, out, errw} {
		if f, ok := v.(*os.File); ok && isTerminal(f) {
			files[i] = f
		}
	}
	t := &terminal{fd: -1, in: -1, master: -1, wake: [2]int{-1, -1}}
	var dev uint64
	for i, f := range files {
		if f == nil {
			continue
		}
		var st unix.Stat_t
		if fstat(f, &st) != nil {
			continue
		}
		if t.fd < 0 {
			t.fd, dev = rawFd(f), st.Rdev
		} else if st.Rdev != dev {
			continue
		}
		t.streams |= 1 << i
	}
	if t.fd < 0 {
		return nil
	}
	switch {
	case t.streams&2 != 0:
		t.out = files[1]
	case t.streams&4 != 0:
		t.out = files[2]
	default:
		t.out = files[0] // a terminal is open for writing as well
	}
	tio, err := unix.IoctlGetTermios(t.fd, unix.TCGETS)
	if err != nil {
		return nil
	}
	t.saved = tio
	// Keys are relayed only from a terminal that is stdin, and only in
	// the foreground: a nash in the background must not take the
	// terminal from the shell (nor be stopped for touching it).
	if t.streams&1 != 0 && foreground(t.fd) {
		t.in = t.fd
	}
	return t
}

// has reports whether the script's stream i is on the terminal.
func (t *terminal) has(i int) bool { return t != nil && t.streams&(1<<i) != 0 }

// isTerminal reports whether f is a terminal.
func isTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(rawFd(f), unix.TCGETS)
	return err == nil
}

// rawFd is f's descriptor, without the change to blocking mode that Fd
// makes.
func rawFd(f *os.File) int {
	fd := -1
	if rc, err := f.SyscallConn(); err == nil {
		_ = rc.Control(func(u uintptr) { fd = int(u) })
	}
	return fd
}

// foreground reports whether this process's group is the terminal's
// foreground group.
func foreground(fd int) bool {
	pg, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
	return err == nil && pg == unix.Getpgrp()
}

// config is what the init needs to make the script's terminal like the
// person's: its streams, settings and size. When nash does not relay keys
// (raw mode stays off), the person's terminal still post-processes output,
// so the script's does not do it again.
func (t *terminal) config() *sandboxinit.Tty {
	tio := *t.saved
	if t.in < 0 {
		tio.Oflag &^= unix.OPOST
	}
	c := &sandboxinit.Tty{
		Streams: t.streams, Iflag: tio.Iflag, Oflag: tio.Oflag, Cflag: tio.Cflag, Lflag: tio.Lflag,
		Line: tio.Line, Cc: append([]byte(nil), tio.Cc[:]...), Ispeed: tio.Ispeed, Ospeed: tio.Ospeed,
	}
	if ws, err := unix.IoctlGetWinsize(t.fd, unix.TIOCGWINSZ); err == nil {
		c.Size = [4]int32{int32(ws.Row), int32(ws.Col), int32(ws.Xpixel), int32(ws.Ypixel)}
	}
	return c
}

// start relays the script's terminal, whose master the init sent.
func (t *terminal) start(master int) error {
	t.master = master
	t.outDone = make(chan struct{})
	t.copySize()
	t.winch = make(chan os.Signal, 1)
	t.winchDone = make(chan struct{})
	signal.Notify(t.winch, unix.SIGWINCH)
	go func() {
		defer close(t.winchDone)
		for range t.winch {
			t.copySize()
		}
	}()
	go t.relayOut()
	if t.in < 0 {
		return nil
	}
	if err := unix.Pipe2(t.wake[:], unix.O_CLOEXEC); err != nil {
		return err
	}
	t.setRaw()
	t.inDone = make(chan struct{})
	go t.relayIn()
	return nil
}

// copySize gives the script's terminal the person's window size; the
// kernel sends the script SIGWINCH when it changes.
func (t *terminal) copySize() {
	if ws, err := unix.IoctlGetWinsize(t.fd, unix.TIOCGWINSZ); err == nil {
		_ = unix.IoctlSetWinsize(t.master, unix.TIOCSWINSZ, ws)
	}
}

// setRaw puts the person's terminal in raw mode (cfmakeraw): every key
// goes to the script's terminal as typed, whose own settings (the
// person's, copied) decide what it means.
func (t *terminal) setRaw() {
	t.mu.Lock()
	defer t.mu.Unlock()
	raw := *t.saved
	raw.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	raw.Oflag &^= unix.OPOST
	raw.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	raw.Cflag &^= unix.CSIZE | unix.PARENB
	raw.Cflag |= unix.CS8
	raw.Cc[unix.VMIN], raw.Cc[unix.VTIME] = 1, 0
	if unix.IoctlSetTermios(t.fd, unix.TCSETS, &raw) == nil {
		t.raw = true
	}
}

// unsetRaw gives the person's terminal its settings back, once its output
// is written.
func (t *terminal) unsetRaw() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.raw {
		_ = unix.IoctlSetTermios(t.fd, unix.TCSETSW, t.saved)
		t.raw = false
	}
}

// relayOut copies the script's terminal output to the person's terminal
// until every process of the sandbox has let go of it. A pseudo-terminal
// gives at most 4 KiB a read: what is there is read whole before it is
// written on, in one write, so that fast output costs few writes; an
// echoed key is written at once.
func (t *terminal) relayOut() {
	defer close(t.outDone)
	_ = unix.SetNonblock(t.master, true)
	buf := make([]byte, 64<<10)
	fds := []unix.PollFd{{Fd: int32(t.master), Events: unix.POLLIN}}
	for {
		n, ended := 0, false
		for n < len(buf) {
			k, err := unix.Read(t.master, buf[n:])
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if errors.Is(err, unix.EAGAIN) {
				if n > 0 {
					break
				}
				fds[0].Revents = 0
				if _, err := unix.Poll(fds, -1); err != nil && !errors.Is(err, unix.EINTR) {
					ended = true
					break
				}
				continue
			}
			if k <= 0 || err != nil {
				ended = true // EIO: the last holder of the script's side closed it
				break
			}
			n += k
		}
		if n > 0 {
			t.track.scan(buf[:n])
			// A person's terminal that is gone: keep draining, so the
			// script is not blocked on its output.
			_, _ = t.out.Write(buf[:n])
		}
		if ended {
			return
		}
	}
}

// relayIn copies keys from the person's terminal to the script's until
// stopped. It is the one place nash reads the person's keys while a
// script runs: it reads only what poll says is there, and never after
// the stop, so nothing typed for nash's next prompt is taken.
func (t *terminal) relayIn() {
	defer close(t.inDone)
	buf := make([]byte, 4096)
	fds := []unix.PollFd{{Fd: int32(t.in), Events: unix.POLLIN}, {Fd: int32(t.wake[0]), Events: unix.POLLIN}}
	for {
		fds[0].Revents, fds[1].Revents = 0, 0
		if _, err := unix.Poll(fds, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			return
		}
		if fds[1].Revents != 0 {
			return
		}
		if fds[0].Revents&(unix.POLLIN|unix.POLLHUP|unix.POLLERR) == 0 {
			continue
		}
		n, err := unix.Read(t.in, buf)
		if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
			continue
		}
		if n <= 0 || err != nil {
			return // the person's terminal hung up
		}
		for b := buf[:n]; len(b) > 0; {
			k, err := unix.Write(t.master, b)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err != nil {
				return // the script's terminal is gone
			}
			b = b[k:]
		}
	}
}

// suspend is ctrl+z on the script's terminal: the person gets their
// terminal back, as it was, and nash stops in turn, as the script would
// have; when the person resumes nash (fg), the terminal goes back to raw
// mode and the script continues. Where nothing can resume nash (an
// orphaned process group, which the kernel does not stop), the script
// continues at once.
func (t *terminal) suspend(ctl *sandboxinit.Control) {
	if t.in >= 0 && !orphaned() {
		t.unsetRaw()
		// SIGCONT is what resumes this process; wait for it, as the
		// stop of a thread-group may land after kill returns.
		cont := make(chan os.Signal, 1)
		signal.Notify(cont, unix.SIGCONT)
		signal.Reset(unix.SIGTSTP) // the default action: stop
		if unix.Kill(0, unix.SIGTSTP) == nil {
			<-cont
		}
		signal.Stop(cont)
		if foreground(t.fd) {
			t.setRaw()
		}
		t.copySize()
	}
	_ = ctl.Send(sandboxinit.MsgContinue, nil, -1)
}

// orphaned reports whether this process's group is orphaned: no process
// of the session outside it can continue it, so the kernel drops a stop.
func orphaned() bool {
	stat := func(pid string) (ppid, pgrp, sid int, ok bool) {
		b, err := os.ReadFile("/proc/" + pid + "/stat")
		if err != nil {
			return 0, 0, 0, false
		}
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		f := strings.Fields(s[i+1:])
		if i < 0 || len(f) < 4 {
			return 0, 0, 0, false
		}
		ppid, _ = strconv.Atoi(f[1])
		pgrp, _ = strconv.Atoi(f[2])
		sid, _ = strconv.Atoi(f[3])
		return ppid, pgrp, sid, true
	}
	ppid, pgrp, sid, ok := stat("self")
	if !ok {
		return true
	}
	_, ppgrp, psid, ok := stat(strconv.Itoa(ppid))
	return !ok || !(ppgrp != pgrp && psid == sid)
}

// finish ends the relay once the sandbox is gone: the script's terminal
// output is written whole, nash stops reading keys, the person's settings
// come back and the terminal is reset (terminalReset) if the script's
// output could have changed it.
func (t *terminal) finish() {
	if t.master < 0 {
		return
	}
	<-t.outDone
	if t.inDone != nil {
		_, _ = unix.Write(t.wake[1], []byte{0})
		<-t.inDone
		unix.Close(t.wake[0])
		unix.Close(t.wake[1])
	}
	signal.Stop(t.winch)
	close(t.winch)
	<-t.winchDone
	if t.inDone != nil {
		t.typeahead = unread(t.master)
	}
	unix.Close(t.master)
	t.master = -1
	t.unsetRaw()
	if t.dumb || !t.track.ctl {
		// Plain text (or nothing) changes no setting of the terminal.
		if t.track.midLine {
			_, _ = t.out.Write([]byte("\r\n"))
		}
		return
	}
	_, _ = t.out.Write(t.track.reset())
}

// maxTypeahead bounds what is taken back from the script's terminal: a
// pseudo-terminal's input queue holds 4 KiB.
const maxTypeahead = 4096

// unread returns what waits unread on the terminal whose master is given,
// once nothing holds its other side: the keys the person typed that the
// script did not read. The line discipline has already applied the
// person's edits (erase, kill) to a line not yet ended; reading without
// canonical mode takes that part too.
func unread(master int) []byte {
	s, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(master), unix.TIOCGPTPEER, unix.O_RDWR|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC)
	if errno != 0 {
		return nil
	}
	fd := int(s)
	defer unix.Close(fd)
	tio, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return nil
	}
	tio.Lflag &^= unix.ICANON | unix.ECHO
	tio.Cc[unix.VMIN], tio.Cc[unix.VTIME] = 0, 0
	if unix.IoctlSetTermios(fd, unix.TCSETS, tio) != nil {
		return nil
	}
	buf := make([]byte, maxTypeahead)
	n := 0
	for n < len(buf) {
		k, err := unix.Read(fd, buf[n:])
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if k <= 0 || err != nil {
			break
		}
		n += k
	}
	if n == 0 {
		return nil
	}
	return buf[:n]
}

// outputTracker follows what a script's terminal output does that the
// reset after the run must undo, where undoing it unasked would do harm:
// leaving the alternate screen, or resetting the scroll region or origin
// mode (both move the cursor). It also follows whether the cursor was
// left mid-line, so that nash starts its words on a line of their own.
type outputTracker struct {
	altScreen string // the private mode that entered it: 1049, 1047 or 47
	margins   bool   // a scroll region or origin mode was set
	midLine   bool   // the cursor is not at the start of a line
	savedMid  bool   // midLine when the alternate screen was entered
	// ctl says the output held what can change a terminal's settings:
	// an escape, a shift to another character set, or a C1 control
	// (raw or UTF-8: any byte from 0x80 to 0x9f).
	ctl    bool
	state  int    // of the escape sequence parser
	params []byte // of the control sequence being read
}

// Parser states.
const (
	stGround = iota
	stEsc    // after ESC
	stCSI    // in a control sequence
	stString // in an OSC, DCS, APC or PM string
	stStrEsc // ESC inside such a string: maybe its end
	stCharset
)

// scan looks at the next bytes of output.
func (o *outputTracker) scan(b []byte) {
	if !o.ctl {
		for _, c := range b {
			if c == 0x1b || c == 0x0e || c >= 0x80 && c <= 0x9f {
				o.ctl = true
				break
			}
		}
	}
	if o.state == stGround && bytes.IndexByte(b, 0x1b) < 0 {
		// No escape sequence, the usual case: only the last line counts.
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			o.midLine, b = false, b[i+1:]
		}
		for _, c := range b {
			o.plain(c)
		}
		return
	}
	for _, c := range b {
		switch o.state {
		case stGround:
			if c == 0x1b {
				o.state = stEsc
			} else {
				o.plain(c)
			}
		case stEsc:
			switch {
			case c == '[':
				o.state, o.params = stCSI, o.params[:0]
			case c == ']' || c == 'P' || c == '_' || c == '^' || c == 'X':
				o.state = stString
			case c >= 0x20 && c <= 0x2f:
				o.state = stCharset // ESC ( B and the like: one more byte
			default:
				o.state = stGround
			}
		case stCharset:
			o.state = stGround
		case stCSI:
			switch {
			case c >= 0x20 && c <= 0x3f:
				if len(o.params) < 64 {
					o.params = append(o.params, c)
				}
			case c >= 0x40 && c <= 0x7e:
				o.csi(string(o.params), c)
				o.state = stGround
			default:
				o.state = stGround // a malformed sequence ends here
			}
		case stString:
			switch c {
			case 0x07:
				o.state = stGround
			case 0x1b:
				o.state = stStrEsc
			}
		case stStrEsc:
			o.state = stString
			if c == '\\' {
				o.state = stGround
			}
		}
	}
}

// plain notes one byte outside escape sequences.
func (o *outputTracker) plain(c byte) {
	switch {
	case c == '\n' || c == '\r':
		o.midLine = false
	case c >= 0x20 && c != 0x7f:
		o.midLine = true
	}
}

// csi notes one control sequence, with its parameters and final byte.
func (o *outputTracker) csi(params string, final byte) {
	column := func(s string) bool { // whether it names a column past the first
		n, err := strconv.Atoi(s)
		return err == nil && n > 1
	}
	switch final {
	case 'H', 'f':
		_, col, _ := strings.Cut(params, ";")
		o.midLine = column(col)
	case 'G', '`':
		o.midLine = column(params)
	case 'r':
		o.margins = params != "" // CSI r alone resets the region
	case 'h', 'l':
		p, ok := strings.CutPrefix(params, "?")
		if !ok {
			return
		}
		for _, m := range strings.Split(p, ";") {
			switch m {
			case "1049", "1047", "47":
				if final == 'h' && o.altScreen == "" {
					o.altScreen, o.savedMid = m, o.midLine
				} else if final == 'l' && o.altScreen != "" {
					o.altScreen, o.midLine = "", o.savedMid
				}
			case "6":
				o.margins = o.margins || final == 'h'
			}
		}
	}
}

// terminalReset puts back, after a script's output, what a script can
// leave changed in a terminal and that would hide or garble nash's own
// words: character attributes (concealed, invisible colours), a hidden
// cursor, the alternate screen, a scroll region, another character set,
// autowrap off, insert mode, bracketed paste, mouse and focus reporting,
// application keypad and cursor keys. Resets that would move the cursor
// are sent only when the output made them necessary.
const terminalReset = "\x1b[0m" + // attributes
	"\x1b(B\x0f" + // G0 is ASCII, and in use
	"\x1b[4l" + // insert mode off
	"\x1b[?7h" + // autowrap on
	"\x1b[?25h" + // cursor shown
	"\x1b[?1l\x1b>" + // cursor keys and keypad as normal
	"\x1b[?2004l" + // bracketed paste off
	"\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1005l\x1b[?1006l\x1b[?1015l" + // mouse reporting off
	"\x1b[?1004l" // focus reporting off

// reset is the sequence that restores the terminal after the output seen.
func (o *outputTracker) reset() []byte {
	var b strings.Builder
	if o.altScreen != "" {
		b.WriteString("\x1b[?" + o.altScreen + "l")
	}
	b.WriteString(terminalReset)
	switch {
	case o.margins:
		// Whole screen, absolute positions; then a fresh line at the
		// bottom, below everything the script drew.
		b.WriteString("\x1b[?6l\x1b[r\x1b[999;1H\n")
	case o.altScreen != "":
		// Leaving it restores the cursor of the main screen.
		if o.savedMid {
			b.WriteString("\r\n")
		}
	case o.midLine:
		b.WriteString("\r\n")
	}
	// Nothing the script left below the cursor can pass for nash's.
	b.WriteString("\x1b[J")
	return []byte(b.String())
}

// DiscardInput drops what waits in a terminal's input queue, typed or
// injected before nash asks a question; f that is not a terminal is left
// alone. Callers use it right before they prompt.
func DiscardInput(f *os.File) {
	if f != nil && isTerminal(f) {
		_ = unix.IoctlSetInt(rawFd(f), unix.TCFLSH, unix.TCIFLUSH)
	}
}
