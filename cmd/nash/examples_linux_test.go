package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestExamples runs every script in examples/ with nash on the PATH (this
// test binary, acting as nash), so the examples stay true to the code.
func TestExamples(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(self, filepath.Join(bin, "nash")); err != nil {
		t.Fatal(err)
	}
	scripts, _ := filepath.Glob(filepath.Join("..", "..", "examples", "*.sh"))
	if len(scripts) == 0 {
		t.Fatal("no examples found in ../../examples")
	}
	for _, s := range scripts {
		t.Run(filepath.Base(s), func(t *testing.T) {
			cmd := exec.Command("bash", s)
			cmd.Env = append(os.Environ(), "NASH_TEST_MAIN=1", "PATH="+bin+":"+os.Getenv("PATH"), "TMPDIR="+t.TempDir())
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "== done") {
				t.Fatalf("%s failed: %v\n%s", s, err, out)
			}
		})
	}
}
