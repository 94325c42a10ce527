package index

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Chunk is a window of a document's text. Windows overlap so that a phrase
// cut at one boundary is whole in the next chunk.
type Chunk struct {
	Seq   int    // 0-based position in the document
	Line  int    // 1-based line where the chunk starts
	Start int    // byte offset in the document where it starts
	Text  string // the chunk's text, a substring of the document
}

// SplitChunks cuts text into chunks of at most size words, each starting
// overlap words before the previous one ended. A text of at most size words
// is one chunk. Empty text gives no chunks.
func SplitChunks(text string, size, overlap int) []Chunk {
	if size <= 0 {
		size = 1
	}
	if overlap < 0 || overlap >= size {
		overlap = size / 4
	}
	type span struct{ start, end int }
	var words []span
	in := false
	for i, r := range text {
		space := unicode.IsSpace(r)
		switch {
		case !space && !in:
			words = append(words, span{start: i})
			in = true
		case space && in:
			words[len(words)-1].end = i
			in = false
		}
	}
	if in {
		words[len(words)-1].end = len(text)
	}
	if len(words) == 0 {
		return nil
	}
	var chunks []Chunk
	line, lineAt := 1, 0
	for first := 0; ; first += size - overlap {
		last := min(first+size, len(words)) - 1
		start := words[first].start
		line += strings.Count(text[lineAt:start], "\n")
		lineAt = start
		chunks = append(chunks, Chunk{Seq: len(chunks), Line: line, Start: start, Text: text[start:words[last].end]})
		if last == len(words)-1 {
			break
		}
	}
	return chunks
}

// snippetAround returns up to width bytes of text around the byte offset
// at (a third before it), cut at rune boundaries, with whitespace
// collapsed, and the 1-based line where it starts.
func snippetAround(text string, at, width int) (string, int) {
	at = min(max(0, at), len(text))
	start := max(0, at-width/3)
	// Start at the beginning of a line when it is near.
	if nl := strings.LastIndexByte(text[start:at], '\n'); nl >= 0 {
		start += nl + 1
	}
	end := min(len(text), start+width)
	for start > 0 && !utf8.RuneStart(text[start]) {
		start--
	}
	for end < len(text) && !utf8.RuneStart(text[end]) {
		end++
	}
	s := strings.Join(strings.Fields(text[start:end]), " ")
	if start > 0 && text[start-1] != '\n' {
		s = "…" + s
	}
	if end < len(text) {
		s += "…"
	}
	return s, 1 + strings.Count(text[:start], "\n")
}
