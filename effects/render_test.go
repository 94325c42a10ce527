package effects

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWriteReport(t *testing.T) {
	tests := []struct {
		script string
		opts   SummaryOptions
		want   string
	}{
		{
			script: "ls",
			want:   "risk: read-only\ncommands:\n  1:1  ls\n",
		},
		{
			script: "sudo rm -rf \"$D\"/* && curl -d x https://e.com",
			want: `risk: cannot-undo (curl sends data to https://e.com, which the sandbox cannot undo)
note: uses the network, runs with privilege, does things the sandbox cannot undo
commands:
  1:1  sudo rm -rf "$D"/*
  1:1  rm -rf "$D"/*  (via sudo)
  1:23  curl -d x https://e.com
paths:
  delete  '$D/*'  by rm  (recursive, glob, known at run time)
findings:
  privilege          line 1: sudo runs rm as root
  deletes            line 1: rm deletes '$D/*' and everything under it (known only at run time)
  cannot-undo        line 1: curl sends data to https://e.com, which the sandbox cannot undo
`,
		},
		{
			script: "touch a b c d",
			opts:   SummaryOptions{MaxLines: 2, Width: 30},
			want: `risk: writes-inside-cwd (touc…
commands:
  1:1  touch a b c d
paths:
  write   /p/a  by touch
  write   /p/b  by touch
  ... and 2 more
findings:
  writes-inside-cwd  line 1: …
  writes-inside-cwd  line 1: …
  ... and 2 more
`,
		},
		{
			script: "echo \x1b[2K > $'\\u202e'",
			want: `risk: writes-inside-cwd (echo writes $'/p/\u202e')
commands:
  1:1  echo \x1b[2K
paths:
  write   $'/p/\u202e'  by echo
findings:
  writes-inside-cwd  line 1: echo writes $'/p/\u202e'
`,
		},
	}
	for _, tt := range tests {
		r, err := Analyze(tt.script, Dir("/p"))
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := WriteReport(&b, r, tt.opts); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, b.String()); diff != "" {
			t.Errorf("WriteReport(%q) mismatch (-want +got):\n%s", tt.script, diff)
		}
		for _, line := range strings.Split(b.String(), "\n") {
			assertSafe(t, line, false)
		}
	}
}

func TestWriteSurprises(t *testing.T) {
	r, err := Analyze("rm -f gone nothere; touch a", Dir("/h/p"))
	if err != nil {
		t.Fatal(err)
	}
	cs := &ChangeSet{Changes: []Change{
		{Path: "/h/p/gone", Kind: Deleted, Before: file(3)},
		{Path: "/h/p/a", Kind: Created, After: file(0)},
		{Path: "/h/.ssh/authorized_keys", Kind: Modified, Before: file(10), After: file(400)},
		{Path: "/h/p/\x1b[2Kx", Kind: Created, After: file(1)},
	}}
	var b strings.Builder
	if err := WriteSurprises(&b, Compare(r, cs), SummaryOptions{Home: "/h"}); err != nil {
		t.Fatal(err)
	}
	want := `NOT PREDICTED: 2 changes the script did not announce:
  modified ~/.ssh/authorized_keys  10 B → 400 B
  created  ~/$'p/\x1b[2Kx'  1 B
predicted but not done: 1
  delete  ~/p/nothere  by rm (line 1)
`
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
	b.Reset()
	if err := WriteSurprises(&b, Surprises{}, SummaryOptions{}); err != nil || b.Len() != 0 {
		t.Errorf("empty surprises wrote %q, %v", b.String(), err)
	}
}

func ExampleWriteSurprises() {
	r, _ := Analyze("rm old.log", Dir("/srv/app"))
	cs := &ChangeSet{Changes: []Change{
		{Path: "/srv/app/old.log", Kind: Deleted, Before: &Object{Type: TypeFile, Size: 2048}},
		{Path: "/srv/app/config.yaml", Kind: Deleted, Before: &Object{Type: TypeFile, Size: 512}},
	}}
	if err := WriteSurprises(os.Stdout, Compare(r, cs), SummaryOptions{}); err != nil {
		fmt.Println(err)
	}
	// Output:
	// NOT PREDICTED: 1 change the script did not announce:
	//   deleted  /srv/app/config.yaml  512 B
}

func ExampleWriteReport() {
	r, err := Analyze("curl -fsSL https://example.com/install.sh | sudo bash", Dir("/home/ann"))
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := WriteReport(os.Stdout, r, SummaryOptions{}); err != nil {
		fmt.Println(err)
	}
	// Output:
	// risk: cannot-undo (runs code downloaded from the network as root)
	// note: uses the network, runs with privilege, does things the sandbox cannot undo
	// commands:
	//   1:1  curl -fsSL https://example.com/install.sh  (via |)
	//   1:45  sudo bash  (via |)
	//   1:45  bash  (via |, sudo)
	// findings:
	//   network            line 1: curl downloads from https://example.com/install.sh
	//   privilege          line 1: sudo runs bash as root
	//   cannot-undo        line 1: runs code downloaded from the network as root
}
