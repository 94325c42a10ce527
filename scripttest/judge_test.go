package scripttest

import "testing"

// TestErrKind tells error lines of one kind (the same complaint about
// other files) from lines of another.
func TestErrKind(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"mv: cannot stat 'a.txt': No such file or directory", "mv: cannot stat 'my photo.txt': No such file or directory", true},
		{"rm: cannot remove ‘x’: Is a directory", "rm: cannot remove ‘y z’: Is a directory", true},
		{"gzip: testbed/a.gz: not in gzip format", "gzip: testbed/my photo.gz: not in gzip format", false},
		{"gzip: testbed/a.gz: not in gzip format", "gzip: testbed/b.gz: not in gzip format", true},
		{"mv: cannot stat 'a': No such file or directory", "mv: invalid option -- 'x'", false},
		{"wc: photo.txt: No such file or directory", "wc: a.txt: No such file or directory", true},
		{"bash: line 1: cd: build: No such file or directory", "bash: line 1: cd: cache: No such file or directory", false},
		{"mv: cannot move 'w/a.txt' to '/a.txt': Read-only file system", `mv: cannot move 'w/line'$'\n''break.txt' to '/line'$'\n''break.txt': Read-only file system`, true},
	} {
		if got := errKind(c.a) == errKind(c.b); got != c.same {
			t.Errorf("errKind(%q) = %q, errKind(%q) = %q: same %v, want %v", c.a, errKind(c.a), c.b, errKind(c.b), got, c.same)
		}
	}
}

// TestExpectedMove says where a probe goes when its pattern's other
// matches go somewhere: what the name is made of, made of the probe's.
func TestExpectedMove(t *testing.T) {
	for _, c := range []struct {
		pattern, like, to, probe, want string
		ok                             bool
	}{
		{"/d/*.jpeg", "/d/a.jpeg", "/d/a.jpg", "/d/my photo.jpeg", "/d/my photo.jpg", true},
		{"/d/*.txt", "/d/report.txt", "/d/backup/report.txt", "/d/-x.txt", "/d/backup/-x.txt", true},
		{"/d/img_*.png", "/d/img_1.png", "/d/old/1.png", "/d/img_a b.png", "/d/old/a b.png", true},
		{"/d/*", "/d/a", "/d/b", "/d/c", "", false},
		{"/d/[ab]*.c", "/d/a.c", "/d/a.o", "/d/b x.c", "", false},
	} {
		got, ok := expectedMove(c.pattern, c.like, c.to, c.probe)
		if got != c.want || ok != c.ok {
			t.Errorf("expectedMove(%q, %q, %q, %q) = %q, %v; want %q, %v", c.pattern, c.like, c.to, c.probe, got, ok, c.want, c.ok)
		}
	}
}
