//go:build !linux

package sandboxnet

import (
	"errors"
	"net/netip"
	"syscall"
)

// Elsewhere than on Linux there is no sandbox, so no network of one to
// set up: these are what sandbox/egress refers to, so that it builds.

// DNSPort is where the sandbox's DNS queries are caught.
const DNSPort = 53

// ErrNoDst is returned by OriginalDst.
var ErrNoDst = errors.New("no original destination in the control messages")

// OriginalDst finds nothing: there are no caught datagrams.
func OriginalDst([]byte) (netip.AddrPort, error) { return netip.AddrPort{}, ErrNoDst }

// ReplyFrom is nil.
func ReplyFrom(netip.Addr) []byte { return nil }

// Readable reports nothing waiting.
func Readable(...syscall.Conn) bool { return false }
