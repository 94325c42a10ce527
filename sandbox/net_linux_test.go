package sandbox

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/nash-shell/nash/sandbox/egress"
	"golang.org/x/sys/unix"
)

// netHelperMain is the test binary as a program a script runs: with
// NASH_TEST_NET=own it serves on the sandbox's loopback and connects to
// itself, which must keep working whatever nash does with the network.
//
// With NASH_TEST_NET=opts ADDR it connects to ADDR as a careful client
// does (options set first, a non-blocking connect, then a poll) and prints
// what its socket then says of itself, and what ADDR answers to a line;
// with NASH_TEST_NET=refused ADDR, how a blocking connect to ADDR fails.
func netHelperMain() int {
	switch os.Getenv("NASH_TEST_NET") {
	case "opts":
		return optsClient(os.Args[1])
	case "escape":
		return escapeClient(os.Args[1], os.Args[2], len(os.Args) > 3)
	case "refused":
		fd, _ := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
		err := unix.Connect(fd, sockaddr4(os.Args[1]))
		fmt.Println("connect:", err)
		return 0
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("listen:", err)
		return 1
	}
	go func() {
		if c, err := l.Accept(); err == nil {
			fmt.Fprintln(c, "own loopback ok")
			c.Close()
		}
	}()
	c, err := net.DialTimeout("tcp", l.Addr().String(), 5*time.Second)
	if err != nil {
		fmt.Println("dial:", err)
		return 1
	}
	line, _ := bufio.NewReader(c).ReadString('\n')
	fmt.Print(line)
	return 0
}

func sockaddr4(hostport string) *unix.SockaddrInet4 {
	ap := netip.MustParseAddrPort(hostport)
	return &unix.SockaddrInet4{Addr: ap.Addr().As4(), Port: int(ap.Port())}
}

// optsClient is NASH_TEST_NET=opts: every line it prints must read the
// same inside the sandbox as outside.
func optsClient(addr string) int {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		fmt.Println("socket:", err)
		return 1
	}
	set := func(level, opt, v int) {
		if err := unix.SetsockoptInt(fd, level, opt, v); err != nil {
			fmt.Println("setsockopt:", err)
		}
	}
	set(unix.SOL_SOCKET, unix.SO_KEEPALIVE, 1)
	set(unix.SOL_SOCKET, unix.SO_RCVBUF, 65536)
	set(unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
	set(unix.IPPROTO_TCP, unix.TCP_KEEPIDLE, 77)
	set(unix.IPPROTO_IP, unix.IP_TOS, 0x10)
	_ = unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &unix.Timeval{Sec: 3})
	err = unix.Connect(fd, sockaddr4(addr))
	if err != nil && err != unix.EINPROGRESS {
		fmt.Println("connect:", err)
		return 1
	}
	pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
	if _, err := unix.Poll(pfd, 10000); err != nil {
		fmt.Println("poll:", err)
	}
	get := func(name string, level, opt int) {
		v, err := unix.GetsockoptInt(fd, level, opt)
		fmt.Printf("%s=%d %v\n", name, v, err)
	}
	get("error", unix.SOL_SOCKET, unix.SO_ERROR)
	get("keepalive", unix.SOL_SOCKET, unix.SO_KEEPALIVE)
	get("rcvbuf", unix.SOL_SOCKET, unix.SO_RCVBUF)
	get("nodelay", unix.IPPROTO_TCP, unix.TCP_NODELAY)
	get("keepidle", unix.IPPROTO_TCP, unix.TCP_KEEPIDLE)
	get("tos", unix.IPPROTO_IP, unix.IP_TOS)
	tv, err := unix.GetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO)
	fmt.Println("sndtimeo", tv.Sec, err)
	fl, _ := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	fdfl, _ := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	fmt.Println("nonblock", fl&unix.O_NONBLOCK != 0, "cloexec", fdfl&unix.FD_CLOEXEC != 0)
	if sa, err := unix.Getpeername(fd); err == nil {
		a := sa.(*unix.SockaddrInet4)
		fmt.Println("peer", netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port)))
	}
	_ = unix.SetNonblock(fd, false)
	f := os.NewFile(uintptr(fd), "conn")
	fmt.Fprintln(f, "ping")
	line, _ := bufio.NewReader(f).ReadString('\n')
	fmt.Print("answer ", line)
	return 0
}

// escapeClient is NASH_TEST_NET=escape ALLOWED DENIED [undumpable]: it
// connects to ALLOWED (a socket nash hands over, of nash's own network
// namespace), disconnects it with AF_UNSPEC, and tries to reach DENIED
// with it, by connect and by a fast-open send. Undumpable, it first makes
// itself so, which hides its memory and descriptors from a same-user
// supervisor without CAP_SYS_PTRACE.
func escapeClient(allowed, denied string, undumpable bool) int {
	if undumpable {
		if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
			fmt.Println("prctl:", err)
			return 1
		}
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	if err != nil {
		fmt.Println("socket:", err)
		return 1
	}
	fmt.Println("allowed:", unix.Connect(fd, sockaddr4(allowed)))
	var unspec [16]byte // struct sockaddr with sa_family AF_UNSPEC
	_, _, e := unix.Syscall(unix.SYS_CONNECT, uintptr(fd), uintptr(unsafe.Pointer(&unspec[0])), uintptr(len(unspec)))
	fmt.Println("disconnect:", e)
	fmt.Println("reconnect:", unix.Connect(fd, sockaddr4(denied)))
	fmt.Println("fastopen:", unix.Sendto(fd, []byte("x"), unix.MSG_FASTOPEN, sockaddr4(denied)))
	fmt.Println("bind:", unix.Bind(fd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}))
	fmt.Println("listen:", unix.Listen(fd, 1))
	// io_uring's connect, bind and listen pass no filter.
	var params [120]byte // struct io_uring_params
	_, _, e = unix.Syscall(unix.SYS_IO_URING_SETUP, 4, uintptr(unsafe.Pointer(&params[0])), 0)
	fmt.Println("io_uring:", e)
	return 0
}

// hostMap is nash's resolver in these tests: names of the test's servers.
type hostMap map[string]string

func (h hostMap) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := h[host]; ok {
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// netServers are servers on the host's loopback: plain HTTP, HTTPS with a
// certificate from a test CA, and plain TCP. Each counts who reached it.
type netServers struct {
	web, secure, tcp string // host:port
	caFile           string
	webHits, secHits atomic.Int32
	tcpHits          atomic.Int32
}

func startServers(t *testing.T) *netServers {
	t.Helper()
	s := &netServers{}
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.webHits.Add(1)
		fmt.Fprintf(w, "web says hello to %s\n", r.URL.Path)
	}))
	t.Cleanup(web.Close)
	s.web = web.Listener.Addr().String()

	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "nash test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	leafKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "secure.nash.test"},
		DNSNames: []string{"secure.nash.test"}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &leafKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	s.caFile = filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(s.caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Dir(s.caFile), 0o755)
	sec := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.secHits.Add(1)
		fmt.Fprintln(w, "secure hello")
	}))
	sec.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{leafDER}, PrivateKey: leafKey}}}
	sec.StartTLS()
	t.Cleanup(sec.Close)
	s.secure = sec.Listener.Addr().String()

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s.tcpHits.Add(1)
			line, _ := bufio.NewReader(c).ReadString('\n')
			fmt.Fprintf(c, "echo %s", line)
			c.Close()
		}
	}()
	s.tcp = l.Addr().String()
	return s
}

func port(hostport string) string {
	_, p, _ := net.SplitHostPort(hostport)
	return p
}

// script reaches the three servers: by name with curl (the names are
// nash's resolver's), the TLS one checking its certificate, and the TCP one
// with bash's own sockets.
func (s *netServers) script() string {
	return fmt.Sprintf(`curl -sS -m 10 -H 'Authorization: Bearer s3cret' http://web.nash.test:%s/hello > web.out; echo "web=$?"
curl -sS -m 10 --cacert %s https://secure.nash.test:%s/ > secure.out; echo "secure=$?"
if exec 3<>/dev/tcp/127.0.0.1/%s; then echo ping >&3; read -t 10 line <&3; fi; echo "tcp=$line" > tcp.out; cat tcp.out
`, port(s.web), s.caFile, port(s.secure), port(s.tcp))
}

var testHosts = hostMap{"web.nash.test": "127.0.0.1", "secure.nash.test": "127.0.0.1"}

func contactOf(t *testing.T, cs []egress.Contact, dest string) egress.Contact {
	t.Helper()
	for _, c := range cs {
		if c.Destination() == dest && c.Proto == egress.ProtoTCP {
			return c
		}
	}
	t.Fatalf("no contact with %s among %+v", dest, cs)
	return egress.Contact{}
}

// TestNetworkDenyRecordAllow runs one script that reaches three servers on
// the host's loopback: by default all three are denied and recorded in the
// one run; allowed two, a second run reaches exactly those two, and its
// transaction keeps the destinations with their byte counts.
func TestNetworkDenyRecordAllow(t *testing.T) {
	need(t, "curl")
	s := startServers(t)
	e := newEnv(t, NetResolver(testHosts))
	p := e.run(s.script())
	out := e.stdout.String()
	if !strings.Contains(out, "web=") || strings.Contains(out, "web=0") || strings.Contains(out, "secure=0") || strings.Contains(out, "tcp=echo") {
		t.Errorf("a denied destination answered:\n%s", out)
	}
	if n := s.webHits.Load() + s.secHits.Load() + s.tcpHits.Load(); n != 0 {
		t.Fatalf("denied servers were reached %d times", n)
	}
	web := contactOf(t, p.Network, "web.nash.test:"+port(s.web))
	sec := contactOf(t, p.Network, "secure.nash.test:"+port(s.secure))
	raw := contactOf(t, p.Network, s.tcp)
	for _, c := range []egress.Contact{web, sec, raw} {
		if c.Allowed || c.Sent != 0 || c.Received != 0 {
			t.Errorf("denied contact %s: %+v", c.Destination(), c)
		}
	}
	if web.HTTPHost != "web.nash.test:"+port(s.web) || len(web.Credentials) != 1 || web.Addr != "" {
		t.Errorf("web contact: %+v (want its Host and credential, and no address: the name was never looked up)", web)
	}
	if !sec.TLS || sec.SNI != "secure.nash.test" {
		t.Errorf("TLS contact: %+v", sec)
	}
	if err := e.sb.Abort(p.ID); err != nil {
		t.Fatal(err)
	}

	// Allow two of them: exactly those are reached.
	allow, err := egress.ParseRules(web.Destination() + "," + raw.Destination())
	if err != nil {
		t.Fatal(err)
	}
	e2 := newEnv(t, NetResolver(testHosts), NetPolicy(egress.Policy{Allow: allow}))
	p2 := e2.run(s.script())
	out = e2.stdout.String()
	if !strings.Contains(out, "web=0") || strings.Contains(out, "secure=0") || !strings.Contains(out, "tcp=echo ping") {
		t.Errorf("want web and tcp reached, secure not:\n%s\nstderr:\n%s", out, e2.stderr.String())
	}
	if s.webHits.Load() != 1 || s.tcpHits.Load() != 1 || s.secHits.Load() != 0 {
		t.Errorf("hits: web %d tcp %d secure %d, want 1 1 0", s.webHits.Load(), s.tcpHits.Load(), s.secHits.Load())
	}
	tx := e2.commit(p2)
	got, _, err := e2.sb.Show(tx.ID)
	if err != nil {
		t.Fatal(err)
	}
	web = contactOf(t, got.Network, web.Destination())
	raw = contactOf(t, got.Network, raw.Destination())
	sec = contactOf(t, got.Network, sec.Destination())
	// Allowed connections are handed to the script directly: their
	// bytes are the kernel's count, their contents unread.
	if !web.Allowed || !web.Direct || web.Sent == 0 || web.Received == 0 || web.Addr != "127.0.0.1" || len(web.Credentials) != 0 {
		t.Errorf("web, allowed: %+v", web)
	}
	if !raw.Allowed || !raw.Direct || raw.Sent != int64(len("ping\n")) || !directReceived(raw, len("echo ping\n")) {
		t.Errorf("raw tcp, allowed: %+v", raw)
	}
	if sec.Allowed || sec.Received != 0 {
		t.Errorf("secure, still denied: %+v", sec)
	}

	// On the relay (NetRelay), nash reads the first bytes: the allowed
	// request's credential is named, and the counts are the relay's.
	e3 := newEnv(t, NetResolver(testHosts), NetPolicy(egress.Policy{Allow: allow}), NetRelay(true))
	p3 := e3.run(s.script())
	if out := e3.stdout.String(); !strings.Contains(out, "web=0") || !strings.Contains(out, "tcp=echo ping") {
		t.Errorf("relayed: want web and tcp reached:\n%s", out)
	}
	web = contactOf(t, p3.Network, web.Destination())
	raw = contactOf(t, p3.Network, raw.Destination())
	if web.Direct || !web.Allowed || len(web.Credentials) != 1 || web.Sent == 0 || web.Received == 0 {
		t.Errorf("web, relayed: %+v", web)
	}
	if raw.Direct || raw.Sent != int64(len("ping\n")) || raw.Received != int64(len("echo ping\n")) {
		t.Errorf("raw tcp, relayed: %+v", raw)
	}
	if s.webHits.Load() != 2 || s.tcpHits.Load() != 2 || s.secHits.Load() != 0 {
		t.Errorf("hits after the relayed run: web %d tcp %d secure %d, want 2 2 0", s.webHits.Load(), s.tcpHits.Load(), s.secHits.Load())
	}
}

// TestNetworkOwnLoopback checks that the sandbox's own loopback services
// stay its own while nash catches the rest.
func TestNetworkOwnLoopback(t *testing.T) {
	e := newEnv(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p := e.run("NASH_TEST_NET=own " + shellQuote(self))
	if !strings.Contains(e.stdout.String(), "own loopback ok") {
		t.Fatalf("own loopback: %q %q", e.stdout.String(), e.stderr.String())
	}
	if len(p.Network) != 0 {
		t.Errorf("the sandbox's own connection was recorded: %+v", p.Network)
	}
}

// TestNetworkHostLoopbackAllowed reaches a service on the host's loopback
// that is allowed by address and port, as --net=127.0.0.1:11434 would.
func TestNetworkHostLoopbackAllowed(t *testing.T) {
	need(t, "curl")
	s := startServers(t)
	allow, _ := egress.ParseRules("127.0.0.1:" + port(s.web))
	e := newEnv(t, NetPolicy(egress.Policy{Allow: allow}))
	e.run("curl -sS -m 10 http://127.0.0.1:" + port(s.web) + "/x; curl -sS -m 10 http://127.0.0.1:" + port(s.secure) + "/ || echo refused")
	if out := e.stdout.String(); !strings.Contains(out, "web says hello to /x") || !strings.Contains(out, "refused") {
		t.Fatalf("got %q", out)
	}
}

// need fails the test when a program it drives is missing: the machines
// nash is tested on have it.
func need(t *testing.T, prog string) {
	t.Helper()
	if _, err := exec.LookPath(prog); err != nil {
		t.Fatalf("%s is needed by this test: %v", prog, err)
	}
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// TestNetworkScriptCannotUndoRules: the script (even as root) holds no
// CAP_NET_ADMIN, so it cannot remove the rules or routes that hand its
// network attempts to nash.
func TestNetworkScriptCannotUndoRules(t *testing.T) {
	e := newEnv(t)
	e.run("grep -E '^Cap(Eff|Bnd):' /proc/self/status")
	const netAdmin = 12
	for _, line := range strings.Split(strings.TrimSpace(e.stdout.String()), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			t.Fatalf("unexpected status line %q", line)
		}
		caps, err := strconv.ParseUint(f[1], 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		if caps&(1<<netAdmin) != 0 {
			t.Errorf("the script holds CAP_NET_ADMIN: %s", line)
		}
	}
}

// TestNetworkProxyClients: a client that honours https_proxy asks the
// proxy (here a name nobody serves) for its destination with CONNECT; nash
// takes that destination as the one to decide on, and serves as the proxy.
func TestNetworkProxyClients(t *testing.T) {
	need(t, "curl")
	s := startServers(t)
	allow, _ := egress.ParseRules("secure.nash.test:" + port(s.secure))
	e := newEnv(t, NetResolver(testHosts), NetPolicy(egress.Policy{Allow: allow}))
	p := e.run(fmt.Sprintf(`export https_proxy=http://proxy.corp.test:3128 http_proxy=http://proxy.corp.test:3128
curl -sS -m 10 --cacert %s https://secure.nash.test:%s/; echo "secure=$?"
curl -sS -m 10 http://web.nash.test:%s/; echo "web=$?"`, s.caFile, port(s.secure), port(s.web)))
	out := e.stdout.String()
	if !strings.Contains(out, "secure hello") || !strings.Contains(out, "secure=0") || strings.Contains(out, "web says") {
		t.Fatalf("through the proxy: %s\n%s", out, e.stderr.String())
	}
	sec := contactOf(t, p.Network, "secure.nash.test:"+port(s.secure))
	web := contactOf(t, p.Network, "web.nash.test:"+port(s.web))
	if !sec.Allowed || !sec.ViaProxy || sec.SNI != "secure.nash.test" || sec.Received == 0 {
		t.Errorf("CONNECT to an allowed destination: %+v", sec)
	}
	if web.Allowed || !web.ViaProxy || s.webHits.Load() != 0 {
		t.Errorf("absolute URL to a denied destination: %+v (hits %d)", web, s.webHits.Load())
	}
	for _, c := range p.Network {
		if strings.HasPrefix(c.Destination(), "proxy.corp.test") {
			t.Errorf("the proxy hop is recorded as a destination: %+v", c)
		}
	}
}

// TestNetworkDirectKeepsSocket: an allowed connection is a socket of
// nash's own, connected in the script's place. A client that sets options
// first and connects without blocking sees the same socket inside the
// sandbox as outside: its options, its flags, its peer; a refused connect
// fails the same way. The connection is recorded with its bytes.
func TestNetworkDirectKeepsSocket(t *testing.T) {
	s := startServers(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	native := exec.Command(self, s.tcp)
	native.Env = append(os.Environ(), "NASH_TEST_NET=opts")
	want, err := native.CombinedOutput()
	if err != nil || !strings.Contains(string(want), "answer echo ping") {
		t.Fatalf("native client: %v\n%s", err, want)
	}
	// A port nobody listens on, allowed: refused, as outside.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	allow, _ := egress.ParseRules(s.tcp + "," + closed)
	e := newEnv(t, NetPolicy(egress.Policy{Allow: allow}))
	p := e.run("NASH_TEST_NET=opts " + shellQuote(self) + " " + s.tcp + "; NASH_TEST_NET=refused " + shellQuote(self) + " " + closed)
	got := e.stdout.String()
	if !strings.HasPrefix(got, string(want)) {
		t.Errorf("inside the sandbox the socket reads\n%s\noutside\n%s", got, want)
	}
	if !strings.HasSuffix(got, "connect: connection refused\n") {
		t.Errorf("refused connect inside: %q", got)
	}
	c := contactOf(t, p.Network, s.tcp)
	if !c.Allowed || !c.Direct || c.Sent != int64(len("ping\n")) || !directReceived(c, len("echo ping\n")) {
		t.Errorf("contact: %+v", c)
	}
	r := contactOf(t, p.Network, closed)
	if !r.Direct || !strings.Contains(r.Error, "refused") {
		t.Errorf("refused contact: %+v", r)
	}
}

// directReceived says a direct connection's received count is n, as the
// kernel counts it: the destination's FIN counts as one byte more when it
// came before the script's socket was gone (egress.Contact.Received).
func directReceived(c egress.Contact, n int) bool {
	return c.Received == int64(n) || c.Received == int64(n+1)
}

// TestNetworkSetUpOnFirstUse: nothing of the interception exists in a
// run until the script first sends to an address outside its loopback
// (a run without network use pays nothing for it); from then on every
// attempt is caught. The catching sockets are the sandbox's only ones.
func TestNetworkSetUpOnFirstUse(t *testing.T) {
	e := newEnv(t)
	p := e.run(`count() { cat /proc/net/tcp /proc/net/tcp6 /proc/net/udp /proc/net/udp6 | grep -vc local_address; }
echo "before=$(count)"
(exec 3<>/dev/tcp/192.0.2.1/80) 2>/dev/null
echo "after=$(count)"`)
	out := e.stdout.String()
	if !strings.Contains(out, "before=0\n") || strings.Contains(out, "after=0\n") || !strings.Contains(out, "after=") {
		t.Errorf("want no sockets before the first attempt and the catching ones after:\n%s%s", out, e.stderr.String())
	}
	if c := contactOf(t, p.Network, "192.0.2.1:80"); c.Allowed {
		t.Errorf("contact: %+v", c)
	}
}

// TestNetworkHandedSocketStaysPut: a socket nash handed over lives in
// nash's own network namespace. Disconnected (AF_UNSPEC), it must not
// connect again to a destination nash did not allow, by connect or by a
// fast-open send, nor become a server there (bind, listen), also from a
// process that made itself undumpable: the denied server is never reached,
// and the script is told EACCES. io_uring, whose operations no filter sees,
// is refused.
func TestNetworkHandedSocketStaysPut(t *testing.T) {
	s := startServers(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	allow, _ := egress.ParseRules(s.tcp)
	// The denied destination: a server on the host's loopback, counting.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var hits atomic.Int32
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			hits.Add(1)
			c.Close()
		}
	}()
	for _, how := range []string{"", " undumpable"} {
		e := newEnv(t, NetPolicy(egress.Policy{Allow: allow}))
		p := e.run("NASH_TEST_NET=escape " + shellQuote(self) + " " + s.tcp + " " + l.Addr().String() + how)
		out := e.stdout.String()
		want := "allowed: <nil>\ndisconnect: errno 0\nreconnect: permission denied\nfastopen: permission denied\n" +
			"bind: permission denied\nlisten: permission denied\nio_uring: function not implemented\n"
		if out != want {
			t.Errorf("%q: got\n%s\nwant\n%s%s", how, out, want, e.stderr.String())
		}
		if c := contactOf(t, p.Network, s.tcp); !c.Direct {
			t.Errorf("%q: the allowed connection was not handed over: %+v", how, c)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the denied server was reached %d times", n)
	}
}
