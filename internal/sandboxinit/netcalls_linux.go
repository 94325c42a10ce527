package sandboxinit

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"unsafe"

	"github.com/nash-shell/nash/internal/sandboxnet"
	"github.com/nash-shell/nash/internal/sockdiag"
	"golang.org/x/sys/unix"
)

// The script's network calls, when nash intercepts the sandbox's network
// (it passed its egress socket), go through the seccomp supervisor
// (seccomp_linux.go): connect, sendto, sendmsg and sendmmsg. Two things
// are done there.
//
// The interception is set up on first use. Until the script first sends
// to an address outside its loopback, the sandbox's network is its
// loopback alone, and nothing else is built: a run that uses no network
// pays nothing for it. The first such call waits while the init sets up
// the namespace and hands nash the catching sockets (package sandboxnet),
// then goes on into them. Whatever a call that is not watched sends
// before that (io_uring's, say) has no route out and fails, unseen.
//
// A TCP connect to somewhere outside the sandbox is offered to nash
// first. When nash allows the destination, it sends a socket of its own
// network namespace; the init copies the script's socket options onto it,
// connects it as the script would have (blocking or not), and puts it in
// the script's descriptor table in place of the script's socket
// (SECCOMP_IOCTL_NOTIF_ADDFD). The script then talks to the destination
// with no relay, at the speed of a connection of nash's own; nash counts
// its bytes from the kernel's socket statistics. Everything else (a
// destination nash does not allow, a socket already bound, UDP) goes on
// in the sandbox's namespace, where the catching sockets record it, and
// nash relays what it allows. The rules there stay the enforcement: a
// call that gets past the supervisor reaches nothing nash did not allow.

// netGate is the init's side of nash's egress socket.
type netGate struct {
	fd int

	setupOnce sync.Once
	isSetUp   atomic.Bool

	mu   sync.Mutex // held while a question is asked
	next uint64
	gone bool // nash stopped answering

	templMu sync.Mutex
	templ   [2]int // fresh TCP sockets of each family, for default options

	sup   *supervisor // set when the supervisor starts
	netns unix.Stat_t // the sandbox's network namespace
}

func newNetGate(fd int) *netGate {
	g := &netGate{fd: fd, templ: [2]int{-1, -1}}
	_ = unix.Stat("/proc/self/ns/net", &g.netns)
	return g
}

// takeFd copies the caller's descriptor fd into the init (pidfd_getfd).
// The init holds CAP_SYS_PTRACE over the sandbox, so a caller that made
// itself undumpable is no exception.
//
// pid is the calling thread's id, as the notification gives it, which
// need not lead its process: it is opened as a thread (PIDFD_THREAD, Linux
// 6.9), or else through its process's id.
func takeFd(pid, fd int) (int, error) {
	pidfd, err := unix.PidfdOpen(pid, pidfdThread)
	if errors.Is(err, unix.EINVAL) {
		if tgid, terr := threadGroup(pid); terr == nil {
			pidfd, err = unix.PidfdOpen(tgid, 0)
		}
	}
	if err != nil {
		return -1, err
	}
	defer unix.Close(pidfd)
	return unix.PidfdGetfd(pidfd, fd, 0)
}

// pidfdThread is PIDFD_THREAD (linux/pidfd.h), which x/sys does not name.
const pidfdThread = unix.O_EXCL

// threadGroup is the id of the process thread tid belongs to.
func threadGroup(tid int) (int, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(tid) + "/status")
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Tgid:"); ok {
			return strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return 0, unix.ESRCH
}

// escapes is escapesFd for the caller's descriptor fd; a descriptor the
// init cannot look at escapes.
func (g *netGate) escapes(pid, fd int) bool {
	s, err := takeFd(pid, fd)
	if err != nil {
		return !errors.Is(err, unix.EBADF) && !errors.Is(err, unix.ESRCH)
	}
	defer unix.Close(s)
	return g.escapesFd(s)
}

// escapesFd reports whether a connect (or a fast-open send) on socket s
// would go out unchecked: s is a socket nash handed over, which belongs to
// nash's network namespace, not the sandbox's, and it is closed (its
// connect failed, or the script disconnected it with AF_UNSPEC), so it
// could connect again, anywhere. A handed-over socket that is connected
// or connecting gets EISCONN or EALREADY from the kernel, as any would.
func (g *netGate) escapesFd(s int) bool {
	ns, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(s), unix.SIOCGSKNS, 0)
	switch errno {
	case unix.ENOTSOCK:
		return false
	case 0:
		var st unix.Stat_t
		err := unix.Fstat(int(ns), &st)
		unix.Close(int(ns))
		if err == nil && st.Dev == g.netns.Dev && st.Ino == g.netns.Ino {
			return false // the sandbox's own
		}
	}
	// Another namespace's socket (EPERM: the init holds no capability
	// over nash's namespace), or one the init cannot place.
	info, err := unix.GetsockoptTCPInfo(s, unix.IPPROTO_TCP, unix.TCP_INFO)
	return err != nil || info.State == unix.BPF_TCP_CLOSE
}

// setUp makes the sandbox's namespace hand its traffic to nash, once; a
// concurrent caller waits until it is done.
func (g *netGate) setUp() {
	if g.isSetUp.Load() {
		return
	}
	g.setupOnce.Do(func() {
		_ = sandboxnet.Handover(g.fd)
		g.isSetUp.Store(true)
	})
}

// ask asks nash about a connection to dst; false when nash did not answer.
// One question is asked at a time, and its answer read on the asking
// thread: a connect waits for nash either way, and a reader of its own
// would add a hand-over between threads to each.
func (g *netGate) ask(dst netip.AddrPort, v6 bool) (sandboxnet.Answer, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.gone {
		return sandboxnet.Answer{}, false
	}
	g.next++
	id := g.next
	if err := sandboxnet.SendAsk(g.fd, sandboxnet.Ask{ID: id, Dst: dst, V6: v6}); err != nil {
		g.gone = true
		return sandboxnet.Answer{}, false
	}
	for {
		a, err := sandboxnet.ReadAnswer(g.fd)
		if err != nil {
			g.gone = true
			return sandboxnet.Answer{}, false
		}
		if a.ID == id {
			return a, true
		}
		if a.Sock != nil { // an answer nobody waits for
			a.Sock.Close()
		}
	}
}

// serveNet answers one of the script's network calls.
func (s *supervisor) serveNet(n seccompNotif, kind renameKind) {
	if resp := s.net.answer(&n, kind); resp != nil {
		s.send(n.ID, resp)
	}
}

// answer decides on one network call; nil means no answer is due.
func (g *netGate) answer(n *seccompNotif, kind renameKind) *seccompNotifResp {
	if kind == callConnect {
		return g.connect(n)
	}
	pid := int(n.PID)
	ptr := func(v uint64) uint64 {
		if n.Data.Arch&auditArch64 == 0 {
			return v & 0xffffffff
		}
		return v
	}
	fd := int(int32(uint32(n.Data.Args[0])))
	switch kind {
	case callRefuse:
		// io_uring's operations pass no filter: its connect, bind and
		// listen would reach a handed-over socket unchecked. Programs
		// fall back to system calls, as in most container sandboxes.
		return respErrno(unix.ENOSYS)
	case callBind, callListen:
		// A handed-over socket, closed, must not become a server of
		// nash's namespace.
		if g.escapes(pid, fd) {
			return respErrno(unix.EACCES)
		}
		return respContinue()
	case callNetOther:
		if n.Data.Nr == 102 && n.Data.Arch == unix.AUDIT_ARCH_I386 {
			// i386's socketcall(call, args): the descriptor is the
			// first of the args.
			fd = -1
			if b, err := readMem(pid, ptr(n.Data.Args[1]), 4); err == nil {
				fd = int(int32(binary.NativeEndian.Uint32(b)))
			}
		}
		if fd >= 0 && g.escapes(pid, fd) {
			return respErrno(unix.EACCES)
		}
		g.setUp()
		return respContinue()
	}
	var named bool // the call names an Internet address (or cannot be read)
	switch kind {
	case callSendto:
		addr := ptr(n.Data.Args[4])
		named = addr != 0 && !notInet(readFamily(pid, addr))
	case callSendmsg:
		named = msgNamesInet(pid, ptr(n.Data.Args[1]), 1, 0)
	case callSendmmsg:
		// struct mmsghdr: a msghdr (56 bytes) and msg_len, padded.
		named = msgNamesInet(pid, ptr(n.Data.Args[1]), int(min(uint32(n.Data.Args[2]), 1024)), 64)
	}
	if !named {
		return respContinue()
	}
	// A fast-open send connects: not through a socket nash handed over.
	if g.escapes(pid, fd) {
		return respErrno(unix.EACCES)
	}
	g.setUp()
	return respContinue()
}

// notInet says family is known and not an Internet one.
func notInet(family int) bool { return family >= 0 && !isInet(family) }

func isInet(family int) bool { return family == unix.AF_INET || family == unix.AF_INET6 }

// readFamily reads a sockaddr's family from the caller's memory (-1 when
// it cannot).
func readFamily(pid int, addr uint64) int {
	b, err := readMem(pid, addr, 2)
	if err != nil {
		return -1
	}
	return int(binary.NativeEndian.Uint16(b))
}

// msgNamesInet reports whether any of count 64-bit struct msghdr, stride
// bytes apart from addr, names an Internet address (or cannot be read).
func msgNamesInet(pid int, addr uint64, count, stride int) bool {
	for i := 0; i < max(count, 1); i++ {
		b, err := readMem(pid, addr+uint64(i*stride), 8) // msg_name
		if err != nil {
			return true
		}
		if name := binary.NativeEndian.Uint64(b); name != 0 {
			if !notInet(readFamily(pid, name)) {
				return true
			}
		}
	}
	return false
}

func readMem(pid int, addr uint64, n int) ([]byte, error) {
	if addr == 0 {
		return nil, unix.EFAULT
	}
	b := make([]byte, n)
	local := []unix.Iovec{{Base: &b[0]}}
	local[0].SetLen(n)
	remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: n}}
	got, err := unix.ProcessVMReadv(pid, local, remote, 0)
	if err != nil {
		return nil, err
	}
	if got < n {
		return nil, unix.EFAULT
	}
	return b, nil
}

// connect answers a connect call.
func (g *netGate) connect(n *seccompNotif) *seccompNotifResp {
	pid := int(n.PID)
	fd := int(int32(uint32(n.Data.Args[0])))
	addr := n.Data.Args[1]
	if n.Data.Arch&auditArch64 == 0 {
		addr &= 0xffffffff
	}
	alen := int(uint32(n.Data.Args[2]))
	dst, v6, ok := readInetAddr(pid, addr, alen)
	if !ok {
		// Not an Internet address (a unix socket's, or AF_UNSPEC, which
		// disconnects), or one this does not read: the kernel decides.
		if notInet(readFamily(pid, addr)) {
			return respContinue()
		}
		if g.escapes(pid, fd) {
			return respErrno(unix.EACCES)
		}
		g.setUp()
		return respContinue()
	}
	theirs, err := takeFd(pid, fd)
	if err != nil {
		if errors.Is(err, unix.EBADF) || errors.Is(err, unix.ESRCH) {
			return respContinue() // the kernel says so itself
		}
		return respErrno(unix.EACCES) // a socket nobody can look at stays in
	}
	defer unix.Close(theirs)
	if g.escapesFd(theirs) {
		return respErrno(unix.EACCES)
	}
	if ip := dst.Addr(); ip.IsLoopback() || ip.IsUnspecified() {
		// The sandbox's loopback is its own: a port where the script
		// listens is the script's server, as on any machine. Another is
		// a service of the host's, which nash may allow.
		if listening, err := sockdiag.Listening(dst.Port()); err == nil && listening {
			return respContinue()
		}
	}
	if resp := g.direct(n, pid, fd, theirs, dst, v6); resp != nil {
		return resp
	}
	g.setUp()
	return respContinue()
}

// readInetAddr reads an AF_INET or AF_INET6 sockaddr of alen bytes.
func readInetAddr(pid int, addr uint64, alen int) (netip.AddrPort, bool, bool) {
	if alen < unix.SizeofSockaddrInet4 {
		return netip.AddrPort{}, false, false
	}
	b, err := readMem(pid, addr, min(alen, unix.SizeofSockaddrInet6))
	if err != nil {
		return netip.AddrPort{}, false, false
	}
	port := binary.BigEndian.Uint16(b[2:4])
	switch binary.NativeEndian.Uint16(b) {
	case unix.AF_INET:
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[4:8])), port), false, true
	case unix.AF_INET6:
		if len(b) < unix.SizeofSockaddrInet6 {
			return netip.AddrPort{}, false, false
		}
		return netip.AddrPortFrom(netip.AddrFrom16([16]byte(b[8:24])).Unmap(), port), true, true
	}
	return netip.AddrPort{}, false, false
}

// direct hands the script a socket of nash's when nash allows dst, and
// answers the call; nil means the call should go on in the sandbox.
func (g *netGate) direct(n *seccompNotif, pid, fd, theirs int, dst netip.AddrPort, v6 bool) *seccompNotifResp {
	// The pid still names the caller (it could have died and its pid
	// been reused between the notification and the pidfd).
	if !g.sup.idValid(n.ID) || !directable(theirs, v6) {
		return nil
	}
	fl, err := unix.FcntlInt(uintptr(theirs), unix.F_GETFL, 0)
	if err != nil {
		return nil
	}
	nonblock := fl&unix.O_NONBLOCK != 0
	a, ok := g.ask(dst, v6)
	if !ok || !a.Direct {
		return nil
	}
	defer a.Sock.Close()
	ours := int(a.Sock.Fd())
	g.copyOptions(theirs, ours, v6)
	if v6 && a.To.Addr().Is4() {
		_ = unix.SetsockoptInt(ours, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 0)
	}
	if err := unix.SetNonblock(ours, nonblock); err != nil {
		return nil
	}
	cerr := connectSock(ours, a.To, v6)
	var errno syscall.Errno
	if cerr != nil && !errors.As(cerr, &errno) {
		errno = unix.EIO
	}
	done := sandboxnet.Done{ID: a.ID, Errno: errno}
	if errno != 0 && errno != unix.EINPROGRESS {
		// Refused, unreachable, timed out: the script sees what it would
		// have seen, and its socket stays as it was.
		_ = sandboxnet.SendDone(g.fd, done)
		return &seccompNotifResp{Error: -int32(errno)}
	}
	if sa, err := unix.Getsockname(ours); err == nil {
		done.Local = addrPortOf(sa)
	}
	add := seccompNotifAddfd{ID: n.ID, Flags: unix.SECCOMP_ADDFD_FLAG_SETFD, SrcFD: uint32(ours), NewFD: uint32(fd)}
	if cloexec(pid, fd) {
		add.NewFDFlags = unix.O_CLOEXEC
	}
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(g.sup.fd), unix.SECCOMP_IOCTL_NOTIF_ADDFD, uintptr(unsafe.Pointer(&add))); e != 0 {
		done.Errno = e
		_ = sandboxnet.SendDone(g.fd, done)
		if e == unix.ENOENT {
			return nil // the caller is gone, or was interrupted: it asks again
		}
		g.setUp()
		return respContinue() // nash's socket closes: the call goes on in the sandbox
	}
	_ = sandboxnet.SendDone(g.fd, done)
	return &seccompNotifResp{Error: -int32(errno)}
}

// seccompNotifAddfd is struct seccomp_notif_addfd.
type seccompNotifAddfd struct {
	ID         uint64
	Flags      uint32
	SrcFD      uint32
	NewFD      uint32
	NewFDFlags uint32
}

// directable says the script's socket can be replaced by a fresh one of
// nash's: a TCP socket of the family asked for, not bound, not connected,
// not tied to a device.
func directable(fd int, v6 bool) bool {
	family := unix.AF_INET
	if v6 {
		family = unix.AF_INET6
	}
	if d, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DOMAIN); err != nil || d != family {
		return false
	}
	if t, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE); err != nil || t != unix.SOCK_STREAM {
		return false
	}
	if p, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_PROTOCOL); err != nil || p != unix.IPPROTO_TCP {
		return false
	}
	if i, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_BINDTOIFINDEX); err != nil || i != 0 {
		return false
	}
	sa, err := unix.Getsockname(fd)
	if err != nil || addrPortOf(sa).Port() != 0 {
		return false
	}
	_, err = unix.Getpeername(fd)
	return errors.Is(err, unix.ENOTCONN)
}

func addrPortOf(sa unix.Sockaddr) netip.AddrPort {
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		return netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port))
	case *unix.SockaddrInet6:
		return netip.AddrPortFrom(netip.AddrFrom16(a.Addr).Unmap(), uint16(a.Port))
	}
	return netip.AddrPort{}
}

// connectSock connects fd to to as the script's connect would: it returns
// EINPROGRESS for a non-blocking socket still connecting. A blocking
// connect interrupted here is waited out.
func connectSock(fd int, to netip.AddrPort, v6 bool) error {
	var sa unix.Sockaddr
	if v6 {
		sa = &unix.SockaddrInet6{Addr: to.Addr().As16(), Port: int(to.Port())}
	} else {
		if !to.Addr().Is4() {
			return unix.EAFNOSUPPORT
		}
		sa = &unix.SockaddrInet4{Addr: to.Addr().As4(), Port: int(to.Port())}
	}
	err := unix.Connect(fd, sa)
	if !errors.Is(err, unix.EINTR) {
		return err
	}
	for {
		pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
		if _, err := unix.Poll(pfd, -1); errors.Is(err, unix.EINTR) {
			continue
		} else if err != nil {
			return err
		}
		e, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_ERROR)
		if err != nil {
			return err
		}
		if e != 0 {
			return syscall.Errno(e)
		}
		return nil
	}
}

// cloexec reports whether the caller's descriptor fd is close-on-exec.
func cloexec(pid, fd int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/fdinfo/" + strconv.Itoa(fd))
	if err != nil {
		return false
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "flags:"); ok {
			f, err := strconv.ParseUint(strings.TrimSpace(v), 8, 64)
			return err == nil && f&unix.O_CLOEXEC != 0
		}
	}
	return false
}

// sockOpt is a socket option the script may have set before connecting.
type sockOpt struct {
	level, name int
	kind        optKind
	family      int // 0: any; else only sockets of that family
}

type optKind int

const (
	optInt optKind = iota
	optBuf         // a buffer size: the kernel reports twice what was set
	optTimeval
	optLinger
	optString
)

// sockOpts are the options copied to nash's socket when the script's
// value differs from a fresh socket's (so defaults, such as buffer sizes
// the kernel tunes, stay the kernel's).
var sockOpts = []sockOpt{
	{unix.SOL_SOCKET, unix.SO_KEEPALIVE, optInt, 0},
	{unix.SOL_SOCKET, unix.SO_REUSEADDR, optInt, 0},
	{unix.SOL_SOCKET, unix.SO_REUSEPORT, optInt, 0},
	{unix.SOL_SOCKET, unix.SO_PRIORITY, optInt, 0},
	{unix.SOL_SOCKET, unix.SO_OOBINLINE, optInt, 0},
	{unix.SOL_SOCKET, unix.SO_RCVLOWAT, optInt, 0},
	{unix.SOL_SOCKET, unix.SO_ZEROCOPY, optInt, 0},
	{unix.SOL_SOCKET, unix.SO_TIMESTAMP, optInt, 0},
	{unix.SOL_SOCKET, unix.SO_RCVBUF, optBuf, 0},
	{unix.SOL_SOCKET, unix.SO_SNDBUF, optBuf, 0},
	{unix.SOL_SOCKET, unix.SO_RCVTIMEO, optTimeval, 0},
	{unix.SOL_SOCKET, unix.SO_SNDTIMEO, optTimeval, 0},
	{unix.SOL_SOCKET, unix.SO_LINGER, optLinger, 0},
	{unix.IPPROTO_TCP, unix.TCP_NODELAY, optInt, 0},
	{unix.IPPROTO_TCP, unix.TCP_MAXSEG, optInt, 0},
	{unix.IPPROTO_TCP, unix.TCP_CORK, optInt, 0},
	{unix.IPPROTO_TCP, unix.TCP_KEEPIDLE, optInt, 0},
	{unix.IPPROTO_TCP, unix.TCP_KEEPINTVL, optInt, 0},
	{unix.IPPROTO_TCP, unix.TCP_KEEPCNT, optInt, 0},
	{unix.IPPROTO_TCP, unix.TCP_SYNCNT, optInt, 0},
	{unix.IPPROTO_TCP, unix.TCP_LINGER2, optInt, 0},
	{unix.IPPROTO_TCP, unix.TCP_WINDOW_CLAMP, optInt, 0},
	{unix.IPPROTO_TCP, unix.TCP_USER_TIMEOUT, optInt, 0},
	{unix.IPPROTO_TCP, unix.TCP_NOTSENT_LOWAT, optInt, 0},
	{unix.IPPROTO_TCP, unix.TCP_FASTOPEN_CONNECT, optInt, 0},
	{unix.IPPROTO_TCP, unix.TCP_CONGESTION, optString, 0},
	{unix.IPPROTO_IP, unix.IP_TOS, optInt, unix.AF_INET},
	{unix.IPPROTO_IP, unix.IP_TTL, optInt, unix.AF_INET},
	{unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, optInt, unix.AF_INET6},
	{unix.IPPROTO_IPV6, unix.IPV6_TCLASS, optInt, unix.AF_INET6},
	{unix.IPPROTO_IPV6, unix.IPV6_UNICAST_HOPS, optInt, unix.AF_INET6},
}

// template is a fresh TCP socket of the sandbox's namespace (whose
// defaults the script's socket started from), made once per family.
func (g *netGate) template(v6 bool) int {
	i, family := 0, unix.AF_INET
	if v6 {
		i, family = 1, unix.AF_INET6
	}
	g.templMu.Lock()
	defer g.templMu.Unlock()
	if g.templ[i] < 0 {
		if fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0); err == nil {
			g.templ[i] = fd
		}
	}
	return g.templ[i]
}

// copyOptions sets on ours every option the script set on theirs.
func (g *netGate) copyOptions(theirs, ours int, v6 bool) {
	fresh := g.template(v6)
	family := unix.AF_INET
	if v6 {
		family = unix.AF_INET6
	}
	for _, o := range sockOpts {
		if o.family != 0 && o.family != family {
			continue
		}
		switch o.kind {
		case optInt, optBuf:
			v, err := unix.GetsockoptInt(theirs, o.level, o.name)
			if err != nil {
				continue
			}
			if d, err := unix.GetsockoptInt(fresh, o.level, o.name); fresh >= 0 && err == nil && d == v {
				continue
			}
			if o.kind == optBuf {
				v /= 2
			}
			_ = unix.SetsockoptInt(ours, o.level, o.name, v)
		case optTimeval:
			v, err := unix.GetsockoptTimeval(theirs, o.level, o.name)
			if err != nil || (v.Sec == 0 && v.Usec == 0) {
				continue
			}
			_ = unix.SetsockoptTimeval(ours, o.level, o.name, v)
		case optLinger:
			v, err := unix.GetsockoptLinger(theirs, o.level, o.name)
			if err != nil || v.Onoff == 0 {
				continue
			}
			_ = unix.SetsockoptLinger(ours, o.level, o.name, v)
		case optString:
			v, err := unix.GetsockoptString(theirs, o.level, o.name)
			if err != nil {
				continue
			}
			if d, err := unix.GetsockoptString(fresh, o.level, o.name); fresh >= 0 && err == nil && d == v {
				continue
			}
			_ = unix.SetsockoptString(ours, o.level, o.name, v)
		}
	}
}
