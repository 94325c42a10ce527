package sandbox

// The write-ahead journal: a transaction's operations are written whole
// before anything moves, then applied in two phases (stash, apply), and
// rolled back from the journal when they cannot all take effect.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// File names inside a run dir and a layer dir.
const (
	runFile      = "run.gob"
	manifestFile = "manifest.gob"
	changesFile  = "changes.gob"
)

// wal is the write-ahead journal of one transaction: every operation with
// enough state to tell, after a crash, how far it got and how to undo it.
type wal struct {
	Tx     string  `json:"tx"`
	Kind   string  `json:"kind"` // "commit" or "undo"
	Run    string  `json:"run,omitempty"`
	Undoes string  `json:"undoes,omitempty"`
	Ops    []walOp `json:"ops"`
}

type walOp struct {
	// The operation (see op); flat, because gob ignores embedded
	// unexported structs.
	Path      string
	Src       string
	Tree      bool
	Meta      *meta
	From      string `json:"from,omitempty"`  // a move's source (renames_linux.go)
	Live      string `json:"live,omitempty"`  // where Path's object is before the moves
	Stash     string `json:"stash,omitempty"` // where the displaced live object goes
	PreExists bool   `json:"pre_exists"`
	PreDir    bool   `json:"pre_dir,omitempty"`
	XStash    bool   `json:"xstash,omitempty"` // stash crosses file systems: copy
	XApply    bool   `json:"xapply,omitempty"` // apply crosses file systems: copy
	// InPlace writes the new content into the live inode, because other
	// hard links share it; the old content is stashed as a copy.
	InPlace bool  `json:"in_place,omitempty"`
	OldMeta *meta `json:"old_meta,omitempty"`
	UndoOf  int   `json:"undo_of"` // for an undo: the index of the op it reverses
}

// execute runs a transaction's operations under its journal and returns
// what the undo layer must remember. On failure it rolls back, so the live
// files are as before.
func (s *Sandbox) execute(w *wal) ([]opRecord, error) {
	l := s.layout()
	locks, err := l.readLocks()
	if err != nil {
		return nil, err
	}
	changes := make([]change, len(w.Ops))
	for i, o := range w.Ops {
		changes[i] = change{Path: o.Path, Subtree: o.Tree || o.Src == "" && o.Meta == nil}
		if o.From != "" {
			changes = append(changes, change{Path: o.From, Subtree: true})
		}
	}
	if hit := lockedBy(locks, changes); len(hit) > 0 {
		return nil, &LockedError{Paths: hit}
	}
	// A roll-back not finished yet (short of space, say) holds its paths:
	// nothing else may change them until it is done.
	if busy, _ := l.unfinishedPaths(); len(busy) > 0 {
		for _, c := range changes {
			for p, id := range busy {
				if under(c.Path, p) || under(p, c.Path) {
					err := s.unrecovered
					if err == nil {
						err = fmt.Errorf("transaction %s is being rolled back", id)
					}
					return nil, fmt.Errorf("%s is held by an unfinished roll-back: %w", c.Path, err)
				}
			}
		}
	}
	objects := filepath.Join(l.layerDir(w.Tx), "objects")
	if err := os.MkdirAll(objects, 0o700); err != nil {
		return nil, fmt.Errorf("create undo layer: %w", err)
	}
	layerDev := devOf(objects)
	for i := range w.Ops {
		o := &w.Ops[i]
		if o.From != "" {
			keepMovedOver(o, objects, i, layerDev)
			continue
		}
		var st unix.Stat_t
		if !movedAway(w, o) && unix.Lstat(o.pre(), &st) == nil {
			o.PreExists, o.PreDir = true, isDir(&st)
			if o.Src != "" && st.Mode&unix.S_IFMT == unix.S_IFREG && st.Nlink > 1 {
				var sst unix.Stat_t
				if unix.Lstat(o.Src, &sst) == nil && sst.Mode&unix.S_IFMT == unix.S_IFREG {
					o.InPlace = true
				}
			}
			if o.Meta != nil {
				o.OldMeta = &meta{Mode: st.Mode &^ unix.S_IFMT, UID: int(st.Uid), GID: int(st.Gid)}
			} else {
				o.Stash = filepath.Join(objects, strconv.Itoa(i))
				o.XStash = st.Dev != layerDev || o.InPlace
			}
		}
		if o.Src != "" {
			o.XApply = devOf(o.Src) != devOf(filepath.Dir(o.pre()))
		}
	}
	for i := range w.Ops {
		if o := &w.Ops[i]; o.From != "" && o.Src != "" {
			o.XApply = devOf(o.Src) != devOf(filepath.Dir(o.From))
		}
	}
	if err := s.checkSpace(w); err != nil {
		_ = removeAll(l.layerDir(w.Tx))
		return nil, err
	}
	if err := s.faultAt("journal"); err != nil {
		_ = removeAll(l.layerDir(w.Tx))
		return nil, err
	}
	if err := writeGob(l.walFile(w.Tx), w); err != nil {
		_ = removeAll(l.layerDir(w.Tx))
		return nil, fmt.Errorf("write journal: %w", err)
	}
	if err := s.apply(w); err != nil {
		return nil, s.rolledBack(w, err)
	}
	records := make([]opRecord, len(w.Ops))
	for i, o := range w.Ops {
		r := opRecord{Index: i, Path: o.Path, Tree: o.Tree, PreExists: o.PreExists, PreDir: o.PreDir, OldMeta: o.OldMeta, NewMeta: o.Meta, UndoOf: o.UndoOf, From: o.From}
		switch {
		case o.From != "":
			r.Kind = "move"
		case o.Meta != nil:
			r.Kind = "meta"
		case o.Src != "":
			r.Kind = "put"
		default:
			r.Kind = "delete"
		}
		if o.Stash != "" {
			r.Stash = filepath.Base(o.Stash)
		}
		r.Post = fingerprintOf(o.Path)
		if o.Tree {
			r.Files = treeFingerprints(o.Path)
		}
		records[i] = r
	}
	if err := writeManifest(filepath.Join(l.layerDir(w.Tx), manifestFile), records); err != nil {
		return nil, s.failAfterApply(w, fmt.Errorf("write undo manifest: %w", err))
	}
	return records, nil
}

// apply performs the journal's operations in two phases, stash then
// apply, with one sync of each file system per phase. It reaches the live
// tree only through parentDir (livefs_linux.go).
func (s *Sandbox) apply(w *wal) error {
	syncSet := map[uint64]string{devOf(s.stateDir): s.stateDir}
	for _, o := range w.Ops {
		d := filepath.Dir(o.pre())
		syncSet[devOf(d)] = d
	}
	// Phase 0: move directories whole (renames_linux.go); the rest is
	// relative to where they are then.
	if err := applyMoves(w, syncSet); err != nil {
		return err
	}
	// Phase 1: move (or, across file systems, copy) every displaced object
	// into the undo layer.
	var xstash []walOp
	for _, o := range w.Ops {
		if o.Stash == "" || o.From != "" {
			continue // moves kept theirs in phase 0
		}
		if o.XStash {
			if err := copyFromLive(o.Path, o.Stash+".tmp"); err != nil {
				return fmt.Errorf("keep old version of %s: %w", o.Path, err)
			}
			if err := os.Rename(o.Stash+".tmp", o.Stash); err != nil {
				return fmt.Errorf("keep old version of %s: %w", o.Path, err)
			}
			xstash = append(xstash, o)
			continue
		}
		if err := renameNoSymlinks(o.Path, o.Stash, unix.RENAME_NOREPLACE); err != nil {
			return fmt.Errorf("keep old version of %s: %w", o.Path, err)
		}
	}
	if len(xstash) > 0 {
		if err := syncFS(s.stateDir); err != nil {
			return err
		}
		for _, o := range xstash {
			if o.InPlace {
				continue // the inode stays; its content is replaced below
			}
			if err := removeLive(o.Path); err != nil {
				return err
			}
		}
	}
	if err := syncAll(syncSet); err != nil {
		return err
	}
	if err := s.faultAt("stashed"); err != nil {
		return err
	}
	// Phase 2: move the new objects into place.
	for i, o := range w.Ops {
		if err := s.faultAt("apply:" + strconv.Itoa(i)); err != nil {
			return err
		}
		switch {
		case o.Meta != nil:
			if err := setMeta(o.Path, o.Meta); err != nil {
				return fmt.Errorf("set owner and mode of %s: %w", o.Path, err)
			}
		case o.Src != "" && o.From == "":
			if err := stripOverlayXattrs(o.Src, o.Tree); err != nil {
				return err
			}
			if o.InPlace {
				if err := overwriteLive(o.Src, o.Path); err != nil {
					return fmt.Errorf("write %s in place: %w", o.Path, err)
				}
				continue
			}
			if o.XApply {
				if err := copyIntoLive(o.Src, o.Path, newSuffix, false); err != nil {
					return fmt.Errorf("put %s in place: %w", o.Path, err)
				}
				continue
			}
			if err := renameNoSymlinks(o.Src, o.Path, unix.RENAME_NOREPLACE); err != nil {
				return fmt.Errorf("put %s in place: %w", o.Path, err)
			}
		}
	}
	return syncAll(syncSet)
}

// Suffixes of the temporary names copies take in a live directory before
// they are renamed into place: a new version (apply), an old one put back
// (roll-back). None is ever left behind.
const (
	newSuffix = ".nash-new"
	oldSuffix = ".nash-old"
)

// faultAt is the test seam: tests set s.fault to make things happen
// (the disk fill up, a directory be swapped for a symlink) at a given
// point of a transaction.
func (s *Sandbox) faultAt(point string) error {
	if s.fault == nil {
		return nil
	}
	return s.fault(point)
}

func syncAll(set map[uint64]string) error {
	for _, p := range set {
		// The nearest directory that is one (not a symlink put there
		// meanwhile).
		for {
			if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
				break
			}
			p = filepath.Dir(p)
		}
		if err := syncFS(p); err != nil {
			return err
		}
	}
	return nil
}

// rollback undoes whatever part of a journal's operations took effect,
// newest first, in two passes: first it takes back what the transaction
// added (temporary copies, new versions), which frees the space a full
// file system needs for the second, which puts back what it displaced.
// No live file is left half-written: old versions are copied back whole
// under a temporary name and renamed into place, or written in place
// into space reserved first. Every step checks the file system first, so
// it can run again after a crash in the middle of it.
//
// A path whose directory was moved, removed or replaced by a symlink
// meanwhile cannot be put back where it was without following whatever is
// there now: it is kept aside (its old version stays in the undo layer)
// and named in the result. Any other failure (no space, say) stops the
// roll-back short of all-before and is returned: the journal stays, and
// the roll-back is tried again later.
func (s *Sandbox) rollback(w *wal) ([]Kept, error) {
	var errs []error
	kept := map[int]*Kept{}
	copied := map[int]bool{} // ops whose old version was copied back
	keep := func(i int) *Kept {
		if kept[i] == nil {
			kept[i] = &Kept{Path: w.Ops[i].Path}
		}
		return kept[i]
	}
	// fail sorts a step's error: kept aside, or the roll-back falls short.
	fail := func(i int, err error) {
		var ue *unreachableError
		if errors.As(err, &ue) || errors.Is(err, unix.ELOOP) {
			keep(i)
			return
		}
		errs = append(errs, fmt.Errorf("roll back %s: %w", w.Ops[i].Path, err))
	}
	exists := func(p string) bool { _, err := os.Lstat(p); return err == nil }
	// An op below where a move puts a directory took no effect if that
	// move did not (phase 0 runs whole before the rest): there is nothing
	// of it to reach, and its directory's absence is no swap.
	notMoved := func(m walOp) bool {
		return exists(m.From) && (!exists(m.Path) || m.Stash != "" && !exists(m.Stash))
	}
	idle := make([]bool, len(w.Ops))
	for _, m := range w.Ops {
		if m.From == "" || !notMoved(m) {
			continue
		}
		for i, o := range w.Ops {
			if o.From == "" && under(o.Path, m.Path) {
				idle[i] = true
			}
		}
	}
	// Pass 1: take back what the transaction added.
	for i := len(w.Ops) - 1; i >= 0; i-- {
		o := w.Ops[i]
		if o.Stash != "" {
			_ = removeAll(o.Stash + ".tmp")
		}
		if o.Src == "" || o.InPlace || o.From != "" || idle[i] {
			continue // a move is taken back last, in pass 2
		}
		if !o.XApply && exists(o.Src) {
			continue // never moved in
		}
		d, base, err := openParent(o.Path)
		if err != nil {
			fail(i, err)
			if k := kept[i]; k != nil && !o.XApply && !exists(o.Src) {
				k.New = true // moved in, and out of reach with its directory
			}
			continue
		}
		if err := d.remove(base + newSuffix); err != nil {
			fail(i, err)
		}
		switch {
		case !o.XApply:
			// Moved in by rename: moved back the same way, if it got there.
			if !exists(o.Src) && d.exists(base) {
				if err := renameNoSymlinks(o.Path, o.Src, unix.RENAME_NOREPLACE); err != nil {
					fail(i, err)
				}
			}
		case o.Stash == "" || exists(o.Stash):
			// The old object was moved away (or there was none): what is
			// there is the transaction's copy.
			if err := d.remove(base); err != nil {
				fail(i, err)
			}
		}
		d.close()
	}
	// Pass 2: put back what the transaction displaced.
	for i := len(w.Ops) - 1; i >= 0; i-- {
		o := w.Ops[i]
		if err := s.faultAt("restore:" + strconv.Itoa(i)); err != nil {
			fail(i, err)
			continue
		}
		if idle[i] {
			continue
		}
		if o.From != "" {
			// Moves come first in the journal, so everything below a
			// moved directory is back before it moves back.
			if err := rollbackMove(o); err != nil {
				fail(i, err)
			}
			continue
		}
		if o.Meta != nil {
			if o.OldMeta == nil {
				continue
			}
			if ok, err := liveExists(o.Path); err != nil {
				fail(i, err)
			} else if ok {
				if err := setMeta(o.Path, o.OldMeta); err != nil {
					fail(i, err)
				}
			}
			continue
		}
		if o.Stash == "" || !exists(o.Stash) {
			continue // never stashed: the live object is untouched
		}
		if d, _, err := openParent(o.Path); err != nil {
			fail(i, err)
			if k := kept[i]; k != nil {
				k.Object = o.Stash
			}
			continue
		} else {
			d.close()
		}
		var err error
		switch {
		case o.InPlace:
			err = overwriteLive(o.Stash, o.Path)
		case o.XStash:
			// The copy goes in whole, under a temporary name, or not at
			// all; over the transaction's version if pass 1 could not
			// remove it (a file).
			err = copyIntoLive(o.Stash, o.Path, oldSuffix, !o.PreDir)
		default:
			err = renameNoSymlinks(o.Stash, o.Path, unix.RENAME_NOREPLACE)
		}
		if err != nil {
			fail(i, err)
			if k := kept[i]; k != nil {
				k.Object = o.Stash
			}
			continue
		}
		if o.InPlace || o.XStash {
			copied[i] = true
			if err := removeAll(o.Stash); err != nil {
				errs = append(errs, err)
			}
		}
	}
	syncSet := map[uint64]string{devOf(s.stateDir): s.stateDir}
	for _, o := range w.Ops {
		d := filepath.Dir(o.pre())
		syncSet[devOf(d)] = d
	}
	if err := syncAll(syncSet); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	s.refingerprint(w, copied)
	var out []Kept
	for i := range w.Ops {
		if k := kept[i]; k != nil {
			out = append(out, *k)
		}
	}
	return out, nil
}

// stand makes an applied transaction stand: it writes the record (the
// commit point; if that fails, the transaction is rolled back), runs then
// (bookkeeping that recovery redoes while the journal remains), and
// retires the journal. A journal that cannot be removed is left for the
// next start, whose recovery sees the record and completes it.
func (s *Sandbox) stand(w *wal, tx *Tx, then func() error) error {
	l := s.layout()
	if err := l.writeTx(tx); err != nil {
		return s.failAfterApply(w, fmt.Errorf("record transaction: %w", err))
	}
	l.noteID(tx.ID)
	if then != nil {
		if err := then(); err != nil {
			return err
		}
	}
	_ = os.Remove(l.walFile(w.Tx))
	_ = syncDir(l.journalDir())
	return nil
}

// failAfterApply rolls back an applied transaction whose record could not be
// written.
func (s *Sandbox) failAfterApply(w *wal, err error) error {
	return s.rolledBack(w, err)
}

// rolledBack rolls back a transaction that failed with err and says how
// it ended. All-before: the journal and undo layer go, and err is
// returned. Paths kept aside (their directory moved or replaced by a
// symlink meanwhile): the transaction is recorded as rolled back with
// them, its undo layer kept for their old versions, and a
// *RolledBackError says where they are. A roll-back that fell short (no
// space, say) leaves the journal for the next try and returns a
// *RecoveryError saying what to do.
func (s *Sandbox) rolledBack(w *wal, err error) error {
	l := s.layout()
	kept, rerr := s.rollback(w)
	if rerr != nil {
		return &RecoveryError{Tx: w.Tx, Kind: w.Kind, Cause: err, Err: rerr}
	}
	if len(kept) > 0 {
		t := &Tx{ID: w.Tx, Time: time.Now().UTC(), State: StateRolledBack, Undoes: w.Undoes, Kept: kept,
			Script: fmt.Sprintf("(%s rolled back: %v)", w.Kind, err)}
		if w.Kind == "undo" {
			t.Undoes = ""
			t.Script = fmt.Sprintf("(undo of %s rolled back: %v)", w.Undoes, err)
		}
		if werr := l.writeTx(t); werr != nil {
			return &RecoveryError{Tx: w.Tx, Kind: w.Kind, Cause: err, Err: werr}
		}
		_ = os.Remove(l.walFile(w.Tx))
		_ = syncDir(l.journalDir())
		return &RolledBackError{Tx: w.Tx, Err: err, Kept: kept}
	}
	_ = os.Remove(l.walFile(w.Tx))
	_ = syncDir(l.journalDir())
	_ = removeAll(l.layerDir(w.Tx))
	return err
}

// RolledBackError says a commit or undo failed and was rolled back, but
// the old versions of some paths could not be put back where they were: a
// directory on their way was moved, removed or replaced by a symlink
// meanwhile. They are kept in the transaction's undo layer (Kept), and
// the transaction is in the log as rolled back.
type RolledBackError struct {
	Tx   string
	Err  error // why the transaction failed
	Kept []Kept
}

func (e *RolledBackError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v; rolled back, but a directory was moved or replaced meanwhile, so ", e.Err)
	for i, k := range e.Kept {
		if i > 0 {
			b.WriteString("; ")
		}
		switch {
		case k.Object != "":
			fmt.Fprintf(&b, "the old version of %s could not be put back: it is kept at %s", strconvQuote(k.Path), strconvQuote(k.Object))
		default:
			fmt.Fprintf(&b, "%s could not be reached", strconvQuote(k.Path))
		}
		if k.New {
			b.WriteString(" (its new version is where that directory went)")
		}
	}
	fmt.Fprintf(&b, " (nash show %s)", e.Tx)
	return b.String()
}

func (e *RolledBackError) Unwrap() error { return e.Err }

// RecoveryError says a commit or undo was interrupted (by a crash, or a
// failure such as a full disk) and its roll-back could not be finished:
// the journal stays, and nash finishes the roll-back at its next start or
// commit once the cause is gone. Until then commits and undos that touch
// the same paths are refused; everything else works.
type RecoveryError struct {
	Tx    string
	Kind  string // commit or undo
	Cause error  // what the transaction failed with, if known
	Err   error  // what the roll-back failed with
}

func (e *RecoveryError) Error() string {
	var b strings.Builder
	if e.Cause != nil {
		fmt.Fprintf(&b, "%v; ", e.Cause)
	}
	fmt.Fprintf(&b, "the %s (transaction %s) is not rolled back yet: %v", e.Kind, e.Tx, e.Err)
	if errors.Is(e.Err, unix.ENOSPC) || errors.Is(e.Err, unix.EDQUOT) {
		b.WriteString("; free some space there, then run nash again: it finishes the roll-back first")
	} else {
		b.WriteString("; nash tries again at its next start")
	}
	return b.String()
}

func (e *RecoveryError) Unwrap() error { return e.Err }

// SpaceError says a commit or undo was refused for want of space; nothing
// changed.
type SpaceError struct {
	Path string // a directory of the file system that lacks it
	Need int64  // bytes the transaction needs there
	Free int64  // bytes free there
}

func (e *SpaceError) Error() string {
	return fmt.Sprintf("not enough space on the file system of %s: this needs %s more (%s needed, %s free); nothing was changed",
		e.Path, mib(e.Need-e.Free), mib(e.Need), mib(e.Free))
}

// mib writes a byte count for people.
func mib(n int64) string {
	switch {
	case n < 1<<20:
		return fmt.Sprintf("%d KiB", (n+1023)>>10)
	case n < 10<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}

// spaceMargin is what every file system a transaction writes keeps free
// beyond what its copies need: the journal, the manifest, directories.
const spaceMargin = 1 << 20

// checkSpace refuses a transaction whose copies do not fit: renames need
// no room, but a version copied into the undo layer (from another file
// system, or of a file with other hard links) or into place (from an
// upper dir elsewhere) does.
func (s *Sandbox) checkSpace(w *wal) error {
	need := map[uint64]int64{}
	where := map[uint64]string{}
	add := func(p string, n int64) {
		dev := devOf(p)
		need[dev] += n
		if where[dev] == "" {
			where[dev] = p
		}
	}
	add(s.stateDir, spaceMargin)
	for _, o := range w.Ops {
		// Sizes are of the live object where it is now (before any
		// move); a move's Src goes back where it came from.
		live, dir := o.pre(), filepath.Dir(o.pre())
		if o.From != "" {
			live, dir = o.Path, filepath.Dir(o.From)
		}
		switch {
		case o.InPlace:
			add(s.stateDir, treeSize(live))
			if grow := treeSize(o.Src) - treeSize(live); grow > 0 {
				add(dir, grow)
			}
		case o.Stash != "" && o.XStash:
			add(s.stateDir, treeSize(live))
		}
		if o.Src != "" && o.XApply && !o.InPlace {
			add(dir, treeSize(o.Src))
		}
	}
	for dev, n := range need {
		p := where[dev]
		if dev != devOf(s.stateDir) {
			n += spaceMargin
		}
		for {
			if _, err := os.Lstat(p); err == nil {
				break
			}
			p = filepath.Dir(p)
		}
		var st unix.Statfs_t
		if unix.Statfs(p, &st) != nil {
			continue
		}
		if free := int64(st.Bavail) * st.Bsize; n > free {
			return &SpaceError{Path: p, Need: n, Free: free}
		}
	}
	return nil
}
