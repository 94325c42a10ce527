package scripttest

import (
	"fmt"
	"os"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/nash-shell/nash/effects"
)

// Verdict is how a variant went.
type Verdict string

// The verdicts.
const (
	Pass    Verdict = "pass"    // nothing wrong, and it does what it does on today's files
	Differs Verdict = "differs" // nothing wrong, but it does something else than on today's files
	Fail    Verdict = "fail"    // something went wrong: see the problems
	NotRun  Verdict = "not-run" // the starting state could not be built
)

// Report is what testing a script found.
type Report struct {
	Script string `json:"script"`
	Dir    string `json:"dir"`
	// Variants are the results, today's files first.
	Variants []Result `json:"variants"`
	// Failed counts the variants that failed.
	Failed int `json:"failed"`
	// Elapsed is how long the whole test took.
	Elapsed time.Duration `json:"elapsed_ns"`
}

// Result is one variant's run.
type Result struct {
	Variant
	Verdict  Verdict `json:"verdict"`
	ExitCode int     `json:"exit_code"`
	// TimedOut is set when the script was stopped after the Tester's
	// timeout.
	TimedOut bool   `json:"timed_out,omitempty"`
	Stdout   string `json:"stdout,omitempty"`
	Stderr   string `json:"stderr,omitempty"`
	// Changes are the script's own changes (not the setup's), the first
	// maxShown of them; NumChanges counts them all.
	Changes    []effects.Change `json:"changes,omitempty"`
	NumChanges int              `json:"num_changes"`
	// Outside are the script's changes outside the working directory,
	// the first maxShown of them; NumOutside counts them all.
	Outside    []effects.Change `json:"outside,omitempty"`
	NumOutside int              `json:"num_outside"`
	// Problems say why the variant fails; Differences where it does
	// something else than on today's files without being wrong.
	Problems    []Finding     `json:"problems,omitempty"`
	Differences []Finding     `json:"differences,omitempty"`
	SetupError  string        `json:"setup_error,omitempty"`
	Elapsed     time.Duration `json:"elapsed_ns"`
}

// Finding is one problem or difference, with a sentence for people (paths
// quoted with effects.Quote, so it is safe to print).
type Finding struct {
	// Kind classifies it: timeout, outside, unpredicted, decoy, probe,
	// regression, literal-glob, error, went-on, fate, exit.
	Kind   string   `json:"kind"`
	Reason string   `json:"reason"`
	Paths  []string `json:"paths,omitempty"`
}

// maxShown bounds the changes a result lists.
const maxShown = 50

// judge turns the runs into results: runs[0] is today's files, the
// reference the others are compared with.
func (t *Tester) judge(rep *effects.Report, f *features, vs []Variant, runs []*run) *Report {
	out := &Report{Dir: t.dir}
	var ref *run
	if len(runs) > 0 && runs[0] != nil && runs[0].obs != nil && !runs[0].timedOut {
		ref = runs[0]
	}
	for i, r := range runs {
		res := Result{Variant: vs[i]}
		if r == nil {
			res.Verdict = NotRun
			out.Variants = append(out.Variants, res)
			continue
		}
		res.ExitCode, res.TimedOut, res.Stdout, res.Stderr, res.Elapsed = r.exit, r.timedOut, r.stdout, r.stderr, r.elapsed
		if r.setupErr != "" {
			res.Verdict, res.SetupError = NotRun, r.setupErr
			out.Variants = append(out.Variants, res)
			continue
		}
		j := &judgement{t: t, rep: rep, f: f, v: &vs[i], r: r, ref: ref, res: &res}
		if i == 0 {
			j.ref = nil
		}
		j.run()
		switch {
		case len(res.Problems) > 0:
			res.Verdict = Fail
			out.Failed++
		case len(res.Differences) > 0:
			res.Verdict = Differs
		default:
			res.Verdict = Pass
		}
		out.Variants = append(out.Variants, res)
	}
	return out
}

// judgement judges one run.
type judgement struct {
	t   *Tester
	rep *effects.Report
	f   *features
	v   *Variant
	r   *run
	ref *run // today's run; nil when judging it, or when it failed to finish
	res *Result
}

func (j *judgement) problem(kind, reason string, paths ...string) {
	j.res.Problems = append(j.res.Problems, Finding{Kind: kind, Reason: reason, Paths: paths})
}

func (j *judgement) differ(kind, reason string, paths ...string) {
	j.res.Differences = append(j.res.Differences, Finding{Kind: kind, Reason: reason, Paths: paths})
}

func (j *judgement) run() {
	obs := j.r.obs
	dir := j.t.dir
	for _, c := range obs.changes {
		if noise(c.Path) {
			continue
		}
		j.res.NumChanges++
		if len(j.res.Changes) < maxShown {
			j.res.Changes = append(j.res.Changes, c)
		}
		if !inside(c.Path, dir) {
			j.res.NumOutside++
			if len(j.res.Outside) < maxShown {
				j.res.Outside = append(j.res.Outside, c)
			}
		}
	}
	if j.r.timedOut {
		j.problem("timeout", fmt.Sprintf("did not finish within %s: it was stopped", j.t.timeout))
	}
	j.outside()
	j.unpredicted()
	if j.ref == nil || j.r.timedOut {
		return // no reference, or a run cut short: nothing to compare
	}
	j.entries()
	j.regressions()
	j.errors()
	if j.res.ExitCode != j.ref.exit && len(j.res.Problems) == 0 {
		j.differ("exit", fmt.Sprintf("exits with status %d, where it exits with %d on today's files", j.res.ExitCode, j.ref.exit))
	}
}

// noise are paths a run shows that are not the script's doing: the
// sandbox's own scratch space.
func noise(p string) bool {
	return strings.HasPrefix(p, "/dev/shm/nash-run-")
}

// outside fails changes outside the working directory that the script's
// text does not say at a known place: what existed there (deleted,
// changed), or new files where today's run made none.
func (j *judgement) outside() {
	var gone, changed, made []string
	for _, c := range j.r.obs.changes {
		p := c.Path
		if inside(p, j.t.dir) || noise(p) || kernelPath(p) || j.predictedAt(p, c.Kind) {
			continue
		}
		if j.v.Kind == Symlink && inside(p, path.Dir(j.v.Pattern)) {
			j.differ("outside", "follows the symlink and changes "+effects.Quote(p)+" outside the working directory", p)
			continue
		}
		switch {
		case c.Before == nil:
			if j.ref != nil && !j.ref.madeIn(path.Dir(p)) {
				made = append(made, p)
			}
		case c.Kind == effects.Deleted:
			gone = append(gone, p)
		case c.Kind == effects.MetaChanged && c.Before.Type == effects.TypeDir:
		default:
			changed = append(changed, p)
		}
	}
	if len(gone) > 0 {
		j.problem("outside", "deletes "+countPaths(gone)+" outside the working directory", first(gone)...)
	}
	if len(changed) > 0 {
		j.problem("outside", "changes "+countPaths(changed)+" outside the working directory", first(changed)...)
	}
	if len(made) > 0 {
		j.problem("outside", "writes "+countPaths(made)+" outside the working directory, where it writes nothing there on today's files", first(made)...)
	}
}

// madeIn reports whether the run created something in dir.
func (r *run) madeIn(dir string) bool {
	for _, c := range r.obs.changes {
		if c.Before == nil && path.Dir(c.Path) == dir {
			return true
		}
	}
	return false
}

// predictedAt reports whether some use the report predicts at a known
// place (not one only run time tells) covers a change of this kind at p.
func (j *judgement) predictedAt(p string, kind effects.Kind) bool {
	var uses []effects.PathUse
	for _, u := range j.rep.Paths {
		if !u.Dynamic && u.Access != effects.Read {
			uses = append(uses, u)
		}
	}
	if len(uses) == 0 {
		return false
	}
	s := effects.Compare(&effects.Report{Paths: uses}, &effects.ChangeSet{Changes: []effects.Change{{Path: p, Kind: kind}}})
	return len(s.Unpredicted) == 0
}

// unpredicted fails deletions inside the working directory that no use
// the report predicts covers (cd build; rm * with no build: the files
// here go), unless the script runs what the analysis cannot see into.
func (j *judgement) unpredicted() {
	if j.f.opaque {
		return
	}
	var dels []effects.Change
	for _, c := range j.r.obs.changes {
		if inside(c.Path, j.t.dir) && c.Path != j.t.dir && (c.Kind == effects.Deleted || c.Kind == effects.TypeChanged) {
			if fate, ok := j.r.obs.fates[c.Path]; ok && fate.Kind == Moved {
				continue
			}
			dels = append(dels, effects.Change{Path: c.Path, Kind: effects.Deleted})
		}
	}
	if len(dels) == 0 {
		return
	}
	s := effects.Compare(j.rep, &effects.ChangeSet{Changes: dels})
	var paths []string
	for _, c := range s.Unpredicted {
		paths = append(paths, c.Path)
	}
	if len(paths) > 0 {
		j.problem("unpredicted", "deletes "+countPaths(j.rels(paths))+", which the script does not say it deletes", first(paths)...)
	}
}

// entries judges what the variant added: a decoy must be left alone, a
// probe treated as the other files its pattern matches, an output that
// was there already is worth a word.
func (j *judgement) entries() {
	obs := j.r.obs
	for _, e := range j.v.Entries {
		switch e.Role {
		case RoleDecoy:
			if f := j.fate(e.Path); f.Kind != Unchanged {
				j.problem("decoy", j.phrase(e.Path, f)+", a file named after a word of a name with a space"+j.errLine(), e.Path)
			}
		case RoleProbe:
			j.probe(e)
		}
	}
	switch j.v.Kind {
	case Exists:
		if f := j.fate(j.v.Pattern); f.Kind != Unchanged {
			j.differ("fate", j.phrase(j.v.Pattern, f)+", which was there before", j.v.Pattern)
		}
	case Symlink:
		for _, e := range j.v.Entries {
			if e.Type == effects.TypeSymlink {
				if f := j.fate(e.Path); f.Kind == TypeChanged || f.Kind == Deleted {
					j.differ("fate", j.phrase(e.Path, f)+" (it was a symlink to "+effects.Quote(e.Target)+")", e.Path)
				}
			}
		}
	}
	_ = obs
}

// probe compares a probe's fate with its pattern's other matches'.
func (j *judgement) probe(e Entry) {
	// Today's files that match come first: they read best in a reason.
	var controls, made []string
	removed := map[string]bool{}
	for _, x := range j.v.Entries {
		switch {
		case x.Type == effects.TypeNone:
			removed[x.Path] = true
		case x.Role == RoleControl && x.Pattern == e.Pattern:
			made = append(made, x.Path)
		}
	}
	for _, m := range j.t.matches(e.Pattern) {
		if fi, err := os.Lstat(m); !removed[m] && err == nil && !fi.IsDir() {
			controls = append(controls, m)
		}
	}
	controls = append(controls, made...)
	if len(controls) == 0 {
		return
	}
	count := map[FateKind]int{}
	example := map[FateKind]string{}
	for _, c := range controls {
		k := j.fate(c).Kind
		count[k]++
		if _, ok := example[k]; !ok {
			example[k] = c
		}
	}
	want, n := FateKind(""), 0
	for k, c := range count {
		if c > n || c == n && k < want {
			want, n = k, c
		}
	}
	like := example[want]
	if e.Like != "" {
		// A copy of one of today's files fares as that file does.
		like, want = e.Like, j.fate(e.Like).Kind
		controls = []string{e.Like}
	} else if n*2 <= len(controls) {
		return // the other files fare differently among themselves
	}
	got := j.fate(e.Path)
	if got.Kind != want {
		j.problem("probe", j.phrase(e.Path, got)+", where it "+j.phrase(like, j.fate(like))+j.errLine(), e.Path)
		return
	}
	if want == Moved {
		if exp, ok := expectedMove(e.Pattern, like, j.fate(like).To, e.Path); ok && exp != got.To {
			j.problem("probe", j.phrase(e.Path, got)+", where it "+j.phrase(like, j.fate(like))+j.errLine(), e.Path)
		}
		return
	}
	// What the script copies the other files to, it should copy the
	// probe to.
	copied, likeCopy := 0, ""
	for _, c := range controls {
		if cs := j.copiesOf(c); len(cs) > 0 {
			if copied++; likeCopy == "" {
				like, likeCopy = c, mostLike(c, cs)
			}
		}
	}
	if copied*2 <= len(controls) {
		return
	}
	// A probe that copies a file holds what it holds: of the copies of
	// both, the probe's are those named more like it.
	mine := j.copiesOf(e.Path)
	if e.Like != "" {
		var own []string
		for _, q := range mine {
			if likeness(path.Base(e.Path), path.Base(q)) > likeness(path.Base(e.Like), path.Base(q)) {
				own = append(own, q)
			}
		}
		mine = own
	}
	if len(mine) == 0 {
		j.problem("probe", "makes no copy of "+effects.Quote(j.t.rel(e.Path))+", where it copies "+effects.Quote(j.t.rel(like))+" to "+effects.Quote(j.t.rel(likeCopy))+j.errLine(), e.Path)
		return
	}
	if exp, ok := expectedMove(e.Pattern, like, likeCopy, e.Path); ok && !slices.Contains(mine, exp) {
		j.problem("probe", "copies "+effects.Quote(j.t.rel(e.Path))+" to "+effects.Quote(j.t.rel(mine[0]))+", where it copies "+effects.Quote(j.t.rel(like))+" to "+effects.Quote(j.t.rel(likeCopy))+j.errLine(), e.Path)
	}
}

// mostLike returns the path among ps whose name is most like p's.
func mostLike(p string, ps []string) string {
	best, score := ps[0], -1
	for _, q := range ps {
		if s := likeness(path.Base(p), path.Base(q)); s > score {
			best, score = q, s
		}
	}
	return best
}

// copiesOf lists the new files that hold what p held when the script
// started.
func (j *judgement) copiesOf(p string) []string {
	var content []byte
	found := false
	for _, e := range j.v.Entries {
		if e.Path == p && e.Type == effects.TypeFile && !e.Keep {
			content, found = []byte(e.Content), true
		}
	}
	if !found {
		fi, err := os.Lstat(p)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() > contentLimit {
			return nil
		}
		if content, err = os.ReadFile(p); err != nil {
			return nil
		}
	}
	var out []string
	for _, q := range j.r.obs.copies(content) {
		if q != p {
			out = append(out, q)
		}
	}
	return out
}

// expectedMove says where a probe should go when a control like went to
// to: the name to's base makes of like's stem, made of the probe's.
func expectedMove(pattern, like, to, probe string) (string, bool) {
	base := path.Base(pattern)
	i := strings.IndexByte(base, '*')
	if i < 0 || hasGlob(base[:i]) || hasGlob(base[i+1:]) {
		return "", false
	}
	pre, suf := unescape(base[:i]), unescape(base[i+1:])
	stem := func(name string) (string, bool) {
		if len(name) < len(pre)+len(suf) || !strings.HasPrefix(name, pre) || !strings.HasSuffix(name, suf) {
			return "", false
		}
		return name[len(pre) : len(name)-len(suf)], true
	}
	ls, ok1 := stem(path.Base(like))
	ps, ok2 := stem(path.Base(probe))
	if !ok1 || !ok2 || ls == "" || !strings.Contains(path.Base(to), ls) {
		return "", false
	}
	return path.Join(path.Dir(to), strings.Replace(path.Base(to), ls, ps, 1)), true
}

// regressions compares what became of today's files with today's run.
func (j *judgement) regressions() {
	shadow := map[string]bool{}
	for _, e := range j.v.Entries {
		shadow[e.Path] = true
	}
	shadowed := func(p string) bool {
		for q := p; q != "/" && q != "."; q = path.Dir(q) {
			if shadow[q] {
				return true
			}
		}
		return false
	}
	paths := map[string]bool{}
	for p := range j.ref.obs.fates {
		paths[p] = true
	}
	for p := range j.r.obs.fates {
		paths[p] = true
	}
	sorted := make([]string, 0, len(paths))
	for p := range paths {
		if inside(p, j.t.dir) && !shadowed(p) {
			sorted = append(sorted, p)
		}
	}
	sort.Strings(sorted)
	var worse, other []string
	var worseWhy, otherWhy string
	for _, p := range sorted {
		today, here := j.refFate(p), j.fate(p)
		if today == here {
			continue
		}
		bad := j.v.Kind.additive() ||
			today.Kind == Unchanged && here.Kind != MetaChanged ||
			here.Kind == Deleted && (today.Kind == Moved || today.Kind == Modified)
		why := j.phrase(p, here) + ", where on today's files it " + j.phrase(p, today)
		if bad {
			if worse = append(worse, p); len(worse) == 1 {
				worseWhy = why
			}
		} else if other = append(other, p); len(other) == 1 {
			otherWhy = why
		}
	}
	if len(worse) > 0 {
		if len(worse) > 1 {
			worseWhy += fmt.Sprintf(" (and %d more like it)", len(worse)-1)
		}
		j.problem("regression", worseWhy+j.errLine(), first(worse)...)
	}
	if len(other) > 0 {
		if len(other) > 1 {
			otherWhy += fmt.Sprintf(" (and %d more like it)", len(other)-1)
		}
		j.differ("fate", otherWhy, first(other)...)
	}
}

// errors fails a variant that only adds files and yet makes the script
// complain or fail, a glob-none variant on which it acts on the pattern
// itself, and any variant on which it goes on after an error and deletes.
func (j *judgement) errors() {
	newErr := j.newErrors()
	if j.v.Kind == GlobNone {
		lit := unescape(path.Base(j.v.Pattern))
		var why string
		for _, l := range newErr {
			if strings.Contains(l, lit) {
				why = l
				break
			}
		}
		for _, c := range j.r.obs.changes {
			if c.Kind == effects.Created && path.Base(c.Path) == lit {
				why = "it made " + effects.Quote(j.t.rel(c.Path))
			}
		}
		if why != "" {
			j.problem("literal-glob", "acts on the pattern "+effects.Quote(lit)+" itself when no file matches it ("+effects.EscapeLine(why)+")", j.v.Pattern)
		}
	}
	if j.v.Kind.additive() {
		switch {
		case len(newErr) > 0:
			j.problem("error", "complains: "+effects.EscapeLine(newErr[0]))
		case j.res.ExitCode != 0 && j.ref.exit == 0:
			j.problem("error", fmt.Sprintf("fails with status %d", j.res.ExitCode))
		}
		return
	}
	if len(newErr) > 0 && j.res.ExitCode == 0 {
		var gone []string
		for p, f := range j.r.obs.fates {
			if f.Kind == Deleted && inside(p, j.t.dir) {
				gone = append(gone, p)
			}
		}
		if len(gone) > 0 {
			sort.Strings(gone)
			j.problem("went-on", "goes on after an error ("+effects.EscapeLine(newErr[0])+") and deletes "+countPaths(j.rels(gone))+", and exits 0", first(gone)...)
		}
	}
}

// newErrors are the lines of the variant's error output of a kind today's
// run did not print: "mv: cannot stat 'x': No such file or directory" is
// of the same kind for any x.
func (j *judgement) newErrors() []string {
	old := map[string]bool{}
	for _, l := range strings.Split(j.ref.stderr, "\n") {
		old[errKind(l)] = true
	}
	var out []string
	for _, l := range strings.Split(j.r.stderr, "\n") {
		if l = strings.TrimSpace(l); l != "" && l != "[...]" && !old[errKind(l)] {
			out = append(out, l)
		}
	}
	return out
}

// errKind is an error line without what names a file: quoted strings and
// words with a slash or a dot.
func errKind(l string) string {
	var b strings.Builder
	quoted := func() {
		// 'a'$'\n''b' is one quoted name.
		if s := b.String(); !strings.HasSuffix(s, "Q") {
			b.WriteString("Q")
		}
	}
	for i := 0; i < len(l); i++ {
		c := l[i]
		if c == '$' && i+1 < len(l) && l[i+1] == '\'' {
			continue
		}
		if c == '\'' || c == '"' || strings.HasPrefix(l[i:], "‘") || strings.HasPrefix(l[i:], "`") {
			closing := string(c)
			switch {
			case strings.HasPrefix(l[i:], "‘"):
				closing, i = "’", i+len("‘")-1
			case c == '`':
				closing = "'"
			}
			if k := strings.Index(l[i+1:], closing); k >= 0 {
				quoted()
				i += k + len(closing)
				continue
			}
		}
		b.WriteByte(c)
	}
	words := strings.Fields(b.String())
	for i, w := range words {
		if strings.ContainsAny(strings.Trim(w, ":,;()"), "/.") && len(w) > 1 {
			words[i] = "P"
		}
	}
	return strings.Join(words, " ")
}

// errLine is the first new line of error output, as " (line)", or "".
func (j *judgement) errLine() string {
	if j.ref == nil {
		return ""
	}
	if e := j.newErrors(); len(e) > 0 {
		return " (" + effects.EscapeLine(e[0]) + ")"
	}
	return ""
}

// fate is what became of p in this run.
func (j *judgement) fate(p string) Fate { return fateIn(j.r, p) }

func (j *judgement) refFate(p string) Fate { return fateIn(j.ref, p) }

func fateIn(r *run, p string) Fate {
	if f, ok := r.obs.fates[p]; ok {
		return f
	}
	return Fate{Kind: Unchanged}
}

// phrase says what became of p: "deletes x", "moves x to y".
func (j *judgement) phrase(p string, f Fate) string {
	q := effects.Quote(j.t.rel(p))
	switch f.Kind {
	case Deleted:
		return "deletes " + q
	case Moved:
		return "moves " + q + " to " + effects.Quote(j.t.rel(f.To))
	case Modified:
		return "changes " + q
	case MetaChanged:
		return "changes the mode of " + q
	case TypeChanged:
		return "replaces " + q + " with another kind of file"
	}
	return "leaves " + q + " as it is"
}

func (j *judgement) rels(ps []string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = j.t.rel(p)
	}
	return out
}

// countPaths names one path, or counts several and names the first.
func countPaths(ps []string) string {
	if len(ps) == 1 {
		return effects.Quote(ps[0])
	}
	return fmt.Sprintf("%d paths (%s, ...)", len(ps), effects.Quote(ps[0]))
}

// first returns up to 5 paths.
func first(ps []string) []string { return ps[:min(len(ps), 5)] }

// kernelPath reports whether p is a device or kernel file.
func kernelPath(p string) bool {
	return strings.HasPrefix(p, "/dev/") && !strings.HasPrefix(p, "/dev/shm/") || strings.HasPrefix(p, "/proc/") || strings.HasPrefix(p, "/sys/")
}
