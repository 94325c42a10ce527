package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// RecoveryReport says what Recover found.
type RecoveryReport struct {
	RolledBack []string // transactions rolled back to all-before
	Completed  []string // transactions whose commit point was reached
	Discarded  []string // runs whose nash process is gone
	Kept       []Kept   // paths rolled-back transactions kept aside
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
	var unfinished []*RecoveryError
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
		if t, err := l.readTx(id); err == nil {
			// The commit point was reached (or a roll-back with paths
			// kept aside was recorded): what is left is bookkeeping.
			if w.Kind == "undo" && t.State != StateRolledBack {
				if err := s.markUndone(&w); err != nil {
					return nil, fmt.Errorf("recover transaction %s: %w", id, err)
				}
			}
			if t.State != StateRolledBack {
				rep.Completed = append(rep.Completed, id)
			}
			if err := os.Remove(l.walFile(id)); err != nil {
				return nil, fmt.Errorf("recover transaction %s: %w", id, err)
			}
			continue
		}
		err := s.rolledBack(&w, errInterrupted)
		var re *RecoveryError
		var rb *RolledBackError
		switch {
		case errors.As(err, &re):
			// Left for later; everything else goes on.
			unfinished = append(unfinished, re)
			continue
		case errors.As(err, &rb):
			rep.Kept = append(rep.Kept, rb.Kept...)
		case err != nil && !errors.Is(err, errInterrupted):
			return nil, fmt.Errorf("recover transaction %s: %w", id, err)
		}
		rep.RolledBack = append(rep.RolledBack, id)
	}
	if len(entries) > 0 {
		_ = syncDir(l.journalDir())
	}
	runs, _ := os.ReadDir(l.runsDir())
	for _, e := range runs {
		var rec runRecord
		dir := filepath.Join(l.runsDir(), e.Name())
		if err := readGob(filepath.Join(dir, runFile), &rec); err == nil && (alive(rec.PID, rec.PIDStart) || rec.State == runKept) {
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
	if len(unfinished) > 0 {
		return rep, unfinished[0]
	}
	return rep, nil
}

// errInterrupted is why recovery rolls a transaction back.
var errInterrupted = errors.New("interrupted")

// Unrecovered says what New's recovery could not finish (a roll-back
// short of space, say), as a *RecoveryError, or nil. Commits and undos
// try it again first; those that touch the same paths are refused until
// it is done.
func (s *Sandbox) Unrecovered() error { return s.unrecovered }

// settle tries again, before a commit or undo, a roll-back New could not
// finish.
func (s *Sandbox) settle(ctx context.Context) {
	if s.unrecovered == nil {
		return
	}
	if _, err := s.Recover(ctx); err == nil {
		s.unrecovered = nil
	} else {
		var re *RecoveryError
		if errors.As(err, &re) {
			s.unrecovered = re
		}
	}
}

// unfinishedPaths lists the paths of the journals a roll-back has not
// finished, with the error that says so; the caller holds the lock.
func (l layout) unfinishedPaths() (map[string]string, error) {
	entries, err := os.ReadDir(l.journalDir())
	if err != nil || len(entries) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".wal")
		if !ok {
			continue
		}
		var w wal
		if readGob(l.walFile(id), &w) != nil {
			continue
		}
		for _, o := range w.Ops {
			out[o.Path] = id
			if o.From != "" {
				out[o.From] = id // a move holds where it came from too
			}
		}
	}
	return out, nil
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
		if err := readGob(filepath.Join(l.runsDir(), e.Name(), runFile), &rec); err != nil || !alive(rec.PID, rec.PIDStart) && rec.State != runKept {
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
