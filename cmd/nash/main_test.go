package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/nash-shell/nash/sandbox"
)

// TestMain lets the test binary be nash itself (NASH_TEST_MAIN), the
// sandbox init, or the fence that runs commands natively for comparison.
func TestMain(m *testing.M) {
	if sandbox.IsChild() {
		sandbox.ChildMain()
	}
	if os.Getenv("NASH_TEST_FENCE") != "" {
		os.Exit(fenceMain())
	}
	if os.Getenv("NASH_TEST_MAIN") == "1" {
		main()
	}
	// nash talks to nash-index, the index server: the real one, built
	// for these tests unless NASH_INDEX_BIN names one. The servers the
	// tests start leave soon after their last request.
	cleanup, err := indexServerForTests()
	if err != nil {
		fmt.Fprintf(os.Stderr, "build nash-index for the tests: %v\n", err)
		os.Exit(1)
	}
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// indexServerForTests builds nash-index into a temporary directory and
// points NASH_INDEX_BIN at it, unless it is set.
func indexServerForTests() (cleanup func(), err error) {
	if os.Getenv("NASH_INDEX_IDLE") == "" {
		os.Setenv("NASH_INDEX_IDLE", "30s")
	}
	if os.Getenv("NASH_INDEX_BIN") != "" {
		return func() {}, nil
	}
	dir, err := os.MkdirTemp("", "nash-index-bin")
	if err != nil {
		return nil, err
	}
	bin := filepath.Join(dir, indexBinName)
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin, "github.com/nash-shell/nash/cmd/nash-index")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("%v: %s", err, out)
	}
	os.Setenv("NASH_INDEX_BIN", bin)
	return func() { os.RemoveAll(dir) }, nil
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
