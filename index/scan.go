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
	"time"

	bolt "go.etcd.io/bbolt"
)

// Stats summarises an indexing run.
type Stats struct {
	Seen      int // files found under the roots
	Indexed   int // files (re)indexed
	Unchanged int // files already up to date
	Removed   int // files gone from disk, dropped from the index
	Chunks    int // chunks written
	Skipped   []Skipped
	// EmbedErr is the first embedding failure. The keyword index is still
	// updated; the files are embedded again on the next run.
	EmbedErr error
	Elapsed  time.Duration
}

// Add indexes the files under each path and records the paths as roots, so
// later runs (Update, Rebuild, the watcher) keep them in step. Files already
// indexed and unchanged are not read again.
func (ix *Index) Add(ctx context.Context, paths ...string) (Stats, error) {
	roots := make([]string, 0, len(paths))
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return Stats{}, fmt.Errorf("add %s: %w", p, err)
		}
		if _, err := os.Stat(abs); err != nil {
			return Stats{}, fmt.Errorf("add %s: %w", p, err)
		}
		roots = append(roots, abs)
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.db == nil {
		return Stats{}, ErrClosed
	}
	err := ix.db.Update(func(tx *bolt.Tx) error {
		old, err := readRoots(tx)
		if err != nil {
			return err
		}
		return writeRoots(tx, mergeRoots(old, roots))
	})
	if err != nil {
		return Stats{}, fmt.Errorf("record roots: %w", err)
	}
	return ix.sync(ctx, roots)
}

// mergeRoots adds roots to old, keeping no root below another: a path
// inside an indexed root is indexed but not recorded, a path above roots
// replaces them.
func mergeRoots(old, add []string) []string {
	out := slices.Clone(old)
	for _, r := range add {
		if slices.ContainsFunc(out, func(o string) bool { return underRoot(r, o) }) {
			continue
		}
		out = slices.DeleteFunc(out, func(o string) bool { return underRoot(o, r) })
		out = append(out, r)
	}
	return out
}

// Update rescans every root: new and changed files are indexed, files gone
// from disk are dropped.
func (ix *Index) Update(ctx context.Context) (Stats, error) {
	roots, err := ix.Roots()
	if err != nil {
		return Stats{}, err
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.sync(ctx, roots)
}

// Refresh brings the given files or directories, which must lie under
// indexed roots, in step with the disk: changed files are re-indexed, gone
// ones dropped. It is what the watcher does for each batch of events, and
// what a caller that knows which paths changed (a committed transaction)
// can call instead of a full Update.
func (ix *Index) Refresh(ctx context.Context, paths ...string) (Stats, error) {
	roots, err := ix.Roots()
	if err != nil {
		return Stats{}, err
	}
	targets := make([]string, 0, len(paths))
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return Stats{}, fmt.Errorf("refresh %s: %w", p, err)
		}
		if containingRoot(roots, abs) == abs && !slices.Contains(roots, abs) {
			return Stats{}, fmt.Errorf("refresh %s: not under an indexed root", p)
		}
		targets = append(targets, abs)
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.sync(ctx, targets)
}

// Remove drops roots at or below each path, with their files. A path inside
// a root is refused: list it in a .nashignore file instead.
func (ix *Index) Remove(ctx context.Context, paths ...string) (Stats, error) {
	start := time.Now()
	ix.mu.Lock()
	defer ix.mu.Unlock()
	roots, err := ix.Roots()
	if err != nil {
		return Stats{}, err
	}
	var drop []string
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return Stats{}, fmt.Errorf("remove %s: %w", p, err)
		}
		found := false
		for _, r := range roots {
			if underRoot(r, abs) {
				drop = append(drop, r)
				found = true
			} else if underRoot(abs, r) {
				return Stats{}, fmt.Errorf("remove %s: inside root %s; list it in %s/.nashignore instead", p, r, r)
			}
		}
		if !found {
			return Stats{}, fmt.Errorf("remove %s: not an indexed root", p)
		}
	}
	var stats Stats
	for _, r := range drop {
		n, err := ix.dropPaths(ctx, []string{r})
		stats.Removed += n
		if err != nil {
			return stats, err
		}
	}
	err = ix.db.Update(func(tx *bolt.Tx) error {
		return writeRoots(tx, slices.DeleteFunc(roots, func(r string) bool { return slices.Contains(drop, r) }))
	})
	if err != nil {
		return stats, fmt.Errorf("record roots: %w", err)
	}
	stats.Elapsed = time.Since(start)
	return stats, nil
}

// Rebuild throws away the index content and indexes every root again.
func (ix *Index) Rebuild(ctx context.Context) (Stats, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	var roots []string
	err := ix.db.Update(func(tx *bolt.Tx) error {
		var err error
		if roots, err = readRoots(tx); err != nil {
			return err
		}
		for _, b := range [][]byte{bucketFiles, bucketVectors} {
			if err := tx.DeleteBucket(b); err != nil {
				return err
			}
			if _, err := tx.CreateBucket(b); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketMeta).Delete(keyLens)
	})
	if err != nil {
		return Stats{}, fmt.Errorf("clear catalog: %w", err)
	}
	ix.lensMu.Lock()
	ix.lens = fieldLens{}
	ix.lensMu.Unlock()
	err = func() error {
		ix.textMu.Lock()
		defer ix.textMu.Unlock()
		if ix.text == nil {
			return ErrClosed
		}
		if err := ix.text.Close(); err != nil {
			return fmt.Errorf("close keyword index: %w", err)
		}
		ix.text = nil
		if err := os.RemoveAll(filepath.Join(ix.dir, bleveDir)); err != nil {
			return fmt.Errorf("remove keyword index: %w", err)
		}
		if err := ix.openText(); err != nil {
			return err
		}
		if a := ix.text.Mapping().AnalyzerNamed(analyzerName); a != nil {
			ix.analyzer = a
		}
		if ix.vec != nil {
			ix.vec = newVectorStore()
		}
		return nil
	}()
	if err != nil {
		return Stats{}, err
	}
	return ix.sync(ctx, roots)
}

// result is a job after extraction.
type result struct {
	job
	doc      map[string]any // the keyword index's document; nil when skipped
	lens     []int64        // lengths of its scored fields
	title    string
	chunks   []Chunk // passages to embed (with an embedder only)
	vanished bool
}

// upToDate reports whether the entry matches the file on disk and the
// configured embedder.
func (e fileEntry) upToDate(fi fs.FileInfo, cfg config) bool {
	if e.Pending || e.Size != fi.Size() || e.MTime != fi.ModTime().UnixNano() {
		return false
	}
	return e.Skip != "" || e.Chunks == 0 || cfg.embedder == nil || e.Model == cfg.model
}

// extract reads and chunks one file. It never panics on bad content.
func (ix *Index) extract(j job) result {
	r := result{job: j}
	if j.skip != nil {
		return r
	}
	data, err := ix.cfg.readFile(j.path, ix.cfg.maxSize)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			r.vanished = true
			r.skip = errors.New("vanished while indexing")
			return r
		}
		r.skip = err
		return r
	}
	// The file may have changed between the walk and the read; the entry
	// must describe what was read.
	if fi, err := os.Stat(j.path); err == nil && fi.Mode().IsRegular() {
		r.info = fi
	}
	doc, err := extractTimeout(j.path, data, extractLimit)
	if err != nil {
		r.skip = err
		return r
	}
	r.title = doc.Title
	r.doc, r.lens = ix.document(j.path, doc)
	if ix.vec != nil {
		r.chunks = SplitChunks(doc.Text, ix.cfg.chunkWords, ix.cfg.overlapWords)
	}
	return r
}

// leadWords is how many words of a text, from its start, make its lead:
// what a document says first tells best what it is about.
const leadWords = 150

// document builds the keyword index's document of a file and the lengths
// of its scored fields.
func (ix *Index) document(path string, d Document) (map[string]any, []int64) {
	name := splitWords(filepath.Base(path))
	dir := splitWords(filepath.Dir(path))
	heads := strings.Join(d.Headings, "\n")
	lead, leadLen := ix.lead(d.Text)
	fields := map[string]string{
		fieldBody: d.Text, fieldName: name, fieldTitle: d.Title, fieldHeads: heads, fieldPathTxt: dir,
	}
	lens := make([]int64, len(scoredFields))
	for i, f := range scoredFields {
		if f == fieldLead {
			lens[i] = leadLen
			continue
		}
		lens[i] = ix.stop.countWords(fields[f])
	}
	return map[string]any{
		fieldPath:    path,
		fieldPathTxt: dir,
		fieldName:    name,
		fieldTitle:   d.Title,
		fieldHeads:   heads,
		fieldLead:    lead,
		fieldBody:    d.Text,
		fieldText:    d.Text,
		fieldExt:     strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), "."),
	}, lens
}

// lead returns the lead field of a text, its first leadWords words as the
// analyzer counts them, and the lead's length. A text no longer than that
// has no lead field of its own: the searcher reads its text as its lead
// (bm25f.go), which spares a posting per word of every short file.
func (ix *Index) lead(text string) (string, int64) {
	prefix := ix.stop.prefixWords(text, 3*leadWords) // holds the lead, and then some
	toks := ix.analyzer.Analyze([]byte(prefix))
	if len(toks) > leadWords {
		return text[:toks[leadWords-1].End], leadWords
	}
	if len(prefix) == len(text) {
		return "", int64(len(toks)) // the whole text is its lead
	}
	// Stop words and the like: what the analyzer kept of a long prefix
	// is short. The text is its own lead, up to where it was read.
	return prefix, int64(len(toks))
}

// extractLimit bounds the time spent extracting one file.
const extractLimit = 30 * time.Second

// extractTimeout runs Extract with a time limit. A parser stuck in a loop
// on a hostile file cannot be stopped; its goroutine is abandoned and the
// file skipped, so indexing goes on.
func extractTimeout(name string, data []byte, limit time.Duration) (Document, error) {
	type out struct {
		doc Document
		err error
	}
	ch := make(chan out, 1)
	go func() {
		d, err := Extract(name, data)
		ch <- out{d, err}
	}()
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case o := <-ch:
		return o.doc, o.err
	case <-t.C:
		return Document{}, fmt.Errorf("%w: extraction took over %v", ErrCorrupt, limit)
	}
}

// flush writes a batch of results: catalog intent, keyword index, vectors,
// catalog. A crash in between leaves entries marked Pending, which the next
// run re-indexes.
func (ix *Index) flush(ctx context.Context, batch []result, stats *Stats) error {
	// Embeddings first: they may fail without touching the index.
	var vectors [][]float32
	var embedded []bool
	if ix.vec != nil {
		var texts []string
		for _, r := range batch {
			for _, c := range r.chunks {
				texts = append(texts, embedText(r.path, r.title, c.Text))
			}
		}
		if len(texts) > 0 {
			vs, err := ix.cfg.embedder.EmbedDocuments(ctx, texts)
			if err == nil && len(vs) != len(texts) {
				err = fmt.Errorf("embedder returned %d vectors for %d texts", len(vs), len(texts))
			}
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if stats.EmbedErr == nil {
					stats.EmbedErr = fmt.Errorf("embed: %w", err)
				}
			} else {
				vectors = vs
			}
		}
	}
	embedded = make([]bool, len(batch))
	offsets := make([]int, len(batch)) // first vector of each result
	for n, off := 0, 0; n < len(batch); n++ {
		offsets[n] = off
		off += len(batch[n].chunks)
	}

	// Intent: every file whose document or vectors may change is marked,
	// with enough chunks listed to delete what this batch may write.
	err := ix.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketFiles)
		for _, r := range batch {
			e := fileEntry{Pending: true, Chunks: len(r.chunks)}
			if r.old != nil {
				e.Chunks = max(e.Chunks, r.old.Chunks)
				e.Lens = r.old.Lens // still counted in the totals
			}
			if err := putEntry(b, r.path, e); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("write catalog intent: %w", err)
	}

	tb := ix.text.NewBatch()
	for _, r := range batch {
		if r.old != nil && r.doc == nil {
			tb.Delete(r.path)
		}
		if r.doc != nil {
			if err := tb.Index(r.path, r.doc); err != nil { // replaces the old one
				return fmt.Errorf("index %s: %w", r.path, err)
			}
		}
	}
	if err := ix.text.Batch(tb); err != nil {
		return fmt.Errorf("write keyword index: %w", err)
	}

	ix.lensMu.Lock()
	lens := ix.lens
	ix.lensMu.Unlock()
	err = ix.db.Update(func(tx *bolt.Tx) error {
		files, vb := tx.Bucket(bucketFiles), tx.Bucket(bucketVectors)
		for n, r := range batch {
			if r.old != nil {
				lens.add(r.old.Lens, -1)
				for i := range r.old.Chunks {
					if err := vb.Delete([]byte(chunkID(r.path, i))); err != nil {
						return err
					}
				}
			}
			if r.vanished {
				if err := files.Delete([]byte(r.path)); err != nil {
					return err
				}
				continue
			}
			e := fileEntry{Size: r.info.Size(), MTime: r.info.ModTime().UnixNano()}
			if r.skip != nil {
				e.Skip = r.skip.Error()
			}
			if r.doc != nil {
				e.Lens = r.lens
				lens.add(r.lens, 1)
			}
			if vectors != nil && len(r.chunks) > 0 {
				for _, c := range r.chunks {
					if err := vb.Put([]byte(chunkID(r.path, c.Seq)), encodeVector(vectors[offsets[n]+c.Seq])); err != nil {
						return err
					}
				}
				e.Chunks = len(r.chunks)
				e.Model = ix.cfg.model
				embedded[n] = true
			}
			if err := putEntry(files, r.path, e); err != nil {
				return err
			}
		}
		return putLens(tx.Bucket(bucketMeta), lens)
	})
	if err != nil {
		return fmt.Errorf("write catalog: %w", err)
	}
	ix.lensMu.Lock()
	ix.lens = lens
	ix.lensMu.Unlock()

	// Mirror into the in-memory vector store and count.
	for n, r := range batch {
		if ix.vec != nil && r.old != nil {
			for i := range r.old.Chunks {
				ix.vec.del(chunkID(r.path, i))
			}
		}
		if embedded[n] {
			for _, c := range r.chunks {
				if err := ix.vec.put(chunkID(r.path, c.Seq), vectors[offsets[n]+c.Seq]); err != nil && stats.EmbedErr == nil {
					stats.EmbedErr = err
				}
			}
		}
		switch {
		case r.vanished && r.old != nil:
			stats.Removed++
		case r.skip != nil:
			stats.Skipped = append(stats.Skipped, Skipped{Path: r.path, Reason: r.skip.Error(), Err: r.skip})
		default:
			stats.Indexed++
			if embedded[n] {
				stats.Chunks += len(r.chunks)
			}
		}
	}
	return nil
}

// embedText is what the embedder sees of a chunk: where it is and what.
func embedText(path, title, text string) string {
	var b strings.Builder
	b.WriteString(filepath.Base(path))
	if title != "" {
		b.WriteString("\n")
		b.WriteString(title)
	}
	b.WriteString("\n")
	b.WriteString(text)
	return b.String()
}

func putEntry(b *bolt.Bucket, path string, e fileEntry) error {
	return b.Put([]byte(path), encodeEntry(e))
}

// dropPaths removes from the index every file at or below each of paths.
// It returns how many files had content in the index.
func (ix *Index) dropPaths(ctx context.Context, paths []string) (int, error) {
	type gone struct {
		path   string
		chunks int
		lens   []int64
		skip   bool
	}
	var drop []gone
	err := ix.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketFiles)
		for _, dir := range paths {
			for _, k := range prefixKeys(b, dir) {
				e, err := decodeEntry(b.Get([]byte(k)))
				if err != nil {
					return err
				}
				drop = append(drop, gone{k, e.Chunks, e.Lens, e.Skip != ""})
			}
		}
		return nil
	})
	if err != nil || len(drop) == 0 {
		return 0, err
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	tb := ix.text.NewBatch()
	for _, g := range drop {
		tb.Delete(g.path)
	}
	if err := ix.text.Batch(tb); err != nil {
		return 0, fmt.Errorf("delete from keyword index: %w", err)
	}
	ix.lensMu.Lock()
	lens := ix.lens
	ix.lensMu.Unlock()
	n := 0
	err = ix.db.Update(func(tx *bolt.Tx) error {
		files, vb := tx.Bucket(bucketFiles), tx.Bucket(bucketVectors)
		for _, g := range drop {
			for i := range g.chunks {
				if err := vb.Delete([]byte(chunkID(g.path, i))); err != nil {
					return err
				}
			}
			if err := files.Delete([]byte(g.path)); err != nil {
				return err
			}
			lens.add(g.lens, -1)
		}
		return putLens(tx.Bucket(bucketMeta), lens)
	})
	if err != nil {
		return 0, fmt.Errorf("delete from catalog: %w", err)
	}
	ix.lensMu.Lock()
	ix.lens = lens
	ix.lensMu.Unlock()
	for _, g := range drop {
		if ix.vec != nil {
			for i := range g.chunks {
				ix.vec.del(chunkID(g.path, i))
			}
		}
		if !g.skip {
			n++
		}
	}
	return n, nil
}

// splitWords turns a path or file name into words: "git-commit.md" becomes
// "git commit md".
func splitWords(s string) string {
	return strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r > 0x7f)
	}), " ")
}

// containingRoot returns the longest root at or above path, or path.
func containingRoot(roots []string, path string) string {
	best := ""
	for _, r := range roots {
		if underRoot(path, r) && len(r) > len(best) {
			best = r
		}
	}
	if best == "" {
		return path
	}
	return best
}

// ancestorRules reads the ignore files of the directories from the root
// holding path down to path's parent, and reports whether path is
// excluded by them or by a hidden directory on the way.
func (ix *Index) ancestorRules(roots []string, path string, isDir bool) (ignoreRules, bool) {
	root := containingRoot(roots, path)
	if root == path {
		return nil, false
	}
	var rules ignoreRules
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return nil, false
	}
	parts := strings.Split(rel, string(filepath.Separator))
	dir := root
	for i, part := range parts {
		for _, name := range ignoreFiles {
			if data, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
				rules = append(rules, parseIgnore(dir, data)...)
			}
		}
		p := filepath.Join(dir, part)
		last := i == len(parts)-1
		d := !last || isDir
		if d && strings.HasPrefix(part, ".") && !ix.cfg.hidden {
			return nil, true
		}
		if rules.ignored(p, d) || p == ix.dir {
			return nil, true
		}
		dir = p
	}
	return rules, false
}
