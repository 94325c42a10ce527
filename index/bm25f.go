package index

import (
	"bytes"
	"context"
	"math"
	"slices"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	bindex "github.com/blevesearch/bleve_index_api"
)

// Files are ranked as files: a document score, BM25F over the whole file,
// plus the score of the file's best passage, so that a long document that
// is about the query comes first and a short one is not drowned:
//
//	score(d)   = Σ_t w_t · idf(t) · tf'(t)·(k1+1) / (k1 + tf'(t))  +  λ · passage(d)
//	tf'(t)     = Σ_f w_f · tf_f(t) / (1 - b_f + b_f · len_f / avglen_f)
//	passage(d) = max over windows of W words of Σ_t w_t · idf(t) · g(tf_window(t))
//	g(n)       = n·(k1p+1) / (k1p + n)
//
// The fields are the text (weight 1), its lead (its first leadWords words),
// the file name, title, headings and directory; avglen_f is the field's
// average length over the index (fieldLens). The passage term rewards the
// query's words found close together, which a whole-file score cannot see.
//
// A search runs in two phases. The searcher (bm25fSearcher) walks the
// postings without positions and scores each file by an upper bound: its
// document score plus the largest passage score its words allow. The best
// files by that bound are then scored exactly (rescore), reading the
// positions of the query's words in those files only, until no file
// further down can overtake them.

// Ranking parameters, chosen on the tuning halves of the long-document
// known-item sets (index/longdoc_test.go) under the constraint that the
// tldr pages (short ones) stay where the chunked ranking had them: MRR@10
// was flat within 0.005 around them. The text saturates slowly (k1 8: a
// long document that keeps using the query's words is about them) and is
// fully length-normalised against its average length; the lead too, so
// that a short file, all lead, is not favoured by it. The passage term is
// small and saturates at once (k1p 0.2): a few of the query's words close
// together.
const (
	bm25K1         = 8.0
	bm25B          = 1.0
	bm25BLead      = 1.0
	passageWindow  = 30 // words, counted with the stop words (bleve's positions)
	passageWeight  = 1.5
	passageK1      = 0.2
	weightLead     = 2.0
	weightName     = 1.0
	weightTitle    = 0.5
	weightHeadings = 0.25
	weightDir      = 0.5
)

// bm25fField is a field scored by bm25fQuery.
type bm25fField struct {
	name   string
	weight float64
	b      float64 // 0: no length normalisation, 1: full
	avg    float64 // average length over the index
}

// bm25fWord is a query word and its weight (an expansion word weighs less).
type bm25fWord struct {
	text   string
	weight float64
}

// bm25fTerm is an analysed query term and w_t·idf(t).
type bm25fTerm struct {
	text   string
	weight float64
}

// bm25fQuery scores files holding any of its words; see above. fields[0]
// is the text: it gives idf, and the positions of passages.
type bm25fQuery struct {
	words  []bm25fWord
	fields []bm25fField
	k1     float64
	window int     // passage length in positions; 0: no passage score
	lambda float64 // weight of the passage score
	k1p    float64 // saturation within a passage
	lead   int     // the index of the lead field in fields, or -1

	terms []bm25fTerm // set by Searcher
}

// newBM25FQuery scores words over the fields of a file's document with
// the index's average field lengths.
func newBM25FQuery(words []bm25fWord, lens fieldLens) *bm25fQuery {
	weight := map[string]float64{
		fieldBody: 1, fieldLead: weightLead, fieldName: weightName, fieldTitle: weightTitle,
		fieldHeads: weightHeadings, fieldPathTxt: weightDir,
	}
	b := map[string]float64{fieldBody: bm25B, fieldLead: bm25BLead}
	var fields []bm25fField
	lead := -1
	for i, f := range scoredFields {
		if weight[f] > 0 {
			if f == fieldLead {
				lead = len(fields)
			}
			fields = append(fields, bm25fField{name: f, weight: weight[f], b: b[f], avg: lens.avg(i)})
		}
	}
	return &bm25fQuery{words: words, fields: fields, k1: bm25K1, window: passageWindow, lambda: passageWeight, k1p: passageK1, lead: lead}
}

// tfNorm is tfNorm of field fi for a posting, and for a posting of the
// text of a file short enough to be its own lead (which then has no lead
// field: see Index.lead), the lead's part too.
func (q *bm25fQuery) tfNorm(fi int, freq uint64, norm float64) float64 {
	x := q.fields[fi].tfNorm(freq, norm)
	if fi == 0 && q.lead >= 0 && norm > 0 && 1/(norm*norm) <= leadWords+0.5 {
		x += q.fields[q.lead].tfNorm(freq, norm)
	}
	return x
}

// bound is the most a file's passage score can add per unit of w_t·idf(t).
func (q *bm25fQuery) bound() float64 {
	if q.window <= 0 {
		return 0
	}
	return q.lambda * (q.k1p + 1)
}

// analyse turns the query's words into weighted terms with their idf.
func (q *bm25fQuery) analyse(r bindex.IndexReader, an analysis.Analyzer) error {
	weights := map[string]float64{}
	var order []string
	for _, w := range q.words {
		for _, tok := range an.Analyze([]byte(w.text)) {
			t := string(tok.Term)
			if _, ok := weights[t]; !ok {
				order = append(order, t)
			}
			weights[t] += w.weight
		}
	}
	total, err := r.DocCount()
	if err != nil {
		return err
	}
	q.terms = q.terms[:0]
	for _, t := range order {
		// The document frequency of the text, or of the field where
		// the term is most frequent when the text lacks it (a word
		// found only in file names).
		var df uint64
		for i, f := range q.fields {
			n, err := r.TermFieldReader(context.Background(), []byte(t), f.name, false, false, false)
			if err != nil {
				return err
			}
			c := n.Count()
			n.Close()
			if i == 0 && c > 0 {
				df = c
				break
			}
			df = max(df, c)
		}
		n := float64(df)
		idf := math.Log(1 + (float64(total)-n+0.5)/(n+0.5))
		q.terms = append(q.terms, bm25fTerm{text: t, weight: weights[t] * idf})
	}
	return nil
}

// Searcher opens a reader per term and field and merges them by document.
func (q *bm25fQuery) Searcher(ctx context.Context, r bindex.IndexReader, m mapping.IndexMapping, opts search.SearcherOptions) (search.Searcher, error) {
	if err := q.analyse(r, m.AnalyzerNamed(analyzerName)); err != nil {
		return nil, err
	}
	s := &bm25fSearcher{q: q, tf: make([]float64, len(q.terms))}
	for ti, t := range q.terms {
		for fi, f := range q.fields {
			tr, err := r.TermFieldReader(ctx, []byte(t.text), f.name, true, true, false)
			if err != nil {
				s.Close()
				return nil, err
			}
			if tr.Count() == 0 {
				tr.Close()
				continue
			}
			s.readers = append(s.readers, &bm25fReader{r: tr, term: ti, field: fi})
		}
	}
	for _, rd := range s.readers {
		if err := rd.next(); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
}

// tfNorm is w_f · tf / (1 - b_f + b_f·len/avg) for a posting with norm
// 1/sqrt(len).
func (f bm25fField) tfNorm(freq uint64, norm float64) float64 {
	n := 1.0
	if f.b > 0 && norm > 0 {
		length := 1 / (norm * norm)
		n = 1 - f.b + f.b*length/f.avg
	}
	return f.weight * float64(freq) / n
}

// docScore is the BM25F score of a file from tf' per term, and the sum of
// w_t·idf(t) over the terms it holds.
func (q *bm25fQuery) docScore(tf []float64) (score, matched float64) {
	for t, x := range tf {
		if x > 0 {
			w := q.terms[t].weight
			score += w * x * (q.k1 + 1) / (q.k1 + x)
			matched += w
		}
	}
	return score, matched
}

// bm25fReader is one term's postings in one field, positioned on cur.
type bm25fReader struct {
	r     bindex.TermFieldReader
	cur   *bindex.TermFieldDoc // nil at the end
	buf   bindex.TermFieldDoc
	term  int
	field int
}

func (rd *bm25fReader) next() error {
	d, err := rd.r.Next(rd.buf.Reset())
	rd.cur = d
	return err
}

func (rd *bm25fReader) advance(id bindex.IndexInternalID) error {
	d, err := rd.r.Advance(id, rd.buf.Reset())
	rd.cur = d
	return err
}

// bm25fSearcher yields the files of its readers in ID order, scored by
// the upper bound of their score.
type bm25fSearcher struct {
	q       *bm25fQuery
	readers []*bm25fReader
	tf      []float64 // scratch: tf'(t) of the current document
	id      bindex.IndexInternalID
	// The last document's score without the passage bound, and the sum
	// of w_t·idf(t) over its terms: what rescore needs of the fields
	// other than the text.
	doc, matched float64
}

// Next returns the next document holding any term.
func (s *bm25fSearcher) Next(ctx *search.SearchContext) (*search.DocumentMatch, error) {
	var lo bindex.IndexInternalID
	for _, rd := range s.readers {
		if rd.cur != nil && (lo == nil || bytes.Compare(rd.cur.ID, lo) < 0) {
			lo = rd.cur.ID
		}
	}
	if lo == nil {
		return nil, nil
	}
	s.id = append(s.id[:0], lo...)
	clear(s.tf)
	for _, rd := range s.readers {
		if rd.cur == nil || !bytes.Equal(rd.cur.ID, s.id) {
			continue
		}
		s.tf[rd.term] += s.q.tfNorm(rd.field, rd.cur.Freq, rd.cur.Norm)
		if err := rd.next(); err != nil {
			return nil, err
		}
	}
	score, matched := s.q.docScore(s.tf)
	s.doc, s.matched = score, matched
	dm := ctx.DocumentMatchPool.Get()
	dm.IndexInternalID = append(dm.IndexInternalID[:0], s.id...)
	dm.Score = score + s.q.bound()*matched
	return dm, nil
}

// Advance skips to the first document at or after id.
func (s *bm25fSearcher) Advance(ctx *search.SearchContext, id bindex.IndexInternalID) (*search.DocumentMatch, error) {
	for _, rd := range s.readers {
		if rd.cur != nil && bytes.Compare(rd.cur.ID, id) < 0 {
			if err := rd.advance(id); err != nil {
				return nil, err
			}
		}
	}
	return s.Next(ctx)
}

// Close closes the readers.
func (s *bm25fSearcher) Close() error {
	var first error
	for _, rd := range s.readers {
		if err := rd.r.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Weight is 1: the query norm of enclosing queries does not apply.
func (s *bm25fSearcher) Weight() float64 { return 1 }

// SetQueryNorm is ignored (see Weight).
func (s *bm25fSearcher) SetQueryNorm(float64) {}

// Count estimates the matches: the longest posting list.
func (s *bm25fSearcher) Count() uint64 {
	var n uint64
	for _, rd := range s.readers {
		n = max(n, rd.r.Count())
	}
	return n
}

// Min is 0: any term matches.
func (s *bm25fSearcher) Min() int { return 0 }

// Size is the memory held, roughly.
func (s *bm25fSearcher) Size() int {
	n := 64 + 8*len(s.tf)
	for _, rd := range s.readers {
		n += 64 + rd.r.Size()
	}
	return n
}

// DocumentMatchPoolSize is 1: one match is handed out at a time.
func (s *bm25fSearcher) DocumentMatchPoolSize() int { return 1 }

// rescored is the exact score of a file found by the searcher.
type rescored struct {
	upper float64 // what the searcher scored it
	exact float64 // document score plus passage score
	at    int     // byte offset in the text where its best passage starts, -1 without one
}

// occurrence is a query term at a position of a file's text.
type occurrence struct {
	pos   uint64
	start uint64 // byte offset
	term  int
}

// phase1 is what the searcher computed of a file: its document score and
// the sum of w_t·idf(t) over its terms.
type phase1 struct {
	doc, matched float64
	known        bool
}

// rescore scores the files ids exactly: it reads, in ID order, the
// postings of the query's terms in those files, with the positions of the
// text, and finds each file's best passage. Files whose document score
// the searcher already gave (known) need only the text's positions. The
// terms are those of the last Searcher on the same reader.
func (q *bm25fQuery) rescore(ctx context.Context, r bindex.IndexReader, ids []bindex.IndexInternalID, known []phase1) ([]rescored, error) {
	out := make([]rescored, len(ids))
	order := make([]int, len(ids))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return bytes.Compare(ids[a], ids[b]) })
	allKnown := len(known) == len(ids)
	for _, k := range known {
		allKnown = allKnown && k.known
	}
	tf := make([][]float64, len(ids)) // per file, per term
	occ := make([][]occurrence, len(ids))
	for i := range tf {
		tf[i] = make([]float64, len(q.terms))
	}
	for ti, t := range q.terms {
		for fi, f := range q.fields {
			vectors := fi == 0 && q.window > 0
			if allKnown && !vectors {
				continue
			}
			tr, err := r.TermFieldReader(ctx, []byte(t.text), f.name, true, true, vectors)
			if err != nil {
				return nil, err
			}
			var buf bindex.TermFieldDoc
			for _, i := range order {
				d, err := tr.Advance(ids[i], buf.Reset())
				if err != nil {
					tr.Close()
					return nil, err
				}
				if d == nil {
					break
				}
				if !bytes.Equal(d.ID, ids[i]) {
					continue
				}
				tf[i][ti] += q.tfNorm(fi, d.Freq, d.Norm)
				if vectors {
					for _, v := range d.Vectors {
						occ[i] = append(occ[i], occurrence{pos: v.Pos, start: v.Start, term: ti})
					}
				}
			}
			tr.Close()
		}
	}
	for i := range ids {
		score, matched := q.docScore(tf[i])
		if allKnown {
			score, matched = known[i].doc, known[i].matched
		}
		p, at := q.bestPassage(occ[i])
		out[i] = rescored{upper: score + q.bound()*matched, exact: score + q.lambda*p, at: at}
	}
	return out, nil
}

// bestPassage returns the best score of a window of q.window positions
// over a file's occurrences of the query's terms, and the byte offset
// where that window's first occurrence starts (-1 with none).
func (q *bm25fQuery) bestPassage(occ []occurrence) (float64, int) {
	if len(occ) == 0 || q.window <= 0 {
		return 0, -1
	}
	slices.SortFunc(occ, func(a, b occurrence) int {
		switch {
		case a.pos < b.pos:
			return -1
		case a.pos > b.pos:
			return 1
		}
		return 0
	})
	n := make([]float64, len(q.terms))
	best, at := 0.0, -1
	lo := 0
	for hi := range occ {
		n[occ[hi].term]++
		for occ[hi].pos-occ[lo].pos >= uint64(q.window) {
			n[occ[lo].term]--
			lo++
		}
		var s float64
		for t, c := range n {
			if c > 0 {
				s += q.terms[t].weight * c * (q.k1p + 1) / (q.k1p + c)
			}
		}
		if s > best {
			best, at = s, int(occ[lo].start)
		}
	}
	return best, at
}
