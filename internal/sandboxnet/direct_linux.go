package sandboxnet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Besides the hand-over of the catching sockets, the egress socket carries
// the init's questions about connections it could let go straight out.
// The init watches the script's connect calls (internal/sandboxinit); for
// a TCP connection to somewhere outside the sandbox it asks nash (Ask).
// When nash allows the destination, it answers with a socket of its own
// network namespace and the address to connect it to (Answer); the init
// connects it in the script's place and installs it in the script's
// descriptor table, so the traffic goes between the script and the
// destination with no relay. Otherwise the call goes on in the sandbox's
// namespace, where the catching sockets take it. The init then tells nash
// how the connect ended (Done).
//
// Messages (SOCK_SEQPACKET: one per datagram), integers little-endian:
//
//	'?' id:8 v6:1 addr:16 port:2          Ask
//	'=' id:8 direct:1 addr:16 port:2 [fd] Answer
//	'>' id:8 errno:4 local-addr:16 port:2 Done
//
// The hand-over is text: kind names, or '!' and a reason.

const (
	tagAsk    = '?'
	tagAnswer = '='
	tagDone   = '>'
)

// Ask is the init's question about one connect call.
type Ask struct {
	ID uint64
	// Dst is where the script connects to (an IPv4-mapped address is
	// given as IPv4).
	Dst netip.AddrPort
	// V6 says the script's socket is AF_INET6.
	V6 bool
}

// Answer is nash's answer: when Direct, Sock is a fresh TCP socket of
// nash's namespace, of the script's family, for the init to connect to To.
type Answer struct {
	ID     uint64
	Direct bool
	To     netip.AddrPort
	Sock   *os.File
}

// Done is how a direct connect ended: Errno 0 or EINPROGRESS when it
// connected or is connecting; Local is the socket's own address.
type Done struct {
	ID    uint64
	Errno syscall.Errno
	Local netip.AddrPort
}

// Message is one message nash reads from the egress socket: exactly one
// field is set.
type Message struct {
	Sockets []Socket
	Setup   error // the hand-over failed: why
	Ask     *Ask
	Done    *Done
}

func putAddr(b []byte, ap netip.AddrPort) {
	a := ap.Addr().As16()
	copy(b, a[:])
	binary.BigEndian.PutUint16(b[16:], ap.Port())
}

func getAddr(b []byte) netip.AddrPort {
	a := netip.AddrFrom16([16]byte(b[:16])).Unmap()
	return netip.AddrPortFrom(a, binary.BigEndian.Uint16(b[16:18]))
}

// SendAsk sends an Ask from the init.
func SendAsk(fd int, a Ask) error {
	b := make([]byte, 1+8+1+18)
	b[0] = tagAsk
	binary.LittleEndian.PutUint64(b[1:], a.ID)
	if a.V6 {
		b[9] = 1
	}
	putAddr(b[10:], a.Dst)
	return unix.Sendmsg(fd, b, nil, nil, 0)
}

// SendDone sends a Done from the init.
func SendDone(fd int, d Done) error {
	b := make([]byte, 1+8+4+18)
	b[0] = tagDone
	binary.LittleEndian.PutUint64(b[1:], d.ID)
	binary.LittleEndian.PutUint32(b[9:], uint32(d.Errno))
	if d.Local.IsValid() {
		putAddr(b[13:], d.Local)
	}
	return unix.Sendmsg(fd, b, nil, nil, 0)
}

// SendAnswer sends nash's answer; a direct answer carries its socket.
func SendAnswer(f *os.File, a Answer) error {
	b := make([]byte, 1+8+1+18)
	b[0] = tagAnswer
	binary.LittleEndian.PutUint64(b[1:], a.ID)
	var oob []byte
	if a.Direct {
		b[9] = 1
		putAddr(b[10:], a.To)
		oob = unix.UnixRights(int(a.Sock.Fd()))
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	werr := rc.Write(func(fd uintptr) bool {
		err = unix.Sendmsg(int(fd), b, oob, nil, 0)
		return !errors.Is(err, unix.EAGAIN)
	})
	if err == nil {
		err = werr
	}
	if err != nil {
		return fmt.Errorf("answer the sandbox init: %w", err)
	}
	return nil
}

// ReadAnswer reads nash's next answer, in the init (a blocking read).
// The answer's socket, if any, is close-on-exec.
func ReadAnswer(fd int) (Answer, error) {
	b := make([]byte, 64)
	oob := make([]byte, unix.CmsgSpace(4))
	for {
		n, oobn, _, _, err := unix.Recvmsg(fd, b, oob, unix.MSG_CMSG_CLOEXEC)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return Answer{}, err
		}
		if n == 0 {
			return Answer{}, errors.New("nash closed the egress socket")
		}
		fds := rights(oob[:oobn])
		if n != 1+8+1+18 || b[0] != tagAnswer {
			closeAll(fds)
			return Answer{}, fmt.Errorf("malformed answer from nash (%d bytes)", n)
		}
		a := Answer{ID: binary.LittleEndian.Uint64(b[1:]), Direct: b[9] == 1}
		if a.Direct {
			if len(fds) != 1 {
				closeAll(fds)
				return Answer{}, errors.New("nash's direct answer came without its socket")
			}
			a.To = getAddr(b[10:])
			a.Sock = os.NewFile(uintptr(fds[0]), "direct")
		} else {
			closeAll(fds)
		}
		return a, nil
	}
}

func rights(oob []byte) []int {
	var fds []int
	if len(oob) == 0 {
		return nil
	}
	cms, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return nil
	}
	for _, cm := range cms {
		if got, err := unix.ParseUnixRights(&cm); err == nil {
			fds = append(fds, got...)
		}
	}
	return fds
}

// ReadMessage reads the init's next message, in nash: the hand-over of the
// catching sockets (or why there are none), an Ask or a Done. Once the
// init is gone it returns an error IsEOF knows; past f's read deadline,
// os.ErrDeadlineExceeded.
func ReadMessage(f *os.File) (Message, error) { return readMessage(f, true) }

// ReadMessageNow is ReadMessage for a message already waiting: it returns
// ErrNone at once when there is none. f must have no read deadline.
func ReadMessageNow(f *os.File) (Message, error) { return readMessage(f, false) }

// ErrNone is ReadMessageNow's error when no message waits.
var ErrNone = errors.New("no message from the sandbox init")

func readMessage(f *os.File, wait bool) (Message, error) {
	buf := make([]byte, 4096)
	oob := make([]byte, unix.CmsgSpace(8*4))
	var n, oobn int
	var err error
	// Through the runtime's poller (nash's end is non-blocking), so
	// that the wait holds no thread.
	rc, cerr := f.SyscallConn()
	if cerr != nil {
		return Message{}, fmt.Errorf("read from the sandbox init: %w", cerr)
	}
	rerr := rc.Read(func(fd uintptr) bool {
		n, oobn, _, _, err = unix.Recvmsg(int(fd), buf, oob, unix.MSG_CMSG_CLOEXEC)
		return !wait || (!errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EINTR))
	})
	switch {
	case rerr != nil:
		// The poller's error (a read deadline passed, the file closed)
		// says why the last read's EAGAIN was not retried.
		err = rerr
	case !wait && errors.Is(err, unix.EAGAIN):
		return Message{}, ErrNone
	}
	if err != nil {
		return Message{}, fmt.Errorf("read from the sandbox init: %w", err)
	}
	fds := rights(oob[:oobn])
	if n == 0 {
		closeAll(fds)
		return Message{}, errEOF
	}
	switch buf[0] {
	case tagAsk:
		closeAll(fds)
		if n != 1+8+1+18 {
			return Message{}, fmt.Errorf("malformed question from the sandbox init (%d bytes)", n)
		}
		return Message{Ask: &Ask{ID: binary.LittleEndian.Uint64(buf[1:]), V6: buf[9] == 1, Dst: getAddr(buf[10:])}}, nil
	case tagDone:
		closeAll(fds)
		if n != 1+8+4+18 {
			return Message{}, fmt.Errorf("malformed report from the sandbox init (%d bytes)", n)
		}
		d := &Done{ID: binary.LittleEndian.Uint64(buf[1:]), Errno: syscall.Errno(binary.LittleEndian.Uint32(buf[9:]))}
		if l := getAddr(buf[13:]); l.Port() != 0 {
			d.Local = l
		}
		return Message{Done: d}, nil
	}
	socks, err := parseHandover(string(buf[:n]), fds)
	if err != nil {
		return Message{Setup: err}, nil
	}
	return Message{Sockets: socks}, nil
}

// errEOF is ReadMessage's error once the init closed its end.
var errEOF = errors.New("the sandbox init closed the egress socket")

// IsEOF reports whether err is ReadMessage's end of messages.
func IsEOF(err error) bool { return errors.Is(err, errEOF) }

func parseHandover(text string, fds []int) ([]Socket, error) {
	if reason, ok := strings.CutPrefix(text, "!"); ok {
		closeAll(fds)
		return nil, &SetupError{Reason: reason}
	}
	names := strings.Split(text, ",")
	if len(names) != len(fds) {
		closeAll(fds)
		return nil, &SetupError{Reason: fmt.Sprintf("the sandbox init sent %d sockets for %d names", len(fds), len(names))}
	}
	out := make([]Socket, len(fds))
	for i, name := range names {
		if len(name) < 2 {
			closeAll(fds)
			return nil, &SetupError{Reason: "malformed socket name " + name}
		}
		out[i] = Socket{Kind: Kind(name[:len(name)-1]), IPv6: name[len(name)-1] == '6', File: os.NewFile(uintptr(fds[i]), name)}
	}
	return out, nil
}
