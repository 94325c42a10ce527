package main

import (
	"testing"
	"time"
)

func TestParseWhen(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.Local)
	tests := []struct {
		in   string
		want time.Time
		ok   bool
	}{
		{"2026-11-20", time.Date(2026, 11, 20, 0, 0, 0, 0, time.Local), true},
		{"2026-11-20 08:30", time.Date(2026, 11, 20, 8, 30, 0, 0, time.Local), true},
		{"2h", now.Add(-2 * time.Hour), true},
		{"3d", now.Add(-72 * time.Hour), true},
		{"yesterday-ish", time.Time{}, false},
		{"-2h", time.Time{}, false},
	}
	for _, tt := range tests {
		got, err := parseWhen(tt.in, now)
		if (err == nil) != tt.ok || tt.ok && !got.Equal(tt.want) {
			t.Errorf("parseWhen(%q) = %v, %v; want %v (ok %v)", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestParseAge(t *testing.T) {
	if d, err := parseAge("7d"); err != nil || d != 7*24*time.Hour {
		t.Errorf("parseAge(7d) = %v, %v", d, err)
	}
	for _, bad := range []string{"", "soon", "-1d", "-2h"} {
		if _, err := parseAge(bad); err == nil {
			t.Errorf("parseAge(%q) accepted", bad)
		}
	}
}
