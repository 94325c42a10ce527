package sandbox

import (
	"errors"
	"net"
	"os"

	"github.com/nash-shell/nash/internal/sandboxnet"
	"github.com/nash-shell/nash/sandbox/egress"
)

// netRun is the network side of one run: nash's end of the socket over
// which the init hands the sandbox's traffic over, and the proxy that
// serves it.
type netRun struct {
	conn    *os.File
	started chan struct{}
	proxy   *egress.Proxy
	err     error
}

// startNet serves the run's network once the init has handed its sockets
// over, in the background.
func (s *Sandbox) startNet(conn *os.File) *netRun {
	n := &netRun{conn: conn, started: make(chan struct{})}
	cfg := egress.Config{Policy: s.netPolicy, Resolver: s.netResolver}
	go func() {
		defer close(n.started)
		defer conn.Close()
		socks, err := sandboxnet.Receive(conn)
		if err != nil {
			n.err = err
			return
		}
		var es egress.Sockets
		for _, sk := range socks {
			switch sk.Kind {
			case sandboxnet.TCP:
				l, err := net.FileListener(sk.File)
				if err != nil {
					n.err = errors.Join(n.err, err)
					break
				}
				es.TCP = append(es.TCP, l)
			case sandboxnet.DNS, sandboxnet.UDP:
				pc, err := net.FilePacketConn(sk.File)
				if err != nil {
					n.err = errors.Join(n.err, err)
					break
				}
				u, _ := pc.(*net.UDPConn)
				if sk.Kind == sandboxnet.DNS {
					es.DNS = append(es.DNS, u)
				} else {
					es.UDP = append(es.UDP, u)
				}
			}
			sk.File.Close() // the listener holds its own descriptor
		}
		n.proxy = egress.Start(cfg, es)
	}()
	return n
}

// stop ends the run's network service (the sandbox is gone) and returns
// what it contacted, and why its traffic could not be served, if so.
func (n *netRun) stop() ([]egress.Contact, error) {
	if n == nil {
		return nil, nil
	}
	<-n.started
	if n.proxy == nil {
		return nil, n.err
	}
	return n.proxy.Stop(), n.err
}

// abandon ends the network side of a run whose init was killed (so the
// receiving goroutine sees the socket's end).
func (n *netRun) abandon() {
	if n != nil {
		_, _ = n.stop()
	}
}
