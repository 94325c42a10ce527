package sandbox

import (
	"errors"
	"net"
	"os"
	"time"

	"github.com/nash-shell/nash/internal/sandboxnet"
	"github.com/nash-shell/nash/sandbox/egress"
)

// netRun is the network side of one run: nash's end of the socket over
// which the init asks about connections and hands the sandbox's traffic
// over, and the proxy that serves both.
type netRun struct {
	conn  *os.File
	ended chan struct{} // the init closed its end
	proxy *egress.Proxy
	err   error // set before ended is closed
}

// startNet serves the run's network side in the background: the init's
// questions about direct connections from the start, and the catching
// sockets once the init hands them over (the first time the script sends
// out; a run that never does hands nothing over).
func (s *Sandbox) startNet(conn *os.File) *netRun {
	n := &netRun{conn: conn, ended: make(chan struct{})}
	n.proxy = egress.New(egress.Config{Policy: s.netPolicy, Resolver: s.netResolver, Relay: s.netRelay})
	go n.serve()
	return n
}

func (n *netRun) serve() {
	defer close(n.ended)
	defer n.conn.Close()
	read := sandboxnet.ReadMessage
	for {
		m, err := read(n.conn)
		switch {
		case errors.Is(err, os.ErrDeadlineExceeded):
			// stop: the run is over, and whatever the init sent
			// before its result waits in the socket. Take that, then
			// end, without waiting for the init to exit.
			_ = n.conn.SetReadDeadline(time.Time{})
			read = sandboxnet.ReadMessageNow
			continue
		case errors.Is(err, sandboxnet.ErrNone) || sandboxnet.IsEOF(err):
			return
		case err != nil:
			n.err = errors.Join(n.err, err)
			return
		}
		switch {
		case m.Ask != nil:
			// Answered at once: the script waits in its connect. A name
			// nash must look up first is looked up here, in order.
			a := n.proxy.Direct(*m.Ask)
			if err := sandboxnet.SendAnswer(n.conn, a); err != nil {
				n.err = errors.Join(n.err, err)
			}
			if a.Sock != nil {
				a.Sock.Close()
			}
		case m.Done != nil:
			n.proxy.Connected(*m.Done)
		case m.Setup != nil:
			n.err = errors.Join(n.err, m.Setup)
		case m.Sockets != nil:
			n.proxy.Serve(sockets(m.Sockets, &n.err))
		}
	}
}

// sockets wraps the catching sockets for the proxy.
func sockets(socks []sandboxnet.Socket, errp *error) egress.Sockets {
	var es egress.Sockets
	for _, sk := range socks {
		switch sk.Kind {
		case sandboxnet.TCP:
			l, err := net.FileListener(sk.File)
			if err != nil {
				*errp = errors.Join(*errp, err)
				break
			}
			es.TCP = append(es.TCP, l)
		case sandboxnet.DNS, sandboxnet.UDP:
			pc, err := net.FilePacketConn(sk.File)
			if err != nil {
				*errp = errors.Join(*errp, err)
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
	return es
}

// stop ends the run's network service (the sandbox is gone) and returns
// what it contacted, and why its traffic could not be served, if so.
func (n *netRun) stop() ([]egress.Contact, error) {
	if n == nil {
		return nil, nil
	}
	_ = n.conn.SetReadDeadline(time.Now())
	<-n.ended
	return n.proxy.Stop(), n.err
}

// abandon ends the network side of a run whose init was killed (so the
// reading goroutine sees the socket's end).
func (n *netRun) abandon() {
	if n != nil {
		_, _ = n.stop()
	}
}
