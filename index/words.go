package index

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/analysis/lang/en"
)

// stopWords are the English stop words the analyzer drops, lower case.
type stopWords map[string]bool

// newStopWords reads bleve's English stop list (a word per line, | starts a
// comment).
func newStopWords() stopWords {
	m := stopWords{}
	for _, line := range strings.Split(string(en.EnglishStopWords), "\n") {
		line, _, _ = strings.Cut(line, "|")
		for _, w := range strings.Fields(line) {
			m[w] = true
		}
	}
	return m
}

// countWords counts the words of s the analyzer keeps, near enough for
// average field lengths: runs of letters and digits (dots and underscores
// split them, as the analyzer's char filter does) that are not stop words.
// It is much cheaper than analysing the text a second time.
func (sw stopWords) countWords(s string) int64 {
	var n int64
	sw.words(s, func(_, _ int, keep bool) bool {
		if keep {
			n++
		}
		return true
	})
	return n
}

// prefixWords returns the start of s holding its first n kept words.
func (sw stopWords) prefixWords(s string, n int) string {
	end := len(s)
	count := 0
	sw.words(s, func(_, e int, keep bool) bool {
		if keep {
			count++
			if count == n {
				end = e
				return false
			}
		}
		return true
	})
	return s[:end]
}

// words calls f with the byte span of each word of s and whether the
// analyzer would keep it, until f returns false.
func (sw stopWords) words(s string, f func(start, end int, keep bool) bool) {
	var buf [16]byte
	start := -1
	emit := func(end int) bool {
		w := s[start:end]
		keep := true
		if len(w) <= len(buf) {
			b := buf[:0]
			ascii := true
			for i := 0; i < len(w); i++ {
				c := w[i]
				if c >= utf8.RuneSelf {
					ascii = false
					break
				}
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				b = append(b, c)
			}
			keep = !ascii || !sw[string(b)]
		}
		return f(start, end, keep)
	}
	for i, r := range s {
		word := r == '\'' && start >= 0 || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
		switch {
		case word && start < 0:
			start = i
		case !word && start >= 0:
			if !emit(i) {
				return
			}
			start = -1
		}
	}
	if start >= 0 {
		emit(len(s))
	}
}
