package sandbox

import (
	"context"
	"fmt"
	"path/filepath"
	"time"
)

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
	s.settle(ctx)
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
		if id = lastUndoable(txs); id == "" {
			return nil, ErrNothingToUndo
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
	case StateRolledBack:
		return nil, fmt.Errorf("transaction %s was rolled back: nothing of it stands to undo (nash show %s names what it kept aside)", id, id)
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
		return nil, &NothingThereError{ID: id, Paths: opt.Paths}
	}
	if conflicts := s.undoConflicts(txs, k, sel); len(conflicts) > 0 && !opt.Force {
		return nil, &ConflictError{Conflicts: conflicts}
	}
	uid := l.nextID(false)
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
	script := fmt.Sprintf("nash undo %s", id)
	if k.Undoes != "" {
		script = fmt.Sprintf("nash redo %s (undo %s)", k.Undoes, id)
	}
	u := &Tx{
		ID: uid, Time: time.Now().UTC(), Script: script, Dir: k.Dir,
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
	k.State = undoState(k)
	k.UndoBytes = duSize(filepath.Join(l.layerDir(k.ID), "objects"))
	if err := l.writeTx(k); err != nil {
		return err
	}
	// Undoing an undo puts the original transaction's versions back,
	// and so on down the chain (markChain).
	idx := make([]int, 0, len(w.Ops))
	for _, o := range w.Ops {
		idx = append(idx, o.UndoOf)
	}
	if err := s.markChain(k, idx); err != nil {
		return err
	}
	s.refreshPosts(w)
	return nil
}

// refreshPosts fingerprints anew what an undo put back in place, in the
// transactions in effect that left it there: moving an object away and
// back changes only its ctime, and without this the next undo of such a
// transaction (stepping further back, or undoing a redo) would find the
// path "changed since". Only the same object, unchanged but for its
// ctime, is refreshed.
func (s *Sandbox) refreshPosts(w *wal) {
	l := s.layout()
	paths := make(map[string]bool, len(w.Ops))
	for _, o := range w.Ops {
		paths[o.Path] = true
	}
	txs, err := l.listTx()
	if err != nil {
		return
	}
	for _, t := range txs {
		if t.ID == w.Tx || !inEffect(t) {
			continue
		}
		f := filepath.Join(l.layerDir(t.ID), manifestFile)
		recs, err := readManifest(f)
		if err != nil {
			continue
		}
		changed := false
		for i := range recs {
			r := &recs[i]
			if _, undone := t.UndoneOps[r.Index]; undone || !paths[r.Path] {
				continue
			}
			if live := fingerprintOf(r.Path); r.Post.sameObject(live) && r.Post != live {
				r.Post, changed = live, true
			}
		}
		if changed {
			_ = writeManifestAtomic(f, recs)
		}
	}
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
