package egress

import (
	"net/netip"
	"os"
	"sync"

	"github.com/nash-shell/nash/internal/sandboxnet"
	"github.com/nash-shell/nash/internal/sockdiag"
	"golang.org/x/sys/unix"
)

// Direct connections (see internal/sandboxnet's Ask): the init offers nash
// every TCP connect to somewhere outside the sandbox before it goes into
// the catching sockets. For an allowed destination nash answers with a
// fresh socket of its own namespace, which the init connects and gives
// the script in place of its own. The traffic then flows between the
// script and the destination as fast as it would outside the sandbox;
// nash never sees it, so it counts the bytes from the kernel's socket
// statistics (package sockdiag: live sockets, and the statistics the
// kernel broadcasts when one is destroyed). What nash cannot learn that
// way is what a relay reads in the first bytes: TLS server names, HTTP
// Host headers and credentials in plain HTTP. Config.Relay keeps every
// connection on the relay, for a person who wants those.

// directState is the proxy's record of its direct connections.
type directState struct {
	mu      sync.Mutex
	watcher *sockdiag.Watcher
	werr    error
	pending map[uint64]*directConn // by Ask id, until Done
	live    []*directConn          // connected, counted at Stop
}

type directConn struct {
	d      dest
	to     netip.AddrPort
	v6     bool
	cookie uint64
	local  netip.AddrPort
	ct     *Contact
}

// Direct answers the init's Ask: a socket for the init to connect to the
// answer's To when the destination is allowed and nash can count its
// bytes, else no socket (the connection goes on in the sandbox, where the
// catching sockets take it).
func (p *Proxy) Direct(a sandboxnet.Ask) sandboxnet.Answer {
	no := sandboxnet.Answer{ID: a.ID}
	if p.cfg.Relay || a.Dst.Port() == sandboxnet.DNSPort {
		return no
	}
	d := dest{addr: a.Dst.Addr(), port: a.Dst.Port()}
	if name := p.fakeName(d.addr); name != "" {
		d = dest{name: name, port: d.port}
	}
	if !p.cfg.Policy.Allows(d.name, d.addr, d.port) {
		return no
	}
	to, ok := p.directAddr(d, a.V6)
	if !ok {
		return no
	}
	w := p.watcher()
	if w == nil {
		return no
	}
	family := unix.AF_INET
	if a.V6 {
		family = unix.AF_INET6
	}
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return no
	}
	cookie, err := unix.GetsockoptUint64(fd, unix.SOL_SOCKET, unix.SO_COOKIE)
	if err != nil {
		unix.Close(fd)
		return no
	}
	w.Track(cookie)
	p.dir.mu.Lock()
	if p.dir.pending == nil {
		p.dir.pending = map[uint64]*directConn{}
	}
	p.dir.pending[a.ID] = &directConn{d: d, to: to, v6: a.V6, cookie: cookie}
	p.dir.mu.Unlock()
	return sandboxnet.Answer{ID: a.ID, Direct: true, To: to, Sock: os.NewFile(uintptr(fd), "direct")}
}

// directAddr is the address to connect d to from a socket of the
// script's family: the first allowed one.
func (p *Proxy) directAddr(d dest, v6 bool) (netip.AddrPort, bool) {
	addrs := []netip.Addr{d.addr}
	if d.name != "" {
		var err error
		if addrs, err = p.lookup(d.name); err != nil {
			return netip.AddrPort{}, false
		}
	}
	for _, a := range addrs {
		if (a.Is4() || v6) && p.cfg.Policy.Allows(d.name, a, d.port) {
			return netip.AddrPortFrom(a, d.port), true
		}
	}
	return netip.AddrPort{}, false
}

// watcher is the run's byte counter, started with its first direct
// connection; nil when the kernel's socket statistics cannot be had.
func (p *Proxy) watcher() *sockdiag.Watcher {
	p.dir.mu.Lock()
	defer p.dir.mu.Unlock()
	if p.dir.watcher == nil && p.dir.werr == nil {
		p.dir.watcher, p.dir.werr = sockdiag.Watch()
	}
	return p.dir.watcher
}

// Connected records how the init's connect of a direct socket ended.
func (p *Proxy) Connected(done sandboxnet.Done) {
	p.dir.mu.Lock()
	c := p.dir.pending[done.ID]
	delete(p.dir.pending, done.ID)
	p.dir.mu.Unlock()
	if c == nil {
		return
	}
	ct := p.rec.attempt(c.d.name, c.to.Addr(), c.d.port, ProtoTCP, true)
	p.rec.update(ct, func(ct *Contact) {
		ct.Direct = true
		if ct.Addr == "" {
			ct.Addr = c.to.Addr().String()
		}
		if done.Errno != 0 && done.Errno != unix.EINPROGRESS {
			ct.Error = "connect: " + done.Errno.Error()
		}
	})
	if done.Errno != 0 && done.Errno != unix.EINPROGRESS {
		return
	}
	c.local, c.ct = done.Local, ct
	p.dir.mu.Lock()
	p.dir.live = append(p.dir.live, c)
	p.dir.mu.Unlock()
}

// stopDirect adds the direct connections' byte counts to their contacts,
// once the sandbox is gone (its sockets closed, or closing).
func (p *Proxy) stopDirect() {
	p.dir.mu.Lock()
	live, w := p.dir.live, p.dir.watcher
	p.dir.live, p.dir.pending = nil, nil
	p.dir.mu.Unlock()
	if w == nil {
		return
	}
	defer w.Close()
	for _, c := range live {
		family := unix.AF_INET
		if c.v6 {
			family = unix.AF_INET6
		}
		n, ok := w.Counts(c.cookie, family, c.local, c.to)
		p.rec.update(c.ct, func(ct *Contact) {
			if ok {
				ct.Sent += n.Sent
				ct.Received += n.Received
			} else {
				ct.Uncounted = true
			}
		})
	}
}
