package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nash-shell/nash/effects"
)

// CommitOptions narrows a commit.
type CommitOptions struct {
	// Paths, when set, commits only the operations at or below these paths.
	Paths []string
	// Prompt is the request that produced the script, kept in the log.
	Prompt string
	// Tokens is what the model's work on the script cost, kept in the log.
	Tokens *Tokens
	// Bookkeeping says the changes are only tools' own files (Tools
	// lists them all): the transaction takes a minor id, so the ids a
	// person sees stay consecutive, and an undo without an id passes over
	// it.
	Bookkeeping bool
	// Tools lists the changed paths that are tools' own files, recorded
	// with the transaction so that show lists them apart.
	Tools []string
}

// Commit applies a pending run to the live files. Every displaced object
// goes to the transaction's undo layer. A path changed outside nash while
// the script ran is a conflict: nothing is changed.
func (s *Sandbox) Commit(ctx context.Context, id string, opt CommitOptions) (*Tx, error) {
	s.settle(ctx)
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
	if rec.State != runPending && rec.State != runKept {
		return nil, fmt.Errorf("run %s is %s, not pending", id, rec.State)
	}
	if opt.Prompt == "" {
		opt.Prompt = rec.Prompt // a kept run's request
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
	txID := l.nextID(opt.Bookkeeping)
	w := &wal{Tx: txID, Kind: "commit", Run: id}
	for _, o := range ops {
		w.Ops = append(w.Ops, walOp{Path: o.Path, Src: o.Src, Tree: o.Tree, Meta: o.Meta, From: o.From, Live: o.Live, UndoOf: -1})
	}
	records, err := s.execute(w)
	if err != nil {
		return nil, err
	}
	tx := &Tx{
		ID: txID, Time: time.Now().UTC(), Script: rec.Script, Prompt: opt.Prompt, Dir: rec.Dir, Tokens: opt.Tokens,
		State: StateCommitted, Changes: cs.Len(), ExitCode: rec.ExitCode, Ops: len(records), Network: rec.Network,
		UndoBytes: duSize(filepath.Join(l.layerDir(txID), "objects")), Bookkeeping: opt.Bookkeeping, Tools: committedTools(opt.Tools, cs),
	}
	if err := writeGob(filepath.Join(l.layerDir(txID), changesFile), cs); err != nil {
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
