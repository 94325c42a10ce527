package index

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEntryRoundTrip: entries survive their binary layout, and JSON ones
// (from earlier versions) still read.
func TestEntryRoundTrip(t *testing.T) {
	for _, e := range []fileEntry{
		{},
		{Size: 1 << 40, MTime: -5, Chunks: 3, Model: "ollama:m", Pending: true, Skip: "binary content", Lens: []int64{1, 2, 3, 4, 5, 6}},
		{Size: 12, MTime: 1700000000123456789, Lens: []int64{0, 0, 0, 0, 0, 0}},
	} {
		got, err := decodeEntry(encodeEntry(e))
		if err != nil || !cmp.Equal(got, e) {
			t.Errorf("round trip of %+v: %+v, %v", e, got, err)
		}
		old, _ := json.Marshal(e)
		if got, err := decodeEntry(old); err != nil || !cmp.Equal(got, e) {
			t.Errorf("JSON %s: %+v, %v", old, got, err)
		}
	}
	for _, bad := range [][]byte{nil, {2}, {entryVersion, 0x80}, append(encodeEntry(fileEntry{Model: "abc"})[:12], 0xff)} {
		if _, err := decodeEntry(bad); err == nil {
			t.Errorf("decodeEntry(%v) accepted", bad)
		}
	}
}

func FuzzDecodeEntry(f *testing.F) {
	f.Add(encodeEntry(fileEntry{Size: 3, Lens: []int64{1, 2}, Skip: "x"}))
	f.Add([]byte(`{"s":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := decodeEntry(b)
		if err == nil && b[0] == entryVersion {
			if again, err := decodeEntry(encodeEntry(e)); err != nil || !cmp.Equal(again, e) {
				t.Errorf("re-encoding %+v: %+v, %v", e, again, err)
			}
		}
	})
}
