package scripttest

import (
	"bytes"
	"crypto/sha256"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nash-shell/nash/effects"
)

// FateKind is what became of a path that existed before the script ran.
type FateKind string

// The fates of a path.
const (
	Unchanged   FateKind = "unchanged"
	Modified    FateKind = "modified"     // same type, other content
	MetaChanged FateKind = "meta-changed" // same content, other mode or link target
	TypeChanged FateKind = "type-changed" // a file became a directory, a link a file, ...
	Deleted     FateKind = "deleted"      // gone, and its content is nowhere new
	Moved       FateKind = "moved"        // gone, and its content is at a new path
)

// Fate is what became of one path.
type Fate struct {
	Kind FateKind `json:"kind"`
	// To is where a moved path's content went.
	To string `json:"to,omitempty"`
}

// host is how the observer reads today's files and a finished run's new
// versions; tests fake it.
type host interface {
	Lstat(p string) (fs.FileInfo, error)
	// NewVersion returns where the run holds its new version of the
	// regular file p.
	NewVersion(p string) (string, bool)
}

// contentLimit bounds the files whose contents are compared; larger ones
// are compared by size.
const contentLimit = 1 << 20

// observation is what a script did, told from what its variant's setup
// did.
type observation struct {
	// changes are the script's own effects, relative to the variant's
	// starting state, sorted by path.
	changes []effects.Change
	// fates tells, for every file or symlink that existed when the script
	// started and that the run (setup or script) touched, what became of
	// it. A file not listed was left unchanged.
	fates map[string]Fate
	// before tells the starting state of the paths in changes and fates.
	before map[string]*object
	// made maps the digest of each new regular file's content (one the
	// script created) to its paths, to find copies once the run is gone.
	made map[[sha256.Size]byte][]string
}

// copies returns the new files that hold content.
func (o *observation) copies(content []byte) []string {
	return o.made[sha256.Sum256(content)]
}

// object is one side of a path, with where to read its content.
type object struct {
	typ    effects.FileType
	mode   fs.FileMode
	size   int64
	target string
	// literal holds the content of an entry; file, where to read it.
	literal *string
	file    string
}

func (o *object) effects() *effects.Object {
	if o == nil {
		return nil
	}
	return &effects.Object{Type: o.typ, Size: o.size, Mode: o.mode, Target: o.target}
}

// content returns the object's content, or ok false when it is too big
// or cannot be read.
func (o *object) content() ([]byte, bool) {
	if o.literal != nil {
		return []byte(*o.literal), true
	}
	if o.file == "" || o.size > contentLimit {
		return nil, false
	}
	f, err := os.Open(o.file)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, contentLimit+1))
	if err != nil || len(b) > contentLimit {
		return nil, false
	}
	return b, true
}

// sameContent reports whether two regular files hold the same bytes;
// files too big to read are the same when their sizes are.
func sameContent(a, b *object) bool {
	if a.size != b.size {
		return false
	}
	ca, okA := a.content()
	cb, okB := b.content()
	if !okA || !okB {
		return true
	}
	return bytes.Equal(ca, cb)
}

func fromInfo(p string, fi fs.FileInfo) *object {
	o := &object{typ: effects.FileTypeOf(fi.Mode()), size: fi.Size(), mode: fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)}
	switch o.typ {
	case effects.TypeFile:
		o.file = p
	case effects.TypeSymlink:
		o.target, _ = os.Readlink(p)
	case effects.TypeDir:
		o.size = 0
	}
	return o
}

func fromEntry(e Entry) *object {
	if e.Type == effects.TypeNone {
		return nil
	}
	o := &object{typ: e.Type, mode: e.mode(), target: e.Target}
	if e.Type == effects.TypeFile && e.Keep {
		if fi, err := os.Lstat(e.Path); err == nil {
			o.file, o.size = e.Path, fi.Size()
		}
	} else if e.Type == effects.TypeFile {
		c := e.Content
		o.literal, o.size = &c, int64(len(c))
	}
	if e.Type == effects.TypeSymlink {
		o.mode = 0o777
		o.size = int64(len(e.Target))
	}
	return o
}

// observe tells the script's effects from the setup's. cs is everything
// the run changed, relative to today's files; entries are what the setup
// made (with every parent directory it made among them).
func observe(h host, cs *effects.ChangeSet, entries []Entry) *observation {
	changed := make(map[string]effects.Change, len(cs.Changes))
	for _, c := range cs.Changes {
		changed[c.Path] = c
	}
	byPath := make(map[string]Entry, len(entries))
	for _, e := range entries {
		byPath[e.Path] = e
	}
	// shadowed reports whether an entry that is no directory stands at p
	// or above it: what is below it today is gone when the script starts.
	shadowed := func(p string) (Entry, bool) {
		for q := p; ; q = filepath.Dir(q) {
			if e, ok := byPath[q]; ok && (q == p || e.Type != effects.TypeDir) {
				return e, true
			}
			if q == "/" || q == "." {
				return Entry{}, false
			}
		}
	}
	before := func(p string) *object {
		if e, ok := shadowed(p); ok {
			if e.Path == p {
				return fromEntry(e)
			}
			return nil
		}
		fi, err := h.Lstat(p)
		if err != nil {
			return nil
		}
		return fromInfo(p, fi)
	}
	after := func(p string) *object {
		c, ok := changed[p]
		if !ok {
			fi, err := h.Lstat(p)
			if err != nil {
				return nil
			}
			return fromInfo(p, fi)
		}
		if c.After == nil {
			return nil
		}
		o := &object{typ: c.After.Type, mode: c.After.Mode, size: c.After.Size, target: c.After.Target}
		if o.typ == effects.TypeFile {
			o.file, _ = h.NewVersion(p)
		}
		return o
	}
	paths := make([]string, 0, len(changed)+len(byPath))
	for p := range changed {
		paths = append(paths, p)
	}
	for p := range byPath {
		if _, ok := changed[p]; !ok {
			paths = append(paths, p)
		}
	}
	sort.Strings(paths)

	obs := &observation{fates: map[string]Fate{}, before: map[string]*object{}}
	afters := map[string]*object{}
	for _, p := range paths {
		c, inRun := changed[p]
		_, touched := shadowed(p)
		if inRun && !touched {
			// The setup did nothing here: the run's change is the
			// script's.
			obs.changes = append(obs.changes, c)
			if c.Before != nil {
				obs.before[p] = before(p)
			}
			if c.After != nil {
				afters[p] = after(p)
			}
			continue
		}
		b, a := before(p), after(p)
		if kind, meta := compare(b, a); kind != "" {
			obs.changes = append(obs.changes, effects.Change{Path: p, Kind: kind, Before: b.effects(), After: a.effects(), Meta: meta})
			obs.before[p] = b
			afters[p] = a
		}
	}
	// Fates of what existed before: moves are deletions whose content
	// turns up at a new path.
	var created []string
	obs.made = map[[sha256.Size]byte][]string{}
	for _, c := range obs.changes {
		if c.After != nil && c.Kind != effects.MetaChanged && (c.After.Type == effects.TypeFile || c.After.Type == effects.TypeSymlink) {
			created = append(created, c.Path)
		}
		if c.Kind == effects.Created && c.After.Type == effects.TypeFile {
			if b, ok := afters[c.Path].content(); ok {
				sum := sha256.Sum256(b)
				obs.made[sum] = append(obs.made[sum], c.Path)
			}
		}
	}
	// Each deletion goes with the new path most like it whose content is
	// its, best pairs first: a copy of a file (a probe like it) must not
	// take the file's new name.
	type pair struct {
		from, to string
		score    int
	}
	var pairs []pair
	for _, c := range obs.changes {
		b := obs.before[c.Path]
		if b == nil || (b.typ != effects.TypeFile && b.typ != effects.TypeSymlink) {
			continue
		}
		switch c.Kind {
		case effects.Modified:
			obs.fates[c.Path] = Fate{Kind: Modified}
		case effects.MetaChanged:
			obs.fates[c.Path] = Fate{Kind: MetaChanged}
		case effects.TypeChanged:
			obs.fates[c.Path] = Fate{Kind: TypeChanged}
		case effects.Deleted:
			obs.fates[c.Path] = Fate{Kind: Deleted}
			for _, q := range created {
				if same(b, afters[q]) {
					pairs = append(pairs, pair{c.Path, q, likeness(filepath.Base(c.Path), filepath.Base(q))})
				}
			}
		}
	}
	sort.SliceStable(pairs, func(i, j int) bool { return pairs[i].score > pairs[j].score })
	claimed := map[string]bool{}
	for _, p := range pairs {
		if claimed[p.to] || obs.fates[p.from].Kind == Moved {
			continue
		}
		claimed[p.to] = true
		obs.fates[p.from] = Fate{Kind: Moved, To: p.to}
	}
	return obs
}

// compare says how the object at a path changed from b to a, and, for a
// metadata change, what changed.
func compare(b, a *object) (effects.Kind, []string) {
	switch {
	case b == nil && a == nil:
		return "", nil
	case b == nil:
		return effects.Created, nil
	case a == nil:
		return effects.Deleted, nil
	case b.typ != a.typ:
		return effects.TypeChanged, nil
	}
	var meta []string
	if b.typ != effects.TypeSymlink && b.mode != a.mode {
		meta = append(meta, "mode")
	}
	switch b.typ {
	case effects.TypeFile:
		if !sameContent(b, a) {
			return effects.Modified, meta
		}
	case effects.TypeSymlink:
		if b.target != a.target {
			meta = append(meta, "target")
		}
	}
	if len(meta) > 0 {
		return effects.MetaChanged, meta
	}
	return "", nil
}

// same reports whether a holds what b held: the same type and content (a
// symlink's target).
func same(b, a *object) bool {
	if a == nil || a.typ != b.typ {
		return false
	}
	if b.typ == effects.TypeSymlink {
		return a.target == b.target
	}
	return sameContent(b, a)
}

// likeness scores how alike two names are: the length of their common
// prefix and suffix.
func likeness(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	m := 0
	for m < len(a)-n && m < len(b)-n && a[len(a)-1-m] == b[len(b)-1-m] {
		m++
	}
	return n + m
}

// inside reports whether p is dir or below it.
func inside(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}
