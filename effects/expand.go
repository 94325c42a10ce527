package effects

import (
	"regexp"
	"strings"

	"mvdan.cc/sh/v3/pattern"
	"mvdan.cc/sh/v3/syntax"
)

// This file follows parameter expansions that change a known value:
// ${f%.jpeg}, ${f##*/}, ${f/old/new}, as rename loops use them. A value
// known exactly (a literal) is changed exactly, as bash would. A value that
// stands for many paths (a glob, a loop variable over one, what find
// found) is changed where the change is sure to fall (a suffix the pattern
// ends with, the last path element); otherwise the result is known only at
// run time, in the directory the change cannot reach.

// trim follows ${v%pat}, ${v%%pat}, ${v#pat} and ${v##pat}.
func (a *analyzer) trim(p *syntax.ParamExp, vals []wordVal) []wordVal {
	pat, ok := a.patternOf(p.Exp.Word)
	if !ok {
		return a.unknownChange(p, vals)
	}
	suffix := p.Exp.Op == syntax.RemSmallSuffix || p.Exp.Op == syntax.RemLargeSuffix
	longest := p.Exp.Op == syntax.RemLargeSuffix || p.Exp.Op == syntax.RemLargePrefix
	out := make([]wordVal, 0, len(vals))
	for _, v := range vals {
		switch {
		case v.lit && !v.glob:
			t, ok := trimExact(v.text, pat, suffix, longest)
			if !ok {
				return a.unknownChange(p, vals)
			}
			n := v
			n.text, n.pattern = t, escapeGlob(t)
			out = append(out, n)
		case !pattern.HasMeta(pat, 0):
			// A plain suffix or prefix: gone where the value has it.
			lit := unescapePattern(pat)
			n := v
			switch {
			case suffix && strings.HasSuffix(v.text, lit) && strings.HasSuffix(v.pattern, escapeGlob(lit)):
				n.text, n.pattern = strings.TrimSuffix(v.text, lit), strings.TrimSuffix(v.pattern, escapeGlob(lit))
			case !suffix && strings.HasPrefix(v.text, lit) && strings.HasPrefix(v.pattern, escapeGlob(lit)):
				n.text, n.pattern = strings.TrimPrefix(v.text, lit), strings.TrimPrefix(v.pattern, escapeGlob(lit))
			case !suffix && hasWildcard(v.pattern[:min(len(v.pattern), len(lit))]):
				return a.unknownChange(p, vals)
			}
			out = append(out, n)
		case suffix && !longest && pat == "/*":
			// ${f%/*}: the directory.
			i, j := strings.LastIndexByte(v.text, '/'), strings.LastIndexByte(v.pattern, '/')
			if i < 0 || j < 0 {
				return a.unknownChange(p, vals)
			}
			n := v
			n.text, n.pattern = v.text[:i], v.pattern[:j]
			out = append(out, n)
		case !suffix && longest && pat == "*/":
			// ${f##*/}: the last element.
			i, j := strings.LastIndexByte(v.text, '/'), strings.LastIndexByte(v.pattern, '/')
			if i < 0 || j < 0 {
				return a.unknownChange(p, vals)
			}
			n := v
			n.text, n.pattern = v.text[i+1:], v.pattern[j+1:]
			out = append(out, n)
		case suffix && !longest && pat == ".*":
			// ${f%.*}: the name without its extension, when the last
			// element shows one.
			last := v.pattern[strings.LastIndexByte(v.pattern, '/')+1:]
			k := strings.LastIndexByte(last, '.')
			if k < 0 || hasWildcard(last[k:]) || !strings.Contains(v.text[strings.LastIndexByte(v.text, '/')+1:], last[k:]) {
				return a.unknownChange(p, vals)
			}
			n := v
			n.pattern = strings.TrimSuffix(v.pattern, last[k:])
			n.text = strings.TrimSuffix(v.text, unescapePattern(last[k:]))
			out = append(out, n)
		default:
			return a.unknownChange(p, vals)
		}
	}
	return out
}

// replace follows ${v/old/new} and ${v//old/new}.
func (a *analyzer) replace(p *syntax.ParamExp, vals []wordVal) []wordVal {
	pat, ok := a.patternOf(p.Repl.Orig)
	if !ok || pat == "" {
		return a.unknownChange(p, vals)
	}
	with := ""
	if p.Repl.With != nil {
		w := a.wordVals(p.Repl.With)
		if len(w) != 1 || !w[0].lit {
			return a.unknownChange(p, vals)
		}
		with = w[0].text
	}
	out := make([]wordVal, 0, len(vals))
	for _, v := range vals {
		switch {
		case v.lit && !v.glob:
			t, ok := replaceExact(v.text, pat, with, p.Repl.All)
			if !ok {
				return a.unknownChange(p, vals)
			}
			n := v
			n.text, n.pattern = t, escapeGlob(t)
			out = append(out, n)
		case !pattern.HasMeta(pat, 0) && !strings.Contains(pat, "/") && !strings.Contains(with, "/"):
			// A plain string: where the directory cannot hold it, the
			// change falls in the last element.
			old := unescapePattern(pat)
			i, j := strings.LastIndexByte(v.text, '/'), strings.LastIndexByte(v.pattern, '/')
			if i < 0 || j < 0 || strings.Contains(v.text[:i+1], old) || hasWildcard(v.pattern[:j]) && !v.each {
				return a.unknownChange(p, vals)
			}
			last, lastPat := v.text[i+1:], v.pattern[j+1:]
			n := v
			switch {
			case strings.Contains(lastPat, escapeGlob(old)) && !hasWildcard(lastPat):
				if p.Repl.All {
					last, lastPat = strings.ReplaceAll(last, old, with), strings.ReplaceAll(lastPat, escapeGlob(old), escapeGlob(with))
				} else {
					last, lastPat = strings.Replace(last, old, with, 1), strings.Replace(lastPat, escapeGlob(old), escapeGlob(with), 1)
				}
			case strings.Contains(lastPat, escapeGlob(old)) && !p.Repl.All:
				// *special*: the first "special" may be in a wildcard's
				// part; the name is then anything.
				last, lastPat = strings.Replace(last, old, with, 1), "*"
			default:
				last, lastPat = a.source(p), "*"
				n.dynamic, n.lit = true, false
			}
			n.text, n.pattern = v.text[:i+1]+last, v.pattern[:j+1]+lastPat
			n.glob = n.glob || hasWildcard(lastPat)
			out = append(out, n)
		default:
			return a.unknownChange(p, vals)
		}
	}
	return out
}

// unknownChange is the value of an expansion the analysis cannot follow:
// known only at run time, as written.
func (a *analyzer) unknownChange(p *syntax.ParamExp, vals []wordVal) []wordVal {
	each := false
	for _, v := range vals {
		each = each || v.each
	}
	return []wordVal{{text: a.source(p), pattern: string(anyMark), dynamic: true, each: each}}
}

// patternOf returns a word as a shell pattern (quoted characters escaped),
// if it is known.
func (a *analyzer) patternOf(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", true
	}
	vals := a.wordVals(w)
	if len(vals) != 1 || vals[0].dynamic || strings.ContainsRune(vals[0].pattern, anyMark) {
		return "", false
	}
	return vals[0].pattern, true
}

// compilePattern compiles a shell pattern to match a whole string, with *
// matching slashes, as in parameter expansions.
func compilePattern(pat string) (*regexp.Regexp, bool) {
	expr, err := pattern.Regexp(pat, pattern.EntireString|pattern.NoGlobStar)
	if err != nil {
		return nil, false
	}
	re, err := regexp.Compile(expr)
	return re, err == nil
}

// trimExact removes from s the shortest or longest suffix or prefix that
// pat matches, as bash does.
func trimExact(s, pat string, suffix, longest bool) (string, bool) {
	re, ok := compilePattern(pat)
	if !ok {
		return "", false
	}
	n := len(s)
	for k := 0; k <= n; k++ {
		i := k
		if longest {
			i = n - k
		}
		if suffix {
			if re.MatchString(s[n-i:]) {
				return s[:n-i], true
			}
		} else if re.MatchString(s[:i]) {
			return s[i:], true
		}
	}
	return s, true
}

// replaceExact replaces the first (or every) longest match of pat in s
// with with, as bash does.
func replaceExact(s, pat, with string, all bool) (string, bool) {
	re, ok := compilePattern(pat)
	if !ok {
		return "", false
	}
	var b strings.Builder
	done := false
	for i := 0; i < len(s); {
		if !done {
			j := len(s)
			for ; j > i && !re.MatchString(s[i:j]); j-- {
			}
			if j > i {
				b.WriteString(with)
				i, done = j, !all
				continue
			}
		}
		b.WriteByte(s[i])
		i++
	}
	return b.String(), true
}

// unescapePattern turns a pattern without wildcards into the text it
// matches.
func unescapePattern(p string) string {
	if !strings.Contains(p, `\`) {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] == '\\' && i+1 < len(p) {
			i++
		}
		b.WriteByte(p[i])
	}
	return b.String()
}
