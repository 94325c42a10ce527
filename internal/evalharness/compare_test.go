package evalharness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nash-shell/nash/effects"
)

func TestNormalize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"a\n", "a"},
		{"a  \t\r\nb \n\n\n", "a\nb"},
		{"  a", "  a"},         // leading space counts
		{"a\n\nb", "a\n\nb"},   // inner empty lines count
		{"a b", "a b"},         // inner spacing counts
		{"\n\na", "\n\na"},     // leading empty lines count
		{"x\r\ny\r\n", "x\ny"}, // CRLF endings
		{"A\nB", "A\nB"},       // case is kept
		{"a \n \n", "a"},       // a line of spaces at the end is empty
		{"a\x00 \n", "a\x00"},  // NUL is content
		{"tab\t\n", "tab"},     // trailing tab
		{"\t\n x", "\n x"},     // whitespace-only first line becomes empty
		{"ends without newline", "ends without newline"},
	}
	for _, tt := range tests {
		if got := normalize([]byte(tt.in)); got != tt.want {
			t.Errorf("normalize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func captureString(s string, keep int) captured {
	return capture(strings.NewReader(s), keep)
}

func TestCompareOutput(t *testing.T) {
	tests := []struct {
		a, b string
		keep int
		want string
	}{
		{"a\nb\n", "a\nb", 100, ""},
		{"a \nb\n", "a\nb\n\n", 100, ""},
		{"a\nb\n", "a\nc\n", 100, "line 2"},
		{"a\nb\n", "b\na\n", 100, "line 1"}, // order counts
		{"a\n", "a\nb\n", 100, "line 2"},
		{"", "x", 100, "line 1"},
		{"", "\n\n", 100, ""},
		{"total 8\n", "Total 8\n", 100, "line 1"},
		// Past the kept head, only identical bytes match.
		{strings.Repeat("x", 50), strings.Repeat("x", 50), 10, ""},
		{strings.Repeat("x", 50), strings.Repeat("x", 49) + "y", 10, "size"},
		{strings.Repeat("x", 50) + " ", strings.Repeat("x", 50), 10, "size"},
	}
	for _, tt := range tests {
		a, b := captureString(tt.a, tt.keep), captureString(tt.b, tt.keep)
		if got := compareOutput(a, b); got != tt.want {
			t.Errorf("compareOutput(%q, %q) = %q, want %q", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestCapture(t *testing.T) {
	c := captureString("hello world", 5)
	if string(c.head) != "hello" || c.n != 11 || c.whole {
		t.Errorf("capture kept %q of %d bytes, whole %v", c.head, c.n, c.whole)
	}
	c = captureString("hi", 5)
	if string(c.head) != "hi" || c.n != 2 || !c.whole {
		t.Errorf("capture kept %q of %d bytes, whole %v", c.head, c.n, c.whole)
	}
}

func TestRelevant(t *testing.T) {
	dir := &effects.Object{Type: effects.TypeDir, Mode: 0o755}
	file := &effects.Object{Type: effects.TypeFile, Mode: 0o644}
	cs := &effects.ChangeSet{Changes: []effects.Change{
		{Path: "/b/testbed", Kind: effects.MetaChanged, Before: dir, After: dir, Meta: []string{"mtime"}},
		{Path: "/b/testbed/d", Kind: effects.MetaChanged, Before: dir, After: dir, Meta: []string{"mode", "mtime"}},
		{Path: "/b/testbed/f", Kind: effects.MetaChanged, Before: file, After: file, Meta: []string{"mtime"}},
		{Path: "/b/testbed/new", Kind: effects.Created, After: dir},
	}}
	got, _ := relevant(cs)
	if _, ok := got["/b/testbed"]; ok {
		t.Error("a directory whose only change is its mtime was kept")
	}
	for _, p := range []string{"/b/testbed/d", "/b/testbed/f", "/b/testbed/new"} {
		if _, ok := got[p]; !ok {
			t.Errorf("%s was dropped", p)
		}
	}
}

func TestCompareObjects(t *testing.T) {
	f := func(mode os.FileMode) *effects.Object { return &effects.Object{Type: effects.TypeFile, Mode: mode} }
	tests := []struct {
		x, y *effects.Object
		same bool
	}{
		{nil, nil, true},
		{f(0o644), f(0o644), true},
		{f(0o644), f(0o755), false},
		{f(0o644), nil, false},
		{f(0o644), &effects.Object{Type: effects.TypeSymlink, Target: "x"}, false},
		{&effects.Object{Type: effects.TypeSymlink, Target: "x"}, &effects.Object{Type: effects.TypeSymlink, Target: "y"}, false},
		{&effects.Object{Type: effects.TypeFile, UID: 1}, &effects.Object{Type: effects.TypeFile, UID: 0}, false},
		{&effects.Object{Type: effects.TypeFile, Size: 1}, &effects.Object{Type: effects.TypeFile, Size: 2}, true}, // contents are compared apart
	}
	for i, tt := range tests {
		if got := compareObjects(tt.x, tt.y) == ""; got != tt.same {
			t.Errorf("%d: same = %v, want %v (%q)", i, got, tt.same, compareObjects(tt.x, tt.y))
		}
	}
}

func TestSameFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	big := strings.Repeat("abcdefgh", 20000)
	a, b, c, d := write("a", big), write("b", big), write("c", big[:len(big)-1]+"x"), write("d", "")
	for _, tt := range []struct {
		x, y string
		want bool
	}{{a, b, true}, {a, c, false}, {a, d, false}, {d, d, true}} {
		got, err := sameFile(tt.x, tt.y)
		if err != nil || got != tt.want {
			t.Errorf("sameFile(%s, %s) = %v, %v; want %v", filepath.Base(tt.x), filepath.Base(tt.y), got, err, tt.want)
		}
	}
	if _, err := sameFile(a, filepath.Join(dir, "missing")); err == nil {
		t.Error("sameFile with a missing file gave no error")
	}
}

func TestCommandNotFound(t *testing.T) {
	tests := []struct {
		stderr string
		want   bool
	}{
		{"bash: line 1: tree: command not found\n", true},
		{"nash: line 1: tree: command not found\n", false},
		{"sh: 1: tree: not found\n", true},
		{"grep: x: No such file or directory\n", false},
		{"", false},
		{"warning\nbash: line 3: cpio: command not found", true},
		{"error: package not found in cache, retrying\n", false},
		{"apt: package x: not found\n", false},
	}
	for _, tt := range tests {
		e := &execution{output: captureString(tt.stderr, 512)}
		if got := commandNotFound(e) != ""; got != tt.want {
			t.Errorf("commandNotFound(%q) = %v, want %v", tt.stderr, got, tt.want)
		}
	}
}

func TestDockerEnv(t *testing.T) {
	p := filepath.Join(t.TempDir(), "Dockerfile")
	df := "FROM x\nENV FILES=\"/testbed/a /testbed/b\"\nRUN echo ENV NOT=this\n  ENV PLAIN=1\nENV BAD\n"
	if err := os.WriteFile(p, []byte(df), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := dockerEnv(p)
	if err != nil {
		t.Fatal(err)
	}
	if want := "FILES=/testbed/a /testbed/b|PLAIN=1"; strings.Join(got, "|") != want {
		t.Errorf("dockerEnv = %q, want %q", strings.Join(got, "|"), want)
	}
	if got, err := dockerEnv(filepath.Join(t.TempDir(), "none")); err != nil || got != nil {
		t.Errorf("missing Dockerfile: %q, %v", got, err)
	}
}

func TestResultAdd(t *testing.T) {
	var r Result
	for _, tr := range []TaskResult{
		{ID: "a", Difficulty: 2, Correct: true},
		{ID: "b", Difficulty: 0},
		{ID: "c", Difficulty: 2},
		{ID: "d", Difficulty: 1, Correct: true},
		{ID: "e", Difficulty: 0, Skipped: true},
		{ID: "f", Difficulty: 0, Correct: true},
	} {
		r.Add(tr)
	}
	if r.Overall != (Score{Correct: 3, Total: 5}) || r.Skipped != 1 || len(r.Tasks) != 6 {
		t.Errorf("overall %+v, skipped %d, %d tasks", r.Overall, r.Skipped, len(r.Tasks))
	}
	want := []DifficultyScore{{0, Score{1, 2}}, {1, Score{1, 1}}, {2, Score{1, 2}}}
	if len(r.ByDifficulty) != len(want) {
		t.Fatalf("by difficulty %+v, want %+v", r.ByDifficulty, want)
	}
	for i := range want {
		if r.ByDifficulty[i] != want[i] {
			t.Errorf("by difficulty %+v, want %+v", r.ByDifficulty, want)
		}
	}
	var ids []string
	for _, f := range r.Failures() {
		ids = append(ids, f.ID)
	}
	if strings.Join(ids, ",") != "b,c" {
		t.Errorf("failures %v, want b,c", ids)
	}
	if a := (Score{Correct: 1, Total: 4}).Accuracy(); a != 0.25 {
		t.Errorf("accuracy %v", a)
	}
	if a := (Score{}).Accuracy(); a != 0 {
		t.Errorf("accuracy of nothing %v", a)
	}
}

func TestRelevantSpellsOutRenames(t *testing.T) {
	dir := t.TempDir()
	from, to := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	if err := os.Mkdir(from, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"kept", "edited", "removed"} {
		if err := os.WriteFile(filepath.Join(from, name), []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d := &effects.Object{Type: effects.TypeDir, Mode: 0o755}
	f := &effects.Object{Type: effects.TypeFile, Mode: 0o600, Size: 3}
	cs := &effects.ChangeSet{Changes: []effects.Change{
		{Path: to, From: from, Kind: effects.Renamed, Before: d, After: d},
		{Path: filepath.Join(to, "edited"), Kind: effects.Modified, After: f},
		{Path: filepath.Join(to, "removed"), Kind: effects.Deleted},
		{Path: filepath.Join(to, "new"), Kind: effects.Created, After: f},
	}}
	got, origins := relevant(cs)
	want := map[string]effects.Kind{
		from: effects.Deleted, filepath.Join(from, "kept"): effects.Deleted,
		filepath.Join(from, "edited"): effects.Deleted, filepath.Join(from, "removed"): effects.Deleted,
		to: effects.Created, filepath.Join(to, "kept"): effects.Created,
		filepath.Join(to, "edited"): effects.Created, filepath.Join(to, "new"): effects.Created,
	}
	for p, k := range want {
		if got[p].Kind != k {
			t.Errorf("%s: %q, want %q", p, got[p].Kind, k)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d changes, want %d: %v", len(got), len(want), got)
	}
	if got[filepath.Join(to, "edited")].After != f {
		t.Error("the edited file lost the run's new object")
	}
	if o := got[filepath.Join(to, "kept")].After; o == nil || o.Type != effects.TypeFile || o.Mode != 0o644 || o.Size != 4 {
		t.Errorf("the moved file is described as %+v", o)
	}
	if len(origins) != 1 || origins[filepath.Join(to, "kept")] != filepath.Join(from, "kept") {
		t.Errorf("origins %v, want only the kept file's", origins)
	}
}
