package egress

import (
	"errors"
	"net/netip"
	"testing"
)

func TestParseRule(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		bad      bool
	}{
		{in: "github.com", want: "github.com"},
		{in: "GitHub.com.:443", want: "github.com:443"},
		{in: "*.github.com", want: "*.github.com"},
		{in: "127.0.0.1:11434", want: "127.0.0.1:11434"},
		{in: "[::1]:8080", want: "[::1]:8080"},
		{in: "::1", want: "::1"},
		{in: "10.0.0.0/8", want: "10.0.0.0/8"},
		{in: "*", want: "*"},
		{in: "localhost:11434", want: "localhost:11434"},
		{in: "", bad: true},
		{in: "host:0", bad: true},
		{in: "host:99999", bad: true},
		{in: "host:http", bad: true},
		{in: "a b", bad: true},
		{in: "*.", bad: true},
		{in: "[::1", bad: true},
		{in: "bad_/name", bad: true},
	} {
		r, err := ParseRule(tc.in)
		if tc.bad {
			if !errors.Is(err, ErrBadRule) {
				t.Errorf("ParseRule(%q) = %v, %v; want ErrBadRule", tc.in, r, err)
			}
			continue
		}
		if err != nil || r.String() != tc.want {
			t.Errorf("ParseRule(%q) = %q, %v; want %q", tc.in, r.String(), err, tc.want)
		}
	}
}

func TestPolicyAllows(t *testing.T) {
	must := func(s string) []Rule {
		r, err := ParseRules(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	p := Policy{
		Allow: must("*.github.com, pypi.org:443, 127.0.0.1:11434, localhost:8080, 10.1.0.0/16"),
		Deny:  must("evil.github.com, 10.1.2.3, *.github.com:22"),
	}
	none := netip.Addr{}
	ip := netip.MustParseAddr
	for _, tc := range []struct {
		name string
		addr netip.Addr
		port uint16
		want bool
	}{
		{"api.github.com", none, 443, true},
		{"a.b.github.com", none, 80, true},
		{"github.com", none, 443, false}, // a wildcard names what is below
		{"evil.github.com", none, 443, false},
		{"api.github.com", none, 22, false},
		{"pypi.org", none, 443, true},
		{"pypi.org", none, 80, false},
		{"", ip("127.0.0.1"), 11434, true},
		{"", ip("127.0.0.1"), 11435, false},
		{"", ip("127.0.0.2"), 8080, true}, // localhost is the loopback
		{"", ip("::1"), 8080, true},
		{"", ip("10.1.9.9"), 5432, true},
		{"", ip("10.1.2.3"), 5432, false},
		{"api.github.com", ip("10.1.2.3"), 443, false}, // a denied address of an allowed name
		{"example.com", none, 443, false},
		{"", ip("203.0.113.1"), 443, false},
	} {
		if got := p.Allows(tc.name, tc.addr, tc.port); got != tc.want {
			t.Errorf("Allows(%q, %v, %d) = %v, want %v", tc.name, tc.addr, tc.port, got, tc.want)
		}
	}
	if !p.MayResolve("api.github.com") || p.MayResolve("evil.github.com") || p.MayResolve("example.com") {
		t.Error("MayResolve: wrong")
	}
	if (Policy{}).Allows("x.org", none, 1) || !AllowAll().Allows("x.org", none, 1) {
		t.Error("the zero policy must allow nothing and AllowAll everything")
	}
}
