package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// fingerprint identifies what nash left at a path, to detect later changes.
type fingerprint struct {
	Absent bool   `json:"absent,omitempty"`
	Ino    uint64 `json:"ino,omitempty"`
	Size   int64  `json:"size,omitempty"`
	Mtime  int64  `json:"mtime,omitempty"`
	Ctime  int64  `json:"ctime,omitempty"`
	Mode   uint32 `json:"mode,omitempty"`
	UID    uint32 `json:"uid,omitempty"`
	GID    uint32 `json:"gid,omitempty"`
	Hash   string `json:"hash,omitempty"` // sha256 of small regular files
}

// hashLimit bounds the files whose content is hashed into a fingerprint.
const hashLimit = 64 * 1024

// matches compares the parts of a fingerprint that nash's own moves keep:
// ctime changes when an undo renames the same object back, so it is
// recorded but not compared; the hash stands in for it on small files.
func (f fingerprint) matches(g fingerprint) bool {
	return f.Absent == g.Absent && f.Ino == g.Ino && f.Size == g.Size && f.Mtime == g.Mtime &&
		f.Mode == g.Mode && f.UID == g.UID && f.GID == g.GID && f.Hash == g.Hash
}

func fingerprintOf(p string) fingerprint {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return fingerprint{Absent: true}
	}
	f := fingerprint{Ino: st.Ino, Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(), Mode: st.Mode, UID: st.Uid, GID: st.Gid}
	if isDir(&st) {
		f.Mtime = 0 // a directory's mtime moves with its entries, which are fingerprinted themselves
	}
	if st.Mode&unix.S_IFMT == unix.S_IFREG && st.Size <= hashLimit {
		if b, err := os.ReadFile(p); err == nil {
			h := sha256.Sum256(b)
			f.Hash = hex.EncodeToString(h[:8])
		}
	}
	return f
}

// fileFP fingerprints one path below a tree operation's root.
type fileFP struct {
	Rel string      `json:"rel"`
	FP  fingerprint `json:"fp"`
}

func treeFingerprints(root string) []fileFP {
	var out []fileFP
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == root {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		out = append(out, fileFP{Rel: rel, FP: fingerprintOf(p)})
		return nil
	})
	return out
}
