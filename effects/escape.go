package effects

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape returns s with everything that could hide or spoof text on a
// terminal made visible: C0 and C1 control characters (and with them every
// ANSI CSI and OSC escape sequence, which start with ESC or a C1 control),
// DEL, bidi overrides, embeddings, isolates and marks, zero-width and other
// invisible format characters, line and paragraph separators, spaces other
// than U+0020, and invalid UTF-8.
//
// Escapes use bash's $'...' notation: \n, \t, \r, \\ and \xHH for bytes below
// 0x80 and for invalid UTF-8, \uHHHH and \UHHHHHHHH for runes. A backslash is
// doubled, so the result is unambiguous: distinct inputs give distinct
// outputs. Printable text, including non-ASCII letters, is left as is. When
// nothing needs escaping Escape returns s without allocating.
//
// Use Escape for one-line items such as file names; use EscapeText for
// multi-line text such as scripts and command output.
func Escape(s string) string { return escape(s, false) }

// EscapeText is Escape for multi-line text such as a script or a command's
// output: a newline stays a real line break and a backslash is left alone,
// so a script reads as written; everything else Escape makes visible is
// made visible here too, including tabs and carriage returns.
func EscapeText(s string) string { return escape(s, true) }

// Quote returns s as one bash word that reads back as s, for showing paths
// in summaries: bare when s holds only characters that are safe in a shell
// word, in single quotes when it holds spaces or shell syntax, and in bash's
// $'...' form with escapes (see Escape) when it holds anything invisible or
// invalid. The result never contains a control character.
func Quote(s string) string {
	if s == "" {
		return "''"
	}
	bare := true
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return ansiCQuote(s)
			}
			if !isSafeWordByte(c) || (i == 0 && c == '~') {
				bare = false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || !visible(r) {
			return ansiCQuote(s)
		}
		i += size
	}
	if bare {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// isSafeWordByte reports whether the ASCII byte c needs no quoting in a
// bash word.
func isSafeWordByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("_-./+,:@%=^~", c) >= 0
}

// ansiCQuote quotes s in bash's $'...' form.
func ansiCQuote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString("$'")
	for i := 0; i < len(s); {
		c := s[i]
		if c == '\'' {
			b.WriteString(`\'`)
			i++
			continue
		}
		i += escapeOne(&b, s[i:], false)
	}
	b.WriteByte('\'')
	return b.String()
}

// escape implements Escape (text false) and EscapeText (text true).
func escape(s string, text bool) string {
	first := firstUnsafe(s, text)
	if first < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:first])
	for i := first; i < len(s); {
		i += escapeOne(&b, s[i:], text)
	}
	return b.String()
}

// firstUnsafe returns the index of the first byte of s that escape would
// change, or -1.
func firstUnsafe(s string, text bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f || (c == '\\' && !text) {
				if !(text && c == '\n') {
					return i
				}
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || !visible(r) {
			return i
		}
		i += size
	}
	return -1
}

const hexDigits = "0123456789abcdef"

// escapeOne writes the first character of s, escaped if need be, and
// returns how many bytes it consumed.
func escapeOne(b *strings.Builder, s string, text bool) int {
	c := s[0]
	if c < utf8.RuneSelf {
		switch {
		case c == '\n' && text:
			b.WriteByte('\n')
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\t':
			b.WriteString(`\t`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\\' && !text:
			b.WriteString(`\\`)
		case c < 0x20 || c == 0x7f:
			b.WriteString(`\x`)
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xf])
		default:
			b.WriteByte(c)
		}
		return 1
	}
	r, size := utf8.DecodeRuneInString(s)
	switch {
	case r == utf8.RuneError && size == 1:
		b.WriteString(`\x`)
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&0xf])
	case visible(r):
		b.WriteString(s[:size])
	case r <= 0xffff:
		b.WriteString(`\u`)
		writeHex(b, uint32(r), 4)
	default:
		b.WriteString(`\U`)
		writeHex(b, uint32(r), 8)
	}
	return size
}

func writeHex(b *strings.Builder, v uint32, digits int) {
	for shift := 4 * (digits - 1); shift >= 0; shift -= 4 {
		b.WriteByte(hexDigits[(v>>uint(shift))&0xf])
	}
}

// visible reports whether a non-ASCII rune may be shown as itself. Besides
// everything unicode.IsPrint rejects (controls, format characters such as
// the bidi controls and zero-width characters, separators other than
// U+0020, private use, surrogates, unassigned code points) it rejects a few
// printable runes that render as blank space and so can disguise a name.
func visible(r rune) bool {
	switch r {
	case 0x034f, // combining grapheme joiner
		0x115f, 0x1160, 0x3164, 0xffa0, // hangul fillers
		0x2800,                         // braille pattern blank
		0x180b, 0x180c, 0x180d, 0x180f: // mongolian variation selectors
		return false
	}
	return unicode.IsPrint(r)
}

// WriteJSON writes v to w as JSON, indented when indent is set, with a
// final newline and with what EscapeJSON escapes escaped: C1 controls,
// bidi overrides, embeddings, isolates and marks, and every other rune
// that would hide or spoof text on a terminal, come out as \uXXXX, which
// reads back as the same string. HTML's characters are not escaped:
// scripts read as written (> stays >, not \u003e). It is the one way nash
// prints JSON.
func WriteJSON(w io.Writer, v any, indent bool) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if indent {
		enc.SetIndent("", "  ")
	}
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(EscapeJSON(buf.Bytes()))
	return err
}

// EscapeJSON makes JSON text safe to print on a terminal: every rune that
// Escape would make visible and that JSON encoders leave raw (bidi
// controls, zero-width and other invisible characters) is rewritten as a
// \uXXXX escape, which decodes to the same string. Control characters are
// already escaped by encoding/json. b must be valid JSON.
func EscapeJSON(b []byte) []byte {
	s := string(b)
	first := -1
	for i, r := range s {
		if r >= utf8.RuneSelf && !visible(r) {
			first = i
			break
		}
	}
	if first < 0 {
		return b
	}
	var out strings.Builder
	out.Grow(len(s) + 16)
	out.WriteString(s[:first])
	for _, r := range s[first:] {
		if r < utf8.RuneSelf || visible(r) {
			out.WriteRune(r)
			continue
		}
		if r > 0xffff {
			r -= 0x10000
			out.WriteString(`\u`)
			writeHex(&out, uint32(0xd800+(r>>10)), 4)
			out.WriteString(`\u`)
			writeHex(&out, uint32(0xdc00+(r&0x3ff)), 4)
			continue
		}
		out.WriteString(`\u`)
		writeHex(&out, uint32(r), 4)
	}
	return []byte(out.String())
}
