package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/nash-shell/nash/internal/indexserver"
	"github.com/nash-shell/nash/sandbox"
	"github.com/nash-shell/nash/shell"
)

// TestMain makes the test binary nash itself (testscript.Main, as
// chezmoi and shfmt do): the tests and scripts run the commands nash,
// nash-index and nash-test-fence from a directory testscript puts first on
// PATH, each a copy of this binary that runs the Main of that program.
// The sandbox init re-executes the copy it was started from, so TestMain
// begins where main does.
func TestMain(m *testing.M) {
	if sandbox.IsChild() {
		sandbox.ChildMain()
	}
	// The index servers nash starts (copies of this binary too) leave
	// soon after their last request; tests stop theirs when they end.
	if os.Getenv("NASH_INDEX_IDLE") == "" {
		os.Setenv("NASH_INDEX_IDLE", "30s")
	}
	testscript.Main(m, map[string]func(){
		"nash": func() { os.Exit(Main(os.Args[1:])) },
		indexBinName: func() {
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			code := indexserver.Main(ctx, os.Args[1:], os.Stderr, os.Getenv)
			stop()
			os.Exit(code)
		},
		fenceName:   func() { os.Exit(fenceMain()) },
		tiocstiName: func() { os.Exit(tiocstiHelper(os.Getenv("NASH_TEST_TIOCSTI"))) },
	})
}

// testBin is the path of command name (nash, nash-index, nash-test-fence)
// in the directory testscript.Main put on PATH.
func testBin(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil || !strings.HasPrefix(filepath.Base(filepath.Dir(filepath.Dir(p))), "testscript-main") {
		t.Fatalf("%s is not testscript's copy of this binary: %q, %v", name, p, err)
	}
	return p
}

// nashCmd runs nash (this test binary) with a private state dir.
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
	cmd := exec.CommandContext(context.Background(), testBin(n.t, "nash"), args...)
	cmd.Dir = n.dir
	cmd.Env = append(os.Environ(), "NASH_STATE_DIR="+n.state)
	cmd.Env = append(cmd.Env, n.env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		n.t.Fatalf("nash %v: %v", args, err)
	}
	return out.String(), errb.String(), code
}

// decodeRun reads the run of the one JSON record that --json printed.
func decodeRun(t *testing.T, out string) *shell.RunRecord {
	t.Helper()
	var rec shell.Record
	if err := json.Unmarshal([]byte(out), &rec); err != nil {
		t.Fatalf("--json output %q: %v", out, err)
	}
	if rec.Run == nil {
		t.Fatalf("--json output has no run: %q", out)
	}
	return rec.Run
}
