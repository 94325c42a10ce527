package sockdiag

import (
	"bytes"
	"io"
	"net"
	"net/netip"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// cookie returns the SO_COOKIE of c.
func cookie(t testing.TB, c syscall.Conn) uint64 {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var ck uint64
	var gerr error
	if err := rc.Control(func(fd uintptr) {
		ck, gerr = unix.GetsockoptUint64(int(fd), unix.SOL_SOCKET, unix.SO_COOKIE)
	}); err != nil {
		t.Fatal(err)
	}
	if gerr != nil {
		t.Fatal(gerr)
	}
	return ck
}

// pair connects a client to a server on a loopback listener of network.
func pair(t testing.TB, network, addr string) (client, server *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Skipf("no %s loopback: %v", network, err)
	}
	defer ln.Close()
	c, err := net.Dial(network, ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); s.Close() })
	return c.(*net.TCPConn), s.(*net.TCPConn)
}

// exchange has c send sent bytes to s and s send received bytes to c,
// and waits until both arrived.
func exchange(t *testing.T, c, s net.Conn, sent, received int) {
	t.Helper()
	errs := make(chan error, 2)
	go func() { _, err := c.Write(bytes.Repeat([]byte("c"), sent)); errs <- err }()
	go func() { _, err := s.Write(bytes.Repeat([]byte("s"), received)); errs <- err }()
	if _, err := io.ReadFull(c, make([]byte, received)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(s, make([]byte, sent)); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// addrs returns the family and addresses of c as Counts wants them.
func addrs(c *net.TCPConn) (int, netip.AddrPort, netip.AddrPort) {
	l := c.LocalAddr().(*net.TCPAddr).AddrPort()
	r := c.RemoteAddr().(*net.TCPAddr).AddrPort()
	if l.Addr().Is4() || l.Addr().Is4In6() {
		return unix.AF_INET, l, r
	}
	return unix.AF_INET6, l, r
}

// destroyed waits for the broadcast of the tracked socket with cookie.
func destroyed(t *testing.T, w *Watcher, ck uint64) {
	t.Helper()
	w.mu.Lock()
	e := w.tracked[ck]
	w.mu.Unlock()
	select {
	case <-e.gone:
	case <-time.After(5 * time.Second):
		t.Fatal("no destroy broadcast")
	}
}

func TestCounts(t *testing.T) {
	const sent, received = 100_000, 3 << 20
	tests := []struct {
		name, network, addr string
		serverFirst         bool
	}{
		{"v4 client closes first", "tcp4", "127.0.0.1:0", false},
		{"v4 server closes first", "tcp4", "127.0.0.1:0", true},
		{"v6 client closes first", "tcp6", "[::1]:0", false},
		{"v6 server closes first", "tcp6", "[::1]:0", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := Watch()
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			c, s := pair(t, tt.network, tt.addr)
			ck := cookie(t, c)
			w.Track(ck)
			family, local, remote := addrs(c)
			exchange(t, c, s, sent, received)

			// Open: the live socket's counts, once the peer acked all.
			want := Counts{Sent: sent, Received: received}
			var got Counts
			for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
				var ok bool
				if got, ok = w.Counts(ck, family, local, remote); !ok {
					t.Fatal("no counts for an open socket")
				}
				if got == want {
					break
				}
			}
			if got != want {
				t.Fatalf("open: got %+v, want %+v", got, want)
			}

			// Closed: the broadcast's counts. The client's socket is
			// destroyed in FIN_WAIT2 before the server's FIN arrives if
			// it closes first, after it (counted) otherwise.
			if tt.serverFirst {
				s.Close()
				if n, err := io.Copy(io.Discard, c); n != 0 || err != nil {
					t.Fatalf("client read %d, %v after the server closed", n, err)
				}
				c.Close()
				want.Received++
				destroyed(t, w, ck)
			} else {
				c.Close()
				destroyed(t, w, ck)
				if n, err := io.Copy(io.Discard, s); n != 0 || err != nil {
					t.Fatalf("server read %d, %v after the client closed", n, err)
				}
				s.Close()
			}
			if in, err := query(ck, family, local, remote); err == nil && in.ok {
				t.Errorf("closed socket still there with tcp_info: %+v", in)
			}
			got, ok := w.Counts(ck, family, local, remote)
			if !ok || got != want {
				t.Errorf("closed: got %+v, %v, want %+v", got, ok, want)
			}
			w.Forget(ck)
			if _, ok := w.Counts(ck, family, local, remote); ok {
				t.Error("counts of a forgotten, closed socket")
			}
		})
	}
}

func TestUntracked(t *testing.T) {
	w, err := Watch()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	c1, s1 := pair(t, "tcp4", "127.0.0.1:0")
	c2, s2 := pair(t, "tcp6", "[::1]:0")
	ck := cookie(t, c2)
	w.Track(ck)
	untracked := []uint64{cookie(t, c1), cookie(t, s1), cookie(t, s2)}
	exchange(t, c1, s1, 10, 20)
	exchange(t, c2, s2, 30, 40)
	c1.Close()
	s1.Close()
	s2.Close()
	c2.Close()
	destroyed(t, w, ck)
	time.Sleep(50 * time.Millisecond) // the other broadcasts, if any were late
	w.mu.Lock()
	n := len(w.tracked)
	w.mu.Unlock()
	if n != 1 {
		t.Errorf("%d sockets in the table, want the 1 tracked", n)
	}
	family, local, remote := addrs(c1)
	start := time.Now()
	if got, ok := w.Counts(untracked[0], family, local, remote); ok {
		t.Errorf("counts %+v of an untracked, closed socket", got)
	}
	if d := time.Since(start); d > destroyWait/2 {
		t.Errorf("waited %v for an untracked socket", d)
	}
	family, local, remote = addrs(c2)
	if got, ok := w.Counts(ck, family, local, remote); !ok || got != (Counts{30, 41}) {
		t.Errorf("tracked: got %+v, %v", got, ok)
	}
}

func TestCountsMismatch(t *testing.T) {
	w, err := Watch()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	c, _ := pair(t, "tcp4", "127.0.0.1:0")
	ck := cookie(t, c)
	family, local, remote := addrs(c)
	tests := []struct {
		name          string
		cookie        uint64
		family        int
		local, remote netip.AddrPort
		ok            bool
	}{
		{"right", ck, family, local, remote, true},
		{"4in6 addresses", ck, family, netip.AddrPortFrom(netip.AddrFrom16(local.Addr().As16()), local.Port()), remote, true},
		{"other cookie", ck + 1, family, local, remote, false},
		{"other port", ck, family, local, netip.AddrPortFrom(remote.Addr(), remote.Port()+1), false},
		{"wrong family", ck, unix.AF_UNIX, local, remote, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, ok := w.Counts(tt.cookie, tt.family, tt.local, tt.remote); ok != tt.ok {
				t.Errorf("ok = %v, want %v", ok, tt.ok)
			}
		})
	}
}

func TestListening(t *testing.T) {
	tests := []struct{ name, network, addr string }{
		{"v4 loopback", "tcp4", "127.0.0.1:0"},
		{"v4 any", "tcp4", "0.0.0.0:0"},
		{"v6 loopback", "tcp6", "[::1]:0"},
		{"v6 any, dual stack", "tcp", "[::]:0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ln, err := net.Listen(tt.network, tt.addr)
			if err != nil {
				t.Skipf("no %s: %v", tt.network, err)
			}
			port := uint16(ln.Addr().(*net.TCPAddr).Port)
			if ok, err := Listening(port); !ok || err != nil {
				t.Errorf("open listener: %v, %v", ok, err)
			}
			// A connection on the port's neighbour, not listening.
			c, s := pair(t, "tcp4", "127.0.0.1:0")
			_ = s
			cp := uint16(c.LocalAddr().(*net.TCPAddr).Port)
			if ok, err := Listening(cp); ok || err != nil {
				t.Errorf("connected, not listening port %d: %v, %v", cp, ok, err)
			}
			ln.Close()
			if ok, err := Listening(port); ok || err != nil {
				t.Errorf("closed listener: %v, %v", ok, err)
			}
		})
	}
}

func TestWatcherClose(t *testing.T) {
	w, err := Watch()
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-w.done:
	default:
		t.Error("reader still running")
	}
}

func BenchmarkListening(b *testing.B) {
	ln, err := net.Listen("tcp", "[::]:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	tests := []struct {
		name string
		port uint16
	}{
		{"listening v6", uint16(ln.Addr().(*net.TCPAddr).Port)},
		{"not listening", 1},
	}
	for _, tt := range tests {
		b.Run(tt.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Listening(tt.port); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
