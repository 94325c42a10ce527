package index

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Occur says how a clause takes part in a query.
type Occur int

// Occurrences of a clause.
const (
	Should  Occur = iota // scores when present (the default)
	Must                 // required: +word, a AND b
	MustNot              // excluded: -word, NOT word
)

// Clause is one part of a parsed query: a word, a "quoted phrase", a
// field:value or a parenthesised group.
type Clause struct {
	Occur  Occur
	Field  string // "" for all text fields; name, path, title, content; or a filter field
	Text   string // the word or phrase
	Phrase bool
	Group  []Clause // a parenthesised sub-query (Text is empty)

	weight float64 // boost of an expansion word; 0 means 1
}

// Filter fields of the query language. Filters always restrict; NOT/-
// inverts them.
const (
	filterDir    = "dir"
	filterExt    = "ext"
	filterAfter  = "after"
	filterBefore = "before"
	filterSize   = "size"
)

var textFields = map[string]string{
	"name": fieldName, "path": fieldPathTxt, "title": fieldTitle, "content": fieldBody,
}

var filterFields = map[string]bool{
	filterDir: true, filterExt: true, filterAfter: true, filterBefore: true, filterSize: true,
}

// ParseError reports a query that cannot be understood.
type ParseError struct {
	Pos int // byte offset in the query
	Msg string
}

// Error describes the fault and its position.
func (e *ParseError) Error() string { return fmt.Sprintf("query at %d: %s", e.Pos, e.Msg) }

// qtoken is a lexical token of the query language.
type qtoken struct {
	pos    int
	text   string
	quoted bool // a "phrase" (text without quotes)
	op     byte // '(' ')' or 0
}

func lexQuery(s string) []qtoken {
	var toks []qtoken
	i := 0
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(' || c == ')':
			toks = append(toks, qtoken{pos: i, op: c})
			i++
		case c == '"':
			end := strings.IndexByte(s[i+1:], '"')
			if end < 0 { // an unclosed quote runs to the end
				toks = append(toks, qtoken{pos: i, text: s[i+1:], quoted: true})
				i = len(s)
				continue
			}
			toks = append(toks, qtoken{pos: i, text: s[i+1 : i+1+end], quoted: true})
			i += end + 2
		default:
			start := i
			for i < len(s) && !strings.ContainsRune(" \t\n\r()", rune(s[i])) {
				if s[i] == '"' && i > start && s[i-1] == ':' { // field:"quoted value"
					end := strings.IndexByte(s[i+1:], '"')
					if end < 0 {
						i = len(s)
					} else {
						i += end + 2
					}
					break
				}
				if s[i] == '"' {
					break
				}
				i++
			}
			toks = append(toks, qtoken{pos: start, text: s[start:i]})
		}
	}
	return toks
}

// ParseQuery parses the query language of Search: words (scored, any may
// match), "quoted phrases", AND, OR, NOT (also &&, ||, +word, -word),
// parentheses, field-scoped words (name:, path:, title:, content:) and
// filters dir:D, ext:md,txt, after:DATE, before:DATE and size:>10k (also
// size:<1M, size:1k..1M). Dates are YYYY, YYYY-MM, YYYY-MM-DD, RFC 3339 or
// an age like 7d, 2w, 3m, 1y measured from now.
func ParseQuery(s string, now time.Time) ([]Clause, error) {
	s = strings.ToValidUTF8(s, "\uFFFD")
	p := &qparser{toks: lexQuery(s), now: now}
	cl, err := p.group(0)
	if err != nil {
		return nil, err
	}
	if p.i < len(p.toks) {
		return nil, &ParseError{Pos: p.toks[p.i].pos, Msg: "unmatched )"}
	}
	return cl, nil
}

type qparser struct {
	toks []qtoken
	i    int
	now  time.Time
}

func (p *qparser) group(depth int) ([]Clause, error) {
	if depth > 20 {
		return nil, &ParseError{Pos: p.toks[p.i-1].pos, Msg: "parentheses nested too deep"}
	}
	var out []Clause
	conj := "" // "AND", "OR" or "" between the previous clause and the next
	not := false
	for p.i < len(p.toks) {
		t := p.toks[p.i]
		if t.op == ')' {
			if depth == 0 {
				return nil, &ParseError{Pos: t.pos, Msg: "unmatched )"}
			}
			break
		}
		p.i++
		if !t.quoted && t.op == 0 {
			switch t.text {
			case "AND", "&&":
				conj = "AND"
				continue
			case "OR", "||":
				conj = "OR"
				continue
			case "NOT", "!":
				not = true
				continue
			}
		}
		var c Clause
		if t.op == '(' {
			sub, err := p.group(depth + 1)
			if err != nil {
				return nil, err
			}
			if p.i >= len(p.toks) || p.toks[p.i].op != ')' {
				return nil, &ParseError{Pos: t.pos, Msg: "unclosed ("}
			}
			p.i++
			if len(sub) == 0 {
				conj, not = "", false
				continue
			}
			c = Clause{Group: sub}
		} else {
			var err error
			var ok bool
			if c, ok, err = p.clause(t); err != nil {
				return nil, err
			} else if !ok {
				conj, not = "", false
				continue
			}
		}
		if not {
			c.Occur = MustNot
		}
		if filterFields[c.Field] && c.Occur == Should {
			c.Occur = Must
		}
		if conj == "AND" && len(out) > 0 {
			if prev := &out[len(out)-1]; prev.Occur == Should {
				prev.Occur = Must
			}
			if c.Occur == Should {
				c.Occur = Must
			}
		}
		out = append(out, c)
		conj, not = "", false
	}
	return out, nil
}

// clause reads a word, phrase or field:value token. ok is false for a token
// that carries nothing to search (a lone "-").
func (p *qparser) clause(t qtoken) (c Clause, ok bool, err error) {
	if t.quoted {
		return Clause{Text: t.text, Phrase: true}, strings.TrimSpace(t.text) != "", nil
	}
	text := t.text
	switch {
	case strings.HasPrefix(text, "-") && len(text) > 1:
		c.Occur, text = MustNot, text[1:]
	case strings.HasPrefix(text, "+") && len(text) > 1:
		c.Occur, text = Must, text[1:]
	}
	if f, v, found := strings.Cut(text, ":"); found && v != "" {
		f = strings.ToLower(f)
		if strings.HasPrefix(v, `"`) {
			v = strings.Trim(v, `"`)
			c.Phrase = true
		}
		switch {
		case textFields[f] != "":
			c.Field, c.Text = f, v
			return c, strings.TrimSpace(v) != "", nil
		case filterFields[f]:
			c.Field, c.Text = f, v
			if err := p.checkFilter(f, v, t.pos); err != nil {
				return c, false, err
			}
			return c, true, nil
		}
	}
	if strings.IndexFunc(text, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) < 0 {
		return c, false, nil
	}
	c.Text = text
	return c, true, nil
}

func (p *qparser) checkFilter(f, v string, pos int) error {
	var err error
	switch f {
	case filterAfter, filterBefore:
		_, err = parseDate(v, p.now)
	case filterSize:
		_, _, err = parseSizeRange(v)
	}
	if err != nil {
		return &ParseError{Pos: pos, Msg: fmt.Sprintf("%s: %v", f, err)}
	}
	return nil
}

// parseDate reads an absolute date or an age (7d, 2w, 3m, 1y) before now.
func parseDate(v string, now time.Time) (time.Time, error) {
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04", "2006-01-02", "2006-01", "2006"} {
		if t, err := time.ParseInLocation(layout, v, time.Local); err == nil {
			if t.Year() < 1700 || t.Year() > 2200 { // beyond what the index can store
				return time.Time{}, fmt.Errorf("%q is out of range", v)
			}
			return t, nil
		}
	}
	if len(v) >= 2 {
		n, err := strconv.Atoi(v[:len(v)-1])
		if err == nil && n >= 0 && n < 100000 {
			switch v[len(v)-1] {
			case 'h':
				return now.Add(-time.Duration(n) * time.Hour), nil
			case 'd':
				return now.AddDate(0, 0, -n), nil
			case 'w':
				return now.AddDate(0, 0, -7*n), nil
			case 'm':
				return now.AddDate(0, -n, 0), nil
			case 'y':
				return now.AddDate(-n, 0, 0), nil
			}
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a date (YYYY-MM-DD) or an age (7d)", v)
}

// parseSizeRange reads >N, <N, >=N, <=N, N..M or N (exactly) with k, M, G
// suffixes (powers of 1024). A bound of -1 means open.
func parseSizeRange(v string) (lo, hi int64, err error) {
	lo, hi = -1, -1
	switch {
	case strings.HasPrefix(v, ">="):
		lo, err = parseSize(v[2:])
	case strings.HasPrefix(v, ">"):
		lo, err = parseSize(v[1:])
		lo++
	case strings.HasPrefix(v, "<="):
		hi, err = parseSize(v[2:])
	case strings.HasPrefix(v, "<"):
		hi, err = parseSize(v[1:])
		hi--
	case strings.Contains(v, ".."):
		a, b, _ := strings.Cut(v, "..")
		if lo, err = parseSize(a); err == nil {
			hi, err = parseSize(b)
		}
	default:
		lo, err = parseSize(v)
		hi = lo
	}
	if err == nil && hi >= 0 && lo > hi {
		err = fmt.Errorf("empty size range %q", v)
	}
	return lo, hi, err
}

func parseSize(v string) (int64, error) {
	v = strings.TrimSpace(v)
	mult := int64(1)
	if n := len(v); n > 0 {
		switch unicode.ToLower(rune(v[n-1])) {
		case 'k':
			mult, v = 1<<10, v[:n-1]
		case 'm':
			mult, v = 1<<20, v[:n-1]
		case 'g':
			mult, v = 1<<30, v[:n-1]
		case 'b':
			v = v[:n-1]
		}
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 || f > 1<<50 {
		return 0, fmt.Errorf("%q is not a size (10k, 2M)", v)
	}
	return int64(f * float64(mult)), nil
}
