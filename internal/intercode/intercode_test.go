package intercode

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nash-shell/nash/internal/datasets"
)

func dataDir(t *testing.T) string {
	t.Helper()
	return datasets.Must(t, datasets.InterCode)
}

func TestMap(t *testing.T) {
	tests := []struct{ in, want string }{
		{"ls /testbed/a", "ls /B/testbed/a"},
		{"find /system -name x", "find /B/system -name x"},
		{`grep -r "x" "/workspace/d"`, `grep -r "x" "/B/workspace/d"`},
		{"cat /index.html", "cat /B/index.html"},
		{"ls testbed", "ls testbed"},                               // relative: cwd is the base
		{"ls /testbedx /usr/testbed", "ls /testbedx /usr/testbed"}, // not a root path
		{"a=/backup/x;b=$(ls /system)", "a=/B/backup/x;b=$(ls /B/system)"},
	}
	for _, tt := range tests {
		if got := Map(tt.in, "/B"); got != tt.want {
			t.Errorf("Map(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestLoadAndBuild(t *testing.T) {
	dir := dataDir(t)
	tasks, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 300 {
		t.Fatalf("%d tasks, want 300", len(tasks))
	}
	for fs := 1; fs <= NumFS; fs++ {
		base := t.TempDir()
		if err := Build(dir, fs, base); err != nil {
			t.Fatal(err)
		}
	}
	base := t.TempDir()
	if err := Build(dir, 1, base); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(base, "testbed", "hello.c")); err != nil {
		t.Errorf("fixture 1 lacks testbed/hello.c: %v", err)
	}
}
