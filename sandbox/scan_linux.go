package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/internal/sandboxinit"
)

// op is one step of a commit or an undo: put the object at Src in place at
// Path (moving away what is there), delete Path, set Path's metadata, or
// move the live directory at From to Path (see renames_linux.go).
type op struct {
	Path string `json:"path"`
	Src  string `json:"src,omitempty"`  // object to move in; empty for delete and meta
	Tree bool   `json:"tree,omitempty"` // Src is a directory moved whole
	Meta *meta  `json:"meta,omitempty"` // metadata to set on a directory that stays
	From string `json:"from,omitempty"` // a move: the live directory moved to Path
	// Live is where the object at Path is before the transaction, when a
	// move in it brings it to Path.
	Live string `json:"live,omitempty"`
}

func (o op) isDelete() bool { return o.Src == "" && o.Meta == nil && o.From == "" }

// live is where the op's live object is before the transaction.
func (o op) live() string {
	switch {
	case o.From != "":
		return o.From
	case o.Live != "":
		return o.Live
	}
	return o.Path
}

// meta is the metadata nash sets on a directory that stays in place.
type meta struct {
	Mode uint32 `json:"mode"`
	UID  int    `json:"uid"`
	GID  int    `json:"gid"`
}

// scanner turns overlay upper dirs into a ChangeSet and the ops that commit
// it.
type scanner struct {
	cs  effects.ChangeSet
	ops []op
	// What renames_linux.go needs: the layer being read, the directories
	// the init moved (by the inode of their upper copy), and the live
	// directories moved elsewhere, whose whiteouts are no deletions.
	layer    sandboxinit.Layer
	moved    map[uint64]sandboxinit.Rename
	vacated  map[string]bool
	hasMoves bool
	// planted are the directories nash made in the upper dirs before the
	// run: their attributes there are not the script's doing.
	planted map[string]bool
}

// scanLayers reads every layer's upper dir; renames are the directories
// the init moved for the script. Changes come out sorted by path, ops in
// the order they must run (moves first, then parents before children).
func scanLayers(layers []sandboxinit.Layer, renames []sandboxinit.Rename, planted []string) (*effects.ChangeSet, []op, error) {
	sc := &scanner{}
	if len(planted) > 0 {
		sc.planted = make(map[string]bool, len(planted))
		for _, p := range planted {
			sc.planted[p] = true
		}
	}
	if len(renames) > 0 {
		sc.moved = make(map[uint64]sandboxinit.Rename, len(renames))
		for _, r := range renames {
			sc.moved[r.Ino] = r
		}
		sc.vacated = map[string]bool{}
	}
	for _, l := range layers {
		sc.layer = l
		if err := sc.dir(l.Upper, l.Point); err != nil {
			return nil, nil, err
		}
	}
	sc.finishMoves()
	sc.cs.Sort()
	return &sc.cs, sc.ops, nil
}

func (sc *scanner) add(kind effects.Kind, path string, before, after *effects.Object, metaNames []string) {
	sc.cs.Changes = append(sc.cs.Changes, effects.Change{Path: path, Kind: kind, Before: before, After: after, Meta: metaNames})
}

// dir walks a merged directory: one that exists both in the upper and live.
func (sc *scanner) dir(upperDir, liveDir string) error {
	entries, err := readDirNames(upperDir)
	if err != nil {
		return err
	}
	for _, name := range entries {
		u, l := filepath.Join(upperDir, name), filepath.Join(liveDir, name)
		var ust, lst unix.Stat_t
		if err := unix.Lstat(u, &ust); err != nil {
			return fmt.Errorf("scan %s: %w", u, err)
		}
		lexists := unix.Lstat(l, &lst) == nil
		if isWhiteout(u, &ust) {
			if lexists {
				if err := sc.deleted(l, &lst); err != nil {
					return err
				}
				sc.ops = append(sc.ops, op{Path: l})
			}
			continue
		}
		if isDir(&ust) {
			if done, err := sc.movedDir(u, &ust, l, lexists, &lst); done || err != nil {
				if err != nil {
					return err
				}
				continue
			}
			opaque := getXattr(u, overlayXattrPrefix+"opaque") == "y"
			switch {
			case !lexists:
				sc.add(effects.Created, l, nil, object(u, &ust), nil)
				if err := sc.created(u, l); err != nil {
					return err
				}
				sc.ops = append(sc.ops, op{Path: l, Src: u, Tree: true})
			case !isDir(&lst):
				sc.add(effects.TypeChanged, l, object(l, &lst), object(u, &ust), nil)
				if err := sc.created(u, l); err != nil {
					return err
				}
				sc.ops = append(sc.ops, op{Path: l, Src: u, Tree: true})
			case opaque:
				if names := metaDiff(u, &ust, l, &lst, false); len(names) > 0 {
					sc.add(effects.MetaChanged, l, object(l, &lst), object(u, &ust), names)
				}
				if err := sc.replaced(u, l); err != nil {
					return err
				}
				sc.ops = append(sc.ops, op{Path: l, Src: u, Tree: true})
			default:
				if names := metaDiff(u, &ust, l, &lst, false); len(names) > 0 && !sc.planted[l] {
					sc.add(effects.MetaChanged, l, object(l, &lst), object(u, &ust), names)
					sc.ops = append(sc.ops, op{Path: l, Meta: &meta{Mode: ust.Mode &^ unix.S_IFMT, UID: int(ust.Uid), GID: int(ust.Gid)}})
				}
				if err := sc.dir(u, l); err != nil {
					return err
				}
			}
			continue
		}
		switch {
		case !lexists:
			sc.add(effects.Created, l, nil, object(u, &ust), nil)
		case isDir(&lst):
			if err := sc.deletedChildren(l); err != nil {
				return err
			}
			sc.add(effects.TypeChanged, l, object(l, &lst), object(u, &ust), nil)
		case ust.Mode&unix.S_IFMT != lst.Mode&unix.S_IFMT:
			sc.add(effects.TypeChanged, l, object(l, &lst), object(u, &ust), nil)
		default:
			kind, names, err := compareObjects(u, &ust, l, &lst)
			if err != nil {
				return err
			}
			if kind == "" && !(ust.Mode&unix.S_IFMT == unix.S_IFREG && ust.Nlink > 1) {
				continue // copied up but unchanged: nothing to commit
			}
			// An unchanged file with other names in the upper was linked
			// to: it is committed too, or the link would be lost.
			if kind != "" {
				sc.add(kind, l, object(l, &lst), object(u, &ust), names)
			}
		}
		sc.ops = append(sc.ops, op{Path: l, Src: u})
	}
	return nil
}

// created lists everything below the new directory u as created at l.
func (sc *scanner) created(u, l string) error {
	names, err := readDirNames(u)
	if err != nil {
		return err
	}
	for _, n := range names {
		cu, cl := filepath.Join(u, n), filepath.Join(l, n)
		var st unix.Stat_t
		if err := unix.Lstat(cu, &st); err != nil {
			return fmt.Errorf("scan %s: %w", cu, err)
		}
		sc.add(effects.Created, cl, nil, object(cu, &st), nil)
		if isDir(&st) {
			if err := sc.created(cu, cl); err != nil {
				return err
			}
		}
	}
	return nil
}

// deleted lists l and, for a directory, everything below it as deleted.
func (sc *scanner) deleted(l string, st *unix.Stat_t) error {
	sc.add(effects.Deleted, l, object(l, st), nil, nil)
	if isDir(st) {
		return sc.deletedChildren(l)
	}
	return nil
}

func (sc *scanner) deletedChildren(l string) error {
	names, err := readDirNames(l)
	if err != nil {
		return nil // unreadable: the directory itself is listed
	}
	for _, n := range names {
		c := filepath.Join(l, n)
		var st unix.Stat_t
		if unix.Lstat(c, &st) == nil {
			if err := sc.deleted(c, &st); err != nil {
				return err
			}
		}
	}
	return nil
}

// replaced compares an opaque upper directory u with the live directory l it
// replaces whole.
func (sc *scanner) replaced(u, l string) error {
	un, err := readDirNames(u)
	if err != nil {
		return err
	}
	ln, _ := readDirNames(l)
	inUpper := map[string]bool{}
	for _, n := range un {
		inUpper[n] = true
	}
	for _, n := range ln {
		if !inUpper[n] {
			c := filepath.Join(l, n)
			var st unix.Stat_t
			if unix.Lstat(c, &st) == nil {
				if err := sc.deleted(c, &st); err != nil {
					return err
				}
			}
		}
	}
	for _, n := range un {
		cu, cl := filepath.Join(u, n), filepath.Join(l, n)
		var ust, lst unix.Stat_t
		if err := unix.Lstat(cu, &ust); err != nil {
			return fmt.Errorf("scan %s: %w", cu, err)
		}
		if unix.Lstat(cl, &lst) != nil {
			sc.add(effects.Created, cl, nil, object(cu, &ust), nil)
			if isDir(&ust) {
				if err := sc.created(cu, cl); err != nil {
					return err
				}
			}
			continue
		}
		switch {
		case isDir(&ust) && isDir(&lst):
			if names := metaDiff(cu, &ust, cl, &lst, false); len(names) > 0 {
				sc.add(effects.MetaChanged, cl, object(cl, &lst), object(cu, &ust), names)
			}
			if err := sc.replaced(cu, cl); err != nil {
				return err
			}
		case ust.Mode&unix.S_IFMT != lst.Mode&unix.S_IFMT:
			sc.add(effects.TypeChanged, cl, object(cl, &lst), object(cu, &ust), nil)
			if isDir(&lst) {
				if err := sc.deletedChildren(cl); err != nil {
					return err
				}
			}
			if isDir(&ust) {
				if err := sc.created(cu, cl); err != nil {
					return err
				}
			}
		default:
			kind, names, err := compareObjects(cu, &ust, cl, &lst)
			if err != nil {
				return err
			}
			if kind != "" {
				sc.add(kind, cl, object(cl, &lst), object(cu, &ust), names)
			}
		}
	}
	return nil
}

// compareObjects compares two objects of the same non-directory type.
func compareObjects(u string, ust *unix.Stat_t, l string, lst *unix.Stat_t) (effects.Kind, []string, error) {
	names := metaDiff(u, ust, l, lst, true)
	content := false
	switch ust.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		if ust.Size != lst.Size {
			content = true
		} else if ust.Ino != lst.Ino || ust.Dev != lst.Dev {
			same, err := sameContent(u, l, ust.Size)
			if err != nil {
				return "", nil, err
			}
			content = !same
		}
	case unix.S_IFLNK:
		a, _ := os.Readlink(u)
		b, _ := os.Readlink(l)
		if a != b {
			names = append(names, "target")
		}
	}
	if content {
		return effects.Modified, withoutMtime(names), nil
	}
	if len(names) > 0 {
		return effects.MetaChanged, names, nil
	}
	return "", nil, nil
}

func withoutMtime(names []string) []string {
	out := names[:0]
	for _, n := range names {
		if n != "mtime" {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// metaDiff names the metadata that differs: mode, owner, xattrs and, for
// non-directories, mtime.
func metaDiff(u string, ust *unix.Stat_t, l string, lst *unix.Stat_t, withMtime bool) []string {
	var names []string
	if ust.Mode&^unix.S_IFMT != lst.Mode&^unix.S_IFMT && ust.Mode&unix.S_IFMT != unix.S_IFLNK {
		names = append(names, "mode")
	}
	if ust.Uid != lst.Uid || ust.Gid != lst.Gid {
		names = append(names, "owner")
	}
	if !sameXattrs(u, l) {
		names = append(names, "xattr")
	}
	if withMtime && ust.Mode&unix.S_IFMT != unix.S_IFLNK && (ust.Mtim.Sec != lst.Mtim.Sec || ust.Mtim.Nsec != lst.Mtim.Nsec) {
		names = append(names, "mtime")
	}
	return names
}

// sameXattrs compares the user-visible xattrs (not overlayfs's own).
func sameXattrs(u, l string) bool {
	un, _ := listXattrs(u)
	ln, _ := listXattrs(l)
	var a, b []string
	for _, n := range un {
		if !strings.HasPrefix(n, overlayXattrPrefix) {
			a = append(a, n)
		}
	}
	for _, n := range ln {
		if !strings.HasPrefix(n, overlayXattrPrefix) {
			b = append(b, n)
		}
	}
	if len(a) != len(b) {
		return false
	}
	sort.Strings(a)
	sort.Strings(b)
	for i := range a {
		if a[i] != b[i] {
			return false
		}
		va, vb := make([]byte, 64*1024), make([]byte, 64*1024)
		na, errA := unix.Lgetxattr(u, a[i], va)
		nb, errB := unix.Lgetxattr(l, b[i], vb)
		if errA != nil || errB != nil || !bytes.Equal(va[:na], vb[:nb]) {
			return false
		}
	}
	return true
}

// sameContent compares the contents of two files of the given size.
func sameContent(a, b string, size int64) (bool, error) {
	fa, err := os.Open(a)
	if err != nil {
		return false, fmt.Errorf("compare %s: %w", a, err)
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		// Unreadable live file: the copy-up could read it, so treat as
		// changed rather than claim sameness we cannot check.
		return false, nil
	}
	defer fb.Close()
	// Buffers as big as the files, up to 64 KiB: most are small, and a
	// renamed directory's thousands of files are each compared.
	n := int(min(size+1, 64*1024))
	ba, bb := make([]byte, n), make([]byte, n)
	for {
		na, ea := io.ReadFull(fa, ba)
		nb, eb := io.ReadFull(fb, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false, nil
		}
		if errors.Is(ea, io.EOF) || errors.Is(ea, io.ErrUnexpectedEOF) {
			return errors.Is(eb, io.EOF) || errors.Is(eb, io.ErrUnexpectedEOF), nil
		}
		if ea != nil {
			return false, fmt.Errorf("compare %s: %w", a, ea)
		}
		if eb != nil {
			return false, nil
		}
	}
}

// isWhiteout recognizes both whiteout forms: a 0/0 character device, and a
// zero-size regular file carrying the overlay whiteout xattr.
func isWhiteout(p string, st *unix.Stat_t) bool {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFCHR:
		return st.Rdev == 0
	case unix.S_IFREG:
		if st.Size != 0 {
			return false
		}
		var b [1]byte
		_, err := unix.Lgetxattr(p, overlayXattrPrefix+"whiteout", b[:])
		return err == nil || errors.Is(err, unix.ERANGE)
	}
	return false
}

func isDir(st *unix.Stat_t) bool { return st.Mode&unix.S_IFMT == unix.S_IFDIR }

// object describes the object at p for a change.
func object(p string, st *unix.Stat_t) *effects.Object {
	mode := fs.FileMode(st.Mode & 0o777)
	if st.Mode&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if st.Mode&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if st.Mode&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	o := &effects.Object{Type: fileType(st), Size: st.Size, Mode: mode, UID: int(st.Uid), GID: int(st.Gid)}
	if o.Type == effects.TypeSymlink {
		o.Target, _ = os.Readlink(p)
	}
	return o
}

func fileType(st *unix.Stat_t) effects.FileType {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		return effects.TypeFile
	case unix.S_IFDIR:
		return effects.TypeDir
	case unix.S_IFLNK:
		return effects.TypeSymlink
	case unix.S_IFIFO:
		return effects.TypeFIFO
	case unix.S_IFSOCK:
		return effects.TypeSocket
	}
	return effects.TypeDevice
}

// readDirNames lists a directory's entries in name order.
func readDirNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", dir, err)
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", dir, err)
	}
	sort.Strings(names)
	return names, nil
}
