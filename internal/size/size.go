// Package size reads byte sizes written by people (500M, 2G, 1024) and
// writes them for people (1.5 KiB).
package size

import (
	"fmt"
	"strconv"
	"strings"
)

// Parse reads a size with an optional K, M, G or T suffix (powers of 1024)
// and an optional B.
func Parse(s string) (int64, error) {
	s = strings.TrimSpace(strings.ToUpper(s))
	mult := int64(1)
	for suffix, m := range map[string]int64{"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40} {
		if t, ok := strings.CutSuffix(strings.TrimSuffix(s, "B"), suffix); ok && t != "" {
			s, mult = t, m
			break
		}
	}
	s = strings.TrimSuffix(s, "B")
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("size %q: want a number with an optional K, M, G or T", s)
	}
	return int64(n * float64(mult)), nil
}

// Format writes n bytes for people, in binary units: 512 B, 1.5 KiB,
// 2.0 GiB.
func Format(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
