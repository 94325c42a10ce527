package scripttest

import (
	"path"
	"slices"
	"sort"
	"strings"

	"mvdan.cc/sh/v3/syntax"

	"github.com/nash-shell/nash/effects"
)

// features are what a script's text says about the starting states worth
// trying: the globs it expands, the listings whose names it splits, the
// variables it uses without setting, the directories it enters, the files
// it reads and writes.
type features struct {
	// globs are absolute patterns whose directory is literal; deep says
	// which match at any depth below it (find -name).
	globs []string
	deep  map[string]bool
	// listings are directories whose entries' names the script reads
	// from a command's output (for f in $(ls), ls | while read, ls -l |
	// awk, find | xargs without -0).
	listings []string
	vars     []*varUse
	// cds are directories entered with a literal cd, absolute.
	cds []string
	// inputs, outputs, deletes and metas are literal absolute paths the
	// script reads, writes or creates, deletes, or changes the mode of.
	inputs, outputs, deletes, metas []string
	// opaque is set when some command is unknown or known only at run
	// time, or a script is run whose text is not known: then the report's
	// predictions do not bound what the script deletes.
	opaque bool
}

// varUse is a variable the script uses and does not set.
type varUse struct {
	name string
	// dir is set when the script uses it as a path: a / right after it
	// ("$DIR/"*), or in an argument that the command's spec says names a
	// file (rm -rf "$BUILD", tar -C "$SRC").
	dir bool
	// unsetMatters is set when the script tells unset from empty
	// (${X-...}, ${X?}, ${X+...}, [ -v X ], set -u).
	unsetMatters bool
}

// special are variables the shell sets or that every session has: an
// unset HOME or PATH is no starting state worth trying.
var special = map[string]bool{
	"HOME": true, "PATH": true, "PWD": true, "OLDPWD": true, "USER": true, "LOGNAME": true, "SHELL": true,
	"TERM": true, "LANG": true, "HOSTNAME": true, "UID": true, "EUID": true, "PPID": true, "RANDOM": true,
	"SRANDOM": true, "SECONDS": true, "LINENO": true, "IFS": true, "PS1": true, "PS2": true, "PS4": true,
	"OPTIND": true, "OPTARG": true, "REPLY": true, "PIPESTATUS": true, "FUNCNAME": true, "HOSTTYPE": true,
	"OSTYPE": true, "MACHTYPE": true, "SHLVL": true, "EPOCHSECONDS": true, "EPOCHREALTIME": true,
	"GROUPS": true, "DIRSTACK": true, "COLUMNS": true, "LINES": true, "BASHPID": true, "BASH": true,
	"BASH_VERSION": true, "BASH_SOURCE": true, "BASH_LINENO": true, "BASH_REMATCH": true, "HISTFILE": true,
	"EDITOR": true, "VISUAL": true, "PAGER": true, "DISPLAY": true, "TMPDIR": true, "TZ": true,
	"XDG_RUNTIME_DIR": true, "XDG_CONFIG_HOME": true, "XDG_DATA_HOME": true, "XDG_CACHE_HOME": true,
	"XDG_STATE_HOME": true, "MAIL": true, "TERM_PROGRAM": true, "COLORTERM": true,
}

// listers are commands whose output is a list of names.
var listers = map[string]bool{"ls": true, "find": true, "locate": true, "dir": true}

// collect reads the features of script, whose report (analysed in dir)
// is rep.
func collect(script, dir string, rep *effects.Report) *features {
	f := &features{}
	seen := map[string]bool{}
	add := func(list *[]string, p string) { *list = appendNew(*list, p) }
	for _, c := range rep.Commands {
		if c.Dynamic {
			f.opaque = true
		}
	}
	// A "dynamic" finding is a path only run time tells (its use,
	// pattern ** where run time decides, is on the same line) or a script
	// only run time tells, which no use covers.
	dynLines := map[int]bool{}
	for _, u := range rep.Paths {
		if u.Dynamic {
			dynLines[u.Line] = true
		}
	}
	for _, fd := range rep.Findings {
		switch fd.Kind {
		case "unknown-command", "unparsed":
			f.opaque = true
		case "dynamic":
			if !dynLines[fd.Line] {
				f.opaque = true
			}
		}
	}
	for _, u := range rep.Paths {
		if u.Dynamic || !path.IsAbs(u.Path) {
			continue
		}
		if u.Glob {
			if u.Access == effects.Create || u.Access == effects.Write {
				// Where the script puts things ("$f.count" for each
				// *.csv), not what it finds; sed -i on a glob is found
				// by the walk below.
				continue
			}
			if d := path.Dir(u.Path); !hasGlob(d) && !seen[u.Path] && !strings.Contains(path.Base(u.Path), "**") {
				seen[u.Path] = true
				f.globs = append(f.globs, u.Path)
			}
			continue
		}
		switch u.Access {
		case effects.Read:
			add(&f.inputs, u.Path)
		case effects.Write, effects.Create:
			add(&f.outputs, u.Path)
		case effects.Delete:
			add(&f.deletes, u.Path)
		case effects.Meta:
			add(&f.metas, u.Path)
		}
	}
	file, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(script), "")
	if err != nil {
		return f
	}
	w := &walker{f: f, dir: dir, cwd: dir, assigned: map[string]bool{}, used: map[string]*varUse{}}
	w.stmts(file.Stmts)
	syntax.Walk(file, w.visit)
	names := make([]string, 0, len(w.used))
	for n := range w.used {
		if !w.assigned[n] {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	for _, n := range names {
		f.vars = append(f.vars, w.used[n])
	}
	for _, g := range w.globs {
		if !seen[g] {
			seen[g] = true
			f.globs = append(f.globs, g)
		}
	}
	return f
}

// hasGlob reports whether p holds an unquoted glob character.
func hasGlob(p string) bool {
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '*', '?', '[':
			return true
		}
	}
	return false
}

// walker walks the script's statements in order, following literal cds,
// and visits every node for variables.
type walker struct {
	f        *features
	dir      string // the working directory the script starts in
	cwd      string // where the walk is; "" once a cd goes where only run time tells
	assigned map[string]bool
	used     map[string]*varUse
	globs    []string
	unsetSet bool // set -u seen
}

func (w *walker) stmts(ss []*syntax.Stmt) {
	for _, s := range ss {
		w.stmt(s)
	}
}

func (w *walker) stmt(s *syntax.Stmt) {
	if s == nil {
		return
	}
	switch c := s.Cmd.(type) {
	case *syntax.CallExpr:
		w.call(c)
	case *syntax.ForClause:
		if wi, ok := c.Loop.(*syntax.WordIter); ok {
			w.assigned[wi.Name.Value] = true
			for _, word := range wi.Items {
				w.loopItem(word)
			}
		}
		w.stmts(c.Do)
	case *syntax.BinaryCmd:
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			w.pipe(c)
		}
		// With && and ||, the right side may not run; the walk follows
		// the path on which it does.
		w.stmt(c.X)
		w.stmt(c.Y)
	case *syntax.Block:
		w.stmts(c.Stmts)
	case *syntax.Subshell:
		cwd := w.cwd
		w.stmts(c.Stmts)
		w.cwd = cwd
	case *syntax.IfClause:
		for ic := c; ic != nil; ic = ic.Else {
			w.stmts(ic.Cond)
			w.stmts(ic.Then)
		}
	case *syntax.WhileClause:
		w.stmts(c.Cond)
		w.stmts(c.Do)
	case *syntax.CaseClause:
		for _, it := range c.Items {
			w.stmts(it.Stmts)
		}
	case *syntax.FuncDecl:
		w.stmt(c.Body)
	case *syntax.DeclClause:
		for _, a := range c.Args {
			if a.Name != nil && (!a.Naked || c.Variant.Value != "export") {
				w.assigned[a.Name.Value] = true
			}
		}
	}
}

// call notes a simple command: cd, read and friends, set -u, and the glob
// words among its arguments.
func (w *walker) call(c *syntax.CallExpr) {
	for _, a := range c.Assigns {
		w.assigned[a.Name.Value] = true
	}
	if len(c.Args) == 0 {
		return
	}
	name, _ := literal(c.Args[0])
	switch name {
	case "cd", "pushd":
		if len(c.Args) >= 2 {
			if d, ok := literal(c.Args[len(c.Args)-1]); ok && !strings.HasPrefix(d, "-") && w.cwd != "" {
				abs := d
				if !path.IsAbs(d) {
					abs = path.Join(w.cwd, d)
				}
				w.f.cds = appendNew(w.f.cds, abs)
				w.cwd = abs
				return
			}
		}
		w.cwd = ""
		return
	case "read", "mapfile", "readarray", "getopts", "printf", "unset", "export", "declare", "local", "typeset", "readonly":
		for _, a := range c.Args[1:] {
			if v, ok := literal(a); ok && isName(v) {
				w.assigned[v] = true
			}
		}
	case "set":
		for _, a := range c.Args[1:] {
			if v, ok := literal(a); ok && (v == "-u" || v == "nounset" || strings.HasPrefix(v, "-") && strings.Contains(v, "u") && !strings.HasPrefix(v, "--")) {
				w.unsetSet = true
			}
		}
	}
	if spec, ok := effects.LookupCommand(name); ok {
		for i, a := range c.Args[1:] {
			if pathArg(spec, c.Args[1:], i) {
				w.pathVars(a)
			}
		}
	}
	if name == "find" {
		w.findListing(c)
		return
	}
	if listers[name] {
		return
	}
	for _, a := range c.Args[1:] {
		w.globWord(a)
	}
}

// pathRoles are the roles of arguments that name files.
var pathRoles = map[effects.Role]bool{
	effects.RoleRead: true, effects.RoleReadTree: true, effects.RoleWrite: true, effects.RoleCreate: true,
	effects.RoleTarget: true, effects.RoleDelete: true, effects.RoleDeleteTree: true, effects.RoleConvert: true,
	effects.RoleMove: true, effects.RoleMeta: true, effects.RoleDir: true,
}

// pathArg reports whether the command's spec (its annotation) makes
// args[i] a file: the value of an option whose value is one (tar -C DIR,
// cp -t DEST), or an operand of a command whose operands all are (rm,
// cp, mv, cat).
func pathArg(spec effects.CommandSpec, args []*syntax.Word, i int) bool {
	if i > 0 {
		if prev, ok := literal(args[i-1]); ok && strings.HasPrefix(prev, "-") {
			for _, o := range spec.Options {
				if slices.Contains(o.Names, prev) {
					return pathRoles[o.Arg]
				}
			}
		}
	}
	if v, ok := literal(args[i]); ok && strings.HasPrefix(v, "-") {
		return false
	}
	if len(spec.Operands) == 0 {
		return false
	}
	for _, o := range spec.Operands {
		if !pathRoles[o.Role] {
			return false
		}
	}
	return true
}

// pathVars notes the variables a file argument is made of: each names a
// file, or a directory when a slash follows it.
func (w *walker) pathVars(word *syntax.Word) {
	for _, p := range word.Parts {
		if pe := paramIn(p); pe != nil {
			if u := w.use(pe); u != nil {
				u.dir = true
			}
		}
	}
}

// loopItem notes a for loop's word: a glob it expands, or a command's
// output it splits into names.
func (w *walker) loopItem(word *syntax.Word) {
	for _, p := range word.Parts {
		if cs, ok := p.(*syntax.CmdSubst); ok {
			w.substListing(cs)
		}
	}
	w.globWord(word)
}

// substListing notes what an unquoted $(...) lists, when it runs a
// lister.
func (w *walker) substListing(cs *syntax.CmdSubst) {
	if len(cs.Stmts) == 0 || w.cwd == "" {
		return
	}
	first := firstCall(cs.Stmts[len(cs.Stmts)-1].Cmd)
	if first == nil {
		return
	}
	w.lister(first)
}

// lister notes the directory a lister call lists (its first literal
// operand that is no option, or the working directory); for ls of a
// glob, the glob.
func (w *walker) lister(c *syntax.CallExpr) {
	name, _ := literal(c.Args[0])
	if !listers[name] || w.cwd == "" {
		return
	}
	dir := w.cwd
	if name == "find" {
		w.findListing(c)
		return
	}
	for _, a := range c.Args[1:] {
		v, ok := literal(a)
		if !ok {
			if name == "ls" && w.globWord(a) {
				return // ls *.txt lists what the glob matches
			}
			continue
		}
		if strings.HasPrefix(v, "-") {
			continue
		}
		if !path.IsAbs(v) {
			v = path.Join(w.cwd, v)
		}
		dir = v
		break
	}
	w.f.listings = appendNew(w.f.listings, dir)
}

// findListing notes what find lists: its first starting point (or the
// working directory) and, with -name, the pattern the names match.
func (w *walker) findListing(c *syntax.CallExpr) {
	dir := w.cwd
	args := c.Args[1:]
	for len(args) > 0 {
		v, ok := literal(args[0])
		if !ok || strings.HasPrefix(v, "-") || v == "(" || v == "!" {
			break
		}
		if dir == w.cwd {
			dir = v
			if !path.IsAbs(v) {
				dir = path.Join(w.cwd, v)
			}
		}
		args = args[1:]
	}
	for _, a := range args {
		switch v, _ := literal(a); v {
		case "-path", "-ipath", "-wholename", "-iwholename", "-regex", "-iregex", "-lname", "-ilname":
			return // names chosen by where they are: no name here stands for them
		}
	}
	for i, a := range args {
		v, _ := literal(a)
		if v == "!" || v == "-not" || v == "-o" || v == "-or" {
			break // what find lists is not what one -name matches
		}
		if (v == "-name" || v == "-iname") && i+1 < len(args) {
			if pat, ok := patternWord(args[i+1]); ok && !strings.Contains(pat, "/") {
				g := path.Join(escapeGlob(dir), pat)
				w.globs = appendNew(w.globs, g)
				if w.f.deep == nil {
					w.f.deep = map[string]bool{}
				}
				w.f.deep[g] = true
				return
			}
		}
	}
	w.f.listings = appendNew(w.f.listings, dir)
}

// patternWord returns a word's text as a glob pattern: quotes do not
// protect glob characters from find's own matching.
func patternWord(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(l.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// pipe notes a lister whose output the next command splits into names.
func (w *walker) pipe(b *syntax.BinaryCmd) {
	left := lastCall(b.X.Cmd)
	if left == nil || len(left.Args) == 0 {
		return
	}
	name, _ := literal(left.Args[0])
	if !listers[name] {
		return
	}
	for _, a := range left.Args[1:] {
		if v, _ := literal(a); v == "-print0" || v == "--zero" {
			return
		}
	}
	if right := firstCall(b.Y.Cmd); right != nil && len(right.Args) > 0 {
		if rn, _ := literal(right.Args[0]); rn == "xargs" {
			for _, a := range right.Args[1:] {
				if v, _ := literal(a); v == "-0" || v == "--null" {
					return
				}
			}
		}
	}
	w.lister(left)
}

// globWord notes an argument that expands a glob: its pattern, absolute,
// when its directory is literal. It reports whether the word is a glob.
func (w *walker) globWord(word *syntax.Word) bool {
	if w.cwd == "" {
		return false
	}
	var b strings.Builder
	glob := false
	for _, p := range word.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if hasGlob(p.Value) {
				glob = true
			}
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			b.WriteString(escapeGlob(p.Value))
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return false
				}
				b.WriteString(escapeGlob(l.Value))
			}
		default:
			return false
		}
	}
	if !glob {
		return false
	}
	pat := b.String()
	if strings.HasPrefix(pat, "~") {
		return true
	}
	if !path.IsAbs(pat) {
		pat = path.Join(w.cwd, pat)
	}
	if !hasGlob(path.Dir(pat)) && !strings.Contains(pat, "**") {
		w.globs = appendNew(w.globs, pat)
	}
	return true
}

// visit notes every variable used, and how.
func (w *walker) visit(n syntax.Node) bool {
	switch n := n.(type) {
	case *syntax.Word:
		for i, p := range n.Parts {
			pe := paramIn(p)
			if pe == nil {
				continue
			}
			u := w.use(pe)
			if u == nil {
				continue
			}
			if next := nextLit(n.Parts, i, p); strings.HasPrefix(next, "/") {
				u.dir = true
			}
		}
	case *syntax.ParamExp:
		w.use(n)
	case *syntax.TestClause:
		syntax.Walk(n.X, func(m syntax.Node) bool {
			if u, ok := m.(*syntax.UnaryTest); ok && u.Op == syntax.TsVarSet {
				if wd, ok := u.X.(*syntax.Word); ok {
					if v, ok := literal(wd); ok && w.used[v] != nil {
						w.used[v].unsetMatters = true
					}
				}
			}
			return true
		})
	case *syntax.ArithmCmd, *syntax.ArithmExp:
		// Arithmetic assigns with = and ++; its names are not tried.
		syntax.Walk(n, func(m syntax.Node) bool {
			if l, ok := m.(*syntax.Lit); ok && isName(l.Value) {
				w.assigned[l.Value] = true
			}
			return true
		})
	}
	return true
}

// use records a variable expansion and returns its record, or nil for a
// variable that is not tried.
func (w *walker) use(pe *syntax.ParamExp) *varUse {
	if pe.Param == nil {
		return nil
	}
	name := pe.Param.Value
	if !isName(name) || special[name] || strings.HasPrefix(name, "LC_") || strings.HasPrefix(name, "BASH_") || strings.HasPrefix(name, "NASH_") {
		return nil
	}
	u := w.used[name]
	if u == nil {
		u = &varUse{name: name}
		w.used[name] = u
	}
	if w.unsetSet {
		u.unsetMatters = true
	}
	if pe.Exp != nil {
		switch pe.Exp.Op {
		case syntax.DefaultUnset, syntax.AssignUnset, syntax.ErrorUnset, syntax.AlternateUnset:
			u.unsetMatters = true
		case syntax.AssignUnsetOrNull:
			// ${X:=v} sets it.
		}
		if pe.Exp.Op == syntax.AssignUnset || pe.Exp.Op == syntax.AssignUnsetOrNull {
			w.assigned[name] = true
		}
	}
	return u
}

// paramIn returns the variable expansion p is, or holds (in double
// quotes, first one).
func paramIn(p syntax.WordPart) *syntax.ParamExp {
	switch p := p.(type) {
	case *syntax.ParamExp:
		return p
	case *syntax.DblQuoted:
		for _, q := range p.Parts {
			if pe, ok := q.(*syntax.ParamExp); ok {
				return pe
			}
		}
	}
	return nil
}

// nextLit returns the literal text right after the expansion held by
// parts[i]: the rest of its double quotes, else the next part's.
func nextLit(parts []syntax.WordPart, i int, p syntax.WordPart) string {
	if dq, ok := p.(*syntax.DblQuoted); ok {
		for j, q := range dq.Parts {
			if _, ok := q.(*syntax.ParamExp); ok {
				if j+1 < len(dq.Parts) {
					if l, ok := dq.Parts[j+1].(*syntax.Lit); ok {
						return l.Value
					}
					return ""
				}
				break
			}
		}
	}
	if i+1 < len(parts) {
		switch q := parts[i+1].(type) {
		case *syntax.Lit:
			return q.Value
		case *syntax.DblQuoted:
			if len(q.Parts) > 0 {
				if l, ok := q.Parts[0].(*syntax.Lit); ok {
					return l.Value
				}
			}
		case *syntax.SglQuoted:
			return q.Value
		}
	}
	return ""
}

// literal returns a word's value when it has no expansion.
func literal(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", false
	}
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if hasGlob(p.Value) {
				return "", false
			}
			b.WriteString(unescape(p.Value))
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(l.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// unescape drops the backslashes of an unquoted literal.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// escapeGlob quotes glob characters.
func escapeGlob(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(`*?[\`, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// firstCall and lastCall find the first and last simple command of a
// pipeline.
func firstCall(c syntax.Command) *syntax.CallExpr {
	switch c := c.(type) {
	case *syntax.CallExpr:
		return c
	case *syntax.BinaryCmd:
		return firstCall(c.X.Cmd)
	}
	return nil
}

func lastCall(c syntax.Command) *syntax.CallExpr {
	switch c := c.(type) {
	case *syntax.CallExpr:
		return c
	case *syntax.BinaryCmd:
		return lastCall(c.Y.Cmd)
	}
	return nil
}

func appendNew(list []string, s string) []string {
	for _, q := range list {
		if q == s {
			return list
		}
	}
	return append(list, s)
}
