package evalharness

import (
	"cmp"
	"math"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// The similar judge's thresholds. Both are "a majority": a line matches
// another when more than half of the lighter line's weight is found in the
// other, and two outputs are similar when more than half of each output's
// weight lies in matched lines. Half is the point past which an output is
// more about the other's facts than about anything else; it is not tuned
// per task. Measured on InterCode-ALFA (see TestReplayGold2 and
// TestReplayWrong), nearby values change the scores by a task or two.
const (
	lineThreshold     = 0.5 // strictly more than this
	coverageThreshold = 0.5 // strictly more than this, on both sides
)

// maxPosting: a token on more lines than this of one output (a user name
// in ls -l, "install" in dpkg's list) identifies no record, so lines that
// share only such tokens are not compared. It keeps the comparison of two
// large outputs near linear; such tokens weigh almost nothing anyway.
const maxPosting = 64

// wordRE finds the words of a line: runs of letters, digits and the
// punctuation found inside names, numbers and paths.
var wordRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[A-Za-z0-9_.+\-@~#%/]+`) })

// pieceRE splits a word that is not an absolute path at its slashes.
var pieceRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[A-Za-z0-9_.+\-@~#%]+`) })

// lineTokens returns the tokens of one line of output, lower-cased: an
// absolute path is one token (cleaned, so /a//b/ and /a/b are the same);
// other words lose leading and trailing dots and dashes, and are split at
// slashes (adduser/stable, 10/20). Punctuation between words (quotes,
// colons, commas, brackets, =) separates tokens, so 'x' and x, path:line
// and path, uid=0(root) and uid 0 root compare alike.
func lineTokens(line string) []string {
	var out []string
	for _, w := range wordRE().FindAllString(strings.ToLower(line), -1) {
		if strings.HasPrefix(w, "/") {
			if p := path.Clean(w); p != "/" {
				out = append(out, p)
			}
			continue
		}
		for _, p := range pieceRE().FindAllString(w, -1) {
			if p = strings.Trim(p, ".-"); p != "" {
				out = append(out, p)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// isPath reports whether a token is an absolute path.
func isPath(t string) bool { return strings.HasPrefix(t, "/") }

// record is one non-empty line of an output as the similar judge sees it.
type record struct {
	text   string
	tokens []string            // sorted, distinct
	set    map[string]bool     // tokens
	bases  map[string]bool     // base names of the line's paths
	paths  []string            // the line's absolute paths
	weight float64             // the sum of its tokens' weights
	keys   map[string]struct{} // tokens and base names: what two comparable lines share
}

// records splits normalised output into records, dropping lines without
// tokens (blank lines, rules of dashes): they state nothing.
func records(s string) []*record {
	var out []*record
	for _, l := range strings.Split(s, "\n") {
		toks := lineTokens(l)
		if len(toks) == 0 {
			continue
		}
		r := &record{text: strings.TrimSpace(l), tokens: toks, set: map[string]bool{}, bases: map[string]bool{}, keys: map[string]struct{}{}}
		for _, t := range toks {
			r.set[t] = true
			r.keys[t] = struct{}{}
			if isPath(t) {
				r.paths = append(r.paths, t)
				b := path.Base(t)
				r.bases[b] = true
				r.keys[b] = struct{}{}
			}
		}
		out = append(out, r)
	}
	return out
}

// found reports whether token t of one line is stated by line o: o has
// the token, or t is a path whose base name o names, or t is a name that
// is the base name of one of o's paths (ls prints a.txt, find
// /testbed/a.txt).
func found(t string, o *record) bool {
	if o.set[t] {
		return true
	}
	if isPath(t) {
		return o.set[path.Base(t)]
	}
	return o.bases[t]
}

// pathsAgree: two lines that both name paths are about the same files
// only if every path of one of them is named by the other. Without this
// rule, two ls -l lines of different files (same owner, size, date) would
// match on their shared columns.
func pathsAgree(x, y *record) bool {
	if len(x.paths) == 0 || len(y.paths) == 0 {
		return true
	}
	all := func(a, b *record) bool {
		for _, p := range a.paths {
			if !found(p, b) {
				return false
			}
		}
		return true
	}
	return all(x, y) || all(y, x)
}

// outputSimilarity compares two normalised outputs and returns the share
// of each one's weight that lies in lines matched with the other (1 when
// both have no tokens at all and are equal).
//
// The outputs are read as lists of records, one a line, in any order
// (find, du and ls -U list in no set order; sort before or after is a
// detail). Each token of a line weighs like an inverse document
// frequency, log(1 + N/df): df is the number of lines holding the token in
// the output where it is most frequent, N the larger output's line count.
// A column repeated on every line (owner, date, "install") weighs little;
// a name found on one line weighs most. Single-line outputs weigh all their
// tokens alike.
//
// A line matches another when the tokens of the lighter one, by weight,
// are more than lineThreshold found in the heavier, and their paths agree
// (pathsAgree). This lets a record carry more or fewer columns (ls and ls
// -l, md5sum with and without the name, grep -l and grep, uname -r within
// uname -a) but not name another file. Lines are paired greedily, best
// first, each used once, so ten identical lines do not match one.
func outputSimilarity(a, b string) (float64, float64) {
	ra, rb := records(a), records(b)
	switch {
	case len(ra) == 0 && len(rb) == 0:
		if a == b {
			return 1, 1
		}
		return 0, 0
	case len(ra) == 0 || len(rb) == 0:
		return 0, 0
	}
	dfa, dfb := docFreq(ra), docFreq(rb)
	n := float64(max(len(ra), len(rb)))
	weight := func(t string) float64 {
		return math.Log(1 + n/float64(max(dfa[t], dfb[t], 1)))
	}
	total := func(rs []*record) float64 {
		var s float64
		for _, r := range rs {
			r.weight = 0
			for _, t := range r.tokens {
				r.weight += weight(t)
			}
			s += r.weight
		}
		return s
	}
	ta, tb := total(ra), total(rb)

	usedA, usedB := make([]bool, len(ra)), make([]bool, len(rb))
	var ma, mb float64
	// Identical lines first: cheap, and they need no index.
	byText := map[string][]int{}
	for j, r := range rb {
		byText[r.text] = append(byText[r.text], j)
	}
	for i, r := range ra {
		if js := byText[r.text]; len(js) > 0 {
			j := js[0]
			byText[r.text] = js[1:]
			usedA[i], usedB[j] = true, true
			ma += r.weight
			mb += rb[j].weight
		}
	}
	// Then the best remaining pairs, found through the keys they share.
	index := map[string][]int{}
	for j, r := range rb {
		if usedB[j] {
			continue
		}
		for k := range r.keys {
			index[k] = append(index[k], j)
		}
	}
	type pair struct {
		s    float64
		i, j int
	}
	var pairs []pair
	seen := map[int]bool{}
	for i, x := range ra {
		if usedA[i] {
			continue
		}
		clear(seen)
		for k := range x.keys {
			js := index[k]
			if len(js) > maxPosting {
				continue
			}
			for _, j := range js {
				if seen[j] {
					continue
				}
				seen[j] = true
				y := rb[j]
				if !pathsAgree(x, y) {
					continue
				}
				light, heavy := x, y
				if y.weight < x.weight {
					light, heavy = y, x
				}
				var got float64
				for _, t := range light.tokens {
					if found(t, heavy) {
						got += weight(t)
					}
				}
				if s := got / light.weight; s > lineThreshold {
					pairs = append(pairs, pair{s, i, j})
				}
			}
		}
	}
	slices.SortFunc(pairs, func(p, q pair) int {
		if c := cmp.Compare(q.s, p.s); c != 0 {
			return c
		}
		if c := cmp.Compare(p.i, q.i); c != 0 {
			return c
		}
		return cmp.Compare(p.j, q.j)
	})
	for _, p := range pairs {
		if usedA[p.i] || usedB[p.j] {
			continue
		}
		usedA[p.i], usedB[p.j] = true, true
		ma += ra[p.i].weight
		mb += rb[p.j].weight
	}
	return ma / ta, mb / tb
}

func docFreq(rs []*record) map[string]int {
	df := map[string]int{}
	for _, r := range rs {
		for _, t := range r.tokens {
			df[t]++
		}
	}
	return df
}

// similarOutputs reports whether two normalised outputs are similar: equal,
// or each covered more than coverageThreshold by the other.
func similarOutputs(a, b string) bool {
	if a == b {
		return true
	}
	ca, cb := outputSimilarity(a, b)
	return ca > coverageThreshold && cb > coverageThreshold
}

// reportLine reports whether a line of output only reports the work of a
// run that changed the file system: it names at least one path, and every
// path it names was changed by the run or existed before it (cp -v's
// 'a' -> 'b', mkdir -v, tar -v's members, find -print -delete). A relative
// path counts when a changed path ends with it (tar -xv lists members
// relative to -C). changed holds the changed paths, cleaned; exists says
// whether a path existed on the fixture.
func reportLine(line string, changed map[string]bool, exists func(string) bool) bool {
	var n int
	for _, w := range wordRE().FindAllString(line, -1) {
		if !strings.Contains(w, "/") {
			continue
		}
		rel := !strings.HasPrefix(w, "/")
		p := path.Clean("/" + w)
		if p == "/" {
			continue
		}
		n++
		if changed[p] || (exists != nil && exists(p)) {
			continue
		}
		if rel && hasSuffixPath(changed, p) {
			continue
		}
		return false
	}
	return n > 0
}

// hasSuffixPath reports whether some changed path ends with p (p starts
// with a slash).
func hasSuffixPath(changed map[string]bool, p string) bool {
	for c := range changed {
		if strings.HasSuffix(c, p) {
			return true
		}
	}
	return false
}

// dropReports removes the lines of s that reportLine accepts.
func dropReports(s string, changed map[string]bool, exists func(string) bool) string {
	lines := strings.Split(s, "\n")
	out := lines[:0]
	for _, l := range lines {
		if !reportLine(l, changed, exists) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
