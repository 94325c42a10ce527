package sandbox

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nash-shell/nash/effects"
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

// opRecord is what an undo layer remembers of one operation.
type opRecord struct {
	Index     int         `json:"index"`
	Path      string      `json:"path"`
	Kind      string      `json:"kind"` // put, delete, meta
	Tree      bool        `json:"tree,omitempty"`
	PreExists bool        `json:"pre_exists"`
	PreDir    bool        `json:"pre_dir,omitempty"`
	Stash     string      `json:"stash,omitempty"` // object name in the layer
	Post      fingerprint `json:"post"`
	Files     []fileFP    `json:"files,omitempty"`
	OldMeta   *meta       `json:"old_meta,omitempty"`
	NewMeta   *meta       `json:"new_meta,omitempty"`
	UndoOf    int         `json:"undo_of"`
	From      string      `json:"from,omitempty"` // for a move: where the directory was
}

// CommitOptions narrows a commit.
type CommitOptions struct {
	// Paths, when set, commits only the operations at or below these paths.
	Paths []string
	// Prompt is the request that produced the script, kept in the log.
	Prompt string
	// Tokens is what the model's work on the script cost, kept in the log.
	Tokens *Tokens
}

// Commit applies a pending run to the live files. Every displaced object
// goes to the transaction's undo layer. A path changed outside nash while
// the script ran is a conflict: nothing is changed.
func (s *Sandbox) Commit(ctx context.Context, id string, opt CommitOptions) (*Tx, error) {
	l := s.layout()
	lk, err := l.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer lk.unlock()
	var rec runRecord
	if err := readGob(filepath.Join(l.runDir(id), runFile), &rec); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, &NotFoundError{ID: id}
		}
		return nil, err
	}
	if r, ok := s.light[id]; ok && r.rec != nil && rec.State == runRunning {
		rec = *r.rec // a run without changes, whose pending record was not written
	}
	if rec.State != runPending {
		return nil, fmt.Errorf("run %s is %s, not pending", id, rec.State)
	}
	s.waitTorndown(id)
	cs, ops, err := scanLayers(rec.Layers, rec.Renames, rec.Planted)
	if err != nil {
		return nil, err
	}
	ops, cs, err = selectOps(ops, cs, opt.Paths)
	if err != nil {
		return nil, err
	}
	var conflicts []Conflict
	touched := map[string]bool{}
	for _, p := range rec.Touched {
		touched[p] = true
	}
	for _, o := range ops {
		lp := o.live()
		pre, known := preFingerprint(rec.Pre, lp)
		switch {
		case touched[lp]:
			conflicts = append(conflicts, Conflict{Path: lp, Reason: "changed outside nash while the script ran"})
		case !known:
			conflicts = append(conflicts, Conflict{Path: lp, Reason: "not seen when the run ended"})
		case !pre.matches(fingerprintOf(lp)):
			conflicts = append(conflicts, Conflict{Path: lp, Reason: "changed outside nash since the run"})
		case o.From != "" && !movedOverSame(rec.Pre, o.Path):
			conflicts = append(conflicts, Conflict{Path: o.Path, Reason: "changed outside nash since the run"})
		}
	}
	if len(conflicts) > 0 {
		return nil, &ConflictError{Conflicts: conflicts}
	}
	w := &wal{Tx: id, Kind: "commit", Run: id}
	for _, o := range ops {
		w.Ops = append(w.Ops, walOp{Path: o.Path, Src: o.Src, Tree: o.Tree, Meta: o.Meta, From: o.From, Live: o.Live, UndoOf: -1})
	}
	records, err := s.execute(w)
	if err != nil {
		return nil, err
	}
	tx := &Tx{
		ID: id, Time: time.Now().UTC(), Script: rec.Script, Prompt: opt.Prompt, Dir: rec.Dir, Tokens: opt.Tokens,
		State: StateCommitted, Changes: cs.Len(), ExitCode: rec.ExitCode, Ops: len(records), Network: rec.Network,
		UndoBytes: duSize(filepath.Join(l.layerDir(id), "objects")),
	}
	if err := writeGob(filepath.Join(l.layerDir(id), changesFile), cs); err != nil {
		return nil, s.failAfterApply(w, fmt.Errorf("record changes: %w", err))
	}
	if err := s.stand(w, tx, nil); err != nil {
		return nil, err
	}
	_ = s.removeRunFiles(&rec)
	return tx, nil
}

// preFingerprint is what p was when the run ended: its own fingerprint, or
// absent when an ancestor recorded then was absent (another commit may
// have created that ancestor since, turning one op into several below it).
func preFingerprint(pre map[string]fingerprint, p string) (fingerprint, bool) {
	if fp, ok := pre[p]; ok {
		return fp, true
	}
	for q := filepath.Dir(p); q != "/" && q != "."; q = filepath.Dir(q) {
		if fp, ok := pre[q]; ok {
			return fingerprint{Absent: true}, fp.Absent
		}
	}
	return fingerprint{}, false
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

// selectOps keeps the operations at or below the given paths (all when none
// are given) and the matching changes.
func selectOps(ops []op, cs *effects.ChangeSet, paths []string) ([]op, *effects.ChangeSet, error) {
	if len(paths) == 0 {
		return ops, cs, nil
	}
	// A move is chosen by its old or new path, or any path below either.
	chosen := func(o op, p string) bool {
		return under(o.Path, p) || o.From != "" && (under(p, o.Path) || under(p, o.From) || under(o.From, p))
	}
	for _, p := range paths {
		found := false
		for _, o := range ops {
			if chosen(o, p) {
				found = true
			} else if under(p, o.Path) && o.Meta == nil {
				return nil, nil, fmt.Errorf("%s is inside %s, which is committed whole", p, o.Path)
			}
		}
		if !found {
			return nil, nil, fmt.Errorf("%s: no change there", p)
		}
	}
	keep := make([]bool, len(ops))
	for i, o := range ops {
		for _, p := range paths {
			if chosen(o, p) {
				keep[i] = true
				break
			}
		}
	}
	keepMoved(ops, keep)
	var keptOps []op
	for i, o := range ops {
		if keep[i] {
			keptOps = append(keptOps, o)
		}
	}
	out := &effects.ChangeSet{}
	for _, c := range cs.Changes {
		for _, o := range keptOps {
			if under(c.Path, o.Path) {
				out.Changes = append(out.Changes, c)
				break
			}
		}
	}
	return keptOps, out, nil
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
// apply, with one sync of each file system per phase.
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
		case o.Src != "" && o.From == "":
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
		if o.From != "" {
			if err := rollbackMove(o); err != nil {
				return err
			}
			continue
		}
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
	return syncAll(syncSet)
}

func writeManifest(path string, records []opRecord) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	enc := gob.NewEncoder(bw)
	for _, r := range records {
		if err := enc.Encode(r); err != nil {
			f.Close()
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func readManifest(path string) ([]opRecord, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []opRecord
	dec := gob.NewDecoder(bufio.NewReader(f))
	for {
		var r opRecord
		if err := dec.Decode(&r); err == io.EOF {
			return out, nil
		} else if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		out = append(out, r)
	}
}

// UndoOptions narrows an undo.
type UndoOptions struct {
	// Paths, when set, undoes only the operations at or below these paths.
	Paths []string
	// Force undoes even paths that changed since; their current versions
	// are kept in the undo's own layer, so nothing is lost.
	Force bool
}

// Undo restores the old versions of a committed transaction (the last one
// when id is empty) as a new transaction, which can itself be undone. A path
// changed since the commit is a conflict: without Force nothing is changed.
func (s *Sandbox) Undo(ctx context.Context, id string, opt UndoOptions) (*Tx, error) {
	l := s.layout()
	lk, err := l.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer lk.unlock()
	txs, err := l.listTx()
	if err != nil {
		return nil, err
	}
	if id == "" {
		for i := len(txs) - 1; i >= 0; i-- {
			if txs[i].State == StateCommitted || txs[i].State == StatePartlyUndone {
				id = txs[i].ID
				break
			}
		}
		if id == "" {
			return nil, errors.New("nothing to undo")
		}
	}
	k, err := l.readTx(id)
	if err != nil {
		return nil, err
	}
	switch k.State {
	case StateUndone:
		return nil, fmt.Errorf("transaction %s is already undone", id)
	case StateForgotten:
		return nil, fmt.Errorf("transaction %s was forgotten: its old versions are gone", id)
	}
	records, err := readManifest(filepath.Join(l.layerDir(id), manifestFile))
	if err != nil {
		return nil, err
	}
	var sel []opRecord
	for _, r := range records {
		if _, done := k.UndoneOps[r.Index]; done {
			continue
		}
		if len(opt.Paths) == 0 {
			sel = append(sel, r)
			continue
		}
		for _, p := range opt.Paths {
			if under(r.Path, p) || r.Kind == "move" && (under(p, r.Path) || under(p, r.From) || under(r.From, p)) {
				sel = append(sel, r)
				break
			}
			if under(p, r.Path) {
				return nil, fmt.Errorf("%s is inside %s, which transaction %s changed whole", p, r.Path, id)
			}
		}
	}
	sel = withMoved(records, k.UndoneOps, sel)
	if len(sel) == 0 {
		return nil, fmt.Errorf("transaction %s has nothing left to undo there", id)
	}
	if conflicts := s.undoConflicts(txs, k, sel); len(conflicts) > 0 && !opt.Force {
		return nil, &ConflictError{Conflicts: conflicts}
	}
	uid, err := l.nextID()
	if err != nil {
		return nil, err
	}
	w := &wal{Tx: uid, Kind: "undo", Undoes: id}
	back := movesBack(sel)
	for _, r := range sel {
		o := op{Path: r.Path}
		switch {
		case r.Kind == "move":
			o = op{Path: r.From, From: r.Path}
			if r.PreExists {
				// The empty directory it replaced comes back.
				o.Src, o.Tree = filepath.Join(l.layerDir(id), "objects", r.Stash), r.PreDir
			}
		case r.Kind == "meta":
			o.Meta = r.OldMeta
		case r.PreExists:
			o.Src, o.Tree = filepath.Join(l.layerDir(id), "objects", r.Stash), r.PreDir
		}
		if o.From == "" && r.Kind != "move" {
			// Inside a directory moved back first: relative to where
			// the move puts it.
			o.Path, o.Live = back.place(r.Path)
		}
		w.Ops = append(w.Ops, walOp{Path: o.Path, Src: o.Src, Tree: o.Tree, Meta: o.Meta, From: o.From, Live: o.Live, UndoOf: r.Index})
	}
	out, err := s.execute(w)
	if err != nil {
		return nil, err
	}
	u := &Tx{
		ID: uid, Time: time.Now().UTC(), Script: fmt.Sprintf("nash undo %s", id), Dir: k.Dir,
		State: StateCommitted, Changes: len(out), Undoes: id, Ops: len(out),
		UndoBytes: duSize(filepath.Join(l.layerDir(uid), "objects")),
	}
	if err := s.stand(w, u, func() error { return s.markUndone(w) }); err != nil {
		return nil, err
	}
	return u, nil
}

// markUndone records, in the undone transaction, which of its operations
// an undo reversed; undoing an undo clears the marks it had set. It is
// idempotent, so recovery can repeat it.
func (s *Sandbox) markUndone(w *wal) error {
	l := s.layout()
	k, err := l.readTx(w.Undoes)
	if err != nil {
		return err
	}
	if k.UndoneOps == nil {
		k.UndoneOps = map[int]string{}
	}
	for _, o := range w.Ops {
		k.UndoneOps[o.UndoOf] = w.Tx
	}
	k.State = StatePartlyUndone
	if len(k.UndoneOps) >= k.Ops {
		k.State = StateUndone
	}
	k.UndoBytes = duSize(filepath.Join(l.layerDir(k.ID), "objects"))
	if err := l.writeTx(k); err != nil {
		return err
	}
	// Undoing an undo puts the original transaction's versions back.
	if k.Undoes == "" {
		return nil
	}
	orig, err := l.readTx(k.Undoes)
	if err != nil {
		return nil
	}
	recs, err := readManifest(filepath.Join(l.layerDir(k.ID), manifestFile))
	if err != nil {
		return err
	}
	for _, o := range w.Ops {
		if o.UndoOf < len(recs) {
			delete(orig.UndoneOps, recs[o.UndoOf].UndoOf)
		}
	}
	orig.State = StateCommitted
	if len(orig.UndoneOps) > 0 {
		orig.State = StatePartlyUndone
	}
	return l.writeTx(orig)
}

// undoConflicts compares what nash left at each path with what is there now.
func (s *Sandbox) undoConflicts(txs []*Tx, k *Tx, sel []opRecord) []Conflict {
	var out []Conflict
	for _, r := range sel {
		why := ""
		if !r.Post.matches(fingerprintOf(r.Path)) {
			why = "changed since"
		} else if r.Tree {
			live := treeFingerprints(r.Path)
			if len(live) != len(r.Files) {
				why = "entries added or removed since"
			} else {
				for i := range live {
					if live[i].Rel != r.Files[i].Rel || !live[i].FP.matches(r.Files[i].FP) {
						why = "changed since: " + filepath.Join(r.Path, live[i].Rel)
						break
					}
				}
			}
		}
		if why == "" {
			continue
		}
		if later := s.laterTx(txs, k, r.Path); later != "" {
			why = "changed by transaction " + later
		} else if why == "changed since" {
			why = "changed outside nash since the commit"
		}
		out = append(out, Conflict{Path: r.Path, Reason: why})
	}
	return out
}

// laterTx names a transaction committed after k that still has an
// operation on p.
func (s *Sandbox) laterTx(txs []*Tx, k *Tx, p string) string {
	for i := len(txs) - 1; i >= 0; i-- {
		t := txs[i]
		if !t.Time.After(k.Time) || t.State == StateUndone || t.State == StateForgotten {
			continue
		}
		recs, err := readManifest(filepath.Join(s.layout().layerDir(t.ID), manifestFile))
		if err != nil {
			continue
		}
		for _, r := range recs {
			if _, undone := t.UndoneOps[r.Index]; undone {
				continue
			}
			if under(p, r.Path) || under(r.Path, p) {
				return t.ID
			}
		}
	}
	return ""
}

// RecoveryReport says what Recover found.
type RecoveryReport struct {
	RolledBack []string // transactions rolled back to all-before
	Completed  []string // transactions whose commit point was reached
	Discarded  []string // runs whose nash process is gone
}

// Recover completes or rolls back every transaction an earlier nash left
// unfinished, and discards runs whose process is gone. New calls it.
func (s *Sandbox) Recover(ctx context.Context) (*RecoveryReport, error) {
	l := s.layout()
	if l.settled() {
		return &RecoveryReport{}, nil
	}
	lk, err := l.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer lk.unlock()
	rep := &RecoveryReport{}
	entries, err := os.ReadDir(l.journalDir())
	if err != nil {
		return nil, fmt.Errorf("read journal: %w", err)
	}
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".wal")
		if !ok {
			_ = os.Remove(filepath.Join(l.journalDir(), e.Name())) // a torn temp file
			continue
		}
		var w wal
		if err := readGob(l.walFile(id), &w); err != nil {
			// A journal is written whole (temp, fsync, rename) before any
			// operation, so an unreadable one never took effect.
			_ = os.Remove(l.walFile(id))
			continue
		}
		if _, err := l.readTx(id); err == nil {
			if w.Kind == "undo" {
				if err := s.markUndone(&w); err != nil {
					return nil, fmt.Errorf("recover transaction %s: %w", id, err)
				}
			}
			rep.Completed = append(rep.Completed, id)
		} else {
			if err := s.rollback(&w); err != nil {
				return nil, fmt.Errorf("recover transaction %s: %w", id, err)
			}
			_ = removeAll(l.layerDir(id))
			rep.RolledBack = append(rep.RolledBack, id)
		}
		if err := os.Remove(l.walFile(id)); err != nil {
			return nil, fmt.Errorf("recover transaction %s: %w", id, err)
		}
	}
	if len(entries) > 0 {
		_ = syncDir(l.journalDir())
	}
	runs, _ := os.ReadDir(l.runsDir())
	for _, e := range runs {
		var rec runRecord
		dir := filepath.Join(l.runsDir(), e.Name())
		if err := readGob(filepath.Join(dir, runFile), &rec); err == nil && alive(rec.PID, rec.PIDStart) {
			continue
		}
		if err := readGob(filepath.Join(dir, runFile), &rec); err != nil {
			if fi, err := os.Stat(dir); err == nil && time.Since(fi.ModTime()) < time.Minute {
				continue // being created right now
			}
		}
		rec.ID = e.Name()
		if err := s.removeRunFiles(&rec); err == nil {
			rep.Discarded = append(rep.Discarded, e.Name())
		}
	}
	// Layers without a record are left by a crash before the journal was
	// written: nothing of them took effect.
	for _, id := range l.strayLayers() {
		if _, err := os.Stat(l.walFile(id)); err == nil {
			continue
		}
		_ = removeAll(l.layerDir(id))
	}
	return rep, nil
}

// settled reports, without the lock, that Recover has nothing to do: no
// journal, no run but of live processes, no layer without its transaction
// record. What an unfinished transaction leaves is there before its
// process can die, so a state dir seen settled had nothing to recover;
// whatever appears after is another process's own work under way, which
// a recovery with the lock would have left alone as well.
func (l layout) settled() bool {
	if !emptyDir(l.journalDir()) {
		return false
	}
	runs, err := os.ReadDir(l.runsDir())
	if err != nil {
		return false
	}
	for _, e := range runs {
		var rec runRecord
		if err := readGob(filepath.Join(l.runsDir(), e.Name(), runFile), &rec); err != nil || !alive(rec.PID, rec.PIDStart) {
			return false
		}
	}
	return len(l.strayLayers()) == 0
}

// emptyDir reports whether dir exists and has no entries.
func emptyDir(dir string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	return err == io.EOF && len(names) == 0
}

// strayLayers names the undo layers that have no transaction record.
func (l layout) strayLayers() []string {
	layers, err := os.ReadDir(l.layersDir())
	if err != nil || len(layers) == 0 {
		return nil
	}
	txs, _ := os.ReadDir(l.txDir())
	known := make(map[string]bool, len(txs))
	for _, e := range txs {
		if id, ok := strings.CutSuffix(e.Name(), ".json"); ok {
			known[id] = true
		}
	}
	var stray []string
	for _, e := range layers {
		if !known[e.Name()] {
			stray = append(stray, e.Name())
		}
	}
	return stray
}

// Log lists the transactions, oldest first.
func (s *Sandbox) Log() ([]*Tx, error) { return s.layout().listTx() }

// Show returns a transaction and the changes it made.
func (s *Sandbox) Show(id string) (*Tx, *effects.ChangeSet, error) {
	l := s.layout()
	t, err := l.readTx(id)
	if err != nil {
		return nil, nil, err
	}
	cs := &effects.ChangeSet{}
	if err := readGob(filepath.Join(l.layerDir(id), changesFile), cs); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, nil, err
	}
	if t.Undoes != "" && cs.Len() == 0 {
		recs, _ := readManifest(filepath.Join(l.layerDir(id), manifestFile))
		for _, r := range recs {
			kind := effects.Modified
			switch {
			case r.Kind == "move":
				cs.Changes = append(cs.Changes, effects.Change{Path: r.Path, Kind: effects.Renamed, From: r.From})
				continue
			case r.Post.Absent:
				kind = effects.Deleted
			case !r.PreExists:
				kind = effects.Created
			case r.Kind == "meta":
				kind = effects.MetaChanged
			}
			cs.Changes = append(cs.Changes, effects.Change{Path: r.Path, Kind: kind})
		}
	}
	return t, cs, nil
}

// OldVersion returns where transaction id's undo layer holds the version
// of p it displaced, when that is a regular file.
func (s *Sandbox) OldVersion(id, p string) (string, bool) {
	recs, err := readManifest(filepath.Join(s.layout().layerDir(id), manifestFile))
	if err != nil {
		return "", false
	}
	for _, r := range recs {
		if r.Stash == "" || !under(p, r.Path) {
			continue
		}
		q := filepath.Join(s.layout().layerDir(id), "objects", r.Stash)
		if p != r.Path {
			q = filepath.Join(q, strings.TrimPrefix(p, r.Path+"/"))
		}
		if fi, err := os.Lstat(q); err == nil && fi.Mode().IsRegular() {
			return q, true
		}
	}
	return "", false
}

// Forget releases a transaction's undo layer; it can no longer be undone.
func (s *Sandbox) Forget(ctx context.Context, id string) error {
	l := s.layout()
	lk, err := l.lock(ctx)
	if err != nil {
		return err
	}
	defer lk.unlock()
	return s.forget(id)
}

func (s *Sandbox) forget(id string) error {
	l := s.layout()
	t, err := l.readTx(id)
	if err != nil {
		return err
	}
	if err := removeAll(filepath.Join(l.layerDir(id), "objects")); err != nil {
		return err
	}
	t.State, t.UndoBytes = StateForgotten, 0
	return l.writeTx(t)
}

// GCResult says what GC released.
type GCResult struct {
	Forgotten []string `json:"forgotten"`
	Freed     int64    `json:"freed_bytes"`
	Kept      int64    `json:"kept_bytes"`
}

// GC forgets undo layers older than olderThan (when > 0), then the oldest
// ones until at most maxSize bytes are held (when >= 0).
func (s *Sandbox) GC(ctx context.Context, olderThan time.Duration, maxSize int64) (*GCResult, error) {
	l := s.layout()
	lk, err := l.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer lk.unlock()
	txs, err := l.listTx()
	if err != nil {
		return nil, err
	}
	res := &GCResult{}
	var held int64
	for _, t := range txs {
		held += t.UndoBytes
	}
	now := time.Now()
	for _, t := range txs {
		if t.State == StateForgotten {
			continue
		}
		old := olderThan > 0 && now.Sub(t.Time) > olderThan
		big := maxSize >= 0 && held > maxSize
		if !old && !big {
			continue
		}
		if err := s.forget(t.ID); err != nil {
			return nil, err
		}
		res.Forgotten = append(res.Forgotten, t.ID)
		res.Freed += t.UndoBytes
		held -= t.UndoBytes
	}
	res.Kept = held
	sort.Strings(res.Forgotten)
	return res, nil
}

// duSize adds up the bytes held below p.
func duSize(p string) int64 {
	var n int64
	_ = filepath.WalkDir(p, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// NewVersion returns where a pending run holds its new version of p, when
// that is a regular file.
func (s *Sandbox) NewVersion(id, p string) (string, bool) {
	var rec runRecord
	if err := readGob(filepath.Join(s.layout().runDir(id), runFile), &rec); err != nil {
		return "", false
	}
	best := -1
	for i, l := range rec.Layers {
		if under(p, l.Point) && (best < 0 || len(l.Point) > len(rec.Layers[best].Point)) {
			best = i
		}
	}
	if best < 0 {
		return "", false
	}
	l := rec.Layers[best]
	rel := strings.TrimPrefix(strings.TrimPrefix(p, l.Point), "/")
	q := filepath.Join(l.Upper, rel)
	if fi, err := os.Lstat(q); err == nil && fi.Mode().IsRegular() {
		return q, true
	}
	return "", false
}
