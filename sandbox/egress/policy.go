package egress

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Rule names destinations: a host name, a wildcard (*.example.com: any name
// below example.com), an address or an address prefix, with a port or
// (Port 0) any port. The rule "localhost" names the loopback addresses.
type Rule struct {
	Host   string       // a lower-case name or wildcard; empty for an address rule
	Prefix netip.Prefix // an address (a full-length prefix) or a prefix
	Port   uint16       // 0: any port
	// all is the rule "*": every destination.
	all bool
}

// ErrBadRule is wrapped by the errors of ParseRule.
var ErrBadRule = errors.New("bad destination")

// ParseRule parses HOST[:PORT], where HOST is a name, *.name, *, an IPv4
// address or prefix, or an IPv6 address or prefix in brackets when a port
// follows ([::1]:11434).
func ParseRule(s string) (Rule, error) {
	s = strings.TrimSpace(s)
	bad := func(why string) (Rule, error) {
		return Rule{}, fmt.Errorf("%w %q: %s", ErrBadRule, s, why)
	}
	if s == "" {
		return bad("empty")
	}
	host, port := s, ""
	switch {
	case strings.HasPrefix(s, "["):
		end := strings.Index(s, "]")
		if end < 0 {
			return bad("no closing ]")
		}
		host, port = s[1:end], s[end+1:]
		if port != "" {
			var ok bool
			if port, ok = strings.CutPrefix(port, ":"); !ok {
				return bad("text after ]")
			}
		}
	case strings.Count(s, ":") == 1:
		host, port, _ = strings.Cut(s, ":")
	}
	var r Rule
	if port != "" {
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil || n == 0 {
			return bad("the port must be a number from 1 to 65535")
		}
		r.Port = uint16(n)
	}
	if p, err := netip.ParsePrefix(host); err == nil {
		r.Prefix = p.Masked()
		return r, nil
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" {
			return bad("an address with a zone")
		}
		r.Prefix = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen())
		return r, nil
	}
	host = strings.ToLower(host)
	if host == "*" {
		r.all = true
		return r, nil
	}
	host = strings.TrimSuffix(host, ".")
	name := strings.TrimPrefix(host, "*.")
	if name == "" || !validName(name) {
		return bad("not a host name, address or *.domain")
	}
	r.Host = host
	return r, nil
}

// validName reports whether s is a plausible DNS name: dot-separated
// labels of letters, digits, hyphens and underscores.
func validName(s string) bool {
	if len(s) > 253 {
		return false
	}
	for _, l := range strings.Split(s, ".") {
		if l == "" || len(l) > 63 {
			return false
		}
		for _, c := range l {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// ParseRules parses a list of rules separated by commas or spaces.
func ParseRules(list string) ([]Rule, error) {
	var out []Rule
	for _, f := range strings.FieldsFunc(list, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
		r, err := ParseRule(f)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// String gives the rule as ParseRule reads it.
func (r Rule) String() string {
	var host string
	switch {
	case r.all:
		host = "*"
	case r.Host != "":
		host = r.Host
	case r.Prefix.IsSingleIP():
		host = r.Prefix.Addr().String()
	default:
		host = r.Prefix.String()
	}
	if r.Port == 0 {
		return host
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return host + ":" + strconv.Itoa(int(r.Port))
}

var loopbacks = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}

// matchName reports whether the rule names the host name (lower case, no
// final dot), ignoring the port.
func (r Rule) matchName(name string) bool {
	switch {
	case r.all:
		return true
	case name == "" || r.Host == "":
		return false
	case strings.HasPrefix(r.Host, "*."):
		return strings.HasSuffix(name, r.Host[1:])
	}
	return name == r.Host
}

// matchAddr reports whether the rule names the address, ignoring the port.
func (r Rule) matchAddr(a netip.Addr) bool {
	a = a.Unmap()
	switch {
	case r.all:
		return true
	case !a.IsValid():
		return false
	case r.Host == "localhost":
		return loopbacks[0].Contains(a) || loopbacks[1].Contains(a)
	case r.Host != "":
		return false
	}
	return r.Prefix.Contains(a)
}

func (r Rule) matchPort(port uint16) bool { return r.Port == 0 || r.Port == port }

// Policy says what a run may reach: what Deny names never, else what Allow
// names. The zero Policy allows nothing.
type Policy struct {
	Allow []Rule
	Deny  []Rule
}

// AllowAll is the policy that allows every destination (deny rules still
// hold).
func AllowAll() Policy { return Policy{Allow: []Rule{{all: true}}} }

// Allows reports whether a destination may be reached: its name, when one
// was asked for (lower case, "" when none), its address, when known, and
// its port.
func (p Policy) Allows(name string, addr netip.Addr, port uint16) bool {
	for _, r := range p.Deny {
		if r.matchPort(port) && (r.matchName(name) || r.matchAddr(addr)) {
			return false
		}
	}
	for _, r := range p.Allow {
		if r.matchPort(port) && (r.matchName(name) || r.matchAddr(addr)) {
			return true
		}
	}
	return false
}

// MayResolve reports whether nash looks a name up for real: some allow rule
// names it, at some port, and no deny rule names it at every port.
func (p Policy) MayResolve(name string) bool {
	for _, r := range p.Deny {
		if r.Port == 0 && r.matchName(name) {
			return false
		}
	}
	for _, r := range p.Allow {
		if r.matchName(name) {
			return true
		}
	}
	return false
}

// Empty reports whether the policy allows nothing at all.
func (p Policy) Empty() bool { return len(p.Allow) == 0 }
