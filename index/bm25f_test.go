package index

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// TestBM25FRanking checks the properties the keyword ranking is built on.
func TestBM25FRanking(t *testing.T) {
	ctx := context.Background()
	filler := strings.Repeat("plain filler words about nothing much ", 40)
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"short.txt":    "an okapi grazes\n",
		"long.txt":     "an okapi grazes\n" + filler,
		"both.txt":     "the quokka and the wombat share a field near plain words\n",
		"one.txt":      "quokka quokka quokka quokka quokka quokka\n",
		"rare.txt":     "a narwhal and some plain words\n",
		"common.txt":   "plain plain words words\n",
		"capybara.txt": "a large rodent of the wetlands\n",
		"other.txt":    "the capybara is a large rodent of the wetlands\n",
	})
	ix := openTest(t)
	if _, err := ix.Add(ctx, dir); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, query string
		want        []string // the first hits, in order
	}{
		{"short chunk first", "okapi grazes", []string{"short.txt", "long.txt"}},
		{"more words first", "quokka wombat", []string{"both.txt", "one.txt"}},
		{"rare word counts more", "narwhal plain words", []string{"rare.txt", "common.txt"}},
		{"name adds to the text", "capybara rodent", []string{"capybara.txt", "other.txt"}},
		{"required word", "+wombat quokka", []string{"both.txt"}},
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
