package index

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/search/query"
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
	// back to Keyword with query expansion and says so in Result.Notice.
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
const NoticeNoEmbedder = "no embedder configured: semantic search fell back to keyword search with query expansion"

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

// Hit is one file in a ranking, pointing at its best chunk.
type Hit struct {
	Path    string  `json:"path"`
	Score   float64 `json:"score"`
	Snippet string  `json:"snippet"`
	Line    int     `json:"line"`  // first line of the best chunk
	Chunk   int     `json:"chunk"` // 0-based chunk number
	Title   string  `json:"title,omitempty"`
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
	if ix.format < formatVersion && res.Notice == "" {
		res.Notice = NoticeOldFormat
	}
	filters := ix.filterQueries(clauses, opt)
	depth := max(3*opt.N, 30)
	var kw, sem []Hit
	if mode == Keyword || mode == Hybrid {
		if expand {
			clauses = expandClauses(clauses)
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

// defaultWeights are small: on the tldr known-item test any name bonus
// costs a little (descriptions name other commands), so the body score
// leads and the bonus breaks near ties, e.g. for a file named after the
// words searched.
var defaultWeights = weights{name: 0.15, title: 0.05, path: 0.1}

// boostExpand weighs expansion words below the person's own.
const boostExpand = 0.3

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
// scored words are ranked together by one bm25fQuery over the body field
// (which holds the name, the title and the text, so a word found only in a
// file name still finds the file) and, with the small weights of w, the
// name, title and path fields. Required words are bleve match queries on
// the body; a required word also found in the name, title or path adds a
// bonus, added outside the body's disjunction so that its coordination
// factor does not penalise files that match only in the text.
func boolQuery(clauses []Clause, w weights) query.Query {
	var must, should, not, bonus []query.Query
	var words []bm25fWord
	for _, c := range clauses {
		if filterFields[c.Field] {
			continue
		}
		var q query.Query
		switch {
		case c.Group != nil:
			q = boolQuery(c.Group, w)
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
	if len(words) > 0 {
		should = append(should, &bm25fQuery{words: words, fields: bm25Fields(w), idf: fieldBody, k1: bm25K1, refLen: bm25RefLen})
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
	return b
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
			var e fileEntry
			if err := json.Unmarshal(v, &e); err != nil {
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

// keyword runs the BM25 ranking and returns up to depth files.
func (ix *Index) keyword(ctx context.Context, clauses []Clause, filters filterSet, depth int) ([]Hit, error) {
	return ix.rankFiles(ctx, filters.restrict(boolQuery(clauses, ix.cfg.weights)), filters.post, depth)
}

// maxPostScan bounds the chunks read to fill a ranking when catalog
// predicates (time, size) reject many hits.
const maxPostScan = 200_000

// rankFiles runs q and keeps the best chunk of each file whose catalog
// entry passes post, reading further pages while predicates reject hits.
func (ix *Index) rankFiles(ctx context.Context, q query.Query, post []func(fileEntry) bool, depth int) ([]Hit, error) {
	var hits []Hit
	seen := map[string]bool{}
	page := depth * 2
	if len(post) > 0 {
		page = max(depth*8, 1000)
	}
	for from := 0; from < maxPostScan; from += page {
		req := bleve.NewSearchRequestOptions(q, page, from, false)
		res, err := ix.text.SearchInContext(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("keyword search: %w", err)
		}
		var fresh []Hit
		for _, d := range res.Hits {
			path, seq := splitChunkID(d.ID)
			if seen[path] {
				continue
			}
			seen[path] = true
			fresh = append(fresh, Hit{Path: path, Chunk: seq, Score: d.Score})
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
		for _, h := range fresh {
			if len(hits) == depth {
				return hits, nil
			}
			hits = append(hits, h)
		}
		if len(post) == 0 || len(res.Hits) < page || len(hits) == depth {
			break
		}
	}
	return hits, nil
}

// semantic ranks chunks by similarity to the query's words and keeps the
// best chunk of each file, honouring the filters.
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
	k := depth * 3
	if !filters.empty() {
		k = depth * 20 // filters drop candidates after the fact
	}
	near, err := ix.vec.search(v, k)
	if err != nil {
		return nil, err
	}
	var allowed map[string]bool
	if !filters.empty() && len(near) > 0 {
		ids := make([]string, len(near))
		for i, s := range near {
			ids[i] = s.id
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
			p, _ := splitChunkID(d.ID)
			paths = append(paths, p)
		}
		if len(filters.post) > 0 {
			ok, err := ix.admit(paths, filters.post)
			if err != nil {
				return nil, err
			}
			for id := range allowed {
				if p, _ := splitChunkID(id); !ok[p] {
					delete(allowed, id)
				}
			}
		}
	}
	var hits []Hit
	seen := map[string]bool{}
	for _, s := range near {
		if allowed != nil && !allowed[s.id] {
			continue
		}
		path, seq := splitChunkID(s.id)
		if seen[path] {
			continue
		}
		seen[path] = true
		hits = append(hits, Hit{Path: path, Chunk: seq, Score: s.score})
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

// fillSnippets loads the best chunk of each hit and cuts the snippet
// around the densest match of the query's words.
func (ix *Index) fillSnippets(ctx context.Context, clauses []Clause, hits []Hit) {
	if len(hits) == 0 {
		return
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = chunkID(h.Path, h.Chunk)
	}
	req := bleve.NewSearchRequestOptions(bleve.NewDocIDQuery(ids), len(ids), 0, false)
	req.Fields = []string{fieldText, fieldTitle, fieldLine}
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
		f := byID[ids[i]]
		content, _ := f[fieldText].(string)
		hits[i].Title, _ = f[fieldTitle].(string)
		if line, ok := f[fieldLine].(float64); ok {
			hits[i].Line = int(line)
		}
		hits[i].Snippet = ix.snippet(content, terms)
	}
}

// snippetWidth is the length of a snippet in bytes.
const snippetWidth = 160

// snippet returns the part of text around the window of words holding
// the most distinct query terms. A word matches a term when it starts with
// the term's stem ("archiving" matches "archiv"): cheaper than analysing
// every chunk shown, and close enough to place a snippet.
func (ix *Index) snippet(text string, terms map[string]bool) string {
	if len(terms) == 0 {
		return snippetAround(text, 0, snippetWidth)
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
		return snippetAround(text, 0, snippetWidth)
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
	return snippetAround(text, bestAt, snippetWidth)
}
