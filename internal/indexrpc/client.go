package indexrpc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Client talks to the index server of one index directory, starting one
// when none answers.
type Client struct {
	// Dir is the index directory (absolute).
	Dir string
	// Server is the nash-index executable to start when no server answers;
	// "" starts none.
	Server string
	// Env is the environment of a server the client starts (the embedder's
	// configuration, NASH_STATE_DIR, ...); nil is the client's own.
	Env []string
	// Log is the file a started server appends its log to; "" discards it.
	Log string
	// Expect is the server wanted; see Identity. Identify fills it.
	Expect Identity
}

// Identify sets c.Expect for the server c.Server configured by the
// environment getenv reads.
func (c *Client) Identify(getenv func(string) string) {
	c.Expect = Identity{Build: BuildOf(c.Server), Embedder: EmbedderOf(getenv)}
}

// BuildOf identifies an executable by path, size and modification time,
// so that a server started before nash was rebuilt is told apart.
func BuildOf(exe string) string {
	fi, err := os.Stat(exe)
	if err != nil {
		return exe
	}
	return fmt.Sprintf("%s %d %d", exe, fi.Size(), fi.ModTime().UnixNano())
}

// Search ranks files for a query.
func (c *Client) Search(ctx context.Context, req SearchRequest) (*SearchResult, error) {
	r, err := c.do(ctx, Request{Op: OpSearch, Search: &req}, false, nil)
	if err != nil {
		return nil, err
	}
	if r.Search == nil {
		return nil, errors.New("the index server sent no result")
	}
	return r.Search, nil
}

// Add indexes the files under paths (absolute) and keeps them indexed.
// progress, when not nil, is told of the run every so often.
func (c *Client) Add(ctx context.Context, paths []string, hidden bool, progress func(Progress)) (*Stats, error) {
	return c.stats(ctx, Request{Op: OpAdd, Paths: paths, Hidden: hidden}, true, progress)
}

// Remove drops roots (absolute) and their files from the index.
func (c *Client) Remove(ctx context.Context, paths []string) (*Stats, error) {
	return c.stats(ctx, Request{Op: OpRemove, Paths: paths}, false, nil)
}

// Rebuild indexes every root again from scratch.
func (c *Client) Rebuild(ctx context.Context, hidden bool, progress func(Progress)) (*Stats, error) {
	return c.stats(ctx, Request{Op: OpRebuild, Hidden: hidden}, false, progress)
}

func (c *Client) stats(ctx context.Context, req Request, create bool, progress func(Progress)) (*Stats, error) {
	r, err := c.do(ctx, req, create, func(r Response) {
		if r.Progress != nil && progress != nil {
			progress(*r.Progress)
		}
	})
	if err != nil {
		return nil, err
	}
	if r.Stats == nil {
		return nil, errors.New("the index server sent no statistics")
	}
	return r.Stats, nil
}

// Status reports what the index holds.
func (c *Client) Status(ctx context.Context) (*Status, error) {
	r, err := c.do(ctx, Request{Op: OpStatus}, false, nil)
	if err != nil {
		return nil, err
	}
	if r.Status == nil {
		return nil, errors.New("the index server sent no status")
	}
	return r.Status, nil
}

// Watch keeps the server up, telling events of what its watcher does,
// until ctx ends; it then returns ctx's error. budget is passed on as
// Request.VersionsBudget.
func (c *Client) Watch(ctx context.Context, budget int64, events func(Event)) error {
	_, err := c.do(ctx, Request{Op: OpWatch, VersionsBudget: budget}, false, func(r Response) {
		if r.Event != nil && events != nil {
			events(*r.Event)
		}
	})
	if err == nil {
		err = errors.New("the index server stopped")
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}

// Stop asks a running server to leave and waits until it has let go of
// the index. No server is no error.
func (c *Client) Stop(ctx context.Context) error {
	conn, err := c.dial(ctx)
	if err != nil {
		return nil
	}
	if _, err := c.exchange(ctx, conn, Request{Op: OpStop}, nil); err != nil {
		return err
	}
	return c.waitReleased(ctx)
}

// releaseTimeout bounds the wait for a stopping server.
const releaseTimeout = 10 * time.Second

// waitReleased waits until no process holds the index: the catalog's lock
// (an exclusive flock, bbolt's) can be shared.
func (c *Client) waitReleased(ctx context.Context) error {
	f, err := os.Open(filepath.Join(c.Dir, "catalog.db"))
	if err != nil {
		return nil // no index, nothing held
	}
	defer f.Close()
	deadline := time.Now().Add(releaseTimeout)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB)
		if err == nil {
			syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the index server did not let go of the index within %v", releaseTimeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Exists reports whether the index directory holds an index.
func (c *Client) Exists() bool {
	_, err := os.Stat(filepath.Join(c.Dir, "catalog.db"))
	return err == nil
}

// do sends req to the server, starting one if none answers (and create is
// set or the index exists), and returns the last response; each earlier
// one goes to each.
func (c *Client) do(ctx context.Context, req Request, create bool, each func(Response)) (Response, error) {
	req.Expect = c.Expect
	restarted := false
	for {
		conn, err := c.dial(ctx)
		if err != nil {
			if !create && !c.Exists() {
				return Response{}, ErrEmpty
			}
			if conn, err = c.start(ctx); err != nil {
				return Response{}, err
			}
		}
		r, err := c.exchange(ctx, conn, req, each)
		if errors.Is(err, ErrMismatch) && !restarted {
			// A server from before nash was rebuilt, or started with
			// another embedder: replace it.
			restarted = true
			if err := c.replace(ctx); err != nil {
				return Response{}, err
			}
			continue
		}
		return r, err
	}
}

// exchange sends req on conn and reads responses until the last.
func (c *Client) exchange(ctx context.Context, conn net.Conn, req Request, each func(Response)) (Response, error) {
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if err := json.NewEncoder(conn).Encode(req); err != nil {
		return Response{}, c.connErr(ctx, "ask the index server", err)
	}
	dec := json.NewDecoder(bufio.NewReader(conn))
	for {
		var r Response
		if err := dec.Decode(&r); err != nil {
			return Response{}, c.connErr(ctx, "answer of the index server", err)
		}
		if !r.Done {
			if each != nil {
				each(r)
			}
			continue
		}
		if r.Err != nil {
			return r, r.Err
		}
		return r, nil
	}
}

func (c *Client) connErr(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%s: the server closed the connection (its log: %s)", what, c.logName())
	}
	return fmt.Errorf("%s: %w", what, err)
}

func (c *Client) logName() string {
	if c.Log == "" {
		return "none"
	}
	return c.Log
}

// dial connects to the server's socket.
func (c *Client) dial(ctx context.Context) (net.Conn, error) {
	var conn net.Conn
	err := withSocketPath(c.Dir, func(path string) error {
		var d net.Dialer
		var err error
		conn, err = d.DialContext(ctx, "unix", path)
		return err
	})
	return conn, err
}

// replace stops the running server, which is not the one wanted, so that
// another can start.
func (c *Client) replace(ctx context.Context) error {
	if err := c.Stop(ctx); err != nil {
		return fmt.Errorf("stop the index server: %w", err)
	}
	return nil
}

// Lines a server writes on its ready pipe.
const (
	readyLine  = "ready"
	lockedLine = "locked" // another process holds the index
)

// startTimeout bounds how long a client waits for a server it started.
const startTimeout = 15 * time.Second

// start starts a server, waits until it listens, and connects. When
// another process (a server starting at the same moment) holds the index,
// it waits for that one's socket instead.
func (c *Client) start(ctx context.Context) (net.Conn, error) {
	if c.Server == "" {
		return nil, ErrNoServer
	}
	if err := os.MkdirAll(c.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("create the index directory: %w", err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer pr.Close()
	cmd := exec.Command(c.Server, "serve", "--dir", c.Dir, "--ready-fd", "3")
	cmd.Env = c.Env
	cmd.ExtraFiles = []*os.File{pw}
	// A session of its own: the terminal's signals are not for it, and it
	// outlives the command that started it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if c.Log != "" {
		if err := os.MkdirAll(filepath.Dir(c.Log), 0o700); err == nil {
			if f, err := os.OpenFile(c.Log, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600); err == nil {
				defer f.Close()
				cmd.Stdout, cmd.Stderr = f, f
			}
		}
	}
	if err := cmd.Start(); err != nil {
		pw.Close()
		return nil, fmt.Errorf("start the index server %s: %w", c.Server, err)
	}
	pw.Close()
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }() // reap it whenever it leaves
	line := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(pr, 4096))
		line <- strings.TrimSpace(string(b))
	}()
	var msg string
	select {
	case msg = <-line:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(startTimeout):
		return nil, fmt.Errorf("the index server did not start within %v (its log: %s)", startTimeout, c.logName())
	}
	switch {
	case msg == readyLine:
		return c.dial(ctx)
	case msg == lockedLine:
		// Another server got there first: wait for its socket.
		deadline := time.Now().Add(startTimeout)
		for {
			conn, err := c.dial(ctx)
			if err == nil {
				return conn, nil
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				return nil, fmt.Errorf("the index is in use by another process and no index server answers: %w", err)
			}
			time.Sleep(10 * time.Millisecond)
		}
	case msg == "":
		<-exited
		return nil, fmt.Errorf("the index server ended at start (%v; its log: %s)", cmd.ProcessState, c.logName())
	}
	return nil, fmt.Errorf("start the index server: %s", msg)
}

// maxSocketPath is the longest path bind and connect take (sun_path, less
// the terminating NUL).
const maxSocketPath = 107

// withSocketPath calls f with a path naming the socket in dir that fits a
// socket address: a long one is reached through /proc/self/fd.
func withSocketPath(dir string, f func(path string) error) error {
	p := filepath.Join(dir, SocketName)
	if len(p) <= maxSocketPath {
		return f(p)
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return f(fmt.Sprintf("/proc/self/fd/%d/%s", d.Fd(), SocketName))
}
