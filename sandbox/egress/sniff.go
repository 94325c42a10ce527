package egress

import (
	"bytes"
	"encoding/binary"
	"net/url"
	"strings"
)

// headLimit bounds how much of a connection's first bytes nash reads to
// learn what it is.
const headLimit = 16 << 10

// sniffed is what a connection's first bytes say.
type sniffed struct {
	tls  bool
	sni  string
	http *httpHead
}

// headDone reports whether b holds enough of a connection's first bytes to
// tell what they are: a whole TLS record, a whole HTTP request head, or
// anything else.
func headDone(b []byte) bool {
	switch {
	case len(b) >= headLimit:
		return true
	case len(b) == 0:
		return false
	case b[0] == 0x16:
		if len(b) < 5 {
			return false
		}
		return len(b) >= 5+int(binary.BigEndian.Uint16(b[3:]))
	case looksHTTP(b):
		return bytes.Contains(b, []byte("\r\n\r\n"))
	}
	return true
}

var methods = []string{"GET ", "POST ", "PUT ", "HEAD ", "DELETE ", "OPTIONS ", "PATCH ", "CONNECT ", "TRACE "}

// looksHTTP reports whether b starts (or may start, being short) like an
// HTTP/1 request line.
func looksHTTP(b []byte) bool {
	for _, m := range methods {
		n := min(len(b), len(m))
		if string(b[:n]) == m[:n] {
			return true
		}
	}
	return false
}

func sniff(b []byte) sniffed {
	if len(b) > 0 && b[0] == 0x16 {
		return sniffed{tls: true, sni: clientHelloSNI(b)}
	}
	if h := parseHTTPHead(b); h != nil {
		return sniffed{http: h}
	}
	return sniffed{}
}

// clientHelloSNI returns the server name of a TLS ClientHello, or "".
func clientHelloSNI(b []byte) string {
	if len(b) < 5 || b[0] != 0x16 {
		return ""
	}
	rec := b[5:]
	if n := int(binary.BigEndian.Uint16(b[3:])); n < len(rec) {
		rec = rec[:n]
	}
	if len(rec) < 4 || rec[0] != 1 {
		return ""
	}
	p := rec[4:]
	skip := func(n int) bool {
		if n > len(p) {
			return false
		}
		p = p[n:]
		return true
	}
	vec := func(lenBytes int) ([]byte, bool) {
		if len(p) < lenBytes {
			return nil, false
		}
		n := 0
		for i := 0; i < lenBytes; i++ {
			n = n<<8 | int(p[i])
		}
		if len(p) < lenBytes+n {
			return nil, false
		}
		v := p[lenBytes : lenBytes+n]
		p = p[lenBytes+n:]
		return v, true
	}
	if !skip(2 + 32) { // version, random
		return ""
	}
	for _, lb := range []int{1, 2, 1} { // session id, cipher suites, compression
		if _, ok := vec(lb); !ok {
			return ""
		}
	}
	exts, ok := vec(2)
	if !ok {
		return ""
	}
	p = exts
	for len(p) >= 4 {
		typ := binary.BigEndian.Uint16(p)
		p = p[2:]
		data, ok := vec(2)
		if !ok {
			return ""
		}
		if typ != 0 { // server_name
			continue
		}
		p = data
		list, ok := vec(2)
		if !ok {
			return ""
		}
		p = list
		for len(p) >= 3 {
			kind := p[0]
			p = p[1:]
			name, ok := vec(2)
			if !ok {
				return ""
			}
			if kind == 0 {
				return strings.ToLower(string(name))
			}
		}
		return ""
	}
	return ""
}

// httpHead is the part of an HTTP/1 request nash looks at.
type httpHead struct {
	method, target, version string
	host                    string
	// credentials names what in the request carries a credential.
	credentials []string
	// end is the length of the head, blank line included; 0 when the
	// head was cut short.
	end int
	// lines are the head's lines, for rewriting a proxy request.
	lines []string
}

// parseHTTPHead parses the request line and headers at the start of b, or
// returns nil when b does not start with an HTTP/1 request.
func parseHTTPHead(b []byte) *httpHead {
	if !looksHTTP(b) {
		return nil
	}
	text := string(b)
	h := &httpHead{}
	if i := strings.Index(text, "\r\n\r\n"); i >= 0 {
		text, h.end = text[:i], i+4
	}
	lines := strings.Split(text, "\r\n")
	f := strings.Fields(lines[0])
	if len(f) != 3 || !strings.HasPrefix(f[2], "HTTP/") {
		return nil
	}
	h.method, h.target, h.version = f[0], f[1], f[2]
	h.lines = lines
	if u, err := url.Parse(h.target); err == nil {
		for k := range u.Query() {
			if credentialName(k) {
				addTo(&h.credentials, "credential in the URL ("+k+"=)")
			}
		}
		if u.User != nil {
			addTo(&h.credentials, "user and password in the URL")
		}
	}
	for _, l := range lines[1:] {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			continue
		}
		k = strings.ToLower(strings.TrimSpace(k))
		switch {
		case k == "host":
			h.host = strings.ToLower(strings.TrimSpace(v))
		case k == "authorization", k == "proxy-authorization", k == "cookie":
			addTo(&h.credentials, canonicalHeader(k)+" header")
		case credentialName(k):
			addTo(&h.credentials, canonicalHeader(k)+" header")
		}
	}
	return h
}

// credentialName reports whether a header or query parameter name looks
// like it carries a secret.
func credentialName(k string) bool {
	k = strings.ToLower(k)
	for _, w := range []string{"token", "secret", "password", "passwd", "apikey", "api-key", "api_key", "auth", "signature", "session"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return k == "key" || k == "sig"
}

func canonicalHeader(k string) string {
	parts := strings.Split(k, "-")
	for i, p := range parts {
		if p != "" {
			parts[i] = strings.ToUpper(p[:1]) + p[1:]
		}
	}
	return strings.Join(parts, "-")
}

func addTo(list *[]string, s string) {
	for _, x := range *list {
		if x == s {
			return
		}
	}
	*list = append(*list, s)
}
