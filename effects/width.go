package effects

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// ellipsis marks text cut to fit a width.
const ellipsis = "…"

// runeWidth is the number of terminal columns r takes: 0 for combining
// marks, 2 for East Asian wide and fullwidth runes and most emoji, else 1.
// It is meant for text that has been escaped, so it has no controls.
func runeWidth(r rune) int {
	switch {
	case r < 0x300:
		return 1
	case unicode.In(r, unicode.Mn, unicode.Me):
		return 0
	case r >= 0x1100 && r <= 0x115f,
		r >= 0x2e80 && r <= 0x303e,
		r >= 0x3041 && r <= 0x33ff,
		r >= 0x3400 && r <= 0x4dbf,
		r >= 0x4e00 && r <= 0x9fff,
		r >= 0xa000 && r <= 0xa4cf,
		r >= 0xac00 && r <= 0xd7a3,
		r >= 0xf900 && r <= 0xfaff,
		r >= 0xfe30 && r <= 0xfe4f,
		r >= 0xff00 && r <= 0xff60,
		r >= 0xffe0 && r <= 0xffe6,
		r >= 0x1f300 && r <= 0x1f64f,
		r >= 0x1f900 && r <= 0x1f9ff,
		r >= 0x20000 && r <= 0x3fffd:
		return 2
	}
	return 1
}

// displayWidth is the number of terminal columns s takes.
func displayWidth(s string) int {
	n := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		n += runeWidth(r)
		i += size
	}
	return n
}

// truncateEnd cuts s to at most w columns, ending it with an ellipsis when
// something was cut. A w below 1 means no limit.
func truncateEnd(s string, w int) string {
	if w < 1 || displayWidth(s) <= w {
		return s
	}
	var b strings.Builder
	col := 0
	for _, r := range s {
		rw := runeWidth(r)
		if col+rw > w-1 {
			break
		}
		b.WriteRune(r)
		col += rw
	}
	b.WriteString(ellipsis)
	return b.String()
}

// truncateMiddle cuts s to at most w columns by replacing its middle with
// an ellipsis, so both the start and the end (a file's extension) stay.
func truncateMiddle(s string, w int) string {
	if w < 1 || displayWidth(s) <= w {
		return s
	}
	if w < 2 {
		return ellipsis
	}
	runes := []rune(s)
	var head, tail []rune
	col := 0
	for i := len(runes) - 1; i >= 0; i-- {
		rw := runeWidth(runes[i])
		if col+rw > (w-1)/2 {
			break
		}
		tail = append(tail, runes[i])
		col += rw
	}
	keepHead := w - 1 - col
	col = 0
	for _, r := range runes {
		rw := runeWidth(r)
		if col+rw > keepHead {
			break
		}
		head = append(head, r)
		col += rw
	}
	for i, j := 0, len(tail)-1; i < j; i, j = i+1, j-1 {
		tail[i], tail[j] = tail[j], tail[i]
	}
	return string(head) + ellipsis + string(tail)
}
