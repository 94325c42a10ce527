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
	testBin(t, "nash") // first on PATH
	scripts, _ := filepath.Glob(filepath.Join("..", "..", "examples", "*.sh"))
	if len(scripts) == 0 {
		t.Fatal("no examples found in ../../examples")
	}
	for _, s := range scripts {
		t.Run(filepath.Base(s), func(t *testing.T) {
			cmd := exec.Command("bash", s)
			cmd.Env = append(os.Environ(), "TMPDIR="+t.TempDir())
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "== done") {
				t.Fatalf("%s failed: %v\n%s", s, err, out)
			}
		})
	}
}
