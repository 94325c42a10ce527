package index

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"

	bindex "github.com/blevesearch/bleve_index_api"
)

// TestBM25FRanking checks the properties the keyword ranking is built on:
// files are ranked as files, by a whole-file score and their best passage.
func TestBM25FRanking(t *testing.T) {
	ctx := context.Background()
	filler := func(n int) string { return strings.Repeat("plain filler words about nothing much\n", n) }
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		// A long document about the query, and a short one that
		// mentions it once.
		"guide.txt":   "Sourdough guide\n\n" + strings.Repeat("Feed the sourdough starter, then bake the sourdough loaf. "+filler(3), 30),
		"mention.txt": "Shopping: milk, eggs, apples, cheese, butter, coffee, rice, pasta, a sourdough loaf, tomatoes, onions, garlic, lemons, pears, soap.\n",
		// The same words, together or far apart, in files of one length.
		"together.txt": filler(20) + "the okapi grazes by the river\n" + filler(20),
		"apart.txt":    "the okapi\n" + filler(40) + "grazes by the river\n",
		// A short file with the words together, and a long one with
		// them scattered: the short one is not drowned.
		"short.txt":     "the quokka smiles\n",
		"scattered.txt": "quokka\n" + filler(200) + "smiles\n" + filler(200),
		// The lead says what a document is about.
		"lead.txt": "Notes on the narwhal\n\n" + filler(60),
		"tail.txt": filler(60) + "and a narwhal\n",
		// A rare word counts more than common ones.
		"rare.txt":   "a wombat and some plain words\n",
		"common.txt": "plain plain words words\n",
		// A file's name adds to its text.
		"capybara.txt": "a large rodent of the wetlands\n",
		"rodent.txt":   "a large rodent of the marshes\n",
	})
	ix := openTest(t)
	if _, err := ix.Add(ctx, dir); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, query string
		want        []string // the first hits, in order
	}{
		{"a long document about the query first", "sourdough loaf", []string{"guide.txt", "mention.txt"}},
		{"words together before words apart", "okapi grazes", []string{"together.txt", "apart.txt"}},
		{"a short file is not drowned", "quokka smiles", []string{"short.txt", "scattered.txt"}},
		{"the lead counts", "narwhal", []string{"lead.txt", "tail.txt"}},
		{"rare word counts more", "wombat plain words", []string{"rare.txt"}},
		{"name adds to the text", "capybara rodent", []string{"capybara.txt", "rodent.txt"}},
		{"required word", "+wombat plain", []string{"rare.txt"}},
		{"stop words alone", "the of", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := ix.Search(ctx, tt.query, SearchOptions{Mode: Keyword})
			if err != nil {
				t.Fatal(err)
			}
			got := names(res.Hits)
			if len(got) > len(tt.want) {
				got = got[:len(tt.want)]
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Search(%q) = %v, want first %v", tt.query, names(res.Hits), tt.want)
			}
		})
	}
}

// TestRescoreMatchesSearcher: the exact score of a file never exceeds the
// bound the searcher gave it, so that rankFiles can stop early; and the
// ranking does not depend on how many files a page rescores.
func TestRescoreMatchesSearcher(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	files := map[string]string{}
	words := strings.Fields("alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu")
	for i := range 60 {
		var b strings.Builder
		for j := range 30 + i*7 {
			b.WriteString(words[(i*j+j/3)%len(words)])
			b.WriteByte(' ')
		}
		files["f"+strings.Repeat("x", i%5)+string(rune('a'+i%26))+strings.Repeat("y", i/26)+".txt"] = b.String()
	}
	writeFiles(t, dir, files)
	ix := openTest(t)
	if _, err := ix.Add(ctx, dir); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"alpha", "gamma theta", "beta mu kappa", "iota iota delta"} {
		all, err := ix.Search(ctx, q, SearchOptions{Mode: Keyword, N: 60, NoSnippets: true})
		if err != nil {
			t.Fatal(err)
		}
		top, err := ix.Search(ctx, q, SearchOptions{Mode: Keyword, N: 3, NoSnippets: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(top.Hits) != 3 || !slices.Equal(names(top.Hits), names(all.Hits[:3])) {
			t.Errorf("%q: top 3 %v, but the first 3 of all are %v", q, names(top.Hits), names(all.Hits[:3]))
		}
		for i := 1; i < len(all.Hits); i++ {
			if all.Hits[i].Score > all.Hits[i-1].Score {
				t.Errorf("%q: hits out of order at %d: %v", q, i, all.Hits)
				break
			}
		}
	}
}

// TestPassageBound: the searcher's bound is never below a file's exact
// score, and rescoring without the searcher's document scores gives the
// same bound: what rankFiles relies on to stop.
func TestPassageBound(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"a.txt": "river otter river otter river otter\n",
		"b.txt": "the otter\n" + strings.Repeat("lorem ipsum dolor sit amet\n", 50) + "the river\n",
		"c.md":  "# River\n\n## Otters\n\nAn otter swims in the river, and another otter follows.\n",
		"d.txt": "river\n",
	})
	ix := openTest(t)
	if _, err := ix.Add(ctx, dir); err != nil {
		t.Fatal(err)
	}
	adv, err := ix.text.Advanced()
	if err != nil {
		t.Fatal(err)
	}
	r, err := adv.Reader()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	q := newBM25FQuery([]bm25fWord{{"river", 1}, {"otter", 1}}, ix.lens)
	docs, err := topDocs(ctx, r, ix.text.Mapping(), q, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 4 {
		t.Fatalf("found %d files, want 4", len(docs))
	}
	ids := make([]bindex.IndexInternalID, len(docs))
	known := make([]phase1, len(docs))
	for i, d := range docs {
		ids[i], known[i] = d.internal, d.phase1
	}
	fast, err := q.rescore(ctx, r, ids, known)
	if err != nil {
		t.Fatal(err)
	}
	full, err := q.rescore(ctx, r, ids, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range docs {
		if math.Abs(fast[i].upper-d.score) > 1e-9 || math.Abs(full[i].upper-d.score) > 1e-9 {
			t.Errorf("doc %d: searcher bound %v, rescored bounds %v and %v", i, d.score, fast[i].upper, full[i].upper)
		}
		if fast[i].exact > d.score+1e-9 || math.Abs(fast[i].exact-full[i].exact) > 1e-9 {
			t.Errorf("doc %d: exact %v (full %v) above the bound %v", i, fast[i].exact, full[i].exact, d.score)
		}
	}
}
