package shell

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Tab completion, as bash does it for a person typing: the first word of a
// command completes command names (builtins, the session's aliases and
// functions, executables on its PATH), a later word completes paths
// relative to the session's directory, $NAME completes variables and a
// ":" line nash's own commands. Completion reads directories and nothing
// else: it runs nothing and never touches the sandbox.

// Completion is what Tab does to a line.
type Completion struct {
	// Start and End delimit, in runes, the part of the line to replace
	// with Insert (End is the cursor).
	Start, End int
	Insert     string
	// Candidates are the names that match, as listed to the person
	// (directories end in /). More than one: Insert is their common
	// prefix, and a second Tab lists them.
	Candidates []string
}

// Unique reports whether the completion is done: one candidate.
func (c Completion) Unique() bool { return len(c.Candidates) == 1 }

// gitSubcommands are git's everyday subcommands: completing them needs no
// bash-completion script, which would run git.
var gitSubcommands = strings.Fields(`add am apply archive bisect blame branch bundle checkout cherry-pick clean
	clone commit config describe diff fetch format-patch gc grep init log merge mv notes pull push
	range-diff rebase reflog remote reset restore revert rm shortlog show sparse-checkout stash status
	submodule switch tag worktree`)

// nashCommands are the : commands (engine.builtin).
var nashCommands = strings.Fields(`commit export find help log model redo show undo`)

// cmdPrefixes are words after which the next word is a command again.
var cmdPrefixes = map[string]bool{"sudo": true, "time": true, "nohup": true, "exec": true, "command": true,
	"builtin": true, "xargs": true, "env": true, "nice": true, "watch": true, "then": true, "do": true,
	"else": true, "if": true, "while": true, "until": true, "!": true}

// word is the word under the cursor, as the lexer found it.
type word struct {
	start   int    // rune index where it starts in the line
	raw     string // as typed, up to the cursor
	value   string // with quotes and backslashes taken away
	quote   rune   // the quote open at the cursor: ', " or 0
	index   int    // the word's place in its command: 0 is the command name
	command string // the command's name, when index > 0
}

// lastWord lexes line up to the cursor (a rune index) like the shell
// would, enough to know the word being typed: quotes, backslashes, and
// the operators that start a new command (| & ; ( ) and newlines). It
// does not expand anything.
func lastWord(line []rune, cursor int) word {
	var (
		w       word
		inWord  bool
		val     strings.Builder
		quote   rune
		escaped bool
		index   int
		cmd     string
	)
	end := func() {
		if !inWord {
			return
		}
		v := val.String()
		if index == 0 {
			cmd = v
		}
		index++
		if cmdPrefixes[v] || (index == 1 && strings.Contains(v, "=") && !strings.HasPrefix(v, "=")) {
			// sudo make, FOO=1 make: the next word is a command.
			index = 0
		}
		inWord = false
		val.Reset()
	}
	for i := 0; i < cursor && i < len(line); i++ {
		r := line[i]
		if !inWord {
			if quote == 0 && !escaped && (r == ' ' || r == '\t') {
				continue
			}
			if quote == 0 && !escaped && strings.ContainsRune("|&;()\n", r) {
				index, cmd = 0, ""
				continue
			}
			inWord = true
			w.start = i
		}
		switch {
		case escaped:
			val.WriteRune(r)
			escaped = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				val.WriteRune(r)
			}
		case quote == '"':
			switch r {
			case '"':
				quote = 0
			case '\\':
				if i+1 < cursor && strings.ContainsRune("\"\\$`", line[i+1]) {
					escaped = true
				} else {
					val.WriteRune(r)
				}
			default:
				val.WriteRune(r)
			}
		case r == '\\':
			escaped = true
		case r == '\'' || r == '"':
			quote = r
		case r == ' ' || r == '\t':
			end()
		case strings.ContainsRune("|&;()\n", r):
			end()
			index, cmd = 0, ""
		default:
			val.WriteRune(r)
		}
	}
	if !inWord {
		w.start = min(cursor, len(line))
	}
	w.raw = string(line[w.start:min(cursor, len(line))])
	w.value = val.String()
	w.quote = quote
	w.index = index
	if index > 0 {
		w.command = cmd
	}
	return w
}

// complete completes the word under the cursor (a rune index) in line.
// It reads the session's directories; it runs nothing.
func (s *State) complete(line []rune, cursor int) Completion {
	cursor = min(cursor, len(line))
	w := lastWord(line, cursor)
	none := Completion{Start: w.start, End: cursor}
	text := strings.TrimLeft(string(line[:cursor]), " ")
	switch {
	case strings.HasPrefix(text, "?"):
		return none // a request to the model
	case strings.HasPrefix(text, ":") && w.index == 0 && len(text) > 0 && !strings.Contains(text, " "):
		return s.finish(w, cursor, ":", prefixed(nashCommands, strings.TrimPrefix(w.value, ":")))
	}
	if w.quote != '\'' && strings.HasPrefix(w.value, "$") && !strings.ContainsAny(w.value[1:], "/{}$") {
		return s.finish(w, cursor, "$", prefixed(s.varNames(), w.value[1:]))
	}
	if w.index == 0 && !strings.Contains(w.value, "/") {
		name := strings.TrimPrefix(w.value, "!")
		lead := ""
		if name != w.value && w.start == 0 {
			lead = "!"
		}
		return s.finish(w, cursor, lead, s.commandsWith(name))
	}
	if w.index == 1 && w.command == "git" && !strings.HasPrefix(w.value, "-") && !strings.Contains(w.value, "/") {
		return s.finish(w, cursor, "", prefixed(gitSubcommands, w.value))
	}
	if strings.HasPrefix(w.value, "-") || strings.Contains(w.value, "=") && !strings.Contains(w.value, "/") {
		return none // an option: bash completes these only with a script
	}
	return s.completePath(w, cursor, w.index == 0)
}

// prefixed returns the names in list that start with p, sorted, once each.
func prefixed(list []string, p string) []string {
	var out []string
	for _, n := range list {
		if strings.HasPrefix(n, p) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// varNames are the session's variables' names.
func (s *State) varNames() []string {
	names := make([]string, 0, len(s.env))
	for k := range s.env {
		names = append(names, k)
	}
	if b := s.bash; b != nil && b.st != nil {
		for k := range b.st.env {
			names = append(names, k)
		}
	}
	return names
}

// finish turns the names matching w (after lead, a "$" or ":" that stays)
// into a completion. Names ending in / are directories: completing one
// adds no space, so the next Tab goes inside it. A quote the word opened
// stays, and is closed when the completion is done.
func (s *State) finish(w word, cursor int, lead string, names []string) Completion {
	c := Completion{Start: w.start, End: cursor, Candidates: names}
	if len(names) == 0 {
		return c
	}
	open := quoteOpen(w)
	if w.quote != 0 && open == "" {
		// A quote opened inside the word (a"b): leave it as typed.
		c.Insert = w.raw
		return c
	}
	common := names[0]
	for _, n := range names[1:] {
		common = commonPrefix(common, n)
	}
	c.Insert = open + lead + quoteWord(common, w.quote)
	if len(names) == 1 && !strings.HasSuffix(names[0], "/") {
		c.Insert += open + " "
	}
	return c
}

// completePath completes w as a path relative to the session's directory;
// with onlyExec (a command name with a slash) it offers directories and
// executables.
func (s *State) completePath(w word, cursor int, onlyExec bool) Completion {
	dirPart, base := "", w.value
	if i := strings.LastIndex(w.value, "/"); i >= 0 {
		dirPart, base = w.value[:i+1], w.value[i+1:]
	}
	if w.value == "~" {
		return Completion{Start: w.start, End: cursor, Candidates: []string{"~/"}, Insert: "~/"}
	}
	dir := dirPart
	switch {
	case strings.HasPrefix(dir, "~/"):
		dir = filepath.Join(s.homeDir(), dir[2:])
	case dir == "":
		dir = s.Dir
	case !filepath.IsAbs(dir):
		dir = filepath.Join(s.Dir, dir)
	}
	names := matchDir(dir, base, onlyExec)
	c := s.finish(w, cursor, "", names)
	if len(names) == 0 {
		return c
	}
	// The directory part stays as typed; the name is quoted as needed.
	c.Insert = rawDirPart(w) + strings.TrimPrefix(c.Insert, quoteOpen(w))
	return c
}

// quoteOpen is the quote the word opened with, if any.
func quoteOpen(w word) string {
	if w.quote != 0 && strings.HasPrefix(w.raw, string(w.quote)) {
		return string(w.quote)
	}
	return ""
}

// rawDirPart is the word as typed up to its last slash (nothing when it
// has none).
func rawDirPart(w word) string {
	i := strings.LastIndex(w.raw, "/")
	if i < 0 {
		return quoteOpen(w)
	}
	return w.raw[:i+1]
}

func (s *State) homeDir() string {
	if h := s.env["HOME"]; h != "" {
		return h
	}
	return s.home
}

// matchDir lists the entries of dir starting with base, directories with a
// trailing slash; dot files only when base starts with a dot.
func matchDir(dir, base string, onlyExec bool) []string {
	f, err := os.Open(dir)
	if err != nil {
		return nil
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	if err != nil && len(ents) == 0 {
		return nil
	}
	var out []string
	for _, e := range ents {
		n := e.Name()
		if !strings.HasPrefix(n, base) || !printable(n) || (strings.HasPrefix(n, ".") && !strings.HasPrefix(base, ".")) {
			continue
		}
		isDir := e.IsDir()
		if e.Type()&os.ModeSymlink != 0 {
			fi, err := os.Stat(filepath.Join(dir, n))
			isDir = err == nil && fi.IsDir()
		}
		switch {
		case isDir:
			out = append(out, n+"/")
		case onlyExec && !isExecutable(filepath.Join(dir, n)):
		default:
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return out
}

// commandsWith returns the command names starting with p: bash's
// builtins and reserved words, the session's aliases and functions, and
// the executables on its PATH.
func (s *State) commandsWith(p string) []string {
	var out []string
	for n := range bashBuiltins() {
		if strings.HasPrefix(n, p) {
			out = append(out, n)
		}
	}
	if b := s.bash; b != nil && b.st != nil {
		for n := range b.st.aliasNames {
			if strings.HasPrefix(n, p) {
				out = append(out, n)
			}
		}
		for n := range b.st.funcNames {
			if strings.HasPrefix(n, p) {
				out = append(out, n)
			}
		}
	}
	for _, n := range s.pathNames() {
		if strings.HasPrefix(n, p) && !slices.Contains(out, n) && s.IsCommand(n) {
			out = append(out, n)
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// pathNames lists the names in the session's PATH directories (files of
// any mode; IsCommand checks the ones that matter), read once per PATH and
// directory until Forget.
func (s *State) pathNames() []string {
	key := s.env["PATH"] + "\x00" + s.Dir
	if s.names != nil && s.namesKey == key {
		return s.names
	}
	seen := map[string]bool{}
	var names []string
	for _, d := range filepath.SplitList(s.env["PATH"]) {
		if d == "" {
			d = "."
		}
		if !filepath.IsAbs(d) {
			d = filepath.Join(s.Dir, d)
		}
		f, err := os.Open(d)
		if err != nil {
			continue
		}
		ents, _ := f.ReadDir(-1)
		f.Close()
		for _, e := range ents {
			if n := e.Name(); !e.IsDir() && !seen[n] && printable(n) {
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	sort.Strings(names)
	s.names, s.namesKey = names, key
	return names
}

// commonPrefix is the longest common prefix of a and b, whole runes.
func commonPrefix(a, b string) string {
	ar, br := []rune(a), []rune(b)
	i := 0
	for i < len(ar) && i < len(br) && ar[i] == br[i] {
		i++
	}
	return string(ar[:i])
}

// quoteWord quotes s for the shell, inside quote (', " or none): what a
// person would type to get s as one word.
func quoteWord(s string, quote rune) string {
	var b strings.Builder
	for i, r := range s {
		switch quote {
		case '\'':
			if r == '\'' {
				b.WriteString(`'\''`)
				continue
			}
		case '"':
			if strings.ContainsRune("\"\\$`", r) {
				b.WriteRune('\\')
			}
		default:
			if strings.ContainsRune(" \t\n'\"\\$`&;|()<>*?[]#!{}", r) || (r == '~' && i == 0) {
				b.WriteRune('\\')
			}
		}
		b.WriteRune(r)
	}
	return b.String()
}
