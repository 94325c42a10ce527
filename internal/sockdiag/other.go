//go:build !linux

package sockdiag

import (
	"errors"
	"net/netip"
)

// Elsewhere than on Linux there is no sock_diag: everything fails with
// errors.ErrUnsupported.

// Counts are the bytes a TCP connection had acknowledged by its peer
// (Sent) and received from it (Received); see the Linux version.
type Counts struct{ Sent, Received int64 }

// Listening is unsupported.
func Listening(port uint16) (bool, error) { return false, errors.ErrUnsupported }

// Watcher is never made.
type Watcher struct{}

// Watch is unsupported.
func Watch() (*Watcher, error) { return nil, errors.ErrUnsupported }

// Track does nothing.
func (w *Watcher) Track(cookie uint64) {}

// Forget does nothing.
func (w *Watcher) Forget(cookie uint64) {}

// Counts finds nothing.
func (w *Watcher) Counts(cookie uint64, family int, local, remote netip.AddrPort) (Counts, bool) {
	return Counts{}, false
}

// Close does nothing.
func (w *Watcher) Close() error { return nil }
