package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunLimitsFromConfig: the run limits come from the config file and
// NASH_* over it, and a run that fills its scratch space is told so.
func TestRunLimitsFromConfig(t *testing.T) {
	dir := t.TempDir()
	cfgDir := filepath.Join(t.TempDir(), "nash")
	if err := os.MkdirAll(cfgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(cfgDir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("sandbox:\n  max_processes: 77\n  scratch_size: 16M\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	n := newNash(t, dir)
	n.env = []string{"NASH_CONFIG=" + cfg}
	out, errOut, code := n.run("", "run", "--yes", "--", `ulimit -u; head -c 67108864 /dev/zero > "$HOME/nash-limits-test"; echo "status $?"`)
	if code != 0 || !strings.Contains(out, "77\n") || !strings.Contains(out, "status 1") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if !strings.Contains(errOut, "filled its scratch space (16 MiB)") {
		t.Errorf("nash did not say the scratch space filled up: %q", errOut)
	}
	n.env = append(n.env, "NASH_MAX_PROCESSES=99")
	if out, errOut, code := n.run("", "run", "--yes", "--", `ulimit -u`); code != 0 || out != "99\n" {
		t.Errorf("NASH_MAX_PROCESSES over the config: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	n.env = []string{"NASH_SCRATCH_SIZE=lots"}
	if _, errOut, code := n.run("", "run", "--yes", "--", `true`); code == 0 || !strings.Contains(errOut, "scratch_size") {
		t.Errorf("a bad scratch size was accepted: exit %d, stderr %q", code, errOut)
	}
}
