package effects

import (
	"path"
	"strings"
)

// Surprises is where a run differed from its prediction.
type Surprises struct {
	// Unpredicted are observed changes that no predicted path use
	// covers. These are the loud ones: the script did something its text
	// did not say.
	Unpredicted []Change `json:"unpredicted"`
	// Missed are predicted writes, creations, deletions and metadata
	// changes that no observed change matches, such as rm -f of a file
	// that did not exist, or a command that failed.
	Missed []PathUse `json:"missed"`
}

// Empty reports whether the run did exactly what was predicted.
func (s Surprises) Empty() bool { return len(s.Unpredicted) == 0 && len(s.Missed) == 0 }

// Compare lists where the observed change set cs differs from the report
// r: changes nothing predicted, and predictions that did not happen.
//
// A predicted path covers an observed one when it matches it as a glob,
// when it is recursive (rm -r dir, cp -r src dest) and the observed path is
// under it, or when it is dynamic and matches with the run-time parts taken
// as any string. Writes and creations cover created, modified, type-changed
// and metadata-changed paths; deletions cover deleted and type-changed
// ones; metadata changes cover metadata changes. Some changes are implied
// and never surprise: a directory's times changing because an entry in it
// changed, and parent directories created for a predicted path (mkdir -p).
// Reads are not compared.
func Compare(r *Report, cs *ChangeSet) Surprises {
	s := Surprises{Unpredicted: []Change{}, Missed: []PathUse{}}
	m := match(r, cs)
	for i, c := range m.changes {
		if m.state[i] == unpredicted {
			s.Unpredicted = append(s.Unpredicted, c)
		}
	}
	for i, u := range m.uses {
		if !m.hit[i] && !kernelPath(u.use.Path) && !transient(m.uses, i) {
			s.Missed = append(s.Missed, u.use)
		}
	}
	return s
}

// transient reports whether use i is one whose trace the script itself
// removes, so that no change shows it: a path made or written and later
// deleted or moved away (itself or a directory above it: mkdir a && mv a
// b), or deleted after the script made or wrote it. Only literal paths count, in
// the order the script uses them.
func transient(uses []compiledUse, i int) bool {
	u := uses[i].use
	if u.Glob || u.Dynamic {
		return false
	}
	within := func(p, dir string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }
	for j, o := range uses {
		v := o.use
		if j == i || v.Glob || v.Dynamic {
			continue
		}
		switch {
		case u.Access != Delete && j > i && v.Access == Delete && within(u.Path, v.Path):
			return true
		case u.Access == Delete && j < i && (v.Access == Create || v.Access == Write) && within(u.Path, v.Path):
			return true
		}
	}
	return false
}

// kernelPath reports whether p is a device or kernel file, which a
// sandbox does not observe as a change.
func kernelPath(p string) bool {
	return strings.HasPrefix(p, "/dev/") || strings.HasPrefix(p, "/proc/") || strings.HasPrefix(p, "/sys/")
}

// changeState is how a prediction accounts for an observed change.
type changeState int

const (
	unpredicted   changeState = iota
	covered                   // a predicted use covers it
	impliedChange             // it follows from other changes
)

// matching is the result of matching a report against a change set.
type matching struct {
	uses    []compiledUse // the report's non-read uses
	hit     []bool        // per use: it covers some observed change
	changes []Change
	state   []changeState // per change
}

// match decides, for every observed change, whether a predicted use
// covers it or it is implied, and for every use whether it covers any.
func match(r *Report, cs *ChangeSet) matching {
	var m matching
	if r != nil {
		for _, u := range r.Paths {
			if u.Access != Read {
				m.uses = append(m.uses, compileUse(u))
			}
		}
	}
	if cs != nil {
		m.changes = cs.Changes
	}
	parents := make(map[string]bool, len(m.changes))
	for _, c := range m.changes {
		parents[path.Dir(c.Path)] = true
	}
	m.hit = make([]bool, len(m.uses))
	m.state = make([]changeState, len(m.changes))
	for ci, c := range m.changes {
		for i := range m.uses {
			if m.uses[i].covers(c) {
				m.hit[i] = true
				m.state[ci] = covered
			}
			// A rename also deletes where the directory was: a
			// predicted deletion there happened.
			if c.Kind == Renamed && m.uses[i].covers(Change{Path: c.From, Kind: Deleted, Before: c.Before}) {
				m.hit[i] = true
			}
		}
		if m.state[ci] == unpredicted && implied(c, parents, m.uses) {
			m.state[ci] = impliedChange
		}
	}
	return m
}

// Accuracy is how well a report predicted one run, for one class of
// change: writes (created, modified, type-changed paths), deletes, or
// metadata changes.
type Accuracy struct {
	// Observed counts the observed changes of the class, not counting
	// implied ones (a directory's times); Covered how many of them some
	// prediction covered.
	Observed int `json:"observed"`
	Covered  int `json:"covered"`
	// Predicted counts the predicted uses of the class; Matched how many
	// of them match some observed change.
	Predicted int `json:"predicted"`
	Matched   int `json:"matched"`
}

// Recall is the share of observed changes that were predicted, 1 when
// nothing was observed.
func (a Accuracy) Recall() float64 {
	if a.Observed == 0 {
		return 1
	}
	return float64(a.Covered) / float64(a.Observed)
}

// Precision is the share of predictions that happened, 1 when nothing was
// predicted.
func (a Accuracy) Precision() float64 {
	if a.Predicted == 0 {
		return 1
	}
	return float64(a.Matched) / float64(a.Predicted)
}

// Add returns the sum of two accuracies, to total them over many runs.
func (a Accuracy) Add(b Accuracy) Accuracy {
	return Accuracy{a.Observed + b.Observed, a.Covered + b.Covered, a.Predicted + b.Predicted, a.Matched + b.Matched}
}

// Score measures how well r predicted the run that produced cs, per class:
// Write (created, modified and type-changed paths, predicted by writes and
// creations), Delete and Meta. It matches as Compare does. A change
// covered only by a prediction of another class (a file deleted where a
// write was predicted) counts as not covered in its class.
func Score(r *Report, cs *ChangeSet) map[Access]Accuracy {
	m := match(r, cs)
	out := map[Access]Accuracy{Write: {}, Delete: {}, Meta: {}}
	for ci, c := range m.changes {
		if m.state[ci] == impliedChange {
			continue
		}
		class := changeClass(c.Kind)
		a := out[class]
		a.Observed++
		if m.coveredInClass(c) {
			a.Covered++
		}
		out[class] = a
	}
	for i, u := range m.uses {
		if kernelPath(u.use.Path) {
			continue
		}
		class := useClass(u.use.Access)
		a := out[class]
		a.Predicted++
		if m.hit[i] {
			a.Matched++
		}
		out[class] = a
	}
	return out
}

// coveredInClass reports whether a prediction of c's own class covers
// it. A file that only got new times (rewritten with the same content,
// or touched) counts as covered by a predicted write too.
func (m *matching) coveredInClass(c Change) bool {
	class := changeClass(c.Kind)
	for i := range m.uses {
		uc := useClass(m.uses[i].use.Access)
		if (uc == class || class == Meta && uc == Write && onlyTimes(c)) && m.uses[i].covers(c) {
			return true
		}
	}
	return false
}

// onlyTimes reports whether a change is to the modification time alone.
func onlyTimes(c Change) bool {
	if c.Kind != MetaChanged || len(c.Meta) == 0 {
		return false
	}
	for _, m := range c.Meta {
		if m != "mtime" {
			return false
		}
	}
	return true
}

// changeClass is the class of an observed change.
func changeClass(k Kind) Access {
	switch k {
	case Deleted:
		return Delete
	case MetaChanged:
		return Meta
	}
	return Write
}

// useClass is the class of a predicted use.
func useClass(a Access) Access {
	if a == Create {
		return Write
	}
	return a
}

// compiledUse is a path use prepared for matching.
type compiledUse struct {
	use     PathUse
	pattern string
	prefix  string // literal start of pattern
	wild    bool
}

func compileUse(u PathUse) compiledUse {
	p := u.Pattern
	if p == "" { // a report made by hand
		switch {
		case u.Path == inputText:
			p = string(anyMark)
		case u.Dynamic:
			p = dynamicPattern(u.Path)
		case u.Glob:
			p = u.Path
		default:
			p = escapeGlob(u.Path)
		}
	}
	return compiledUse{use: u, pattern: p, prefix: literalPrefix(p), wild: hasWildcard(p)}
}

// dynamicPattern turns a dynamic path as shown ("/home/ann/$f.txt") into a
// pattern, taking each $... or `...` part as any string.
func dynamicPattern(show string) string {
	var b strings.Builder
	for i := 0; i < len(show); i++ {
		c := show[i]
		if c == '$' || c == '`' {
			b.WriteByte(anyMark)
			j := i + 1
			for j < len(show) && show[j] != '/' && show[j] != '.' {
				j++
			}
			i = j - 1
			continue
		}
		b.WriteString(escapeGlob(show[i : i+1]))
	}
	return b.String()
}

// covers reports whether the use predicts the change.
func (u *compiledUse) covers(c Change) bool {
	if !kindCovered(u.use.Access, c.Kind) {
		return false
	}
	if !strings.HasPrefix(c.Path, u.prefix) {
		return false
	}
	if !u.wild {
		if c.Path == u.prefix {
			return true
		}
		rest := c.Path[len(u.prefix):]
		return u.use.Recursive && (strings.HasPrefix(rest, "/") || strings.HasSuffix(u.prefix, "/"))
	}
	if matchPath(u.pattern, c.Path) {
		return true
	}
	return u.use.Recursive && matchPath(u.pattern+"/"+string(anyMark), c.Path)
}

// kindCovered reports whether an access predicts a kind of change.
func kindCovered(a Access, k Kind) bool {
	switch a {
	case Write, Create:
		return k != Deleted
	case Delete:
		return k == Deleted || k == TypeChanged
	case Meta:
		return k == MetaChanged
	}
	return false
}

// implied reports whether a change follows from others without being a
// surprise: a directory's metadata changing because its entries changed,
// or a directory created on the way to a predicted path.
func implied(c Change, parents map[string]bool, uses []compiledUse) bool {
	isDir := (c.After != nil && c.After.Type == TypeDir) || (c.Before != nil && c.Before.Type == TypeDir)
	if !isDir {
		return false
	}
	switch c.Kind {
	case MetaChanged, Modified:
		if !parents[c.Path] {
			return false
		}
		for _, m := range c.Meta {
			if m != "mtime" {
				return false
			}
		}
		return true
	case Created:
		prefix := c.Path + "/"
		for _, u := range uses {
			if (u.use.Access == Create || u.use.Access == Write) && strings.HasPrefix(u.prefix, prefix) {
				return true
			}
		}
	}
	return false
}

// ScoreKinds is Score split by the kind of change a person reads in a
// summary: Created, Modified (with TypeChanged), Deleted and MetaChanged.
// An observed change counts in its kind, and is covered when a prediction
// of its class (as in Score) covers it. A predicted write or creation
// counts under Modified when existed reports that its Pattern matched some
// path before the run, else under Created; with existed nil, writes count
// as Modified and creations as Created. existed is the only way ScoreKinds
// learns about the file system.
func ScoreKinds(r *Report, cs *ChangeSet, existed func(pattern string) bool) map[Kind]Accuracy {
	m := match(r, cs)
	out := map[Kind]Accuracy{Created: {}, Modified: {}, Deleted: {}, MetaChanged: {}}
	for ci, c := range m.changes {
		if m.state[ci] == impliedChange {
			continue
		}
		kind := c.Kind
		if kind == TypeChanged {
			kind = Modified
		}
		a := out[kind]
		a.Observed++
		if m.coveredInClass(c) {
			a.Covered++
		}
		out[kind] = a
	}
	for i, u := range m.uses {
		if kernelPath(u.use.Path) {
			continue
		}
		var kind Kind
		switch u.use.Access {
		case Delete:
			kind = Deleted
		case Meta:
			kind = MetaChanged
		default:
			kind = Modified
			if existed != nil && !existed(u.pattern) || existed == nil && u.use.Access == Create {
				kind = Created
			}
		}
		a := out[kind]
		a.Predicted++
		if m.hit[i] {
			a.Matched++
		}
		out[kind] = a
	}
	return out
}

// Uncovered lists the observed changes that Score counts as not covered:
// not implied, and covered by no prediction of their own class. These
// are the misses behind a recall below 1.
func Uncovered(r *Report, cs *ChangeSet) []Change {
	m := match(r, cs)
	out := []Change{}
	for ci, c := range m.changes {
		if m.state[ci] == impliedChange {
			continue
		}
		if !m.coveredInClass(c) {
			out = append(out, c)
		}
	}
	return out
}
