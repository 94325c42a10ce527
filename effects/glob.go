package effects

import "strings"

// anyMark stands, in a path pattern, for a part known only at run time: it
// matches any string, slashes included. It cannot occur in a real path.
const anyMark = '\x00'

// globMeta holds the bytes with a meaning in a path pattern.
const globMeta = "*?[\\\x00"

// escapeGlob escapes the glob characters of a literal so it matches only
// itself as a pattern.
func escapeGlob(s string) string {
	if !strings.ContainsAny(s, globMeta) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(globMeta, s[i]) >= 0 {
			if s[i] == anyMark {
				continue
			}
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// literalPrefix returns the part of pattern before its first wildcard,
// unescaped.
func literalPrefix(pattern string) string {
	var b strings.Builder
	for i := 0; i < len(pattern); i++ {
		c := pattern[i]
		switch c {
		case '*', '?', '[', anyMark:
			return b.String()
		case '\\':
			if i+1 < len(pattern) {
				i++
				c = pattern[i]
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// hasWildcard reports whether pattern holds an unescaped wildcard.
func hasWildcard(pattern string) bool {
	for i := 0; i < len(pattern); i++ {
		switch pattern[i] {
		case '*', '?', '[', anyMark:
			return true
		case '\\':
			i++
		}
	}
	return false
}

// matchPath reports whether name matches pattern. In the pattern, * and ?
// match within one path element, [...] is a class ([!...] and [^...]
// negate), a backslash quotes the next byte, ** and anyMark match any
// string including slashes; "**/" also matches the empty string.
func matchPath(pattern, name string) bool {
	if !strings.HasPrefix(name, literalPrefix(pattern)) {
		return false
	}
	if !hasWildcard(pattern) {
		return literalPrefix(pattern) == name
	}
	// Memoised matching: at most len(pattern)*len(name) states, so no
	// pattern can make it take exponential time.
	memo := make([]int8, (len(pattern)+1)*(len(name)+1))
	var m func(p, s int) bool
	m = func(p, s int) bool {
		key := p*(len(name)+1) + s
		if v := memo[key]; v != 0 {
			return v > 0
		}
		res := false
		defer func() {
			if res {
				memo[key] = 1
			} else {
				memo[key] = -1
			}
		}()
		for p < len(pattern) {
			c := pattern[p]
			switch {
			case c == anyMark || (c == '*' && p+1 < len(pattern) && pattern[p+1] == '*'):
				np := p + 1
				if c == '*' {
					np = p + 2
				}
				// "**/" also matches no directory at all.
				if c == '*' && np < len(pattern) && pattern[np] == '/' && m(np+1, s) {
					res = true
					return res
				}
				for i := s; i <= len(name); i++ {
					if m(np, i) {
						res = true
						return res
					}
				}
				return false
			case c == '*':
				for i := s; i <= len(name); i++ {
					if m(p+1, i) {
						res = true
						return res
					}
					if i < len(name) && name[i] == '/' {
						break
					}
				}
				return false
			case c == '?':
				if s >= len(name) || name[s] == '/' {
					return false
				}
				p, s = p+1, s+1
			case c == '[':
				ok, n, valid := matchClass(pattern[p:], name, s)
				if !valid { // a lone [ matches itself
					if s >= len(name) || name[s] != '[' {
						return false
					}
					p, s = p+1, s+1
					continue
				}
				if !ok {
					return false
				}
				p, s = p+n, s+1
			default:
				if c == '\\' && p+1 < len(pattern) {
					p++
					c = pattern[p]
				}
				if s >= len(name) || name[s] != c {
					return false
				}
				p, s = p+1, s+1
			}
		}
		res = s == len(name)
		return res
	}
	return m(0, 0)
}

// matchClass matches the bracket expression at the start of pat against
// name[s]. It returns whether it matched, the length of the expression,
// and whether pat starts with a well-formed expression at all.
func matchClass(pat, name string, s int) (ok bool, n int, valid bool) {
	i := 1
	negate := false
	if i < len(pat) && (pat[i] == '!' || pat[i] == '^') {
		negate = true
		i++
	}
	end := -1
	for j := i; j < len(pat); j++ {
		if pat[j] == '\\' {
			j++
			continue
		}
		if pat[j] == ']' && j > i {
			end = j
			break
		}
	}
	if end < 0 {
		return false, 0, false
	}
	if s >= len(name) || name[s] == '/' {
		return false, end + 1, true
	}
	c := name[s]
	match := false
	for j := i; j < end; j++ {
		lo := pat[j]
		if lo == '\\' && j+1 < end {
			j++
			lo = pat[j]
		}
		hi := lo
		if j+2 < end && pat[j+1] == '-' {
			hi = pat[j+2]
			j += 2
		}
		if lo <= c && c <= hi {
			match = true
		}
	}
	return match != negate, end + 1, true
}
