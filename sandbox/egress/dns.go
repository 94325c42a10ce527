package egress

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"strings"
)

// DNS record types and response codes nash uses.
const (
	typeA    = 1
	typeAAAA = 28
	classIN  = 1

	rcodeOK       = 0
	rcodeFormErr  = 1
	rcodeServFail = 2
	rcodeNXDomain = 3
	rcodeNotImpl  = 4
)

// dnsQuery is the one question of a DNS query.
type dnsQuery struct {
	id       uint16
	flags    uint16
	name     string // lower case, no final dot
	qtype    uint16
	qclass   uint16
	question []byte // the question section as sent
}

var errNotQuery = errors.New("not a DNS query")

// parseQuery reads a standard query with one question. Names are taken
// as they come, lower-cased; compression is not used in questions.
func parseQuery(b []byte) (*dnsQuery, error) {
	if len(b) < 12 {
		return nil, errNotQuery
	}
	q := &dnsQuery{id: binary.BigEndian.Uint16(b), flags: binary.BigEndian.Uint16(b[2:])}
	if q.flags&0x8000 != 0 || (q.flags>>11)&0xf != 0 || binary.BigEndian.Uint16(b[4:]) != 1 {
		return q, errNotQuery
	}
	i := 12
	var labels []string
	for {
		if i >= len(b) {
			return q, errNotQuery
		}
		n := int(b[i])
		i++
		if n == 0 {
			break
		}
		if n > 63 || i+n > len(b) {
			return q, errNotQuery
		}
		labels = append(labels, strings.ToLower(string(b[i:i+n])))
		i += n
	}
	if i+4 > len(b) {
		return q, errNotQuery
	}
	q.qtype = binary.BigEndian.Uint16(b[i:])
	q.qclass = binary.BigEndian.Uint16(b[i+2:])
	q.question = b[12 : i+4]
	q.name = strings.Join(labels, ".")
	return q, nil
}

// dnsAnswer builds the response to q with the given code and addresses
// (A or AAAA records by their family, for the question's name).
func dnsAnswer(q *dnsQuery, rcode int, addrs []netip.Addr, ttl uint32) []byte {
	b := make([]byte, 12, 12+len(q.question)+len(addrs)*28)
	binary.BigEndian.PutUint16(b, q.id)
	binary.BigEndian.PutUint16(b[2:], 0x8000|q.flags&0x0100|0x0080|uint16(rcode))
	if q.question != nil {
		binary.BigEndian.PutUint16(b[4:], 1)
		b = append(b, q.question...)
	}
	binary.BigEndian.PutUint16(b[6:], uint16(len(addrs)))
	for _, a := range addrs {
		typ, data := uint16(typeA), a.AsSlice()
		if a.Is6() {
			typ = typeAAAA
		}
		b = append(b, 0xc0, 12) // the question's name
		b = binary.BigEndian.AppendUint16(b, typ)
		b = binary.BigEndian.AppendUint16(b, classIN)
		b = binary.BigEndian.AppendUint32(b, ttl)
		b = binary.BigEndian.AppendUint16(b, uint16(len(data)))
		b = append(b, data...)
	}
	return b
}

// fakeNet is where stand-in addresses come from: 198.18.0.0/15, set aside
// for benchmarking (RFC 2544), as fake-ip resolvers use it.
var fakeNet = netip.MustParsePrefix("198.18.0.0/15")

// fakes hands out one stand-in address per name.
type fakes struct {
	byName map[string]netip.Addr
	byAddr map[netip.Addr]string
	next   netip.Addr
}

func (f *fakes) addr(name string) (netip.Addr, bool) {
	if a, ok := f.byName[name]; ok {
		return a, true
	}
	if f.byName == nil {
		f.byName, f.byAddr = map[string]netip.Addr{}, map[netip.Addr]string{}
		f.next = fakeNet.Addr().Next()
	}
	if !fakeNet.Contains(f.next) {
		return netip.Addr{}, false // 131,070 names in one run
	}
	a := f.next
	f.next = a.Next()
	f.byName[name], f.byAddr[a] = a, name
	return a, true
}

func (f *fakes) name(a netip.Addr) string { return f.byAddr[a.Unmap()] }
