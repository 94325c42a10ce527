package egress

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nash-shell/nash/internal/sandboxnet"
)

// Resolver looks names up for nash; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Dialer dials allowed destinations from nash's own network namespace;
// *net.Dialer is one.
type Dialer interface {
	DialContext(ctx context.Context, network, address string) (net.Conn, error)
}

// Config is what a Proxy needs besides its sockets.
type Config struct {
	Policy Policy
	// Resolver looks allowed names up (default net.DefaultResolver).
	Resolver Resolver
	// Dialer reaches allowed destinations (default a net.Dialer with a
	// 10-second timeout).
	Dialer Dialer
	// PeekTimeout bounds the wait for the first bytes of a connection
	// that is not allowed, which may name its destination (as an HTTP
	// proxy's client does) or say what it is (default 500ms).
	PeekTimeout time.Duration
	// Relay keeps every allowed connection on nash's relay, which reads
	// its first bytes (TLS server name, HTTP Host, credentials in plain
	// HTTP), instead of handing the script a direct socket (Direct).
	Relay bool
	// DstOf, for tests on ordinary sockets, gives a connection's
	// original destination. By default it is the connection's local
	// address, which tproxy keeps as the address the script dialled.
	DstOf func(net.Conn) netip.AddrPort
}

// Sockets are the sandbox's catching sockets (see internal/sandboxnet), as
// nash holds them.
type Sockets struct {
	TCP []net.Listener // every TCP connection
	DNS []*net.UDPConn // DNS queries, to any address
	UDP []*net.UDPConn // every other datagram
}

// Proxy serves one run's network attempts.
type Proxy struct {
	cfg    Config
	socks  Sockets
	ctx    context.Context
	cancel context.CancelFunc
	rec    recorder
	wg     sync.WaitGroup

	mu       sync.Mutex
	fakes    fakes
	resolved map[string][]netip.Addr
	conns    map[net.Conn]struct{}
	stopped  bool

	dir directState
}

// Start serves the sockets until Stop.
func Start(cfg Config, socks Sockets) *Proxy {
	p := New(cfg)
	p.Serve(socks)
	return p
}

// New returns a proxy with no sockets yet: it answers Direct until the
// sandbox hands its catching sockets over (Serve).
func New(cfg Config) *Proxy {
	if cfg.Resolver == nil {
		cfg.Resolver = net.DefaultResolver
	}
	if cfg.Dialer == nil {
		cfg.Dialer = &net.Dialer{Timeout: 10 * time.Second}
	}
	if cfg.PeekTimeout == 0 {
		cfg.PeekTimeout = 500 * time.Millisecond
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Proxy{cfg: cfg, ctx: ctx, cancel: cancel, resolved: map[string][]netip.Addr{}, conns: map[net.Conn]struct{}{}}
}

// Serve serves the sandbox's catching sockets until Stop; it is called
// once, or not at all (the run sent nothing out).
func (p *Proxy) Serve(socks Sockets) {
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		closeSockets(socks)
		return
	}
	p.socks = socks
	p.mu.Unlock()
	for _, l := range socks.TCP {
		p.wg.Add(1)
		go p.acceptLoop(l)
	}
	for _, u := range socks.DNS {
		p.wg.Add(1)
		go p.dnsLoop(u)
	}
	for _, u := range socks.UDP {
		p.wg.Add(1)
		go p.udpLoop(u)
	}
}

func closeSockets(socks Sockets) {
	for _, l := range socks.TCP {
		l.Close()
	}
	for _, u := range append(append([]*net.UDPConn(nil), socks.DNS...), socks.UDP...) {
		u.Close()
	}
}

// Stop closes the sockets and every connection still open (the sandbox is
// gone by then), waits for the relays to end and returns what was
// contacted, in the order first tried.
func (p *Proxy) Stop() []Contact {
	// What arrived just before the sandbox ended and is not taken yet is
	// taken first: every attempt is recorded.
	socks := p.conns4Poll()
	for end := time.Now().Add(time.Second); sandboxnet.Readable(socks...) && time.Now().Before(end); {
		time.Sleep(time.Millisecond)
	}
	p.cancel()
	p.mu.Lock()
	closeSockets(p.socks)
	p.stopped = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	p.stopDirect()
	return p.rec.contacts()
}

// conns4Poll lists the sockets, to see whether anything waits on them.
func (p *Proxy) conns4Poll() []syscall.Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []syscall.Conn
	for _, l := range p.socks.TCP {
		if sc, ok := l.(syscall.Conn); ok {
			out = append(out, sc)
		}
	}
	for _, u := range append(append([]*net.UDPConn(nil), p.socks.DNS...), p.socks.UDP...) {
		out = append(out, u)
	}
	return out
}

// Contacts returns what was contacted so far.
func (p *Proxy) Contacts() []Contact { return p.rec.contacts() }

// track remembers an open connection for Stop; it reports false (and
// closes c) once stopped.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

func (p *Proxy) acceptLoop(l net.Listener) {
	defer p.wg.Done()
	for {
		c, err := l.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return
		}
		if !p.track(c) {
			continue
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			defer p.untrack(c)
			p.serveConn(c)
		}()
	}
}

func (p *Proxy) dstOf(c net.Conn) netip.AddrPort {
	if p.cfg.DstOf != nil {
		return p.cfg.DstOf(c)
	}
	if a, ok := c.LocalAddr().(*net.TCPAddr); ok {
		ap := a.AddrPort()
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
	}
	return netip.AddrPort{}
}

// fakeName is the name a stand-in address was handed out for, or "".
func (p *Proxy) fakeName(a netip.Addr) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fakes.name(a)
}

// dest is a destination as nash decides on it: a name asked for (then
// the address is nash's to find) or an address.
type dest struct {
	name string
	addr netip.Addr
	port uint16
}

func (p *Proxy) serveConn(c net.Conn) {
	dst := p.dstOf(c)
	if dst.Port() == sandboxnet.DNSPort {
		p.serveDNSStream(c)
		return
	}
	d := dest{addr: dst.Addr(), port: dst.Port()}
	if name := p.fakeName(d.addr); name != "" {
		d = dest{name: name, port: d.port}
	}
	if p.cfg.Policy.Allows(d.name, d.addr, d.port) {
		p.relay(c, d, nil, false, nil)
		return
	}
	head := readHead(c, p.cfg.PeekTimeout)
	s := sniff(head)
	if s.http != nil && (s.http.method == "CONNECT" || strings.HasPrefix(strings.ToLower(s.http.target), "http://")) {
		if d.name != "" {
			p.rec.proxyHop(d.name)
		}
		p.serveProxyRequest(c, s.http, head)
		return
	}
	ct := p.rec.attempt(d.name, d.addr, d.port, ProtoTCP, false)
	p.rec.update(ct, func(ct *Contact) { noteSniffed(ct, s) })
	reset(c)
}

// reset closes c with a reset, as a refused connection ends.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	c.Close()
}

func noteSniffed(ct *Contact, s sniffed) {
	if s.tls {
		ct.TLS = true
		if s.sni != "" {
			ct.SNI = s.sni
		}
	}
	if s.http != nil {
		if s.http.host != "" {
			ct.HTTPHost = s.http.host
		}
		for _, w := range s.http.credentials {
			addCredential(ct, w)
		}
	}
}

// readHead reads a connection's first bytes until they say what they are
// (headDone), the connection ends, or the timeout passes (0: none).
func readHead(c net.Conn, timeout time.Duration) []byte {
	if timeout > 0 {
		_ = c.SetReadDeadline(time.Now().Add(timeout))
		defer c.SetReadDeadline(time.Time{})
	}
	buf := make([]byte, 0, 4096)
	for !headDone(buf) {
		if len(buf) == cap(buf) {
			buf = append(buf, make([]byte, len(buf))...)[:len(buf)]
		}
		n, err := c.Read(buf[len(buf):min(cap(buf), headLimit)])
		buf = buf[:len(buf)+n]
		if err != nil {
			break
		}
	}
	return buf
}

// serveProxyRequest serves a connection whose client took the destination
// for an HTTP proxy: the destination is the one in its request.
func (p *Proxy) serveProxyRequest(c net.Conn, h *httpHead, head []byte) {
	var host string
	var port uint16
	if h.method == "CONNECT" {
		hp := h.target
		hs, ps, err := net.SplitHostPort(hp)
		n, perr := strconv.ParseUint(ps, 10, 16)
		if err != nil || perr != nil {
			_, _ = io.WriteString(c, "HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n")
			return
		}
		host, port = hs, uint16(n)
	} else {
		u, err := url.Parse(h.target)
		if err != nil || u.Hostname() == "" {
			_, _ = io.WriteString(c, "HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n")
			return
		}
		host, port = u.Hostname(), 80
		if u.Port() != "" {
			n, err := strconv.ParseUint(u.Port(), 10, 16)
			if err != nil {
				_, _ = io.WriteString(c, "HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n")
				return
			}
			port = uint16(n)
		}
	}
	d := dest{port: port}
	if a, err := netip.ParseAddr(host); err == nil {
		d.addr = a.Unmap()
	} else {
		d.name = strings.TrimSuffix(strings.ToLower(host), ".")
	}
	if !p.cfg.Policy.Allows(d.name, d.addr, d.port) {
		ct := p.rec.attempt(d.name, d.addr, d.port, ProtoTCP, false)
		p.rec.update(ct, func(ct *Contact) {
			ct.ViaProxy = true
			if h.method != "CONNECT" {
				noteSniffed(ct, sniffed{http: h})
			}
		})
		_, _ = io.WriteString(c, "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nConnection: close\r\nContent-Length: 29\r\n\r\nblocked by nash: not allowed\n")
		return
	}
	if h.method == "CONNECT" {
		rest := head
		if h.end > 0 {
			rest = head[h.end:]
		}
		p.relay(c, d, rest, true, []byte("HTTP/1.1 200 Connection established\r\n\r\n"))
		return
	}
	p.relay(c, d, originForm(h, head), true, nil)
}

// originForm rewrites a proxy request's head for the origin server: the
// path alone on the request line, and no Proxy-* headers.
func originForm(h *httpHead, head []byte) []byte {
	path := h.target
	if u, err := url.Parse(h.target); err == nil {
		path = u.RequestURI()
	}
	var b strings.Builder
	b.WriteString(h.method + " " + path + " " + h.version + "\r\n")
	for _, l := range h.lines[1:] {
		if k, _, _ := strings.Cut(l, ":"); strings.HasPrefix(strings.ToLower(strings.TrimSpace(k)), "proxy-") {
			continue
		}
		b.WriteString(l + "\r\n")
	}
	b.WriteString("\r\n")
	if h.end > 0 {
		return append([]byte(b.String()), head[h.end:]...)
	}
	return []byte(b.String())
}

// relay connects an allowed destination and copies both ways, counting.
// head, when not nil, is what the client sent already (it goes first);
// reply, when not nil, is written to the client once connected.
func (p *Proxy) relay(c net.Conn, d dest, head []byte, viaProxy bool, reply []byte) {
	up, addr, err := p.dial(d)
	ct := p.rec.attempt(d.name, addr, d.port, ProtoTCP, true)
	p.rec.update(ct, func(ct *Contact) {
		ct.ViaProxy = ct.ViaProxy || viaProxy
		if ct.Addr == "" && addr.IsValid() {
			ct.Addr = addr.String()
		}
		if err != nil {
			ct.Error = err.Error()
		}
	})
	if err != nil {
		if reply != nil {
			_, _ = io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n")
		}
		reset(c)
		return
	}
	if !p.track(up) {
		return
	}
	defer p.untrack(up)
	if reply != nil {
		if _, err := c.Write(reply); err != nil {
			return
		}
	}
	done := make(chan int64, 1)
	go func() {
		// Script to destination: the first bytes are read whole, to see
		// what they are, then the rest is spliced.
		var n int64
		if head == nil || len(head) == 0 {
			head = readHead(c, 0)
		}
		s := sniff(head)
		p.rec.update(ct, func(ct *Contact) { noteSniffed(ct, s) })
		if len(head) > 0 {
			w, _ := up.Write(head)
			n += int64(w)
		}
		m, _ := io.Copy(up, c)
		n += m
		closeWrite(up)
		done <- n
	}()
	received, _ := io.Copy(c, up)
	closeWrite(c)
	sent := <-done
	p.rec.update(ct, func(ct *Contact) {
		ct.Sent += sent
		ct.Received += received
	})
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}

// dial reaches d from nash's namespace: a name is looked up (and each of
// its addresses checked against the deny rules), an address dialled.
func (p *Proxy) dial(d dest) (net.Conn, netip.Addr, error) {
	addrs := []netip.Addr{d.addr}
	if d.name != "" {
		var err error
		if addrs, err = p.lookup(d.name); err != nil {
			return nil, netip.Addr{}, err
		}
	}
	err := fmt.Errorf("every address of %s is denied", d.name)
	for _, a := range addrs {
		if !p.cfg.Policy.Allows(d.name, a, d.port) {
			continue
		}
		ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
		var c net.Conn
		c, err = p.cfg.Dialer.DialContext(ctx, "tcp", netip.AddrPortFrom(a, d.port).String())
		cancel()
		if err == nil {
			return c, a, nil
		}
	}
	return nil, netip.Addr{}, err
}

// lookup resolves an allowed name, once per run.
func (p *Proxy) lookup(name string) ([]netip.Addr, error) {
	p.mu.Lock()
	addrs, ok := p.resolved[name]
	p.mu.Unlock()
	if ok {
		return addrs, nil
	}
	ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
	defer cancel()
	got, err := p.cfg.Resolver.LookupNetIP(ctx, "ip", name)
	if err != nil {
		return nil, fmt.Errorf("look up %s: %w", name, err)
	}
	if len(got) == 0 {
		return nil, fmt.Errorf("look up %s: no addresses", name)
	}
	for i := range got {
		got[i] = got[i].Unmap()
	}
	p.mu.Lock()
	p.resolved[name] = got
	p.mu.Unlock()
	return got, nil
}

func (p *Proxy) dnsLoop(u *net.UDPConn) {
	defer p.wg.Done()
	for {
		b := make([]byte, 1500)
		oob := make([]byte, 256)
		n, oobn, _, from, err := u.ReadMsgUDPAddrPort(b, oob)
		if err != nil {
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			resp := p.answer(b[:n])
			if resp == nil {
				return
			}
			var ctl []byte
			if dst, err := sandboxnet.OriginalDst(oob[:oobn]); err == nil {
				ctl = sandboxnet.ReplyFrom(dst.Addr())
			}
			_, _, _ = u.WriteMsgUDPAddrPort(resp, ctl, from)
		}()
	}
}

// serveDNSStream answers DNS over TCP: queries with a two-byte length.
func (p *Proxy) serveDNSStream(c net.Conn) {
	for {
		var l [2]byte
		if _, err := io.ReadFull(c, l[:]); err != nil {
			return
		}
		q := make([]byte, binary.BigEndian.Uint16(l[:]))
		if _, err := io.ReadFull(c, q); err != nil {
			return
		}
		resp := p.answer(q)
		if resp == nil {
			return
		}
		if _, err := c.Write(append(binary.BigEndian.AppendUint16(nil, uint16(len(resp))), resp...)); err != nil {
			return
		}
	}
}

var (
	localhost4 = netip.MustParseAddr("127.0.0.1")
	localhost6 = netip.IPv6Loopback()
)

// answer answers one DNS query: a name gets a stand-in address, and an
// allowed name is looked up first, so that one that does not exist says
// so. Only A queries get an address; nash dials both families itself.
func (p *Proxy) answer(b []byte) []byte {
	q, err := parseQuery(b)
	if err != nil {
		if q != nil {
			return dnsAnswer(&dnsQuery{id: q.id, flags: q.flags}, rcodeFormErr, nil, 0)
		}
		return nil
	}
	if q.qclass != classIN {
		return dnsAnswer(q, rcodeNotImpl, nil, 0)
	}
	name := q.name
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		switch q.qtype {
		case typeA:
			return dnsAnswer(q, rcodeOK, []netip.Addr{localhost4}, 60)
		case typeAAAA:
			return dnsAnswer(q, rcodeOK, []netip.Addr{localhost6}, 60)
		}
		return dnsAnswer(q, rcodeOK, nil, 60)
	}
	if name == "" {
		return dnsAnswer(q, rcodeOK, nil, 60)
	}
	allowed := p.cfg.Policy.MayResolve(name)
	ct := p.rec.attempt(name, netip.Addr{}, 0, ProtoDNS, allowed)
	if allowed {
		if _, err := p.lookup(name); err != nil {
			p.rec.update(ct, func(ct *Contact) { ct.Error = err.Error() })
			var de *net.DNSError
			if errors.As(err, &de) && de.IsNotFound {
				return dnsAnswer(q, rcodeNXDomain, nil, 60)
			}
			return dnsAnswer(q, rcodeServFail, nil, 0)
		}
	}
	if q.qtype != typeA {
		return dnsAnswer(q, rcodeOK, nil, 60)
	}
	p.mu.Lock()
	a, ok := p.fakes.addr(name)
	p.mu.Unlock()
	if !ok {
		return dnsAnswer(q, rcodeServFail, nil, 0)
	}
	return dnsAnswer(q, rcodeOK, []netip.Addr{a}, 60)
}

func (p *Proxy) udpLoop(u *net.UDPConn) {
	defer p.wg.Done()
	b := make([]byte, 65536)
	oob := make([]byte, 256)
	for {
		n, oobn, _, _, err := u.ReadMsgUDPAddrPort(b, oob)
		if err != nil {
			return
		}
		dst, err := sandboxnet.OriginalDst(oob[:oobn])
		if err != nil {
			continue
		}
		d := dest{addr: dst.Addr().Unmap(), port: dst.Port()}
		if name := p.fakeName(d.addr); name != "" {
			d = dest{name: name, port: d.port}
		}
		// Datagrams are recorded, never relayed: nash relays TCP.
		ct := p.rec.attempt(d.name, d.addr, d.port, ProtoUDP, false)
		wouldAllow := p.cfg.Policy.Allows(d.name, d.addr, d.port)
		p.rec.update(ct, func(ct *Contact) {
			ct.Sent += int64(n)
			if wouldAllow {
				ct.Error = "nash relays TCP only; UDP datagrams are dropped"
			}
		})
	}
}
