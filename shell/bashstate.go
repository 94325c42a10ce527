package shell

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/nash-shell/nash/effects"
)

// One bash session across lines. Every typed line runs in a fresh bash in
// a fresh sandbox, yet the person sees one session: the line's bash starts
// from the state the previous line's bash left, and leaves its own.
//
// In: nash writes the state as a bash file that the line's bash reads
// before the line (BASH_ENV; the file puts the person's own BASH_ENV back
// first, so nothing the line starts reads it again). Out: the file sets an
// EXIT trap that writes the state (declare -p, declare -f, alias -p, shopt
// -p, set +o, umask, $PWD, $?) to a directory the sandbox hands back as
// data, never as a change (sandbox.Keep). Between the two, nash parses
// what bash wrote with a real bash parser and keeps only declarations and
// definitions: state is data, and nothing in it runs when the next line
// reads it back. Readonly and special variables (BASH_*, PPID, SECONDS,
// ...) are left for bash to set; values beyond maxVarBytes are dropped,
// and said so.

// sessionPrologue starts every state file. The names it uses start with
// __nash and never enter the state.
const sessionPrologue = `# nash: this session's state, read before the line
if [[ -n ${__NASH_BASH_ENV+x} ]]; then BASH_ENV=$__NASH_BASH_ENV; else builtin unset BASH_ENV; fi
__nash_out=$__NASH_OUT
builtin unset __NASH_OUT __NASH_BASH_ENV
builtin shopt -s expand_aliases
__nash_ret() { return "$1"; }
__nash_save() {
	{ __nash_st=$? __nash_fl=$-; builtin set +xveu; } 2>/dev/null
	{
		builtin printf '%s\0' status "$__nash_st" pwd "$PWD" flags "$__nash_fl" umask
		builtin umask
		builtin printf '\0vars\0'
		builtin declare -p
		builtin printf '\0funcs\0'
		builtin declare -f
		builtin printf '\0aliases\0'
		builtin alias -p
		builtin printf '\0shopt\0'
		builtin shopt -p
		builtin printf '\0set\0'
		builtin set +o
		builtin printf '\0dirs\0'
		builtin declare -p DIRSTACK
		builtin printf '\0'
	} >| "$__nash_out/state"
	builtin wait
}
__nash_rc() {
	local IFS=$' \t\n' __nash_x=0
	builtin shopt -q extdebug && __nash_x=1
	builtin shopt -s extdebug
	builtin declare -F $(builtin compgen -A function) >| "$__nash_out/funcsrc" 2>/dev/null
	(( __nash_x )) || builtin shopt -u extdebug
	builtin complete -p >| "$__nash_out/complete" 2>/dev/null
}
builtin trap '{ __nash_save; } 2>/dev/null' EXIT
`

// rcScript reads the person's ~/.bashrc once, in the sandbox, as an
// interactive bash does (with /etc/bash.bashrc before it), and leaves the
// state it makes; $__NASH_PROLOGUE is a file holding sessionPrologue. The
// interactive bash runs in a session of its own, with no terminal: it
// would otherwise take the terminal's foreground from nash.
const rcScript = `rc=("${BASH:-bash}" -i +m -c '. "$1" || exit; __nash_rc' bash "$__NASH_PROLOGUE")
if command -v setsid >/dev/null; then exec setsid -w "${rc[@]}"; fi
exec "${rc[@]}" </dev/null`

// The files the line's bash leaves in the Keep directory.
const (
	stateFile   = "state"   // the dump (__nash_save)
	funcsrcFile = "funcsrc" // where each function was defined (rcScript only)
	completeRC  = "complete"
)

// Limits on what the state holds between lines.
const (
	maxVarBytes   = 1 << 20 // one variable's declaration
	maxStateBytes = 8 << 20 // all of it
)

// bashState is what a session's bash left, validated: the statements nash
// writes back before the next line, and what nash itself needs to know
// (the exported variables, the names of aliases and functions, the
// directory).
type bashState struct {
	status  int
	pwd     string
	umask   string
	shopt   []string // shopt -s/-u NAME, validated
	vars    []string // declare statements, as bash wrote them
	funcs   []string // function definitions, as bash wrote them
	xfuncs  []string // exported functions
	aliases []string // alias statements, as bash wrote them
	sets    []string // set -o/+o NAME
	dirs    []string // the directory stack below the current directory
	// env is the exported scalar variables; oldpwd is OLDPWD ("" unset);
	// bashEnv is the person's own BASH_ENV, when set.
	env     map[string]string
	oldpwd  string
	bashEnv *string

	aliasNames map[string]bool
	funcNames  map[string]bool
}

// ErrNoState says a line's bash left no state (it was killed, or replaced
// by exec): the session keeps the state it had.
var ErrNoState = errors.New("the line left no shell state")

// specialVars are set by bash itself, or by nash for each line: their
// values are never carried from one line to the next.
var specialVars = map[string]bool{
	"BASH": true, "BASHOPTS": true, "BASHPID": true, "BASH_ALIASES": true, "BASH_ARGC": true,
	"BASH_ARGV": true, "BASH_ARGV0": true, "BASH_CMDS": true, "BASH_COMMAND": true,
	"BASH_EXECUTION_STRING": true, "BASH_LINENO": true, "BASH_REMATCH": true, "BASH_SOURCE": true,
	"BASH_SUBSHELL": true, "BASH_TRAPSIG": true, "BASH_VERSINFO": true, "BASH_VERSION": true,
	"BASH_MONOSECONDS": true, "BASH_ENV": true, "COLUMNS": true, "LINES": true, "DIRSTACK": true,
	"EPOCHREALTIME": true, "EPOCHSECONDS": true, "EUID": true, "FUNCNAME": true, "GROUPS": true,
	"HISTCMD": true, "LINENO": true, "OLDPWD": true, "OPTIND": true, "PIPESTATUS": true, "PPID": true,
	"PWD": true, "RANDOM": true, "SECONDS": true, "SHELLOPTS": true, "SHLVL": true, "SRANDOM": true,
	"UID": true, "_": true, "COPROC": true, "COPROC_PID": true, "READLINE_LINE": true,
	"READLINE_POINT": true, "READLINE_MARK": true, "READLINE_ARGUMENT": true,
}

// isNashName reports whether name is one of nash's own (__nash..., __NASH...).
func isNashName(name string) bool {
	return strings.HasPrefix(name, "__nash") || strings.HasPrefix(name, "__NASH")
}

// setOptions are the set -o options a line's state carries; the others
// (monitor, history, emacs, noexec, ...) belong to an interactive shell or
// would stop the next line from running at all.
var setOptions = map[string]bool{
	"allexport": true, "braceexpand": true, "errexit": true, "errtrace": true, "functrace": true,
	"hashall": true, "keyword": true, "noclobber": true, "noglob": true, "nounset": true,
	"physical": true, "pipefail": true, "posix": true, "verbose": true, "xtrace": true,
}

// flagOptions are the options whose state $- holds: the EXIT trap turns
// them off before writing the state, so set +o no longer shows them.
var flagOptions = map[byte]string{'e': "errexit", 'u': "nounset", 'x': "xtrace", 'v': "verbose"}

// parseDump reads what __nash_save wrote. skip names functions not to keep
// (completion functions read with the rc). The notes say what could not be
// kept, for the person.
func parseDump(b []byte, skip map[string]bool, c *dumpCache) (*bashState, []string, error) {
	sec := map[string]string{}
	for len(b) > 0 {
		name, rest, ok := bytes.Cut(b, []byte{0})
		if !ok {
			return nil, nil, errors.New("the shell state is cut short")
		}
		body, rest, ok := bytes.Cut(rest, []byte{0})
		if !ok {
			return nil, nil, errors.New("the shell state is cut short")
		}
		sec[string(name)] = string(body)
		b = rest
	}
	for _, k := range []string{"status", "pwd", "flags", "umask", "vars", "funcs", "aliases", "shopt", "set", "dirs"} {
		if _, ok := sec[k]; !ok {
			return nil, nil, fmt.Errorf("the shell state lacks %s", k)
		}
	}
	st := &bashState{env: map[string]string{}, aliasNames: map[string]bool{}, funcNames: map[string]bool{}}
	var notes []string
	n, err := strconv.Atoi(sec["status"])
	if err != nil || n < 0 || n > 255 {
		return nil, nil, fmt.Errorf("the shell state has a bad status %q", sec["status"])
	}
	st.status = n
	if p := sec["pwd"]; filepath.IsAbs(p) {
		st.pwd = filepath.Clean(p)
	}
	if u := strings.TrimSpace(sec["umask"]); len(u) >= 3 && len(u) <= 4 && strings.Trim(u, "01234567") == "" {
		st.umask = u
	}
	if err := st.parseVars(sec["vars"], &notes, c); err != nil {
		return nil, nil, err
	}
	st.parseDirs(sec["dirs"])
	c.readFuncs(st, sec["funcs"], skip, &notes)
	c.readAliases(st, sec["aliases"])
	for _, l := range strings.Split(sec["shopt"], "\n") {
		f := strings.Fields(l)
		if len(f) == 3 && f[0] == "shopt" && (f[1] == "-s" || f[1] == "-u") && isOptName(f[2]) &&
			f[2] != "login_shell" && f[2] != "restricted_shell" {
			st.shopt = append(st.shopt, l)
		}
	}
	flags := sec["flags"]
	for _, l := range strings.Split(sec["set"], "\n") {
		f := strings.Fields(l)
		if len(f) != 3 || f[0] != "set" || f[1] != "-o" && f[1] != "+o" || !setOptions[f[2]] || isFlagOption(f[2]) {
			continue
		}
		st.sets = append(st.sets, l)
	}
	for c, name := range flagOptions {
		if strings.IndexByte(flags, c) >= 0 {
			st.sets = append(st.sets, "set -o "+name)
		}
	}
	slices.Sort(st.sets)
	st.sets = slices.Compact(st.sets)
	size := 0
	for _, s := range [][]string{st.vars, st.funcs, st.aliases} {
		for _, x := range s {
			size += len(x)
		}
	}
	if size > maxStateBytes {
		return nil, nil, fmt.Errorf("the shell state is too big to keep (%d bytes)", size)
	}
	return st, notes, nil
}

func isFlagOption(name string) bool {
	for _, n := range flagOptions {
		if n == name {
			return true
		}
	}
	return false
}

func isOptName(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return s != ""
}

// parseVars keeps the declare statements of the variables that are the
// person's, and reads the exported ones and the directory stack.
func (st *bashState) parseVars(src string, notes *[]string, c *dumpCache) error {
	decls, err := c.varDecls(src)
	if err != nil {
		return err
	}
	for _, d := range decls {
		switch name := d.name; {
		case name == "OLDPWD":
			if d.value != nil {
				st.oldpwd = *d.value
			}
		case name == "BASH_ENV":
			if d.value != nil && strings.Contains(d.flags, "x") {
				st.bashEnv = d.value
			}
		case specialVars[name] || isNashName(name) || strings.HasPrefix(name, "COMP_"):
		case len(d.text) > maxVarBytes:
			*notes = append(*notes, fmt.Sprintf("$%s is too big to keep for the next line (%s); it is gone", name, humanBytes(len(d.text))))
		default:
			if strings.Contains(d.flags, "x") && d.value != nil && !strings.ContainsAny(d.flags, "aA") {
				st.env[name] = *d.value
			}
			st.vars = append(st.vars, d.text)
		}
	}
	return nil
}

// varDecl is one declare statement of declare -p's output that isData
// accepted.
type varDecl struct {
	name, flags, text string
	value             *string // a scalar's value
}

// dumpCache remembers what parseDump read of the last lines' states:
// from one line to the next, most of a session's state does not change,
// and most of the time of reading it would go to parsing it again.
type dumpCache struct {
	mu         sync.Mutex
	vars       map[string]*varDecl // by statement text; nil: not a declaration
	funcsSrc   string
	funcs      *bashState // funcs, funcNames, xfuncs
	funcsNotes []string
	skip       map[string]bool // the skip the funcs were read with
	aliasesSrc string
	aliases    *bashState // aliases, aliasNames
}

// maxCachedDecls bounds the cache of declare statements.
const maxCachedDecls = 4096

// varDecls reads declare -p's output: each statement on its own when it
// splits at line starts (the usual case, and the cache's), else the
// whole of it at once.
func (c *dumpCache) varDecls(src string) ([]*varDecl, error) {
	if c != nil {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.vars == nil || len(c.vars) > maxCachedDecls {
			c.vars = map[string]*varDecl{}
		}
	}
	var out []*varDecl
	for _, piece := range splitDecls(src) {
		if c != nil {
			if d, ok := c.vars[piece]; ok {
				if d != nil {
					out = append(out, d)
				}
				continue
			}
		}
		f, err := syntax.NewParser().Parse(strings.NewReader(piece), "")
		if err != nil || len(f.Stmts) != 1 {
			// A value holds a line that starts like a statement.
			return parseDecls(src)
		}
		d := declOf(f.Stmts[0], piece)
		if c != nil {
			c.vars[piece] = d
		}
		if d != nil {
			out = append(out, d)
		}
	}
	return out, nil
}

// splitDecls cuts declare -p's output before each line that starts a
// declare statement.
func splitDecls(src string) []string {
	var out []string
	for src != "" {
		i := strings.Index(src, "\ndeclare -")
		if i < 0 {
			out = append(out, strings.TrimSuffix(src, "\n"))
			break
		}
		out = append(out, src[:i])
		src = src[i+1:]
	}
	return out
}

// parseDecls reads declare -p's output as a whole.
func parseDecls(src string) ([]*varDecl, error) {
	f, err := syntax.NewParser().Parse(strings.NewReader(src), "")
	if err != nil {
		return nil, fmt.Errorf("read the shell's variables: %w", err)
	}
	var out []*varDecl
	for _, s := range f.Stmts {
		if d := declOf(s, src[s.Pos().Offset():s.End().Offset()]); d != nil {
			out = append(out, d)
		}
	}
	return out, nil
}

// declOf is the declaration s (whose source is text), or nil when it is
// not one declare statement with a literal value.
func declOf(s *syntax.Stmt, text string) *varDecl {
	d, ok := s.Cmd.(*syntax.DeclClause)
	if !ok || d.Variant.Value != "declare" || s.Negated || s.Background || s.Coprocess || len(s.Redirs) > 0 {
		return nil
	}
	flags, as, ok := declParts(d)
	if !ok {
		return nil
	}
	v := &varDecl{name: as.Name.Value, flags: flags, text: text}
	if as.Value != nil {
		if lit, err := literal(as.Value); err == nil {
			v.value = &lit
		}
	}
	return v
}

// parseDirs reads the directory stack (declare -p DIRSTACK: declare -p
// alone does not show it) but its first entry, the current directory.
func (st *bashState) parseDirs(src string) {
	f, err := syntax.NewParser().Parse(strings.NewReader(src), "")
	if err != nil || len(f.Stmts) != 1 {
		return
	}
	d, ok := f.Stmts[0].Cmd.(*syntax.DeclClause)
	if !ok {
		return
	}
	_, as, ok := declParts(d)
	if !ok || as.Name.Value != "DIRSTACK" || as.Array == nil {
		return
	}
	for i, e := range as.Array.Elems {
		if v, err := literal(e.Value); err == nil && i > 0 && filepath.IsAbs(v) {
			st.dirs = append(st.dirs, v)
		}
	}
}

// declParts checks that a declare statement declares one variable with a
// literal value (no expansion, no substitution: data) and returns its
// flags and assignment.
func declParts(d *syntax.DeclClause) (flags string, as *syntax.Assign, ok bool) {
	for _, a := range d.Args {
		switch {
		case a.Naked && a.Name == nil && a.Value != nil:
			fl := a.Value.Lit()
			if as != nil || !strings.HasPrefix(fl, "-") || strings.Trim(fl[1:], "-aAfFgiIlnrtux") != "" {
				return "", nil, false
			}
			flags += fl[1:]
		case a.Name != nil && as == nil && syntax.ValidName(a.Name.Value) && a.Index == nil && !a.Append:
			as = a
		default:
			return "", nil, false
		}
	}
	if as == nil || !isData(as) {
		return "", nil, false
	}
	return flags, as, true
}

// isData reports whether an assignment's value is literal text only.
func isData(as *syntax.Assign) bool {
	ok := true
	check := func(n syntax.Node) bool {
		switch n := n.(type) {
		case nil, *syntax.Word, *syntax.Lit, *syntax.SglQuoted, *syntax.ArrayExpr, *syntax.ArrayElem, *syntax.Comment:
		case *syntax.DblQuoted:
			for _, p := range n.Parts {
				if _, lit := p.(*syntax.Lit); !lit {
					ok = false
				}
			}
		default:
			ok = false
		}
		return ok
	}
	if as.Value != nil {
		syntax.Walk(as.Value, check)
	}
	if as.Array != nil {
		syntax.Walk(as.Array, check)
	}
	return ok
}

// literal is the value of a word that isData accepted.
func literal(w *syntax.Word) (string, error) {
	return expand.Literal(&expand.Config{}, w)
}

// readFuncs reads the functions of a state into st, from the cache when
// they are those of the last state read.
func (c *dumpCache) readFuncs(st *bashState, src string, skip map[string]bool, notes *[]string) {
	if c == nil {
		st.parseFuncs(src, skip, notes)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.funcs == nil || c.funcsSrc != src || !sameSet(c.skip, skip) {
		f := &bashState{funcNames: map[string]bool{}}
		var n []string
		f.parseFuncs(src, skip, &n)
		c.funcsSrc, c.funcs, c.funcsNotes, c.skip = src, f, n, skip
	}
	st.funcs, st.xfuncs, st.funcNames = c.funcs.funcs, c.funcs.xfuncs, c.funcs.funcNames
	*notes = append(*notes, c.funcsNotes...)
}

// readAliases reads the aliases of a state into st, from the cache when
// they are those of the last state read.
func (c *dumpCache) readAliases(st *bashState, src string) {
	if c == nil {
		st.parseAliases(src)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.aliases == nil || c.aliasesSrc != src {
		a := &bashState{aliasNames: map[string]bool{}}
		a.parseAliases(src)
		c.aliasesSrc, c.aliases = src, a
	}
	st.aliases, st.aliasNames = c.aliases.aliases, c.aliases.aliasNames
}

func sameSet(a, b map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}

// parseFuncs keeps the function definitions but nash's own and those in
// skip. A definition nash's parser cannot read is dropped, and said so.
func (st *bashState) parseFuncs(src string, skip map[string]bool, notes *[]string) {
	for _, chunk := range funcChunks(src) {
		name, _, _ := strings.Cut(chunk, " ")
		if isNashName(name) || skip[name] {
			continue
		}
		f, err := syntax.NewParser().Parse(strings.NewReader(chunk), "")
		if err != nil || len(f.Stmts) == 0 || len(f.Stmts) > 2 {
			*notes = append(*notes, fmt.Sprintf("function %s could not be kept for the next line", effects.Escape(name)))
			continue
		}
		fd, ok := f.Stmts[0].Cmd.(*syntax.FuncDecl)
		if !ok || fd.Name == nil || fd.Name.Value != name || len(f.Stmts[0].Redirs) > 0 {
			continue
		}
		if len(f.Stmts) == 2 {
			// An exported function: declare -f says so after it.
			if !isExportDecl(f.Stmts[1], name) {
				continue
			}
			st.xfuncs = append(st.xfuncs, name)
		}
		st.funcs = append(st.funcs, chunk[:f.Stmts[0].End().Offset()])
		st.funcNames[name] = true
	}
}

// isExportDecl reports whether s is "declare -fx name".
func isExportDecl(s *syntax.Stmt, name string) bool {
	d, ok := s.Cmd.(*syntax.DeclClause)
	if !ok || d.Variant.Value != "declare" || len(d.Args) != 2 || len(s.Redirs) > 0 {
		return false
	}
	a, b := d.Args[0], d.Args[1]
	return a.Naked && a.Value != nil && a.Value.Lit() == "-fx" && b.Naked && b.Name != nil && b.Name.Value == name
}

// funcChunks splits declare -f's output into one definition each: every
// definition starts with a line "NAME () " and ends with a line "}".
func funcChunks(src string) []string {
	var out []string
	start := -1
	for i := 0; i < len(src); {
		end := strings.IndexByte(src[i:], '\n')
		if end < 0 {
			end = len(src) - i
		}
		line := src[i : i+end]
		if strings.HasSuffix(line, " () ") && !strings.ContainsAny(line[:len(line)-4], " \t") && len(line) > 4 {
			if start >= 0 {
				out = append(out, src[start:i])
			}
			start = i
		}
		i += end + 1
	}
	if start >= 0 {
		out = append(out, src[start:])
	}
	return out
}

// parseAliases keeps the alias statements that define one alias as data.
func (st *bashState) parseAliases(src string) {
	f, err := syntax.NewParser().Parse(strings.NewReader(src), "")
	if err != nil {
		return
	}
	for _, s := range f.Stmts {
		c, ok := s.Cmd.(*syntax.CallExpr)
		if !ok || len(c.Assigns) > 0 || len(c.Args) != 2 || c.Args[0].Lit() != "alias" || len(s.Redirs) > 0 || s.Negated || s.Background {
			continue
		}
		w := c.Args[1]
		if !isData(&syntax.Assign{Value: w}) {
			continue
		}
		v, err := literal(w)
		if err != nil {
			continue
		}
		name, _, ok := strings.Cut(v, "=")
		if !ok || name == "" || isNashName(name) {
			continue
		}
		st.aliases = append(st.aliases, src[s.Pos().Offset():s.End().Offset()])
		st.aliasNames[name] = true
	}
}

// script is the state file that restores st before a line: the prologue,
// then options that change how the rest is read (extglob), variables,
// functions (before aliases, which would expand in their bodies), aliases,
// the directory stack, the umask, and last the set options and $?, so that
// nothing of nash's is traced or stopped by them.
func (st *bashState) script() string {
	var b strings.Builder
	b.WriteString(sessionPrologue)
	if st == nil {
		return b.String()
	}
	for _, group := range [][]string{st.shopt, st.vars, st.funcs} {
		for _, s := range group {
			b.WriteString(s)
			b.WriteByte('\n')
		}
	}
	if len(st.xfuncs) > 0 {
		b.WriteString("builtin declare -fx " + strings.Join(st.xfuncs, " ") + "\n")
	}
	for _, s := range st.aliases {
		b.WriteString(s)
		b.WriteByte('\n')
	}
	for i := len(st.dirs) - 1; i >= 0; i-- {
		if q, err := syntax.Quote(st.dirs[i], syntax.LangBash); err == nil {
			fmt.Fprintf(&b, "builtin pushd -n -- %s >/dev/null 2>&1\n", q)
		}
	}
	if st.umask != "" {
		fmt.Fprintf(&b, "builtin umask %s\n", st.umask)
	}
	b.WriteString("{ ")
	for _, s := range st.sets {
		b.WriteString("builtin " + s + "; ")
	}
	fmt.Fprintf(&b, "__nash_ret %d && :; } 2>/dev/null\n", st.status)
	return b.String()
}

func humanBytes(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f kB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
