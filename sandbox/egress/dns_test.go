package egress

import (
	"encoding/binary"
	"net/netip"
	"testing"
)

// query builds a DNS query for name and type.
func query(id uint16, name string, qtype uint16) []byte {
	b := binary.BigEndian.AppendUint16(nil, id)
	b = append(b, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0)
	for _, l := range splitDots(name) {
		b = append(b, byte(len(l)))
		b = append(b, l...)
	}
	b = append(b, 0)
	b = binary.BigEndian.AppendUint16(b, qtype)
	return binary.BigEndian.AppendUint16(b, classIN)
}

func splitDots(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '.' {
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	return out
}

// parseAnswer reads the code and the addresses of a response.
func parseAnswer(t *testing.T, b []byte) (rcode int, addrs []netip.Addr) {
	t.Helper()
	q, err := parseQuery(append([]byte{b[0], b[1], 0, 0}, b[4:]...))
	if err != nil {
		t.Fatalf("response does not echo its question: %v", err)
	}
	rcode = int(binary.BigEndian.Uint16(b[2:]) & 0xf)
	an := int(binary.BigEndian.Uint16(b[6:]))
	i := 12 + len(q.question)
	for range an {
		typ := binary.BigEndian.Uint16(b[i+2:])
		n := int(binary.BigEndian.Uint16(b[i+10:]))
		data := b[i+12 : i+12+n]
		if a, ok := netip.AddrFromSlice(data); ok && (typ == typeA || typ == typeAAAA) {
			addrs = append(addrs, a)
		}
		i += 12 + n
	}
	return rcode, addrs
}

func TestParseQuery(t *testing.T) {
	q, err := parseQuery(query(7, "API.Example.COM", typeA))
	if err != nil || q.name != "api.example.com" || q.qtype != typeA || q.id != 7 {
		t.Fatalf("parseQuery = %+v, %v", q, err)
	}
	for _, bad := range [][]byte{nil, make([]byte, 11), query(1, "a.b", typeA)[:14]} {
		if _, err := parseQuery(bad); err == nil {
			t.Errorf("parseQuery(%x) accepted a bad query", bad)
		}
	}
	resp := dnsAnswer(q, rcodeOK, []netip.Addr{netip.MustParseAddr("198.18.0.1")}, 60)
	code, addrs := parseAnswer(t, resp)
	if code != 0 || len(addrs) != 1 || addrs[0].String() != "198.18.0.1" {
		t.Fatalf("answer: code %d, %v", code, addrs)
	}
}

func FuzzParseQuery(f *testing.F) {
	f.Add(query(1, "example.com", typeA))
	f.Add(query(2, "x", typeAAAA))
	f.Fuzz(func(t *testing.T, b []byte) {
		q, err := parseQuery(b)
		if err == nil {
			_ = dnsAnswer(q, rcodeOK, []netip.Addr{localhost4, localhost6}, 1)
		}
	})
}
