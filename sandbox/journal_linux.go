package sandbox

// The write-ahead journal: a transaction's operations are written whole
// before anything moves, then applied in two phases (stash, apply), and
// rolled back from the journal when they cannot all take effect.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

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
	}
	if hit := lockedBy(locks, changes); len(hit) > 0 {
		return nil, &LockedError{Paths: hit}
	}
	objects := filepath.Join(l.layerDir(w.Tx), "objects")
	if err := os.MkdirAll(objects, 0o700); err != nil {
		return nil, fmt.Errorf("create undo layer: %w", err)
	}
	layerDev := devOf(objects)
	for i := range w.Ops {
		o := &w.Ops[i]
		var st unix.Stat_t
		if unix.Lstat(o.Path, &st) == nil {
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
			o.XApply = devOf(o.Src) != devOf(filepath.Dir(o.Path))
		}
	}
	if err := writeGob(l.walFile(w.Tx), w); err != nil {
		return nil, fmt.Errorf("write journal: %w", err)
	}
	if err := s.apply(w); err != nil {
		if rerr := s.rollback(w); rerr != nil {
			return nil, fmt.Errorf("%w; rolling back also failed (the journal stays for the next start): %v", err, rerr)
		}
		_ = os.Remove(l.walFile(w.Tx))
		_ = removeAll(l.layerDir(w.Tx))
		return nil, err
	}
	records := make([]opRecord, len(w.Ops))
	for i, o := range w.Ops {
		r := opRecord{Index: i, Path: o.Path, Tree: o.Tree, PreExists: o.PreExists, PreDir: o.PreDir, OldMeta: o.OldMeta, NewMeta: o.Meta, UndoOf: o.UndoOf}
		switch {
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
// apply, with one sync of each file system per phase.
func (s *Sandbox) apply(w *wal) error {
	syncSet := map[uint64]string{devOf(s.stateDir): s.stateDir}
	for _, o := range w.Ops {
		d := filepath.Dir(o.Path)
		syncSet[devOf(d)] = d
	}
	// Phase 1: move (or, across file systems, copy) every displaced object
	// into the undo layer.
	var xstash []walOp
	for _, o := range w.Ops {
		if o.Stash == "" {
			continue
		}
		if o.XStash {
			if err := copyTree(o.Path, o.Stash+".tmp"); err != nil {
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
			if err := removeAll(o.Path); err != nil {
				return err
			}
		}
	}
	if err := syncAll(syncSet); err != nil {
		return err
	}
	// Phase 2: move the new objects into place.
	for _, o := range w.Ops {
		switch {
		case o.Meta != nil:
			if err := os.Lchown(o.Path, o.Meta.UID, o.Meta.GID); err != nil && !errors.Is(err, fs.ErrPermission) {
				return fmt.Errorf("set owner of %s: %w", o.Path, err)
			}
			if err := unix.Chmod(o.Path, o.Meta.Mode); err != nil {
				return fmt.Errorf("set mode of %s: %w", o.Path, err)
			}
		case o.Src != "":
			if err := stripOverlayXattrs(o.Src, o.Tree); err != nil {
				return err
			}
			if o.InPlace {
				if err := overwrite(o.Src, o.Path); err != nil {
					return fmt.Errorf("write %s in place: %w", o.Path, err)
				}
				continue
			}
			if o.XApply {
				tmp := o.Path + ".nash-new"
				if err := copyTree(o.Src, tmp); err != nil {
					return fmt.Errorf("put %s in place: %w", o.Path, err)
				}
				if err := renameNoSymlinks(tmp, o.Path, unix.RENAME_NOREPLACE); err != nil {
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

func syncAll(set map[uint64]string) error {
	for _, p := range set {
		for {
			if _, err := os.Lstat(p); err == nil {
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
// newest first. Every step checks the file system first, so it can run
// again after a crash in the middle of it.
func (s *Sandbox) rollback(w *wal) error {
	exists := func(p string) bool { _, err := os.Lstat(p); return err == nil }
	for i := len(w.Ops) - 1; i >= 0; i-- {
		o := w.Ops[i]
		if o.Meta != nil {
			if o.OldMeta != nil && exists(o.Path) {
				_ = os.Lchown(o.Path, o.OldMeta.UID, o.OldMeta.GID)
				if err := unix.Chmod(o.Path, o.OldMeta.Mode); err != nil {
					return fmt.Errorf("restore mode of %s: %w", o.Path, err)
				}
			}
			continue
		}
		if o.Src != "" {
			_ = removeAll(o.Path + ".nash-new")
			if !o.XApply && !exists(o.Src) && exists(o.Path) {
				if err := os.Rename(o.Path, o.Src); err != nil {
					return fmt.Errorf("roll back %s: %w", o.Path, err)
				}
			}
		}
		if o.Stash == "" {
			if o.XApply && exists(o.Path) {
				if err := removeAll(o.Path); err != nil {
					return err
				}
			}
			continue
		}
		_ = removeAll(o.Stash + ".tmp")
		if !exists(o.Stash) {
			continue // never stashed: the live object is untouched
		}
		if o.InPlace {
			if err := overwrite(o.Stash, o.Path); err != nil {
				return fmt.Errorf("roll back %s: %w", o.Path, err)
			}
			if err := removeAll(o.Stash); err != nil {
				return err
			}
			continue
		}
		if o.XStash {
			if exists(o.Path) {
				if err := removeAll(o.Path); err != nil {
					return err
				}
			}
			if err := copyTree(o.Stash, o.Path); err != nil {
				return fmt.Errorf("roll back %s: %w", o.Path, err)
			}
			if err := removeAll(o.Stash); err != nil {
				return err
			}
			continue
		}
		if o.XApply && exists(o.Path) {
			if err := removeAll(o.Path); err != nil {
				return err
			}
		}
		if err := renameNoSymlinks(o.Stash, o.Path, unix.RENAME_NOREPLACE); err != nil {
			return fmt.Errorf("roll back %s: %w", o.Path, err)
		}
	}
	syncSet := map[uint64]string{devOf(s.stateDir): s.stateDir}
	for _, o := range w.Ops {
		d := filepath.Dir(o.Path)
		syncSet[devOf(d)] = d
	}
	if err := syncAll(syncSet); err != nil {
		return err
	}
	s.refingerprint(w)
	return nil
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
	if rerr := s.rollback(w); rerr != nil {
		return fmt.Errorf("%w; rolling back also failed: %v", err, rerr)
	}
	_ = os.Remove(s.layout().walFile(w.Tx))
	return err
}
