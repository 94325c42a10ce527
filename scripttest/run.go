package scripttest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"sync"
	"time"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/sandbox"
)

// killed is the status of a script the watchdog killed (128 + SIGKILL).
const killed = 137

// run is one finished sandboxed run of a variant.
type run struct {
	exit     int
	timedOut bool
	stdout   string
	stderr   string
	elapsed  time.Duration
	obs      *observation
	// setupErr is set when the starting state could not be built.
	setupErr string
}

// box is one sandbox that runs one variant after another, with its
// output going to the run at hand's buffers.
type box struct {
	sb             *sandbox.Sandbox
	stdout, stderr *switched
}

// newBox makes a sandbox over the working directory.
func (t *Tester) newBox(ctx context.Context) (*box, error) {
	b := &box{stdout: &switched{}, stderr: &switched{}}
	opts := append(append([]sandbox.Option{}, t.sbOpts...), sandbox.Dir(t.dir), sandbox.Env(t.env), sandbox.Stdio(nil, b.stdout, b.stderr))
	sb, err := sandbox.New(ctx, opts...)
	if err != nil {
		return nil, err
	}
	b.sb = sb
	return b, nil
}

func (b *box) close() { _ = b.sb.Close() }

// runVariant builds v's starting state in a sandbox, runs script on it,
// observes what the script did and aborts the run.
func (t *Tester) runVariant(ctx context.Context, b *box, v *Variant, script string) (*run, error) {
	entries := t.complete(v.Entries)
	vv := *v
	vv.Entries = entries
	code := vv.setup(script, t.timeoutSec(), t.umask, t.hostMode)
	var obs *observation
	r, err := t.runCode(ctx, b, code, func(cs *effects.ChangeSet, h host) { obs = observe(h, cs, entries) })
	if err != nil || r.setupErr != "" {
		return r, err
	}
	r.obs = obs
	return r, nil
}

func (t *Tester) timeoutSec() int { return int((t.timeout + time.Second - 1) / time.Second) }

// runCode runs code in b over the working directory and hands what the
// run changed to inspect, which may read the run's new versions, before
// the run is aborted.
func (t *Tester) runCode(ctx context.Context, b *box, code string, inspect func(*effects.ChangeSet, host)) (*run, error) {
	stdout, stderr := &capped{max: t.maxOut}, &capped{max: t.maxOut}
	b.stdout.set(stdout)
	b.stderr.set(stderr)
	start := time.Now()
	p, err := b.sb.Run(ctx, code)
	if err != nil {
		return nil, err
	}
	defer b.sb.Abort(p.ID)
	r := &run{exit: p.ExitCode, elapsed: time.Since(start), stdout: stdout.String(), stderr: stderr.String()}
	if p.Unsandboxed {
		return nil, fmt.Errorf("test run: the script ran without a sandbox")
	}
	if r.exit == setupFailed && strings.Contains(r.stderr, setupFailedMsg) {
		r.setupErr = strings.TrimSpace(r.stderr)
		return r, nil
	}
	r.timedOut = r.exit == killed && r.elapsed >= t.timeout
	inspect(p.Changes, runView{t: t, sb: b.sb, id: p.ID})
	return r, nil
}

// runView is the observer's view of a run: today's files through the
// Tester, the run's new versions through its sandbox.
type runView struct {
	t  *Tester
	sb *sandbox.Sandbox
	id string
}

func (v runView) Lstat(p string) (fs.FileInfo, error) { return v.t.lstat(p) }
func (v runView) NewVersion(p string) (string, bool)  { return v.sb.NewVersion(v.id, p) }

// switched writes to the writer set last. A sandbox's streams are fixed
// when it is made; its runs, one after another, each have their own.
type switched struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *switched) set(w io.Writer) {
	s.mu.Lock()
	s.w = w
	s.mu.Unlock()
}

func (s *switched) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w == nil {
		return len(p), nil
	}
	return s.w.Write(p)
}

// capped keeps the first max bytes written to it.
type capped struct {
	mu  sync.Mutex
	max int
	b   strings.Builder
	cut bool
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - c.b.Len(); room < len(p) {
		c.b.Write(p[:max(room, 0)])
		c.cut = true
		return len(p), nil
	}
	c.b.Write(p)
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cut {
		return c.b.String() + "\n[...]"
	}
	return c.b.String()
}

// Test derives the variants worth trying for script, runs it on each in a
// sandbox (several at once), and judges what it did against its run on
// today's files. A script that does not parse gives an
// *effects.ParseError; a sandbox that cannot be built, a
// *sandbox.UnavailableError. Nothing reaches the live files: every run is
// aborted.
func (t *Tester) Test(ctx context.Context, script string) (*Report, error) {
	start := time.Now()
	rep, f, err := t.analyze(script)
	if err != nil {
		return nil, err
	}
	vs := t.derive(f)
	runs, err := t.runAll(ctx, vs, script)
	if err != nil {
		return nil, err
	}
	out := t.judge(rep, f, vs, runs)
	out.Script = script
	out.Elapsed = time.Since(start)
	return out, nil
}

// Variants lists the variants Test would run for script, without running
// anything.
func (t *Tester) Variants(script string) ([]Variant, error) {
	_, f, err := t.analyze(script)
	if err != nil {
		return nil, err
	}
	return t.derive(f), nil
}

// analyze analyses script as run in the Tester's directory, looking at
// today's files, and reads its features.
func (t *Tester) analyze(script string) (*effects.Report, *features, error) {
	opts := []effects.Option{effects.Dir(t.dir), effects.Files(t.files)}
	if home, ok := lookupEnv(t.env, "HOME"); ok && home != "" {
		opts = append(opts, effects.Home(home))
	}
	rep, err := effects.Analyze(script, opts...)
	if err != nil {
		return nil, nil, err
	}
	return rep, collect(script, t.dir, rep), nil
}

// runAll runs every variant, t.parallel at a time, each worker with a
// sandbox of its own, and returns the runs in the variants' order. The
// first error stops the rest.
func (t *Tester) runAll(ctx context.Context, vs []Variant, script string) ([]*run, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	runs := make([]*run, len(vs))
	errs := make([]error, len(vs))
	// The many-files variant takes longest: it starts first.
	next := make(chan int, len(vs))
	for i := range vs {
		if vs[i].Kind == Many {
			next <- i
		}
	}
	for i := range vs {
		if vs[i].Kind != Many {
			next <- i
		}
	}
	close(next)
	// Every sandbox is made before any runs: making one recovers what
	// runs in its state dir left, and sandbox.Recover can take a run
	// whose record appears while it looks for a leftover.
	boxes := make([]*box, 0, min(t.parallel, len(vs)))
	defer func() {
		for _, b := range boxes {
			b.close()
		}
	}()
	for range cap(boxes) {
		b, err := t.newBox(ctx)
		if err != nil {
			return nil, err
		}
		boxes = append(boxes, b)
	}
	var wg sync.WaitGroup
	for _, b := range boxes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if ctx.Err() != nil {
					errs[i] = ctx.Err()
					continue
				}
				runs[i], errs[i] = t.runVariant(ctx, b, &vs[i], script)
				if errs[i] != nil {
					cancel()
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return nil, err
		}
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return runs, nil
}
