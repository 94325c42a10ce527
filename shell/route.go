package shell

import (
	"strings"
	"sync"

	"mvdan.cc/sh/v3/syntax"
)

// Kind is where a line goes.
type Kind int

// The routes of a line.
const (
	Empty   Kind = iota // nothing to do
	Command             // a shell command, run as typed
	English             // a request for the planner
	Builtin             // a nash built-in (:undo, :log, ...)
	Session             // cd, export, unset or exit: changes the session
	Typo                // an unknown command close to a known one: goes nowhere
)

func (k Kind) String() string {
	switch k {
	case Command:
		return "command"
	case English:
		return "english"
	case Builtin:
		return "builtin"
	case Session:
		return "session"
	case Typo:
		return "typo"
	}
	return "empty"
}

// Route is a line's destination and the text that goes there, with the
// forcing prefix removed.
type Route struct {
	Kind   Kind
	Text   string
	Forced bool // a leading ! or ? chose the route
	// Prose: a line starting with a command's name that reads as English
	// (State.Route), sent to the planner.
	Prose bool
	// Suggest is, for a Typo, the command the first word is close to.
	Suggest string
}

// bashBuiltins are the names bash runs itself, plus its reserved words.
// The set is built on first use: nash run and the other commands never
// route a line.
var bashBuiltins = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`. : [ [[ alias bg bind break builtin caller cd command compgen complete
		compopt continue declare dirs disown echo enable eval exec exit export false fc fg getopts hash
		help history jobs kill let local logout mapfile popd printf pushd pwd read readarray readonly
		return set shift shopt source suspend test times trap true type typeset ulimit umask unalias
		unset wait if then else elif fi case esac for select while until do done in function time coproc`) {
		m[w] = true
	}
	return m
})

// isSessionCommand reports whether name changes the session instead of
// running in the sandbox.
func isSessionCommand(name string) bool {
	switch name {
	case "cd", "export", "unset", "exit":
		return true
	}
	return false
}

// RouteLine decides where line goes. isCommand reports whether a name is
// an executable on the session's PATH (or, with a slash, an executable
// file). A line that parses as shell and whose first command is a bash
// builtin, a function the line defines, or such an executable is a
// command; a line that does not parse, or starts with an unknown word, is
// English. "!" forces a command, "?" forces English, ":" is a built-in.
func RouteLine(line string, isCommand func(name string) bool) Route {
	text := strings.TrimSpace(line)
	switch {
	case text == "":
		return Route{Kind: Empty}
	case strings.HasPrefix(text, "!"):
		t := strings.TrimSpace(text[1:])
		if t == "" {
			return Route{Kind: Empty, Forced: true}
		}
		if isSessionLine(t) {
			return Route{Kind: Session, Text: t, Forced: true}
		}
		return Route{Kind: Command, Text: t, Forced: true}
	case strings.HasPrefix(text, "?"):
		t := strings.TrimSpace(text[1:])
		if t == "" {
			return Route{Kind: Empty, Forced: true}
		}
		return Route{Kind: English, Text: t, Forced: true}
	case text == ":exit" || text == ":quit" || text == ":q":
		// As vi and other REPLs leave.
		return Route{Kind: Session, Text: "exit"}
	case strings.HasPrefix(text, ":") && len(text) > 1 && isLetter(text[1]):
		return Route{Kind: Builtin, Text: text[1:]}
	}
	f, err := syntax.NewParser().Parse(strings.NewReader(text), "")
	if err != nil || len(f.Stmts) == 0 {
		return Route{Kind: English, Text: text}
	}
	name, ok := firstCommand(f)
	switch {
	case !ok: // an assignment, a function, a compound command: shell syntax
		return Route{Kind: Command, Text: text}
	case isSessionCommand(name) && isSessionLine(text):
		return Route{Kind: Session, Text: text}
	case bashBuiltins()[name] || definesFunc(f, name) || isCommand(name):
		return Route{Kind: Command, Text: text}
	}
	return Route{Kind: English, Text: text}
}

func isLetter(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }

// firstCommand returns the literal name of the line's first command; ok is
// false when the first statement is not a simple command with a name, or
// the name is only known at run time ($EDITOR), which is shell syntax too.
func firstCommand(f *syntax.File) (string, bool) {
	st := f.Stmts[0]
	for {
		switch c := st.Cmd.(type) {
		case *syntax.BinaryCmd:
			st = c.X
			continue
		case *syntax.DeclClause:
			return c.Variant.Value, true
		case *syntax.CallExpr:
			if len(c.Args) == 0 {
				return "", false
			}
			lit := c.Args[0].Lit()
			if lit == "" {
				return "", false
			}
			return lit, true
		}
		return "", false
	}
}

// definesFunc reports whether the line defines a function named name.
func definesFunc(f *syntax.File, name string) bool {
	found := false
	syntax.Walk(f, func(n syntax.Node) bool {
		if fd, ok := n.(*syntax.FuncDecl); ok && fd.Name.Value == name {
			found = true
		}
		return !found
	})
	return found
}

// isSessionLine reports whether text is one simple cd, export, unset or
// exit command, with nothing else on the line: only then does it change
// the session. "cd build && make" runs in the sandbox as written.
func isSessionLine(text string) bool {
	f, err := syntax.NewParser().Parse(strings.NewReader(text), "")
	if err != nil || len(f.Stmts) != 1 {
		return false
	}
	st := f.Stmts[0]
	if d, ok := st.Cmd.(*syntax.DeclClause); ok {
		return d.Variant.Value == "export" && !st.Negated && !st.Background && len(st.Redirs) == 0
	}
	c, ok := st.Cmd.(*syntax.CallExpr)
	if !ok || st.Negated || st.Background || len(st.Redirs) > 0 || len(c.Assigns) > 0 || len(c.Args) == 0 {
		return false
	}
	return isSessionCommand(c.Args[0].Lit())
}
