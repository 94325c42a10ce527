package scripttest

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/nash-shell/nash/effects"
)

// MaxVariants bounds how many variants one test runs, today's files
// included.
const MaxVariants = 24

// Limits on what derive tries, so that a long script still gets a quick
// test: globs (with listings) probed, and inputs, outputs and variables
// varied.
const (
	maxGlobs   = 3
	maxInputs  = 3
	maxOutputs = 2
	maxVars    = 3
)

// probeCores are the hostile names put where a glob's * is, per kind.
var probeCores = []struct {
	kind  Kind
	core  string
	title string
}{
	{NameSpace, "my photo", "a name with a space"},
	{NameNewline, "line\nbreak", "a name with a newline"},
	{NameDash, "-x", "a name that starts with a dash"},
	{NameBytes, "caf\xe9", "a name that is not UTF-8"},
}

// glob is a pattern the script expands, with today's matches.
type glob struct {
	pattern string // absolute
	matches []string
	// listing is set for dir/* standing for a listing of dir: its
	// matches are the files in it, not its directories, which the
	// script may need.
	listing bool
	// like is the first of today's matches that is a small regular
	// file, which probes copy; content and mode are its.
	like    string
	content string
	mode    os.FileMode
}

// maxLike bounds the size of a file probes copy.
const maxLike = 64 << 10

// setLike picks the match probes copy: one in the pattern's own
// directory when there is one (a probe goes next to the file it copies).
func (g *glob) setLike() {
	dir := unescape(path.Dir(g.pattern))
	ms := slices.Clone(g.matches)
	sort.SliceStable(ms, func(i, j int) bool { return path.Dir(ms[i]) == dir && path.Dir(ms[j]) != dir })
	for _, m := range ms {
		fi, err := os.Lstat(m)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxLike {
			continue
		}
		b, err := os.ReadFile(m)
		if err != nil {
			continue
		}
		g.like, g.content, g.mode = m, string(b), fi.Mode().Perm()
		return
	}
}

// copyOf makes e a copy of g's like, when it has one.
func (g glob) copyOf(e Entry) Entry {
	if g.like != "" {
		e.Like, e.Content, e.Mode = g.like, g.content, g.mode
	}
	return e
}

// dir is where probes and controls go: next to the file they copy, or in
// the pattern's directory.
func (g glob) dir() string {
	if g.like != "" {
		return path.Dir(g.like)
	}
	return unescape(path.Dir(g.pattern))
}

// base is the pattern probes' names match: for a listing, what the file
// they copy ends with (its extension), so that they fare as it does.
func (g glob) base() string {
	b := path.Base(g.pattern)
	if g.listing && b == "*" {
		if ext := path.Ext(g.like); ext != "" && ext != path.Base(g.like) {
			return "*" + escapeGlob(ext)
		}
	}
	return b
}

// derive lists the variants worth running for a script with features f,
// today's files first, at most MaxVariants.
func (t *Tester) derive(f *features) []Variant {
	vs := []Variant{{Name: "today", Kind: Today, Title: "today's files"}}
	named := map[string]bool{}
	add := func(v Variant) {
		if len(vs) < MaxVariants && !named[v.Name] {
			named[v.Name] = true
			vs = append(vs, v)
		}
	}
	globs := t.globs(f)
	for i, g := range globs {
		if i >= 2 {
			break
		}
		rel := t.rel(g.pattern)
		switch {
		case len(g.matches) > 0:
			v := Variant{Name: "glob-none " + rel, Kind: GlobNone, Title: "no file matches " + rel, Pattern: g.pattern}
			for _, m := range g.matches {
				v.Entries = append(v.Entries, Entry{Path: m, Type: effects.TypeNone})
			}
			add(v)
		}
		switch {
		case len(g.matches) >= 2:
			v := Variant{Name: "glob-one " + rel, Kind: GlobOne, Title: "only " + t.rel(g.matches[0]) + " matches " + rel, Pattern: g.pattern}
			for _, m := range g.matches[1:] {
				v.Entries = append(v.Entries, Entry{Path: m, Type: effects.TypeNone})
			}
			add(v)
		case len(g.matches) == 0:
			if c, ok := t.control(g, "report"); ok {
				add(Variant{Name: "glob-one " + rel, Kind: GlobOne, Title: "one file matches " + rel, Pattern: g.pattern, Entries: []Entry{c}})
			}
		}
		if len(g.matches) < 2 {
			v := Variant{Name: "glob-many " + rel, Kind: GlobMany, Title: "several files match " + rel, Pattern: g.pattern}
			for _, core := range []string{"report", "summary", "notes"} {
				if c, ok := t.control(g, core); ok {
					v.Entries = append(v.Entries, c)
				}
			}
			if len(v.Entries) > 0 {
				add(v)
			}
		}
	}
	for _, pc := range probeCores {
		v := Variant{Kind: pc.kind}
		var rels []string
		made := map[string]bool{}
		for _, g := range globs {
			p, ok := t.probe(g, pc.core)
			if !ok || made[p.Path] {
				continue
			}
			made[p.Path] = true
			v.Entries = append(v.Entries, p)
			if pc.kind == NameSpace {
				if d, ok := t.decoy(g, p.Path); ok && !made[d.Path] {
					made[d.Path] = true
					v.Entries = append(v.Entries, d)
				}
			}
			if len(g.matches) == 0 {
				if c, ok := t.control(g, "report"); ok && !made[c.Path] {
					made[c.Path] = true
					v.Entries = append(v.Entries, c)
				}
			}
			rels = append(rels, t.rel(g.pattern))
		}
		if len(rels) == 0 {
			continue
		}
		v.Name = string(pc.kind) + " " + strings.Join(rels, " ")
		v.Title = pc.title + " matches " + strings.Join(rels, " and ")
		v.Pattern = globs[0].pattern
		add(v)
	}
	if len(globs) > 0 {
		g := globs[0]
		rel := t.rel(g.pattern)
		v := Variant{Name: "many-files " + rel, Kind: Many, Title: strconv.Itoa(t.many) + " files match " + rel, Pattern: g.pattern}
		for i := 0; i < t.many; i++ {
			if c, ok := t.control(g, "file"+strconv.Itoa(10000 + i)[1:]); ok {
				v.Entries = append(v.Entries, c)
			}
		}
		if len(v.Entries) > 0 {
			add(v)
		}
	}
	for i, u := range f.vars {
		if i >= maxVars {
			break
		}
		val, set := lookupEnv(t.env, u.name)
		if set && val != "" || set && u.unsetMatters {
			add(Variant{Name: "var-unset " + u.name, Kind: VarUnset, Title: u.name + " is not set", Unset: []string{u.name}})
		}
		if u.unsetMatters && (!set || val != "") {
			add(Variant{Name: "var-empty " + u.name, Kind: VarEmpty, Title: u.name + " is set but empty", Set: map[string]string{u.name: ""}})
		}
		if u.dir && (!set || val == "") {
			d := t.fresh(path.Join(t.dir, "nash-test-"+strings.ToLower(u.name)))
			add(Variant{Name: "var-dir " + u.name, Kind: VarDir, Title: u.name + " names a directory with two files",
				Set: map[string]string{u.name: d},
				Entries: []Entry{
					{Path: d, Type: effects.TypeDir},
					{Path: d + "/a.txt", Type: effects.TypeFile, Content: "nash test: a.txt\n"},
					{Path: d + "/b.txt", Type: effects.TypeFile, Content: "nash test: b.txt\n"},
				}})
		}
	}
	for _, d := range f.cds {
		if fi, err := t.lstat(d); err == nil && fi.IsDir() && t.mayChange(d) && d != t.dir {
			add(Variant{Name: "missing " + t.rel(d), Kind: Missing, Title: "there is no " + t.rel(d) + " to cd into", Pattern: d,
				Entries: []Entry{{Path: d, Type: effects.TypeNone}}})
		}
	}
	inputs := 0
	for _, p := range f.inputs {
		if inputs >= maxInputs {
			break
		}
		fi, err := t.lstat(p)
		if err != nil || !t.mayChange(p) || p == t.dir {
			continue
		}
		inputs++
		rel := t.rel(p)
		add(Variant{Name: "missing " + rel, Kind: Missing, Title: rel + " is missing", Pattern: p, Entries: []Entry{{Path: p, Type: effects.TypeNone}}})
		if !fi.Mode().IsRegular() {
			continue
		}
		if fi.Size() > 0 {
			add(Variant{Name: "empty " + rel, Kind: Empty, Title: rel + " is empty", Pattern: p,
				Entries: []Entry{{Path: p, Type: effects.TypeFile, Mode: fi.Mode().Perm()}}})
		}
		if fi.Size() <= 64<<10 {
			if b, err := os.ReadFile(p); err == nil {
				target := path.Join(t.linkDir(), path.Base(p))
				add(Variant{Name: "symlink " + rel, Kind: Symlink, Title: rel + " is a symlink to a file elsewhere", Pattern: target,
					Entries: []Entry{
						{Path: target, Type: effects.TypeFile, Content: string(b), Mode: fi.Mode().Perm()},
						{Path: p, Type: effects.TypeSymlink, Target: target},
					}})
			}
		}
	}
	// Root writes where the mode says no, live as in the sandbox: a
	// read-only variant would try nothing.
	root := os.Geteuid() == 0
	outputs := 0
	for _, p := range append(append([]string{}, f.outputs...), f.metas...) {
		if outputs >= maxOutputs || !t.mayChange(p) || p == t.dir || !inside(p, t.dir) {
			continue
		}
		rel := t.rel(p)
		fi, err := t.lstat(p)
		switch {
		case err != nil:
			dir, derr := t.lstat(path.Dir(p))
			if derr != nil || !dir.IsDir() {
				continue
			}
			outputs++
			add(Variant{Name: "exists " + rel, Kind: Exists, Title: rel + " already exists", Pattern: p,
				Entries: []Entry{{Path: p, Type: effects.TypeFile, Content: "nash test: what was in " + path.Base(p) + " before\n"}}})
			if d := path.Dir(p); inside(d, t.dir) && !root {
				add(Variant{Name: "read-only " + t.rel(d), Kind: ReadOnly, Title: t.rel(d) + " is read-only", Pattern: d,
					Entries: []Entry{{Path: d, Type: effects.TypeDir, Mode: 0o555}}})
			}
		case fi.Mode().IsRegular() && !root:
			outputs++
			add(Variant{Name: "read-only " + rel, Kind: ReadOnly, Title: rel + " is read-only", Pattern: p,
				Entries: []Entry{{Path: p, Type: effects.TypeFile, Mode: 0o444, Keep: true}}})
		}
	}
	return vs
}

// globs are the patterns the script expands, with the directories whose
// listings it splits as dir/*, each with today's matches: at most maxGlobs,
// only where the test may make files.
func (t *Tester) globs(f *features) []glob {
	var out []glob
	seen := map[string]bool{}
	pats := append([]string{}, f.globs...)
	listing := map[string]bool{}
	for _, d := range f.listings {
		p := path.Join(escapeGlob(d), "*")
		pats = append(pats, p)
		listing[p] = true
	}
	for _, p := range pats {
		if len(out) >= maxGlobs || seen[p] {
			continue
		}
		seen[p] = true
		dir := unescape(path.Dir(p))
		if fi, err := t.lstat(dir); err != nil || !fi.IsDir() || !t.mayChange(dir) {
			continue
		}
		g := glob{pattern: p, listing: listing[p] && !slices.Contains(f.globs, p)}
		ms := t.matches(p)
		if f.deep[p] {
			ms = t.deepMatches(p)
		}
		for _, m := range ms {
			if fi, err := t.lstat(m); g.listing && (err != nil || fi.IsDir()) {
				continue
			}
			g.matches = append(g.matches, m)
		}
		g.setLike()
		out = append(out, g)
	}
	return out
}

// matches lists today's files that match pattern as bash expands it: a
// name starting with a dot only when the pattern says so.
func (t *Tester) matches(pattern string) []string {
	dir, base := unescape(path.Dir(pattern)), path.Base(pattern)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, ".") && !strings.HasPrefix(base, ".") {
			continue
		}
		if ok, _ := globMatch(base, n); ok {
			out = append(out, path.Join(dir, n))
		}
	}
	sort.Strings(out)
	return out
}

// maxDeep bounds the entries deepMatches looks at.
const maxDeep = 5000

// deepMatches lists today's files at any depth under a pattern's
// directory whose names match its last element, as find -name does.
func (t *Tester) deepMatches(pattern string) []string {
	dir, base := unescape(path.Dir(pattern)), path.Base(pattern)
	var out []string
	seen := 0
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if seen++; seen > maxDeep {
			return filepath.SkipAll
		}
		if p == dir {
			return nil
		}
		if ok, _ := globMatch(base, d.Name()); ok {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// instantiate makes a name that base (one path element of a glob)
// matches, with core where its first * is; ok is false when base has no
// * and core is not empty, or the name would not match.
func instantiate(base, core string) (string, bool) {
	var b strings.Builder
	star := false
	for i := 0; i < len(base); i++ {
		switch c := base[i]; c {
		case '\\':
			if i+1 < len(base) {
				i++
				b.WriteByte(base[i])
			}
		case '*':
			if !star {
				b.WriteString(core)
				star = true
			}
		case '?':
			b.WriteByte('x')
		case '[':
			j := strings.IndexByte(base[i+1:], ']')
			if j < 0 {
				b.WriteByte(c)
				continue
			}
			class := base[i+1 : i+1+j]
			if j == 0 { // []...] holds ]
				return "", false
			}
			i += j + 1
			if class[0] == '!' || class[0] == '^' {
				for _, r := range "qzjk" {
					if !strings.ContainsRune(class, r) {
						b.WriteRune(r)
						break
					}
				}
			} else {
				b.WriteByte(class[0])
			}
		default:
			b.WriteByte(c)
		}
	}
	name := b.String()
	if !star && core != "" || name == "" || strings.Contains(name, "/") {
		return "", false
	}
	if base == "*" {
		name += ".txt"
	}
	if ok, _ := globMatch(base, name); !ok {
		return "", false
	}
	return name, true
}

// control makes an ordinary file that g matches, named after core.
func (t *Tester) control(g glob, core string) (Entry, bool) {
	name, ok := instantiate(g.base(), core)
	if !ok {
		name, ok = instantiate(g.base(), "")
	}
	if !ok {
		return Entry{}, false
	}
	p := t.fresh(path.Join(g.dir(), name))
	return g.copyOf(Entry{Path: p, Type: effects.TypeFile, Content: "nash test: " + path.Base(p) + "\n", Role: RoleControl, Pattern: g.pattern}), true
}

// probe makes a file that g matches with a hostile core in its name.
func (t *Tester) probe(g glob, core string) (Entry, bool) {
	name, ok := instantiate(g.base(), core)
	if !ok {
		return Entry{}, false
	}
	p := path.Join(g.dir(), name)
	if _, err := t.lstat(p); err == nil {
		return Entry{}, false
	}
	return g.copyOf(Entry{Path: p, Type: effects.TypeFile, Content: "nash test: " + name + "\n", Role: RoleProbe, Pattern: g.pattern}), true
}

// decoy makes a file named after the first word of a probe's name, which
// word splitting would act on instead; it is a control when g matches it.
func (t *Tester) decoy(g glob, probe string) (Entry, bool) {
	word, _, ok := strings.Cut(path.Base(probe), " ")
	if !ok || word == "" {
		return Entry{}, false
	}
	p := path.Join(path.Dir(probe), word)
	if _, err := t.lstat(p); err == nil {
		return Entry{}, false
	}
	role := RoleDecoy
	if ok, _ := globMatch(path.Base(g.pattern), word); ok {
		role = RoleControl
	}
	return Entry{Path: p, Type: effects.TypeFile, Content: "nash test: " + word + "\n", Role: role, Pattern: g.pattern}, true
}

// fresh returns p, or p with a number before its extension, such that
// nothing is there today.
func (t *Tester) fresh(p string) string {
	if _, err := t.lstat(p); err != nil {
		return p
	}
	ext := path.Ext(p)
	stem := strings.TrimSuffix(p, ext)
	for i := 2; ; i++ {
		q := stem + strconv.Itoa(i) + ext
		if _, err := t.lstat(q); err != nil {
			return q
		}
	}
}

// linkDir is the directory outside the working directory where symlink
// variants' targets live.
func (t *Tester) linkDir() string { return t.fresh("/tmp/nash-test-elsewhere") }

// mayChange reports whether the test may make or remove files at p: under
// the working directory, the home directory, or /tmp.
func (t *Tester) mayChange(p string) bool {
	if inside(p, t.dir) || inside(p, "/tmp") {
		return true
	}
	home, ok := lookupEnv(t.env, "HOME")
	return ok && home != "/" && path.IsAbs(home) && inside(p, home) && p != home
}

// rel shows p relative to the working directory when it is under it.
func (t *Tester) rel(p string) string {
	if p == t.dir {
		return "."
	}
	if inside(p, t.dir) {
		return strings.TrimPrefix(p, strings.TrimSuffix(t.dir, "/")+"/")
	}
	return p
}

func lookupEnv(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// globMatch reports whether name matches the glob element pattern as bash
// matches it: [!...] negates, as [^...] does.
func globMatch(pattern, name string) (bool, error) {
	if strings.Contains(pattern, "[!") {
		pattern = strings.ReplaceAll(pattern, "[!", "[^")
	}
	return path.Match(pattern, name)
}
