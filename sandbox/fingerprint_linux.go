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
	// CtimeKept says Ctime counts: nash records fingerprints again where
	// its own moves change a ctime (undoing an undo). Older records lack
	// it, and their ctime is not compared.
	CtimeKept bool `json:"ctime_kept,omitempty"`
}

// hashLimit bounds the files whose content is hashed into a fingerprint.
const hashLimit = 64 * 1024

// matches compares two fingerprints of a path. The ctime counts when both
// record it (CtimeKept), but not for a directory, whose times move with its
// entries, which are fingerprinted themselves: it catches an edit that
// keeps size and mtime in a file too big to hash. Fingerprints are taken
// again after nash's own moves of an object (refingerprint), whose renames
// change the ctime too.
func (f fingerprint) matches(g fingerprint) bool {
	return f.Absent == g.Absent && f.Ino == g.Ino && f.Size == g.Size && f.Mtime == g.Mtime &&
		f.Mode == g.Mode && f.UID == g.UID && f.GID == g.GID && f.Hash == g.Hash &&
		(!f.CtimeKept || !g.CtimeKept || f.Mode&unix.S_IFMT == unix.S_IFDIR || f.Ctime == g.Ctime)
}

// sameObject reports whether two fingerprints are of the same object,
// unchanged but for its ctime, which a rename back and forth changes.
func (f fingerprint) sameObject(g fingerprint) bool {
	f.Ctime, g.Ctime = 0, 0
	return f.matches(g)
}

// refingerprint fingerprints anew, after a rolled-back transaction, the
// paths whose fingerprints nash compares later: the run's (for its
// commit) or the undone transaction's (for its undo). The roll-back moved
// the same objects away and back, which changes only their ctime; or it
// copied them back (copied, by op index), which gives them a new inode.
// Either way the object is what was recorded.
func (s *Sandbox) refingerprint(w *wal, copied map[int]bool) {
	l := s.layout()
	switch w.Kind {
	case "commit":
		f := filepath.Join(l.runDir(w.Run), runFile)
		var rec runRecord
		if readGob(f, &rec) != nil {
			return
		}
		changed := false
		for i, o := range w.Ops {
			// Where the op's live object was before (and is again).
			p := o.pre()
			if o.From != "" {
				p = o.From
			}
			if fp, ok := rec.Pre[p]; ok {
				if live := fingerprintOf(p); (copied[i] || fp.sameObject(live)) && fp != live {
					rec.Pre[p], changed = live, true
				}
			}
		}
		if changed {
			_ = writeGobVolatile(f, &rec)
		}
	case "undo":
		f := filepath.Join(l.layerDir(w.Undoes), manifestFile)
		recs, err := readManifest(f)
		if err != nil {
			return
		}
		changed := false
		for i, o := range w.Ops {
			if o.UndoOf < 0 || o.UndoOf >= len(recs) {
				continue
			}
			r := &recs[o.UndoOf]
			if live := fingerprintOf(r.Path); (copied[i] || r.Post.sameObject(live)) && r.Post != live {
				r.Post, changed = live, true
				if r.Tree {
					r.Files = treeFingerprints(r.Path)
				}
			}
		}
		if changed {
			_ = writeManifestAtomic(f, recs)
		}
	}
}

func fingerprintOf(p string) fingerprint {
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		return fingerprint{Absent: true}
	}
	f := fingerprint{Ino: st.Ino, Size: st.Size, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano(), CtimeKept: true, Mode: st.Mode, UID: st.Uid, GID: st.Gid}
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
