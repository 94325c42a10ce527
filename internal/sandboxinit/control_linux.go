package sandboxinit

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// Control is one end of the control socket between nash and the init: a
// SOCK_SEQPACKET pair, so every message arrives whole, with the
// descriptors attached to it. Both sides use it.
type Control struct {
	fd  int
	buf []byte // Recv's, allocated on first use
}

// NewControlPair makes the control socket; nash keeps the first end and
// gives the init the second as its fd 4. Both are close-on-exec.
func NewControlPair() (nash, init int, err error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, -1, fmt.Errorf("control socket: %w", err)
	}
	return fds[0], fds[1], nil
}

// NewControl wraps a control socket's descriptor.
func NewControl(fd int) *Control { return &Control{fd: fd} }

// Fd is the socket's descriptor.
func (c *Control) Fd() int { return c.fd }

// Close closes the socket.
func (c *Control) Close() error { return unix.Close(c.fd) }

// Send sends one message of kind with body and, when fd >= 0, fd attached.
func (c *Control) Send(kind byte, body []byte, fd int) error {
	msg := append([]byte{kind}, body...)
	var oob []byte
	if fd >= 0 {
		oob = unix.UnixRights(fd)
	}
	for {
		err := unix.Sendmsg(c.fd, msg, oob, nil, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err
	}
}

// maxMessage bounds a message: more than a unix socket's send buffer
// lets one message be.
const maxMessage = 256 << 10

// ErrClosed says the other end of the control socket is gone.
var ErrClosed = errors.New("control socket closed")

// Recv waits for the next message and returns its kind, body and the
// descriptor attached to it (-1 when none; it is close-on-exec). The body
// is valid until the next Recv.
func (c *Control) Recv() (kind byte, body []byte, fd int, err error) {
	if c.buf == nil {
		c.buf = make([]byte, maxMessage)
	}
	buf := c.buf
	oob := make([]byte, unix.CmsgSpace(4*4))
	for {
		n, oobn, flags, _, err := unix.Recvmsg(c.fd, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return 0, nil, -1, fmt.Errorf("control socket: %w", err)
		}
		fd = -1
		if oobn > 0 {
			msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
			if err == nil {
				for _, m := range msgs {
					fds, err := unix.ParseUnixRights(&m)
					if err != nil {
						continue
					}
					for _, f := range fds {
						if fd < 0 {
							fd = f
						} else {
							unix.Close(f) // only one is ever sent
						}
					}
				}
			}
		}
		if flags&unix.MSG_TRUNC != 0 {
			if fd >= 0 {
				unix.Close(fd)
			}
			return 0, nil, -1, errors.New("control socket: message too long")
		}
		if n == 0 {
			if fd >= 0 {
				unix.Close(fd)
			}
			return 0, nil, -1, ErrClosed
		}
		return buf[0], buf[1:n], fd, nil
	}
}
