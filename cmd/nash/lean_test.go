package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestSandboxCommandNames checks that each of sandboxCommands is called by
// the name it is listed under, which is how the lean build recognises it.
func TestSandboxCommandNames(t *testing.T) {
	for name, mk := range sandboxCommands() {
		if got := mk(stdio{}).Name(); got != name {
			t.Errorf("sandboxCommands lists %q, but the command is called %q", name, got)
		}
	}
}

func TestLeanCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{nil, false}, // the shell
		{[]string{"run", "--", "true"}, true},
		{[]string{"--state-dir", "/s", "undo"}, true},
		{[]string{"--state-dir=/s", "log", "--json"}, true},
		{[]string{"version"}, true},
		{[]string{"-c", "run", "the tests"}, false}, // a request, not nash run
		{[]string{"--model", "m", "run"}, false},
		{[]string{"--help"}, false},
		{[]string{"help", "run"}, false},
		{[]string{"find", "x"}, false},
		{[]string{"group", "x", "--into", "d"}, false},
		{[]string{"eval"}, false},
		{[]string{"bogus"}, false}, // nash-shell says it is unknown
		{[]string{"--state-dir"}, false},
	} {
		if got := leanCommand(tc.args); got != tc.want {
			t.Errorf("leanCommand(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}

// TestLeanNash builds nash as make build does (-tags lean) and checks, as
// a person would see it, which commands it serves itself and that it hands
// the rest to nash-shell (here this test binary, acting as the whole nash)
// with the same arguments, streams and exit code. NASH_TEST_LEAN_BIN names
// a lean nash built beforehand (scripts/test-unprivileged.sh builds one:
// its user has no source to build from).
func TestLeanNash(t *testing.T) {
	bin := os.Getenv("NASH_TEST_LEAN_BIN")
	if bin == "" {
		bin = filepath.Join(t.TempDir(), "nash")
		build := exec.Command("go", "build", "-tags", "lean", "-o", bin, ".")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build -tags lean: %v\n%s", err, out)
		}
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	work, state := t.TempDir(), filepath.Join(t.TempDir(), "state")
	run := func(shellBin string, env []string, args ...string) (string, string, int) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = work
		cmd.Env = append(os.Environ(), "NASH_STATE_DIR="+state, "NASH_SHELL_BIN="+shellBin, "NASH_TEST_MAIN=1", "NASH_MODEL=")
		cmd.Env = append(cmd.Env, env...)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatalf("nash %q: %v", args, err)
		}
		return out.String(), errb.String(), code
	}
	missing := filepath.Join(t.TempDir(), "no-nash-shell")

	// Served by the lean nash itself: they work with no nash-shell at all.
	if out, errs, code := run(missing, nil, "run", "--yes", "--", "echo hi > made"); code != 0 || !strings.Contains(errs, "committed as transaction") {
		t.Fatalf("run: exit %d\nstdout %q\nstderr %q", code, out, errs)
	}
	if b, err := os.ReadFile(filepath.Join(work, "made")); err != nil || string(b) != "hi\n" {
		t.Fatalf("run did not commit made: %q, %v", b, err)
	}
	if out, errs, code := run(missing, nil, "--state-dir", state, "log"); code != 0 || !strings.Contains(out, "echo hi > made") {
		t.Errorf("log: exit %d\nstdout %q\nstderr %q", code, out, errs)
	}
	if out, errs, code := run(missing, nil, "explain", "--", "rm", "-rf", "build"); code != 0 || !strings.Contains(out, "build") {
		t.Errorf("explain: exit %d\nstdout %q\nstderr %q", code, out, errs)
	}
	if _, errs, code := run(missing, nil, "undo"); code != 0 {
		t.Fatalf("undo: exit %d\nstderr %q", code, errs)
	}
	if _, err := os.Lstat(filepath.Join(work, "made")); !os.IsNotExist(err) {
		t.Errorf("undo left made behind: %v", err)
	}

	// Handed over: without nash-shell they fail, saying what is missing.
	for _, args := range [][]string{{"--help"}, {"find", "x"}, {"-c", "list files"}} {
		out, errs, code := run(missing, nil, args...)
		if code != exitFailure || !strings.Contains(errs, missing) || out != "" {
			t.Errorf("nash %q without nash-shell: exit %d\nstdout %q\nstderr %q", args, code, out, errs)
		}
	}
	// With it, nash-shell answers.
	if out, errs, code := run(self, nil, "--help"); code != 0 || !strings.Contains(out, "interactive shell") {
		t.Errorf("--help: exit %d\nstdout %q\nstderr %q", code, out, errs)
	}
	if out, errs, code := run(self, nil, "eval", "--help"); code != 0 || !strings.Contains(out, "intercode-alfa") {
		t.Errorf("eval --help: exit %d\nstdout %q\nstderr %q", code, out, errs)
	}
	if _, errs, code := run(self, nil, "bogus"); code != exitUsage || !strings.Contains(errs, `unknown command "bogus"`) {
		t.Errorf("bogus: exit %d\nstderr %q", code, errs)
	}
	// With a model configured, nash run's commit gets a summary, which only
	// nash-shell writes: the lean nash hands the whole run over. Here the
	// model does not answer, so the summary fails and the commit stands.
	model := []string{"NASH_MODEL=openai:test", "OPENAI_BASE_URL=http://127.0.0.1:1/v1", "OPENAI_API_KEY=x"}
	if _, errs, code := run(missing, model, "run", "--yes", "--", "echo hi > other"); code != exitFailure || !strings.Contains(errs, missing) {
		t.Errorf("run with a model, no nash-shell: exit %d\nstderr %q", code, errs)
	}
	if _, err := os.Lstat(filepath.Join(work, "other")); !os.IsNotExist(err) {
		t.Errorf("the refused run changed the files: %v", err)
	}
	if _, errs, code := run(self, model, "run", "--yes", "--", "echo hi > other"); code != 0 || !strings.Contains(errs, "no change summary") || !strings.Contains(errs, "committed as transaction") {
		t.Errorf("run with a model: exit %d\nstderr %q", code, errs)
	}
}
