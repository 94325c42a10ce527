package sandbox

// Undo layers: what each remembers of its operations (the manifest), and
// what nash log, show, history, forget and gc read of them.

import (
	"bufio"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nash-shell/nash/effects"
)

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

// writeManifestAtomic replaces a manifest whole: a crash leaves the old
// one or the new one.
func writeManifestAtomic(path string, records []opRecord) error {
	tmp := path + ".tmp"
	if err := writeManifest(tmp, records); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(filepath.Dir(path))
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
	// Discarded are the aborted runs kept longer than asked (see Keep).
	Discarded []string `json:"discarded_runs,omitempty"`
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
	res.Discarded, err = s.gcKept(olderThan)
	return res, err
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
