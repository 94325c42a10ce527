package shell

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"mvdan.cc/sh/v3/syntax"
)

// bashSession is the session's bash between lines (bashstate.go says
// how): the state the last line left, and nash's private directory for
// the files that carry it.
type bashSession struct {
	dir string     // nash's directory for it ("" until the first line)
	st  *bashState // nil before the first line and the rc
	// skip names the functions read with the rc from completion scripts:
	// only Tab needs them, and it has its own bash.
	skip map[string]bool
	// complete is the rc's complete -p, for Tab.
	complete string
	cache    dumpCache
	// The state file last written, what it holds and when it was
	// written: it is written again only when one of them changed.
	n       int
	written string
	stamp   os.FileInfo
}

// hasBash reports whether the system has the bash the sandbox runs
// scripts with.
func hasBash() bool {
	for _, p := range []string{"/bin/bash", "/usr/bin/bash"} {
		if isExecutable(p) {
			return true
		}
	}
	return false
}

// lineSession is what one line's run needs of the session: taken by the
// face before the pass, read from the pass's goroutine afterwards.
type lineSession struct {
	file string // the state file the line's bash reads (BASH_ENV)
	out  string // the Keep directory it writes its state to
	skip map[string]bool
	// cache is the session's: lines are read one at a time.
	cache *dumpCache
	// bashEnv is the person's own BASH_ENV, put back by the prologue.
	bashEnv *string
	// defined names the session's aliases and functions.
	defined map[string]bool
}

// line writes the state file for the next line, unless the one written
// for the last line holds it and is as nash left it, and empties the out
// directory.
func (b *bashSession) line() (*lineSession, error) {
	out := filepath.Join(b.dir, "out")
	if b.dir == "" {
		d, err := os.MkdirTemp("", "nash-session-")
		if err != nil {
			return nil, fmt.Errorf("shell session: %w", err)
		}
		b.dir, out = d, filepath.Join(d, "out")
		if err := os.Mkdir(out, 0o700); err != nil {
			return nil, fmt.Errorf("shell session: %w", err)
		}
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		return nil, fmt.Errorf("shell session: %w", err)
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(out, e.Name())); err != nil {
			return nil, fmt.Errorf("shell session: %w", err)
		}
	}
	text := b.st.script()
	file := filepath.Join(b.dir, "state-"+strconv.Itoa(b.n)+".sh")
	if fi, err := os.Lstat(file); b.stamp == nil || text != b.written || err != nil || !sameFile(fi, b.stamp) {
		_ = os.Remove(file)
		b.n++
		file = filepath.Join(b.dir, "state-"+strconv.Itoa(b.n)+".sh")
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			return nil, fmt.Errorf("shell session: %w", err)
		}
		if b.stamp, err = os.Lstat(file); err != nil {
			return nil, fmt.Errorf("shell session: %w", err)
		}
		b.written = text
	}
	l := &lineSession{file: file, out: out, skip: b.skip, cache: &b.cache, defined: map[string]bool{}}
	if b.st != nil {
		l.bashEnv = b.st.bashEnv
		for n := range b.st.aliasNames {
			l.defined[n] = true
		}
		for n := range b.st.funcNames {
			l.defined[n] = true
		}
	}
	return l, nil
}

// sameFile reports whether a file is the one written (same inode, size
// and times).
func sameFile(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// close removes nash's directory.
func (b *bashSession) close() {
	if b.dir != "" {
		_ = os.RemoveAll(b.dir)
		b.dir = ""
	}
}

// environ is env for a line of the session: the state file as BASH_ENV,
// with the person's own kept aside for the prologue to put back.
func (l *lineSession) environ(env []string) []string {
	out := make([]string, 0, len(env)+3)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "BASH_ENV=") && !strings.HasPrefix(kv, "__NASH_") {
			out = append(out, kv)
		}
	}
	out = append(out, "BASH_ENV="+l.file, "__NASH_OUT="+l.out)
	if l.bashEnv != nil {
		out = append(out, "__NASH_BASH_ENV="+*l.bashEnv)
	}
	return out
}

// lineResult is what a line left of the session, read in the pass's
// goroutine and applied by the face.
type lineResult struct {
	st    *bashState
	notes []string
	err   error
	// pwdOK says st.pwd is a directory (after the commit): the session
	// moves there.
	pwdOK bool
}

// read parses the state the line's bash left in kept.
func (l *lineSession) read(kept map[string][]byte) lineResult {
	b, ok := kept[stateFile]
	if !ok {
		return lineResult{err: ErrNoState}
	}
	st, notes, err := parseDump(b, l.skip, l.cache)
	if err != nil {
		return lineResult{err: err}
	}
	r := lineResult{st: st, notes: notes}
	if st.pwd != "" {
		if fi, err := os.Stat(st.pwd); err == nil && fi.IsDir() {
			r.pwdOK = true
		}
	}
	return r
}

// applyLine takes what a line left into the session: its state, the
// exported variables as the environment, and its directory, when that
// exists. ran says a script ran, with exit code exit; when it left no
// state (killed, or replaced by exec), $? is its exit code and the rest
// stays as it was.
func (s *State) applyLine(r lineResult, ran bool, exit int) {
	if s.bash == nil {
		return
	}
	if r.st == nil {
		if ran {
			st := bashState{}
			if s.bash.st != nil {
				st = *s.bash.st
			}
			st.status = exit
			s.bash.st = &st
		}
		return
	}
	s.bash.st = r.st
	env := make(map[string]string, len(r.st.env)+4)
	for k, v := range s.env {
		// What bash does not hold as a variable passes through it.
		if k == "SHLVL" || !syntax.ValidName(k) && !strings.HasPrefix(k, "BASH_FUNC_") {
			env[k] = v
		}
	}
	for k, v := range r.st.env {
		env[k] = v
	}
	if r.st.bashEnv != nil {
		env["BASH_ENV"] = *r.st.bashEnv
	}
	s.env = env
	if r.pwdOK && r.st.pwd != s.Dir {
		s.OldDir, s.Dir = s.Dir, r.st.pwd
	}
	if r.st.oldpwd != "" {
		s.OldDir = r.st.oldpwd
	}
	if s.OldDir != "" {
		s.env["OLDPWD"] = s.OldDir
	}
	s.env["PWD"] = s.Dir
	s.Forget()
}

// setStatus sets $? for the next line (after a line nash ran itself).
func (s *State) setStatus(code int) {
	if s.bash == nil {
		return
	}
	st := bashState{}
	if s.bash.st != nil {
		st = *s.bash.st
	}
	st.status = code
	s.bash.st = &st
}

// rcTimeout bounds the reading of ~/.bashrc: a bashrc that waits for
// something is left behind, and the session starts without it.
const rcTimeout = 10 * time.Second

// rcOutput is what reading the rc printed that is not bash's complaint
// about having no terminal.
func rcOutput(b []byte) string {
	var out []string
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if strings.Contains(l, "cannot set terminal process group") || strings.Contains(l, "no job control in this shell") || l == "" {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// loadRC reads the person's ~/.bashrc in the sandbox, once, as an
// interactive bash would, with ls's prologue: whatever the rc writes is
// discarded; what it defines is the session's start. It returns what the
// rc printed, and the session's start.
func (e *engine) loadRC(ctx context.Context, dir string, env []string, l *lineSession) (string, lineResult, string, map[string]bool) {
	ctx, cancel := context.WithTimeout(ctx, rcTimeout)
	defer cancel()
	if e.cfg.Open == nil {
		return "", lineResult{err: errors.New("no sandbox configured")}, "", nil
	}
	prologue := filepath.Join(filepath.Dir(l.out), "prologue.sh")
	if err := os.WriteFile(prologue, []byte(sessionPrologue), 0o600); err != nil {
		return "", lineResult{err: err}, "", nil
	}
	defer os.Remove(prologue)
	var out bytes.Buffer
	// No BASH_ENV: the interactive bash reads the rc, then the prologue.
	renv := make([]string, 0, len(env)+3)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "BASH_ENV=") && !strings.HasPrefix(kv, "__NASH_") {
			renv = append(renv, kv)
		}
	}
	renv = append(renv, "__NASH_OUT="+l.out, "__NASH_PROLOGUE="+prologue)
	if l.bashEnv != nil {
		renv = append(renv, "__NASH_BASH_ENV="+*l.bashEnv)
	}
	sb, err := e.cfg.Open(ctx, OpenSpec{Dir: dir, Env: renv, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &out, Keep: l.out})
	if err != nil {
		return "", lineResult{err: err}, "", nil
	}
	p, err := sb.Run(ctx, rcScript)
	if err != nil {
		return "", lineResult{err: err}, "", nil
	}
	_ = sb.Abort(p.ID)
	skip := completionFuncs(p.Kept[funcsrcFile])
	l.skip = skip
	r := l.read(p.Kept)
	if r.st != nil {
		// The session starts where nash started, whatever the rc did.
		r.pwdOK = false
		r.st.status = 0
	}
	return rcOutput(out.Bytes()), r, string(p.Kept[completeRC]), skip
}

// completionFuncs names the functions that declare -F (with extdebug)
// says were defined by a completion script, or by git's prompt script,
// which bash-completion reads: Tab and a prompt use them, and nash has its
// own bash for Tab and no bash prompt.
func completionFuncs(b []byte) map[string]bool {
	skip := map[string]bool{}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.SplitN(l, " ", 3)
		if len(f) != 3 {
			continue
		}
		src := f[2]
		if strings.Contains(src, "bash-completion") || strings.Contains(src, "bash_completion") || strings.HasSuffix(src, "/git-sh-prompt") {
			skip[f[0]] = true
		}
	}
	return skip
}

// bgNote is what the shell says before running a line that starts a
// background job: jobs end with their line, so the line waits for them.
const bgNote = "background jobs end with their line: it waits for them (ctrl+c ends them)"

// startsJob reports whether a line starts a job in the background (cmd &,
// coproc) in the shell that runs it.
func startsJob(text string) bool {
	f, err := syntax.NewParser().Parse(strings.NewReader(text), "")
	if err != nil {
		return false
	}
	found := false
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			if n.Background || n.Coprocess {
				found = true
			}
		case *syntax.CoprocClause:
			found = true
		case *syntax.CmdSubst, *syntax.ProcSubst, *syntax.Subshell, *syntax.FuncDecl:
			return false // their jobs end with them, or start later
		}
		return !found
	})
	return found
}
