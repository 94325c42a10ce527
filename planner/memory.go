package planner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
)

// Record is one remembered request: what was asked, the script that was
// finally committed, where, and how it ended.
type Record struct {
	Time    time.Time `json:"time"`
	Prompt  string    `json:"prompt"`
	Script  string    `json:"script"`
	Cwd     string    `json:"cwd,omitempty"`
	Outcome string    `json:"outcome,omitempty"` // e.g. "committed", "exit 1"
}

// Match is a remembered request found by Search, with its BM25 score.
type Match struct {
	Record
	Score float64
}

// MemoryFile is the name of the memory file inside the state directory.
const MemoryFile = "planner-memory.jsonl"

// Memory is the planner's memory of committed requests: an append-only
// JSONL file in the state directory and an in-memory BM25 index over the
// prompts. The file is the source of truth: every call first reads what
// other nash processes appended (or notices that one cleared it), at the
// cost of one stat. It is safe for concurrent use.
type Memory struct {
	mu      sync.Mutex
	path    string      // "" for a memory that is not saved
	file    os.FileInfo // the file read so far, to notice a replacement
	offset  int64       // bytes of it consumed, always at a line end
	records []Record
	idx     bm25
}

// OpenMemory loads the memory kept in dir (created if missing). A torn last
// line, left by a crash during a write, is ignored.
func OpenMemory(dir string) (*Memory, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create memory dir: %w", err)
	}
	m := &Memory{path: filepath.Join(dir, MemoryFile)}
	if err := m.refresh(); err != nil {
		return nil, fmt.Errorf("open memory: %w", err)
	}
	return m, nil
}

// NewMemory returns an empty memory that is not saved anywhere; for tests
// and for running without a state directory.
func NewMemory() *Memory { return &Memory{} }

// refresh reads the lines appended to the file since the last call, or
// everything if the file was replaced or shrank. m.mu must be held.
func (m *Memory) refresh() error {
	if m.path == "" {
		return nil
	}
	fi, err := os.Stat(m.path)
	if errors.Is(err, os.ErrNotExist) {
		m.reset(nil)
		return nil
	}
	if err != nil {
		return err
	}
	if m.file == nil || !os.SameFile(m.file, fi) || fi.Size() < m.offset {
		m.reset(fi)
	}
	m.file = fi
	if fi.Size() == m.offset {
		return nil
	}
	f, err := os.Open(m.path)
	if err != nil {
		return err
	}
	defer f.Close()
	data, err := io.ReadAll(io.NewSectionReader(f, m.offset, fi.Size()-m.offset))
	if err != nil {
		return err
	}
	// Only complete lines: a torn tail is a crash or a write in progress.
	end := bytes.LastIndexByte(data, '\n')
	if end < 0 {
		return nil
	}
	for line := range bytes.Lines(data[:end+1]) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var rec Record
		if json.Unmarshal(line, &rec) != nil {
			continue // a damaged line: skip it, keep the rest
		}
		m.add(rec)
	}
	m.offset += int64(end + 1)
	return nil
}

func (m *Memory) reset(fi os.FileInfo) {
	m.file, m.offset, m.records, m.idx = fi, 0, nil, bm25{}
}

// Len returns how many requests are remembered.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	_ = m.refresh() // on error, answer from what was read
	return len(m.records)
}

// Add remembers r, durably: the line is written and synced before Add
// returns. Records with an empty prompt or script are refused.
func (m *Memory) Add(r Record) error {
	if strings.TrimSpace(r.Prompt) == "" || strings.TrimSpace(r.Script) == "" {
		return errors.New("remember request: empty prompt or script")
	}
	if r.Time.IsZero() {
		r.Time = time.Now().UTC()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.path == "" {
		m.add(r)
		return nil
	}
	line, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode memory record: %w", err)
	}
	if err := appendLine(m.path, line); err != nil {
		return fmt.Errorf("remember request: %w", err)
	}
	if err := m.refresh(); err != nil {
		return fmt.Errorf("remember request: %w", err)
	}
	return nil
}

func (m *Memory) add(r Record) {
	m.records = append(m.records, r)
	m.idx.add(tokenize(r.Prompt))
}

// appendLine appends line and a newline to path and fsyncs it; a new
// file's directory is synced too so the file survives a crash. If the file
// ends in a torn line, a newline is written first so the new record stays
// whole.
func appendLine(path string, line []byte) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	buf := make([]byte, 0, len(line)+2)
	if size := fi.Size(); size > 0 {
		var last [1]byte
		if _, err := f.ReadAt(last[:], size-1); err != nil {
			f.Close()
			return err
		}
		if last[0] != '\n' {
			buf = append(buf, '\n')
		}
	}
	buf = append(append(buf, line...), '\n')
	if _, err := f.Write(buf); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if fi.Size() == 0 {
		return syncDir(filepath.Dir(path))
	}
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// List returns the remembered requests, oldest first.
func (m *Memory) List() []Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	_ = m.refresh() // on error, answer from what was read
	return slices.Clone(m.records)
}

// Clear forgets every request. The file is replaced atomically by an empty
// one (temp file, fsync, rename, fsync of the directory).
func (m *Memory) Clear() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.path != "" {
		f, err := os.CreateTemp(filepath.Dir(m.path), MemoryFile+".*.tmp")
		if err != nil {
			return fmt.Errorf("clear memory: %w", err)
		}
		tmp := f.Name()
		defer os.Remove(tmp) // after a successful rename, a no-op
		if err := f.Sync(); err != nil {
			f.Close()
			return fmt.Errorf("clear memory: %w", err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("clear memory: %w", err)
		}
		if err := os.Rename(tmp, m.path); err != nil {
			return fmt.Errorf("clear memory: %w", err)
		}
		if err := syncDir(filepath.Dir(m.path)); err != nil {
			return fmt.Errorf("clear memory: %w", err)
		}
		fi, err := os.Stat(m.path)
		if err != nil {
			return fmt.Errorf("clear memory: %w", err)
		}
		m.reset(fi)
		return nil
	}
	m.reset(nil)
	return nil
}

// Search returns up to k remembered requests whose prompts are most like
// query (BM25 over words), best first. Requests with the same prompt and
// script appear once, the newest. A request must share at least a quarter
// of the query's word weight (idf) to be returned, so one common word is
// not enough.
func (m *Memory) Search(query string, k int) []Match {
	if k <= 0 {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	_ = m.refresh() // on error, answer from what was read
	hits := m.idx.search(tokenize(query), 4*k)
	out := make([]Match, 0, k)
	seen := make(map[[2]string]bool, len(hits))
	for _, h := range hits {
		r := m.records[h.doc]
		key := [2]string{normalizeSpace(r.Prompt), r.Script}
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, Match{Record: r, Score: h.score})
		if len(out) == k {
			break
		}
	}
	return out
}

func normalizeSpace(s string) string { return strings.Join(strings.Fields(strings.ToLower(s)), " ") }

// bm25 is an inverted index over short texts with Okapi BM25 scoring.
type bm25 struct {
	postings map[string][]posting
	lengths  []int32
	total    int64
}

type posting struct {
	doc int32
	tf  int32
}

type hit struct {
	doc   int
	score float64
}

const (
	bm25K1   = 1.2
	bm25B    = 0.75
	minCover = 0.25
)

func (x *bm25) add(terms []string) {
	if x.postings == nil {
		x.postings = make(map[string][]posting)
	}
	doc := int32(len(x.lengths))
	x.lengths = append(x.lengths, int32(len(terms)))
	x.total += int64(len(terms))
	counts := make(map[string]int32, len(terms))
	for _, t := range terms {
		counts[t]++
	}
	for t, c := range counts {
		x.postings[t] = append(x.postings[t], posting{doc: doc, tf: c})
	}
}

// search scores every document sharing a term with the query and returns
// the top k, best first; ties go to the newer document.
func (x *bm25) search(terms []string, k int) []hit {
	n := len(x.lengths)
	if n == 0 || len(terms) == 0 {
		return nil
	}
	avg := float64(x.total) / float64(n)
	if avg == 0 {
		avg = 1
	}
	scores := make([]float64, n)
	var touched []int32
	seenTerm := make(map[string]bool, len(terms))
	// best is the score of an ideal match: every query term once in a
	// document of average length. A hit must reach minCover of it, so
	// that sharing one common word ("files") is not enough.
	var best float64
	for _, t := range terms {
		if seenTerm[t] {
			continue
		}
		seenTerm[t] = true
		ps := x.postings[t]
		// A word no request has used counts as a rare word (df 1), not as
		// an infinitely telling one.
		df := float64(max(len(ps), 1))
		idf := math.Log(1 + (float64(n)-df+0.5)/(df+0.5))
		best += idf
		if len(ps) == 0 {
			continue
		}
		for _, p := range ps {
			tf := float64(p.tf)
			norm := tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*float64(x.lengths[p.doc])/avg))
			if scores[p.doc] == 0 {
				touched = append(touched, p.doc)
			}
			scores[p.doc] += idf * norm
		}
	}
	var hits []hit
	for _, d := range touched {
		if s := scores[d]; s >= minCover*best {
			hits = append(hits, hit{doc: int(d), score: s})
		}
	}
	slices.SortFunc(hits, func(a, b hit) int {
		if a.score != b.score {
			if a.score > b.score {
				return -1
			}
			return 1
		}
		return b.doc - a.doc
	})
	if len(hits) > k {
		hits = hits[:k]
	}
	return hits
}

// tokenize splits s into lower-case word stems, dropping stop words.
func tokenize(s string) []string {
	words := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	out := words[:0]
	for _, w := range words {
		if len(w) < 2 && !unicode.IsDigit(rune(w[0])) {
			continue
		}
		if isStopWord(w) {
			continue
		}
		out = append(out, stem(w))
	}
	return out
}

// stem removes the commonest English suffixes; enough to match "files"
// with "file" and "renaming" with "rename".
func stem(w string) string {
	switch {
	case len(w) > 5 && strings.HasSuffix(w, "ing"):
		w = strings.TrimSuffix(w, "ing")
	case len(w) > 4 && strings.HasSuffix(w, "ies"):
		w = strings.TrimSuffix(w, "ies") + "y"
	case len(w) > 4 && strings.HasSuffix(w, "ed"):
		w = strings.TrimSuffix(w, "ed")
	case len(w) > 3 && strings.HasSuffix(w, "es") && strings.ContainsAny(w[len(w)-3:len(w)-2], "sxz"):
		w = strings.TrimSuffix(w, "es")
	case len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss"):
		w = strings.TrimSuffix(w, "s")
	}
	return strings.TrimSuffix(w, "e")
}

func isStopWord(w string) bool {
	switch w {
	case "a", "an", "the", "and", "or", "of", "to", "in", "on", "at", "for", "from", "with", "by",
		"is", "are", "be", "it", "its", "this", "that", "these", "those", "all", "every", "each",
		"my", "me", "i", "you", "your", "please", "can", "could", "would", "should", "do", "does",
		"into", "as", "so", "then", "them", "they", "some", "any", "which", "what", "there", "here",
		"now", "just", "than", "up", "out", "if", "but", "not", "no", "we", "our", "us", "was", "were":
		return true
	}
	return false
}
