package indexrpc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// HandlerFunc answers one request. It may send responses that are not the
// last (progress, events) with send, and returns the last one, whose Done
// Serve sets. ctx ends when the client goes away or the server stops.
type HandlerFunc func(ctx context.Context, req Request, send func(Response) error) Response

// Listen creates the server's socket in dir, replacing one left by a
// server that died: the caller must hold the index, so that no live server
// owns it.
func Listen(dir string) (net.Listener, error) {
	var ln net.Listener
	err := withSocketPath(dir, func(path string) error {
		os.Remove(path)
		var err error
		ln, err = net.Listen("unix", path)
		return err
	})
	if err != nil {
		return nil, err
	}
	// The socket stays when the listener closes: Close below removes it
	// by its real name, which the /proc/self/fd alias is not.
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	return &listener{Listener: ln, path: filepath.Join(dir, SocketName)}, nil
}

type listener struct {
	net.Listener
	path string
}

// Close stops listening and removes the socket.
func (l *listener) Close() error {
	err := l.Listener.Close()
	os.Remove(l.path)
	return err
}

// requestTimeout bounds how long a connection may take to send its
// request.
const requestTimeout = 10 * time.Second

// Serve answers the connections on ln with h until ctx ends or ln fails,
// then waits for the requests in hand to end (their ctx is cancelled).
func Serve(ctx context.Context, ln net.Listener, h HandlerFunc) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		conn, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				// The AfterFunc's Close may still be removing the
				// socket: it is gone when Serve returns, before the
				// server lets go of its index for another to take.
				ln.Close()
				return nil
			}
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			serveConn(ctx, conn, h)
		}()
	}
}

func serveConn(ctx context.Context, conn net.Conn, h HandlerFunc) {
	defer conn.Close()
	conn.SetReadDeadline(time.Now().Add(requestTimeout))
	br := bufio.NewReader(conn)
	var req Request
	if err := json.NewDecoder(br).Decode(&req); err != nil {
		return
	}
	conn.SetReadDeadline(time.Time{})
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// The client leaving (EOF on its side of the connection) cancels the
	// request: a watch ends, a search is abandoned.
	go func() {
		io.Copy(io.Discard, br)
		cancel()
	}()
	var mu sync.Mutex
	enc := json.NewEncoder(conn)
	send := func(r Response) error {
		mu.Lock()
		defer mu.Unlock()
		r.Done = false
		return enc.Encode(r)
	}
	r := h(ctx, req, send)
	r.Done = true
	mu.Lock()
	defer mu.Unlock()
	enc.Encode(r)
}

// SignalReady tells the client that started the server, through the pipe
// it passed, that the server listens; SignalLocked that another process
// holds the index. Any other message is an error the client reports.
func SignalReady(w io.WriteCloser) error { return signal(w, readyLine) }

// SignalLocked: see SignalReady.
func SignalLocked(w io.WriteCloser) error { return signal(w, lockedLine) }

// SignalError: see SignalReady.
func SignalError(w io.WriteCloser, err error) error {
	if err == nil {
		err = errors.New("unknown error")
	}
	return signal(w, err.Error())
}

func signal(w io.WriteCloser, line string) error {
	_, err := io.WriteString(w, line+"\n")
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return err
}
