package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoTerminalQueriesOutsideTheShell: on a terminal, nash's commands
// other than the shell write nothing to it but their own words. A package
// that asked the terminal a question as nash started (bubbletea 1 asked
// for the background colour in its init) would write escape sequences and
// wait for the answer: five seconds on a pty nobody answers.
func TestNoTerminalQueriesOutsideTheShell(t *testing.T) {
	scriptCmd, err := exec.LookPath("script")
	if err != nil {
		t.Fatalf("script(1) from util-linux is needed: %v", err)
	}
	nash := testBin(t, "nash")
	state := t.TempDir()
	for _, args := range []string{"version", "log", "run --yes -- true"} {
		cmd := exec.Command(scriptCmd, "-qfec", nash+" --state-dir "+state+" "+args, "/dev/null")
		cmd.Dir = t.TempDir()
		cmd.Env = append(cmd.Environ(), "TERM=xterm-256color", "NASH_MODEL=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("nash %s on a pty: %v\n%q", args, err, out)
		}
		if strings.Contains(string(out), "\x1b") {
			t.Errorf("nash %s wrote escape sequences to the terminal: %q", args, out)
		}
	}
}
