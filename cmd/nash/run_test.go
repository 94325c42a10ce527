//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunShowsSurprises checks that nash run shows, next to the summary,
// the changes the script's text did not predict, and only then.
func TestRunShowsSurprises(t *testing.T) {
	const loud = "NOT PREDICTED"
	tests := []struct {
		name   string
		files  map[string]string // made in the work dir first
		script string
		// surprise is a line the surprise block must hold; "" means
		// there must be no block.
		surprise string
		code     int
	}{
		{
			name:     "script run by bash is not analysed",
			files:    map[string]string{"other.sh": "touch made-by-other.txt\n"},
			script:   "echo start > log.txt; bash other.sh",
			surprise: "made-by-other.txt",
		},
		{
			name:     "name known only at run time, outside the cwd",
			files:    map[string]string{"sub/.keep": ""},
			script:   `d=$(echo sub); cd "$d" && mkdir ../hidden`,
			surprise: "hidden",
		},
		{
			name:   "predicted",
			script: "touch a.txt; mkdir d; echo hi > d/b.txt",
		},
		{
			name:   "predicted glob and recursive delete",
			files:  map[string]string{"x.log": "1", "y.log": "2", "old/f": "3"},
			script: "rm *.log; rm -r old",
		},
		{
			// The analysis cannot parse the script, so nash cannot
			// tell what it does: it asks for the word yes before
			// running it, and the answer "a" aborts; nothing ran.
			name:   "parse error",
			script: "touch made.txt\nif then fi\n",
			code:   exitAborted,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, body := range tt.files {
				p := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			n := newNash(t, dir)
			out, errOut, code := n.run("a\n", "run", "--", tt.script)
			if code != tt.code && !(tt.code == 0 && code == exitAborted) {
				t.Fatalf("exit code %d, want %d (or %d for abort)\nstdout: %s\nstderr: %s", code, tt.code, exitAborted, out, errOut)
			}
			if !strings.Contains(errOut, "nash: aborted") {
				t.Fatalf("no summary and abort shown:\n%s", errOut)
			}
			summary, _, _ := strings.Cut(errOut, "commit these changes?")
			switch {
			case tt.surprise == "" && strings.Contains(summary, loud):
				t.Errorf("surprise block shown for a predicted script:\n%s", errOut)
			case tt.surprise != "" && !strings.Contains(summary, loud):
				t.Errorf("no surprise block before the question:\n%s", errOut)
			case tt.surprise != "":
				_, block, _ := strings.Cut(summary, loud)
				if !strings.Contains(block, tt.surprise) {
					t.Errorf("surprise block does not name %q:\n%s", tt.surprise, errOut)
				}
			}
		})
	}
}
