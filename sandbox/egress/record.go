package egress

import (
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Protocols of a Contact.
const (
	ProtoTCP = "tcp"
	ProtoUDP = "udp"
	ProtoDNS = "dns" // a name looked up and never connected to
)

// Contact is one destination a run tried to reach, with every attempt at it
// summed up.
type Contact struct {
	// Host is the name asked for (by DNS, or in an HTTP proxy request),
	// "" when the script used a bare address.
	Host string `json:"host,omitempty"`
	// Addr is the address tried: the real one for an allowed name, none
	// for a name that was not allowed (it was never looked up).
	Addr  string `json:"addr,omitempty"`
	Port  uint16 `json:"port,omitempty"`
	Proto string `json:"proto"`
	// Allowed says whether the destination was let through.
	Allowed bool `json:"allowed"`
	// SNI and HTTPHost are the names the client's first bytes carried
	// (TLS server name, HTTP Host), which nash shows but never trusts.
	SNI      string `json:"sni,omitempty"`
	HTTPHost string `json:"http_host,omitempty"`
	// ViaProxy says the client asked for the destination as an HTTP
	// proxy's client does (CONNECT or an absolute URL).
	ViaProxy bool `json:"via_proxy,omitempty"`
	// TLS says the traffic was encrypted: headers were not visible.
	TLS bool `json:"tls,omitempty"`
	// Credentials names the credentials seen in plain-HTTP requests
	// ("Authorization header", "token in the URL"), never their values.
	Credentials []string `json:"credentials,omitempty"`
	// Attempts counts connections (datagrams for UDP, queries for DNS).
	Attempts int `json:"attempts"`
	// Direct says nash handed the script a connection of its own (see
	// Proxy.Direct) rather than relaying it: its first bytes were not
	// read, so SNI, HTTPHost and Credentials are unknown for it.
	Direct bool `json:"direct,omitempty"`
	// Sent and Received count the bytes relayed from and to the script
	// (for a direct connection, sent once and received, as the kernel
	// counts them: the destination's closing FIN counts as one byte
	// received when it came before the script closed its socket).
	Sent     int64 `json:"sent"`
	Received int64 `json:"received"`
	// Uncounted says the bytes of a direct connection could not be had
	// from the kernel: Sent and Received are short.
	Uncounted bool `json:"uncounted,omitempty"`
	// First is when the first attempt began; Last when the last ended.
	First time.Time `json:"first"`
	Last  time.Time `json:"last"`
	// Error says why an allowed destination could not be reached.
	Error string `json:"error,omitempty"`
}

// Destination is the contact's destination as a person reads it, and as a
// Rule parses it: host:port, or address:port when no name was asked for.
func (c *Contact) Destination() string {
	host := c.Host
	if host == "" {
		host = c.Addr
		if strings.Contains(host, ":") {
			host = "[" + host + "]"
		}
	}
	if c.Port == 0 {
		return host
	}
	return host + ":" + strconv.Itoa(int(c.Port))
}

// Rule is the rule that allows exactly this destination; false when the
// contact names none (a malformed name from a DNS query).
func (c *Contact) Rule() (Rule, bool) {
	r, err := ParseRule(c.Destination())
	return r, err == nil
}

// recorder sums attempts up per destination.
type recorder struct {
	mu    sync.Mutex
	byKey map[string]*Contact
	order []*Contact
	// hops are names the script used as its HTTP proxy: their lookups
	// are not destinations of their own (what went through them is).
	hops map[string]bool
}

// proxyHop notes that name was used as an HTTP proxy.
func (r *recorder) proxyHop(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.hops == nil {
		r.hops = map[string]bool{}
	}
	r.hops[name] = true
}

func (r *recorder) key(host string, addr netip.Addr, port uint16, proto string, allowed bool) string {
	dest := host
	if dest == "" {
		dest = addr.String()
	}
	return proto + " " + dest + " " + strconv.Itoa(int(port)) + " " + strconv.FormatBool(allowed)
}

// attempt records the start of one attempt and returns its contact; the
// caller updates it under r.mu (see update).
func (r *recorder) attempt(host string, addr netip.Addr, port uint16, proto string, allowed bool) *Contact {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byKey == nil {
		r.byKey = map[string]*Contact{}
	}
	k := r.key(host, addr, port, proto, allowed)
	c := r.byKey[k]
	now := time.Now().UTC()
	if c == nil {
		c = &Contact{Host: host, Port: port, Proto: proto, Allowed: allowed, First: now}
		if addr.IsValid() {
			c.Addr = addr.Unmap().String()
		}
		r.byKey[k] = c
		r.order = append(r.order, c)
	}
	c.Attempts++
	c.Last = now
	return c
}

// update changes a contact under the recorder's lock.
func (r *recorder) update(c *Contact, f func(c *Contact)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(c)
	if now := time.Now().UTC(); now.After(c.Last) {
		c.Last = now
	}
}

// contacts returns copies of the contacts in the order first seen; a
// name's DNS lookups are folded into its connections when it has any.
func (r *recorder) contacts() []Contact {
	r.mu.Lock()
	defer r.mu.Unlock()
	connected := map[string]bool{}
	for _, c := range r.order {
		if c.Proto != ProtoDNS && c.Host != "" {
			connected[c.Host] = true
		}
	}
	var out []Contact
	for _, c := range r.order {
		if c.Proto == ProtoDNS && (connected[c.Host] || r.hops[c.Host]) {
			continue
		}
		cc := *c
		cc.Credentials = append([]string(nil), c.Credentials...)
		out = append(out, cc)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].First.Before(out[j].First) })
	return out
}

func addCredential(c *Contact, what string) {
	for _, w := range c.Credentials {
		if w == what {
			return
		}
	}
	c.Credentials = append(c.Credentials, what)
}
