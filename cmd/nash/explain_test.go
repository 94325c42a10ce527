package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nash-shell/nash/effects"
)

// runNash runs nash with args through run, with buffers for stdio.
func runNash(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, stdio{in: strings.NewReader(stdin), out: &out, err: &errb}, os.LookupEnv)
	return code, out.String(), errb.String()
}

func TestExplain(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "s.sh")
	if err := os.WriteFile(script, []byte("mkdir -p out\ncp a.txt out/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		stdin    string
		args     []string
		code     int
		out, err []string // substrings that must appear
		notOut   []string // substrings that must not appear
	}{
		{
			name: "delete",
			args: []string{"explain", "rm -rf build"},
			out:  []string{"risk: deletes", "rm deletes", "build and everything under it", "delete "},
		},
		{
			name: "after double dash",
			args: []string{"explain", "--", "rm", "-rf", "build"},
			out:  []string{"risk: deletes"},
		},
		{
			name: "read only",
			args: []string{"explain", "ls -l | wc -l"},
			out:  []string{"risk: read-only", "(via |)"},
		},
		{
			name: "file",
			args: []string{"explain", "-f", script},
			out:  []string{"risk: writes-inside-cwd", "mkdir", "create "},
		},
		{
			name:  "stdin",
			stdin: "curl -d x https://example.com/api\n",
			args:  []string{"explain", "-f", "-"},
			out:   []string{"risk: cannot-undo", "uses the network"},
		},
		{
			name:   "hostile script escaped",
			args:   []string{"explain", "echo hi > \"$(printf x)\x1b[2K\u202e.txt\""},
			out:    []string{`\x1b[2K\u202e`},
			notOut: []string{"\x1b", "\u202e"},
		},
		{
			name: "parse error",
			args: []string{"explain", "echo 'unclosed"},
			code: exitFailure,
			err:  []string{"nash: explain: parse script: line 1, column 6"},
		},
		{
			name: "missing script",
			args: []string{"explain"},
			code: exitUsage,
			err:  []string{"missing SCRIPT"},
		},
		{
			name: "script and file",
			args: []string{"explain", "-f", script, "ls"},
			code: exitUsage,
			err:  []string{"not both"},
		},
		{
			name: "missing file",
			args: []string{"explain", "-f", filepath.Join(dir, "nope")},
			code: exitFailure,
			err:  []string{"no such file"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errs := runNash(t, tt.stdin, tt.args...)
			if code != tt.code {
				t.Fatalf("exit code %d, want %d; stderr: %s", code, tt.code, errs)
			}
			for _, s := range tt.out {
				if !strings.Contains(out, s) {
					t.Errorf("stdout lacks %q:\n%s", s, out)
				}
			}
			for _, s := range tt.notOut {
				if strings.Contains(out, s) {
					t.Errorf("stdout holds %q:\n%s", s, out)
				}
			}
			for _, s := range tt.err {
				if !strings.Contains(errs, s) {
					t.Errorf("stderr lacks %q: %s", s, errs)
				}
			}
		})
	}
}

func TestExplainJSON(t *testing.T) {
	code, out, errs := runNash(t, "", "explain", "--json", "sudo rm -r /tmp/x\u202e; curl https://e.com | sh")
	if code != 0 {
		t.Fatalf("exit code %d: %s", code, errs)
	}
	if strings.Contains(out, "\u202e") {
		t.Errorf("JSON output holds a raw bidi override")
	}
	var rep effects.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("output is not a report: %v\n%s", err, out)
	}
	if rep.Risk != effects.CannotUndo || !rep.Privileged || !rep.Network {
		t.Errorf("risk %v privileged %v network %v, want cannot-undo, true, true", rep.Risk, rep.Privileged, rep.Network)
	}
	if got := rep.PathsWith(effects.Delete); len(got) != 1 || got[0] != "/tmp/x\u202e" {
		t.Errorf("deleted paths %q, want [/tmp/x\\u202e]", got)
	}
}
