//go:build !linux

package egress

// Elsewhere than on Linux there is no sandbox to hand connections to.
type directState struct{}

func (p *Proxy) stopDirect() {}
