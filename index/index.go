package index

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/custom"
	"github.com/blevesearch/bleve/v2/analysis/analyzer/keyword"
	regexpchar "github.com/blevesearch/bleve/v2/analysis/char/regexp"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/token/lowercase"
	"github.com/blevesearch/bleve/v2/analysis/token/porter"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/mapping"
	bolt "go.etcd.io/bbolt"
)

// ErrLocked is returned by Open when another process holds the index.
var ErrLocked = errors.New("index is in use by another process")

// Layout of the index directory.
const (
	bleveDir    = "bleve"      // the keyword index (bleve, scorch, BM25)
	catalogFile = "catalog.db" // files, roots, vectors (bbolt)
)

// Buckets of the catalog.
var (
	bucketFiles   = []byte("files")   // path -> fileEntry (JSON)
	bucketVectors = []byte("vectors") // chunk id -> float32 little endian
	bucketMeta    = []byte("meta")    // keyMeta* -> values
)

var (
	keyRoots  = []byte("roots")
	keyModel  = []byte("model")
	keyLens   = []byte("lens")   // fieldLens (JSON)
	keyHidden = []byte("hidden") // "1": hidden directories are indexed
)

// Index is a keyword and semantic index over files under a set of roots,
// stored in one directory. It is safe for concurrent use; writes are
// serialised.
type Index struct {
	dir      string
	cfg      config
	text     bleve.Index
	db       *bolt.DB
	vec      *vectorStore // nil without an embedder
	analyzer analysis.Analyzer
	format   int // formatVersion of the keyword index

	mu sync.Mutex // serialises writers

	lensMu sync.Mutex
	lens   fieldLens // mirrors the catalog's keyLens
	stop   stopWords

	// textMu guards the text and vec fields, which Rebuild and Close
	// replace: searches hold it for reading, Rebuild and Close for writing.
	textMu sync.RWMutex
}

// ErrClosed is returned by calls on a closed index.
var ErrClosed = errors.New("index is closed")

// fileEntry is what the catalog knows of one file.
type fileEntry struct {
	Size   int64 `json:"s"`
	MTime  int64 `json:"m"`           // unix nanoseconds
	Chunks int   `json:"c,omitempty"` // passages with a vector
	// Lens are the lengths of its scored fields, counted into fieldLens
	// (nil for a file not in the keyword index).
	Lens    []int64 `json:"l,omitempty"`
	Model   string  `json:"e,omitempty"` // embedding model of its vectors
	Pending bool    `json:"p,omitempty"` // a write was in flight: re-index
	Skip    string  `json:"k,omitempty"` // why it was skipped
}

// Open opens the index in dir, creating it if needed.
func Open(ctx context.Context, dir string, opts ...Option) (*Index, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		o(&cfg)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create index dir: %w", err)
	}
	db, err := bolt.Open(filepath.Join(dir, catalogFile), 0o600, &bolt.Options{Timeout: cfg.lockTimeout})
	if err != nil {
		if errors.Is(err, bolt.ErrTimeout) {
			return nil, fmt.Errorf("open index %s: %w", dir, ErrLocked)
		}
		return nil, fmt.Errorf("open index catalog %s: %w", dir, err)
	}
	ix := &Index{dir: dir, cfg: cfg, db: db, stop: newStopWords()}
	if err := ix.openText(); err != nil {
		db.Close()
		return nil, err
	}
	ix.analyzer = ix.text.Mapping().AnalyzerNamed(analyzerName)
	if ix.analyzer == nil {
		ix.Close()
		return nil, fmt.Errorf("open index %s: analyzer %s missing", dir, analyzerName)
	}
	if err := ix.initCatalog(ctx); err != nil {
		ix.Close()
		return nil, err
	}
	return ix, nil
}

func (ix *Index) openText() error {
	path := filepath.Join(ix.dir, bleveDir)
	var err error
	created := false
	if _, serr := os.Stat(path); errors.Is(serr, fs.ErrNotExist) {
		ix.text, err = bleve.New(path, newMapping())
		created = true
	} else {
		ix.text, err = bleve.OpenUsing(path, map[string]any{"bolt_timeout": ix.cfg.lockTimeout.String()})
	}
	if err != nil {
		if strings.Contains(err.Error(), "timeout") {
			return fmt.Errorf("open keyword index %s: %w", path, ErrLocked)
		}
		return fmt.Errorf("open keyword index %s: %w", path, err)
	}
	if created {
		err = ix.text.SetInternal(keyFormat, []byte(strconv.Itoa(formatVersion)))
	} else {
		ix.format, err = readFormat(ix.text)
	}
	if err != nil {
		ix.text.Close()
		ix.text = nil
		return fmt.Errorf("keyword index format %s: %w", path, err)
	}
	if created {
		ix.format = formatVersion
	}
	return nil
}

// readFormat returns the format version recorded in a keyword index.
func readFormat(text bleve.Index) (int, error) {
	v, err := text.GetInternal(keyFormat)
	if err != nil || v == nil {
		return 1, err
	}
	n, err := strconv.Atoi(string(v))
	if err != nil {
		return 0, fmt.Errorf("bad format version %q", v)
	}
	return n, nil
}

// Fields of a file's document in bleve, whose ID is the file's path.
const (
	fieldPath    = "path"     // absolute path, keyword
	fieldPathTxt = "pathtext" // the directory's words, analysed
	fieldName    = "name"     // base name words, analysed
	fieldTitle   = "title"    // analysed and stored
	fieldHeads   = "heads"    // section headings, analysed
	fieldLead    = "lead"     // the first leadTokens words of the text, analysed
	fieldBody    = "content"  // the text, analysed with positions: the main field
	fieldText    = "text"     // the text, stored only, for snippets
	fieldExt     = "ext"      // lower-case extension without the dot
)

// scoredFields are the analysed fields whose lengths the index keeps, in
// the order of fieldLens.Sum and fileEntry.Lens.
var scoredFields = [...]string{fieldBody, fieldName, fieldTitle, fieldHeads, fieldLead, fieldPathTxt}

// fieldLens are the document count and the summed lengths of the scored
// fields (in words, as countWords counts them), for their average lengths.
type fieldLens struct {
	Docs int64
	Sum  [len(scoredFields)]int64
}

// avg returns the average length of scored field i, at least 1.
func (l fieldLens) avg(i int) float64 {
	if l.Docs == 0 {
		return 1
	}
	return max(1, float64(l.Sum[i])/float64(l.Docs))
}

// analyzerName is the analyzer of all text fields: dots and underscores
// made spaces, Unicode words, possessives dropped, lower case, English stop
// words, Porter stems. Unicode word breaking keeps "docs.docker.com",
// "config.yaml" and "file_name" whole; split, their parts match (+0.017
// MRR on the tldr known-item test, where many pages link to a site named
// after what they describe). (A char filter joining "E[x]tract" was tried:
// +0.002 MRR on tldr for a third more analysis time.)
const analyzerName = "nash_en"

// splitFilterName is the char filter that makes dots and underscores
// spaces, keeping byte offsets.
const splitFilterName = "nash_split"

// formatVersion numbers the layout of the keyword index: 3 has a document
// per file (2 had one per chunk). An index of an older layout cannot be
// searched; Open says so with NeedsRebuild, and the index server rebuilds
// it.
const formatVersion = 3

// keyFormat holds formatVersion in the keyword index's internal storage;
// indexes from before it have none (version 1).
var keyFormat = []byte("nash_format")

// NoticeOldFormat is the Result.Notice of a search in an index built by an
// older version of nash.
const NoticeOldFormat = "the index was built by an older version of nash; it finds nothing until it is rebuilt (the index server does that when it starts; nash index rebuild does it too)"

// newMapping builds the bleve mapping: BM25, English stemming, no _all field.
func newMapping() mapping.IndexMapping {
	text := func(store, vectors bool) *mapping.FieldMapping {
		f := mapping.NewTextFieldMapping()
		f.Analyzer = analyzerName
		f.Store = store
		f.IncludeTermVectors = vectors
		f.IncludeInAll = false
		f.DocValues = false
		return f
	}
	kw := mapping.NewKeywordFieldMapping()
	kw.Analyzer = keyword.Name
	kw.Store = false
	kw.IncludeInAll = false
	kw.IncludeTermVectors = false
	kw.DocValues = false
	doc := mapping.NewDocumentStaticMapping()
	doc.AddFieldMappingsAt(fieldPath, kw)
	doc.AddFieldMappingsAt(fieldPathTxt, text(false, false))
	storedText := mapping.NewTextFieldMapping()
	storedText.Index = false
	storedText.Store = true
	storedText.IncludeInAll = false
	storedText.IncludeTermVectors = false
	storedText.DocValues = false
	doc.AddFieldMappingsAt(fieldName, text(false, false))
	doc.AddFieldMappingsAt(fieldTitle, text(true, false))
	doc.AddFieldMappingsAt(fieldHeads, text(false, false))
	doc.AddFieldMappingsAt(fieldLead, text(false, false))
	doc.AddFieldMappingsAt(fieldBody, text(false, true))
	doc.AddFieldMappingsAt(fieldText, storedText)
	doc.AddFieldMappingsAt(fieldExt, kw)

	m := bleve.NewIndexMapping()
	if err := m.AddCustomCharFilter(splitFilterName, map[string]any{
		"type":    regexpchar.Name,
		"regexp":  `[._]`,
		"replace": " ",
	}); err != nil {
		panic(err)
	}
	if err := m.AddCustomAnalyzer(analyzerName, map[string]any{
		"type":          custom.Name,
		"char_filters":  []string{splitFilterName},
		"tokenizer":     unicode.Name,
		"token_filters": []string{en.PossessiveName, lowercase.Name, en.StopName, porter.Name},
	}); err != nil {
		panic(err)
	}
	m.DefaultMapping = doc
	m.DefaultAnalyzer = analyzerName
	m.IndexDynamic = false
	m.StoreDynamic = false
	m.DocValuesDynamic = false
	m.ScoringModel = "bm25" // on-disk scorch only; mem-only silently uses tf-idf
	return m
}

func (ix *Index) initCatalog(ctx context.Context) error {
	err := ix.db.Update(func(tx *bolt.Tx) error {
		for _, b := range [][]byte{bucketFiles, bucketVectors, bucketMeta} {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		meta := tx.Bucket(bucketMeta)
		if v := meta.Get(keyLens); v != nil {
			if err := json.Unmarshal(v, &ix.lens); err != nil {
				return fmt.Errorf("field lengths: %w", err)
			}
		}
		if string(meta.Get(keyHidden)) == "1" {
			ix.cfg.hidden = true
		}
		if ix.cfg.embedder == nil {
			return nil
		}
		if string(meta.Get(keyModel)) != ix.cfg.model {
			// Another model's vectors must not be mixed with ours: drop
			// them; the files are re-embedded on the next Add.
			if err := tx.DeleteBucket(bucketVectors); err != nil {
				return err
			}
			if _, err := tx.CreateBucket(bucketVectors); err != nil {
				return err
			}
			return meta.Put(keyModel, []byte(ix.cfg.model))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("init index catalog: %w", err)
	}
	if ix.cfg.embedder == nil {
		return nil
	}
	ix.vec = newVectorStore()
	err = ix.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketVectors).ForEach(func(k, v []byte) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			return ix.vec.put(string(k), decodeVector(v))
		})
	})
	if err != nil {
		return fmt.Errorf("load vectors: %w", err)
	}
	return nil
}

// Close flushes and closes the index. Closing twice is harmless.
func (ix *Index) Close() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	ix.textMu.Lock()
	defer ix.textMu.Unlock()
	var errs []error
	if ix.text != nil {
		errs = append(errs, ix.text.Close())
		ix.text = nil
	}
	if ix.db != nil {
		errs = append(errs, ix.db.Close())
		ix.db = nil
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close index: %w", err)
	}
	return nil
}

// NeedsRebuild reports whether the keyword index was built by an older
// version in a layout this one cannot search: Rebuild brings it up to date.
func (ix *Index) NeedsRebuild() bool { return ix.format < formatVersion }

// IncludeHidden makes this and every later run of the index walk into
// directories whose names start with a dot, which are skipped by default:
// the choice is recorded in the index.
func (ix *Index) IncludeHidden() error {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.db == nil {
		return ErrClosed
	}
	ix.cfg.hidden = true
	err := ix.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketMeta).Put(keyHidden, []byte("1")) })
	if err != nil {
		return fmt.Errorf("record hidden: %w", err)
	}
	return nil
}

// add adds (sign 1) or removes (sign -1) a file's field lengths.
func (l *fieldLens) add(entry []int64, sign int64) {
	if len(entry) != len(scoredFields) {
		return
	}
	l.Docs += sign
	for i, n := range entry {
		l.Sum[i] += sign * n
	}
}

// putLens records the totals in the catalog's meta bucket.
func putLens(meta *bolt.Bucket, l fieldLens) error {
	data, err := json.Marshal(l)
	if err != nil {
		return err
	}
	return meta.Put(keyLens, data)
}

// Dir returns the directory holding the index.
func (ix *Index) Dir() string { return ix.dir }

// Roots returns the indexed roots, sorted.
func (ix *Index) Roots() ([]string, error) {
	if ix.db == nil {
		return nil, ErrClosed
	}
	var roots []string
	err := ix.db.View(func(tx *bolt.Tx) error {
		var err error
		roots, err = readRoots(tx)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read roots: %w", err)
	}
	return roots, nil
}

func readRoots(tx *bolt.Tx) ([]string, error) {
	var roots []string
	if v := tx.Bucket(bucketMeta).Get(keyRoots); v != nil {
		if err := json.Unmarshal(v, &roots); err != nil {
			return nil, err
		}
	}
	return roots, nil
}

func writeRoots(tx *bolt.Tx, roots []string) error {
	slices.Sort(roots)
	roots = slices.Compact(roots)
	data, err := json.Marshal(roots)
	if err != nil {
		return err
	}
	return tx.Bucket(bucketMeta).Put(keyRoots, data)
}

// Status describes the index.
type Status struct {
	Dir       string
	Roots     []string
	Files     int       // files with content in the index
	Chunks    int       // passages with a vector
	Skipped   []Skipped // files known but not indexed, with the reason
	Vectors   int       // chunk vectors held (0 without an embedder)
	Model     string    // embedding model, "" without an embedder
	SizeBytes int64     // bytes on disk
}

// Skipped is a file left out of the index, with the reason.
type Skipped struct {
	Path   string
	Reason string
	// Err is the cause during an indexing run (test it with errors.Is
	// against ErrBinary, ErrTooLarge, ErrNotRegular, ErrCorrupt, fs errors).
	// Status reads skips back from the catalog and has only Reason.
	Err error `json:"-"`
}

// Status reports what the index holds.
func (ix *Index) Status() (Status, error) {
	ix.textMu.RLock()
	defer ix.textMu.RUnlock()
	st := Status{Dir: ix.dir, Model: ix.cfg.model}
	if ix.db == nil {
		return st, ErrClosed
	}
	err := ix.db.View(func(tx *bolt.Tx) error {
		var err error
		if st.Roots, err = readRoots(tx); err != nil {
			return err
		}
		return tx.Bucket(bucketFiles).ForEach(func(k, v []byte) error {
			e, err := decodeEntry(v)
			if err != nil {
				return err
			}
			if e.Skip != "" {
				st.Skipped = append(st.Skipped, Skipped{Path: string(k), Reason: e.Skip})
				return nil
			}
			st.Files++
			st.Chunks += e.Chunks
			return nil
		})
	})
	if err != nil {
		return st, fmt.Errorf("read index status: %w", err)
	}
	if ix.vec != nil {
		st.Vectors = ix.vec.len()
	} else {
		st.Model = ""
	}
	_ = filepath.WalkDir(ix.dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				st.SizeBytes += fi.Size()
			}
		}
		return nil
	})
	return st, nil
}

// chunkID names the bleve document of chunk seq of path.
func chunkID(path string, seq int) string { return path + "#" + strconv.Itoa(seq) }

// splitChunkID is the inverse of chunkID.
func splitChunkID(id string) (path string, seq int) {
	i := strings.LastIndexByte(id, '#')
	if i < 0 {
		return id, 0
	}
	seq, _ = strconv.Atoi(id[i+1:])
	return id[:i], seq
}

func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

func decodeVector(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// underRoot reports whether path is root or below it.
func underRoot(path, root string) bool {
	return path == root || strings.HasPrefix(path, strings.TrimSuffix(root, "/")+"/")
}

// prefixKeys returns the catalog keys at or below dir.
func prefixKeys(b *bolt.Bucket, dir string) []string {
	var keys []string
	c := b.Cursor()
	prefix := []byte(strings.TrimSuffix(dir, "/") + "/")
	if k, _ := c.Seek([]byte(dir)); k != nil && string(k) == dir {
		keys = append(keys, dir)
	}
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		keys = append(keys, string(k))
	}
	return keys
}
