// Package fstree records what a directory tree holds (types, modes,
// contents, symlink targets, hard links; not times) and compares two
// records. Tests use
// it to check that the sandbox leaves trees exactly as a native run would.
package fstree

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
)

// Entry is what a snapshot records of one path.
type Entry struct {
	Type   string
	Mode   fs.FileMode
	Hash   string // of a regular file's content, up to HashLimit bytes
	Target string // of a symlink
	Size   int64
	// Links is how many names in the tree the object has (not counting
	// directories, and not names outside the tree, which a tree does not
	// own).
	Links int
}

func (e Entry) String() string {
	return fmt.Sprintf("%s %v size=%d hash=%s target=%q links=%d", e.Type, e.Mode, e.Size, e.Hash, e.Target, e.Links)
}

// HashLimit bounds the files whose content is hashed; larger ones are
// compared by size only.
const HashLimit = 64 << 20

// Tree maps paths relative to the snapshot's root to entries.
type Tree map[string]Entry

// Snapshot records every path below root. Times are left out: they
// legitimately differ between two runs of the same command.
func Snapshot(root string) (Tree, error) {
	out := Tree{}
	type inode struct{ dev, ino uint64 }
	names := map[inode][]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		e := Entry{Mode: fi.Mode(), Size: fi.Size()}
		switch {
		case fi.IsDir():
			e.Type, e.Size = "dir", 0
		case fi.Mode().IsRegular():
			e.Type = "file"
			if fi.Size() <= HashLimit {
				b, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				h := sha256.Sum256(b)
				e.Hash = hex.EncodeToString(h[:8])
			}
		case fi.Mode()&fs.ModeSymlink != 0:
			e.Type = "symlink"
			e.Target, _ = os.Readlink(p)
		default:
			e.Type = fi.Mode().Type().String()
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && !fi.IsDir() {
			k := inode{uint64(st.Dev), st.Ino}
			names[k] = append(names[k], rel)
		}
		out[rel] = e
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", root, err)
	}
	for _, ps := range names {
		for _, p := range ps {
			e := out[p]
			e.Links = len(ps)
			out[p] = e
		}
	}
	return out, nil
}

// Diff describes how got differs from want, one line per path (at most 20
// lines), or returns "" when they are the same.
func Diff(want, got Tree) string {
	var lines []string
	for p, w := range want {
		g, ok := got[p]
		switch {
		case !ok:
			lines = append(lines, fmt.Sprintf("missing %q (%v)", p, w))
		case g != w:
			lines = append(lines, fmt.Sprintf("differs %q: want %v, got %v", p, w, g))
		}
	}
	for p, g := range got {
		if _, ok := want[p]; !ok {
			lines = append(lines, fmt.Sprintf("extra %q (%v)", p, g))
		}
	}
	sort.Strings(lines)
	if len(lines) > 20 {
		lines = append(lines[:20], fmt.Sprintf("... and %d more", len(lines)-20))
	}
	return strings.Join(lines, "\n")
}
