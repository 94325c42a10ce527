package scripttest

import "strings"

// shellQuote quotes s as one bash word that reads back byte for byte:
// bare when it is plainly safe, in single quotes when it holds only
// printable ASCII, else in $'...' with every other byte as \xHH (never
// \u, whose meaning depends on the locale).
func shellQuote(s string) string {
	if s == "" {
		return "''"
	}
	bare, printable := true, true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c < 0x20 || c >= 0x7f:
			printable, bare = false, false
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', strings.IndexByte("_-./+,:@%=^", c) >= 0:
		default:
			bare = false
		}
	}
	if bare && s[0] != '-' && s[0] != '=' {
		return s
	}
	if printable {
		return singleQuote(s)
	}
	var b strings.Builder
	b.WriteString("$'")
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c >= 0x20 && c < 0x7f:
			b.WriteByte(c)
		default:
			const hex = "0123456789abcdef"
			b.WriteString(`\x`)
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// singleQuote quotes s in single quotes, which keep every byte but NUL.
func singleQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
