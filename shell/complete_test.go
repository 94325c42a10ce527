package shell

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// completionFixture makes a session in a directory of a few files, with a
// PATH of a few executables and a home with Documents.
func completionFixture(t testing.TB) *State {
	t.Helper()
	root := t.TempDir()
	bin, home, work := filepath.Join(root, "bin"), filepath.Join(root, "home"), filepath.Join(root, "work")
	for _, d := range []string{bin, filepath.Join(home, "Documents"), filepath.Join(work, "notes"), filepath.Join(work, "foobar")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]os.FileMode{
		"bin/git": 0o755, "bin/gzip": 0o755, "bin/grep": 0o755, "bin/mytool": 0o755, "bin/notexec": 0o644,
		"bin/find": 0o755, "bin/cat": 0o755, "bin/sudo": 0o755, "bin/make": 0o755, "bin/ls": 0o755, "bin/python3": 0o755,
		"work/foo.txt": 0o644, "work/my file.txt": 0o644, "work/.hidden": 0o644, "work/run.sh": 0o755,
		"work/notes/a.md": 0o644, "work/it's": 0o644, "work/bad\x1bname": 0o644,
	}
	for p, mode := range files {
		if err := os.WriteFile(filepath.Join(root, p), nil, mode); err != nil {
			t.Fatal(err)
		}
	}
	return NewState(work, []string{"PATH=" + bin, "HOME=" + home}, home)
}

func TestComplete(t *testing.T) {
	s := completionFixture(t)
	for _, tc := range []struct {
		line   string
		insert string   // what replaces the word; "" when nothing matches
		cands  []string // nil: not checked beyond their number
		n      int
	}{
		{line: "my", insert: "mytool ", n: 1},
		{line: "gz", insert: "gzip ", n: 1},
		{line: "gr", insert: "grep ", n: 1},
		{line: "g", insert: "g", cands: []string{"getopts", "git", "grep", "gzip"}},
		{line: "notex", n: 0}, // not executable
		{line: "zzz", n: 0},
		{line: "ls; gz", insert: "gzip ", n: 1},
		{line: "ls | gr", insert: "grep ", n: 1},
		{line: "sudo gz", insert: "gzip ", n: 1},
		{line: "FOO=1 mak", insert: "make ", n: 1},
		{line: "!gz", insert: "!gzip ", n: 1},
		{line: "cat foo", insert: "foo", cands: []string{"foo.txt", "foobar/"}},
		{line: "cat foo.", insert: "foo.txt ", n: 1},
		{line: "cat foob", insert: "foobar/", n: 1},
		{line: "cat my", insert: `my\ file.txt `, n: 1},
		{line: `cat my\ f`, insert: `my\ file.txt `, n: 1},
		{line: `cat "my`, insert: `"my file.txt" `, n: 1},
		{line: `cat 'my`, insert: `'my file.txt' `, n: 1},
		{line: `cat it`, insert: `it\'s `, n: 1},
		{line: `cat 'it`, insert: `'it'\''s' `, n: 1},
		{line: "cat ~/Doc", insert: "~/Documents/", n: 1},
		{line: "cat ~", insert: "~/", n: 1},
		{line: "cat no", insert: "notes/", n: 1},
		{line: "cat notes/", insert: "notes/a.md ", n: 1},
		{line: `cat "notes/`, insert: `"notes/a.md" `, n: 1},
		{line: "cat .h", insert: ".hidden ", n: 1},
		{line: "cat ba", n: 0}, // a name with a control character is left out
		{line: "cat ", cands: []string{"foo.txt", "foobar/", "it's", "my file.txt", "notes/", "run.sh"}},
		{line: "cat zz", n: 0},
		{line: "./ru", insert: "./run.sh ", n: 1},
		{line: "./fo", insert: "./foobar/", n: 1}, // a command with a slash: directories and executables
		{line: "echo $HO", insert: "$HOME ", n: 1},
		{line: `echo "$HO`, insert: `"$HOME" `, n: 1},
		{line: ":un", insert: ":undo ", n: 1},
		{line: "git sta", insert: "sta", cands: []string{"stash", "status"}},
		{line: "git chec", insert: "checkout ", n: 1},
		{line: "git add fo", insert: "foo", n: 2}, // later words are paths
		{line: "ls -l", n: 0},                     // options: nothing
		{line: "?cat fo", n: 0},                   // forced to the model
		{line: "find the biggest fo", n: 0},       // a request: no noise
		{line: "gti sta", n: 0},                   // a typo: no noise
		{line: "show me foo", n: 0},               // a request
	} {
		c := s.Complete(tc.line, len([]rune(tc.line)))
		if tc.cands != nil {
			if !slices.Equal(c.Candidates, tc.cands) {
				t.Errorf("Complete(%q) candidates = %q, want %q", tc.line, c.Candidates, tc.cands)
			}
		} else if len(c.Candidates) != tc.n {
			t.Errorf("Complete(%q) = %d candidates %q, want %d", tc.line, len(c.Candidates), c.Candidates, tc.n)
		}
		if len(c.Candidates) > 0 && c.Insert != tc.insert {
			t.Errorf("Complete(%q).Insert = %q, want %q", tc.line, c.Insert, tc.insert)
		}
	}
}

// TestCompleteMidLine completes the word at the cursor, not the line's
// last one.
func TestCompleteMidLine(t *testing.T) {
	s := completionFixture(t)
	line := "cat foo. | grep x"
	c := s.Complete(line, len("cat foo."))
	got := line[:c.Start] + c.Insert + line[c.End:]
	if want := "cat foo.txt  | grep x"; got != want {
		t.Errorf("completed %q, want %q", got, want)
	}
}

func TestListColumns(t *testing.T) {
	names := []string{"alpha", "beta", "gamma", "delta", "epsilon"}
	got := listColumns(names, 30)
	want := "alpha    gamma    epsilon\nbeta     delta"
	if got != want {
		t.Errorf("listColumns = %q, want %q", got, want)
	}
	var many []string
	for i := range 250 {
		many = append(many, fmt.Sprintf("f%03d", i))
	}
	out := listColumns(many, 80)
	if !strings.HasSuffix(out, "… and 150 more: type more of the name") || strings.Contains(out, "f100") {
		t.Errorf("250 names: the list is not bounded to %d:\n%s", maxListed, out)
	}
	if got := listColumns([]string{"a\x1b[31mb"}, 80); strings.ContainsRune(got, 0x1b) {
		t.Errorf("a name's escape reached the terminal: %q", got)
	}
}

func TestQuoteWordRoundTrips(t *testing.T) {
	for _, s := range []string{"plain", "a b", "it's", `x"y`, "$HOME", "a\\b", "~x", "a*?[b]", "é ü"} {
		for _, q := range []rune{0, '\'', '"'} {
			line := "cat " + quoteWord(s, q)
			if q != 0 {
				line = "cat " + string(q) + quoteWord(s, q) + string(q)
			}
			w := lastWord([]rune(line), len([]rune(line)))
			if w.value != s || w.quote != 0 {
				t.Errorf("quoteWord(%q, %q): lexed back as %q (quote %q)", s, q, w.value, w.quote)
			}
		}
	}
}

func FuzzLastWord(f *testing.F) {
	for _, s := range []string{"cat 'a b", `x\ y`, `echo "$HO`, "a|b;c&&d", "sudo gz", `"\`, "ls (fo"} {
		f.Add(s, len(s))
	}
	f.Fuzz(func(t *testing.T, line string, cursor int) {
		r := []rune(line)
		if cursor < 0 || cursor > len(r) {
			cursor = len(r)
		}
		w := lastWord(r, cursor)
		if w.start < 0 || w.start > cursor {
			t.Fatalf("start %d outside [0, %d]", w.start, cursor)
		}
		if w.raw != string(r[w.start:cursor]) {
			t.Fatalf("raw %q is not the line's %q", w.raw, string(r[w.start:cursor]))
		}
		if w.index < 0 {
			t.Fatalf("index %d", w.index)
		}
	})
}

func BenchmarkCompleteDir10k(b *testing.B) {
	dir := b.TempDir()
	for i := range 10000 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("file%05d.txt", i)), nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	s := NewState(dir, []string{"PATH=/usr/bin:/bin"}, dir)
	line := "cat file0999"
	b.ResetTimer()
	for b.Loop() {
		if c := s.Complete(line, len(line)); len(c.Candidates) != 10 {
			b.Fatalf("%d candidates", len(c.Candidates))
		}
	}
}

// BenchmarkCompleteCommand completes a command's name on the host's PATH,
// reading the PATH afresh each time (as after a run).
func BenchmarkCompleteCommand(b *testing.B) {
	s := NewState(b.TempDir(), []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, "/root")
	for b.Loop() {
		s.Forget()
		s.Complete("gi", 2)
	}
}

// BenchmarkTypo is the "did you mean" check of an unknown word against
// the host's PATH, names cached (as on each keystroke).
func BenchmarkTypo(b *testing.B) {
	s := NewState(b.TempDir(), []string{"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}, "/root")
	for b.Loop() {
		s.Route("gti status")
	}
}
