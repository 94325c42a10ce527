package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nash-shell/nash/internal/indexcli"
	"github.com/nash-shell/nash/sandbox"
)

// TestMain lets the test binary be nash itself (NASH_TEST_MAIN), the
// sandbox init, or the fence that runs commands natively for comparison.
func TestMain(m *testing.M) {
	if sandbox.IsChild() {
		sandbox.ChildMain()
	}
	if len(os.Args) == 2 && os.Args[1] == "-nash-test-tiocsti" {
		os.Exit(tiocstiHelper(os.Getenv("NASH_TEST_TIOCSTI")))
	}
	if os.Getenv("NASH_TEST_FENCE") != "" {
		os.Exit(fenceMain())
	}
	// nash starts nash-index for nash index and nash find: here, this
	// binary again, under that name.
	if filepath.Base(os.Args[0]) == indexBinName {
		os.Exit(indexcli.Main(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	if os.Getenv("NASH_INDEX_BIN") == "" {
		if self, err := os.Executable(); err == nil {
			os.Setenv("NASH_INDEX_BIN", self)
		}
	}
	if os.Getenv("NASH_TEST_MAIN") == "1" {
		main()
	}
	os.Exit(m.Run())
}

// nashCmd runs the test binary as nash with a private state dir.
type nashCmd struct {
	t     *testing.T
	state string
	dir   string
	env   []string
}

func newNash(t *testing.T, dir string) *nashCmd {
	return &nashCmd{t: t, state: filepath.Join(t.TempDir(), "state"), dir: dir}
}

// run runs nash with args and stdin; it returns stdout, stderr and the
// exit code.
func (n *nashCmd) run(stdin string, args ...string) (string, string, int) {
	n.t.Helper()
	self, err := os.Executable()
	if err != nil {
		n.t.Fatal(err)
	}
	cmd := exec.CommandContext(context.Background(), self, args...)
	cmd.Dir = n.dir
	cmd.Env = append(os.Environ(), "NASH_TEST_MAIN=1", "NASH_STATE_DIR="+n.state)
	cmd.Env = append(cmd.Env, n.env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		n.t.Fatalf("nash %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}
