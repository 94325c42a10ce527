package sockdiag

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Counts are the bytes a TCP connection had acknowledged by its peer
// (Sent) and received from it (Received), from its struct tcp_info.
//
// Sent is tcpi_bytes_acked without the SYN and FIN it counts: the payload
// acknowledged, exactly once nothing is in flight (while data is, a
// socket that connected may count one byte more). Received is
// tcpi_bytes_received, which counts the peer's FIN as one byte once it
// arrived: tcp_info has nothing to tell it apart after the socket is
// destroyed.
type Counts struct{ Sent, Received int64 }

// From linux/inet_diag.h and linux/tcp.h; x/sys has no inet_diag types.
const (
	tcpListen   = 10 // TCP_LISTEN
	tcpTimeWait = 6  // TCP_TIME_WAIT

	attrReqBytecode = 1 // INET_DIAG_REQ_BYTECODE
	attrInfo        = 2 // INET_DIAG_INFO

	bcSGE = 2 // INET_DIAG_BC_S_GE
	bcSLE = 3 // INET_DIAG_BC_S_LE

	reqLen   = 56         // sizeof(struct inet_diag_req_v2)
	msgLen   = 72         // sizeof(struct inet_diag_msg)
	noCookie = ^uint32(0) // INET_DIAG_NOCOOKIE

	// Where tcpi_bytes_acked and tcpi_bytes_received lie in struct
	// tcp_info (since Linux 4.1 and 4.2).
	offAcked    = int(unsafe.Offsetof(unix.TCPInfo{}.Bytes_acked))
	offReceived = int(unsafe.Offsetof(unix.TCPInfo{}.Bytes_received))
	// And tcpi_bytes_sent and tcpi_bytes_retrans (since Linux 4.19).
	offSent    = int(unsafe.Offsetof(unix.TCPInfo{}.Bytes_sent))
	offRetrans = int(unsafe.Offsetof(unix.TCPInfo{}.Bytes_retrans))

	// bufLen holds any datagram a sock_diag dump sends: the kernel fills
	// at most max(NLMSG_GOODSIZE, the largest read buffer seen) per one.
	bufLen = 8192

	// destroyWait is how long Counts waits for the broadcast of a socket
	// that is no longer there.
	destroyWait = 100 * time.Millisecond
)

// diagSocket opens a NETLINK_SOCK_DIAG socket in the calling thread's
// network namespace.
func diagSocket(flags int) (int, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC|flags, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return -1, fmt.Errorf("sock_diag socket: %w", err)
	}
	return fd, nil
}

// request builds a SOCK_DIAG_BY_FAMILY request for TCP sockets: a netlink
// header, an inet_diag_req_v2 and the bytecode, if any.
func request(flags uint16, family uint8, ext uint8, states uint32, id []byte, bytecode []byte) []byte {
	n := unix.NLMSG_HDRLEN + reqLen
	if bytecode != nil {
		n += unix.SizeofRtAttr + len(bytecode)
	}
	b := make([]byte, n)
	ne := binary.NativeEndian
	ne.PutUint32(b[0:], uint32(n))
	ne.PutUint16(b[4:], unix.SOCK_DIAG_BY_FAMILY)
	ne.PutUint16(b[6:], unix.NLM_F_REQUEST|flags)
	ne.PutUint32(b[8:], 1) // seq
	r := b[unix.NLMSG_HDRLEN:]
	r[0] = family
	r[1] = unix.IPPROTO_TCP
	r[2] = ext
	ne.PutUint32(r[4:], states)
	copy(r[8:56], id)
	if bytecode != nil {
		a := r[reqLen:]
		ne.PutUint16(a[0:], uint16(unix.SizeofRtAttr+len(bytecode)))
		ne.PutUint16(a[2:], attrReqBytecode)
		copy(a[unix.SizeofRtAttr:], bytecode)
	}
	return b
}

// portBytecode is inet_diag bytecode that accepts the sockets whose local
// port is port: sport >= port, then sport <= port. Each op is struct
// inet_diag_bc_op {code, yes, no} followed by one whose no is the port;
// yes jumps to the next op, no past the end, which rejects.
func portBytecode(port uint16) []byte {
	b := make([]byte, 16)
	ne := binary.NativeEndian
	b[0], b[1] = bcSGE, 8
	ne.PutUint16(b[2:], 16+4)
	ne.PutUint16(b[6:], port)
	b[8], b[9] = bcSLE, 8
	ne.PutUint16(b[10:], 8+4)
	ne.PutUint16(b[14:], port)
	return b
}

// Listening reports whether a TCP socket of the calling thread's network
// namespace, IPv4 or IPv6, listens on port, on any local address.
func Listening(port uint16) (bool, error) {
	fd, err := diagSocket(0)
	if err != nil {
		return false, err
	}
	defer unix.Close(fd)
	var id [48]byte
	binary.BigEndian.PutUint16(id[0:], port) // the kernel also filters listeners on sport
	ne := binary.NativeEndian
	ne.PutUint32(id[40:], noCookie)
	ne.PutUint32(id[44:], noCookie)
	bc := portBytecode(port)
	var buf [bufLen]byte
	for _, family := range []uint8{unix.AF_INET, unix.AF_INET6} {
		req := request(unix.NLM_F_DUMP, family, 0, 1<<tcpListen, id[:], bc)
		if _, err := unix.Write(fd, req); err != nil {
			return false, fmt.Errorf("sock_diag dump: %w", err)
		}
		found := false
		err := readDump(fd, buf[:], func(m []byte) {
			if len(m) >= msgLen && m[1] == tcpListen && binary.BigEndian.Uint16(m[4:]) == port {
				found = true
			}
		})
		if err != nil {
			return false, fmt.Errorf("sock_diag dump of listening sockets, family %d: %w", family, err)
		}
		if found {
			return true, nil
		}
	}
	return false, nil
}

// readDump reads the answers to one request until NLMSG_DONE, or the
// first answer if the request was no dump, and hands each
// SOCK_DIAG_BY_FAMILY payload to f.
func readDump(fd int, buf []byte, f func(msg []byte)) error {
	for {
		n, _, err := unix.Recvfrom(fd, buf, unix.MSG_TRUNC)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		if n > len(buf) {
			return fmt.Errorf("datagram of %d bytes truncated", n)
		}
		b := buf[:n]
		for len(b) >= unix.NLMSG_HDRLEN {
			l := int(binary.NativeEndian.Uint32(b[0:]))
			typ := binary.NativeEndian.Uint16(b[4:])
			flags := binary.NativeEndian.Uint16(b[6:])
			if l < unix.NLMSG_HDRLEN || l > len(b) {
				return errors.New("malformed netlink message")
			}
			m := b[unix.NLMSG_HDRLEN:l]
			switch typ {
			case unix.NLMSG_DONE:
				return nil
			case unix.NLMSG_ERROR:
				if len(m) < 4 {
					return errors.New("short netlink error")
				}
				if e := int32(binary.NativeEndian.Uint32(m)); e != 0 {
					return unix.Errno(-e)
				}
				return nil
			case unix.SOCK_DIAG_BY_FAMILY:
				f(m)
				if flags&unix.NLM_F_MULTI == 0 {
					return nil
				}
			}
			b = b[min(nlmAlign(l), len(b)):]
		}
	}
}

func nlmAlign(n int) int { return (n + unix.NLMSG_ALIGNTO - 1) &^ (unix.NLMSG_ALIGNTO - 1) }

// info holds what an inet_diag_msg says of a TCP socket.
type info struct {
	cookie uint64
	state  uint8
	counts Counts
	ok     bool // it carried a tcp_info long enough for the counts
}

// parseMsg reads an inet_diag_msg and its attributes.
func parseMsg(m []byte) (info, bool) {
	if len(m) < msgLen {
		return info{}, false
	}
	ne := binary.NativeEndian
	in := info{
		state:  m[1],
		cookie: uint64(ne.Uint32(m[44:])) | uint64(ne.Uint32(m[48:]))<<32,
	}
	a := m[msgLen:]
	for len(a) >= unix.SizeofRtAttr {
		l := int(ne.Uint16(a[0:]))
		typ := ne.Uint16(a[2:]) &^ (unix.NLA_F_NESTED | unix.NLA_F_NET_BYTEORDER)
		if l < unix.SizeofRtAttr || l > len(a) {
			break
		}
		d := a[unix.SizeofRtAttr:l]
		if typ == attrInfo && len(d) >= offReceived+8 {
			in.counts = Counts{
				Sent:     int64(ne.Uint64(d[offAcked:])),
				Received: int64(ne.Uint64(d[offReceived:])),
			}
			in.ok = true
			if len(d) >= offRetrans+8 {
				// bytes_acked counts the SYN of a socket that
				// connected and the FIN once acknowledged; the
				// payload sent once is no more than that, and all
				// of it was acknowledged if the FIN was.
				once := int64(ne.Uint64(d[offSent:]) - ne.Uint64(d[offRetrans:]))
				in.counts.Sent = min(in.counts.Sent, once)
			}
		}
		a = a[min((l+3)&^3, len(a)):]
	}
	return in, true
}

// Watcher keeps the byte counts of the TCP sockets it was asked to track
// when the kernel destroys them, and asks the kernel for those of the
// sockets still there.
type Watcher struct {
	f    *os.File
	done chan struct{} // closed when read returns

	mu      sync.Mutex
	tracked map[uint64]*entry
}

// entry is a tracked socket; counts are set before gone is closed.
type entry struct {
	counts Counts
	gone   chan struct{}
}

// Watch opens a sock_diag socket of the calling thread's network
// namespace that hears of the TCP sockets (IPv4 and IPv6) the kernel
// destroys. It needs no privilege.
func Watch() (*Watcher, error) {
	fd, err := diagSocket(unix.SOCK_NONBLOCK)
	if err != nil {
		return nil, err
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("sock_diag bind: %w", err)
	}
	for _, g := range []int{unix.SKNLGRP_INET_TCP_DESTROY, unix.SKNLGRP_INET6_TCP_DESTROY} {
		if err := unix.SetsockoptInt(fd, unix.SOL_NETLINK, unix.NETLINK_ADD_MEMBERSHIP, g); err != nil {
			unix.Close(fd)
			return nil, fmt.Errorf("sock_diag join group %d: %w", g, err)
		}
	}
	w := &Watcher{
		f:       os.NewFile(uintptr(fd), "sock_diag"),
		done:    make(chan struct{}),
		tracked: make(map[uint64]*entry),
	}
	rc, err := w.f.SyscallConn()
	if err != nil {
		w.f.Close()
		return nil, fmt.Errorf("sock_diag: %w", err)
	}
	go w.read(rc)
	return w, nil
}

// read takes in the destroy broadcasts until the socket is closed.
func (w *Watcher) read(rc syscall.RawConn) {
	defer close(w.done)
	buf := make([]byte, bufLen)
	for {
		var n int
		var from unix.Sockaddr
		var rerr error
		err := rc.Read(func(fd uintptr) bool {
			n, from, rerr = unix.Recvfrom(int(fd), buf, 0)
			return !errors.Is(rerr, unix.EAGAIN)
		})
		if err != nil {
			return // closed
		}
		if rerr != nil {
			// ENOBUFS: broadcasts were lost as the socket's buffer was
			// full; their sockets are no longer there to be asked.
			continue
		}
		if sa, ok := from.(*unix.SockaddrNetlink); !ok || sa.Pid != 0 {
			continue // not from the kernel
		}
		w.take(buf[:n])
	}
}

// take records the broadcasts in b of tracked sockets.
func (w *Watcher) take(b []byte) {
	for len(b) >= unix.NLMSG_HDRLEN {
		l := int(binary.NativeEndian.Uint32(b[0:]))
		typ := binary.NativeEndian.Uint16(b[4:])
		if l < unix.NLMSG_HDRLEN || l > len(b) {
			return
		}
		if typ == unix.SOCK_DIAG_BY_FAMILY {
			if in, ok := parseMsg(b[unix.NLMSG_HDRLEN:l]); ok && in.ok {
				w.mu.Lock()
				if e := w.tracked[in.cookie]; e != nil {
					select {
					case <-e.gone:
					default:
						e.counts = in.counts
						close(e.gone)
					}
				}
				w.mu.Unlock()
			}
		}
		b = b[min(nlmAlign(l), len(b)):]
	}
}

// Track starts keeping the counts of the socket with this cookie
// (SO_COOKIE) when it is destroyed. Call it before the socket can be.
func (w *Watcher) Track(cookie uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.tracked[cookie] == nil {
		w.tracked[cookie] = &entry{gone: make(chan struct{})}
	}
}

// Forget stops tracking the socket with this cookie and drops its counts.
func (w *Watcher) Forget(cookie uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.tracked, cookie)
}

// Counts returns the counts of the TCP socket with this cookie, of the
// given family (unix.AF_INET or AF_INET6) and addresses: those the kernel
// broadcast when it destroyed it, if it was tracked, else those of the
// socket still there. A tracked socket that is neither is waited for a
// little, as the kernel broadcasts from a work queue. ok is false if
// there are no counts.
func (w *Watcher) Counts(cookie uint64, family int, local, remote netip.AddrPort) (c Counts, ok bool) {
	w.mu.Lock()
	e := w.tracked[cookie]
	w.mu.Unlock()
	if e != nil {
		select {
		case <-e.gone:
			return e.counts, true
		default:
		}
	}
	if in, err := query(cookie, family, local, remote); err == nil && in.ok {
		return in.counts, true
	}
	if e == nil {
		return Counts{}, false
	}
	t := time.NewTimer(destroyWait)
	defer t.Stop()
	select {
	case <-e.gone:
		return e.counts, true
	case <-t.C:
	case <-w.done:
	}
	return Counts{}, false
}

// query asks for the socket with this cookie and addresses, with its
// tcp_info.
func query(cookie uint64, family int, local, remote netip.AddrPort) (info, error) {
	var id [48]byte
	be := binary.BigEndian
	be.PutUint16(id[0:], local.Port())
	be.PutUint16(id[2:], remote.Port())
	switch family {
	case unix.AF_INET:
		l, r := local.Addr().Unmap(), remote.Addr().Unmap()
		if !l.Is4() || !r.Is4() {
			return info{}, fmt.Errorf("sock_diag query: %v, %v: not IPv4", local, remote)
		}
		a, b := l.As4(), r.As4()
		copy(id[4:], a[:])
		copy(id[20:], b[:])
	case unix.AF_INET6:
		a, b := local.Addr().As16(), remote.Addr().As16()
		copy(id[4:], a[:])
		copy(id[20:], b[:])
	default:
		return info{}, fmt.Errorf("sock_diag query: family %d", family)
	}
	ne := binary.NativeEndian
	ne.PutUint32(id[40:], uint32(cookie))
	ne.PutUint32(id[44:], uint32(cookie>>32))
	fd, err := diagSocket(0)
	if err != nil {
		return info{}, err
	}
	defer unix.Close(fd)
	req := request(0, uint8(family), 1<<(attrInfo-1), ^uint32(0), id[:], nil)
	if _, err := unix.Write(fd, req); err != nil {
		return info{}, fmt.Errorf("sock_diag query: %w", err)
	}
	var in info
	found := false
	buf := make([]byte, bufLen)
	err = readDump(fd, buf, func(m []byte) {
		if i, ok := parseMsg(m); ok && i.cookie == cookie {
			in, found = i, true
		}
	})
	if err != nil {
		return info{}, fmt.Errorf("sock_diag query %v %v: %w", local, remote, err)
	}
	if !found {
		return info{}, fmt.Errorf("sock_diag query %v %v: no socket", local, remote)
	}
	return in, nil
}

// Close stops the watcher.
func (w *Watcher) Close() error {
	err := w.f.Close()
	<-w.done
	if err != nil {
		return fmt.Errorf("sock_diag close: %w", err)
	}
	return nil
}
