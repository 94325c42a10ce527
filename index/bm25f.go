package index

import (
	"bytes"
	"context"
	"math"

	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/blevesearch/bleve/v2/search"
	bindex "github.com/blevesearch/bleve_index_api"
)

// bm25fField is a field scored by bm25fQuery with its weight and length
// normalisation.
type bm25fField struct {
	name   string
	weight float64
	b      float64 // 0: no length normalisation, 1: full
}

// bm25fWord is a query word and its weight (an expansion word weighs less).
type bm25fWord struct {
	text   string
	weight float64
}

// bm25fQuery scores the documents holding any of its words by BM25F
// (Robertson, Zaragoza, Taylor 2004, with per-field length normalisation):
// for each analysed term the frequencies in the fields are normalised by
// each field's length, weighted and summed, saturated once, and multiplied
// by the term's idf in the main field:
//
//	score = Σ_t w_t · idf(t) · tf'(t)/(k1 + tf'(t))
//	tf'(t) = Σ_f w_f · tf_f(t) / (1 - b_f + b_f · len_f/refLen)
//
// It replaces the per-word bleve match queries, whose scorer counts idf
// twice (once more through the query norm), takes the square root of term
// frequency, multiplies by the fraction of words matched, and divides field
// lengths by the field's vocabulary size instead of its average length.
// A word found in a name or title field therefore saturates with the same
// word in the text instead of adding a separate, unsaturated score.
type bm25fQuery struct {
	words  []bm25fWord
	fields []bm25fField
	idf    string  // the field whose document frequencies give idf
	k1     float64 // term frequency saturation
	refLen float64 // the length at which a field is not normalised
}

// Ranking parameters of keyword search, chosen on the tldr known-item test
// (index/tldr_test.go; MRR was flat within 0.005 for k1 0.8-1.6 and
// bm25RefLen 45-80). The body is fully length-normalised (b=1): chunks have
// capped lengths, and a short chunk holding a word is more about it than a
// long one (b=0.75 cost 0.02 MRR). bm25RefLen stands for the average body
// length, which bleve does not record (its own BM25 divides by the
// vocabulary size): chunks are capped at 400 words, so a fixed reference
// keeps scores stable as files come and go.
const (
	bm25K1     = 1.2
	bm25RefLen = 60
)

// bm25Fields are the fields a word is scored in: the body (name, title and
// text) with full length normalisation, and the name, title and path with
// the small weights of w and none.
func bm25Fields(w weights) []bm25fField {
	return []bm25fField{
		{name: fieldBody, weight: 1, b: 1},
		{name: fieldName, weight: w.name},
		{name: fieldTitle, weight: w.title},
		{name: fieldPathTxt, weight: w.path},
	}
}

// Searcher opens a reader per term and field and merges them by document.
func (q *bm25fQuery) Searcher(ctx context.Context, r bindex.IndexReader, m mapping.IndexMapping, opts search.SearcherOptions) (search.Searcher, error) {
	an := m.AnalyzerNamed(analyzerName)
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
		return nil, err
	}
	s := &bm25fSearcher{q: q}
	for ti, t := range order {
		var df uint64
		for fi, f := range q.fields {
			if f.weight == 0 {
				continue
			}
			tr, err := r.TermFieldReader(ctx, []byte(t), f.name, true, true, false)
			if err != nil {
				s.Close()
				return nil, err
			}
			if f.name == q.idf {
				df = tr.Count()
			}
			if tr.Count() == 0 {
				tr.Close()
				continue
			}
			s.readers = append(s.readers, &bm25fReader{r: tr, term: ti, field: fi})
		}
		n := float64(df)
		idf := math.Log(1 + (float64(total)-n+0.5)/(n+0.5))
		s.termWeight = append(s.termWeight, weights[t]*idf)
	}
	s.tf = make([]float64, len(order))
	for _, rd := range s.readers {
		if err := rd.next(); err != nil {
			s.Close()
			return nil, err
		}
	}
	return s, nil
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

// bm25fSearcher yields the documents of its readers in ID order.
type bm25fSearcher struct {
	q          *bm25fQuery
	readers    []*bm25fReader
	termWeight []float64 // w_t · idf(t)
	tf         []float64 // scratch: tf'(t) of the current document
	id         bindex.IndexInternalID
}

// Next returns the next document holding any term, scored.
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
		f := s.q.fields[rd.field]
		norm := 1.0
		if f.b > 0 && rd.cur.Norm > 0 {
			length := 1 / (rd.cur.Norm * rd.cur.Norm)
			norm = 1 - f.b + f.b*length/s.q.refLen
		}
		s.tf[rd.term] += f.weight * float64(rd.cur.Freq) / norm
		if err := rd.next(); err != nil {
			return nil, err
		}
	}
	var score float64
	for t, tf := range s.tf {
		if tf > 0 {
			score += s.termWeight[t] * tf / (s.q.k1 + tf)
		}
	}
	dm := ctx.DocumentMatchPool.Get()
	dm.IndexInternalID = append(dm.IndexInternalID[:0], s.id...)
	dm.Score = score
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
	n := 64 + 8*len(s.tf) + 8*len(s.termWeight)
	for _, rd := range s.readers {
		n += 64 + rd.r.Size()
	}
	return n
}

// DocumentMatchPoolSize is 1: one match is handed out at a time.
func (s *bm25fSearcher) DocumentMatchPoolSize() int { return 1 }
