package index

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// WatchEvent reports what the watcher did.
type WatchEvent struct {
	Op    string // "sync" (paths re-indexed), "rescan" (full rescan), "error"
	Paths []string
	Stats Stats
	Err   error
}

// WatchOption configures Watch.
type WatchOption func(*watchConfig)

type watchConfig struct {
	quiet, maxDelay time.Duration
	onEvent         func(WatchEvent)
}

// WatchDelay sets how long the watcher waits for a burst of changes to end
// (default 50 ms) and the longest it lets changes wait while events keep
// coming (default 300 ms).
func WatchDelay(quiet, maxDelay time.Duration) WatchOption {
	return func(c *watchConfig) { c.quiet, c.maxDelay = quiet, maxDelay }
}

// OnWatchEvent sets a function told of every batch the watcher handled. It
// runs on the watcher's goroutine and must not block for long.
func OnWatchEvent(f func(WatchEvent)) WatchOption {
	return func(c *watchConfig) { c.onEvent = f }
}

// Watcher keeps an index in step with changes under its roots: the LSFS
// supervisor. Changes are batched and indexed within maxDelay plus the
// indexing time; an event-queue overflow triggers a full rescan.
type Watcher struct {
	ix     *Index
	fsw    *fsnotify.Watcher
	cfg    watchConfig
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	watched map[string]bool // directories with an inotify watch
}

// Watch starts watching the index's roots. The watches are in place when it
// returns; changes are indexed on a goroutine until ctx ends or Close.
func (ix *Index) Watch(ctx context.Context, opts ...WatchOption) (*Watcher, error) {
	cfg := watchConfig{quiet: 50 * time.Millisecond, maxDelay: 300 * time.Millisecond}
	for _, o := range opts {
		o(&cfg)
	}
	fsw, err := fsnotify.NewBufferedWatcher(4096)
	if err != nil {
		return nil, fmt.Errorf("start watcher: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	w := &Watcher{ix: ix, fsw: fsw, cfg: cfg, cancel: cancel, done: make(chan struct{}), watched: map[string]bool{}}
	roots, err := ix.Roots()
	if err != nil {
		cancel()
		fsw.Close()
		return nil, err
	}
	if len(roots) == 0 {
		cancel()
		fsw.Close()
		return nil, errors.New("watch: the index has no roots")
	}
	for _, r := range roots {
		w.addTree(ctx, roots, r)
	}
	go w.run(ctx)
	return w, nil
}

// Close stops the watcher and waits for it to finish the batch in hand.
// Errors met while watching were reported through OnWatchEvent.
func (w *Watcher) Close() error {
	w.cancel()
	<-w.done
	return nil
}

// Done is closed when the watcher has stopped.
func (w *Watcher) Done() <-chan struct{} { return w.done }

// addTree watches dir and the directories below it that are indexed.
func (w *Watcher) addTree(ctx context.Context, roots []string, dir string) {
	fi, err := os.Stat(dir)
	if err != nil {
		return
	}
	if !fi.IsDir() {
		// A root that is a file: watch its directory, events are filtered.
		dir = filepath.Dir(dir)
		w.add(dir)
		return
	}
	if _, excluded := w.ix.ancestorRules(roots, dir, true); excluded {
		return
	}
	w.add(dir)
	_ = w.ix.walkDirs(ctx, dir, func(d string) { w.add(d) })
}

func (w *Watcher) add(dir string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.watched[dir] {
		return
	}
	if err := w.fsw.Add(dir); err != nil {
		w.emit(WatchEvent{Op: "error", Paths: []string{dir}, Err: fmt.Errorf("watch %s: %w", dir, err)})
		return
	}
	w.watched[dir] = true
}

// forget drops the watches at or below a path that is gone, so that a
// directory moved back in gets fresh watches with its new name.
func (w *Watcher) forget(path string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for d := range w.watched {
		if underRoot(d, path) {
			_ = w.fsw.Remove(d) // may already be gone with the directory
			delete(w.watched, d)
		}
	}
}

func (w *Watcher) emit(ev WatchEvent) {
	if w.cfg.onEvent != nil {
		w.cfg.onEvent(ev)
	}
}

func (w *Watcher) run(ctx context.Context) {
	defer close(w.done)
	defer w.fsw.Close()
	pending := map[string]bool{}
	rescan := false
	var first time.Time
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	arm := func() {
		now := time.Now()
		if first.IsZero() {
			first = now
		}
		wait := min(w.cfg.quiet, max(0, w.cfg.maxDelay-now.Sub(first)))
		timer.Reset(wait)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			if ev.Op == fsnotify.Chmod {
				continue // metadata only; content and mtime changes come as Write
			}
			pending[filepath.Clean(ev.Name)] = true
			arm()
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				rescan = true
				arm()
				continue
			}
			w.emit(WatchEvent{Op: "error", Err: err})
		case <-timer.C:
			paths := make([]string, 0, len(pending))
			for p := range pending {
				paths = append(paths, p)
			}
			clear(pending)
			first = time.Time{}
			if rescan {
				rescan = false
				w.rescan(ctx)
			} else {
				w.apply(ctx, paths)
			}
		}
	}
}

// rescan re-reads every root: after an overflow, events were lost.
func (w *Watcher) rescan(ctx context.Context) {
	roots, err := w.ix.Roots()
	if err != nil {
		w.emit(WatchEvent{Op: "error", Err: err})
		return
	}
	for _, r := range roots {
		w.addTree(ctx, roots, r)
	}
	st, err := w.ix.Update(ctx)
	w.emit(WatchEvent{Op: "rescan", Paths: roots, Stats: st, Err: err})
}

// apply indexes the changed paths: gone ones are dropped, new directories
// watched and walked, files re-read.
func (w *Watcher) apply(ctx context.Context, paths []string) {
	roots, err := w.ix.Roots()
	if err != nil {
		w.emit(WatchEvent{Op: "error", Err: err})
		return
	}
	slices.Sort(paths)
	var live []string
	for _, p := range paths {
		if containingRoot(roots, p) == p && !slices.Contains(roots, p) {
			continue // outside every root (the directory of a file root)
		}
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			w.forget(p)
		case err == nil && fi.IsDir():
			w.forget(p) // a directory moved in may carry stale watches
		}
	}
	for _, p := range paths {
		if containingRoot(roots, p) == p && !slices.Contains(roots, p) {
			continue
		}
		if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
			w.addTree(ctx, roots, p)
		}
		// A path below one already listed is covered by its walk.
		if n := len(live); n > 0 && underRoot(p, live[n-1]) {
			continue
		}
		live = append(live, p)
	}
	if len(live) == 0 {
		return
	}
	w.ix.mu.Lock()
	st, err := w.ix.sync(ctx, live)
	w.ix.mu.Unlock()
	if err != nil && ctx.Err() != nil {
		return
	}
	w.emit(WatchEvent{Op: "sync", Paths: live, Stats: st, Err: err})
}

// walkDirs calls fn for every directory below dir that a walk would enter.
func (ix *Index) walkDirs(ctx context.Context, dir string, fn func(string)) error {
	return ix.walkDirTree(ctx, dir, nil, fn)
}

func (ix *Index) walkDirTree(ctx context.Context, dir string, rules ignoreRules, fn func(string)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	for _, name := range ignoreFiles {
		if data, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
			rules = append(rules[:len(rules):len(rules)], parseIgnore(dir, data)...)
		}
	}
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if (strings.HasPrefix(e.Name(), ".") && !ix.cfg.hidden) || rules.ignored(p, true) || p == ix.dir {
			continue
		}
		fn(p)
		if err := ix.walkDirTree(ctx, p, rules, fn); err != nil {
			return err
		}
	}
	return nil
}
