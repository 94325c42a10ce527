package index

import (
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"
)

// Embedder turns text into vectors. It has the method set of langchaingo's
// embeddings.Embedder, so any langchaingo embedder (Ollama, OpenAI-compatible,
// ...) can be passed without this package importing langchaingo.
type Embedder interface {
	// EmbedDocuments returns one vector per text.
	EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error)
	// EmbedQuery returns the vector of a search query.
	EmbedQuery(ctx context.Context, text string) ([]float32, error)
}

// Option configures an Index; see Open.
type Option func(*config)

type config struct {
	embedder     Embedder
	model        string
	maxSize      int64
	chunkWords   int
	overlapWords int
	hidden       bool
	progress     func(Progress)
	readFile     func(path string, limit int64) ([]byte, error)
	workers      int
	lockTimeout  time.Duration
	now          func() time.Time
	weights      weights
	batchFiles   int // files per write batch: each batch costs a few fsyncs
	// related gives the words a semantic search without an embedder adds
	// to the query, and expandWeight their weight: nil in nash, which
	// measured query expansion and found it no help (expand_test.go).
	related      func(word string) []string
	expandWeight float64
}

func defaultConfig() config {
	return config{
		maxSize:      32 << 20,
		chunkWords:   400,
		overlapWords: 50,
		readFile:     readFileLimit,
		workers:      max(1, runtime.GOMAXPROCS(0)),
		lockTimeout:  2 * time.Second,
		now:          time.Now,
		weights:      defaultWeights,
		batchFiles:   2000,
	}
}

// Embeddings sets the embedder used for semantic and hybrid retrieval and
// the model name recorded beside its vectors. Vectors made by another model
// are never mixed in: files embedded with a different model are re-embedded
// on the next Add or Rebuild.
func Embeddings(e Embedder, model string) Option {
	return func(c *config) { c.embedder, c.model = e, model }
}

// MaxFileSize sets the size cap; larger files are skipped (default 32 MiB).
func MaxFileSize(n int64) Option { return func(c *config) { c.maxSize = n } }

// ChunkWords sets the chunk length and the overlap between chunks, in words
// (default 400 and 50).
func ChunkWords(size, overlap int) Option {
	return func(c *config) { c.chunkWords, c.overlapWords = size, overlap }
}

// OnProgress sets a function called during long indexing runs, at most
// every 100 ms and once at the end. It must not block.
func OnProgress(f func(Progress)) Option { return func(c *config) { c.progress = f } }

// ReadFileFunc replaces the function that reads a file's content, at most
// limit bytes plus one (so a file that grew past the cap is seen). Tests use
// it to simulate unreadable and vanishing files.
func ReadFileFunc(f func(path string, limit int64) ([]byte, error)) Option {
	return func(c *config) { c.readFile = f }
}

// Workers sets how many files are extracted in parallel (default GOMAXPROCS).
func Workers(n int) Option { return func(c *config) { c.workers = max(1, n) } }

// LockTimeout sets how long Open waits for another process holding the
// index (default 2 s) before failing with ErrLocked.
func LockTimeout(d time.Duration) Option { return func(c *config) { c.lockTimeout = d } }

// Clock sets the function giving the current time, used for relative dates
// in queries such as after:7d.
func Clock(now func() time.Time) Option { return func(c *config) { c.now = now } }

// Progress reports an indexing run in flight.
type Progress struct {
	Seen    int    // files found so far
	Indexed int    // files (re)indexed
	Skipped int    // files skipped with a reason
	Path    string // the file last handled
	Done    bool   // the last report of the run
}

// readFileLimit reads at most limit+1 bytes of a regular file.
func readFileLimit(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, ErrNotRegular
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%w (%d bytes)", ErrTooLarge, fi.Size())
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w (grew while read)", ErrTooLarge)
	}
	return data, nil
}
