package index

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

// A sync walks the disk and the catalog side by side, a directory at a
// time: the catalog's entries for a directory's files are read when the
// walk enters it (catalogDir), so that neither the files found nor the
// files known are ever all in memory. An unchanged tree costs a directory
// listing, an lstat per file and a catalog lookup per file.

// job is a file found by the walker, or a path to drop.
type job struct {
	path string
	info fs.FileInfo
	old  *fileEntry
	skip error // set when the walker already knows the file is skipped
	// drop: the path (a file, or a directory with everything below it)
	// is gone from disk, or now ignored: remove it from the index.
	drop bool
}

// dropBatch is how many dropped paths are gathered before they are
// removed in one write.
const dropBatch = 2000

// sync brings the files under roots in step with the disk. ix.mu is held,
// which keeps Rebuild and Close from replacing ix.text meanwhile.
func (ix *Index) sync(ctx context.Context, roots []string) (Stats, error) {
	start := time.Now()
	var stats Stats
	if ix.text == nil {
		return stats, ErrClosed
	}
	allRoots, err := ix.Roots()
	if err != nil {
		return stats, err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	jobs := make(chan job, 256)
	results := make(chan result, 256)
	var seen, unchanged atomic.Int64
	var walkErr error
	var walkSkips []Skipped
	go func() {
		defer close(jobs)
		w := &syncWalk{ix: ix, ctx: ctx, roots: allRoots, jobs: jobs, seen: &seen, unchanged: &unchanged}
		for _, root := range roots {
			if err := w.path(root); err != nil {
				walkErr = err
				return
			}
		}
		walkSkips = w.skips
	}()
	var wg sync.WaitGroup
	for range ix.cfg.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				if j.drop {
					results <- result{job: j}
					continue
				}
				results <- ix.extract(j)
			}
		}()
	}
	go func() { wg.Wait(); close(results) }()

	var batch []result
	var drops []string
	batchBytes := 0
	lastProgress := time.Now()
	var werr error
	dropNow := func() {
		n, err := ix.dropPaths(ctx, drops)
		stats.Removed += n
		drops = drops[:0]
		if err != nil {
			werr = err
			cancel()
		}
	}
	for r := range results {
		if werr != nil {
			continue // drain
		}
		if r.drop {
			if drops = append(drops, r.path); len(drops) >= dropBatch {
				dropNow()
			}
			continue
		}
		batch = append(batch, r)
		if t, ok := r.doc[fieldText].(string); ok {
			batchBytes += len(t)
		}
		if len(batch) >= ix.cfg.batchFiles || batchBytes >= 4<<20 {
			// What is gone goes first: a renamed file is never found
			// under both names.
			if len(drops) > 0 {
				dropNow()
			}
			if werr != nil {
				continue
			}
			werr = ix.flush(ctx, batch, &stats)
			batch, batchBytes = batch[:0], 0
			if werr != nil {
				cancel()
			}
		}
		if p := ix.cfg.progress; p != nil && time.Since(lastProgress) > 100*time.Millisecond {
			lastProgress = time.Now()
			p(Progress{Seen: int(seen.Load()), Indexed: stats.Indexed, Skipped: len(stats.Skipped), Path: r.path})
		}
	}
	if werr == nil && len(drops) > 0 {
		dropNow()
	}
	if werr == nil && len(batch) > 0 {
		werr = ix.flush(ctx, batch, &stats)
	}
	stats.Skipped = append(stats.Skipped, walkSkips...)
	stats.Seen = int(seen.Load())
	stats.Unchanged = int(unchanged.Load())
	if werr != nil {
		return stats, werr
	}
	if walkErr != nil {
		return stats, walkErr
	}
	if err := ctx.Err(); err != nil {
		return stats, err
	}
	stats.Elapsed = time.Since(start)
	if p := ix.cfg.progress; p != nil {
		p(Progress{Seen: stats.Seen, Indexed: stats.Indexed, Skipped: len(stats.Skipped), Done: true})
	}
	return stats, nil
}

// syncWalk walks paths under the roots, sending a job for each file that
// is new or changed, and for each known path that is gone.
type syncWalk struct {
	ix        *Index
	ctx       context.Context
	roots     []string
	jobs      chan<- job
	seen      *atomic.Int64 // files found
	unchanged *atomic.Int64

	mu    sync.Mutex
	skips []Skipped // directories and links that could not be entered
}

func (w *syncWalk) skip(path string, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.skips = append(w.skips, Skipped{Path: path, Reason: err.Error(), Err: err})
}

func (w *syncWalk) send(j job) error {
	select {
	case w.jobs <- j:
		return nil
	case <-w.ctx.Done():
		return w.ctx.Err()
	}
}

// path syncs a root, or a file or directory under one: the ignore files
// and hidden directories between its root and it apply.
func (w *syncWalk) path(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			w.skip(path, err)
		}
		return w.send(job{path: path, drop: true})
	}
	rules, excluded := w.ix.ancestorRules(w.roots, path, fi.IsDir())
	if excluded {
		return w.send(job{path: path, drop: true})
	}
	if !fi.IsDir() {
		old, err := w.ix.entry(path)
		if err != nil {
			return err
		}
		return w.file(path, fi, old)
	}
	return w.tree(path, rules)
}

// dirJob is a directory to sync and the ignore rules above it.
type dirJob struct {
	dir   string
	rules ignoreRules
}

// tree syncs the directories under root, several at a time: a re-scan is
// mostly lstat calls, which two cores make in half the time.
func (w *syncWalk) tree(root string, rules ignoreRules) error {
	var mu sync.Mutex
	wake := sync.NewCond(&mu)
	queue := []dirJob{{root, rules}}
	busy := 0
	var first error
	worker := func() {
		mu.Lock()
		defer mu.Unlock()
		for {
			for len(queue) == 0 && busy > 0 && first == nil {
				wake.Wait()
			}
			if len(queue) == 0 || first != nil {
				wake.Broadcast()
				return
			}
			j := queue[len(queue)-1] // depth first: the queue stays short
			queue = queue[:len(queue)-1]
			busy++
			mu.Unlock()
			subs, err := w.dir(j.dir, j.rules)
			mu.Lock()
			busy--
			if err != nil && first == nil {
				first = err
			}
			queue = append(queue, subs...)
			wake.Broadcast()
		}
	}
	var wg sync.WaitGroup
	for range max(2, w.ix.cfg.workers) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			worker()
		}()
	}
	wg.Wait()
	return first
}

// file handles a file found on disk, known as old (nil if new).
func (w *syncWalk) file(path string, fi fs.FileInfo, old *fileEntry) error {
	w.seen.Add(1)
	j := job{path: path, info: fi, old: old}
	switch {
	case !fi.Mode().IsRegular():
		j.skip = ErrNotRegular
	case fi.Size() > w.ix.cfg.maxSize:
		j.skip = fmt.Errorf("%w (%d bytes)", ErrTooLarge, fi.Size())
	}
	if old != nil && old.upToDate(fi, w.ix.cfg) {
		w.unchanged.Add(1)
		return nil
	}
	return w.send(j)
}

// dir syncs a directory's files against the catalog's entries for it, and
// returns its subdirectories to sync; what the catalog knows below it that
// the disk no longer has is dropped.
func (w *syncWalk) dir(dir string, rules ignoreRules) ([]dirJob, error) {
	if err := w.ctx.Err(); err != nil {
		return nil, err
	}
	if dir == w.ix.dir {
		return nil, nil // never index the index
	}
	known, subdirs, err := w.ix.catalogDir(dir)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			w.skip(dir, fmt.Errorf("read directory: %w", err))
		}
		return nil, w.send(job{path: dir, drop: true})
	}
	for _, name := range ignoreFiles {
		if data, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
			rules = append(rules[:len(rules):len(rules)], parseIgnore(dir, data)...)
		}
	}
	var subs []dirJob
	for _, e := range entries {
		name := e.Name()
		p := filepath.Join(dir, name)
		hidden := strings.HasPrefix(name, ".")
		switch {
		case e.IsDir():
			if (hidden && !w.ix.cfg.hidden) || rules.ignored(p, true) {
				continue // what the catalog has below it is dropped below
			}
			delete(subdirs, name)
			subs = append(subs, dirJob{p, rules})
		case rules.ignored(p, false) || (hidden && slices.Contains(ignoreFiles, name)):
			continue
		case e.Type()&fs.ModeSymlink != 0:
			fi, err := os.Stat(p)
			switch {
			case err != nil:
				w.skip(p, fmt.Errorf("broken or looping symlink: %w", err))
			case fi.IsDir():
				w.skip(p, errors.New("symlink to a directory is not followed"))
			default:
				old, ok := known[name]
				delete(known, name)
				if err := w.file(p, fi, ptrIf(old, ok)); err != nil {
					return nil, err
				}
			}
		default:
			fi, err := e.Info()
			if err != nil {
				continue // vanished since the listing
			}
			old, ok := known[name]
			delete(known, name)
			if err := w.file(p, fi, ptrIf(old, ok)); err != nil {
				return nil, err
			}
		}
	}
	for name := range known {
		if err := w.send(job{path: filepath.Join(dir, name), drop: true}); err != nil {
			return nil, err
		}
	}
	for name := range subdirs {
		if err := w.send(job{path: filepath.Join(dir, name), drop: true}); err != nil {
			return nil, err
		}
	}
	return subs, nil
}

func ptrIf(e fileEntry, ok bool) *fileEntry {
	if !ok {
		return nil
	}
	return &e
}

// entry returns the catalog's entry for path, or nil.
func (ix *Index) entry(path string) (*fileEntry, error) {
	var out *fileEntry
	err := ix.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketFiles).Get([]byte(path))
		if v == nil {
			return nil
		}
		e, err := decodeEntry(v)
		if err != nil {
			return err
		}
		out = &e
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read catalog: %w", err)
	}
	return out, nil
}

// catalogDir returns the catalog's entries for the files directly in dir,
// by name, and the names of its subdirectories holding entries. Keys are
// paths in byte order, so a subdirectory's entries are contiguous and
// skipped with one seek ("sub0" follows every "sub/...": '0' is '/'+1).
func (ix *Index) catalogDir(dir string) (files map[string]fileEntry, subdirs map[string]bool, err error) {
	files, subdirs = map[string]fileEntry{}, map[string]bool{}
	prefix := []byte(strings.TrimSuffix(dir, "/") + "/")
	err = ix.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketFiles).Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); {
			rest := k[len(prefix):]
			if i := bytes.IndexByte(rest, '/'); i >= 0 {
				sub := string(rest[:i])
				subdirs[sub] = true
				k, v = c.Seek(append(append(slices.Clip(prefix), sub...), '0'))
				continue
			}
			e, err := decodeEntry(v)
			if err != nil {
				return err
			}
			files[string(rest)] = e
			k, v = c.Next()
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("read catalog: %w", err)
	}
	return files, subdirs, nil
}
