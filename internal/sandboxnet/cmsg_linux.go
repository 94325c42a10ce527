package sandboxnet

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ErrNoDst says a datagram came without the control message that names
// where it was sent.
var ErrNoDst = errors.New("no original destination in the control messages")

// OriginalDst reads where a datagram caught by a DNS or UDP socket was
// sent, from the control messages ReadMsgUDP returned with it. A DNS
// socket's datagrams were sent to DNSPort.
func OriginalDst(oob []byte) (netip.AddrPort, error) {
	cms, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return netip.AddrPort{}, err
	}
	for _, cm := range cms {
		d := cm.Data
		switch {
		case cm.Header.Level == unix.SOL_IP && cm.Header.Type == unix.IP_ORIGDSTADDR && len(d) >= 8:
			return netip.AddrPortFrom(netip.AddrFrom4([4]byte(d[4:8])), binary.BigEndian.Uint16(d[2:4])), nil
		case cm.Header.Level == unix.SOL_IPV6 && cm.Header.Type == unix.IPV6_ORIGDSTADDR && len(d) >= 24:
			return netip.AddrPortFrom(netip.AddrFrom16([16]byte(d[8:24])), binary.BigEndian.Uint16(d[2:4])), nil
		case cm.Header.Level == unix.SOL_IP && cm.Header.Type == unix.IP_PKTINFO && len(d) >= 12:
			return netip.AddrPortFrom(netip.AddrFrom4([4]byte(d[8:12])), DNSPort), nil
		case cm.Header.Level == unix.SOL_IPV6 && cm.Header.Type == unix.IPV6_PKTINFO && len(d) >= 16:
			return netip.AddrPortFrom(netip.AddrFrom16([16]byte(d[0:16])), DNSPort), nil
		}
	}
	return netip.AddrPort{}, ErrNoDst
}

// ReplyFrom is the control message that makes a reply on a DNS socket
// leave from addr, the address the query was sent to, as a resolver's
// answer would. It is nil for an invalid address.
func ReplyFrom(addr netip.Addr) []byte {
	switch {
	case addr.Is4():
		b := make([]byte, unix.CmsgSpace(unix.SizeofInet4Pktinfo))
		h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
		h.Level, h.Type = unix.SOL_IP, unix.IP_PKTINFO
		h.SetLen(unix.CmsgLen(unix.SizeofInet4Pktinfo))
		info := (*unix.Inet4Pktinfo)(unsafe.Pointer(&b[unix.CmsgLen(0)]))
		info.Spec_dst = addr.As4()
		return b
	case addr.Is6():
		b := make([]byte, unix.CmsgSpace(unix.SizeofInet6Pktinfo))
		h := (*unix.Cmsghdr)(unsafe.Pointer(&b[0]))
		h.Level, h.Type = unix.SOL_IPV6, unix.IPV6_PKTINFO
		h.SetLen(unix.CmsgLen(unix.SizeofInet6Pktinfo))
		info := (*unix.Inet6Pktinfo)(unsafe.Pointer(&b[unix.CmsgLen(0)]))
		info.Addr = addr.As16()
		return b
	}
	return nil
}

// Readable reports whether any of the sockets has something waiting to be
// read (a datagram, or a connection to accept), without blocking.
func Readable(socks ...syscall.Conn) bool {
	fds := make([]unix.PollFd, 0, len(socks))
	var keep []syscall.RawConn // the descriptors stay open while polled
	for _, s := range socks {
		rc, err := s.SyscallConn()
		if err != nil {
			continue
		}
		_ = rc.Control(func(fd uintptr) {
			fds = append(fds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
		})
		keep = append(keep, rc)
	}
	n, err := unix.Poll(fds, 0)
	_ = keep
	return err == nil && n > 0
}
