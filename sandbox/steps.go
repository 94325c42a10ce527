package sandbox

import (
	"errors"
	"fmt"
	"strings"
)

// Undo and redo without an id step through the history as an editor's do:
// each undo reverses the latest change still in effect, further back each
// time, and each redo brings back the latest undone one, until a new
// change is made. A change is a transaction made by a run (or a rollback):
// not an undo, and not bookkeeping (tools' own files only).

// ErrNothingToUndo says no change is left in effect to undo.
var ErrNothingToUndo = errors.New("nothing to undo")

// ErrNothingToRedo says no undo is left to redo: none was made, or a new
// change came after it.
var ErrNothingToRedo = errors.New("nothing to redo")

// NothingThereError says a transaction has nothing left to undo at the
// paths given (or at all): those operations were undone already, or it
// never changed those paths.
type NothingThereError struct {
	ID    string
	Paths []string
}

func (e *NothingThereError) Error() string {
	if len(e.Paths) == 0 {
		return fmt.Sprintf("transaction %s has nothing left to undo", e.ID)
	}
	q := make([]string, len(e.Paths))
	for i, p := range e.Paths {
		q[i] = strconvQuote(p)
	}
	return fmt.Sprintf("transaction %s has nothing left to undo at %s", e.ID, strings.Join(q, ", "))
}

// inEffect reports whether some of t's operations are not undone.
func inEffect(t *Tx) bool { return t.State == StateCommitted || t.State == StatePartlyUndone }

// chain places each transaction on the chain of undos it belongs to: its
// depth (0 for a change, 1 for its undo, 2 for the undo of that undo, a
// redo, ...) and whether the change at the chain's root is bookkeeping.
type chain map[string]struct {
	depth       int
	bookkeeping bool
}

func chainOf(txs []*Tx) chain {
	byID := make(map[string]*Tx, len(txs))
	for _, t := range txs {
		byID[t.ID] = t
	}
	c := chain{}
	for _, t := range txs {
		d, root := 0, t
		for seen := 0; root.Undoes != "" && seen < len(txs); seen++ {
			next, ok := byID[root.Undoes]
			d++
			if !ok {
				break
			}
			root = next
		}
		c[t.ID] = struct {
			depth       int
			bookkeeping bool
		}{d, root.Bookkeeping}
	}
	return c
}

// lastUndoable is, of txs in commit order, the latest in effect that
// brings changes in: a change, or a redo of one (an even depth). "" when
// there is none.
func lastUndoable(txs []*Tx) string {
	c := chainOf(txs)
	for i := len(txs) - 1; i >= 0; i-- {
		t := txs[i]
		if p := c[t.ID]; !p.bookkeeping && p.depth%2 == 0 && inEffect(t) {
			return t.ID
		}
	}
	return ""
}

// lastRedoable is, of txs in commit order, the latest undo in effect (an
// odd depth) that no change came after: undoing it is the redo. "" when
// there is none.
func lastRedoable(txs []*Tx) string {
	c := chainOf(txs)
	for i := len(txs) - 1; i >= 0; i-- {
		t := txs[i]
		p := c[t.ID]
		switch {
		case p.bookkeeping || !inEffect(t):
		case p.depth == 0:
			return "" // a change made after the undos
		case p.depth%2 == 1:
			return t.ID
		}
	}
	return ""
}
