//go:build !linux

package indexserver

// peakRSS is not measured off Linux.
func peakRSS() int64 { return 0 }
