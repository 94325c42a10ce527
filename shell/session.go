package shell

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/planner"
	"github.com/nash-shell/nash/scripttest"
)

// State is the session: what a real shell keeps between lines.
type State struct {
	Dir    string // the working directory, absolute
	OldDir string // for cd -
	env    map[string]string
	keys   []string // env's names in the order they came, as bash gets them natively
	home   string

	// Committed lists the committed scripts of this session, oldest
	// first, for :export.
	Committed []Step
	// History is what the planner sees of this session, oldest first.
	History []planner.HistoryEntry

	exe map[string]bool // isCommand cache, cleared when PATH or Dir changes
	// names lists the PATH directories' entries for Tab and "did you
	// mean", read for namesKey (PATH and Dir), cleared by Forget.
	names    []string
	namesKey string

	// bash carries one bash session from line to line (bashsession.go);
	// nil: each line starts afresh, and cd, export and unset are nash's.
	bash *bashSession
}

// Step is one committed script and the request it answered.
type Step struct {
	Prompt string // "" for a typed command
	Script string
	Dir    string
	TxID   string
	Time   time.Time
	// Examples are the person's examples of what Script does, given at
	// the review; :export writes them out as a test.
	Examples []scripttest.Example
}

// NewState starts a session in dir with env (as os.Environ).
func NewState(dir string, env []string, home string) *State {
	s := &State{Dir: dir, env: map[string]string{}, home: home, exe: map[string]bool{}}
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			s.setenv(k, v)
		}
	}
	if home != "" && s.env["HOME"] == "" {
		s.setenv("HOME", home)
	}
	s.setenv("PWD", dir)
	return s
}

// Environ is the environment scripts get, in the order the variables were
// first set: bash builds its exported environment from a hash table filled
// in that order, so env prints what it would print natively.
func (s *State) Environ() []string {
	out := make([]string, 0, len(s.keys))
	for _, k := range s.keys {
		out = append(out, k+"="+s.env[k])
	}
	return out
}

func (s *State) setenv(k, v string) {
	if _, set := s.env[k]; !set {
		s.keys = append(s.keys, k)
	}
	s.env[k] = v
}

func (s *State) unsetenv(k string) {
	if _, set := s.env[k]; set {
		delete(s.env, k)
		s.keys = slices.DeleteFunc(s.keys, func(x string) bool { return x == k })
	}
}

// Getenv returns a variable of the session.
func (s *State) Getenv(k string) string { return s.env[k] }

// startBash makes the session carry one bash session from line to line.
func (s *State) startBash() { s.bash = &bashSession{} }

// Close removes what the session keeps on disk for its bash.
func (s *State) Close() {
	if s.bash != nil {
		s.bash.close()
	}
}

// IsCommand reports whether name is an alias or a function of the
// session's bash, an executable on the session's PATH, or, when it holds a
// slash, an executable file relative to Dir. Answers about executables
// are cached until PATH or Dir changes, or Forget.
func (s *State) IsCommand(name string) bool {
	if b := s.bash; b != nil && b.st != nil && (b.st.aliasNames[name] || b.st.funcNames[name]) {
		return true
	}
	if v, ok := s.exe[name]; ok {
		return v
	}
	v := s.lookPath(name)
	s.exe[name] = v
	return v
}

// Forget clears the command cache (after a run that may have installed
// something).
func (s *State) Forget() { clear(s.exe); s.names = nil }

func (s *State) lookPath(name string) bool {
	if strings.Contains(name, "/") {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(s.Dir, p)
		}
		return isExecutable(p)
	}
	for _, d := range filepath.SplitList(s.env["PATH"]) {
		if d == "" {
			d = "."
		}
		if !filepath.IsAbs(d) {
			d = filepath.Join(s.Dir, d)
		}
		if isExecutable(filepath.Join(d, name)) {
			return true
		}
	}
	return false
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// Route decides where line goes in this session: RouteLine with the
// session's commands. With a bash session, only a plain cd and exit are
// nash's; export, unset and cd with options are bash's, like any builtin.
// Unless forced with ! or ?, a command line that reads as English goes to
// the planner (proseLine), and an unknown first word close to a command
// is a Typo (typoOf), sent nowhere.
func (s *State) Route(line string) Route {
	r := RouteLine(line, s.IsCommand)
	if r.Kind == Session && s.bash != nil && !isPlainCdOrExit(r.Text) {
		r.Kind = Command
	}
	switch {
	case r.Forced:
	case r.Kind == Command && s.proseLine(r.Text):
		r.Kind, r.Prose = English, true
	case r.Kind == English:
		if t := s.typoOf(r.Text); t != "" {
			r.Kind, r.Suggest = Typo, t
		}
	}
	return r
}

// isPlainCdOrExit reports whether a session line is exit, or cd with at
// most one operand and no option but --.
func isPlainCdOrExit(text string) bool {
	f, err := syntax.NewParser().Parse(strings.NewReader(text), "")
	if err != nil || len(f.Stmts) != 1 {
		return false
	}
	c, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(c.Args) == 0 {
		return false
	}
	switch c.Args[0].Lit() {
	case "exit":
		return true
	case "cd":
		args := c.Args[1:]
		if len(args) > 0 && args[0].Lit() == "--" {
			args = args[1:]
		}
		if len(args) > 1 {
			return false
		}
		return len(args) == 0 || args[0].Lit() == "-" || !strings.HasPrefix(args[0].Lit(), "-")
	}
	return false
}

// ErrExit is returned by Apply for exit.
var ErrExit = errors.New("exit")

// Apply runs a session line (cd, export, unset, exit; see RouteLine) and
// returns what to print. Words are expanded like the shell would, with the
// session's variables and ~, but without command substitution.
func (s *State) Apply(text string) (string, error) {
	f, err := syntax.NewParser().Parse(strings.NewReader(text), "")
	if err != nil {
		return "", err
	}
	if len(f.Stmts) != 1 {
		return "", fmt.Errorf("not a session command: %s", effects.Quote(text))
	}
	cfg := &expand.Config{Env: expand.FuncEnviron(func(k string) string { return s.env[k] })}
	noSubst := func(name string, err error) error {
		var ue expand.UnexpectedCommandError
		if errors.As(err, &ue) {
			return fmt.Errorf("%s: command substitution is not run here; write it as a command, not a session line", name)
		}
		return err
	}
	if d, ok := f.Stmts[0].Cmd.(*syntax.DeclClause); ok && d.Variant.Value == "export" {
		var args []string
		for _, a := range d.Args {
			switch {
			case a.Naked && a.Name != nil:
				args = append(args, a.Name.Value)
			case a.Naked && a.Value != nil:
				v, err := expand.Literal(cfg, a.Value)
				if err != nil {
					return "", noSubst("export", err)
				}
				args = append(args, v)
			case a.Name != nil:
				v := ""
				if a.Value != nil {
					var err error
					if v, err = expand.Literal(cfg, a.Value); err != nil {
						return "", noSubst("export", err)
					}
				}
				args = append(args, a.Name.Value+"="+v)
			}
		}
		return s.export(args)
	}
	call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 {
		return "", fmt.Errorf("not a session command: %s", effects.Quote(text))
	}
	args, err := expand.Fields(cfg, call.Args...)
	if err != nil {
		return "", noSubst(call.Args[0].Lit(), err)
	}
	switch args[0] {
	case "cd":
		return s.cd(args[1:])
	case "export":
		return s.export(args[1:])
	case "unset":
		for _, k := range args[1:] {
			if k == "-v" {
				continue
			}
			if k == "-f" {
				return "", errors.New("unset: nash keeps no functions")
			}
			s.unsetenv(k)
			if k == "PATH" {
				s.Forget()
			}
		}
		return "", nil
	case "exit":
		return "", ErrExit
	}
	return "", fmt.Errorf("not a session command: %s", effects.Quote(args[0]))
}

func (s *State) cd(args []string) (string, error) {
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	if len(args) > 1 {
		return "", errors.New("cd: too many arguments")
	}
	target, show := s.env["HOME"], false
	if len(args) == 1 {
		target = args[0]
	}
	switch {
	case target == "-":
		if s.OldDir == "" {
			return "", errors.New("cd: OLDPWD not set")
		}
		target, show = s.OldDir, true
	case target == "":
		return "", errors.New("cd: HOME not set")
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(s.Dir, target)
	}
	target = filepath.Clean(target)
	fi, err := os.Stat(target)
	if err != nil {
		return "", fmt.Errorf("cd: %s: no such directory", effects.Quote(target))
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("cd: %s: not a directory", effects.Quote(target))
	}
	s.OldDir, s.Dir = s.Dir, target
	s.setenv("OLDPWD", s.OldDir)
	s.setenv("PWD", s.Dir)
	s.Forget()
	if show {
		return effects.Quote(target), nil
	}
	return "", nil
}

func (s *State) export(args []string) (string, error) {
	if len(args) == 0 || (len(args) == 1 && args[0] == "-p") {
		var b strings.Builder
		env := s.Environ()
		sort.Strings(env) // as bash's export -p
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			fmt.Fprintf(&b, "export %s=%s\n", k, effects.Quote(v))
		}
		return strings.TrimSuffix(b.String(), "\n"), nil
	}
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !syntax.ValidName(k) {
			return "", fmt.Errorf("export: %s: not a valid name", effects.Quote(k))
		}
		if !ok {
			if _, set := s.env[k]; !set {
				s.setenv(k, "")
			}
			continue
		}
		s.setenv(k, v)
		if k == "PATH" {
			s.Forget()
		}
	}
	return "", nil
}

// Prompt is the prompt's location: Dir with the home directory as ~.
func (s *State) Prompt() string { return tildePath(s.Dir, s.home) }

func tildePath(p, home string) string {
	home = strings.TrimSuffix(home, "/")
	if home != "" && home != "/" {
		if p == home {
			return "~"
		}
		if rest, ok := strings.CutPrefix(p, home+"/"); ok {
			return "~/" + effects.Escape(rest)
		}
	}
	return effects.Escape(p)
}

// Record notes a finished step in the planner's history, keeping the last
// 20.
func (s *State) Record(e planner.HistoryEntry) {
	s.History = append(s.History, e)
	if n := len(s.History); n > 20 {
		s.History = slices.Delete(s.History, 0, n-20)
	}
}

// Export writes the session's committed scripts as one executable bash
// script, each preceded by its request as a comment.
func (s *State) Export() string { return exportScript(s.Committed) }

func exportScript(steps []Step) string {
	var b strings.Builder
	b.WriteString("#!/usr/bin/env bash\n# exported from a nash session\nset -euo pipefail\n")
	for _, st := range steps {
		b.WriteString("\n")
		what := st.Prompt
		if what == "" {
			what = "(typed command)"
		}
		for _, l := range strings.Split(strings.TrimSpace(what), "\n") {
			fmt.Fprintf(&b, "# %s\n", effects.Escape(l))
		}
		fmt.Fprintf(&b, "# transaction %s, %s\n", st.TxID, st.Time.UTC().Format(time.RFC3339))
		b.WriteString("(\n")
		if q, err := syntax.Quote(st.Dir, syntax.LangBash); err == nil && st.Dir != "" {
			fmt.Fprintf(&b, "cd -- %s\n", q)
		}
		b.WriteString(strings.TrimRight(st.Script, "\n"))
		b.WriteString("\n)\n")
	}
	return b.String()
}
