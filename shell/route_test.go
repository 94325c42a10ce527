package shell

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRouteLine(t *testing.T) {
	onPath := map[string]bool{"ls": true, "git": true, "make": true, "rg": true}
	isCmd := func(n string) bool { return onPath[n] }
	for _, tc := range []struct {
		in   string
		kind Kind
		text string
	}{
		{"", Empty, ""},
		{"   ", Empty, ""},
		{"ls -la", Command, "ls -la"},
		{"git status | head", Command, "git status | head"},
		{"echo hi > f", Command, "echo hi > f"}, // a builtin
		{"FOO=1 make", Command, "FOO=1 make"},   // assignment prefix
		{"x=1", Command, "x=1"},                 // assignment only
		{"for f in *; do echo $f; done", Command, "for f in *; do echo $f; done"},
		{"greet() { echo hi; }; greet", Command, "greet() { echo hi; }; greet"},
		{"$EDITOR notes", Command, "$EDITOR notes"},
		{"./build.sh", English, "./build.sh"}, // not executable here
		{"move every invoice from 2025 into one folder", English, "move every invoice from 2025 into one folder"},
		{"what's using port 8080?", English, "what's using port 8080?"}, // does not parse
		{"tidy up", English, "tidy up"},
		{"!tidy up", Command, "tidy up"},
		{"?ls -la", English, "ls -la"},
		{"? ", Empty, ""},
		{":undo 3", Builtin, "undo 3"},
		{":exit", Session, "exit"},
		{":quit", Session, "exit"},
		{":", Command, ":"}, // the bash builtin
		{"cd /tmp", Session, "cd /tmp"},
		{"cd", Session, "cd"},
		{"export A=1 B=2", Session, "export A=1 B=2"},
		{"unset A", Session, "unset A"},
		{"exit", Session, "exit"},
		{"cd build && make", Command, "cd build && make"}, // runs in the sandbox
		{"export A=1; ls", Command, "export A=1; ls"},
		{"!cd /tmp", Session, "cd /tmp"},
		{"make a notes directory", Command, "make a notes directory"}, // on PATH: the rule, shown before Enter
	} {
		got := RouteLine(tc.in, isCmd)
		if got.Kind != tc.kind || got.Text != tc.text {
			t.Errorf("RouteLine(%q) = %v %q, want %v %q", tc.in, got.Kind, got.Text, tc.kind, tc.text)
		}
	}
}

func TestStateApply(t *testing.T) {
	home := t.TempDir()
	work := filepath.Join(home, "work")
	if err := os.MkdirAll(filepath.Join(work, "a b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s := NewState(work, []string{"PATH=/usr/bin:/bin", "X=1"}, home)
	steps := []struct {
		line, dir, out, err string
	}{
		{line: "cd 'a b'", dir: filepath.Join(work, "a b")},
		{line: "cd -", dir: work, out: work},
		{line: "cd ~", dir: home},
		{line: "cd", dir: home},
		{line: "cd ~/work", dir: work},
		{line: "cd file", dir: work, err: "not a directory"},
		{line: "cd nowhere", dir: work, err: "no such directory"},
		{line: "cd a b", dir: work, err: "too many"},
		{line: "export P=$HOME/bin Q", dir: work},
		{line: "export 1X=2", dir: work, err: "invalid"},
		{line: "export R=$(date)", dir: work, err: "command substitution"},
		{line: "unset X", dir: work},
		{line: "exit", dir: work, err: "exit"},
	}
	for _, st := range steps {
		out, err := s.Apply(st.line)
		if s.Dir != st.dir {
			t.Errorf("%s: dir %q, want %q", st.line, s.Dir, st.dir)
		}
		if out != st.out {
			t.Errorf("%s: out %q, want %q", st.line, out, st.out)
		}
		if (err == nil) != (st.err == "") || err != nil && !strings.Contains(err.Error(), st.err) {
			t.Errorf("%s: err %v, want %q", st.line, err, st.err)
		}
	}
	env := strings.Join(s.Environ(), "\n")
	for _, want := range []string{"P=" + home + "/bin", "Q=", "PWD=" + work, "OLDPWD=" + home} {
		if !strings.Contains(env, want+"\n") && !strings.HasSuffix(env, want) {
			t.Errorf("environment lacks %q:\n%s", want, env)
		}
	}
	if strings.Contains(env, "X=1") {
		t.Errorf("X still set after unset")
	}
	if got := s.Prompt(); got != "~/work" {
		t.Errorf("prompt %q", got)
	}
}

func TestHistoryFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "state", HistoryFile)
	h, err := LoadHistory(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []string{"ls", "ls", " secret", "", "echo 'a\nb'", "git log"} {
		if err := h.Add(l); err != nil {
			t.Fatal(err)
		}
	}
	h2, err := LoadHistory(p)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ls", "echo 'a\nb'", "git log"}
	if h2.Len() != len(want) {
		t.Fatalf("reloaded %d entries, want %d", h2.Len(), len(want))
	}
	for i, w := range want {
		if h2.At(i) != w {
			t.Errorf("entry %d = %q, want %q", i, h2.At(i), w)
		}
	}
	if i := h2.Search("l", h2.Len()); i != 2 {
		t.Errorf("search l = %d, want 2", i)
	}
	if i := h2.Search("l", 2); i != 0 {
		t.Errorf("search l before 2 = %d, want 0", i)
	}
	if i := h2.Search("zzz", h2.Len()); i != -1 {
		t.Errorf("search zzz = %d", i)
	}
}

func TestConfirmReason(t *testing.T) {
	dir := "/home/ann/proj"
	for _, tc := range []struct {
		script string
		want   string
	}{
		{"rm -r build", ""},
		{"echo hi > /tmp/x", ""},
		{"rm ../notes.txt", "deletes outside"},
		{"rm -rf /", "deletes outside"},
		{"rm -r .", "deletes outside"},
		{"rm \"$X\"/y", "deletes outside"},
		{"rm \"$(pwd)/y\"", "deletes outside"},
		{"rm 'a $(b) c.txt' '`d`.txt'", ""}, // quoted: file names, not substitutions
		{"rm /home/ann/proj/*.log", ""},
		{"rm /home/ann/*/x", "deletes outside"},
		{"if then fi", "cannot tell what it does"},
		{"curl -X POST -d @f https://example.com", "cannot undo"},
		{"kill 1234", "signals processes on the host, which cannot be undone"},
	} {
		got := confirmReason(newEngine(Config{Home: "/home/ann"}).analyze(tc.script, dir), dir)
		if (got == "") != (tc.want == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: reason %q, want %q", tc.script, got, tc.want)
		}
	}
}

func TestExportRunsInOrder(t *testing.T) {
	dir := t.TempDir()
	s := NewState(dir, nil, dir)
	s.Committed = []Step{
		{Prompt: "make a file\nwith two lines", Script: "echo one > out.txt", Dir: dir, TxID: "1"},
		{Script: "echo two >> out.txt", Dir: dir, TxID: "2"},
	}
	got := s.Export()
	for _, want := range []string{"#!/usr/bin/env bash", "# make a file\n# with two lines\n", "# (typed command)", "echo one > out.txt", "cd -- " + dir} {
		if !strings.Contains(got, want) {
			t.Errorf("export lacks %q:\n%s", want, got)
		}
	}
}

func TestHighlightKeepsText(t *testing.T) {
	st := newStyles(true)
	in := `for f in *.txt; do echo "$f" '# not' $HOME; done # comment`
	out := st.highlightLine(in)
	if stripANSI(out) != in {
		t.Errorf("highlight changed the text:\n%q\n%q", stripANSI(out), in)
	}
	if out == in {
		t.Errorf("no styling added")
	}
	if plain := newStyles(false).highlight(in); plain != in {
		t.Errorf("plain highlight %q", plain)
	}
}

func stripANSI(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b && i+1 < len(s) && s[i+1] == '[' {
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
