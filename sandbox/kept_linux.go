package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nash-shell/nash/effects"
)

// An aborted run is not thrown away at once: Keep sets it aside, as it
// stands, so that a keystroke at the wrong moment loses nothing. A kept
// run can be shown (ShowKept), committed later like a pending one (Commit:
// a path changed since the run is a conflict, as for undo), or discarded
// (Abort); GC discards those kept longer than it is told.
//
// Its upper dirs stay where the run left them, in its run dir, in the
// state dir. The overlays away from the working directory have theirs on
// the run's scratch tmpfs, which lives only while the process that ran it
// holds it: Keep drops those that hold nothing, and refuses a run that
// changed something there (NotKeptError). A scratch dir of an older
// layout (a directory under scratchBase) is renamed out of the sweeps'
// way (keptPrefix), with a note of its owner.

// keptPrefix names a kept run's scratch dir in scratchBase; the file
// keptOwner inside it names the run dir it belongs to.
const (
	keptPrefix = "nash-kept-"
	keptOwner  = "owner"
)

// Keep aborts pending run id but keeps it, to be committed or discarded
// later; prompt is the request that produced its script, for the log.
// Nothing live changes.
func (s *Sandbox) Keep(ctx context.Context, id, prompt string) error {
	l := s.layout()
	lk, err := l.lock(ctx)
	if err != nil {
		return err
	}
	defer lk.unlock()
	var rec runRecord
	if err := readGob(filepath.Join(l.runDir(id), runFile), &rec); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return &NotFoundError{ID: id}
		}
		return err
	}
	if r, ok := s.light[id]; ok && r.rec != nil && rec.State == runRunning {
		rec = *r.rec // a run without changes, whose pending record was not written
	}
	if rec.State != runPending {
		return fmt.Errorf("run %s is %s, not pending", id, rec.State)
	}
	s.waitTorndown(id)
	layers := rec.Layers[:0:0]
	for _, ly := range rec.Layers {
		if !ly.Scratch {
			layers = append(layers, ly)
			continue
		}
		if !emptyDir(ly.Upper) {
			return &NotKeptError{ID: id, Point: ly.Point}
		}
	}
	rec.Layers = layers
	// overlayfs leaves mode-000 dirs in the work dirs, which a kept run
	// no longer needs: its owner can remove its dir with rm -r.
	openWorkDirs(l.runDir(id))
	if rec.Scratch != "" && strings.HasPrefix(filepath.Base(rec.Scratch), scratchPrefix) {
		if err := keepScratch(&rec, l.runDir(id)); err != nil {
			return fmt.Errorf("keep run %s: %w", id, err)
		}
	}
	rec.State, rec.Kept = runKept, time.Now().UTC()
	if prompt != "" {
		rec.Prompt = prompt
	}
	if err := writeGob(filepath.Join(l.runDir(id), runFile), &rec); err != nil {
		return fmt.Errorf("keep run %s: %w", id, err)
	}
	if fs := s.light[id].scratchFS; fs != nil {
		fs.Close() // its layers there held nothing: free it
	}
	delete(s.light, id)
	return nil
}

// keepScratch drops the layers on the scratch dir that hold no change and
// renames the scratch dir out of the sweeps' way, with a note of its
// owner, or removes it when no layer there holds a change.
func keepScratch(rec *runRecord, runDir string) error {
	openWorkDirs(rec.Scratch)
	var layers = rec.Layers[:0:0]
	used := false
	for _, ly := range rec.Layers {
		if !under(ly.Upper, rec.Scratch) {
			layers = append(layers, ly)
			continue
		}
		if emptyDir(ly.Upper) {
			continue
		}
		layers = append(layers, ly)
		used = true
	}
	if !used {
		rec.Layers = layers
		err := removeRun(rec.Scratch)
		rec.Scratch = ""
		return err
	}
	kept := filepath.Join(scratchBase, keptPrefix+strings.TrimPrefix(filepath.Base(rec.Scratch), scratchPrefix))
	if err := os.WriteFile(filepath.Join(rec.Scratch, keptOwner), []byte(runDir), 0o600); err != nil {
		return err
	}
	if err := os.Rename(rec.Scratch, kept); err != nil {
		return err
	}
	for i := range layers {
		for _, p := range []*string{&layers[i].Upper, &layers[i].Work} {
			if rel, ok := strings.CutPrefix(*p, rec.Scratch+"/"); ok {
				*p = filepath.Join(kept, rel)
			}
		}
	}
	rec.Layers, rec.Scratch = layers, kept
	return nil
}

// readKept reads the record of kept run id.
func (l layout) readKept(id string) (*runRecord, error) {
	var rec runRecord
	if err := readGob(filepath.Join(l.runDir(id), runFile), &rec); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, &NotFoundError{ID: id}
		}
		return nil, err
	}
	if rec.State != runKept {
		return nil, fmt.Errorf("run %s: %w", id, ErrNotKept)
	}
	rec.ID = id
	return &rec, nil
}

func (rec *runRecord) kept() *KeptRun {
	return &KeptRun{ID: rec.ID, Script: rec.Script, Prompt: rec.Prompt, Dir: rec.Dir, Started: rec.Started, Aborted: rec.Kept, ExitCode: rec.ExitCode}
}

// lostLayers names the mount points whose changes a kept run held on
// tmpfs and that are gone (the machine restarted since).
func (rec *runRecord) lostLayers() []string {
	var out []string
	for _, ly := range rec.Layers {
		if _, err := os.Lstat(ly.Upper); err != nil {
			out = append(out, ly.Point)
		}
	}
	return out
}

// ShowKept returns kept run id and what it changed.
func (s *Sandbox) ShowKept(id string) (*KeptRun, *effects.ChangeSet, error) {
	rec, err := s.layout().readKept(id)
	if err != nil {
		return nil, nil, err
	}
	if lost := rec.lostLayers(); len(lost) > 0 {
		return rec.kept(), nil, &LostError{ID: id, Points: lost}
	}
	cs, _, err := scanLayers(rec.Layers, rec.Renames, rec.Planted)
	if err != nil {
		return nil, nil, fmt.Errorf("read what run %s changed: %w", id, err)
	}
	return rec.kept(), cs, nil
}

// Kept lists the kept runs, oldest first.
func (s *Sandbox) Kept() ([]*KeptRun, error) {
	l := s.layout()
	entries, err := os.ReadDir(l.runsDir())
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var out []*KeptRun
	for _, e := range entries {
		if !IsRunID(e.Name()) {
			continue
		}
		if rec, err := l.readKept(e.Name()); err == nil {
			out = append(out, rec.kept())
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Aborted.Before(out[j].Aborted) })
	return out, nil
}

// discardKept removes a kept run, by way of the trash.
func (s *Sandbox) discardKept(rec *runRecord) error {
	s.heavy = true // Close empties the trash
	return s.removeRunFiles(rec)
}

// gcKept discards the runs kept longer than olderThan.
func (s *Sandbox) gcKept(olderThan time.Duration) ([]string, error) {
	if olderThan <= 0 {
		return nil, nil
	}
	runs, err := s.Kept()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, k := range runs {
		if time.Since(k.Aborted) <= olderThan {
			continue
		}
		rec, err := s.layout().readKept(k.ID)
		if err != nil {
			continue
		}
		if err := s.discardKept(rec); err != nil {
			return out, err
		}
		out = append(out, k.ID)
	}
	return out, nil
}

// sweepKeptScratch removes a kept run's scratch dir whose run is gone (its
// state dir was deleted, say): it would otherwise hold memory forever.
func sweepKeptScratch(p string) {
	b, err := os.ReadFile(filepath.Join(p, keptOwner))
	if err != nil {
		return
	}
	if _, err := os.Stat(string(b)); errors.Is(err, os.ErrNotExist) {
		_ = removeRun(p)
	}
}
