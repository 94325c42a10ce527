package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/nash-shell/nash/internal/sandboxinit"
)

// StageVersion prepares, without running anything, a pending run whose
// one change makes v the content of path again, as a script that copied it
// there would leave it: it is shown, diffed, committed (to a transaction
// whose undo layer keeps the current content) or aborted like any run.
// nash rollback takes it through the same flow as a script.
func (s *Sandbox) StageVersion(ctx context.Context, path string, v Version) (*Pending, error) {
	if v.Source == "current" {
		return nil, errors.New("that version is the current one: nothing to roll back")
	}
	l := s.layout()
	if err := l.ensure(); err != nil {
		return nil, err
	}
	lk, err := l.lock(ctx)
	if err != nil {
		return nil, err
	}
	id, err := l.newRun()
	lk.unlock()
	if err != nil {
		return nil, err
	}
	// The layer covers the nearest directory that exists, so that missing
	// parents of path are created by the commit too.
	point := filepath.Dir(path)
	for {
		if fi, err := os.Stat(point); err == nil && fi.IsDir() {
			break
		}
		if point == "/" {
			break
		}
		point = filepath.Dir(point)
	}
	upper := filepath.Join(l.runDir(id), "stage")
	rel, err := filepath.Rel(point, path)
	if err != nil {
		_ = removeRun(l.runDir(id))
		return nil, err
	}
	dst := filepath.Join(upper, rel)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		_ = removeRun(l.runDir(id))
		return nil, fmt.Errorf("stage version %d of %s: %w", v.N, strconvQuote(path), err)
	}
	if err := copyTree(v.Content, dst); err != nil {
		_ = removeRun(l.runDir(id))
		return nil, fmt.Errorf("copy version %d of %s: %w", v.N, strconvQuote(path), err)
	}
	layers := []sandboxinit.Layer{{Point: point, Upper: upper}}
	cs, ops, err := scanLayers(layers, nil, nil)
	if err != nil {
		_ = removeRun(l.runDir(id))
		return nil, fmt.Errorf("read the staged change: %w", err)
	}
	rec := &runRecord{
		ID: id, Script: fmt.Sprintf("nash rollback %s (to version %d, %s)", path, v.N, v.Source),
		Dir: point, Started: time.Now().UTC(), PID: os.Getpid(), PIDStart: s.selfStart(),
		Layers: layers, State: runPending, Pre: map[string]fingerprint{},
	}
	for _, o := range ops {
		rec.Pre[o.Path] = fingerprintOf(o.Path)
	}
	if err := writeGobVolatile(filepath.Join(l.runDir(id), runFile), rec); err != nil {
		_ = removeRun(l.runDir(id))
		return nil, fmt.Errorf("record run: %w", err)
	}
	s.light[id] = lightRun{light: isLight(cs)}
	return &Pending{ID: id, Changes: cs, Started: rec.Started}, nil
}
