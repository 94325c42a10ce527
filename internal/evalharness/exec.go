package evalharness

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/sandbox"
)

// maxKept is how much of a run's output is kept in memory; past it,
// outputs compare by length and SHA-256.
const maxKept = 4 << 20

// execution is one pending sandboxed run and what it printed.
type execution struct {
	sb       *sandbox.Sandbox
	id       string
	exitCode int
	timedOut bool
	changes  *effects.ChangeSet
	output   captured // standard output and standard error, as written
}

// captured is a stream as read: its first bytes, its length and hash.
type captured struct {
	head  []byte
	n     int64
	sum   [sha256.Size]byte
	whole bool // head is all of it
}

// capture reads r to EOF, keeping up to keep bytes.
func capture(r io.Reader, keep int) captured {
	var c captured
	h := sha256.New()
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			c.n += int64(n)
			h.Write(buf[:n])
			if room := keep - len(c.head); room > 0 {
				c.head = append(c.head, buf[:min(n, room)]...)
			}
		}
		if err != nil {
			break
		}
	}
	copy(c.sum[:], h.Sum(nil))
	c.whole = int64(len(c.head)) == c.n
	return c
}

// run runs script in a fresh sandbox at the fixture. A run that outlives
// the timeout is killed and reported with timedOut set; the errors
// returned are those that end the evaluation.
func (h *harness) run(ctx context.Context, script string) (*execution, error) {
	stdin, err := os.Open(os.DevNull)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", os.DevNull, err)
	}
	defer stdin.Close()
	// Standard output and standard error go to one pipe, in the order
	// written, as InterCode's docker exec returns them.
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("pipe: %w", err)
	}
	outC := make(chan captured, 1)
	go func() { outC <- capture(outR, maxKept); outR.Close() }()
	// The sandbox is made per run because the streams are set per
	// sandbox; the state directory is shared, so this is cheap.
	sb, err := sandbox.New(ctx, sandbox.StateDir(h.state), sandbox.Dir(h.base),
		sandbox.Stdio(stdin, outW, outW), sandbox.Env(h.fsEnv), sandbox.Shell(h.fsShell), sandbox.Network(false))
	var p *sandbox.Pending
	rctx, cancel := context.WithTimeout(ctx, h.timeout)
	if err == nil {
		p, err = sb.Run(rctx, script)
	}
	cancel()
	// Every process of the run is gone once Run returns (the sandbox's
	// init kills them all before it reports), so closing our end of the
	// pipe brings the reader to EOF.
	outW.Close()
	e := &execution{sb: sb, output: <-outC}
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.Is(err, context.DeadlineExceeded):
		e.timedOut = true
		e.changes = &effects.ChangeSet{}
		return e, nil
	case err != nil:
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	e.id, e.exitCode, e.changes = p.ID, p.ExitCode, p.Changes
	if e.changes == nil {
		e.changes = &effects.ChangeSet{}
	}
	if p.Unsandboxed || len(p.Unprotected) > 0 {
		e.abort()
		return nil, errors.New("sandbox: the run was not fully sandboxed")
	}
	return e, nil
}

// abort discards the run's changes; the live fixture was never touched.
func (e *execution) abort() {
	if e.id != "" {
		_ = e.sb.Abort(e.id)
		e.id = ""
	}
}

// newVersion returns where the run holds its new version of regular file
// p.
func (e *execution) newVersion(p string) (string, bool) {
	if e.id == "" {
		return "", false
	}
	return e.sb.NewVersion(e.id, p)
}
