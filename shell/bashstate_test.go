package shell

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// hostSession runs lines of a session with bash on the host, the way the
// sandbox runs them (bash -c LINE, BASH_ENV, the Keep directory read
// afterwards), so that the session's state is tested against bash itself.
type hostSession struct {
	t        testing.TB
	st       *State
	dir      string
	lastDump []byte
}

func newHostSession(t testing.TB) *hostSession {
	t.Helper()
	if !hasBash() {
		t.Fatal("these tests need bash")
	}
	dir := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "LANG=C.UTF-8", "SHLVL=1"}
	st := NewState(dir, env, dir)
	st.startBash()
	t.Cleanup(st.Close)
	return &hostSession{t: t, st: st, dir: dir}
}

// line runs one line and takes its state into the session, as the shell
// does; it returns what the line printed.
func (h *hostSession) line(text string) (stdout, stderr string, r lineResult) {
	h.t.Helper()
	ls, err := h.st.bash.line()
	if err != nil {
		h.t.Fatal(err)
	}
	cmd := exec.Command("bash", "-c", text, "bash")
	cmd.Env, cmd.Dir = ls.environ(h.st.Environ()), h.st.Dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	exit := 0
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			h.t.Fatalf("run %q: %v", text, err)
		}
		exit = ee.ExitCode()
	}
	kept := map[string][]byte{}
	entries, _ := os.ReadDir(ls.out)
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(ls.out, e.Name()))
		if err == nil {
			kept[e.Name()] = b
		}
	}
	h.lastDump = kept[stateFile]
	r = ls.read(kept)
	h.st.applyLine(r, true, exit)
	return out.String(), errb.String(), r
}

// plainLine runs a line the way line does, with the session's
// environment but none of its state.
func (h *hostSession) plainLine(text string) (stdout, stderr string) {
	h.t.Helper()
	cmd := exec.Command("bash", "-c", text, "bash")
	cmd.Env, cmd.Dir = h.st.Environ(), h.st.Dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			h.t.Fatalf("run %q: %v", text, err)
		}
	}
	return out.String(), errb.String()
}

// TestBashSessionAcrossLines: what a bash session keeps from line to line
// is kept, each line in a fresh bash, and restoring it prints nothing.
func TestBashSessionAcrossLines(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines []string
		want  string // the last line's stdout
	}{
		{"variable", []string{"X=1", `echo "x=$X"`}, "x=1\n"},
		{"status", []string{"false", `echo "status=$?"`}, "status=1\n"},
		{"status of exit", []string{"(exit 7); exit 3", `echo $?`}, "3\n"},
		{"exported to children", []string{"export E=2", `bash -c 'echo "e=$E"'`}, "e=2\n"},
		{"export of a shell variable", []string{"V=3", "export V", `sh -c 'echo "v=$V"'`}, "v=3\n"},
		{"unset", []string{"export E=2", "unset E", `echo "e=[${E-unset}]"`}, "e=[unset]\n"},
		{"export -n", []string{"export E=2", "export -n E", `sh -c 'echo "[$E]"'; echo "$E"`}, "[]\n2\n"},
		{"function", []string{`greet() { echo "hi $1"; }`, "greet you"}, "hi you\n"},
		{"exported function", []string{`f() { echo fx; }; export -f f`, "bash -c f"}, "fx\n"},
		{"alias", []string{`alias ll='echo listing'`, "ll -a"}, "listing -a\n"},
		{"alias with quotes", []string{`alias q="echo 'a b'  \"c\""`, "q"}, "a b c\n"},
		{"unalias", []string{"alias x=true", "unalias x", "type x >/dev/null 2>&1 || echo gone"}, "gone\n"},
		{"array", []string{`a=(1 "2 3" $'\n')`, `printf '<%s>' "${a[@]}"`}, "<1><2 3><\n>"},
		{"associative array", []string{`declare -A m=([k]=v ["a b"]=c)`, `echo "${m[k]} ${m[a b]}"`}, "v c\n"},
		{"integer", []string{"declare -i n=5", "n+=2; echo $n"}, "7\n"},
		{"nameref", []string{"t=1; declare -n r=t", "r=9; echo $t"}, "9\n"},
		{"readonly", []string{"readonly R=1", "(R=2) 2>/dev/null; echo $R"}, "1\n"},
		{"shopt", []string{"shopt -s extglob", "shopt -q extglob && echo on"}, "on\n"},
		{"extglob in a function", []string{"shopt -s extglob", "g() { case $1 in +(a)) echo A;; esac; }", "g aaa"}, "A\n"},
		{"set -e", []string{"set -e", "false; echo not reached"}, ""},
		{"set -u", []string{"set -u", "echo ${NOPE-default}"}, "default\n"},
		{"pipefail", []string{"set -o pipefail", "false | true; echo $?"}, "1\n"},
		{"umask", []string{"umask 027", "umask"}, "0027\n"},
		{"cd", []string{"mkdir -p sub && cd sub", "basename $PWD"}, "sub\n"},
		{"pushd", []string{"mkdir -p a b; pushd a >/dev/null; pushd ../b >/dev/null", "dirs -v | wc -l; popd >/dev/null; basename $PWD"}, "3\na\n"},
		{"source", []string{`printf 'S=sourced\nsf() { echo $S; }\n' > lib.sh`, ". ./lib.sh", "sf"}, "sourced\n"},
		{"posix mode", []string{"set -o posix", "shopt -oq posix && echo posix"}, "posix\n"},
		{"IFS", []string{"IFS=:", `x="a:b"; set -- $x; echo $#`}, "2\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHostSession(t)
			var out, errs string
			for _, l := range tc.lines {
				out, errs, _ = h.line(l)
			}
			if out != tc.want {
				t.Errorf("last line printed %q, want %q (stderr %q)", out, tc.want, errs)
			}
			if strings.Contains(errs, "readonly") || strings.Contains(errs, "__nash") || strings.Contains(errs, "BASH_ENV") {
				t.Errorf("restoring the state complained: %q", errs)
			}
		})
	}
}

// TestBashSessionQuiet: a plain line after a rich state prints nothing on
// stderr; xtrace traces the line and nothing of nash's.
func TestBashSessionQuiet(t *testing.T) {
	h := newHostSession(t)
	for _, l := range []string{
		"readonly R=1; declare -A m=([x]=y); f() { :; }; alias a=b; shopt -s globstar; set -o pipefail; umask 022",
		"SECONDS=5; RANDOM=3; OPTIND=2",
	} {
		if _, errs, r := h.line(l); errs != "" || r.err != nil {
			t.Fatalf("line %q: stderr %q, err %v", l, errs, r.err)
		}
	}
	if _, errs, _ := h.line("true"); errs != "" {
		t.Errorf("a plain line complained: %q", errs)
	}
	h.line("set -x")
	_, errs, _ := h.line("echo traced")
	if errs != "+ echo traced\n" {
		t.Errorf("xtrace printed %q, want only the line's own trace", errs)
	}
	h.line("set +x")
	if _, errs, _ := h.line("true"); errs != "" {
		t.Errorf("after set +x: stderr %q", errs)
	}
}

// TestBashSessionHostileValues: values are data: nothing in them runs when
// the state is read back, and they come back byte for byte.
func TestBashSessionHostileValues(t *testing.T) {
	h := newHostSession(t)
	evil := "$(touch pwned1)`touch pwned2`\x1b]0;title\a'\"\\\n;touch pwned3"
	q, err := syntax.Quote(evil, syntax.LangBash)
	if err != nil {
		t.Fatal(err)
	}
	h.line("X=" + q + "; export Y=" + q + "; alias z=" + q + "; a=(" + q + ")")
	out, _, _ := h.line(`printf '%s' "$X"`)
	if out != evil {
		t.Errorf("X came back as %q, want %q", out, evil)
	}
	if got := h.st.Getenv("Y"); got != evil {
		t.Errorf("the exported Y is %q in the environment, want %q", got, evil)
	}
	out, _, _ = h.line(`printf '%s' "${a[0]}"`)
	if out != evil {
		t.Errorf("a[0] came back as %q", out)
	}
	for _, f := range []string{"pwned1", "pwned2", "pwned3"} {
		if _, err := os.Stat(filepath.Join(h.st.Dir, f)); err == nil {
			t.Errorf("%s was created: a value ran", f)
		}
	}
}

// TestParseDumpRefusesCode: a state that was tampered with (a line can
// write anything where the state goes) never makes the next line run
// what it holds: only declarations and definitions are kept.
func TestParseDumpRefusesCode(t *testing.T) {
	dump := func(vars, funcs, aliases string) []byte {
		return []byte("status\x000\x00pwd\x00/\x00flags\x00hB\x00umask\x000022\n\x00vars\x00" + vars +
			"\x00funcs\x00" + funcs + "\x00aliases\x00" + aliases +
			"\x00shopt\x00shopt -s extglob\nshopt -s $(touch x)\n\x00set\x00set -o pipefail\nset -o monitor\nset -o noexec\n\x00dirs\x00declare -a DIRSTACK=()\n\x00")
	}
	b := dump(
		"declare -- A=\"ok\"\ntouch pwned\ndeclare -- B=$(touch pwned)\ndeclare -- C=\"$(touch pwned)\"\ndeclare -- D=${X}\ndeclare -a E=([0]=\"$(touch pwned)\")\ndeclare -- F=\"x\" G=\"y\"\ndeclare -- H=\"z\" > /tmp/out\n",
		"f () \n{ \n    echo f\n}\ng () \n{ \n    echo g\n}\ntouch pwned\nh () \n{ \n    echo h\n}\ndeclare -fx h\n",
		"alias a='ok'\nalias b=$(touch pwned)\nalias c='x' d='y'\n")
	st, _, err := parseDump(b, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	script := st.script()
	if strings.Contains(script, "touch") || strings.Contains(script, "${X}") || strings.Contains(script, "monitor") || strings.Contains(script, "noexec") || strings.Contains(script, "/tmp/out") {
		t.Errorf("the state file runs or changes more than it declares:\n%s", script)
	}
	for _, want := range []string{`declare -- A="ok"`, "alias a='ok'", "shopt -s extglob", "set -o pipefail"} {
		if !strings.Contains(script, want) {
			t.Errorf("the state file lacks %q:\n%s", want, script)
		}
	}
	if !st.funcNames["f"] || st.funcNames["g"] || !st.funcNames["h"] || !st.aliasNames["a"] || st.aliasNames["b"] {
		t.Errorf("functions %v, aliases %v", st.funcNames, st.aliasNames)
	}
}

// TestBashSessionDropsHugeValues: a variable too big to carry is dropped,
// and the person is told; the rest of the state stays.
func TestBashSessionDropsHugeValues(t *testing.T) {
	h := newHostSession(t)
	_, _, r := h.line(`big=$(head -c 2000000 /dev/zero | tr '\0' a); small=1`)
	if len(r.notes) != 1 || !strings.Contains(r.notes[0], "$big is too big") {
		t.Errorf("notes %q, want one about $big", r.notes)
	}
	out, _, _ := h.line(`echo "${#big} $small"`)
	if out != "0 1\n" {
		t.Errorf("got %q, want the big one gone and the small one kept", out)
	}
}

// TestBashSessionLineReplaced: a line whose bash leaves no state (exec)
// keeps the session as it was, with $? from the line.
func TestBashSessionLineReplaced(t *testing.T) {
	h := newHostSession(t)
	h.line("X=kept")
	if _, _, r := h.line("exec false"); !errors.Is(r.err, ErrNoState) {
		t.Fatalf("err %v, want ErrNoState", r.err)
	}
	out, _, _ := h.line(`echo "$? $X"`)
	if out != "1 kept\n" {
		t.Errorf("got %q", out)
	}
}

func FuzzParseDump(f *testing.F) {
	f.Add([]byte("status\x000\x00pwd\x00/\x00flags\x00hB\x00umask\x000022\n\x00vars\x00declare -- A=\"1\"\n\x00funcs\x00f () \n{ \n    :\n}\ndeclare -fx f\n\x00aliases\x00alias a='b'\n\x00shopt\x00shopt -s extglob\n\x00set\x00set -o posix\n\x00dirs\x00declare -a DIRSTACK=([0]=\"/\" [1]=\"/tmp\")\n\x00"))
	f.Add([]byte("status\x00300\x00"))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, _, err := parseDump(b, nil, nil)
		if err != nil {
			return
		}
		// Whatever was accepted reads back as declarations and
		// definitions only.
		script := st.script()
		file, err := syntax.NewParser().Parse(strings.NewReader(script), "")
		if err != nil {
			t.Fatalf("the state file does not parse: %v\n%s", err, script)
		}
		pro, _ := syntax.NewParser().Parse(strings.NewReader(sessionPrologue), "")
		for _, s := range file.Stmts[len(pro.Stmts):] {
			switch c := s.Cmd.(type) {
			case *syntax.DeclClause, *syntax.FuncDecl:
			case *syntax.Block: // the set options and $?
			case *syntax.CallExpr:
				switch name := c.Args[0].Lit(); name {
				case "alias", "shopt", "builtin":
				default:
					t.Fatalf("the state file runs %q:\n%s", name, script)
				}
			default:
				t.Fatalf("the state file holds a %T:\n%s", c, script)
			}
		}
	})
}

func TestStartsJob(t *testing.T) {
	for _, tc := range []struct {
		line string
		want bool
	}{
		{"sleep 1 &", true},
		{"npm run dev & echo started", true},
		{"coproc cat", true},
		{"a && b", false},
		{"echo '&'", false},
		{"x=$(sleep 1 &)", false},
		{"(sleep 1 &)", false},
		{"f() { sleep 1 & }", false},
		{"not shell (", false},
	} {
		if got := startsJob(tc.line); got != tc.want {
			t.Errorf("startsJob(%q) = %v, want %v", tc.line, got, tc.want)
		}
	}
}
