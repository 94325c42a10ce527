package egress

import (
	"crypto/tls"
	"net"
	"slices"
	"testing"
	"time"
)

// clientHello returns the first bytes a TLS client sends for server name.
func clientHello(t testing.TB, server string) []byte {
	a, b := net.Pipe()
	go func() {
		c := tls.Client(a, &tls.Config{ServerName: server, InsecureSkipVerify: true})
		_ = c.Handshake()
	}()
	_ = b.SetReadDeadline(time.Now().Add(5 * time.Second))
	got := readHead(b, 0)
	a.Close()
	b.Close()
	return got
}

func TestSniffTLS(t *testing.T) {
	hello := clientHello(t, "API.example.org")
	if !headDone(hello) {
		t.Fatal("a whole ClientHello is not done")
	}
	s := sniff(hello)
	if !s.tls || s.sni != "api.example.org" {
		t.Fatalf("sniff = %+v", s)
	}
	if headDone(hello[:20]) {
		t.Fatal("a cut ClientHello is done")
	}
	if sni := clientHelloSNI(hello[:len(hello)/2]); sni != "" && sni != "api.example.org" {
		t.Fatalf("a cut ClientHello gave %q", sni)
	}
}

func TestSniffHTTP(t *testing.T) {
	for _, tc := range []struct {
		head  string
		host  string
		creds []string
	}{
		{"GET / HTTP/1.1\r\nHost: Example.com\r\n\r\n", "example.com", nil},
		{"POST /v1 HTTP/1.1\r\nHost: api.x\r\nAuthorization: Bearer abc\r\n\r\n", "api.x", []string{"Authorization header"}},
		{"GET /?access_token=abc&q=1 HTTP/1.1\r\nHost: h\r\nX-Api-Key: k\r\nCookie: a=b\r\n\r\n", "h",
			[]string{"credential in the URL (access_token=)", "X-Api-Key header", "Cookie header"}},
		{"GET http://u:p@h/ HTTP/1.1\r\nHost: h\r\n\r\n", "h", []string{"user and password in the URL"}},
	} {
		s := sniff([]byte(tc.head))
		if s.http == nil || s.http.host != tc.host {
			t.Errorf("sniff(%q) = %+v", tc.head, s.http)
			continue
		}
		got := slices.Clone(s.http.credentials)
		slices.Sort(got)
		want := slices.Clone(tc.creds)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("credentials of %q = %q, want %q", tc.head, got, want)
		}
	}
	for _, notHTTP := range []string{"SSH-2.0-OpenSSH\r\n", "\x00\x01", "GETX / HTTP/1.1\r\n\r\n"} {
		if s := sniff([]byte(notHTTP)); s.http != nil || s.tls {
			t.Errorf("sniff(%q) = %+v", notHTTP, s)
		}
	}
}

func FuzzSniff(f *testing.F) {
	f.Add(clientHello(f, "example.com"))
	f.Add([]byte("GET /?token=1 HTTP/1.1\r\nHost: h\r\nAuthorization: x\r\n\r\n"))
	f.Add([]byte("CONNECT h:443 HTTP/1.1\r\n\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = headDone(b)
		s := sniff(b)
		if s.http != nil && (s.http.method == "CONNECT" || len(s.http.lines) > 0) {
			_ = originForm(s.http, b)
		}
	})
}
