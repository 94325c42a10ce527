package sandboxnet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"
)

// msg builds one netlink message: a header, a fixed part and attributes.
type msg struct {
	b []byte
}

func newMsg(typ, flags uint16, fixed []byte) *msg {
	m := &msg{b: make([]byte, unix.NLMSG_HDRLEN, 256)}
	binary.NativeEndian.PutUint16(m.b[4:], typ)
	binary.NativeEndian.PutUint16(m.b[6:], flags)
	m.b = append(m.b, fixed...)
	m.pad()
	return m
}

func (m *msg) pad() {
	for len(m.b)%4 != 0 {
		m.b = append(m.b, 0)
	}
}

// attr appends one attribute.
func (m *msg) attr(typ uint16, data []byte) {
	var h [4]byte
	binary.NativeEndian.PutUint16(h[0:], uint16(4+len(data)))
	binary.NativeEndian.PutUint16(h[2:], typ)
	m.b = append(m.b, h[:]...)
	m.b = append(m.b, data...)
	m.pad()
}

// nest appends a nested attribute whose content fill writes.
func (m *msg) nest(typ uint16, fill func()) {
	start := len(m.b)
	m.b = append(m.b, 0, 0, 0, 0)
	fill()
	binary.NativeEndian.PutUint16(m.b[start:], uint16(len(m.b)-start))
	binary.NativeEndian.PutUint16(m.b[start+2:], typ|unix.NLA_F_NESTED)
}

func (m *msg) str(typ uint16, s string) { m.attr(typ, append([]byte(s), 0)) }

// be32 appends a big-endian u32 attribute, as nftables wants them.
func (m *msg) be32(typ uint16, v uint32) {
	m.attr(typ, binary.BigEndian.AppendUint32(nil, v))
}

func (m *msg) u32(typ uint16, v uint32) {
	m.attr(typ, binary.NativeEndian.AppendUint32(nil, v))
}

// finish sets the length and sequence number.
func (m *msg) finish(seq uint32) []byte {
	binary.NativeEndian.PutUint32(m.b[0:], uint32(len(m.b)))
	binary.NativeEndian.PutUint32(m.b[8:], seq)
	return m.b
}

// talk sends msgs in one datagram on a new netlink socket of the given
// protocol and waits for the acknowledgement of each: every message must
// ask for one (NLM_F_ACK), but batch markers, which get none.
func talk(proto int, msgs []*msg, acks int) error {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, proto)
	if err != nil {
		return fmt.Errorf("netlink socket: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fmt.Errorf("netlink bind: %w", err)
	}
	var buf []byte
	for i, m := range msgs {
		buf = append(buf, m.finish(uint32(i+1))...)
	}
	if err := unix.Sendto(fd, buf, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return fmt.Errorf("netlink send: %w", err)
	}
	rb := make([]byte, 8192)
	for acks > 0 {
		n, _, err := unix.Recvfrom(fd, rb, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("netlink receive: %w", err)
		}
		ms, err := syscall.ParseNetlinkMessage(rb[:n])
		if err != nil {
			return fmt.Errorf("netlink receive: %w", err)
		}
		for _, r := range ms {
			if r.Header.Type != unix.NLMSG_ERROR {
				continue
			}
			if len(r.Data) < 4 {
				return errors.New("netlink: short error message")
			}
			if e := int32(binary.NativeEndian.Uint32(r.Data)); e != 0 {
				return fmt.Errorf("netlink message %d: %w", r.Header.Seq, unix.Errno(-e))
			}
			acks--
		}
	}
	return nil
}
