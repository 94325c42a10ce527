package scripttest

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nash-shell/nash/effects"
)

func file(p, content string) Node { return Node{Path: p, Type: effects.TypeFile, Content: content} }
func dirNode(p string) Node       { return Node{Path: p, Type: effects.TypeDir} }
func link(p, target string) Node  { return Node{Path: p, Type: effects.TypeSymlink, Target: target} }

// TestParseExample reads examples as a person types them.
func TestParseExample(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Example
		err  bool
	}{
		{in: "a.jpeg b.jpeg => a.jpg b.jpg", want: Example{
			Before: []Node{file("a.jpeg", ""), file("b.jpeg", "")},
			After:  []Node{file("a.jpg", ""), file("b.jpg", "")}}},
		{in: `'my photo.jpeg' old/ => 'my photo.jpg' old/`, want: Example{
			Before: []Node{file("my photo.jpeg", ""), dirNode("old")},
			After:  []Node{file("my photo.jpg", ""), dirNode("old")}}},
		{in: `notes.txt='b\na' => stdout: 2 notes.txt`, want: Example{
			Before: []Node{file("notes.txt", "b\na\n")}, Stdout: "2 notes.txt\n", CheckStdout: true}},
		{in: `a.txt=x => a.txt=x stdout: done`, want: Example{
			Before: []Node{file("a.txt", "x\n")}, After: []Node{file("a.txt", "x\n")}, Stdout: "done\n", CheckStdout: true}},
		{in: `cur->a a => a`, want: Example{Before: []Node{file("a", ""), link("cur", "a")}, After: []Node{file("a", "")}}},
		{in: `junk.tmp =>`, want: Example{Before: []Node{file("junk.tmp", "")}, After: []Node{}}},
		{in: `$'caf\xe9' => x`, want: Example{Before: []Node{file("caf\xe9", "")}, After: []Node{file("x", "")}}},
		{in: "a b", err: true},
		{in: "/etc/passwd => x", err: true},
		{in: "../up => x", err: true},
		{in: "a a => b", err: true},
		{in: "'unclosed => b", err: true},
	} {
		got, err := ParseExample(c.in)
		if c.err {
			if !errors.Is(err, ErrExample) {
				t.Errorf("ParseExample(%q): error %v, want one that is ErrExample", c.in, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseExample(%q): %v", c.in, err)
			continue
		}
		if d := cmp.Diff(c.want, got); d != "" {
			t.Errorf("ParseExample(%q) (-want +got):\n%s", c.in, d)
		}
	}
}

// examples are examples whose text form must round-trip: hostile names,
// content without a final newline, symlinks, directories, an empty tree
// after, output.
var examples = []Example{
	{Name: "renames jpegs", Before: []Node{file("a.jpeg", "A\n"), file("my photo.jpeg", "")}, After: []Node{file("a.jpg", "A\n"), file("my photo.jpg", "")}},
	{Before: []Node{file(" lead", ""), file(`"quoted"`, ""), file("-x", "no newline"), file("caf\xe9", "\xff\n"), file("line\nbreak", "x")},
		After: []Node{link("cur", "../a -> b"), dirNode("old")}},
	{Name: "counts", Before: []Node{file("a", "1\n2\n")}, Stdout: "2 a", CheckStdout: true},
	{Name: "cleans", Before: []Node{file("x.tmp", "")}, After: []Node{}},
}

// TestExampleText round-trips examples through their text form.
func TestExampleText(t *testing.T) {
	for _, ex := range examples {
		b, err := ex.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var got Example
		if err := got.UnmarshalText(b); err != nil {
			t.Fatalf("%s\n%v", b, err)
		}
		if d := cmp.Diff(ex, got); d != "" {
			t.Errorf("round trip (-want +got):\n%s\ntext:\n%s", d, b)
		}
	}
}

// TestTestsRoundTrip reads back the scripts and examples a test file
// holds.
func TestTestsRoundTrip(t *testing.T) {
	tests := []Tested{
		{Name: "rename the jpegs", Script: "for f in *.jpeg; do\n  mv -- \"$f\" \"${f%.jpeg}.jpg\"\ndone\n", Examples: examples[:2]},
		{Name: "count", Script: "wc -l a | cut -d' ' -f1,2\nNASH_END", Examples: examples[2:]},
	}
	var b bytes.Buffer
	if err := WriteTests(&b, tests); err != nil {
		t.Fatal(err)
	}
	got, err := ReadTests(&b)
	if err != nil {
		t.Fatal(err)
	}
	tests[0].Script = strings.TrimRight(tests[0].Script, "\n")
	if d := cmp.Diff(tests, got); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	if _, err := ReadTests(strings.NewReader("#!/bin/sh\necho hi\n")); !errors.Is(err, ErrExample) {
		t.Errorf("ReadTests of another file: %v, want ErrExample", err)
	}
}
