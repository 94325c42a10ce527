package shell

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// Forgiving routing. Two mistakes a person makes at a shell that also
// takes English: a request that happens to start with a command's name
// ("find the biggest files here", "make a backup of notes"), and a typo in
// a command's name ("gti status"). The first goes to the planner; the
// second gets a local "did you mean" and goes nowhere. Both rules are
// narrow on purpose: a real command line must never be taken for prose,
// and a request must never be answered with a guessed command.

// setOf makes a set of the words in s.
func setOf(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

// functionWords are the words of English that glue a request together
// (articles, determiners, prepositions, pronouns) plus the superlatives
// requests about files use. A command line rarely has them as arguments;
// a request almost always has one.
var functionWords = sync.OnceValue(func() map[string]bool {
	return setOf(`the a an of in on into to at from with for by up out about over under without
		my all every this these those that some any here there me our your its their which what how
		than each both whose where when them it biggest largest smallest newest oldest latest
		recently please`)
})

// textCommands take free text as their arguments: they stay commands
// whatever the words.
var textCommands = sync.OnceValue(func() map[string]bool {
	return setOf(`echo printf say espeak espeak-ng spd-say festival figlet toilet cowsay cowthink banner
		notify-send wall logger write yes lolcat zenity kdialog whiptail dialog apropos man whatis info
		tldr xmessage gum betty howdoi how2 sgpt aichat llm`)
})

// requestWords are words a request in English starts with. A first word
// among them never gets a "did you mean": "show" is not a typo of "sh".
var requestWords = sync.OnceValue(func() map[string]bool {
	return setOf(`a add all an and are archive ask back backup build can change check clean close
		compare compress convert copy count create delete did display do does download edit empty
		explain extract fetch fix free get give go hello help hi how i if in install is it keep
		let list look make me merge move my new no now ok okay open please print put read remove
		rename replace restart restore run save search send set should show shrink sort split start
		stop summarize sum tell thanks the there this tidy turn undo unzip update upgrade upload
		use what when where which who why will with would write yes you zip dump report format`)
})

// readsAsProse reports whether the arguments of a command line read as
// English rather than as arguments: at least three of them, every one a
// plain word (letters, digits, an inner ' or -, maybe a final . , ? or !:
// no option, path, quote, glob or expansion), at least two of three
// letters or more, and at least two function words that name no file
// (exists, relative to the session's directory). "make a backup of
// notes" reads as prose; "make test", "find . -name x", "git add a b c",
// "mkdir a b c", "yum clean all" do not.
func readsAsProse(args []string, exists func(string) bool) bool {
	if len(args) < 3 {
		return false
	}
	long, glue := 0, 0
	for _, a := range args {
		w := strings.TrimRight(a, ".,?!")
		if !plainWord(w) || len(a)-len(w) > 1 {
			return false
		}
		if letters(w) >= 3 {
			long++
		}
		if functionWords()[strings.ToLower(w)] && !exists(w) {
			glue++
		}
	}
	return glue >= 2 && long >= 2
}

// plainWord reports whether w is a word of English as a person types it.
func plainWord(w string) bool {
	if w == "" {
		return false
	}
	for i, r := range w {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case (r == '\'' || r == '-') && i > 0 && i < len(w)-1:
		default:
			return false
		}
	}
	return true
}

func letters(w string) int {
	n := 0
	for _, r := range w {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			n++
		}
	}
	return n
}

// simpleArgs returns the name and the arguments of text when it is one
// simple command of plain literal words: no assignment, redirection,
// pipe, list, background or expansion.
func simpleArgs(text string) (name string, args []string, ok bool) {
	f, err := syntax.NewParser().Parse(strings.NewReader(text), "")
	if err != nil || len(f.Stmts) != 1 {
		return "", nil, false
	}
	st := f.Stmts[0]
	c, isCall := st.Cmd.(*syntax.CallExpr)
	if !isCall || st.Negated || st.Background || len(st.Redirs) > 0 || len(c.Assigns) > 0 || len(c.Args) == 0 {
		return "", nil, false
	}
	for _, w := range c.Args {
		if len(w.Parts) != 1 {
			return "", nil, false
		}
		l, isLit := w.Parts[0].(*syntax.Lit)
		if !isLit {
			return "", nil, false
		}
		args = append(args, l.Value)
	}
	return args[0], args[1:], true
}

// proseLine reports whether a line routed as a command reads as a request
// (proseCommand), in this session.
func (s *State) proseLine(text string) bool {
	return proseCommand(text, s.userCommand, s.exists)
}

// userCommand reports whether name is an alias or a function of the
// session's bash.
func (s *State) userCommand(name string) bool {
	b := s.bash
	return b != nil && b.st != nil && (b.st.aliasNames[name] || b.st.funcNames[name])
}

// proseCommand reports whether a command line reads as English
// (readsAsProse) for a command that is an executable: bash's builtins,
// the person's own commands (user: aliases, functions) and the commands
// that take free text (echo, say, ...) are always run.
func proseCommand(text string, user, exists func(string) bool) bool {
	name, args, ok := simpleArgs(text)
	if !ok || len(args) < 3 || bashBuiltins()[name] || textCommands()[name] || strings.Contains(name, "/") || user(name) {
		return false
	}
	return readsAsProse(args, exists)
}

// exists reports whether name is a path relative to the session's
// directory.
func (s *State) exists(name string) bool {
	_, err := os.Lstat(filepath.Join(s.Dir, name))
	return err == nil
}

// typoOf returns the command the line's first word is a typo of, or ""
// (typoFor, with the session's names).
func (s *State) typoOf(text string) string {
	return typoFor(text, s.knownNames, s.IsCommand)
}

// typoFor returns the command the line's first word is a typo of, or "":
// the word is unknown, looks like a command name, is not a word requests
// start with nor an inflected word, the rest of the line holds no
// function word, and a command of names is one edit away (an insertion,
// a deletion, a replacement or a swap of two letters: "gti", "sl",
// "mkae"; two edits guessed "decompress" for compress). names is called
// only then.
func typoFor(text string, names func() []string, isCommand func(string) bool) string {
	fields := strings.Fields(text)
	if len(fields) == 0 {
		return ""
	}
	w := fields[0]
	if len(w) < 2 || !commandLike(w) || requestWords()[w] || functionWords()[w] || inflected(w) {
		return ""
	}
	for _, a := range fields[1:] {
		a = strings.ToLower(strings.TrimRight(a, ".,?!"))
		if functionWords()[a] || a == "and" || a == "or" || a == "as" {
			return ""
		}
	}
	return nearest(w, names(), isCommand)
}

// inflected reports whether w ends like an English verb or plural (-s
// but not -ss from four letters, -ed or -ing from five): "sets",
// "counts", "creates", "listing" are words, not typos of set, mount,
// create or listen.
func inflected(w string) bool {
	return len(w) >= 4 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") || len(w) >= 5 && (strings.HasSuffix(w, "ed") || strings.HasSuffix(w, "ing"))
}

// commandLike reports whether w could be a command's name as typed:
// lower-case letters, digits, and . _ + - after the first letter.
func commandLike(w string) bool {
	for i, r := range w {
		switch {
		case r >= 'a' && r <= 'z':
		case i > 0 && (r >= '0' && r <= '9' || strings.ContainsRune("._+-", r)):
		default:
			return false
		}
	}
	return true
}

// knownNames are the names a typo is measured against: bash's builtins
// (not its reserved words), the session's aliases and functions, and the
// PATH's entries.
func (s *State) knownNames() []string {
	names := append([]string(nil), s.pathNames()...)
	for n := range bashBuiltins() {
		names = append(names, n)
	}
	if b := s.bash; b != nil && b.st != nil {
		for n := range b.st.aliasNames {
			names = append(names, n)
		}
		for n := range b.st.funcNames {
			names = append(names, n)
		}
	}
	return names
}

// nearest returns the name one edit from w, "" when there is none; isCommand confirms a PATH entry is executable. Of equal
// distances, the first in sorted order wins.
func nearest(w string, names []string, isCommand func(string) bool) string {
	const maxd = 1
	best, bestd := "", maxd+1
	for _, n := range names {
		if len(n) < 2 || n == w || abs(len(n)-len(w)) > maxd {
			continue
		}
		d := osaDistance(w, n, maxd)
		if d < bestd || d == bestd && n < best {
			if bashBuiltins()[n] || isCommand(n) {
				best, bestd = n, d
			}
		}
	}
	return best
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// osaDistance is the optimal string alignment distance between a and b
// (edits of one byte: insert, delete, replace, swap two neighbours),
// or limit+1 once it is known to exceed limit.
func osaDistance(a, b string, limit int) int {
	n, m := len(a), len(b)
	d := make([][]int, n+1)
	for i := range d {
		d[i] = make([]int, m+1)
		d[i][0] = i
	}
	for j := 0; j <= m; j++ {
		d[0][j] = j
	}
	for i := 1; i <= n; i++ {
		rowMin := d[i][0]
		for j := 1; j <= m; j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			v := min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				v = min(v, d[i-2][j-2]+1)
			}
			d[i][j] = v
			rowMin = min(rowMin, v)
		}
		if rowMin > limit {
			return limit + 1
		}
	}
	return d[n][m]
}

// typoMessage is what a Typo line prints, after "nash: ", as bash words
// it: "gti: command not found; did you mean git?".
func typoMessage(r Route) string {
	w, _, _ := strings.Cut(r.Text, " ")
	return fmt.Sprintf("%s: command not found; did you mean %s?", w, r.Suggest)
}
