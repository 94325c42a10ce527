package effects

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// maxAlternatives bounds how many values one word may expand to through
// brace expansion and loop variables; past it the word becomes a glob.
const maxAlternatives = 32

// Analyze predicts what script does, without running it: the commands it
// can run (through wrappers, substitutions, functions and strings run as
// scripts), the paths it reads, writes, creates and deletes, its network
// use, privilege and effects the sandbox cannot undo, and a risk level
// with a reason for each finding. The script is parsed as bash. A script
// that does not parse gives a *ParseError.
//
// Analysis is static: globs stay globs, and paths that depend on variables
// or command output are marked dynamic rather than guessed. The report is a
// prediction; compare it with what a sandboxed run did using Compare.
func Analyze(script string, opts ...Option) (*Report, error) {
	cfg := config{maxDepth: 8}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.dir != "" {
		cfg.dir = path.Clean(cfg.dir)
	}
	if cfg.home != "" {
		cfg.home = path.Clean(cfg.home)
	}
	if cfg.files != nil {
		// A view of the disk without the working directory in it is not
		// the one the script runs on: it tells nothing.
		if fi, err := fs.Stat(cfg.files, fsName(cfg.dir)); cfg.dir == "" || err != nil || !fi.IsDir() {
			cfg.files = nil
		}
	}
	f, err := parse(script)
	if err != nil {
		return nil, err
	}
	a := &analyzer{
		cfg:   cfg,
		rep:   &Report{Commands: []Command{}, Paths: []PathUse{}, Findings: []Finding{}},
		cwd:   cfg.dir,
		vars:  map[string][]wordVal{},
		funcs: map[string]bool{},
		seen:  map[pathKey]int{},
		src:   script,
	}
	a.stmts(f.Stmts)
	for _, fd := range a.rep.Findings {
		a.rep.Risk = max(a.rep.Risk, fd.Risk)
	}
	return a.rep, nil
}

// parse parses script as bash, turning a syntax error into a *ParseError.
func parse(script string) (*syntax.File, error) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(script), "")
	if err == nil {
		return f, nil
	}
	pe := &ParseError{Msg: err.Error()}
	var se syntax.ParseError
	var le syntax.LangError
	var pos syntax.Pos
	switch {
	case errors.As(err, &se):
		pos, pe.Msg, pe.Incomplete = se.Pos, se.Text, se.Incomplete
	case errors.As(err, &le):
		pos, pe.Msg = le.Pos, le.Feature+" is not supported in bash"
	}
	if pos.IsValid() {
		pe.Line, pe.Col = int(pos.Line()), int(pos.Col())
	}
	if pe.Line > 0 {
		lines := strings.Split(script, "\n")
		if pe.Line <= len(lines) {
			pe.Text = lines[pe.Line-1]
		}
	}
	return nil, pe
}

type pathKey struct {
	path   string
	access Access
	glob   bool
}

// analyzer walks one script. Nested scripts (sh -c, eval) share it.
type analyzer struct {
	cfg      config
	rep      *Report
	cwd      string // current directory; "" when unknown
	cwdDyn   bool   // the current directory is only known at run time
	dirStack []string
	vars     map[string][]wordVal
	funcs    map[string]bool
	// copied maps a path cp copied (as shown) to where it copied it, so
	// that a later rm of it reads as the move it completes.
	copied map[string]string
	// counted caches what count found per pattern (-1: not known).
	counted map[string]int
	seen    map[pathKey]int
	src     string   // source of the script being walked, for positions
	depth   int      // nesting of strings run as scripts
	line    int      // when depth > 0, the line of the outer command
	col     int      // and its column
	via     []string // wrappers around the commands being walked
	network int      // network findings so far, to spot curl | sh
	// eachShown is the placeholder ({}) that the variable eachVar stands
	// for in the script being walked, "" when none.
	eachShown string
	// fetching is set while a command that downloads is analysed: what it
	// writes came from the network.
	fetching bool
	// root counts the wrappers that run what is being walked as root
	// (sudo without -u).
	root int
	// downloaded holds the paths (as shown) that a download wrote.
	downloaded map[string]bool
	// unsure is set once the script may have changed paths the analysis
	// cannot name (a dynamic or recursive write, an unknown command):
	// from then on, Files no longer tells what exists.
	unsure bool

	// cur is the simple command being analysed, pipeCall the pipeline
	// member being walked. pipeIn holds the paths the member reads as
	// lines on its input (what find printed before it), nil when
	// unknown; the member's command sets pipeOut to the paths it prints.
	cur, pipeCall *syntax.CallExpr
	pipeIn        []wordVal
	pipeOut       []wordVal
	// pipeLoop is the pipeline member being walked when it is a while
	// loop, readIn what a read in its condition reads (pipeIn).
	pipeLoop *syntax.WhileClause
	readIn   []wordVal
	// fileLoop is the while loop being walked whose input is a file
	// (while read f; do ...; done < list).
	fileLoop *syntax.WhileClause
}

// wordVal is one value a word may take.
type wordVal struct {
	text      string // quotes removed; dynamic parts as source text
	pattern   string // for matching: live globs, escaped literals, anyMark
	lit       bool   // text is exactly the value
	glob      bool   // holds live glob characters
	dynamic   bool   // depends on run-time values
	procSubst bool   // a <(...) or >(...): a pipe, not a file
	src       string // the word as written, when it comes from the script
	alt       bool   // a second or later value of the same word
	// each is set for a value that stands for one of several paths, one
	// per run of the command: a loop variable, what xargs -I or find
	// -exec ... ; put in for {}.
	each bool
	// fromNet is set for a value made by a substitution that downloads:
	// "$(curl -fsSL URL)", <(wget -O- URL).
	fromNet bool
}

func (a *analyzer) stmts(ss []*syntax.Stmt) {
	for _, s := range ss {
		a.stmt(s)
	}
}

func (a *analyzer) stmt(s *syntax.Stmt) {
	if s == nil {
		return
	}
	if s.Cmd != nil {
		old := a.fileLoop
		if w, ok := s.Cmd.(*syntax.WhileClause); ok && readsFile(s) {
			a.fileLoop = w
		}
		a.command(s.Cmd)
		a.fileLoop = old
	}
	label := "a redirection"
	if call, ok := s.Cmd.(*syntax.CallExpr); ok && len(call.Args) > 0 {
		if name := call.Args[0].Lit(); name != "" {
			label = path.Base(name)
		}
	}
	a.redirects(s, label)
	if reads, _ := readsScriptFromStdin(s); reads {
		a.stdinScript(s, label)
	}
}

// stdinScript analyses a script a shell reads from a here-document or
// here-string: sh <<'EOF' ... EOF.
func (a *analyzer) stdinScript(s *syntax.Stmt, label string) {
	for _, r := range s.Redirs {
		w := r.Hdoc
		if r.Op == syntax.WordHdoc {
			w = r.Word
		}
		if w == nil || (r.Op != syntax.Hdoc && r.Op != syntax.DashHdoc && r.Op != syntax.WordHdoc) {
			continue
		}
		line, col := a.pos(s)
		vals := a.wordVals(w)
		if len(vals) != 1 || !vals[0].lit {
			a.finding(WritesInside, "dynamic", fmt.Sprintf("%s runs a script known only at run time; the sandbox will show what it changes", label), line)
			continue
		}
		a.script(vals[0].text, label+" <<", line, col)
	}
}

// pos returns the line and column to report for node n.
func (a *analyzer) pos(n syntax.Node) (int, int) {
	if a.depth > 0 {
		return a.line, a.col
	}
	p := n.Pos()
	return int(p.Line()), int(p.Col())
}

// source returns the source text of n.
func (a *analyzer) source(n syntax.Node) (src string) {
	// A brace expansion with an empty element ({,}) has no position:
	// syntax's Pos indexes its missing first word.
	defer func() {
		if recover() != nil {
			src = "?"
		}
	}()
	start, end := int(n.Pos().Offset()), int(n.End().Offset())
	if start < 0 || end > len(a.src) || start > end {
		return "?"
	}
	return a.src[start:end]
}

// withVia runs f with one more wrapper name on the via stack.
func (a *analyzer) withVia(name string, f func()) {
	a.via = append(a.via, name)
	f()
	a.via = a.via[:len(a.via)-1]
}

// subshell runs f with the current directory and variables restored
// afterwards, as for ( ... ) and pipeline members.
func (a *analyzer) subshell(f func()) {
	cwd, dyn, stack := a.cwd, a.cwdDyn, append([]string(nil), a.dirStack...)
	vars := make(map[string][]wordVal, len(a.vars))
	for k, v := range a.vars {
		vars[k] = v
	}
	f()
	a.cwd, a.cwdDyn, a.dirStack, a.vars = cwd, dyn, stack, vars
}

func (a *analyzer) command(cmd syntax.Command) {
	switch c := cmd.(type) {
	case *syntax.CallExpr:
		a.call(c)
	case *syntax.BinaryCmd:
		if c.Op == syntax.Pipe || c.Op == syntax.PipeAll {
			a.pipeline(c)
			return
		}
		a.stmt(c.X)
		a.stmt(c.Y)
	case *syntax.Subshell:
		a.subshell(func() { a.stmts(c.Stmts) })
	case *syntax.Block:
		a.stmts(c.Stmts)
	case *syntax.IfClause:
		for ic := c; ic != nil; ic = ic.Else {
			a.stmts(ic.Cond)
			a.stmts(ic.Then)
		}
	case *syntax.WhileClause:
		switch {
		case c.Until:
		case c == a.pipeLoop && a.pipeIn != nil:
			// find ... | while read f: f is each path find printed.
			a.readIn = eachOf(a.pipeIn)
		case c == a.pipeLoop || c == a.fileLoop:
			// cat list | while read f, while read f; ...; done < list:
			// f is each line of the input.
			a.readIn = []wordVal{inputVal()}
		}
		a.stmts(c.Cond)
		a.readIn = nil
		a.stmts(c.Do)
	case *syntax.ForClause:
		if wi, ok := c.Loop.(*syntax.WordIter); ok && wi.Name != nil {
			var vals []wordVal
			for _, w := range wi.Items {
				vals = append(vals, a.wordVals(w)...)
			}
			if params, ok := a.vars["@"]; ok && !wi.InPos.IsValid() {
				a.vars[wi.Name.Value] = eachOf(params) // for f; do: the positional parameters
			} else if !wi.InPos.IsValid() || len(vals) == 0 || len(vals) > maxAlternatives || anyDynamic(vals) {
				delete(a.vars, wi.Name.Value)
			} else {
				a.vars[wi.Name.Value] = eachOf(vals)
			}
		} else {
			a.substs(c.Loop)
		}
		a.stmts(c.Do)
	case *syntax.CaseClause:
		a.wordVals(c.Word)
		for _, it := range c.Items {
			a.stmts(it.Stmts)
		}
	case *syntax.FuncDecl:
		if c.Name != nil {
			a.funcs[c.Name.Value] = true
		}
		name := "function"
		if c.Name != nil {
			name = "function " + c.Name.Value
		}
		a.withVia(name, func() { a.subshell(func() { a.stmt(c.Body) }) })
	case *syntax.DeclClause:
		for _, as := range c.Args {
			a.assign(as)
		}
	case *syntax.TimeClause:
		a.stmt(c.Stmt)
	case *syntax.CoprocClause:
		a.stmt(c.Stmt)
	case *syntax.TestDecl:
		a.stmt(c.Body)
	default: // ArithmCmd, TestClause, LetClause
		a.substs(c)
	}
}

// substs analyses the command and process substitutions anywhere in n.
func (a *analyzer) substs(n syntax.Node) {
	if n == nil {
		return
	}
	syntax.Walk(n, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CmdSubst:
			a.withVia("$(...)", func() { a.subshell(func() { a.stmts(n.Stmts) }) })
			return false
		case *syntax.ProcSubst:
			a.withVia("<(...)", func() { a.subshell(func() { a.stmts(n.Stmts) }) })
			return false
		}
		return true
	})
}

// pipeline walks a | b | c, each in a subshell, and flags code from the
// network piped into a shell.
func (a *analyzer) pipeline(c *syntax.BinaryCmd) {
	var parts []*syntax.Stmt
	var flatten func(s *syntax.Stmt)
	flatten = func(s *syntax.Stmt) {
		if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) && len(s.Redirs) == 0 {
			flatten(b.X)
			flatten(b.Y)
			return
		}
		parts = append(parts, s)
	}
	flatten(c.X)
	flatten(c.Y)
	before := a.network
	oldCall, oldIn, oldOut, oldLoop := a.pipeCall, a.pipeIn, a.pipeOut, a.pipeLoop
	var in []wordVal
	for i, s := range parts {
		call, _ := s.Cmd.(*syntax.CallExpr)
		for _, r := range s.Redirs {
			if r.Op == syntax.RdrIn || r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc || r.Op == syntax.WordHdoc {
				in = nil // reads something else than the pipe
			}
		}
		loop, _ := s.Cmd.(*syntax.WhileClause)
		a.pipeCall, a.pipeIn, a.pipeOut, a.pipeLoop = call, in, nil, loop
		a.withVia("|", func() { a.subshell(func() { a.stmt(s) }) })
		switch {
		case a.pipeOut != nil:
			in = a.pipeOut
		case !passesLines(call):
			in = nil
		}
		if i > 0 && a.network > before {
			if reads, root := readsScriptFromStdin(s); reads {
				line, _ := a.pos(s)
				a.runsDownloaded(line, root)
			}
		}
	}
	a.pipeCall, a.pipeIn, a.pipeOut, a.pipeLoop = oldCall, oldIn, oldOut, oldLoop
}

// passesLines reports whether a pipeline member prints only lines of its
// input, so the paths it reads are the paths it prints: sort, head,
// grep without -c or -o, and the like, reading their input.
func passesLines(c *syntax.CallExpr) bool {
	if c == nil || len(c.Args) == 0 {
		return false
	}
	name := path.Base(c.Args[0].Lit())
	e := lookup(name)
	if e == nil || !e.spec.Filter {
		return false
	}
	withArg := e.opts.arg
	grep := strings.HasSuffix(name, "grep")
	operands := 0
	for i := 1; i < len(c.Args); i++ {
		lit := c.Args[i].Lit()
		switch {
		case lit == "--":
		case strings.HasPrefix(lit, "--"):
			if lit == "--count" || strings.HasPrefix(lit, "--only") || strings.HasPrefix(lit, "--files") ||
				strings.HasPrefix(lit, "--output") || lit == "--line-number" || lit == "--with-filename" {
				return false
			}
			if grep && (lit == "--regexp" || lit == "--file") {
				operands++ // the pattern is given
			}
		case strings.HasPrefix(lit, "-") && len(lit) > 1:
			flags := lit[1:]
			if grep && strings.ContainsAny(flags, "coLlnbHrR") || name == "uniq" && strings.Contains(flags, "c") ||
				(name == "sort" || name == "shuf") && strings.Contains(flags, "o") {
				return false // prints other things than its input lines
			}
			if grep && strings.ContainsAny(flags, "ef") {
				operands++
			}
			if strings.ContainsAny(flags[len(flags)-1:], withArg) {
				i++ // its argument follows
			}
		default:
			operands++
		}
	}
	if grep {
		return operands <= 1 // only the pattern: grep reads its input
	}
	return operands == 0
}

// readsScriptFromStdin reports whether s runs a shell or interpreter that
// reads its program from standard input, and whether it runs it as root
// (sudo bash).
func readsScriptFromStdin(s *syntax.Stmt) (reads, root bool) {
	call, ok := s.Cmd.(*syntax.CallExpr)
	if !ok {
		return false, false
	}
	args := call.Args
	for len(args) > 0 {
		e := lookup(args[0].Lit())
		switch {
		case e == nil:
		case e.spec.Class == ClassRuns && e.spec.OptionsFirst && e.spec.Name != "xargs" && e.spec.Name != "parallel" && e.spec.Name != "watch":
			// A wrapper: what it runs reads the script.
			if e.spec.Name == "sudo" || e.spec.Name == "doas" || e.spec.Name == "pkexec" {
				root = !slices.ContainsFunc(args[1:], func(w *syntax.Word) bool {
					l := w.Lit()
					return l == "-u" || strings.HasPrefix(l, "--user")
				})
			}
			args = skipOptions(args[1:], e.opts)
			continue
		case e.spec.StdinScript:
			for _, w := range args[1:] {
				lit := w.Lit()
				if lit == "-" || lit == "-s" {
					return true, root
				}
				if !strings.HasPrefix(lit, "-") {
					return false, false
				}
			}
			return true, root
		}
		return false, false
	}
	return false, false
}

// runsDownloaded records that the script runs code it downloaded, which
// nothing can check before it runs and the sandbox cannot vouch for.
func (a *analyzer) runsDownloaded(line int, root bool) {
	reason := "runs code downloaded from the network"
	if root || a.root > 0 {
		reason += " as root"
	}
	a.finding(CannotUndo, "irreversible", reason, line)
}

// skipOptions returns args without the options at their start, and the
// values of those that take one, as spec says.
func skipOptions(args []*syntax.Word, spec optSpec) []*syntax.Word {
	for len(args) > 0 {
		lit := args[0].Lit()
		switch {
		case lit == "--":
			return args[1:]
		case !strings.HasPrefix(lit, "-") || lit == "-":
			return args
		case strings.HasPrefix(lit, "--"):
			name, _, hasVal := strings.Cut(lit[2:], "=")
			if !hasVal && contains(spec.long, name) && len(args) > 1 {
				args = args[1:]
			}
		default:
			last := lit[len(lit)-1:]
			if len(lit) == 2 && strings.Contains(spec.arg, last) && len(args) > 1 {
				args = args[1:]
			}
		}
		args = args[1:]
	}
	return args
}

// assign records a variable assignment's value when it is known.
func (a *analyzer) assign(as *syntax.Assign) {
	if as.Array != nil {
		a.substs(as.Array)
	}
	if as.Name == nil {
		if as.Value != nil {
			a.wordVals(as.Value)
		}
		return
	}
	name := as.Name.Value
	if as.Value == nil || as.Append || as.Index != nil || as.Array != nil {
		delete(a.vars, name)
		if as.Value != nil {
			a.wordVals(as.Value)
		}
		return
	}
	vals := a.wordVals(as.Value)
	if len(vals) == 1 && vals[0].lit && !vals[0].procSubst {
		// Globs do not expand in assignments; they may when the
		// variable is used unquoted (see param).
		a.vars[name] = []wordVal{literal(vals[0].text)}
		return
	}
	delete(a.vars, name)
}

// eachOf returns the values marked as standing for one path per run.
func eachOf(vals []wordVal) []wordVal {
	out := make([]wordVal, len(vals))
	for i, v := range vals {
		v.each = true
		out[i] = v
	}
	return out
}

// inputVal is a line read from a command's input: any path, one per run.
func inputVal() wordVal {
	return wordVal{text: inputText, pattern: string(anyMark), dynamic: true, each: true}
}

// readsFile reports whether a statement's input is redirected from a file
// (< list), not from a here-document.
func readsFile(s *syntax.Stmt) bool {
	for _, r := range s.Redirs {
		if r.Op == syntax.RdrIn {
			return true
		}
	}
	return false
}

// anyDynamic reports whether any value depends on run time.
func anyDynamic(vals []wordVal) bool {
	for _, v := range vals {
		if v.dynamic || v.procSubst {
			return true
		}
	}
	return false
}

// call walks a simple command.
func (a *analyzer) call(c *syntax.CallExpr) {
	if len(c.Args) == 0 {
		for _, as := range c.Assigns {
			a.assign(as)
		}
		return
	}
	for _, as := range c.Assigns {
		if as.Value != nil {
			a.wordVals(as.Value)
		}
		if as.Array != nil {
			a.substs(as.Array)
		}
	}
	// The position first: expanding braces ({,}) changes the words, and an
	// empty brace element has none.
	line, col := a.pos(c.Args[0])
	var args []wordVal
	for _, w := range c.Args {
		args = append(args, a.wordVals(w)...)
	}
	if len(args) == 0 {
		return
	}
	old := a.cur
	a.cur = c
	a.exec(args, line, col)
	a.cur = old
}

// piped reports whether the command being analysed is a pipeline member
// itself, not one nested in it, so the pipeline's input and output are
// its own.
func (a *analyzer) piped() bool { return a.cur != nil && a.cur == a.pipeCall }

// redirects records the paths a statement's redirections touch.
func (a *analyzer) redirects(s *syntax.Stmt, label string) {
	for _, r := range s.Redirs {
		if r.Hdoc != nil {
			a.wordVals(r.Hdoc)
		}
		if r.Word == nil {
			continue
		}
		vals := a.wordVals(r.Word)
		line, _ := a.pos(r)
		for _, v := range vals {
			if v.procSubst {
				continue
			}
			switch r.Op {
			case syntax.RdrOut, syntax.AppOut, syntax.RdrClob, syntax.AppClob,
				syntax.RdrAll, syntax.AppAll, syntax.RdrAllClob, syntax.AppAllClob:
				if !a.parentMissing(v, label, line) {
					a.path(v, Write, false, label, line)
				}
			case syntax.RdrIn:
				a.path(v, Read, false, label, line)
			case syntax.RdrInOut:
				a.path(v, Read, false, label, line)
				a.path(v, Write, false, label, line)
			case syntax.DplOut:
				if v.lit && !isFD(v.text) {
					a.path(v, Write, false, label, line)
				}
			}
		}
	}
}

// isFD reports whether s names a file descriptor in a duplication: 2, -, 1-.
func isFD(s string) bool {
	s = strings.TrimSuffix(s, "-")
	if s == "" {
		return true
	}
	_, err := strconv.Atoi(s)
	return err == nil
}

// wordVals evaluates a word statically into the values it may take and
// analyses the substitutions inside it.
func (a *analyzer) wordVals(w *syntax.Word) []wordVal {
	if w == nil || len(w.Parts) == 0 {
		return nil
	}
	src := a.source(w)
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok && strings.Contains(l.Value, "{") {
			syntax.SplitBraces(w)
			break
		}
	}
	vals := []wordVal{{lit: true}}
	for i, p := range w.Parts {
		vals = a.appendPart(vals, p, i == 0, false)
	}
	for i := range vals {
		vals[i].src, vals[i].alt = src, i > 0
	}
	return vals
}

// appendPart extends every value in vals with one word part.
func (a *analyzer) appendPart(vals []wordVal, part syntax.WordPart, first, quoted bool) []wordVal {
	switch p := part.(type) {
	case *syntax.Lit:
		text, pattern, glob := a.lit(p.Value, first, quoted)
		for i := range vals {
			vals[i].text += text
			vals[i].pattern += pattern
			vals[i].glob = vals[i].glob || glob
		}
	case *syntax.SglQuoted:
		v := p.Value
		if p.Dollar {
			v = unquoteANSIC(v)
		}
		for i := range vals {
			vals[i].text += v
			vals[i].pattern += escapeGlob(v)
		}
	case *syntax.DblQuoted:
		for j, ip := range p.Parts {
			vals = a.appendPart(vals, ip, first && j == 0, true)
		}
	case *syntax.ParamExp:
		if sub, ok := a.param(p); ok {
			if !quoted {
				sub = globbed(sub)
			}
			return cross(vals, sub)
		}
		a.substs(p)
		vals = appendDynamic(vals, a.source(p))
	case *syntax.CmdSubst:
		before := a.network
		a.withVia("$(...)", func() { a.subshell(func() { a.stmts(p.Stmts) }) })
		vals = appendDynamic(vals, a.source(p))
		for i := range vals {
			vals[i].fromNet = vals[i].fromNet || a.network > before
		}
	case *syntax.ProcSubst:
		before := a.network
		a.withVia("<(...)", func() { a.subshell(func() { a.stmts(p.Stmts) }) })
		vals = appendDynamic(vals, a.source(p))
		for i := range vals {
			vals[i].procSubst = true
			vals[i].fromNet = vals[i].fromNet || a.network > before
		}
	case *syntax.ArithmExp:
		a.substs(p)
		vals = appendDynamic(vals, a.source(p))
	case *syntax.ExtGlob:
		src := a.source(p)
		for i := range vals {
			vals[i].text += src
			vals[i].pattern += "*"
			vals[i].glob = true
		}
	case *syntax.BraceExp:
		vals = a.brace(vals, p)
	default:
		vals = appendDynamic(vals, a.source(part))
	}
	return vals
}

// appendDynamic extends every value with a part known only at run time.
func appendDynamic(vals []wordVal, src string) []wordVal {
	for i := range vals {
		vals[i].text += src
		vals[i].pattern += string(anyMark)
		vals[i].dynamic = true
		vals[i].lit = false
	}
	return vals
}

// cross extends every value in vals with every value in sub.
func cross(vals, sub []wordVal) []wordVal {
	if len(vals)*len(sub) > maxAlternatives {
		for i := range vals {
			vals[i].text += sub[0].text
			vals[i].pattern += "*"
			vals[i].glob = true
		}
		return vals
	}
	out := make([]wordVal, 0, len(vals)*len(sub))
	for _, v := range vals {
		for _, s := range sub {
			n := v
			n.text += s.text
			n.pattern += s.pattern
			n.lit = v.lit && s.lit && !s.glob
			n.glob = v.glob || s.glob
			n.dynamic = v.dynamic || s.dynamic
			n.each = v.each || s.each
			n.fromNet = v.fromNet || s.fromNet
			out = append(out, n)
		}
	}
	return out
}

// globbed returns the values as an unquoted expansion sees them: glob
// characters in a literal value are live.
func globbed(vals []wordVal) []wordVal {
	out := make([]wordVal, len(vals))
	for i, v := range vals {
		if v.lit && strings.ContainsAny(v.text, "*?[") {
			_, pat, glob := (&analyzer{}).lit(v.text, false, false)
			v.pattern, v.glob = pat, glob
		}
		out[i] = v
	}
	return out
}

// brace expands a brace expression ({a,b} or {1..3}).
func (a *analyzer) brace(vals []wordVal, b *syntax.BraceExp) []wordVal {
	var sub []wordVal
	if b.Sequence {
		if len(b.Elems) >= 2 {
			from, err1 := strconv.Atoi(b.Elems[0].Lit())
			to, err2 := strconv.Atoi(b.Elems[1].Lit())
			if err1 == nil && err2 == nil && abs(to-from) < maxAlternatives {
				step := 1
				if to < from {
					step = -1
				}
				for i := from; ; i += step {
					s := strconv.Itoa(i)
					sub = append(sub, wordVal{text: s, pattern: s, lit: true})
					if i == to {
						break
					}
				}
			}
		}
	} else {
		for _, e := range b.Elems {
			sub = append(sub, a.wordVals(e)...)
		}
	}
	if len(sub) == 0 {
		sub = []wordVal{{text: "{...}", pattern: "*", glob: true}}
	}
	return cross(vals, sub)
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// lit turns the source of a literal word part into its value and pattern,
// expanding a leading tilde.
func (a *analyzer) lit(src string, first, quoted bool) (text, pattern string, glob bool) {
	var t, p strings.Builder
	i := 0
	if first && !quoted && strings.HasPrefix(src, "~") {
		end := strings.IndexByte(src, '/')
		if end < 0 {
			end = len(src)
		}
		if end == 1 && a.cfg.home != "" {
			t.WriteString(a.cfg.home)
			p.WriteString(escapeGlob(a.cfg.home))
			i = 1
		}
	}
	for ; i < len(src); i++ {
		c := src[i]
		if c == '\\' && i+1 < len(src) {
			n := src[i+1]
			if !quoted || strings.IndexByte("$`\"\\\n", n) >= 0 {
				i++
				if n == '\n' {
					continue
				}
				t.WriteByte(n)
				p.WriteString(escapeGlob(src[i : i+1]))
				continue
			}
		}
		if !quoted && (c == '*' || c == '?' || (c == '[' && strings.IndexByte(src[i+1:], ']') >= 0)) {
			glob = true
			t.WriteByte(c)
			p.WriteByte(c)
			continue
		}
		t.WriteByte(c)
		p.WriteString(escapeGlob(src[i : i+1]))
	}
	return t.String(), p.String(), glob
}

// param resolves a parameter expansion whose value is known: $HOME, $PWD,
// or a variable assigned a known value or bound by a for loop.
func (a *analyzer) param(p *syntax.ParamExp) ([]wordVal, bool) {
	if p.Param == nil || p.Excl || p.Length || p.Width || p.Index != nil || p.NestedParam != nil ||
		p.Slice != nil || p.Names != 0 || len(p.Modifiers) > 0 {
		return nil, false
	}
	vals, ok := a.paramVals(p.Param.Value)
	switch {
	case !ok:
		return nil, false
	case p.Repl != nil:
		return a.replace(p, vals), true
	case p.Exp != nil:
		switch p.Exp.Op {
		case syntax.RemSmallSuffix, syntax.RemLargeSuffix, syntax.RemSmallPrefix, syntax.RemLargePrefix:
			return a.trim(p, vals), true
		case syntax.DefaultUnset, syntax.DefaultUnsetOrNull:
			return vals, true // set, so the default is not used
		}
		return nil, false
	}
	return vals, true
}

// paramVals returns the values a variable is known to have.
func (a *analyzer) paramVals(name string) ([]wordVal, bool) {
	if v, ok := a.vars[name]; ok {
		return v, true
	}
	switch {
	case name == "HOME" && a.cfg.home != "":
		return []wordVal{{text: a.cfg.home, pattern: escapeGlob(a.cfg.home), lit: true}}, true
	case name == "PWD" && a.cwd != "" && !a.cwdDyn:
		return []wordVal{{text: a.cwd, pattern: escapeGlob(a.cwd), lit: true}}, true
	}
	return nil, false
}

// unquoteANSIC decodes the escapes of a bash $'...' string.
func unquoteANSIC(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		c := s[i]
		if simple := strings.IndexByte(`abefnrtv\'"?`, c); simple >= 0 {
			b.WriteByte("\a\b\x1b\f\n\r\t\v\\'\"?"[simple])
			continue
		}
		// readNum reads up to n digits of base from s[i+1:].
		readNum := func(n, base int) (uint64, int) {
			j := i + 1
			for j < len(s) && j < i+1+n {
				if _, err := strconv.ParseUint(s[j:j+1], base, 8); err != nil {
					break
				}
				j++
			}
			v, _ := strconv.ParseUint(s[i+1:j], base, 32)
			return v, j - i - 1
		}
		switch {
		case c == 'x' || c == 'u' || c == 'U':
			n := 2
			switch c {
			case 'u':
				n = 4
			case 'U':
				n = 8
			}
			v, used := readNum(n, 16)
			if used == 0 {
				b.WriteByte('\\')
				b.WriteByte(c)
				continue
			}
			if c == 'x' {
				b.WriteByte(byte(v))
			} else {
				b.WriteRune(rune(v))
			}
			i += used
		case c >= '0' && c <= '7':
			i--
			v, used := readNum(3, 8)
			b.WriteByte(byte(v))
			i += used
		case c == 'c' && i+1 < len(s):
			i++
			b.WriteByte(s[i] & 0x1f)
		default:
			b.WriteByte('\\')
			b.WriteByte(c)
		}
	}
	return b.String()
}

// resolve makes a value's path absolute against the current directory and
// cleans it. It returns the path to show and its pattern.
func (a *analyzer) resolve(v wordVal) (show, pattern string, dynamic bool) {
	show, pattern, dynamic = v.text, v.pattern, v.dynamic
	if show == "" {
		return show, pattern, dynamic
	}
	if !strings.HasPrefix(show, "/") && !strings.HasPrefix(pattern, string(anyMark)) && !strings.HasPrefix(show, "~") {
		switch {
		case a.cwdDyn:
			show, pattern, dynamic = "$PWD/"+show, string(anyMark)+"/"+pattern, true
		case a.cwd != "":
			show = a.cwd + "/" + show
			pattern = escapeGlob(a.cwd) + "/" + pattern
		}
	}
	return cleanKeepTrailing(show), cleanPattern(pattern), dynamic
}

// cleanKeepTrailing cleans p like path.Clean.
func cleanKeepTrailing(p string) string {
	if p == "" {
		return p
	}
	return path.Clean(p)
}

// cleanPattern cleans a pattern like a path: no double slashes, no
// trailing slash, no "." elements. Parts with wildcards stay as they are.
func cleanPattern(p string) string {
	if p == "" {
		return p
	}
	abs := strings.HasPrefix(p, "/")
	parts := strings.Split(p, "/")
	out := parts[:0]
	for _, e := range parts {
		switch e {
		case "", ".":
			continue
		case "..":
			if len(out) > 0 && out[len(out)-1] != ".." && !hasWildcard(out[len(out)-1]) {
				out = out[:len(out)-1]
				continue
			}
			if abs && len(out) == 0 {
				continue
			}
		}
		out = append(out, e)
	}
	s := strings.Join(out, "/")
	if abs {
		return "/" + s
	}
	if s == "" {
		return "."
	}
	return s
}

// inside reports whether an absolute path is under the starting
// directory. Without a starting directory, relative paths are inside.
func (a *analyzer) inside(p string) bool {
	if a.cfg.dir == "" {
		return !strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "~") && !strings.HasPrefix(p, "$")
	}
	return p == a.cfg.dir || strings.HasPrefix(p, strings.TrimSuffix(a.cfg.dir, "/")+"/")
}

// specialFile reports whether p is a pseudo-file that is not a change to
// the file system: /dev/null, /dev/stdout, /dev/fd/N, /proc/self/fd/N.
func specialFile(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty", "/dev/zero", "/dev/random", "/dev/urandom", "-":
		return true
	}
	return strings.HasPrefix(p, "/dev/fd/") || strings.HasPrefix(p, "/proc/self/fd/")
}

// path records a path use and the finding it implies.
func (a *analyzer) path(v wordVal, acc Access, recursive bool, cmd string, line int) {
	u, ok := a.use(v, acc, recursive, cmd, line)
	if !ok || acc == Read {
		return
	}
	a.findingFor(u, cmd, line)
}

// use records a path use without a finding, and returns it; ok is false
// when there is nothing to record (a pipe, /dev/null, a use already
// recorded).
func (a *analyzer) use(v wordVal, acc Access, recursive bool, cmd string, line int) (PathUse, bool) {
	if v.procSubst || (v.text == "" && !v.dynamic) || (v.text == "-" && v.lit && acc != Delete) {
		return PathUse{}, false
	}
	show, pattern, dynamic := a.resolve(v)
	if specialFile(show) {
		return PathUse{}, false
	}
	show = a.shown(show)
	key := pathKey{show, acc, v.glob}
	if i, ok := a.seen[key]; ok {
		a.rep.Paths[i].Recursive = a.rep.Paths[i].Recursive || recursive
		return PathUse{}, false
	}
	a.seen[key] = len(a.rep.Paths)
	u := PathUse{
		Path: show, Access: acc, Glob: v.glob, Dynamic: dynamic, Recursive: recursive,
		Command: cmd, Line: line, Pattern: strings.ReplaceAll(pattern, string(anyMark), "**"),
	}
	a.rep.Paths = append(a.rep.Paths, u)
	if a.fetching && (acc == Write || acc == Create) {
		if a.downloaded == nil {
			a.downloaded = map[string]bool{}
		}
		a.downloaded[show] = true
	}
	if acc != Read && acc != Delete && (dynamic || recursive) {
		a.unsure = true // what exists from now on is not known
	}
	return u, true
}

// what names a path use for a finding: the path quoted, or what it stands
// for.
func what(u PathUse, cmd string) string {
	w := Quote(u.Path)
	switch {
	case u.Path == inputText:
		w = "paths read from its input"
	case strings.Contains(u.Path, inputText):
		w += " for each path read from its input"
	case u.Recursive && u.Access == Create:
		w = "into " + w
	case u.Recursive && cmd == "find":
		w = "what it finds under " + w
	case u.Recursive:
		if cmd != "mv" {
			w += " and everything under it"
		}
	}
	if u.Dynamic && !strings.Contains(u.Path, inputText) {
		w += " (known only at run time)"
	}
	return w
}

// findingFor records the finding a path use implies.
func (a *analyzer) findingFor(u PathUse, cmd string, line int) {
	w := what(u, cmd)
	show := u.Path
	switch {
	case strings.HasPrefix(show, "/dev/") || strings.HasPrefix(show, "/proc/") || strings.HasPrefix(show, "/sys/"):
		a.finding(CannotUndo, "irreversible", fmt.Sprintf("%s writes to %s, a device or kernel file the sandbox cannot undo", cmd, w), line)
	case u.Access == Delete && cmd == "mv":
		a.finding(a.writeRisk(u), "write", fmt.Sprintf("mv moves %s away", w), line)
	case u.Access == Delete:
		a.finding(Deletes, "delete", fmt.Sprintf("%s deletes %s", cmd, w), line)
	default:
		switch a.place(u) {
		case placeInside:
			a.finding(WritesInside, "write", fmt.Sprintf("%s %s %s", cmd, verbFor(u.Access, u.Recursive), w), line)
		case placeOutside:
			a.finding(WritesOutside, "write", fmt.Sprintf("%s %s %s, outside the working directory", cmd, verbFor(u.Access, u.Recursive), w), line)
		default:
			a.finding(WritesInside, "dynamic", fmt.Sprintf("%s %s %s", cmd, verbFor(u.Access, u.Recursive), w), line)
		}
	}
}

// writeRisk is the risk of a change to a path that loses nothing: inside
// or outside the working directory, inside when only run time tells.
func (a *analyzer) writeRisk(u PathUse) Risk {
	if a.place(u) == placeOutside {
		return WritesOutside
	}
	return WritesInside
}

// place is where a path is, as far as the analysis knows.
type place int

const (
	placeInside place = iota
	placeOutside
	placeUnknown
)

// place tells whether a use's path is under the starting directory. A
// dynamic path is where its literal directory prefix is ("/srv/$x" is
// outside, "$f" unknown).
func (a *analyzer) place(u PathUse) place {
	show := u.Path
	if u.Dynamic {
		i := strings.IndexAny(show, "$`<")
		if i < 0 {
			i = len(show)
		}
		dir := show[:i]
		j := strings.LastIndexByte(dir, '/')
		if j < 0 || !strings.HasPrefix(dir, "/") && a.cfg.dir != "" {
			return placeUnknown
		}
		show = dir[:j]
		if show == "" {
			show = "/"
		}
	}
	if a.inside(show) {
		return placeInside
	}
	return placeOutside
}

func verb(acc Access) string {
	switch acc {
	case Create:
		return "creates"
	case Write:
		return "writes"
	case Meta:
		return "changes the metadata of"
	}
	return "writes"
}

// finding records a reason for risk.
func (a *analyzer) finding(r Risk, kind, reason string, line int) {
	switch kind {
	case "network":
		a.rep.Network = true
		a.network++
	case "privilege":
		a.rep.Privileged = true
	case "irreversible":
		a.rep.Irreversible = true
	case "unknown-command", "dynamic", "unparsed":
		a.unsure = true // it may change what the analysis cannot name
	}
	if r == CannotUndo {
		a.rep.Irreversible = true
	}
	reason = oneLine(reason)
	for _, f := range a.rep.Findings {
		if f.Kind == kind && f.Reason == reason {
			return
		}
	}
	a.rep.Findings = append(a.rep.Findings, Finding{Risk: r, Kind: kind, Reason: reason, Line: line})
}

// script analyses a string run as a script (sh -c, eval, su -c).
func (a *analyzer) script(src, via string, line, col int) {
	if a.depth >= a.cfg.maxDepth {
		a.finding(WritesInside, "unparsed", fmt.Sprintf("%s runs a script nested too deeply to analyse; the sandbox will show what it changes", via), line)
		return
	}
	f, err := parse(src)
	if err != nil {
		a.finding(WritesInside, "unparsed", fmt.Sprintf("%s runs a string that does not parse: %s", via, Escape(err.Error())), line)
		return
	}
	oldSrc, oldLine, oldCol := a.src, a.line, a.col
	if a.depth == 0 {
		a.line, a.col = line, col
	}
	a.src = src
	a.depth++
	a.withVia(via, func() { a.stmts(f.Stmts) })
	a.depth--
	a.src, a.line, a.col = oldSrc, oldLine, oldCol
}

// verbFor is verb, with "writes" for a recursive create ("writes into d").
func verbFor(acc Access, recursive bool) string {
	if recursive && acc == Create {
		return "writes"
	}
	return verb(acc)
}

// oneLine is EscapeLine.
func oneLine(s string) string { return EscapeLine(s) }

// EscapeLine makes shell source or other text safe to print on one line:
// like EscapeText, with newlines escaped too. A backslash is left alone,
// so escaping twice changes nothing more.
func EscapeLine(s string) string {
	return strings.ReplaceAll(EscapeText(s), "\n", `\n`)
}
