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
	var uses []compiledUse
	if r != nil {
		for _, u := range r.Paths {
			if u.Access != Read {
				uses = append(uses, compileUse(u))
			}
		}
	}
	var changes []Change
	if cs != nil {
		changes = cs.Changes
	}
	parents := make(map[string]bool, len(changes))
	for _, c := range changes {
		parents[path.Dir(c.Path)] = true
	}
	hit := make([]bool, len(uses))
	for _, c := range changes {
		covered := false
		for i := range uses {
			if uses[i].covers(c) {
				hit[i] = true
				covered = true
			}
		}
		if !covered && !implied(c, parents, uses) {
			s.Unpredicted = append(s.Unpredicted, c)
		}
	}
	for i, u := range uses {
		if !hit[i] && !strings.HasPrefix(u.use.Path, "/dev/") && !strings.HasPrefix(u.use.Path, "/proc/") && !strings.HasPrefix(u.use.Path, "/sys/") {
			s.Missed = append(s.Missed, u.use)
		}
	}
	return s
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
