package index

import (
	"encoding/binary"
	"encoding/json"
	"errors"
)

// A catalog entry is stored compactly: a re-scan of an unchanged tree reads
// one per file, and decoding JSON cost as much as the lstat of the file.
// Entries written by earlier versions are JSON (they start with '{').

// entryVersion starts an entry in the binary layout.
const entryVersion = 1

// errBadEntry is a catalog entry that does not decode.
var errBadEntry = errors.New("bad catalog entry")

// encodeEntry lays an entry out as: version, size, mtime, chunks, flags
// (1 pending), the count of lengths and each, then model and skip
// reason as length-prefixed strings.
func encodeEntry(e fileEntry) []byte {
	b := make([]byte, 0, 32+len(e.Model)+len(e.Skip)+8*len(e.Lens))
	b = append(b, entryVersion)
	b = binary.AppendVarint(b, e.Size)
	b = binary.AppendVarint(b, e.MTime)
	b = binary.AppendUvarint(b, uint64(e.Chunks))
	var flags uint64
	if e.Pending {
		flags |= 1
	}
	b = binary.AppendUvarint(b, flags)
	b = binary.AppendUvarint(b, uint64(len(e.Lens)))
	for _, n := range e.Lens {
		b = binary.AppendVarint(b, n)
	}
	b = binary.AppendUvarint(b, uint64(len(e.Model)))
	b = append(b, e.Model...)
	b = binary.AppendUvarint(b, uint64(len(e.Skip)))
	b = append(b, e.Skip...)
	return b
}

// decodeEntry reads an entry in either layout.
func decodeEntry(b []byte) (fileEntry, error) {
	var e fileEntry
	if len(b) > 0 && b[0] == '{' {
		err := json.Unmarshal(b, &e)
		return e, err
	}
	if len(b) == 0 || b[0] != entryVersion {
		return e, errBadEntry
	}
	b = b[1:]
	bad := false
	varint := func() int64 {
		v, n := binary.Varint(b)
		if n <= 0 {
			bad = true
			return 0
		}
		b = b[n:]
		return v
	}
	uvarint := func() uint64 {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			bad = true
			return 0
		}
		b = b[n:]
		return v
	}
	str := func() string {
		n := uvarint()
		if bad || n > uint64(len(b)) {
			bad = true
			return ""
		}
		s := string(b[:n])
		b = b[n:]
		return s
	}
	e.Size = varint()
	e.MTime = varint()
	e.Chunks = int(uvarint())
	e.Pending = uvarint()&1 != 0
	if n := uvarint(); n > 0 && n <= 64 {
		e.Lens = make([]int64, n)
		for i := range e.Lens {
			e.Lens[i] = varint()
		}
	} else if n > 64 {
		bad = true
	}
	e.Model = str()
	e.Skip = str()
	if bad || len(b) > 0 {
		return fileEntry{}, errBadEntry
	}
	return e, nil
}
