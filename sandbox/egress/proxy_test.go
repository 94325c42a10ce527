package egress

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

// mapResolver is a resolver with a fixed table.
type mapResolver map[string]string

func (m mapResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if a, ok := m[host]; ok {
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// testProxy runs a Proxy on ordinary sockets: each listener stands for
// one original destination, given by dsts (by listener address).
type testProxy struct {
	*Proxy
	mu   sync.Mutex
	dsts map[string]netip.AddrPort
	dns  *net.UDPConn
}

func newTestProxy(t *testing.T, pol Policy, n int) (*testProxy, []net.Listener) {
	t.Helper()
	tp := &testProxy{dsts: map[string]netip.AddrPort{}}
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	u, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	tp.dns = u
	cfg := Config{
		Policy:      pol,
		Resolver:    mapResolver{"svc.test": "127.0.0.1"},
		PeekTimeout: 200 * time.Millisecond,
		DstOf: func(c net.Conn) netip.AddrPort {
			tp.mu.Lock()
			defer tp.mu.Unlock()
			return tp.dsts[c.LocalAddr().String()]
		},
	}
	tp.Proxy = Start(cfg, Sockets{TCP: ls, DNS: []*net.UDPConn{u}})
	return tp, ls
}

func (tp *testProxy) stands(l net.Listener, dst netip.AddrPort) {
	tp.mu.Lock()
	tp.dsts[l.Addr().String()] = dst
	tp.mu.Unlock()
}

// resolve asks the proxy's DNS for name's A record.
func (tp *testProxy) resolve(t *testing.T, name string) (int, []netip.Addr) {
	t.Helper()
	c, err := net.Dial("udp", tp.dns.LocalAddr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write(query(42, name, typeA))
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	b := make([]byte, 1500)
	n, err := c.Read(b)
	if err != nil {
		t.Fatal(err)
	}
	return parseAnswer(t, b[:n])
}

func get(t *testing.T, addr, head string) (string, error) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, head)
	b, err := io.ReadAll(c)
	return string(b), err
}

func find(cs []Contact, dest string, proto string) *Contact {
	for i := range cs {
		if cs[i].Destination() == dest && cs[i].Proto == proto {
			return &cs[i]
		}
	}
	return nil
}

func TestProxy(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello %s", r.URL.Path)
	}))
	defer srv.Close()
	up := netip.MustParseAddrPort(srv.Listener.Addr().String())
	pol := Policy{Allow: []Rule{{Prefix: netip.PrefixFrom(up.Addr(), 32), Port: up.Port()}, {Host: "svc.test"}}}
	tp, ls := newTestProxy(t, pol, 4)
	denied := netip.MustParseAddrPort("203.0.113.9:80")
	tp.stands(ls[0], up)
	tp.stands(ls[1], denied)

	// An allowed address: relayed, with its credential noted.
	got, err := get(t, ls[0].Addr().String(), "GET /a HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer s3cret\r\nConnection: close\r\n\r\n")
	if err != nil || !strings.Contains(got, "hello /a") {
		t.Fatalf("allowed: %q, %v", got, err)
	}
	// A denied one: refused, its Host recorded.
	got, _ = get(t, ls[1].Addr().String(), "GET / HTTP/1.1\r\nHost: blocked.example\r\n\r\n")
	if got != "" {
		t.Fatalf("denied destination answered %q", got)
	}
	// A denied name gets a stand-in address, and is never looked up.
	code, addrs := tp.resolve(t, "nope.test")
	if code != rcodeOK || len(addrs) != 1 || !fakeNet.Contains(addrs[0]) {
		t.Fatalf("denied name: code %d, %v", code, addrs)
	}
	tp.stands(ls[2], netip.AddrPortFrom(addrs[0], 443))
	if got, _ := get(t, ls[2].Addr().String(), string(clientHello(t, "nope.test"))); got != "" {
		t.Fatalf("denied name answered %q", got)
	}
	// An allowed name that does not exist says so.
	if code, _ := tp.resolve(t, "gone.svc.test"); code != rcodeNXDomain && code != rcodeOK {
		t.Fatalf("code %d", code)
	}
	// An allowed name is reached at its real address.
	code, addrs = tp.resolve(t, "svc.test")
	if code != rcodeOK || len(addrs) != 1 {
		t.Fatalf("allowed name: %d %v", code, addrs)
	}
	tp.stands(ls[3], netip.AddrPortFrom(addrs[0], up.Port()))
	if got, err := get(t, ls[3].Addr().String(), "GET /b HTTP/1.1\r\nHost: svc.test\r\nConnection: close\r\n\r\n"); !strings.Contains(got, "hello /b") {
		t.Fatalf("allowed name: %q %v", got, err)
	}
	// A client that takes a denied destination for its proxy: the
	// destination is the one it asks for.
	c, err := net.Dial("tcp", ls[1].Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "CONNECT svc.test:%d HTTP/1.1\r\nHost: svc.test\r\n\r\n", up.Port())
	br := bufio.NewReader(c)
	line, _ := br.ReadString('\n')
	if !strings.Contains(line, "200") {
		t.Fatalf("CONNECT to an allowed name: %q", line)
	}
	br.ReadString('\n')
	io.WriteString(c, "GET /c HTTP/1.1\r\nHost: svc.test\r\nConnection: close\r\n\r\n")
	rest, _ := io.ReadAll(br)
	c.Close()
	if !strings.Contains(string(rest), "hello /c") {
		t.Fatalf("through CONNECT: %q", rest)
	}
	got, _ = get(t, ls[1].Addr().String(), "CONNECT other.test:443 HTTP/1.1\r\n\r\n")
	if !strings.Contains(got, "403") {
		t.Fatalf("CONNECT to a denied name: %q", got)
	}

	cs := tp.Stop()
	want := []struct {
		dest, proto string
		allowed     bool
		check       func(c *Contact) string
	}{
		{up.String(), ProtoTCP, true, func(c *Contact) string {
			if c.Sent == 0 || c.Received == 0 || len(c.Credentials) != 1 || c.Credentials[0] != "Authorization header" {
				return fmt.Sprintf("bytes or credentials: %+v", c)
			}
			return ""
		}},
		{denied.String(), ProtoTCP, false, func(c *Contact) string {
			if c.HTTPHost != "blocked.example" || c.Sent != 0 {
				return fmt.Sprintf("%+v", c)
			}
			return ""
		}},
		{"nope.test:443", ProtoTCP, false, func(c *Contact) string {
			if !c.TLS || c.SNI != "nope.test" || c.Addr != "" {
				return fmt.Sprintf("%+v", c)
			}
			return ""
		}},
		{fmt.Sprintf("svc.test:%d", up.Port()), ProtoTCP, true, func(c *Contact) string {
			if c.Addr != "127.0.0.1" || c.Attempts != 2 || c.Received == 0 {
				return fmt.Sprintf("%+v", c)
			}
			return ""
		}},
		{"other.test:443", ProtoTCP, false, func(c *Contact) string {
			if !c.ViaProxy {
				return fmt.Sprintf("%+v", c)
			}
			return ""
		}},
	}
	for _, w := range want {
		c := find(cs, w.dest, w.proto)
		if c == nil {
			t.Errorf("no contact %s %s in %+v", w.proto, w.dest, cs)
			continue
		}
		if c.Allowed != w.allowed {
			t.Errorf("%s: allowed %v, want %v", w.dest, c.Allowed, w.allowed)
		}
		if msg := w.check(c); msg != "" {
			t.Errorf("%s: %s", w.dest, msg)
		}
	}
	if find(cs, "svc.test", ProtoDNS) != nil {
		t.Error("a name connected to is also listed as a lookup")
	}
	if c := find(cs, "gone.svc.test", ProtoDNS); c == nil {
		t.Error("a lookup that went nowhere is not listed")
	}
}

// TestStopTakesWhatWaits: an attempt made just before the run ends (a
// connection not yet accepted, a query not yet read) is still recorded.
func TestStopTakesWhatWaits(t *testing.T) {
	for i := range 20 {
		tp, ls := newTestProxy(t, Policy{}, 1)
		tp.stands(ls[0], netip.MustParseAddrPort("203.0.113.9:80"))
		c, err := net.Dial("tcp", ls[0].Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		u, err := net.Dial("udp", tp.dns.LocalAddr().String())
		if err != nil {
			t.Fatal(err)
		}
		u.Write(query(1, fmt.Sprintf("late%d.test", i), typeA))
		cs := tp.Stop()
		c.Close()
		u.Close()
		if find(cs, "203.0.113.9:80", ProtoTCP) == nil || len(cs) != 2 {
			t.Fatalf("round %d: %+v", i, cs)
		}
	}
}

// TestDNSOverTCP: a query over TCP to port 53, at any address, is answered
// by nash's resolver too.
func TestDNSOverTCP(t *testing.T) {
	tp, ls := newTestProxy(t, Policy{}, 1)
	tp.stands(ls[0], netip.MustParseAddrPort("198.51.100.1:53"))
	c, err := net.Dial("tcp", ls[0].Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	q := query(9, "tcp.example", typeA)
	c.Write(append([]byte{byte(len(q) >> 8), byte(len(q))}, q...))
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var l [2]byte
	if _, err := io.ReadFull(c, l[:]); err != nil {
		t.Fatal(err)
	}
	resp := make([]byte, int(l[0])<<8|int(l[1]))
	if _, err := io.ReadFull(c, resp); err != nil {
		t.Fatal(err)
	}
	c.Close()
	code, addrs := parseAnswer(t, resp)
	if code != rcodeOK || len(addrs) != 1 || !fakeNet.Contains(addrs[0]) {
		t.Fatalf("answer: %d %v", code, addrs)
	}
	if cs := tp.Stop(); find(cs, "tcp.example", ProtoDNS) == nil {
		t.Fatalf("the lookup is not recorded: %+v", cs)
	}
}
