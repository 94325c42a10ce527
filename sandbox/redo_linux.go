package sandbox

import (
	"context"
	"path/filepath"
)

// Redo brings back the changes of the latest undo that no change came
// after (see lastRedoable), by undoing that undo: a transaction like any
// other, which an undo reverses again.
func (s *Sandbox) Redo(ctx context.Context) (*Tx, error) {
	txs, err := s.layout().listTx()
	if err != nil {
		return nil, err
	}
	id := lastRedoable(txs)
	if id == "" {
		return nil, ErrNothingToRedo
	}
	return s.Undo(ctx, id, UndoOptions{})
}

// markChain follows an undo down the chain of transactions it reverses,
// once the ops idx of k are undone: if k was itself an undo, the versions
// it had taken away come back (its target's ops are in effect again); if
// that target was an undo, its own target's ops are undone again; and so
// on. Every state on the chain then says what is in effect. Idempotent,
// like markUndone, which calls it.
func (s *Sandbox) markChain(k *Tx, idx []int) error {
	l := s.layout()
	restore := true
	for cur := k; cur.Undoes != ""; restore = !restore {
		next, err := l.readTx(cur.Undoes)
		if err != nil {
			return nil // the chain ends at a transaction no longer recorded
		}
		recs, err := readManifest(filepath.Join(l.layerDir(cur.ID), manifestFile))
		if err != nil {
			return err
		}
		if next.UndoneOps == nil {
			next.UndoneOps = map[int]string{}
		}
		var nidx []int
		for _, i := range idx {
			if i < 0 || i >= len(recs) {
				continue
			}
			j := recs[i].UndoOf
			nidx = append(nidx, j)
			if restore {
				delete(next.UndoneOps, j)
			} else {
				next.UndoneOps[j] = cur.ID
			}
		}
		next.State = undoState(next)
		if err := l.writeTx(next); err != nil {
			return err
		}
		cur, idx = next, nidx
	}
	return nil
}

// undoState is the state t's undone operations give it; a forgotten
// transaction stays forgotten.
func undoState(t *Tx) TxState {
	switch {
	case t.State == StateForgotten:
		return StateForgotten
	case len(t.UndoneOps) == 0:
		return StateCommitted
	case len(t.UndoneOps) >= t.Ops:
		return StateUndone
	}
	return StatePartlyUndone
}
