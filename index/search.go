package index

import (
	"bytes"
	"container/heap"
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	"github.com/blevesearch/bleve/v2/search/query"
	bindex "github.com/blevesearch/bleve_index_api"
	bolt "go.etcd.io/bbolt"
)

// Mode selects how Search ranks files.
type Mode int

// Retrieval modes.
const (
	// Auto is Hybrid with an embedder and Keyword without one.
	Auto Mode = iota
	// Keyword ranks by BM25 over name, path, title and content.
	Keyword
	// Semantic ranks by embedding similarity. Without an embedder it falls
	// back to Keyword and says so in Result.Notice.
	Semantic
	// Hybrid fuses Keyword and Semantic rankings by reciprocal rank fusion.
	Hybrid
)

// String names the mode as nash find's flags do.
func (m Mode) String() string {
	switch m {
	case Keyword:
		return "keyword"
	case Semantic:
		return "semantic"
	case Hybrid:
		return "hybrid"
	}
	return "auto"
}

// NoticeNoEmbedder is the Result.Notice of a semantic or hybrid search run
// without an embedder.
const NoticeNoEmbedder = "no embedder configured: ranked by keyword only (set NASH_EMBEDDER to search by meaning)"

// SearchOptions narrow and shape a search. Zero values mean no restriction.
type SearchOptions struct {
	Mode   Mode
	N      int       // files to return (default 10)
	Dir    string    // only files at or below this absolute directory
	Ext    []string  // only these extensions ("md" or ".md")
	After  time.Time // modified after
	Before time.Time // modified before
	// NoSnippets leaves Hit.Snippet, Title and Line empty: for callers that
	// need only paths, it saves loading the stored text of every hit.
	NoSnippets bool
}

// Hit is one file in a ranking.
type Hit struct {
	Path    string  `json:"path"`
	Score   float64 `json:"score"`
	Snippet string  `json:"snippet"`
	Line    int     `json:"line"` // where the snippet starts, 1-based
	Title   string  `json:"title,omitempty"`

	at    int // byte offset of the best passage in the text, -1 unknown
	chunk int // the best embedded passage, -1 none
}

// Result is a ranking of files.
type Result struct {
	Hits   []Hit
	Mode   Mode   // the mode actually used
	Notice string // set when the mode asked for could not be honoured
}

// Search ranks files for q in the query language of ParseQuery.
func (ix *Index) Search(ctx context.Context, q string, opt SearchOptions) (*Result, error) {
	ix.textMu.RLock()
	defer ix.textMu.RUnlock()
	if ix.text == nil {
		return nil, ErrClosed
	}
	if opt.N <= 0 {
		opt.N = 10
	}
	clauses, err := ParseQuery(q, ix.cfg.now())
	if err != nil {
		return nil, err
	}
	mode := opt.Mode
	res := &Result{}
	if mode == Auto {
		mode = Keyword
		if ix.vec != nil {
			mode = Hybrid
		}
	}
	expand := false
	if (mode == Semantic || mode == Hybrid) && ix.vec == nil {
		mode, expand, res.Notice = Keyword, true, NoticeNoEmbedder
	}
	res.Mode = mode
	if ix.NeedsRebuild() {
		// Its documents are not files: nothing can be ranked as files.
		res.Notice = NoticeOldFormat
		return res, nil
	}
	filters := ix.filterQueries(clauses, opt)
	depth := opt.N
	if mode != Keyword {
		depth = max(3*opt.N, 30) // fusion looks deeper than it returns
	}
	var kw, sem []Hit
	if mode == Keyword || mode == Hybrid {
		if expand && ix.cfg.related != nil {
			clauses = expandClauses(clauses, ix.cfg.related, ix.cfg.expandWeight)
		}
		kw, err = ix.keyword(ctx, clauses, filters, depth)
		if err != nil {
			return nil, err
		}
	}
	if mode == Semantic || mode == Hybrid {
		sem, err = ix.semantic(ctx, clauses, filters, depth)
		if err != nil {
			return nil, err
		}
	}
	switch mode {
	case Keyword:
		res.Hits = kw
	case Semantic:
		res.Hits = sem
	default:
		res.Hits = fuseRRF(kw, sem)
	}
	if len(res.Hits) > opt.N {
		res.Hits = res.Hits[:opt.N]
	}
	if !opt.NoSnippets {
		ix.fillSnippets(ctx, clauses, res.Hits)
	}
	return res, nil
}

// Retrieve returns the n files that best match a natural-language request:
// hybrid with an embedder; without one, keyword search with query
// expansion (the semantic fallback). The request is read as plain words
// (PlainQuery), never as query syntax. It fits the planner's Retriever.
func (ix *Index) Retrieve(ctx context.Context, q string, n int) ([]Hit, error) {
	res, err := ix.Search(ctx, PlainQuery(q), SearchOptions{Mode: Hybrid, N: n})
	if err != nil {
		return nil, err
	}
	return res.Hits, nil
}

// PlainQuery turns natural-language text into a query of plain scored
// words: quotes, parentheses, operators, +/- prefixes and field: prefixes
// lose their meaning.
func PlainQuery(s string) string {
	f := strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || strings.ContainsRune(`"()+-!&|:`, r)
	})
	for i, w := range f {
		switch w {
		case "AND", "OR", "NOT":
			f[i] = strings.ToLower(w)
		}
	}
	return strings.Join(f, " ")
}

// weights are the weights of a file's name, title and path next to the
// body (weight 1) when a query word is also there.
type weights struct {
	name, title, path float64
}

// defaultWeights are the bonus of a required word (+word, a AND b) also
// found in a file's name, title or directory: small, so that the text
// leads and the bonus breaks near ties.
var defaultWeights = weights{name: 0.15, title: 0.05, path: 0.1}

// boostExpand weighs expansion words below the person's own.
const boostExpand = 0.3

// expandClauses adds the related words of each plain scored word, as
// related returns them, as extra scored words that weigh less than the
// person's own (weight, against their 1). Nothing in nash sets related
// (see expand_test.go): it is there to be measured.
func expandClauses(clauses []Clause, related func(string) []string, weight float64) []Clause {
	out := append([]Clause(nil), clauses...)
	have := map[string]bool{}
	for _, c := range clauses {
		have[strings.ToLower(c.Text)] = true
	}
	for _, c := range clauses {
		if c.Occur != Should || c.Field != "" || c.Phrase || c.Group != nil {
			continue
		}
		for _, w := range strings.Fields(c.Text) {
			for _, s := range related(w) {
				if !have[s] {
					have[s] = true
					out = append(out, Clause{Text: s, weight: weight})
				}
			}
		}
	}
	return out
}

func fieldQuery(field, text string, phrase bool, boost float64) query.Query {
	if phrase {
		q := bleve.NewMatchPhraseQuery(text)
		q.SetField(field)
		q.SetBoost(boost)
		return q
	}
	q := bleve.NewMatchQuery(text)
	q.SetField(field)
	q.SetBoost(boost)
	return q
}

// boolQuery turns clauses (without filters) into a bleve query. The plain
// scored words are ranked together by one bm25fQuery over the file's
// fields (see bm25f.go); at the top level it is returned too, so that its
// files can be rescored with their passages (nested groups are scored
// without). Required words are bleve match queries on the text; a
// required word also found in the name, title or path adds a bonus, added
// outside the text's disjunction so that its coordination factor does not
// penalise files that match only in the text.
func boolQuery(clauses []Clause, w weights, lens fieldLens, top bool) (query.Query, *bm25fQuery) {
	var must, should, not, bonus []query.Query
	var words []bm25fWord
	for _, c := range clauses {
		if filterFields[c.Field] {
			continue
		}
		var q query.Query
		switch {
		case c.Group != nil:
			q, _ = boolQuery(c.Group, w, lens, false)
		case c.Field != "":
			q = fieldQuery(textFields[c.Field], c.Text, c.Phrase, 1)
		case c.Occur == Should && !c.Phrase:
			weight := 1.0
			if c.weight != 0 {
				weight = c.weight
			}
			words = append(words, bm25fWord{text: c.Text, weight: weight})
			continue
		default:
			boost := 1.0
			if c.weight != 0 {
				boost = c.weight
			}
			q = fieldQuery(fieldBody, c.Text, c.Phrase, boost)
			if c.Occur != MustNot && !c.Phrase {
				for _, f := range []struct {
					name  string
					boost float64
				}{{fieldName, w.name}, {fieldTitle, w.title}, {fieldPathTxt, w.path}} {
					if f.boost > 0 {
						bonus = append(bonus, fieldQuery(f.name, c.Text, false, f.boost*boost))
					}
				}
			}
		}
		switch c.Occur {
		case Must:
			must = append(must, q)
		case MustNot:
			not = append(not, q)
		default:
			should = append(should, q)
		}
	}
	var bq *bm25fQuery
	if len(words) > 0 {
		bq = newBM25FQuery(words, lens)
		if !top {
			bq.window = 0
		}
		should = append(should, bq)
	}
	if !top {
		bq = nil
	}
	if bq != nil && len(should) == 1 && len(must) == 0 && len(not) == 0 && len(bonus) == 0 {
		return bq, bq // plain words: no wrapping searchers to pay for
	}
	b := bleve.NewBooleanQuery()
	switch {
	case len(should) > 0 && len(must) == 0:
		b.AddMust(bleve.NewDisjunctionQuery(should...))
	case len(should) > 0:
		b.AddShould(bleve.NewDisjunctionQuery(should...))
	}
	if len(must) > 0 {
		b.AddMust(must...)
	}
	if len(must) == 0 && len(should) == 0 {
		b.AddMust(bleve.NewMatchAllQuery())
	}
	if len(bonus) > 0 {
		b.AddShould(bleve.NewDisjunctionQuery(bonus...))
	}
	if len(not) > 0 {
		b.AddMustNot(not...)
	}
	return b, bq
}

// filterQueries turns the filter clauses and options into restrictions;
// the second slice holds exclusions.
func (ix *Index) filterQueries(clauses []Clause, opt SearchOptions) (f filterSet) {
	add := func(q query.Query, occur Occur) {
		if occur == MustNot {
			f.not = append(f.not, q)
		} else {
			f.must = append(f.must, q)
		}
	}
	dirQ := func(dir string) query.Query {
		if filepath.IsAbs(dir) {
			dir = filepath.Clean(dir)
			pq := bleve.NewPrefixQuery(strings.TrimSuffix(dir, "/") + "/")
			pq.SetField(fieldPath)
			return pq
		}
		// A relative dir matches that directory name anywhere.
		rq := bleve.NewRegexpQuery(".*/" + regexp.QuoteMeta(strings.Trim(dir, "/")) + "/.*")
		rq.SetField(fieldPath)
		return rq
	}
	extQ := func(exts []string) query.Query {
		var qs []query.Query
		for _, e := range exts {
			e = strings.TrimPrefix(strings.ToLower(strings.TrimSpace(e)), ".")
			if e == "" {
				continue
			}
			tq := bleve.NewTermQuery(e)
			tq.SetField(fieldExt)
			qs = append(qs, tq)
		}
		if len(qs) == 0 {
			return bleve.NewMatchAllQuery()
		}
		return bleve.NewDisjunctionQuery(qs...)
	}
	// Time and size are checked against the catalog after the search:
	// indexed as bleve numbers they cost a fifth of the index.
	addPost := func(p func(fileEntry) bool, occur Occur) {
		if occur == MustNot {
			f.post = append(f.post, func(e fileEntry) bool { return !p(e) })
		} else {
			f.post = append(f.post, p)
		}
	}
	timeP := func(after, before time.Time) func(fileEntry) bool {
		return func(e fileEntry) bool {
			t := time.Unix(0, e.MTime)
			return (after.IsZero() || t.After(after)) && (before.IsZero() || t.Before(before))
		}
	}
	if opt.Dir != "" {
		add(dirQ(opt.Dir), Must)
	}
	if len(opt.Ext) > 0 {
		add(extQ(opt.Ext), Must)
	}
	if !opt.After.IsZero() || !opt.Before.IsZero() {
		addPost(timeP(opt.After, opt.Before), Must)
	}
	now := ix.cfg.now()
	for _, c := range clauses {
		switch c.Field {
		case filterDir:
			add(dirQ(c.Text), c.Occur)
		case filterExt:
			add(extQ(strings.Split(c.Text, ",")), c.Occur)
		case filterAfter:
			t, _ := parseDate(c.Text, now)
			addPost(timeP(t, time.Time{}), c.Occur)
		case filterBefore:
			t, _ := parseDate(c.Text, now)
			addPost(timeP(time.Time{}, t), c.Occur)
		case filterSize:
			lo, hi, _ := parseSizeRange(c.Text)
			addPost(func(e fileEntry) bool {
				return (lo < 0 || e.Size >= lo) && (hi < 0 || e.Size <= hi)
			}, c.Occur)
		}
	}
	return f
}

// filterSet holds the restrictions of a search: bleve queries on the path
// and extension, and predicates on the catalog entry (time, size).
type filterSet struct {
	must, not []query.Query
	post      []func(fileEntry) bool
}

func (f filterSet) empty() bool { return len(f.must) == 0 && len(f.not) == 0 && len(f.post) == 0 }

// restrict wraps q in the bleve filters.
func (f filterSet) restrict(q query.Query) query.Query {
	if len(f.must) == 0 && len(f.not) == 0 {
		return q
	}
	b := bleve.NewBooleanQuery()
	b.AddMust(q)
	b.AddMust(f.must...)
	if len(f.not) > 0 {
		b.AddMustNot(f.not...)
	}
	return b
}

// admit returns the paths whose catalog entries pass the predicates.
func (ix *Index) admit(paths []string, post []func(fileEntry) bool) (map[string]bool, error) {
	ok := map[string]bool{}
	err := ix.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketFiles)
		for _, p := range paths {
			v := b.Get([]byte(p))
			if v == nil {
				continue
			}
			e, err := decodeEntry(v)
			if err != nil {
				return err
			}
			pass := true
			for _, f := range post {
				if !f(e) {
					pass = false
					break
				}
			}
			ok[p] = pass
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read catalog: %w", err)
	}
	return ok, nil
}

// keyword ranks files by the query's words and returns up to depth of
// them, best first.
func (ix *Index) keyword(ctx context.Context, clauses []Clause, filters filterSet, depth int) ([]Hit, error) {
	ix.lensMu.Lock()
	lens := ix.lens
	ix.lensMu.Unlock()
	q, bq := boolQuery(clauses, ix.cfg.weights, lens, true)
	q = filters.restrict(q)
	adv, err := ix.text.Advanced()
	if err != nil {
		return nil, fmt.Errorf("keyword search: %w", err)
	}
	r, err := adv.Reader()
	if err != nil {
		return nil, fmt.Errorf("keyword search: %w", err)
	}
	defer r.Close()
	hits, err := ix.rankFiles(ctx, r, q, bq, filters.post, depth)
	if err != nil {
		return nil, fmt.Errorf("keyword search: %w", err)
	}
	return hits, nil
}

// maxPostScan bounds the files read to fill a ranking when catalog
// predicates (time, size) reject many hits.
const maxPostScan = 200_000

// rankFiles runs q on r: the searcher scores files by an upper bound (see
// bm25f.go) and keeps the best candidates; bq rescores them exactly a
// page at a time, and catalog predicates drop files, until the files in
// hand beat the bound of every candidate left. Should candidates run out
// first, the searcher runs again for the next ones.
func (ix *Index) rankFiles(ctx context.Context, r bindex.IndexReader, q query.Query, bq *bm25fQuery, post []func(fileEntry) bool, depth int) ([]Hit, error) {
	page := max(2*depth, 20)
	if len(post) > 0 {
		page = max(depth*8, 1000)
	}
	window := max(10*page, 200) // candidates per run of the searcher
	m := ix.text.Mapping()
	var hits []Hit
	for from := 0; from < maxPostScan; from += window {
		cands, err := topDocs(ctx, r, m, q, from, window)
		if err != nil {
			return nil, err
		}
		for start := 0; start < len(cands); start += page {
			res := cands[start:min(start+page, len(cands))]
			fresh, err := ix.scorePage(ctx, r, bq, post, res)
			if err != nil {
				return nil, err
			}
			hits = append(hits, fresh...)
			sortHits(hits)
			// Candidates further down score at most the next one's bound.
			if next := start + page; next < len(cands) && len(hits) >= depth && hits[depth-1].Score >= cands[next].score {
				return hits[:depth], nil
			}
		}
		if len(cands) < window {
			break
		}
		if len(hits) >= depth && hits[depth-1].Score >= cands[len(cands)-1].score {
			break
		}
	}
	if len(hits) > depth {
		hits = hits[:depth]
	}
	return hits, nil
}

// scorePage turns candidates into hits: rescored exactly by bq, and
// passing the catalog predicates.
func (ix *Index) scorePage(ctx context.Context, r bindex.IndexReader, bq *bm25fQuery, post []func(fileEntry) bool, res []rankedDoc) ([]Hit, error) {
	fresh := make([]Hit, len(res))
	for i, d := range res {
		id, err := r.ExternalID(d.internal)
		if err != nil {
			return nil, err
		}
		fresh[i] = Hit{Path: id, Score: d.score, at: -1, chunk: -1}
	}
	if bq != nil && len(res) > 0 {
		ids := make([]bindex.IndexInternalID, len(res))
		known := make([]phase1, len(res))
		for i, d := range res {
			ids[i], known[i] = d.internal, d.phase1
		}
		rs, err := bq.rescore(ctx, r, ids, known)
		if err != nil {
			return nil, err
		}
		for i := range fresh {
			fresh[i].Score += rs[i].exact - rs[i].upper
			fresh[i].at = rs[i].at
		}
	}
	if len(post) > 0 && len(fresh) > 0 {
		paths := make([]string, len(fresh))
		for i, h := range fresh {
			paths[i] = h.Path
		}
		ok, err := ix.admit(paths, post)
		if err != nil {
			return nil, err
		}
		fresh = slices.DeleteFunc(fresh, func(h Hit) bool { return !ok[h.Path] })
	}
	return fresh, nil
}

// rankedDoc is a document found by topDocs.
type rankedDoc struct {
	internal bindex.IndexInternalID
	score    float64
	phase1   // when the searcher is a bm25fSearcher
}

// rankedHeap keeps the best documents with the worst on top.
type rankedHeap []rankedDoc

func (h rankedHeap) Len() int { return len(h) }
func (h rankedHeap) Less(i, j int) bool {
	if h[i].score != h[j].score {
		return h[i].score < h[j].score
	}
	return bytes.Compare(h[i].internal, h[j].internal) > 0 // later IDs lose ties
}
func (h rankedHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *rankedHeap) Push(x any)   { *h = append(*h, x.(rankedDoc)) }
func (h *rankedHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// topDocs runs q on r and returns the documents ranked from+1 to
// from+size by score, best first (without their external IDs). It does
// what bleve's top-N collector does, without its per-hit bookkeeping.
func topDocs(ctx context.Context, r bindex.IndexReader, m mapping.IndexMapping, q query.Query, from, size int) ([]rankedDoc, error) {
	s, err := q.Searcher(ctx, r, m, search.SearcherOptions{})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	bs, _ := s.(*bm25fSearcher)
	keep := from + size
	sctx := &search.SearchContext{DocumentMatchPool: search.NewDocumentMatchPool(s.DocumentMatchPoolSize()+1, 0), IndexReader: r}
	h := make(rankedHeap, 0, keep+1)
	for n := 0; ; n++ {
		if n%1024 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		d, err := s.Next(sctx)
		if err != nil {
			return nil, err
		}
		if d == nil {
			break
		}
		var p phase1
		if bs != nil {
			p = phase1{doc: bs.doc, matched: bs.matched, known: true}
		}
		switch {
		case len(h) < keep:
			heap.Push(&h, rankedDoc{internal: slices.Clone(d.IndexInternalID), score: d.Score, phase1: p})
		case d.Score > h[0].score:
			h[0].internal = append(h[0].internal[:0], d.IndexInternalID...)
			h[0].score, h[0].phase1 = d.Score, p
			heap.Fix(&h, 0)
		}
		sctx.DocumentMatchPool.Put(d)
	}
	out := make([]rankedDoc, len(h))
	for i := len(h) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&h).(rankedDoc)
	}
	if from >= len(out) {
		return nil, nil
	}
	return out[from:], nil
}

// sortHits orders hits best first, ties by path.
func sortHits(hits []Hit) {
	slices.SortStableFunc(hits, func(a, b Hit) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return strings.Compare(a.Path, b.Path)
	})
}

// semantic ranks files by the similarity of their embedded passages to
// the query's words, as the keyword side does: a whole-file score (the
// similarity of the file's centroid) plus its best passage's, honouring
// the filters.
func (ix *Index) semantic(ctx context.Context, clauses []Clause, filters filterSet, depth int) ([]Hit, error) {
	var words []string
	for _, c := range flatten(clauses) {
		if c.Occur != MustNot && !filterFields[c.Field] {
			words = append(words, c.Text)
		}
	}
	text := strings.Join(words, " ")
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	v, err := ix.cfg.embedder.EmbedQuery(ctx, text)
	if err != nil {
		return nil, fmt.Errorf("embed query: %w", err)
	}
	files, err := ix.vec.files(v)
	if err != nil {
		return nil, err
	}
	k := depth * 3
	if !filters.empty() {
		k = depth * 20 // filters drop candidates after the fact
	}
	if len(files) > k {
		files = files[:k]
	}
	var allowed map[string]bool
	if !filters.empty() && len(files) > 0 {
		ids := make([]string, len(files))
		for i, f := range files {
			ids[i] = f.path
		}
		q := filters.restrict(bleve.NewDocIDQuery(ids))
		res, err := ix.text.SearchInContext(ctx, bleve.NewSearchRequestOptions(q, len(ids), 0, false))
		if err != nil {
			return nil, fmt.Errorf("filter semantic hits: %w", err)
		}
		allowed = map[string]bool{}
		var paths []string
		for _, d := range res.Hits {
			allowed[d.ID] = true
			paths = append(paths, d.ID)
		}
		if len(filters.post) > 0 {
			ok, err := ix.admit(paths, filters.post)
			if err != nil {
				return nil, err
			}
			for p := range allowed {
				if !ok[p] {
					delete(allowed, p)
				}
			}
		}
	}
	var hits []Hit
	for _, f := range files {
		if allowed != nil && !allowed[f.path] {
			continue
		}
		hits = append(hits, Hit{Path: f.path, Score: f.score, at: -1, chunk: f.best})
		if len(hits) == depth {
			break
		}
	}
	return hits, nil
}

func flatten(clauses []Clause) []Clause {
	var out []Clause
	for _, c := range clauses {
		if c.Group != nil {
			for _, g := range flatten(c.Group) {
				if c.Occur == MustNot {
					g.Occur = MustNot
				}
				out = append(out, g)
			}
			continue
		}
		out = append(out, c)
	}
	return out
}

// rrfK is the reciprocal rank fusion constant (Cormack et al. 2009).
const rrfK = 60

// fuseRRF merges rankings by reciprocal rank fusion: each file scores the
// sum of 1/(k+rank) over the rankings it appears in.
func fuseRRF(rankings ...[]Hit) []Hit {
	score := map[string]float64{}
	best := map[string]Hit{}
	var order []string
	for _, r := range rankings {
		for i, h := range r {
			if _, ok := best[h.Path]; !ok {
				best[h.Path] = h
				order = append(order, h.Path)
			}
			score[h.Path] += 1 / float64(rrfK+i+1)
		}
	}
	out := make([]Hit, 0, len(order))
	for _, p := range order {
		h := best[p]
		h.Score = score[p]
		out = append(out, h)
	}
	slices.SortStableFunc(out, func(a, b Hit) int {
		switch {
		case a.Score > b.Score:
			return -1
		case a.Score < b.Score:
			return 1
		}
		return 0
	})
	return out
}

// fillSnippets loads the text of each hit and cuts the snippet around
// its best passage: the keyword one, else the embedded one, else the
// densest match of the query's words.
func (ix *Index) fillSnippets(ctx context.Context, clauses []Clause, hits []Hit) {
	if len(hits) == 0 {
		return
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.Path
	}
	req := bleve.NewSearchRequestOptions(bleve.NewDocIDQuery(ids), len(ids), 0, false)
	req.Fields = []string{fieldText, fieldTitle}
	res, err := ix.text.SearchInContext(ctx, req)
	if err != nil {
		return // snippets are a courtesy; the ranking stands
	}
	byID := map[string]map[string]any{}
	for _, d := range res.Hits {
		byID[d.ID] = d.Fields
	}
	terms := map[string]bool{}
	for _, c := range flatten(clauses) {
		if c.Occur == MustNot || filterFields[c.Field] {
			continue
		}
		for _, t := range ix.analyzer.Analyze([]byte(c.Text)) {
			terms[string(t.Term)] = true
		}
	}
	for i := range hits {
		h := &hits[i]
		f := byID[h.Path]
		text, _ := f[fieldText].(string)
		h.Title, _ = f[fieldTitle].(string)
		at := h.at
		if at < 0 || at > len(text) {
			at = -1
			if h.chunk >= 0 {
				for _, c := range SplitChunks(text, ix.cfg.chunkWords, ix.cfg.overlapWords) {
					if c.Seq == h.chunk {
						at = c.Start + snippetOffset(c.Text, terms)
						break
					}
				}
			}
		}
		if at < 0 {
			at = snippetOffset(text, terms)
		}
		h.Snippet, h.Line = snippetAround(text, at, snippetWidth)
	}
}

// snippetWidth is the length of a snippet in bytes.
const snippetWidth = 160

// snippetOffset returns the byte offset of the window of words holding
// the most distinct query terms, or 0. A word matches a term when it
// starts with the term's stem ("archiving" matches "archiv"): cheaper than
// analysing the text, and close enough to place a snippet.
func snippetOffset(text string, terms map[string]bool) int {
	if len(terms) == 0 {
		return 0
	}
	type match struct {
		start int
		term  string
	}
	var ms []match
	start := -1
	check := func(end int) {
		w := strings.ToLower(text[start:end])
		for t := range terms {
			if strings.HasPrefix(w, t) {
				ms = append(ms, match{start, t})
				break
			}
		}
	}
	for i, r := range text {
		word := unicode.IsLetter(r) || unicode.IsDigit(r)
		switch {
		case word && start < 0:
			start = i
		case !word && start >= 0:
			check(i)
			start = -1
		}
	}
	if start >= 0 {
		check(len(text))
	}
	if len(ms) == 0 {
		return 0
	}
	bestAt, bestN := ms[0].start, 0
	for i := range ms {
		distinct := map[string]bool{}
		for j := i; j < len(ms) && ms[j].start-ms[i].start < snippetWidth/2; j++ {
			distinct[ms[j].term] = true
		}
		if len(distinct) > bestN {
			bestAt, bestN = ms[i].start, len(distinct)
		}
	}
	return bestAt
}
