package sandbox

import (
	"bytes"
	"errors"
	"io"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// A script's standard streams are never the caller's own files: through
// /proc/self/fd a script can reopen any descriptor it holds, for writing
// even when it was opened read-only, and truncate or rewrite the file
// behind it, after the person aborted as well as before. So each of its
// three streams is one of:
//
//   - /dev/null, as is;
//   - a pipe nash owns: nash feeds it from the caller's stdin, or copies
//     from it to the caller's stdout or stderr;
//   - its own pseudo-terminal, made in the sandbox's devpts, which nash
//     relays to the person's terminal (terminal_linux.go).
//
// and nothing else reaches it: the init closes every other descriptor it
// inherited before anything else.

// streams is one run's standard streams, as nash sets them up.
type streams struct {
	files      [3]*os.File // the init's fds 0-2
	closeAfter []*os.File  // parent's copies, closed once the init started
	copies     []chan struct{}
	term       *terminal // the person's terminal, when a stream is on it
	feed       *feeder   // stdin, when nash feeds it
}

// streams sets up the standard streams of a run whose end is signalled
// by closing ended.
func (s *Sandbox) streams(ended <-chan struct{}) (*streams, error) {
	st := &streams{}
	fail := func(err error) (*streams, error) {
		st.closeAll()
		return nil, err
	}
	st.term = newTerminal(s.stdin, s.stdout, s.stderr)
	if st.term != nil {
		st.term.dumb = dumbTerminal(s.env)
	}
	null := func() (*os.File, error) {
		f, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
		if err == nil {
			st.closeAfter = append(st.closeAfter, f)
		}
		return f, err
	}
	// Standard input.
	in, isFile := s.stdin.(*os.File)
	switch {
	case s.stdin == nil, isFile && (st.term.has(0) || isDevNull(in)):
		f, err := null()
		if err != nil {
			return fail(err)
		}
		st.files[0] = f
	default:
		f, err := s.feedStdin(st, ended)
		if err != nil {
			return fail(err)
		}
		st.files[0] = f
	}
	// Standard output and error.
	out := func(i int, dst io.Writer) error {
		if f, ok := dst.(*os.File); dst == nil || ok && (st.term.has(i) || isDevNull(f)) {
			f, err := null()
			st.files[i] = f
			return err
		}
		f, err := st.copyOut(dst)
		st.files[i] = f
		return err
	}
	if err := out(1, s.stdout); err != nil {
		return fail(err)
	}
	if (sameWriter(s.stdout, s.stderr) || oneFile(s.stdout, s.stderr)) && !st.term.has(1) {
		// One writer for both: one pipe, so writes keep their order and
		// two copies never write it at once (as os/exec does).
		st.files[2] = st.files[1]
	} else if err := out(2, s.stderr); err != nil {
		return fail(err)
	}
	return st, nil
}

// oneFile reports whether a and b are files that are one (2>&1): the
// script's stdout and stderr then share one pipe, so its writes keep their
// order, as they would in that file.
func oneFile(a, b io.Writer) bool {
	fa, ok1 := a.(*os.File)
	fb, ok2 := b.(*os.File)
	if !ok1 || !ok2 {
		return false
	}
	var sa, sb unix.Stat_t
	return fstat(fa, &sa) == nil && fstat(fb, &sb) == nil && sa.Dev == sb.Dev && sa.Ino == sb.Ino
}

// started closes the parent's copies of what the init now holds.
func (st *streams) started() {
	for _, f := range st.closeAfter {
		f.Close()
	}
	st.closeAfter = nil
}

// closeAll closes everything, when the init could not be started.
func (st *streams) closeAll() {
	st.started()
	if st.feed != nil {
		st.feed.r.Close()
	}
}

// isDevNull reports whether f is /dev/null, which a script may hold as
// is: reopening it gives nothing.
func isDevNull(f *os.File) bool {
	var st, null unix.Stat_t
	if fstat(f, &st) != nil || unix.Stat(os.DevNull, &null) != nil {
		return false
	}
	return st.Mode&unix.S_IFMT == unix.S_IFCHR && st.Rdev == null.Rdev
}

// fstat stats f without touching its blocking mode (as Fd would).
func fstat(f *os.File, st *unix.Stat_t) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = unix.Fstat(int(fd), st) }); err != nil {
		return err
	}
	return serr
}

// outBufSize is the buffer copies use, and the size asked of their pipes:
// big enough that the script's output costs a few system calls a
// megabyte.
const outBufSize = 256 << 10

// copyOut makes a pipe whose read end nash copies to dst; it returns the
// write end for the init. The copy has a thread of its own, blocked in
// the kernel while the pipe is empty; into a regular file (or a pipe,
// when blocking) it splices, so the output does not pass through nash's
// memory.
func (st *streams) copyOut(dst io.Writer) (*os.File, error) {
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		return nil, err
	}
	_, _ = unix.FcntlInt(uintptr(p[1]), unix.F_SETPIPE_SZ, outBufSize)
	w := os.NewFile(uintptr(p[1]), "stdout")
	st.closeAfter = append(st.closeAfter, w)
	done := make(chan struct{})
	st.copies = append(st.copies, done)
	go func() {
		defer close(done)
		defer unix.Close(p[0])
		if f, ok := dst.(*os.File); ok && spliceTo(p[0], f) {
			return
		}
		buf := make([]byte, outBufSize)
		failed := false // the reader is gone: drain, so the script is not blocked
		for {
			n, err := unix.Read(p[0], buf)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if n <= 0 || err != nil {
				return
			}
			batch(int64(n))
			if !failed {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					failed = true
				}
			}
		}
	}()
	return w, nil
}

// batchNap is how long a copy waits after moving a little, so that a
// script writing fast in small pieces (4 KiB, as stdio does into a pipe)
// wakes it once per many pieces, not per piece: on two cores the wake-ups
// cost more than the copy. Far below what a person can see.
const batchNap = 200 * time.Microsecond

// batch waits batchNap after a copy of n bytes that left room for more.
func batch(n int64) {
	if n < outBufSize/2 {
		time.Sleep(batchNap)
	}
}

// spliceTo moves everything from the pipe src to f with splice(2), when f
// is a regular file or a blocking pipe; it reports whether it did (when
// not, nothing was moved). A write error ends it, the rest is drained.
func spliceTo(src int, f *os.File) bool {
	var st unix.Stat_t
	if fstat(f, &st) != nil {
		return false
	}
	dst := rawFd(f)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		if fl, err := unix.FcntlInt(uintptr(dst), unix.F_GETFL, 0); err != nil || fl&unix.O_APPEND != 0 {
			return false // splice refuses O_APPEND
		}
	case unix.S_IFIFO:
		if fl, err := unix.FcntlInt(uintptr(dst), unix.F_GETFL, 0); err != nil || fl&unix.O_NONBLOCK != 0 {
			return false
		}
	default:
		return false
	}
	moved := false
	for {
		n, err := unix.Splice(src, nil, dst, nil, outBufSize, unix.SPLICE_F_MOVE|unix.SPLICE_F_MORE)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil && !moved && (errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS)) {
			return false // this kernel or file system cannot: copy
		}
		if n <= 0 || err != nil {
			break
		}
		moved = true
		batch(n)
	}
	// Drain what a failed write left, so the script is not blocked.
	buf := make([]byte, 64<<10)
	for {
		n, err := unix.Read(src, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if n <= 0 || err != nil {
			return true
		}
	}
}

// input is the sandbox's standard input when nash feeds it to scripts: it
// is read once, across runs, and what nash read but no script consumed is
// kept, in order, for the next run or for an answer to a prompt (Answers).
type input struct {
	src  io.Reader
	once sync.Once
	ch   chan []byte // chunks read from src by one goroutine; closed at its end
	mu   sync.Mutex
	back []byte // read but not consumed, first in line
	eof  bool   // ch is closed and src is at its end
}

func (q *input) start() {
	q.once.Do(func() {
		q.ch = make(chan []byte)
		go func() {
			defer close(q.ch)
			for {
				buf := make([]byte, 32<<10)
				n, err := q.src.Read(buf)
				if n > 0 {
					q.ch <- buf[:n]
				}
				if err != nil {
					return
				}
			}
		}()
	})
}

// take returns the next bytes of input, or eof, or stopped once stop is
// closed first.
func (q *input) take(stop <-chan struct{}) (b []byte, eof, stopped bool) {
	q.mu.Lock()
	if len(q.back) > 0 {
		b, q.back = q.back, nil
		q.mu.Unlock()
		return b, false, false
	}
	if q.eof {
		q.mu.Unlock()
		return nil, true, false
	}
	q.mu.Unlock()
	q.start()
	select {
	case <-stop:
		return nil, false, true
	case b, ok := <-q.ch:
		if !ok {
			q.mu.Lock()
			q.eof = true
			q.mu.Unlock()
			return nil, true, false
		}
		return b, false, false
	}
}

// unread puts b back at the front of the input.
func (q *input) unread(b []byte) {
	if len(b) == 0 {
		return
	}
	q.mu.Lock()
	q.back = append(append([]byte(nil), b...), q.back...)
	q.mu.Unlock()
}

// Read reads what follows on the input, waiting for it.
func (q *input) Read(p []byte) (int, error) {
	b, eof, _ := q.take(nil)
	if eof {
		return 0, io.EOF
	}
	n := copy(p, b)
	q.unread(b[n:])
	return n, nil
}

// feeder feeds one run's stdin pipe from the sandbox's input.
type feeder struct {
	q    *input
	r    *os.File // the pipe's read end: the init's, and nash's to read back what is left
	w    *os.File
	done chan struct{}
	// sent keeps the last bytes written, as many as the pipe holds, to
	// check what is read back from it.
	sent []byte
	size int
}

// feedStdin makes the pipe the script reads its stdin from and starts
// feeding it; it returns the read end for the init.
func (s *Sandbox) feedStdin(st *streams, ended <-chan struct{}) (*os.File, error) {
	if s.in == nil {
		s.in = &input{src: s.stdin}
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	f := &feeder{q: s.in, r: r, w: w, done: make(chan struct{}), size: 64 << 10}
	if rc, err := w.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) {
			if n, err := unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0); err == nil && n > 0 {
				f.size = n
			}
		})
	}
	st.feed = f
	go f.run(ended)
	return r, nil
}

func (f *feeder) run(ended <-chan struct{}) {
	defer close(f.done)
	for {
		b, eof, stopped := f.q.take(ended)
		if stopped {
			return
		}
		if eof {
			f.w.Close() // the script reads end of file
			return
		}
		n, err := f.w.Write(b)
		f.remember(b[:n])
		if err != nil {
			f.q.unread(b[n:])
			return
		}
	}
}

func (f *feeder) remember(b []byte) {
	f.sent = append(f.sent, b...)
	if over := len(f.sent) - f.size; over > 0 {
		f.sent = append(f.sent[:0], f.sent[over:]...)
	}
}

// finish stops feeding, once every process of the run is gone, and puts
// back what the script left unread in its pipe, so that the next run or
// an answer reads it. Only what nash itself wrote is put back: a script
// can write into its own stdin pipe (by reopening /proc/self/fd/0), and
// what does not match is dropped whole.
func (f *feeder) finish() {
	_ = f.w.SetWriteDeadline(time.Now()) // a write under way returns
	<-f.done
	f.w.Close()
	defer f.r.Close()
	var left []byte
	if rc, err := f.r.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) {
			n, err := unix.IoctlGetInt(int(fd), unix.TIOCINQ)
			if err != nil || n <= 0 || n > len(f.sent) {
				return
			}
			// Every writer is gone and n bytes wait: reads do not block.
			left = make([]byte, n)
			for got := 0; got < n; {
				k, err := unix.Read(int(fd), left[got:])
				if errors.Is(err, unix.EINTR) {
					continue
				}
				if err != nil || k <= 0 {
					left = nil
					return
				}
				got += k
			}
		})
	}
	if len(left) > 0 && bytes.Equal(left, f.sent[len(f.sent)-len(left):]) {
		f.q.unread(left)
	}
}

// Answers is where nash reads the person's answers to its prompts after
// a run, from the same standard input the scripts were given: on a
// terminal, the terminal, with whatever was typed or injected before the
// question discarded; otherwise what follows on the input, starting with
// what the scripts left unread.
func (s *Sandbox) Answers() io.Reader {
	switch in := s.stdin.(type) {
	case nil:
		return eofReader{}
	case *os.File:
		if isTerminal(in) {
			DiscardInput(in)
			return in
		}
	}
	if s.in != nil {
		return s.in
	}
	return s.stdin
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }
