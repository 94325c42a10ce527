package effects

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCompare(t *testing.T) {
	created := func(p string, o *Object) Change { return Change{Path: p, Kind: Created, After: o} }
	deleted := func(p string, o *Object) Change { return Change{Path: p, Kind: Deleted, Before: o} }
	modified := func(p string) Change { return Change{Path: p, Kind: Modified, Before: file(1), After: file(2)} }
	dirTimes := func(p string) Change {
		return Change{Path: p, Kind: MetaChanged, Before: dir(), After: dir(), Meta: []string{"mtime"}}
	}
	tests := []struct {
		name        string
		script      string
		changes     []Change
		unpredicted []string
		missed      []string
	}{
		{
			name:    "exact",
			script:  "echo hi > out.txt",
			changes: []Change{created("/h/p/out.txt", file(3)), dirTimes("/h/p")},
		},
		{
			name:    "made, then moved away: only the new name shows",
			script:  "mkdir a && touch a/x && mv a b",
			changes: []Change{created("/h/p/b", dir()), created("/h/p/b/x", file(0)), dirTimes("/h/p")},
		},
		{
			name:    "written, then deleted: no trace",
			script:  "echo x > tmp.txt; rm tmp.txt",
			changes: []Change{},
		},
		{
			name:    "deleted before it is made: the deletion missed",
			script:  "rm old.txt; touch old.txt",
			changes: []Change{created("/h/p/old.txt", file(0))},
			missed:  l("/h/p/old.txt"),
		},
		{
			name:    "rm -r covers the subtree",
			script:  "rm -rf build",
			changes: []Change{deleted("/h/p/build", dir()), deleted("/h/p/build/a.o", file(1)), deleted("/h/p/build/sub/b.o", file(1))},
		},
		{
			name:        "rm without -r covers only the path",
			script:      "rm build/a.o",
			changes:     []Change{deleted("/h/p/build/a.o", file(1)), deleted("/h/p/build/b.o", file(1))},
			unpredicted: l("/h/p/build/b.o"),
		},
		{
			name:        "glob",
			script:      "rm *.log",
			changes:     []Change{deleted("/h/p/a.log", file(1)), deleted("/h/p/b.log", file(1)), deleted("/h/p/sub/c.log", file(1)), deleted("/h/p/a.txt", file(1))},
			unpredicted: l("/h/p/sub/c.log", "/h/p/a.txt"),
		},
		{
			name:    "find -name -delete covers nested matches",
			script:  "find . -name '*.tmp' -delete",
			changes: []Change{deleted("/h/p/x.tmp", file(1)), deleted("/h/p/a/b/y.tmp", file(1))},
		},
		{
			name:        "dynamic path",
			script:      "for f in $(ls); do rm \"$f.bak\"; done",
			changes:     []Change{deleted("/h/p/a.bak", file(1)), deleted("/h/p/a.txt", file(1))},
			unpredicted: l("/h/p/a.txt"),
		},
		{
			name:   "mkdir -p implies parents",
			script: "mkdir -p a/b/c",
			changes: []Change{
				created("/h/p/a", dir()), created("/h/p/a/b", dir()), created("/h/p/a/b/c", dir()), dirTimes("/h/p"),
			},
		},
		{
			name:        "a write is not a delete",
			script:      "echo x > f",
			changes:     []Change{deleted("/h/p/f", file(1))},
			unpredicted: l("/h/p/f"),
			missed:      l("/h/p/f"),
		},
		{
			name:    "find -exec without -name covers the start path",
			script:  "find /s/tmp -depth -type d -exec rmdir {} \\;",
			changes: []Change{deleted("/s/tmp", dir()), deleted("/s/tmp/a", dir())},
		},
		{
			name:    "find from a glob",
			script:  "find /s/b/*.sql -mtime +25 -exec rm -f {} \\;",
			changes: []Change{deleted("/s/b/x.sql", file(1))},
		},
		{
			name:    "mv",
			script:  "mv a.txt docs/",
			changes: []Change{deleted("/h/p/a.txt", file(1)), created("/h/p/docs/a.txt", file(1)), dirTimes("/h/p/docs"), dirTimes("/h/p")},
		},
		{
			name:        "surprise outside",
			script:      "touch a",
			changes:     []Change{created("/h/p/a", file(0)), modified("/h/.bashrc")},
			unpredicted: l("/h/.bashrc"),
		},
		{
			name:    "predicted but not done",
			script:  "rm -f nothere; touch a",
			changes: []Change{created("/h/p/a", file(0))},
			missed:  l("/h/p/nothere"),
		},
		{
			name:        "directory times without a changed entry surprise",
			script:      "ls",
			changes:     []Change{dirTimes("/h/p")},
			unpredicted: l("/h/p"),
		},
		{
			name:    "chmod -R",
			script:  "chmod -R go-w site",
			changes: []Change{{Path: "/h/p/site/x", Kind: MetaChanged, Before: file(1), After: file(1), Meta: []string{"mode"}}},
		},
		{
			name:    "xargs input covers anything of its kind",
			script:  "find . -name '*.pyc' | xargs rm",
			changes: []Change{deleted("/h/p/a.pyc", file(1)), deleted("/h/p/x/b.pyc", file(1))},
		},
		{
			name:    "gzip",
			script:  "gzip notes.txt",
			changes: []Change{deleted("/h/p/notes.txt", file(9)), created("/h/p/notes.txt.gz", file(5))},
		},
		{
			name:    "rm -rf /",
			script:  "rm -rf /",
			changes: []Change{deleted("/etc", dir()), deleted("/etc/passwd", file(1))},
		},
		{
			name:    "quoted glob characters are literal",
			script:  "rm 'a*'",
			changes: []Change{deleted("/h/p/a*", file(1)), deleted("/h/p/ab", file(1))},
			// a* was the only predicted path: ab is a surprise.
			unpredicted: l("/h/p/ab"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Analyze(tt.script, Dir("/h/p"), Home("/h"))
			if err != nil {
				t.Fatal(err)
			}
			s := Compare(r, &ChangeSet{Changes: tt.changes})
			var un, mi []string
			for _, c := range s.Unpredicted {
				un = append(un, c.Path)
			}
			for _, p := range s.Missed {
				mi = append(mi, p.Path)
			}
			if diff := cmp.Diff(tt.unpredicted, un); diff != "" {
				t.Errorf("unpredicted (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.missed, mi); diff != "" {
				t.Errorf("missed (-want +got):\n%s", diff)
			}
			if s.Empty() != (len(un) == 0 && len(mi) == 0) {
				t.Errorf("Empty() = %v", s.Empty())
			}
			// A report read back from JSON compares the same way.
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			var back Report
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			s2 := Compare(&back, &ChangeSet{Changes: tt.changes})
			if len(s2.Unpredicted) != len(s.Unpredicted) || len(s2.Missed) != len(s.Missed) {
				t.Errorf("after JSON: %d unpredicted, %d missed; before: %d, %d", len(s2.Unpredicted), len(s2.Missed), len(s.Unpredicted), len(s.Missed))
			}
		})
	}
}

func TestCompareNil(t *testing.T) {
	s := Compare(nil, nil)
	if !s.Empty() {
		t.Errorf("Compare(nil, nil) = %+v, want empty", s)
	}
	s = Compare(nil, &ChangeSet{Changes: []Change{{Path: "/x", Kind: Created, After: file(1)}}})
	if len(s.Unpredicted) != 1 {
		t.Errorf("a change with no report must be unpredicted, got %+v", s)
	}
}

func TestMatchPath(t *testing.T) {
	tests := []struct {
		pattern, name string
		want          bool
	}{
		{"/a/b", "/a/b", true},
		{"/a/b", "/a/bc", false},
		{"/a/*.go", "/a/x.go", true},
		{"/a/*.go", "/a/b/x.go", false},
		{"/a/**", "/a/b/x.go", true},
		{"/a/?", "/a/x", true},
		{"/a/?", "/a/xy", false},
		{"/a/[abc]x", "/a/bx", true},
		{"/a/[!abc]x", "/a/bx", false},
		{"/a/[^abc]x", "/a/dx", true},
		{"/a/[a-c]", "/a/b", true},
		{"/a/[", "/a/[", true},
		{`/a/\*`, "/a/*", true},
		{`/a/\*`, "/a/b", false},
		{"/a/\x00.txt", "/a/b/c.txt", true},
		{"\x00/x", "/any/where/x", true},
		{"/a/*b*c*d*e*f*g", "/a/" + string(make([]byte, 0)) + "xbxcxdxexfxh", false},
		{"*", "", true},
		{"/a/**/*.go", "/a/x.go", true},
		{"/a/**/*.go", "/a/b/c/x.go", true},
		{"/a/**/*.go", "/ax.go", false},
		{"/a/*", "/a/", true},
	}
	for _, tt := range tests {
		if got := matchPath(tt.pattern, tt.name); got != tt.want {
			t.Errorf("matchPath(%q, %q) = %v, want %v", tt.pattern, tt.name, got, tt.want)
		}
	}
}

func ExampleCompare() {
	r, _ := Analyze("rm -r build", Dir("/src"))
	cs := &ChangeSet{Changes: []Change{
		{Path: "/src/build", Kind: Deleted, Before: &Object{Type: TypeDir}},
		{Path: "/src/build/app", Kind: Deleted, Before: &Object{Type: TypeFile, Size: 10}},
		{Path: "/src/.cache", Kind: Deleted, Before: &Object{Type: TypeFile, Size: 10}},
	}}
	s := Compare(r, cs)
	for _, c := range s.Unpredicted {
		fmt.Fprintln(os.Stdout, "not predicted:", c.Kind, c.Path)
	}
	// Output:
	// not predicted: deleted /src/.cache
}

func TestScore(t *testing.T) {
	r, err := Analyze("rm -f a b; touch c; chmod +x d; rm -f never", Dir("/p"))
	if err != nil {
		t.Fatal(err)
	}
	cs := &ChangeSet{Changes: []Change{
		{Path: "/p", Kind: MetaChanged, Before: dir(), After: dir(), Meta: []string{"mtime"}}, // implied
		{Path: "/p/a", Kind: Deleted, Before: file(1)},
		{Path: "/p/b", Kind: Deleted, Before: file(1)},
		{Path: "/p/x", Kind: Deleted, Before: file(1)}, // not predicted
		{Path: "/p/c", Kind: Created, After: file(0)},
		{Path: "/p/y", Kind: Modified, Before: file(1), After: file(2)}, // not predicted
		{Path: "/p/d", Kind: MetaChanged, Before: file(1), After: file(1), Meta: []string{"mode"}},
	}}
	got := Score(r, cs)
	want := map[Access]Accuracy{
		Delete: {Observed: 3, Covered: 2, Predicted: 3, Matched: 2},
		Write:  {Observed: 2, Covered: 1, Predicted: 1, Matched: 1},
		Meta:   {Observed: 1, Covered: 1, Predicted: 1, Matched: 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Score mismatch (-want +got):\n%s", diff)
	}
	d := got[Delete]
	if d.Recall() != 2.0/3 || d.Precision() != 2.0/3 {
		t.Errorf("delete recall %v precision %v, want 2/3 each", d.Recall(), d.Precision())
	}
	if (Accuracy{}).Recall() != 1 || (Accuracy{}).Precision() != 1 {
		t.Errorf("empty accuracy must have recall and precision 1")
	}
	if sum := d.Add(got[Write]); sum != (Accuracy{5, 3, 4, 3}) {
		t.Errorf("Add = %+v", sum)
	}
}

func TestScoreKinds(t *testing.T) {
	r, err := Analyze("rm -f a b; touch c e; echo x > f; chmod +x d; cp -r src dst", Dir("/p"))
	if err != nil {
		t.Fatal(err)
	}
	cs := &ChangeSet{Changes: []Change{
		{Path: "/p", Kind: MetaChanged, Before: dir(), After: dir(), Meta: []string{"mtime"}}, // implied
		{Path: "/p/a", Kind: Deleted, Before: file(1)},
		{Path: "/p/c", Kind: Created, After: file(0)},
		{Path: "/p/dst/same", Kind: MetaChanged, Before: file(1), After: file(1), Meta: []string{"mtime"}}, // rewritten, same bytes
		{Path: "/p/e", Kind: MetaChanged, Before: file(1), After: file(1), Meta: []string{"mtime"}},        // touched
		{Path: "/p/f", Kind: Modified, Before: file(1), After: file(2)},
		{Path: "/p/g", Kind: TypeChanged, Before: file(1), After: dir()},                           // not predicted
		{Path: "/p/h", Kind: MetaChanged, Before: file(1), After: file(1), Meta: []string{"mode"}}, // not predicted
	}}
	existed := map[string]bool{"/p/a": true, "/p/b": true, "/p/e": true, "/p/f": true, "/p/d": true, "/p/src": true}
	got := ScoreKinds(r, cs, func(p string) bool { return existed[p] })
	want := map[Kind]Accuracy{
		Created:     {Observed: 1, Covered: 1, Predicted: 2, Matched: 2}, // c, dst
		Modified:    {Observed: 2, Covered: 1, Predicted: 2, Matched: 2}, // e, f
		Deleted:     {Observed: 1, Covered: 1, Predicted: 2, Matched: 1},
		MetaChanged: {Observed: 3, Covered: 2, Predicted: 1, Matched: 0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ScoreKinds mismatch (-want +got):\n%s", diff)
	}
	var missed []string
	for _, c := range Uncovered(r, cs) {
		missed = append(missed, c.Path)
	}
	if diff := cmp.Diff([]string{"/p/g", "/p/h"}, missed); diff != "" {
		t.Errorf("Uncovered mismatch (-want +got):\n%s", diff)
	}
	// Without existed, writes count as modified, creations as created.
	noFS := ScoreKinds(r, cs, nil)
	if n := noFS[Created].Predicted + noFS[Modified].Predicted; n != 4 {
		t.Errorf("ScoreKinds without existed: %d writes and creations, want 4", n)
	}
}
