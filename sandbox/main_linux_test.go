package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nash-shell/nash/internal/fstree"
)

// TestMain lets the test binary act as the sandbox init (the sandbox
// re-executes /proc/self/exe) and as small helpers that scripts call.
func TestMain(m *testing.M) {
	if IsChild() {
		ChildMain()
	}
	if spec := os.Getenv("NASH_TEST_SETXATTR"); spec != "" {
		// path=name=value
		parts := strings.SplitN(spec, "=", 3)
		if err := unix.Lsetxattr(parts[0], parts[1], []byte(parts[2]), 0); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if scenario := os.Getenv("NASH_TEST_DISKFULL"); scenario != "" {
		os.Exit(diskFullMain(scenario))
	}
	if text := os.Getenv("NASH_TEST_TIOCSTI"); text != "" {
		os.Exit(tiocstiMain(text))
	}
	if os.Getenv("NASH_TEST_RENAME") != "" {
		os.Exit(renameMain(os.Args[1:]))
	}
	if spec := os.Getenv("NASH_TEST_RENAMES"); spec != "" {
		os.Exit(renamesMain(spec))
	}
	if os.Getenv("NASH_TEST_NET") != "" {
		os.Exit(netHelperMain())
	}
	if os.Getenv("NASH_TEST_CRASHER") != "" {
		os.Exit(crasherMain())
	}
	os.Exit(m.Run())
}

// env is one test's sandbox: a work dir, a state dir and captured output.
type env struct {
	t      testing.TB
	sb     *Sandbox
	work   string
	state  string
	stdout bytes.Buffer
	stderr bytes.Buffer
}

func newEnv(t testing.TB, opts ...Option) *env {
	t.Helper()
	base := t.TempDir()
	e := &env{t: t, work: filepath.Join(base, "work"), state: filepath.Join(base, "state")}
	if err := os.Mkdir(e.work, 0o755); err != nil {
		t.Fatal(err)
	}
	all := append([]Option{StateDir(e.state), Dir(e.work), Stdio(strings.NewReader(""), &e.stdout, &e.stderr)}, opts...)
	sb, err := New(context.Background(), all...)
	if err != nil {
		t.Fatalf("new sandbox: %v", err)
	}
	e.sb = sb
	// Runs a test leaves pending hold overlay's mode-000 work dirs, which
	// t.TempDir cannot remove as an ordinary user: discard them first.
	t.Cleanup(func() {
		runs, _ := os.ReadDir(layout(e.state).runsDir())
		for _, r := range runs {
			_ = sb.Abort(r.Name())
		}
		_ = sb.Close()
	})
	return e
}

func (e *env) path(rel string) string { return filepath.Join(e.work, rel) }

// sh runs a setup command natively, outside any sandbox.
func (e *env) sh(script string) {
	e.t.Helper()
	cmd := execCommand("bash", "-c", script)
	cmd.Dir = e.work
	if out, err := cmd.CombinedOutput(); err != nil {
		e.t.Fatalf("setup %q: %v\n%s", script, err, out)
	}
}

// run runs script in the sandbox and fails the test on error.
func (e *env) run(script string) *Pending {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := e.sb.Run(ctx, script)
	if err != nil {
		e.t.Fatalf("run %q: %v\nstderr: %s", script, err, e.stderr.String())
	}
	return p
}

func (e *env) commit(p *Pending) *Tx {
	e.t.Helper()
	tx, err := e.sb.Commit(context.Background(), p.ID, CommitOptions{})
	if err != nil {
		e.t.Fatalf("commit %s: %v", p.ID, err)
	}
	return tx
}

func (e *env) undo(id string) *Tx {
	e.t.Helper()
	u, err := e.sb.Undo(context.Background(), id, UndoOptions{})
	if err != nil {
		e.t.Fatalf("undo %s: %v", id, err)
	}
	return u
}

// snapshot records the tree below root (see fstree.Snapshot).
func snapshot(t testing.TB, root string) fstree.Tree {
	t.Helper()
	tree, err := fstree.Snapshot(root)
	if err != nil {
		t.Fatal(err)
	}
	return tree
}

// diffTrees is fstree.Diff.
func diffTrees(want, got fstree.Tree) string { return fstree.Diff(want, got) }

// kinds renders a change set as "path kind" lines relative to base.
func kinds(p *Pending, base string) []string {
	var out []string
	for _, c := range p.Changes.Changes {
		rel, err := filepath.Rel(base, c.Path)
		if err != nil || strings.HasPrefix(rel, "..") {
			rel = c.Path
		}
		out = append(out, rel+" "+string(c.Kind))
	}
	return out
}

// syncBuffer is a bytes.Buffer safe for a writer goroutine and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
