package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/nash-shell/nash/effects"
)

// A directory that existed before the run and that the script renamed is
// seen in the upper dir as a directory of the upper layer alone (the
// init's copy, found by its inode: sandboxinit.Rename) where it now is,
// and a whiteout where it was. Read plainly, that is every entry deleted
// and created again; nash reads it as what it was: one rename, and the
// changes made inside since, which commit carries out as such. The live
// directory moves whole (a rename on the live file system, so every file
// in it keeps its inode, hard links included), and only what changed
// inside it is put in place.
//
// nash reads a rename so when the directory's new place lies directly in
// a directory that stays (not inside a new one) and its old place is
// empty at the end; otherwise (moved into a new directory, or something
// new put where it was) it falls back to deletions and creations, which
// commit to the same tree.

// movedDir handles the upper directory u at the live path l when it is a
// copy the init made of a live directory. It reports whether it did.
func (sc *scanner) movedDir(u string, ust *unix.Stat_t, l string, lexists bool, lst *unix.Stat_t) (bool, error) {
	r, ok := sc.moved[ust.Ino]
	if !ok {
		return false, nil
	}
	from := r.From
	if from == l {
		// Copied where it stood (its rename failed, or it came back):
		// entry by entry against the live directory, not as a whole new
		// tree.
		if !lexists || !isDir(lst) {
			return false, nil
		}
		if names := metaDiff(u, ust, l, lst, false); len(names) > 0 {
			sc.add(effects.MetaChanged, l, object(l, lst), object(u, ust), names)
			sc.ops = append(sc.ops, op{Path: l, Meta: &meta{Mode: ust.Mode &^ unix.S_IFMT, UID: int(ust.Uid), GID: int(ust.Gid)}})
		}
		return true, sc.inner(u, l, l)
	}
	if lexists && !emptyDir(l) || sc.vacated[from] || !sc.whiteoutAt(from) {
		return false, nil // its place was taken (but for an empty directory), or its old one is
	}
	var fst unix.Stat_t
	if unix.Lstat(from, &fst) != nil || !isDir(&fst) {
		return false, nil
	}
	sc.vacated[from] = true
	sc.hasMoves = true
	names := metaDiff(u, ust, from, &fst, false)
	sc.cs.Changes = append(sc.cs.Changes, effects.Change{Path: l, Kind: effects.Renamed, From: from, Before: object(from, &fst), After: object(u, ust), Meta: names})
	sc.ops = append(sc.ops, op{Path: l, From: from})
	if len(names) > 0 {
		sc.ops = append(sc.ops, op{Path: l, Live: from, Meta: &meta{Mode: ust.Mode &^ unix.S_IFMT, UID: int(ust.Uid), GID: int(ust.Gid)}})
	}
	return true, sc.inner(u, from, l)
}

// whiteoutAt reports whether the live path p, in the layer being read, is
// a whiteout in a chain of merged directories of the upper dir: deleted,
// and nothing put there since.
func (sc *scanner) whiteoutAt(p string) bool {
	pt := sc.layer.Point
	if p == pt || !under(p, pt) {
		return false
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(p, pt), "/")
	parts := strings.Split(rel, "/")
	up := sc.layer.Upper
	for _, name := range parts[:len(parts)-1] {
		up = filepath.Join(up, name)
		var st unix.Stat_t
		if unix.Lstat(up, &st) != nil || !isDir(&st) || getXattr(up, overlayXattrPrefix+"opaque") == "y" {
			return false
		}
	}
	w := filepath.Join(up, parts[len(parts)-1])
	var st unix.Stat_t
	return unix.Lstat(w, &st) == nil && isWhiteout(w, &st)
}

// inner compares the upper directory u, which holds all its entries, with
// the live directory l it stands for, and adds the changes and ops at the
// path final, where l's entries will be once l has moved there.
func (sc *scanner) inner(u, l, final string) error {
	un, err := readDirNames(u)
	if err != nil {
		return err
	}
	ln, _ := readDirNames(l)
	inUpper := make(map[string]bool, len(un))
	for _, n := range un {
		inUpper[n] = true
	}
	for _, n := range ln {
		if inUpper[n] {
			continue
		}
		if err := sc.deletedInner(filepath.Join(l, n), filepath.Join(final, n)); err != nil {
			return err
		}
	}
	for _, n := range un {
		cu, cl, cf := filepath.Join(u, n), filepath.Join(l, n), filepath.Join(final, n)
		var ust, lst unix.Stat_t
		if err := unix.Lstat(cu, &ust); err != nil {
			return err
		}
		lexists := unix.Lstat(cl, &lst) == nil
		if isWhiteout(cu, &ust) {
			if lexists {
				if err := sc.deletedInner(cl, cf); err != nil {
					return err
				}
			}
			continue
		}
		switch {
		case !lexists:
			sc.add(effects.Created, cf, nil, object(cu, &ust), nil)
			if isDir(&ust) {
				if err := sc.created(cu, cf); err != nil {
					return err
				}
			}
			sc.ops = append(sc.ops, op{Path: cf, Src: cu, Tree: isDir(&ust)})
		case isDir(&ust) && isDir(&lst):
			if names := metaDiff(cu, &ust, cl, &lst, false); len(names) > 0 {
				sc.add(effects.MetaChanged, cf, object(cl, &lst), object(cu, &ust), names)
				sc.ops = append(sc.ops, op{Path: cf, Live: cl, Meta: &meta{Mode: ust.Mode &^ unix.S_IFMT, UID: int(ust.Uid), GID: int(ust.Gid)}})
			}
			if err := sc.inner(cu, cl, cf); err != nil {
				return err
			}
		case ust.Mode&unix.S_IFMT != lst.Mode&unix.S_IFMT:
			sc.add(effects.TypeChanged, cf, object(cl, &lst), object(cu, &ust), nil)
			if isDir(&lst) {
				if err := sc.deletedChildrenInner(cl, cf); err != nil {
					return err
				}
			}
			if isDir(&ust) {
				if err := sc.created(cu, cf); err != nil {
					return err
				}
			}
			sc.ops = append(sc.ops, op{Path: cf, Src: cu, Tree: isDir(&ust), Live: cl})
		default:
			kind, names, err := compareObjects(cu, &ust, cl, &lst)
			if err != nil {
				return err
			}
			if kind == "" && !(ust.Mode&unix.S_IFMT == unix.S_IFREG && ust.Nlink > 1) {
				continue // the live object, moved along, is the same
			}
			if kind != "" {
				sc.add(kind, cf, object(cl, &lst), object(cu, &ust), names)
			}
			sc.ops = append(sc.ops, op{Path: cf, Src: cu, Live: cl})
		}
	}
	return nil
}

// deletedInner lists the live object l, and everything below it, as
// deleted at final, with the op that deletes it there.
func (sc *scanner) deletedInner(l, final string) error {
	var st unix.Stat_t
	if unix.Lstat(l, &st) != nil {
		return nil
	}
	sc.add(effects.Deleted, final, object(l, &st), nil, nil)
	if isDir(&st) {
		if err := sc.deletedChildrenInner(l, final); err != nil {
			return err
		}
	}
	sc.ops = append(sc.ops, op{Path: final, Live: l})
	return nil
}

func (sc *scanner) deletedChildrenInner(l, final string) error {
	names, err := readDirNames(l)
	if err != nil {
		return nil // unreadable: the directory itself is listed
	}
	for _, n := range names {
		c, f := filepath.Join(l, n), filepath.Join(final, n)
		var st unix.Stat_t
		if unix.Lstat(c, &st) != nil {
			continue
		}
		sc.add(effects.Deleted, f, object(c, &st), nil, nil)
		if isDir(&st) {
			if err := sc.deletedChildrenInner(c, f); err != nil {
				return err
			}
		}
	}
	return nil
}

// finishMoves drops the deletions of the directories moved elsewhere
// (their whiteouts were read as such) and puts the moves first among the
// ops: everything else is relative to where they put the live
// directories.
func (sc *scanner) finishMoves() {
	if !sc.hasMoves {
		return
	}
	gone := func(p string) bool {
		for q := p; ; q = filepath.Dir(q) {
			if sc.vacated[q] {
				return true
			}
			if q == "/" || q == "." {
				return false
			}
		}
	}
	ops := sc.ops[:0]
	for _, o := range sc.ops {
		if o.isDelete() && o.Live == "" && sc.vacated[o.Path] {
			continue
		}
		ops = append(ops, o)
	}
	sc.ops = ops
	changes := sc.cs.Changes[:0]
	for _, c := range sc.cs.Changes {
		if c.Kind == effects.Deleted && gone(c.Path) {
			continue
		}
		changes = append(changes, c)
	}
	sc.cs.Changes = changes
	sort.SliceStable(sc.ops, func(i, j int) bool { return sc.ops[i].From != "" && sc.ops[j].From == "" })
}

// Commit and undo of moves. A move op renames the live directory From to
// Path. Moves run first, in a phase of their own (applyMoves), so that the
// ops below a moved directory find it where they expect it; their Live
// path says where their object is before, for what is checked and kept
// before anything moves. Rolling back runs newest first, so the ops below
// a moved directory are undone before it moves back.

// pre is where a journal op's live object is before the transaction.
func (o walOp) pre() string {
	if o.Live != "" {
		return o.Live
	}
	return o.Path
}

// keepMovedOver prepares a move onto an empty directory, which is kept in
// the undo layer as the i-th object.
func keepMovedOver(o *walOp, objects string, i int, layerDev uint64) {
	var st unix.Stat_t
	if unix.Lstat(o.Path, &st) != nil {
		return
	}
	o.PreExists, o.PreDir = true, isDir(&st)
	o.Stash = filepath.Join(objects, strconv.Itoa(i))
	o.XStash = st.Dev != layerDev
}

// movedAway reports whether what is at o's path before the transaction
// is a directory the transaction moves away first, so that nothing is
// there for o to replace.
func movedAway(w *wal, o *walOp) bool {
	if o.Live != "" {
		return false
	}
	for _, m := range w.Ops {
		if m.From != "" && under(o.Path, m.From) {
			return true
		}
	}
	return false
}

// movedOverSame reports whether a move's place is as it was when the run
// ended: free, or the same empty directory.
func movedOverSame(pre map[string]fingerprint, p string) bool {
	fp, ok := pre[p]
	if !ok {
		fp = fingerprint{Absent: true}
	}
	return fp.matches(fingerprintOf(p))
}

// applyMoves carries out a journal's moves, keeping first in the undo
// layer any empty directory one replaces, then syncs, so that no later
// phase lands on disk before them.
func applyMoves(w *wal, syncSet map[uint64]string) error {
	n := 0
	for _, o := range w.Ops {
		if o.From == "" {
			continue
		}
		if o.Stash != "" {
			if err := keepOld(o); err != nil {
				return err
			}
		}
		if err := renameNoSymlinks(o.From, o.Path, unix.RENAME_NOREPLACE); err != nil {
			return fmt.Errorf("move %s to %s: %w", o.From, o.Path, err)
		}
		if o.Src != "" {
			if err := restoreMovedOver(o); err != nil {
				return err
			}
		}
		n++
	}
	if n == 0 {
		return nil
	}
	return syncAll(syncSet)
}

// keepOld moves (or, across file systems, copies) what a move replaces
// into the undo layer.
func keepOld(o walOp) error {
	if !o.XStash {
		if err := renameNoSymlinks(o.Path, o.Stash, unix.RENAME_NOREPLACE); err != nil {
			return fmt.Errorf("keep old version of %s: %w", o.Path, err)
		}
		return nil
	}
	if err := copyFromLive(o.Path, o.Stash+".tmp"); err != nil {
		return fmt.Errorf("keep old version of %s: %w", o.Path, err)
	}
	if err := os.Rename(o.Stash+".tmp", o.Stash); err != nil {
		return fmt.Errorf("keep old version of %s: %w", o.Path, err)
	}
	if err := syncDir(filepath.Dir(o.Stash)); err != nil {
		return err
	}
	return removeLive(o.Path)
}

// restoreMovedOver puts back, where an undo moved a directory away from,
// the empty directory the commit's move had replaced (o.Src).
func restoreMovedOver(o walOp) error {
	if !o.XApply {
		if err := renameNoSymlinks(o.Src, o.From, unix.RENAME_NOREPLACE); err != nil {
			return fmt.Errorf("put %s back: %w", o.From, err)
		}
		return nil
	}
	if err := copyIntoLive(o.Src, o.From, newSuffix, false); err != nil {
		return fmt.Errorf("put %s back: %w", o.From, err)
	}
	return nil
}

// rollbackMove moves a directory back, if it moved, and puts back what
// it replaced. Each step looks first, so it can run again.
func rollbackMove(o walOp) error {
	exists := func(p string) bool { var st unix.Stat_t; return unix.Lstat(p, &st) == nil }
	if o.Src != "" {
		// Undo restoreMovedOver: the object goes back where it came from.
		_ = removeLive(o.From + newSuffix)
		if exists(o.Path) && exists(o.From) {
			if o.XApply {
				if err := removeLive(o.From); err != nil {
					return err
				}
			} else if !exists(o.Src) {
				if err := renameNoSymlinks(o.From, o.Src, unix.RENAME_NOREPLACE); err != nil {
					return fmt.Errorf("roll back %s: %w", o.From, err)
				}
			}
		}
	}
	if !exists(o.From) && exists(o.Path) {
		if err := renameNoSymlinks(o.Path, o.From, unix.RENAME_NOREPLACE); err != nil {
			return fmt.Errorf("roll back move of %s: %w", o.From, err)
		}
	}
	if o.Stash == "" {
		return nil
	}
	_ = removeAll(o.Stash + ".tmp")
	if !exists(o.Stash) || exists(o.Path) {
		return nil
	}
	if o.XStash {
		if err := copyIntoLive(o.Stash, o.Path, oldSuffix, false); err != nil {
			return fmt.Errorf("roll back %s: %w", o.Path, err)
		}
		return removeAll(o.Stash)
	}
	if err := renameNoSymlinks(o.Stash, o.Path, unix.RENAME_NOREPLACE); err != nil {
		return fmt.Errorf("roll back %s: %w", o.Path, err)
	}
	return nil
}

// keepMoved widens a selection of ops: a chosen move takes everything
// below where it puts the directory, and an op chosen below a move's
// place takes the move, without which it has nothing to act on.
func keepMoved(ops []op, keep []bool) {
	for i, m := range ops {
		if m.From == "" {
			continue
		}
		for j, o := range ops {
			if j != i && keep[j] && under(o.Path, m.Path) {
				keep[i] = true
			}
		}
		if !keep[i] {
			continue
		}
		for j, o := range ops {
			if under(o.Path, m.Path) {
				keep[j] = true
			}
		}
	}
}

// withMoved widens an undo's selection of records the same way, keeping
// the records' order (moves first).
func withMoved(records []opRecord, undone map[int]string, sel []opRecord) []opRecord {
	ops := make([]op, len(records))
	keep := make([]bool, len(records))
	chosen := map[int]bool{}
	for _, r := range sel {
		chosen[r.Index] = true
	}
	for i, r := range records {
		ops[i] = op{Path: r.Path}
		if r.Kind == "move" {
			ops[i].From = r.From
		}
		keep[i] = chosen[r.Index]
	}
	keepMoved(ops, keep)
	var out []opRecord
	for i, r := range records {
		if _, done := undone[r.Index]; keep[i] && !done {
			out = append(out, r)
		}
	}
	return out
}

// backMoves are the moves an undo makes: each record's Path goes back to
// its From.
type backMoves []opRecord

func movesBack(sel []opRecord) backMoves {
	var b backMoves
	for _, r := range sel {
		if r.Kind == "move" {
			b = append(b, r)
		}
	}
	return b
}

// place is where an undo op on the committed path p acts once the
// directories are moved back, and, when that differs, p itself: where its
// object is until then.
func (b backMoves) place(p string) (path, live string) {
	for _, m := range b {
		if under(p, m.Path) {
			return m.From + strings.TrimPrefix(p, m.Path), p
		}
	}
	return p, ""
}
