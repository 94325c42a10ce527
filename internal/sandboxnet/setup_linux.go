package sandboxnet

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// Kind names what a handed-over socket catches.
type Kind string

// The kinds of socket, one of each per address family.
const (
	TCP Kind = "tcp" // a transparent listener: every TCP connection
	DNS Kind = "dns" // a UDP socket on port 53 (IP_PKTINFO on): every DNS query
	UDP Kind = "udp" // a transparent UDP socket (original destination on): every other datagram
)

// Socket is one socket handed to nash.
type Socket struct {
	Kind Kind
	IPv6 bool
	File *os.File
}

// DNSPort is where the sandbox's DNS queries are caught, whatever address
// they are sent to.
const DNSPort = 53

// Handover sets the calling process's network namespace up (its loopback
// must be up) and sends the catching sockets over the unix socket fd, or,
// when that fails, the reason. It returns that error too; the sandbox goes
// on either way, with its loopback only.
func Handover(fd int) error {
	socks, err := setup()
	defer func() {
		for _, s := range socks {
			unix.Close(s.fd)
		}
	}()
	if err != nil {
		_ = unix.Sendmsg(fd, []byte("!"+err.Error()), nil, nil, 0)
		return err
	}
	kinds := make([]string, len(socks))
	fds := make([]int, len(socks))
	for i, s := range socks {
		kinds[i] = s.name()
		fds[i] = s.fd
	}
	if err := unix.Sendmsg(fd, []byte(strings.Join(kinds, ",")), unix.UnixRights(fds...), nil, 0); err != nil {
		return fmt.Errorf("hand the network sockets over: %w", err)
	}
	return nil
}

type sock struct {
	kind Kind
	v6   bool
	fd   int
}

func (s sock) name() string {
	if s.v6 {
		return string(s.kind) + "6"
	}
	return string(s.kind) + "4"
}

// setup opens the sockets, then adds the rules and routes that send
// traffic to them.
func setup() ([]sock, error) {
	var socks []sock
	open := func(kind Kind, v6 bool, port uint16) (uint16, error) {
		fd, port, err := openSocket(kind, v6, port)
		if err != nil {
			return 0, err
		}
		socks = append(socks, sock{kind, v6, fd})
		return port, nil
	}
	var p ports
	var err error
	if p.tcp, err = open(TCP, false, 0); err != nil {
		return socks, err
	}
	if p.udp, err = open(UDP, false, 0); err != nil {
		return socks, err
	}
	if _, err = open(DNS, false, DNSPort); err != nil {
		return socks, err
	}
	// IPv6 may be off in this kernel: then the sandbox has none either.
	v6 := true
	if _, err = open(TCP, true, p.tcp); errors.Is(err, unix.EAFNOSUPPORT) || errors.Is(err, unix.EADDRNOTAVAIL) {
		v6 = false
	} else if err != nil {
		return socks, err
	}
	if v6 {
		if _, err = open(UDP, true, p.udp); err != nil {
			return socks, err
		}
		if _, err = open(DNS, true, DNSPort); err != nil {
			return socks, err
		}
	}
	// The rules first: where they cannot be had, no route makes other
	// addresses local, and the sandbox is as it was, loopback only.
	if err := addRules(p); err != nil {
		return socks, err
	}
	if err := addRoutes(v6); err != nil {
		return socks, err
	}
	return socks, nil
}

// openSocket opens one catching socket on port (0: any) and returns it
// with its port.
func openSocket(kind Kind, v6 bool, bindPort uint16) (fd int, port uint16, err error) {
	family, level := unix.AF_INET, unix.SOL_IP
	if v6 {
		family, level = unix.AF_INET6, unix.SOL_IPV6
	}
	typ := unix.SOCK_DGRAM
	if kind == TCP {
		typ = unix.SOCK_STREAM
	}
	fd, err = unix.Socket(family, typ|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, 0, fmt.Errorf("open %s socket: %w", kind, err)
	}
	fail := func(what string, err error) (int, uint16, error) {
		unix.Close(fd)
		return -1, 0, fmt.Errorf("%s socket: %s: %w", kind, what, err)
	}
	type opt struct{ level, name int }
	var opts []opt
	if v6 {
		opts = append(opts, opt{unix.SOL_IPV6, unix.IPV6_V6ONLY})
	}
	switch {
	case kind == TCP && v6:
		opts = append(opts, opt{level, unix.IPV6_TRANSPARENT})
	case kind == TCP:
		opts = append(opts, opt{level, unix.IP_TRANSPARENT})
	case kind == DNS && v6:
		opts = append(opts, opt{level, unix.IPV6_RECVPKTINFO})
	case kind == DNS:
		opts = append(opts, opt{level, unix.IP_PKTINFO})
	case v6:
		opts = append(opts, opt{level, unix.IPV6_TRANSPARENT}, opt{level, unix.IPV6_RECVORIGDSTADDR})
	default:
		opts = append(opts, opt{level, unix.IP_TRANSPARENT}, opt{level, unix.IP_RECVORIGDSTADDR})
	}
	for _, o := range opts {
		if err := unix.SetsockoptInt(fd, o.level, o.name, 1); err != nil {
			return fail("set option", err)
		}
	}
	var sa unix.Sockaddr = &unix.SockaddrInet4{Port: int(bindPort)}
	if v6 {
		sa = &unix.SockaddrInet6{Port: int(bindPort)}
	}
	if err := unix.Bind(fd, sa); err != nil {
		return fail("bind", err)
	}
	if kind == TCP {
		if err := unix.Listen(fd, 1024); err != nil {
			return fail("listen", err)
		}
	}
	got, err := unix.Getsockname(fd)
	if err != nil {
		return fail("name", err)
	}
	switch a := got.(type) {
	case *unix.SockaddrInet4:
		port = uint16(a.Port)
	case *unix.SockaddrInet6:
		port = uint16(a.Port)
	}
	return fd, port, nil
}

// Receive reads what Handover sent on the unix socket f: the sockets, or
// the reason the namespace could not be set up (a *SetupError).
func Receive(f *os.File) ([]Socket, error) {
	for {
		m, err := ReadMessage(f)
		switch {
		case IsEOF(err):
			return nil, &SetupError{Reason: "the sandbox init sent nothing"}
		case err != nil:
			return nil, fmt.Errorf("receive the network sockets: %w", err)
		case m.Setup != nil:
			return nil, m.Setup
		case m.Sockets != nil:
			return m.Sockets, nil
		}
	}
}

func closeAll(fds []int) {
	for _, fd := range fds {
		unix.Close(fd)
	}
}

// SetupError says why the sandbox's network namespace could not be made to
// hand its traffic to nash.
type SetupError struct{ Reason string }

func (e *SetupError) Error() string { return "network interception unavailable: " + e.Reason }

// SocketPair returns the two ends of the unix socket Handover and Receive
// speak over: nash keeps the first, the init gets the second.
func SocketPair() (parent, child *os.File, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("socket pair: %w", err)
	}
	if err := unix.SetNonblock(fds[0], true); err != nil {
		closeAll(fds[:])
		return nil, nil, fmt.Errorf("socket pair: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "egress"), os.NewFile(uintptr(fds[1]), "egress-init"), nil
}
