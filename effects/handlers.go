package effects

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// inputText is the text of an argument that xargs reads from its input.
const inputText = "<input>"

// invocation is one command with its arguments, after any wrappers.
type invocation struct {
	a         *analyzer
	e         *entry    // the command's entry in the registry
	name      string    // base name of the command
	args      []wordVal // arguments after the name
	line, col int
}

// parse splits the arguments into options and operands as the command's
// entry says.
func (c *invocation) parse() parsed { return parseOpts(c.args, c.e.opts) }

// exec analyses a command and its arguments.
func (a *analyzer) exec(args []wordVal, line, col int) {
	if len(args) == 0 {
		return
	}
	name := args[0]
	texts := make([]string, 0, len(args)-1)
	for _, w := range args[1:] {
		switch {
		case w.alt:
		case w.src != "":
			texts = append(texts, a.shown(w.src))
		default:
			texts = append(texts, a.shown(w.text))
		}
	}
	cmd := Command{Name: name.text, Args: texts, Line: line, Col: col, Dynamic: !name.lit}
	if len(a.via) > 0 {
		cmd.Via = append([]string(nil), a.via...)
	}
	if len(texts) == 0 {
		cmd.Args = nil
	}
	a.rep.Commands = append(a.rep.Commands, cmd)
	if !name.lit {
		a.finding(WritesInside, "dynamic", fmt.Sprintf("runs a command whose name is known only at run time: %s; the sandbox will show what it changes", Quote(name.text)), line)
		return
	}
	if a.funcs[name.text] {
		return
	}
	base := path.Base(name.text)
	e := lookup(base)
	if e == nil {
		if strings.Contains(name.text, "/") {
			show, _, _ := a.resolve(name)
			if a.downloaded[show] {
				a.runsDownloaded(line, false)
				return
			}
		}
		a.finding(WritesInside, "unknown-command", fmt.Sprintf("%s is not a command nash knows; the sandbox will show what it changes", Quote(base)), line)
		return
	}
	inv := &invocation{a: a, e: e, name: base, args: args[1:], line: line, col: col}
	if strings.Contains(name.text, "/") {
		show, _, _ := a.resolve(name)
		if a.downloaded[show] {
			a.runsDownloaded(line, false)
		}
	}
	fetching := a.fetching
	a.fetching = e.spec.Class == ClassNetwork || e.spec.Name == "git"
	defer func() { a.fetching = fetching }()
	switch {
	case e.spec.analyze != nil:
		e.spec.analyze(inv)
	case e.spec.Class != ClassQuiet:
		byRoles(inv)
	}
	if len(e.spec.Also) > 0 && (e.spec.Class != ClassSystem || !inv.looks()) {
		for _, x := range e.spec.Also {
			inv.also(x)
		}
	}
	if a.piped() && a.pipeOut == nil {
		a.pipeOut = inv.printed()
	}
}

// printed returns the paths a pipeline member prints, one per line, when
// they can be told: echo's words, the entries ls lists, the files grep -l
// names, and its input's paths with a prefix or suffix added by sed
// 's/^/.../' or 's/$/.../'. It returns nil when they cannot.
func (c *invocation) printed() []wordVal {
	switch c.name {
	case "cat":
		p := c.parse()
		if len(p.ops) == 0 {
			return nil
		}
		for _, o := range p.ops {
			if n, known := c.a.exists(o); !known || n > 0 {
				return nil // lines of a file: not known
			}
		}
		return []wordVal{} // it reads nothing, so prints nothing
	case "echo":
		var out []wordVal
		for _, a := range c.args {
			switch {
			case a.lit && len(out) == 0 && (a.text == "-n" || a.text == "-e" || a.text == "-E"):
			case a.lit && !a.glob:
				// Split as xargs splits: at blanks and newlines.
				for _, f := range strings.FieldsFunc(a.text, func(r rune) bool { return r == ' ' || r == '\t' || r == '\n' }) {
					out = append(out, literal(f))
				}
			default:
				out = append(out, a)
			}
		}
		return out
	case "ls":
		p := c.parse()
		for f := range p.flags {
			if strings.ContainsAny(f, "lnogsiRmQxC") && len(f) == 1 || len(f) > 1 && f != "all" && f != "almost-all" && f != "directory" && f != "reverse" {
				return nil // not one name per line
			}
		}
		names := wordVal{text: "*", pattern: "*", glob: true} // a directory's entries, as bare names
		if len(p.ops) == 0 {
			return []wordVal{names}
		}
		out := make([]wordVal, 0, len(p.ops)+1)
		dirs := false
		for _, o := range p.ops {
			dir, known := c.a.isDir(o)
			switch {
			case known && dir:
				dirs = true
			case known, o.glob, strings.Contains(path.Base(o.text), "."):
				out = append(out, o) // a file, as given
			default:
				out = append(out, o)
				dirs = true
			}
		}
		if dirs {
			out = append(out, names)
		}
		return out
	case "grep", "egrep", "fgrep":
		p := c.parse()
		if !p.has("l", "L", "files-with-matches", "files-without-match") {
			return nil
		}
		var out []wordVal
		rec := c.e.is(p, SetRecursive)
		for _, o := range c.e.operands(p) {
			if o.spec.Role != RoleRead {
				continue
			}
			if rec {
				o.v = under(o.v)
			}
			out = append(out, o.v)
		}
		if len(out) == 0 && rec {
			out = append(out, under(c.cwd()))
		}
		return out
	case "sed":
		if len(c.a.pipeIn) == 0 {
			return nil
		}
		p := c.parse()
		script, ok := p.val("e", "expression")
		if !ok && len(p.ops) == 1 {
			script, ok = p.ops[0], true
		}
		if !ok || !script.lit || len(p.ops) > 1 || len(p.vals) > 1 {
			return nil
		}
		front, add, ok := sedAnchor(script.text)
		if !ok {
			return nil
		}
		out := make([]wordVal, len(c.a.pipeIn))
		for i, v := range c.a.pipeIn {
			if front {
				v.text, v.pattern = add+v.text, escapeGlob(add)+v.pattern
			} else {
				v.text, v.pattern = v.text+add, v.pattern+escapeGlob(add)
			}
			out[i] = v
		}
		return out
	}
	return nil
}

// under returns a value for any path under dir.
func under(dir wordVal) wordVal {
	v := dir
	if !strings.HasSuffix(v.text, "/") {
		v.text += "/"
		v.pattern += "/"
	}
	v.text += "**"
	v.pattern += string(anyMark)
	v.glob, v.lit = true, false
	return v
}

// sedAnchor reads a sed script that only adds text at the start (s/^/x/)
// or the end (s/$/x/) of each line, and returns where and what.
func sedAnchor(script string) (front bool, add string, ok bool) {
	if len(script) < 4 || script[0] != 's' {
		return false, "", false
	}
	d := script[1]
	var parts []string
	var b strings.Builder
	for i := 2; i < len(script); i++ {
		switch ch := script[i]; {
		case ch == '\\' && i+1 < len(script):
			i++
			if script[i] != d && script[i] != '/' {
				return false, "", false // \1, \n: not plain text
			}
			b.WriteByte(script[i])
		case ch == d:
			parts = append(parts, b.String())
			b.Reset()
		default:
			b.WriteByte(ch)
		}
	}
	if len(parts) != 2 || (b.String() != "" && b.String() != "g") || strings.ContainsAny(parts[1], "&") {
		return false, "", false
	}
	switch parts[0] {
	case "^":
		return true, parts[1], true
	case "$":
		return false, parts[1], true
	}
	return false, "", false
}

// also records a path a command writes of its own accord: what RoleCreate
// makes is made only when it is missing.
func (c *invocation) also(x AlsoSpec) {
	p := x.Path
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if c.a.cfg.home == "" {
			return
		}
		p = c.a.cfg.home + "/" + rest
	}
	v := literal(p)
	if strings.Contains(p, "*") {
		v.pattern, v.glob = strings.ReplaceAll(escapeGlob(p), `\*`, "*"), true
	}
	if x.Role == RoleCreate {
		if n, known := c.a.exists(v); known && n > 0 {
			return
		}
	}
	c.pathRole(v, x.Role, false)
}

// session: tmux and screen run commands in a terminal session that nash
// does not follow, unless asked only to list or show.
func session(c *invocation) {
	if c.looks() {
		return
	}
	c.finding(WritesInside, "unknown-command", "%s runs commands in a session nash does not follow; the sandbox will show what they change", c.name)
}

// shown is text as the person wrote it: the variable a placeholder in an
// sh -c script became is shown as the placeholder again.
func (a *analyzer) shown(text string) string {
	if a.eachShown == "" {
		return text
	}
	return strings.ReplaceAll(text, "${"+eachVar+"}", a.eachShown)
}

// path records a path use by this invocation.
func (c *invocation) path(v wordVal, acc Access, recursive bool) {
	c.a.path(v, acc, recursive, c.name, c.line)
}

// finding records a finding for this invocation.
func (c *invocation) finding(r Risk, kind, format string, args ...any) {
	c.a.finding(r, kind, fmt.Sprintf(format, args...), c.line)
}

// run analyses a wrapped command line.
func (c *invocation) run(args []wordVal, via string) {
	c.a.withVia(via, func() { c.a.exec(args, c.line, c.col) })
}

// script analyses a string run as a script.
func (c *invocation) script(v wordVal, via string) {
	if v.fromNet {
		c.a.runsDownloaded(c.line, false)
		return
	}
	if !v.lit {
		c.finding(WritesInside, "dynamic", "%s runs a script known only at run time: %s; the sandbox will show what it changes", via, Quote(v.text))
		return
	}
	c.a.script(v.text, via, c.line, c.col)
}

// downloaded reports whether a script file the command runs came from the
// network (a download earlier in the script, or <(curl ...)), recording
// that it runs downloaded code.
func (c *invocation) downloaded(v wordVal) bool {
	show, _, _ := c.a.resolve(v)
	if !v.fromNet && !c.a.downloaded[show] {
		return false
	}
	c.a.runsDownloaded(c.line, false)
	return true
}

// cwd returns the current directory as a value, "." when unknown.
func (c *invocation) cwd() wordVal {
	if c.a.cwdDyn {
		return wordVal{text: "$PWD", pattern: string(anyMark), dynamic: true}
	}
	if c.a.cwd == "" {
		return wordVal{text: ".", pattern: ".", lit: true}
	}
	return literal(c.a.cwd)
}

// literal returns a value for a known string.
func literal(s string) wordVal { return wordVal{text: s, pattern: escapeGlob(s), lit: true} }

// join appends a literal element to a value: dir/name.
func join(dir wordVal, name string) wordVal {
	if dir.text == "." && dir.lit {
		return literal(name)
	}
	sep := "/"
	if strings.HasSuffix(dir.text, "/") {
		sep = ""
	}
	dir.text += sep + name
	dir.pattern += sep + escapeGlob(name)
	return dir
}

// withSuffix appends a literal suffix to a value: file.gz.
func withSuffix(v wordVal, suf string) wordVal {
	v.text += suf
	v.pattern += escapeGlob(suf)
	return v
}

// optSpec describes a command's options.
type optSpec struct {
	arg  string   // short options that take an argument
	long []string // long options that take an argument when written without =
	stop bool     // options end at the first operand, as for wrappers
	// optional are short options whose argument is optional and only
	// ever attached (xargs -i, -i{}, -l, -l5).
	optional string
}

// parsed is a command line split into options and operands.
type parsed struct {
	flags map[string]string  // by letter or long name without dashes
	vals  map[string]wordVal // the arguments of options that take one
	ops   []wordVal
	dash  int // index in ops of the first operand after "--", or -1
}

// val returns the argument of the first of the named options given, as
// a value that keeps whether it is dynamic: -o FILE, -oFILE, --output=FILE.
func (p parsed) val(names ...string) (wordVal, bool) {
	for _, n := range names {
		if v, ok := p.vals[n]; ok {
			return v, true
		}
	}
	return wordVal{}, false
}

// tail returns w without its first n bytes of text, as the argument glued
// to an option: -oFILE, --output=FILE.
func tail(w wordVal, n int) wordVal {
	rest := w.text[n:]
	if w.lit {
		return literal(rest)
	}
	w.text = rest
	w.src = ""
	// The dynamic part is after the option name, so the pattern keeps
	// everything from the first wildcard on.
	if i := strings.IndexByte(w.pattern, anyMark); i >= 0 && i >= n {
		w.pattern = w.pattern[n:]
	} else {
		w.pattern = escapeGlob(rest)
	}
	return w
}

func (p parsed) has(names ...string) bool {
	for _, n := range names {
		if _, ok := p.flags[n]; ok {
			return true
		}
	}
	return false
}

func (p parsed) get(names ...string) (string, bool) {
	for _, n := range names {
		if v, ok := p.flags[n]; ok {
			return v, true
		}
	}
	return "", false
}

// parseOpts splits args into options and operands by spec. With
// spec.stop, every argument from the first operand on is an operand.
func parseOpts(args []wordVal, spec optSpec) parsed {
	p := parsed{flags: map[string]string{}, vals: map[string]wordVal{}, dash: -1}
	for i := 0; i < len(args); i++ {
		t := args[i].text
		switch {
		case t == "--" && args[i].lit:
			p.dash = len(p.ops)
			p.ops = append(p.ops, args[i+1:]...)
			return p
		case strings.HasPrefix(t, "--") && len(t) > 2:
			name, val, hasVal := strings.Cut(t[2:], "=")
			switch {
			case hasVal:
				p.vals[name] = tail(args[i], len(name)+3)
			case contains(spec.long, name) && i+1 < len(args):
				i++
				val = args[i].text
				p.vals[name] = args[i]
			}
			p.flags[name] = val
		case strings.HasPrefix(t, "-") && len(t) > 1:
		letters:
			for j := 1; j < len(t); j++ {
				f := t[j : j+1]
				if strings.Contains(spec.optional, f) {
					if val := t[j+1:]; val != "" {
						p.vals[f] = tail(args[i], j+1)
						p.flags[f] = val
					} else {
						p.flags[f] = ""
					}
					break letters
				}
				if strings.Contains(spec.arg, f) {
					val := t[j+1:]
					switch {
					case val != "":
						p.vals[f] = tail(args[i], j+1)
					case i+1 < len(args):
						i++
						val = args[i].text
						p.vals[f] = args[i]
					}
					p.flags[f] = val
					break letters
				}
				p.flags[f] = ""
			}
		default:
			if spec.stop {
				p.ops = append(p.ops, args[i:]...)
				return p
			}
			p.ops = append(p.ops, args[i])
		}
	}
	return p
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

// privileged: sudo, doas, pkexec, su, runuser.
func privileged(c *invocation) {
	switch c.name {
	case "su", "runuser":
		p := c.parse()
		user := "root"
		for _, o := range p.ops {
			if o.text != "-" {
				user = o.text
				break
			}
		}
		if _, ok := p.val("c", "command"); !ok {
			c.finding(WritesInside, "privilege", "%s opens a shell as %s; the sandbox will show what is done in it", c.name, Quote(user))
		} else {
			c.finding(ReadOnly, "privilege", "%s runs commands as %s", c.name, Quote(user))
		}
		if v, ok := p.val("c", "command"); ok {
			if user == "root" {
				c.a.root++
				defer func() { c.a.root-- }()
			}
			c.script(v, c.name+" -c")
		}
		return
	}
	p := c.parse()
	c.optionPaths(p)
	user := "root"
	if u, ok := p.get("u", "user"); ok {
		user = u
	}
	switch {
	case c.e.is(p, SetEdit) || c.name == "sudoedit":
		c.finding(ReadOnly, "privilege", "%s edits files as %s", c.name, Quote(user))
		for _, o := range p.ops {
			c.path(o, Write, false)
		}
		return
	case len(p.ops) == 0:
		if c.e.is(p, SetLoginShell) {
			c.finding(WritesInside, "privilege", "%s opens a shell as %s; the sandbox will show what is done in it", c.name, Quote(user))
		}
		return
	}
	c.finding(ReadOnly, "privilege", "%s runs %s as %s", c.name, Quote(p.ops[0].text), Quote(user))
	if user == "root" {
		c.a.root++
		defer func() { c.a.root-- }()
	}
	c.run(p.ops, c.name)
}

// wrapper: commands that run another command given as arguments (env,
// nice, timeout, flock ...): the files their options and leading operands
// name are used as their roles say, then the command runs.
func wrapper(c *invocation) {
	p := c.parse()
	if c.e.is(p, SetQuery) {
		return // command -v: says where a command is
	}
	switch c.name {
	case "chroot":
		c.finding(ReadOnly, "privilege", "chroot runs a command in another root directory")
	case "sshpass":
		c.finding(Network, "network", "sshpass logs in to another host with a password")
	case "torsocks", "proxychains", "proxychains4":
		c.finding(Network, "network", "%s sends the command's traffic through a proxy", c.name)
	}
	ops := p.ops
	if c.name == "env" {
		for len(ops) > 0 && ops[0].lit && strings.Contains(ops[0].text, "=") && !strings.HasPrefix(ops[0].text, "=") {
			ops = ops[1:]
		}
	}
	for _, o := range c.e.spec.Operands {
		if o.Role == RoleCommand || o.Many || len(ops) == 0 {
			break
		}
		c.pathRole(ops[0], o.Role, false)
		ops = ops[1:]
	}
	script := false
	c.optionValues(p, func(o *OptionSpec, name string, v wordVal) {
		if o.Arg == RoleScript {
			c.script(v, c.name+" "+name)
			script = true
			return
		}
		c.pathRole(v, o.Arg, false)
	})
	if script || len(ops) == 0 {
		return
	}
	c.run(ops, c.name)
}

// optionPaths records the values of the options given whose role is a
// path (-o FILE, --files-from=FILE), as their roles say.
func (c *invocation) optionPaths(p parsed) {
	c.optionValues(p, func(o *OptionSpec, _ string, v wordVal) { c.pathRole(v, o.Arg, false) })
}

// optionValues calls f for every option given that takes a value, in the
// order of the command's spec, with the spelling it was given as.
func (c *invocation) optionValues(p parsed, f func(o *OptionSpec, name string, v wordVal)) {
	for i := range c.e.spec.Options {
		o := &c.e.spec.Options[i]
		if o.Arg == "" {
			continue
		}
		for _, n := range o.Names {
			if v, ok := p.vals[strings.TrimLeft(n, "-")]; ok {
				f(o, n, v)
				break
			}
		}
	}
}

// xargs runs a command with arguments read from its input.
func xargs(c *invocation) {
	p := c.parse()
	c.optionValues(p, func(o *OptionSpec, _ string, v wordVal) { c.pathRole(v, o.Arg, false) })
	cmd := p.ops
	var given []wordVal // parallel's inputs after :::
	if c.name == "parallel" {
		for i, o := range cmd {
			if o.text == ":::" || o.text == "::::" {
				if o.text == ":::" {
					given = eachOf(cmd[i+1:])
				}
				cmd = cmd[:i]
				break
			}
		}
	}
	if len(cmd) == 0 {
		cmd = []wordVal{literal("echo")}
	}
	repl, hasRepl := p.get("I", "i", "replace")
	if hasRepl && repl == "" {
		repl = "{}"
	}
	if c.name == "parallel" {
		repl, hasRepl = "{}", true
	}
	// One command per input with -I, -n 1 or -L 1; else many per command.
	each := hasRepl || p.has("l")
	if n, ok := p.get("n", "max-args", "L", "max-lines"); ok && n == "1" {
		each = true
	}
	inputs := []wordVal{inputVal()}
	switch {
	case given != nil:
		inputs = given
	case c.a.piped() && c.a.pipeIn != nil:
		// What find printed before it in the pipeline.
		inputs = c.a.pipeIn
		if len(inputs) == 0 && (hasRepl || p.has("r", "no-run-if-empty")) {
			return // no input: the command does not run
		}
	}
	if c.name == "parallel" {
		cmd = parallelScript(cmd)
	}
	for i := range inputs {
		inputs[i].each = each
	}
	if !hasRepl {
		repl = ""
	}
	c.runWith(cmd, repl, inputs, c.name)
}

// parallelScript turns parallel's command into the shell script parallel
// runs: its words joined by spaces, with {.} (the input without its
// extension) as ${each%.*}, for runWith to bind {}.
func parallelScript(cmd []wordVal) []wordVal {
	words := make([]string, len(cmd))
	lit := true
	for i, w := range cmd {
		words[i], lit = w.text, lit && w.lit
	}
	if !lit {
		return cmd
	}
	script := strings.Join(words, " ")
	if !strings.Contains(script, "{}") && !strings.Contains(script, "{.}") {
		script += " {}" // the input goes last
	}
	script = strings.ReplaceAll(script, "{.}", "${"+eachVar+"%.*}")
	return []wordVal{literal("sh"), literal("-c"), literal(script)}
}

// eachVar is the variable a placeholder ({}) in a script run by sh -c
// becomes, bound to what the placeholder stands for.
const eachVar = "__nash_each"

// runWith runs cmd with every occurrence of placeholder in its words
// replaced by each of inputs, or (placeholder "") with inputs appended as
// arguments, as xargs and find -exec do. A placeholder inside the script
// of sh -c is not pasted into the script's text, where it would change its
// syntax ("rm -f {}.bak" with {} a path with spaces, or "<input>"): it
// becomes a variable that stands for the inputs.
func (c *invocation) runWith(cmd []wordVal, placeholder string, inputs []wordVal, via string) {
	script := -1 // the index of sh -c's script among cmd's words
	if len(cmd) > 0 {
		if e := lookup(cmd[0].text); e != nil && e.spec.analyze != nil && hasSetting(e, "-c", SetCommandString) {
			for k := 1; k+1 < len(cmd); k++ {
				t := cmd[k].text
				if !strings.HasPrefix(t, "-") || strings.HasPrefix(t, "--") {
					break
				}
				if strings.Contains(t, "c") {
					script = k + 1
					break
				}
			}
		}
	}
	out := make([]wordVal, 0, len(cmd)+len(inputs))
	replaced, bound := false, false
	for k, w := range cmd {
		if placeholder == "" || !strings.Contains(w.text, placeholder) {
			out = append(out, w)
			continue
		}
		replaced = true
		if k == script && w.lit {
			w.text = strings.ReplaceAll(w.text, placeholder, "${"+eachVar+"}")
			w.pattern = escapeGlob(w.text)
			out = append(out, w)
			bound = true
			continue
		}
		for j, in := range inputs {
			v := substitute(w, placeholder, in)
			v.alt = j > 0
			out = append(out, v)
		}
	}
	if placeholder == "" || !replaced {
		for j, in := range inputs {
			in.alt = j > 0
			out = append(out, in)
		}
	}
	if bound {
		old, had := c.a.vars[eachVar]
		oldShown := c.a.eachShown
		c.a.vars[eachVar] = eachOf(inputs)
		c.a.eachShown = placeholder
		defer func() {
			delete(c.a.vars, eachVar)
			if had {
				c.a.vars[eachVar] = old
			}
			c.a.eachShown = oldShown
		}()
	}
	c.run(out, via)
}

// hasSetting reports whether an entry has an option spelled name that turns s
// on.
func hasSetting(e *entry, name string, s Setting) bool {
	o := e.byName[strings.TrimLeft(name, "-")]
	return o != nil && o.Sets == s
}

// substitute replaces every occurrence of placeholder in w with v.
func substitute(w wordVal, placeholder string, v wordVal) wordVal {
	w.text = strings.ReplaceAll(w.text, placeholder, v.text)
	w.pattern = strings.ReplaceAll(w.pattern, escapeGlob(placeholder), v.pattern)
	w.dynamic = w.dynamic || v.dynamic
	w.glob = w.glob || v.glob
	w.lit = w.lit && v.lit
	w.each = w.each || v.each
	return w
}

// findPrimariesWithArg are find's tests and actions that take one
// argument.
var findPrimariesWithArg = map[string]bool{
	"-name": true, "-iname": true, "-path": true, "-ipath": true, "-wholename": true, "-iwholename": true,
	"-regex": true, "-iregex": true, "-type": true, "-xtype": true, "-mtime": true, "-mmin": true, "-atime": true,
	"-amin": true, "-ctime": true, "-cmin": true, "-size": true, "-perm": true, "-user": true, "-group": true,
	"-uid": true, "-gid": true, "-newer": true, "-anewer": true, "-cnewer": true, "-maxdepth": true,
	"-mindepth": true, "-links": true, "-inum": true, "-samefile": true, "-fstype": true, "-used": true,
	"-printf": true, "-fprint": true, "-fprint0": true, "-fls": true, "-context": true, "-regextype": true,
	"-lname": true, "-ilname": true, "-files0-from": true,
}

// find walks directory trees, and may delete or run commands on what it
// finds.
func find(c *invocation) {
	args := c.args
	i := 0
	for i < len(args) && (args[i].text == "-H" || args[i].text == "-L" || args[i].text == "-P" || strings.HasPrefix(args[i].text, "-O")) {
		i++
	}
	if i < len(args) && args[i].text == "-D" {
		i += 2
	}
	var starts []wordVal
	for ; i < len(args); i++ {
		t := args[i].text
		if (strings.HasPrefix(t, "-") && len(t) > 1 && args[i].lit) || t == "(" || t == "!" || t == "," {
			break
		}
		starts = append(starts, args[i])
	}
	if len(starts) == 0 {
		starts = []wordVal{c.cwd()}
	}
	var names []wordVal // -name patterns, not negated
	// matches returns values standing for the files found under start:
	// one per -name pattern.
	matches := func(start wordVal) []wordVal {
		m := start
		if !strings.HasSuffix(m.text, "/") {
			m.text += "/"
			m.pattern += "/"
		}
		m.text += "**"
		m.glob, m.lit = true, false
		if len(names) == 0 {
			// find's start path is among what it finds (but not ".").
			if base := strings.TrimSuffix(start.pattern, "/"); base == "." {
				m.pattern = "./" + string(anyMark)
			} else {
				m.pattern = base + string(anyMark)
			}
			return []wordVal{m}
		}
		m.pattern += string(anyMark)
		out := make([]wordVal, len(names))
		for i, n := range names {
			out[i] = m
			out[i].text += "/" + n.text
			out[i].pattern += n.pattern
		}
		return out
	}
	found := starts[:0:0]
	for _, s := range starts {
		c.path(s, Read, true)
		if !c.missing(s) {
			found = append(found, s)
		}
	}
	if len(found) == 0 {
		if c.a.piped() {
			c.a.pipeOut = []wordVal{} // it prints nothing
		}
		return // it finds nothing, and does nothing with it
	}
	starts = found
	dirsOnly := false // -type d came first: -delete removes empty directories only
	prints := true    // prints the paths it finds, and nothing else
	defer func() {
		if !prints || !c.a.piped() {
			return
		}
		out := []wordVal{}
		for _, s := range starts {
			out = append(out, c.existing(matches(s))...)
		}
		c.a.pipeOut = out
	}()
	for ; i < len(args); i++ {
		t := args[i].text
		switch t {
		case "-exec", "-execdir", "-ok", "-okdir", "-printf", "-ls", "-fls", "-fprint", "-fprint0", "-fprintf":
			prints = false
		}
		switch {
		case t == "-name" || t == "-iname":
			negated := i > 0 && (args[i-1].text == "!" || args[i-1].text == "-not")
			if i+1 < len(args) && !negated {
				n := args[i+1]
				n.pattern = globOfLiteral(n)
				names = append(names, n)
			}
			i++
		case t == "-delete":
			for _, s := range starts {
				if len(names) > 0 {
					// Only matching entries go; a matching directory
					// that is not empty stays.
					for _, m := range matches(s) {
						c.deletes(m, false, dirsOnly)
					}
				} else {
					c.deletes(s, true, dirsOnly)
				}
			}
		case t == "-type" && i+1 < len(args) && args[i+1].text == "d" && !(i > 0 && (args[i-1].text == "!" || args[i-1].text == "-not")):
			dirsOnly = true
			i++
		case t == "-exec" || t == "-execdir" || t == "-ok" || t == "-okdir":
			j := i + 1
			for j < len(args) && args[j].text != ";" && args[j].text != "+" {
				j++
			}
			each := j < len(args) && args[j].text == ";" // one command per path found
			for _, s := range starts {
				ms := c.existing(matches(s))
				if each {
					ms = eachOf(ms)
				}
				if cmd := args[i+1 : j]; len(cmd) > 0 && len(ms) > 0 {
					c.runWith(cmd, "{}", ms, "find "+t)
				}
			}
			i = j
		case t == "-fprint" || t == "-fprint0" || t == "-fls" || t == "-fprintf":
			if i+1 < len(args) {
				c.path(args[i+1], Write, false)
			}
			i++
			if t == "-fprintf" {
				i++
			}
		case t == "-newer" || t == "-anewer" || t == "-cnewer" || t == "-samefile":
			if i+1 < len(args) {
				c.path(args[i+1], Read, false)
			}
			i++
		case findPrimariesWithArg[t] || strings.HasPrefix(t, "-newer"):
			i++
		}
	}
}

// globOfLiteral returns the pattern of a word used as a glob by a command
// (find -name '*.txt'): its quoted glob characters are live.
func globOfLiteral(w wordVal) string {
	if w.lit {
		return w.text
	}
	return w.pattern
}

// shellCmd: sh, bash and friends, with -c or a script file.
func shellCmd(c *invocation) {
	args := c.args
	if c.name == "busybox" {
		if len(args) > 0 {
			c.run(args, "busybox")
		}
		return
	}
	hasC, stdin := false, false
	i := 0
	for ; i < len(args); i++ {
		t := args[i].text
		if t == "--" {
			i++
			break
		}
		if t == "-s" || !strings.HasPrefix(t, "--") && strings.HasPrefix(t, "-") && strings.Contains(t, "s") && !strings.Contains(t, "c") {
			stdin = true // -s: the script comes from the input; the rest are its arguments
		}
		if !strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "+") || t == "-" {
			break
		}
		if t == "-o" || t == "+o" || t == "-O" || t == "+O" || t == "--rcfile" || t == "--init-file" {
			if strings.HasPrefix(t, "--") && i+1 < len(args) {
				c.path(args[i+1], Read, false)
			}
			i++
			continue
		}
		if !strings.HasPrefix(t, "--") && strings.Contains(t, "c") {
			hasC = true
		}
	}
	if i >= len(args) || stdin && !hasC {
		return // reads commands from its input
	}
	if hasC {
		c.a.withParams(groupWords(args[i+1:]), func() { c.script(args[i], c.name+" -c") })
		return
	}
	if c.downloaded(args[i]) {
		return
	}
	c.path(args[i], Read, false)
	c.finding(WritesInside, "unknown-command", "%s runs the script %s, which nash does not analyse", c.name, Quote(args[i].text))
}

// groupWords splits arguments into words, each with its values: a word
// that may take several values (find -exec's {} with two -name patterns)
// has its later values marked alt.
func groupWords(args []wordVal) [][]wordVal {
	var out [][]wordVal
	for _, w := range args {
		if w.alt && len(out) > 0 {
			out[len(out)-1] = append(out[len(out)-1], w)
			continue
		}
		out = append(out, []wordVal{w})
	}
	return out
}

// positional are the names of the positional parameters a script run by
// sh -c sees.
var positional = []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "@", "*"}

// withParams runs f with the positional parameters $0, $1... set to the
// words of params (sh -c 'script' $0 $1...), and "$@" to all but the
// first, then restores them.
func (a *analyzer) withParams(params [][]wordVal, f func()) {
	saved := map[string][]wordVal{}
	for _, n := range positional {
		if v, ok := a.vars[n]; ok {
			saved[n] = v
		}
		delete(a.vars, n)
	}
	var all []wordVal
	for k, vals := range params {
		vals = append([]wordVal(nil), vals...)
		for i := range vals {
			vals[i].alt, vals[i].src = false, ""
		}
		if k < 10 {
			a.vars[positional[k]] = vals
		}
		if k > 0 {
			all = append(all, vals...)
		}
	}
	if len(all) > 0 && len(all) <= maxAlternatives {
		a.vars["@"], a.vars["*"] = all, all
	}
	f()
	for _, n := range positional {
		delete(a.vars, n)
		if v, ok := saved[n]; ok {
			a.vars[n] = v
		}
	}
}

func evalCmd(c *invocation) {
	if len(c.args) == 0 {
		return
	}
	parts := make([]string, len(c.args))
	lit, fromNet := true, false
	for i, a := range c.args {
		parts[i] = a.text
		lit = lit && a.lit
		fromNet = fromNet || a.fromNet
	}
	v := wordVal{text: strings.Join(parts, " "), lit: lit, fromNet: fromNet}
	c.script(v, "eval")
}

func source(c *invocation) {
	if len(c.args) == 0 {
		return
	}
	if c.downloaded(c.args[0]) {
		return
	}
	c.path(c.args[0], Read, false)
	c.finding(WritesInside, "unknown-command", "%s runs the commands in %s, which nash does not analyse", c.name, Quote(c.args[0].text))
}

func watch(c *invocation) {
	p := c.parse()
	if len(p.ops) == 0 {
		return
	}
	if len(p.ops) == 1 {
		c.script(p.ops[0], "watch")
		return
	}
	c.run(p.ops, "watch")
}

// cd changes the directory later relative paths resolve against.
func cd(c *invocation) {
	a := c.a
	p := c.parse()
	if c.name == "popd" {
		if n := len(a.dirStack); n > 0 {
			a.cwd, a.cwdDyn = a.dirStack[n-1], a.dirStack[n-1] == ""
			a.dirStack = a.dirStack[:n-1]
		} else {
			a.cwdDyn = true
		}
		return
	}
	old := a.cwd
	if a.cwdDyn {
		old = ""
	}
	var target wordVal
	switch {
	case len(p.ops) == 0 && a.cfg.home != "":
		target = literal(a.cfg.home)
	case len(p.ops) == 0 || p.ops[0].text == "-" || !p.ops[0].lit:
		a.cwdDyn = true
		if c.name == "pushd" {
			a.dirStack = append(a.dirStack, old)
		}
		return
	default:
		target = p.ops[0]
	}
	show, _, dyn := a.resolve(target)
	if c.name == "pushd" {
		a.dirStack = append(a.dirStack, old)
	}
	if dyn || (!strings.HasPrefix(show, "/") && a.cfg.dir != "") {
		a.cwdDyn = true
		return
	}
	a.cwd, a.cwdDyn = show, false
}

// remove: rm, rmdir, unlink, shred, trash.
func remove(c *invocation) {
	p := c.parse()
	c.optionPaths(p)
	switch c.name {
	case "shred":
		for _, o := range p.ops {
			if c.missing(o) {
				continue
			}
			c.path(o, Write, false)
			if c.e.is(p, SetRemove) {
				c.path(o, Delete, false)
			}
		}
		return
	case "gio":
		if len(p.ops) == 0 || (p.ops[0].text != "remove" && p.ops[0].text != "trash") {
			return
		}
		p.ops = p.ops[1:]
	}
	recursive := c.e.is(p, SetRecursive)
	recursive = recursive || c.name == "trash" || c.name == "trash-put" || c.name == "gio" || c.name == "srm"
	emptyOnly := c.name == "rmdir" || c.name == "rm" && !recursive && p.has("d", "dir")
	for _, o := range p.ops {
		c.deletes(o, recursive, emptyOnly)
	}
}

// deletes records the removal of v, unless Files says it is not there,
// with the finding it deserves: a deletion loses what was there, unless
// only empty directories go (rmdir), the script made the path itself (a
// temporary file), or an earlier cp copied it (cp a b && rm a moves a).
func (c *invocation) deletes(v wordVal, recursive, emptyOnly bool) {
	if c.missing(v) {
		return
	}
	u, ok := c.a.use(v, Delete, recursive, c.name, c.line)
	if !ok {
		return
	}
	w := what(u, c.name)
	switch {
	case emptyOnly:
		c.finding(c.a.writeRisk(u), "delete", "%s removes %s if it is an empty directory (nothing in it is lost)", c.name, w)
	case c.a.made(u):
		c.finding(c.a.writeRisk(u), "delete", "%s deletes %s, which the script itself made", c.name, w)
	case c.a.copied[u.Path] != "":
		dest := PathUse{Path: c.a.copied[u.Path], Dynamic: strings.ContainsAny(c.a.copied[u.Path], "$`")}
		r := max(c.a.writeRisk(u), c.a.writeRisk(dest))
		c.finding(r, "rename", "%s deletes %s after it was copied to %s: together they move it", c.name, w, Quote(dest.Path))
	default:
		c.a.findingFor(u, c.name, c.line)
	}
}

// parentMissing reports whether Files says the directory v would be
// written in does not exist, recording a finding that says so: the write
// fails.
func (a *analyzer) parentMissing(v wordVal, cmd string, line int) bool {
	if a.cfg.files == nil || a.unsure || v.dynamic || v.procSubst || v.text == "" {
		return false
	}
	_, pattern, dynamic := a.resolve(v)
	if dynamic {
		return false
	}
	lp := literalPrefix(pattern)
	dir := path.Dir(lp)
	if lp != pattern { // a wildcard follows: its directory is what comes before
		dir = strings.TrimSuffix(lp[:strings.LastIndexByte(lp, '/')+1], "/")
	}
	if dir == "" || dir == "." || dir == "/" || a.changedBefore(escapeGlob(dir)) {
		return false
	}
	if n, known := a.count(escapeGlob(dir)); !known || n > 0 {
		return false
	}
	a.finding(ReadOnly, "missing", fmt.Sprintf("%s: %s does not exist, so nothing can be written in it", cmd, Quote(dir)), line)
	return true
}

// existing returns the values some existing path may match: all of them,
// but those Files says match nothing.
func (c *invocation) existing(vals []wordVal) []wordVal {
	out := vals[:0:0]
	for _, v := range vals {
		if n, known := c.a.exists(v); !known || n > 0 {
			out = append(out, v)
		}
	}
	return out
}

// missing reports whether Files says that no path matches v, recording a
// finding that says so: the command does nothing to it.
func (c *invocation) missing(v wordVal) bool {
	n, known := c.a.exists(v)
	if !known || n > 0 {
		return false
	}
	show, _, _ := c.a.resolve(v)
	c.finding(ReadOnly, "missing", "%s: %s does not exist, so it changes nothing there", c.name, Quote(show))
	return true
}

// exists returns how many paths match v before the script runs, and
// whether that is known: only with Files, for a path that does not depend
// on run time, in a tree small enough to look through, and that the script
// may not have changed before.
func (a *analyzer) exists(v wordVal) (n int, known bool) {
	if a.cfg.files == nil || a.unsure || v.dynamic || v.procSubst {
		return 0, false
	}
	_, pattern, dynamic := a.resolve(v)
	if dynamic || a.changedBefore(pattern) {
		return 0, false
	}
	return a.count(pattern)
}

// isDir reports whether v names an existing directory, and whether that
// is known.
func (a *analyzer) isDir(v wordVal) (dir, known bool) {
	if strings.HasSuffix(v.text, "/") {
		return true, true
	}
	n, known := a.exists(v)
	if !known || n == 0 || v.glob {
		return false, known && n == 0
	}
	show, _, _ := a.resolve(v)
	fi, err := fs.Stat(a.cfg.files, fsName(show))
	return err == nil && fi.IsDir(), true
}

// maxWalk bounds how many entries count looks at to match a pattern of
// any depth.
const maxWalk = 5000

// count returns how many existing paths match an absolute pattern, and
// whether that is known.
func (a *analyzer) count(pattern string) (int, bool) {
	if !strings.HasPrefix(pattern, "/") {
		return 0, false
	}
	if n, ok := a.counted[pattern]; ok {
		return n, n >= 0
	}
	n := -1
	defer func() {
		if a.counted == nil {
			a.counted = map[string]int{}
		}
		a.counted[pattern] = n
	}()
	deep := strings.ContainsRune(pattern, anyMark) || strings.Contains(pattern, "**")
	if !deep {
		m, err := fs.Glob(a.cfg.files, fsName(pattern))
		if err != nil {
			return 0, false
		}
		n = len(m)
		return n, true
	}
	root := literalPrefix(pattern)
	root = root[:strings.LastIndexByte(root, '/')+1]
	if root == "/" || root == "" {
		return 0, false // all of / is too much to look through
	}
	seen, found := 0, 0
	err := fs.WalkDir(a.cfg.files, fsName(root), func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if seen++; seen > maxWalk {
			return fs.SkipAll
		}
		if matchPath(pattern, "/"+p) {
			found++
		}
		return nil
	})
	if seen > maxWalk {
		return 0, false
	}
	if err != nil {
		var pe *fs.PathError
		if !errors.As(err, &pe) {
			return 0, false
		}
	}
	n = found
	return n, true
}

// fsName turns an absolute path or pattern into a name in Files' view of
// /: no leading slash, "." for / itself.
func fsName(p string) string {
	p = strings.Trim(p, "/")
	if p == "" {
		return "."
	}
	return p
}

// changedBefore reports whether an earlier use of the script may have
// created, changed or removed a path matching pattern.
func (a *analyzer) changedBefore(pattern string) bool {
	lp := literalPrefix(pattern)
	for _, u := range a.rep.Paths {
		if u.Access == Read {
			continue
		}
		up := literalPrefix(u.Pattern)
		if strings.HasPrefix(lp, up) || strings.HasPrefix(up, lp) {
			return true
		}
	}
	return false
}

// made reports whether the script itself wrote or created the path of a
// deletion before, and it did not exist before the script (as far as
// Files can tell): deleting it loses nothing that was there.
func (a *analyzer) made(d PathUse) bool {
	for _, u := range a.rep.Paths {
		if (u.Access == Write || u.Access == Create) && u.Path == d.Path {
			if a.cfg.files == nil || d.Dynamic {
				return true
			}
			n, known := a.count(strings.ReplaceAll(d.Pattern, "**", string(anyMark)))
			return !known || n == 0
		}
	}
	return false
}

// copyMove: cp, mv, install, ln, rename.
func copyMove(c *invocation) {
	p := c.parse()
	ops := p.ops
	if c.name == "rename" || c.name == "mmv" {
		// rename FROM TO FILES... or rename 's/a/b/' FILES: each file is
		// replaced by a name known only at run time.
		skip := 1
		if c.name == "rename" && len(ops) > 0 && !strings.HasPrefix(ops[0].text, "s") && !strings.HasPrefix(ops[0].text, "y") {
			skip = 2
		}
		if skip > len(ops) {
			skip = len(ops)
		}
		for _, o := range ops[skip:] {
			if c.missing(o) {
				continue
			}
			u, ok := c.a.use(o, Delete, false, c.name, c.line)
			d := o
			d.text = path.Dir(o.text) + "/" + inputText
			d.pattern = escapeGlob(path.Dir(o.text)) + "/" + string(anyMark)
			d.dynamic, d.lit = true, false
			if _, ok2 := c.a.use(d, Create, false, c.name, c.line); ok && ok2 {
				c.finding(c.a.writeRisk(u), "rename", "%s renames %s (to names its expression gives)", c.name, what(u, c.name))
			}
		}
		return
	}
	if c.e.is(p, SetDirectory) {
		for _, o := range ops {
			c.path(o, Create, false)
		}
		return
	}
	var dest wordVal
	named := true // dest was given, and may be a directory
	if t, ok := p.val("t", "target-directory"); ok {
		if c.missing(t) {
			return // no such directory: nothing is copied or moved
		}
		dest = t
		dest.text = strings.TrimSuffix(dest.text, "/") + "/" // a directory
	} else if len(ops) >= 2 {
		dest, ops = ops[len(ops)-1], ops[:len(ops)-1]
	} else if len(ops) == 1 && (c.name == "ln" || c.name == "link") {
		dest, named = join(c.cwd(), path.Base(ops[0].text)), false
	} else {
		for _, o := range ops {
			c.path(o, Read, false)
		}
		return
	}
	switch c.name {
	case "mv":
		c.move(ops, dest)
	case "ln", "link":
		// Like cp, ln makes dest/name when dest is a directory.
		c.path(dest, Create, named)
	default: // cp, install
		rec := c.e.is(p, SetRecursive)
		var srcs []wordVal
		for _, o := range ops {
			if !c.missing(o) {
				srcs = append(srcs, o)
				c.path(o, Read, rec)
			}
		}
		if len(srcs) == 0 && len(ops) > 0 || c.a.parentMissing(dest, c.name, c.line) {
			return // nothing to copy, or nowhere to: cp fails
		}
		into, _ := c.a.isDir(dest)
		d, ok := c.a.use(dest, Create, true, c.name, c.line)
		if !ok {
			return
		}
		c.a.findingFor(d, c.name, c.line)
		for _, o := range srcs {
			show, _, _ := c.a.resolve(o)
			to := d.Path
			if into {
				to += "/" + path.Base(show)
			}
			if c.a.copied == nil {
				c.a.copied = map[string]string{}
			}
			c.a.copied[show] = to
		}
	}
}

// move records what mv does: each source goes to dest, or into it when it
// is a directory. Its finding says so in words ("renames a to b here",
// "moves 3 files into old/"), and says when files are lost: a source that
// stands for one path per run (a loop variable, xargs -I, find -exec ;)
// moved each time onto the one name dest, which is not a directory, leaves
// only the last.
func (c *invocation) move(srcs []wordVal, dest wordVal) {
	if c.a.parentMissing(dest, "mv", c.line) {
		return
	}
	into, known := c.a.isDir(dest) // before the move changes it
	n, counted := 0, false         // how many paths the first source matches
	if len(srcs) == 1 && (srcs[0].glob || srcs[0].each) {
		n, counted = c.a.exists(srcs[0])
	}
	var us []PathUse
	var vals []wordVal
	for _, o := range srcs {
		if c.missing(o) {
			continue
		}
		if u, ok := c.a.use(o, Delete, true, "mv", c.line); ok {
			us, vals = append(us, u), append(vals, o)
		}
	}
	if len(us) == 0 {
		return // nothing to move: mv fails
	}
	d, ok := c.a.use(dest, Create, true, "mv", c.line)
	if !ok {
		return
	}
	r := c.a.writeRisk(d)
	for _, u := range us {
		r = max(r, c.a.writeRisk(u))
	}
	src, many := us[0], len(us) > 1 || vals[0].each || vals[0].glob || vals[0].dynamic
	count := ""
	if counted && len(us) == 1 {
		count = fmt.Sprintf("%d %s", n, plural(n, "file", "files"))
	}
	srcDir, destDir := path.Dir(src.Path), path.Dir(d.Path)
	here := ""
	switch {
	case srcDir == c.a.cfg.dir && c.a.cfg.dir != "":
		here = " here"
	case !src.Dynamic || !strings.ContainsAny(srcDir, "$`<"):
		here = " in " + Quote(srcDir)
	}
	name := func(u PathUse, dir string) string {
		if u.Path == inputText {
			return "path read from its input"
		}
		if rel, ok := strings.CutPrefix(u.Path, dir+"/"); ok && dir != "" {
			return Quote(rel)
		}
		return Quote(u.Path)
	}
	switch {
	case vals[0].each && !into && known && !d.Dynamic && !d.Glob && !(counted && n <= 1):
		c.finding(r, "rename", "mv moves %s to %s", what(src, "mv"), Quote(d.Path))
		c.finding(Deletes, "delete", "mv moves each of %s onto the one name %s, which is not a directory: each replaces the one before, so all but the last are lost",
			what(src, "mv"), Quote(d.Path))
	case into:
		what := what(src, "mv")
		if count != "" {
			what = count + " (" + Quote(src.Path) + ")"
		} else if len(us) > 1 {
			what = fmt.Sprintf("%d paths", len(us))
		}
		c.finding(r, "rename", "mv moves %s into %s", what, Quote(d.Path))
	case len(us) == 1 && srcDir == destDir && strings.Contains(src.Path, inputText) == strings.Contains(d.Path, inputText):
		switch {
		case count != "":
			c.finding(r, "rename", "mv renames %s%s (%s to %s)", count, here, name(src, srcDir), name(d, destDir))
		case many:
			c.finding(r, "rename", "mv renames each %s%s to %s", name(src, srcDir), here, name(d, destDir))
		default:
			c.finding(r, "rename", "mv renames %s to %s%s", name(src, srcDir), name(d, destDir), here)
		}
	default:
		dest := Quote(d.Path)
		if d.Dynamic && !strings.Contains(d.Path, inputText) {
			dest += " (known only at run time)"
		}
		c.finding(r, "rename", "mv moves %s to %s", what(src, "mv"), dest)
	}
}

// dd copies if=FILE to of=FILE.
func dd(c *invocation) {
	for _, a := range c.args {
		k, _, ok := strings.Cut(a.text, "=")
		if !ok {
			continue
		}
		v := a
		v.text = a.text[len(k)+1:]
		v.pattern = strings.TrimPrefix(a.pattern, escapeGlob(k+"="))
		switch k {
		case "if":
			c.path(v, Read, false)
		case "of":
			c.path(v, Write, false)
		}
	}
}

// mktemp creates a file (or with -d a directory) named after a template,
// in /tmp unless told otherwise; with -u it only prints a name.
func mktemp(c *invocation) {
	p := c.parse()
	if c.e.is(p, SetDryRun) {
		return
	}
	dir := literal("/tmp")
	if d, ok := p.get("p", "tmpdir"); ok && d != "" {
		dir = literal(d)
	}
	tmpl := "tmp.*"
	if len(p.ops) > 0 {
		tmpl = strings.ReplaceAll(p.ops[0].text, "XXX", "*")
		for strings.Contains(tmpl, "**") {
			tmpl = strings.ReplaceAll(tmpl, "**", "*")
		}
		switch {
		case strings.HasPrefix(tmpl, "/"):
			dir = literal("/") // the template says where
		case !p.has("t", "p", "tmpdir"):
			dir = c.cwd()
		}
	}
	v := join(dir, "")
	v.text += tmpl
	v.pattern += tmpl
	v.glob = true
	c.path(v, Create, c.e.is(p, SetDirectory))
}

// chmod: chmod, chown, chgrp, chattr, setfacl, setfattr, chcon.
func chmod(c *invocation) {
	var ops []wordVal
	recursive, reference := false, false
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		t := a.text
		switch {
		case t == "-R" || t == "--recursive":
			recursive = true
		case strings.HasPrefix(t, "--reference"):
			reference = true
			switch {
			case strings.HasPrefix(t, "--reference="):
				c.path(tail(a, len("--reference=")), Read, false)
			case t == "--reference" && i+1 < len(c.args):
				i++
				c.path(c.args[i], Read, false)
			}
		case t == "--":
			ops = append(ops, c.args[i+1:]...)
			i = len(c.args)
		case strings.HasPrefix(t, "--"):
		case (c.name == "setfacl" || c.name == "setfattr") && (t == "-m" || t == "-x" || t == "-n" || t == "-v" || t == "-M" || t == "-X"):
			i++
			if (t == "-M" || t == "-X") && c.name == "setfacl" && i < len(c.args) {
				c.path(c.args[i], Read, false) // the ACL entries come from a file
			}
		case len(t) > 1 && strings.HasPrefix(t, "-") && strings.Trim(t[1:], "RvcfhHLPV") == "":
			recursive = recursive || strings.Contains(t, "R")
		default:
			ops = append(ops, a)
		}
	}
	if !reference && c.name != "setfacl" && c.name != "setfattr" && len(ops) > 0 {
		ops = ops[1:] // the mode, owner or attributes
	}
	for _, o := range ops {
		if c.missing(o) {
			continue
		}
		c.path(o, Meta, recursive)
	}
}

// interpreter: sed, perl, python and other languages given a program.
func interpreter(c *invocation) {
	inPlace, program, progFile := false, false, false
	var ops []wordVal
	args := c.args
	for i := 0; i < len(args); i++ {
		t := args[i].text
		switch {
		case t == "--":
			ops = append(ops, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(t, "--"):
			name, _, hasVal := strings.Cut(t[2:], "=")
			switch name {
			case "in-place":
				inPlace = true
			case "expression":
				program = true
				if !hasVal {
					i++
				}
			case "file":
				progFile = true
				if !hasVal && i+1 < len(args) {
					i++
					c.path(args[i], Read, false)
				}
			}
		case strings.HasPrefix(t, "-") && len(t) > 1:
		cluster:
			for j := 1; j < len(t); j++ {
				switch t[j] {
				case 'i':
					if c.name == "sed" || c.name == "perl" || c.name == "ruby" {
						inPlace = true
						break cluster
					}
				case 'e', 'E':
					if c.name == "sed" || c.name == "perl" || c.name == "ruby" || c.name == "node" || c.name == "nodejs" {
						program = true
						if j == len(t)-1 {
							i++
						}
						break cluster
					}
				case 'c':
					if c.name != "sed" && c.name != "perl" {
						program = true
						if j == len(t)-1 {
							i++
						}
						break cluster
					}
				case 'm':
					if strings.HasPrefix(c.name, "python") {
						program = true
						if j == len(t)-1 {
							i++
						}
						break cluster
					}
				case 'f':
					if c.name == "sed" {
						progFile = true
						if j == len(t)-1 && i+1 < len(args) {
							i++
							c.path(args[i], Read, false)
						}
						break cluster
					}
				case 'l', 'I', 'M', '0', 'x', 'C', 'd', 'D', 'W', 'X':
					if c.name == "perl" {
						break cluster
					}
					if c.name == "sed" && t[j] == 'l' {
						if j == len(t)-1 {
							i++
						}
						break cluster
					}
				}
			}
		default:
			ops = append(ops, args[i])
		}
	}
	if !program && !progFile && len(ops) > 0 {
		if c.name != "sed" {
			if c.downloaded(ops[0]) {
				return
			}
			c.path(ops[0], Read, false)
		}
		ops = ops[1:]
		program = true
	}
	acc := Read
	if inPlace {
		acc = Write
	}
	for _, o := range ops {
		if c.name != "sed" && c.name != "perl" && !inPlace {
			continue // arguments to the program, not files it reads
		}
		c.path(o, acc, false)
	}
	if c.name != "sed" && !(c.name == "perl" && (inPlace || len(ops) > 0 || strings.Contains(strings.Join(texts(args), " "), "-n") || strings.Contains(strings.Join(texts(args), " "), "-p"))) {
		if program || progFile {
			c.finding(WritesInside, "unknown-command", "%s runs a program whose effects nash does not analyse", c.name)
		}
	}
}

func texts(ws []wordVal) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.text
	}
	return out
}

// archiveExt is the suffix each compressor adds.
var archiveExt = map[string]string{
	"gzip": ".gz", "gunzip": ".gz", "pigz": ".gz", "bzip2": ".bz2", "bunzip2": ".bz2", "xz": ".xz", "unxz": ".xz",
	"lzma": ".lzma", "unlzma": ".lzma", "zstd": ".zst", "unzstd": ".zst", "lz4": ".lz4", "compress": ".Z", "uncompress": ".Z",
}

// archive: tar, zip, unzip and the compressors.
func archive(c *invocation) {
	p := c.parse()
	switch c.name {
	case "zip":
		c.optionPaths(p)
		if len(p.ops) == 0 {
			return
		}
		c.path(p.ops[0], Write, false)
		rec := c.e.is(p, SetRecursive)
		for _, o := range p.ops[1:] {
			c.path(o, Read, rec)
			if c.e.is(p, SetRemove) {
				c.path(o, Delete, rec)
			}
		}
	case "unzip":
		if len(p.ops) == 0 {
			return
		}
		c.path(p.ops[0], Read, false)
		if c.e.is(p, SetList) || c.e.is(p, SetStdout) {
			return
		}
		dir := c.cwd()
		if d, ok := p.val("d"); ok {
			dir = d
		}
		c.path(dir, Write, true)
	case "7z", "7za", "rar", "unrar":
		if len(p.ops) < 2 {
			return
		}
		cmd, arc := p.ops[0].text, p.ops[1]
		switch cmd {
		case "a", "u", "d":
			c.path(arc, Write, false)
			for _, o := range p.ops[2:] {
				c.path(o, Read, true)
			}
		case "x", "e":
			c.path(arc, Read, false)
			c.path(c.cwd(), Write, true)
		default:
			c.path(arc, Read, false)
		}
	case "cpio", "ar":
		c.finding(WritesInside, "unknown-command", "%s may create or extract files nash does not list", c.name)
	default:
		compressFiles(c, p)
	}
}

// compressFiles: gzip and the other compressors, which replace each file
// by its compressed (or decompressed) version.
func compressFiles(c *invocation, p parsed) {
	ext := archiveExt[c.name]
	if s, ok := p.get("S", "suffix"); ok && s != "" && c.name != "zstd" {
		ext = s
	}
	decompress := strings.HasPrefix(c.name, "un") || c.name == "gunzip" || c.name == "bunzip2" || c.e.is(p, SetDecompress)
	if c.e.is(p, SetList) {
		for _, o := range p.ops {
			c.path(o, Read, false)
		}
		return
	}
	toStdout := c.e.is(p, SetStdout)
	keep := c.e.is(p, SetKeep) || ((c.name == "zstd" || c.name == "unzstd" || c.name == "lz4") && !p.has("rm"))
	for _, o := range p.ops {
		if c.missing(o) {
			continue
		}
		if c.e.is(p, SetRecursive) {
			c.path(o, Write, true)
			continue
		}
		c.path(o, Read, false)
		if toStdout {
			continue
		}
		if !keep {
			c.path(o, Delete, false)
		}
		if out, ok := p.val("o", "output"); ok {
			c.path(out, Create, false)
			continue
		}
		if decompress {
			if strings.HasSuffix(o.text, ext) && o.text != ext {
				n := o
				n.text = strings.TrimSuffix(o.text, ext)
				n.pattern = strings.TrimSuffix(o.pattern, escapeGlob(ext))
				c.path(n, Create, false)
			} else if strings.HasSuffix(o.text, ".tgz") {
				n := o
				n.text = strings.TrimSuffix(o.text, ".tgz") + ".tar"
				n.pattern = strings.TrimSuffix(o.pattern, ".tgz") + ".tar"
				c.path(n, Create, false)
			}
			continue
		}
		c.path(withSuffix(o, ext), Create, false)
	}
}

// tarLongWithArg are tar's long options that take an argument.
// tarCmd: tar in its create, extract, list and append modes.
func tarCmd(c *invocation) {
	args := c.args
	mode := byte(0)
	var file, dir *wordVal
	var ops []wordVal
	removeFiles, toStdout := false, false
	takesArg := c.e.opts.arg
	for i := 0; i < len(args); i++ {
		t := args[i].text
		first := i == 0 && !strings.HasPrefix(t, "-") && args[i].lit
		switch {
		case strings.HasPrefix(t, "--"):
			name, val, hasVal := strings.Cut(t[2:], "=")
			if o := c.e.byName[name]; o != nil && o.Arg != "" && !hasVal && i+1 < len(args) {
				i++
				val = args[i].text
			}
			v := literal(val)
			switch name {
			case "create":
				mode = 'c'
			case "extract", "get":
				mode = 'x'
			case "list":
				mode = 't'
			case "append", "update", "concatenate", "catenate":
				mode = 'r'
			case "delete":
				mode = 'd'
			case "file":
				file = &v
			case "directory":
				dir = &v
			case "files-from":
				c.path(v, Read, false)
			case "remove-files":
				removeFiles = true
			case "to-stdout":
				toStdout = true
			default:
				if o := c.e.byName[name]; o != nil && hasVal || o != nil && o.Arg != "" {
					c.pathRole(v, o.Arg, false)
				}
			}
		case strings.HasPrefix(t, "-") || first:
			cluster := strings.TrimPrefix(t, "-")
			for j := 0; j < len(cluster); j++ {
				ch := cluster[j]
				switch ch {
				case 'O':
					toStdout = true
				case 'c', 'x', 't', 'r', 'u', 'A':
					mode = ch
					if ch == 'u' || ch == 'A' {
						mode = 'r'
					}
				}
				if strings.IndexByte(takesArg, ch) >= 0 {
					var v wordVal
					if !first && j < len(cluster)-1 {
						v = literal(cluster[j+1:])
						j = len(cluster)
					} else if i+1 < len(args) {
						i++
						v = args[i]
					}
					switch ch {
					case 'f':
						file = &v
					case 'C':
						dir = &v
					case 'T':
						c.path(v, Read, false)
					default:
						if o := c.e.byName[string(ch)]; o != nil {
							c.pathRole(v, o.Arg, false)
						}
					}
					if !first {
						break
					}
				}
			}
		default:
			ops = append(ops, args[i])
		}
	}
	base := c.cwd()
	if dir != nil {
		base = *dir
	}
	switch mode {
	case 'c':
		if file != nil && file.text != "-" {
			if c.a.parentMissing(*file, c.name, c.line) {
				return // nowhere to write the archive: tar fails
			}
			c.path(*file, Write, false)
		}
		for _, o := range ops {
			if dir != nil && !strings.HasPrefix(o.text, "/") {
				o = join(base, o.text)
			}
			c.path(o, Read, true)
			if removeFiles {
				c.path(o, Delete, true)
			}
		}
	case 'x':
		if file != nil {
			c.path(*file, Read, false)
		}
		if toStdout {
			return
		}
		if len(ops) > 0 {
			for _, o := range ops {
				c.path(join(base, o.text), Write, true)
			}
		} else {
			c.path(base, Write, true)
		}
	case 'r', 'd':
		if file != nil {
			if c.a.parentMissing(*file, c.name, c.line) {
				return
			}
			c.path(*file, Write, false)
		}
		for _, o := range ops {
			if mode == 'r' {
				c.path(o, Read, true)
			}
		}
	default:
		if file != nil {
			c.path(*file, Read, false)
		}
	}
}

// isRemote reports whether an rsync or scp operand names another host.
func isRemote(s string) bool {
	if strings.HasPrefix(s, "rsync://") {
		return true
	}
	i := strings.IndexByte(s, ':')
	if i <= 0 {
		return false
	}
	return !strings.Contains(s[:i], "/")
}

// rsync: rsync and scp copy trees, from or to other hosts.
func rsync(c *invocation) {
	p := c.parse()
	c.optionValues(p, func(o *OptionSpec, _ string, v wordVal) {
		if o.Arg == RoleRead || o.Arg == RoleWrite {
			c.pathRole(v, o.Arg, false)
		}
	})
	{
		if len(p.ops) < 2 {
			for _, o := range p.ops {
				if isRemote(o.text) {
					c.finding(Network, "network", "%s contacts %s", c.name, Quote(o.text))
				}
			}
			return
		}
		srcs, dest := p.ops[:len(p.ops)-1], p.ops[len(p.ops)-1]
		srcs = slices.DeleteFunc(slices.Clone(srcs), func(s wordVal) bool { return !isRemote(s.text) && c.missing(s) })
		if len(srcs) == 0 {
			return // nothing to copy: it fails
		}
		dry := c.e.is(p, SetDryRun)
		for _, s := range srcs {
			if isRemote(s.text) {
				c.finding(Network, "network", "%s downloads from %s", c.name, Quote(s.text))
				continue
			}
			c.path(s, Read, true)
			if c.e.is(p, SetRemove) && !dry {
				c.path(s, Delete, true)
			}
		}
		if isRemote(dest.text) {
			c.finding(CannotUndo, "network", "%s sends files to %s, which the sandbox cannot undo", c.name, Quote(dest.text))
			return
		}
		if dry {
			return
		}
		c.path(dest, Create, true)
		if c.e.is(p, SetMirror) {
			c.path(dest, Delete, true)
		}
	}
}

// ssh runs a command, or a session, on another host.
func ssh(c *invocation) {
	p := c.parse()
	c.optionPaths(p)
	if len(p.ops) == 0 {
		return
	}
	if len(p.ops) > 1 {
		c.finding(CannotUndo, "network", "ssh runs %s on %s, which the sandbox cannot undo", Quote(strings.Join(texts(p.ops[1:]), " ")), Quote(p.ops[0].text))
		return
	}
	c.finding(CannotUndo, "network", "ssh opens a session on %s, which the sandbox cannot undo", Quote(p.ops[0].text))
}

// networkCmd: remote sessions, transfers, mail and lookups.
func networkCmd(c *invocation) {
	switch c.name {
	case "ping", "ping6", "traceroute", "tracepath", "dig", "nslookup", "host", "whois", "mtr", "nmap":
		c.finding(Network, "network", "%s contacts other hosts", c.name)
	case "mail", "mailx", "sendmail", "mutt", "mpack", "ssmtp", "msmtp":
		c.finding(CannotUndo, "network", "%s sends mail, which the sandbox cannot undo", c.name)
		c.optionValues(c.parse(), func(o *OptionSpec, _ string, v wordVal) { c.pathRole(v, o.Arg, false) })
	default: // sftp, ftp, lftp, nc, telnet, socat, ssh-copy-id, http
		c.finding(CannotUndo, "network", "%s sends data over the network, which the sandbox cannot undo", c.name)
	}
}

func curl(c *invocation) {
	p := c.parse()
	send := c.e.is(p, SetSend)
	if m, ok := p.get("X", "request"); ok && m != "GET" && m != "HEAD" {
		send = true
	}
	urls := p.ops
	if u, ok := p.get("url"); ok {
		urls = append(urls, literal(u))
	}
	where := "the network"
	if len(urls) > 0 {
		where = Quote(urls[0].text)
	}
	if send {
		c.finding(CannotUndo, "network", "curl sends data to %s, which the sandbox cannot undo", where)
	} else {
		c.finding(Network, "network", "curl downloads from %s", where)
	}
	c.optionPaths(p)
	if c.e.is(p, SetRemoteName) {
		dir := c.cwd()
		if d, ok := p.get("output-dir"); ok {
			dir = literal(d)
		}
		for _, u := range urls {
			c.path(urlFile(dir, u, ""), Write, false)
		}
	}
}

// urlFile is the file a download of u lands in, in dir.
func urlFile(dir, u wordVal, fallback string) wordVal {
	name := ""
	if u.lit {
		s := u.text
		if i := strings.IndexAny(s, "?#"); i >= 0 {
			s = s[:i]
		}
		if i := strings.Index(s, "://"); i >= 0 {
			s = s[i+3:]
		}
		if i := strings.IndexByte(s, '/'); i >= 0 {
			name = path.Base(s[i:])
		}
		if name == "/" || name == "." {
			name = ""
		}
	}
	if name == "" {
		name = fallback
	}
	if name == "" {
		v := join(dir, "")
		v.text += inputText
		v.pattern += string(anyMark)
		v.dynamic, v.lit = true, false
		return v
	}
	return join(dir, name)
}

func wget(c *invocation) {
	p := c.parse()
	send := c.e.is(p, SetSend)
	if m, ok := p.get("method"); ok && m != "GET" && m != "HEAD" {
		send = true
	}
	where := "the network"
	if len(p.ops) > 0 {
		where = Quote(p.ops[0].text)
	}
	if send {
		c.finding(CannotUndo, "network", "%s sends data to %s, which the sandbox cannot undo", c.name, where)
	} else {
		c.finding(Network, "network", "%s downloads from %s", c.name, where)
	}
	c.optionPaths(p)
	dir := c.cwd()
	if d, ok := p.get("P", "directory-prefix"); ok {
		dir = literal(d)
	}
	if _, ok := p.val("O", "output-document"); ok {
		return
	}
	if c.e.is(p, SetRecursive) {
		c.path(dir, Write, true)
		return
	}
	for _, u := range p.ops {
		c.path(urlFile(dir, u, "index.html"), Write, false)
	}
}

// gitSubOpts are the options of git's subcommands that take a value.
var gitSubOpts = optSpec{arg: "emuoCcbBsSpU", long: []string{"exclude", "message", "branch", "origin", "depth", "source", "reference", "upload-pack", "template", "separate-git-dir", "config", "jobs", "filter"}}

// git: version control commands that change the working tree or send.
func git(c *invocation) {
	args := c.args
	repo := c.cwd()
	for len(args) > 0 {
		t := args[0].text
		switch {
		case t == "-C" && len(args) > 1:
			repo = args[1]
			args = args[2:]
			continue
		case t == "-c" && len(args) > 1:
			args = args[2:]
			continue
		case strings.HasPrefix(t, "--work-tree="):
			repo = literal(strings.TrimPrefix(t, "--work-tree="))
		case strings.HasPrefix(t, "-"):
		default:
			goto sub
		}
		args = args[1:]
	}
	return
sub:
	sub, rest := args[0].text, args[1:]
	p := parseOpts(rest, gitSubOpts)
	gitDir := join(repo, ".git")
	after := func() []wordVal {
		if p.dash >= 0 {
			return p.ops[p.dash:]
		}
		return nil
	}
	switch sub {
	case "clone":
		if len(p.ops) == 0 {
			return
		}
		c.finding(Network, "network", "git clone downloads %s", Quote(p.ops[0].text))
		var dest wordVal
		if len(p.ops) > 1 {
			dest = p.ops[1]
		} else {
			name := strings.TrimSuffix(path.Base(strings.TrimSuffix(p.ops[0].text, "/")), ".git")
			if i := strings.LastIndexByte(name, ':'); i >= 0 {
				name = name[i+1:]
			}
			dest = join(c.cwd(), name)
		}
		c.path(dest, Create, true)
	case "fetch", "remote", "submodule", "ls-remote":
		c.finding(Network, "network", "git %s contacts a remote repository", sub)
		c.path(gitDir, Write, true)
	case "pull":
		c.finding(Network, "network", "git pull downloads from a remote repository")
		c.path(repo, Write, true)
	case "push":
		c.finding(CannotUndo, "network", "git push sends commits to a remote repository, which the sandbox cannot undo")
	case "send-email":
		c.finding(CannotUndo, "network", "git send-email sends mail, which the sandbox cannot undo")
	case "clean":
		if p.has("n", "dry-run") {
			c.path(repo, Read, true)
			return
		}
		targets := p.ops
		if len(targets) == 0 {
			targets = []wordVal{repo}
		}
		for _, t := range targets {
			c.path(t, Delete, true)
		}
	case "checkout", "restore", "switch":
		paths := after()
		if sub == "restore" && len(paths) == 0 {
			paths = p.ops
		}
		if len(paths) == 0 {
			c.path(repo, Write, true)
			c.path(repo, Delete, true)
			return
		}
		for _, t := range paths {
			c.path(t, Write, true)
		}
	case "reset":
		c.path(gitDir, Write, true)
		if p.has("hard", "merge", "keep") {
			c.path(repo, Write, true)
			c.path(repo, Delete, true)
		}
	case "rm":
		if !p.has("cached") && !p.has("n", "dry-run") {
			for _, t := range p.ops {
				c.path(t, Delete, p.has("r"))
			}
		}
		c.path(gitDir, Write, true)
	case "mv":
		if len(p.ops) >= 2 {
			for _, t := range p.ops[:len(p.ops)-1] {
				c.path(t, Delete, true)
			}
			c.path(p.ops[len(p.ops)-1], Create, true)
		}
		c.path(gitDir, Write, true)
	case "init":
		d := repo
		if len(p.ops) > 0 {
			d = p.ops[0]
		}
		c.path(join(d, ".git"), Create, true)
	case "merge", "rebase", "stash", "apply", "am", "cherry-pick", "revert", "bisect":
		c.path(gitDir, Write, true)
		c.path(repo, Write, true)
	case "status", "log", "diff", "show", "blame", "grep", "ls-files", "rev-parse", "shortlog", "describe",
		"rev-list", "cat-file", "ls-tree", "whatchanged", "reflog", "help", "version", "--version", "count-objects":
		c.path(repo, Read, true)
	default: // add, commit, branch, tag, config, gc, notes, ...
		c.path(gitDir, Write, true)
	}
}

// patch applies a diff to the files it names, or to the tree it is in.
func patch(c *invocation) {
	p := c.parse()
	if i, ok := p.val("i", "input"); ok {
		c.path(i, Read, false)
	}
	if c.e.is(p, SetDryRun) {
		return
	}
	if r, ok := p.val("r", "reject-file"); ok {
		c.path(r, Write, false)
	}
	if o, ok := p.val("o", "output"); ok {
		c.path(o, Write, false)
		return
	}
	if len(p.ops) > 0 {
		c.path(p.ops[0], Write, false)
		if len(p.ops) > 1 {
			c.path(p.ops[1], Read, false)
		}
		return
	}
	dir := c.cwd()
	if d, ok := p.val("d", "directory"); ok {
		dir = d
	}
	c.path(dir, Write, true)
	c.path(dir, Delete, true)
}

// split and csplit write pieces of a file as PREFIX*.
func split(c *invocation) {
	p := c.parse()
	ops := p.ops
	prefix := "x"
	if c.name == "csplit" {
		prefix = "xx"
		if f, ok := p.get("f", "prefix"); ok {
			prefix = f
		}
		if len(ops) > 0 {
			c.path(ops[0], Read, false)
		}
	} else {
		if len(ops) > 0 && ops[0].text != "-" {
			c.path(ops[0], Read, false)
		}
		if len(ops) > 1 {
			prefix = ops[1].text
		}
	}
	v := literal(prefix)
	v.text += "*"
	v.pattern += "*"
	v.glob = true
	c.path(v, Create, false)
}

// compile: C compilers, which write -o FILE, FILE.o with -c, or a.out.
func compile(c *invocation) {
	p := c.parse()
	for _, o := range p.ops {
		c.path(o, Read, false)
	}
	if o, ok := p.val("o"); ok {
		c.path(o, Write, false)
	} else if c.e.is(p, SetCompile) {
		for _, o := range p.ops {
			if ext := path.Ext(o.text); ext != "" {
				c.path(literal(strings.TrimSuffix(o.text, ext)+".o"), Write, false)
			}
		}
	} else {
		c.path(join(c.cwd(), "a.out"), Write, false)
	}
}

// editFiles: editors change the files they are given; +N is a line.
func editFiles(c *invocation) {
	p := c.parse()
	for _, o := range p.ops {
		if strings.HasPrefix(o.text, "+") {
			continue
		}
		c.path(o, Write, false)
	}
}

// looks reports whether a command's arguments ask it only to look: it has
// none and its Looks hold "", an option among them is one of its
// Looks (kill -l, iptables -t nat -L), or its first operand (the
// second for service: service nginx status) is.
func (c *invocation) looks() bool {
	looks := c.e.spec.Looks
	if len(c.args) == 0 {
		return slices.Contains(looks, "")
	}
	words := 0
	for _, a := range c.args {
		t := a.text
		if strings.HasPrefix(t, "-") {
			if slices.Contains(looks, t) {
				return true
			}
			continue
		}
		words++
		if (words == 1 || c.name == "service" && words == 2) && slices.Contains(looks, t) {
			return true
		}
	}
	return false
}

// irreversible: commands whose effects are outside the file system, such
// as signals, services, mounts and the clock. With arguments that ask them
// only to look (see looks), they change nothing.
func irreversible(c *invocation) {
	switch c.name {
	case "date":
		p := c.parse()
		if r, ok := p.val("r", "reference"); ok {
			c.path(r, Read, false)
		}
		if !c.e.is(p, SetChange) {
			return
		}
	case "sysctl":
		all := strings.Join(texts(c.args), " ")
		if !strings.Contains(all, "=") && !slices.ContainsFunc(c.args, func(a wordVal) bool {
			return a.text == "-w" || a.text == "--write" || a.text == "-p" || a.text == "--load" || a.text == "--system"
		}) {
			return // reads settings
		}
	case "crontab":
		if !c.looks() {
			if n := len(c.args); n > 0 && !strings.HasPrefix(c.args[n-1].text, "-") {
				c.path(c.args[n-1], Read, false)
			}
		}
	}
	if c.looks() {
		return
	}
	c.finding(CannotUndo, "irreversible", "%s %s, which the sandbox cannot undo", c.name, c.e.spec.Does)
}

// ipCmd: ip OBJECT [COMMAND]: with no command, or show, list or get, it
// only looks.
func ipCmd(c *invocation) {
	var words []string
	for _, a := range c.args {
		if !strings.HasPrefix(a.text, "-") {
			words = append(words, a.text)
		}
	}
	if len(words) < 2 || slices.Contains(c.e.spec.Looks, words[1]) || words[0] == "help" {
		return
	}
	c.finding(CannotUndo, "irreversible", "ip %s, which the sandbox cannot undo", c.e.spec.Does)
}

// lockFiles are the files JavaScript package managers rewrite on install.
var lockFiles = map[string]string{"npm": "package-lock.json", "yarn": "yarn.lock", "pnpm": "pnpm-lock.yaml"}

// packageCmd: package managers. With a subcommand that only looks they
// change nothing (search and its kin may reach the package index).
func packageCmd(c *invocation) {
	sub := ""
	for _, a := range c.args {
		if !strings.HasPrefix(a.text, "-") || slices.Contains(c.e.spec.Looks, a.text) {
			sub = a.text
			break
		}
	}
	if c.looks() || sub != "" && slices.Contains(c.e.spec.Looks, sub) {
		switch sub {
		case "search", "show", "info", "-Ss", "-Si", "view", "outdated", "find", "policy", "madison", "check-update", "list-updates":
			c.finding(Network, "network", "%s %s may contact a package index", c.name, sub)
		}
		return
	}
	if sub == "" && c.name != "npm" && c.name != "yarn" && c.name != "pnpm" {
		return
	}
	switch c.name {
	case "npm", "yarn", "pnpm":
		c.finding(Network, "network", "%s %s downloads packages", c.name, sub)
		if sub == "run" || sub == "start" || sub == "test" || sub == "exec" || sub == "run-script" {
			c.finding(WritesInside, "unknown-command", "%s %s runs scripts nash does not analyse", c.name, sub)
			return
		}
		if contains(texts(c.args), "-g") || contains(texts(c.args), "--global") {
			c.finding(WritesOutside, "write", "%s installs packages system-wide", c.name)
			return
		}
		c.path(join(c.cwd(), "node_modules"), Write, true)
		c.path(join(c.cwd(), lockFiles[c.name]), Write, false)
		return
	case "go", "cargo":
		if sub == "build" || sub == "test" || sub == "run" || sub == "fmt" || sub == "vet" {
			c.finding(WritesInside, "unknown-command", "%s %s builds code and may run it", c.name, sub)
			return
		}
	}
	c.finding(Network, "network", "%s %s downloads packages", c.name, sub)
	c.finding(WritesOutside, "write", "%s %s changes installed packages outside the working directory", c.name, sub)
}

// accountsCmd: user and group management, which writes the account files.
func accountsCmd(c *invocation) {
	for _, f := range []string{"/etc/passwd", "/etc/shadow", "/etc/group"} {
		c.path(literal(f), Write, false)
	}
}

// setVars: builtins that give variables values only known at run time.
func setVars(c *invocation) {
	p := c.parse()
	ops := p.ops
	if c.name == "getopts" && len(ops) > 1 {
		ops = ops[1:2]
	}
	for _, o := range ops {
		delete(c.a.vars, o.text)
	}
	if c.name == "read" && len(ops) == 1 && ops[0].lit && len(c.a.readIn) > 0 && !p.has("a", "u") {
		// One whole line of a while loop's piped input (see pipeline).
		c.a.vars[ops[0].text] = c.a.readIn
		return
	}
	if c.name == "read" || c.name == "mapfile" || c.name == "readarray" {
		name := "REPLY"
		if c.name != "read" {
			name = "MAPFILE"
		}
		delete(c.a.vars, name)
	}
}
