// Package indexserver is nash-index, the per-user server of nash's file
// index. It holds the index open and current, and answers nash find, nash
// index and the planner over a Unix socket in the index directory, in the
// protocol of package indexrpc. nash starts it when none answers; it
// leaves after a while with nothing to do (--idle), or at once when asked
// (nash index stop). It is a program of its own (cmd/nash-index) because
// it links bleve, whose start-up alone costs milliseconds that every other
// nash command would pay; cmd/nash's tests run it from their own binary.
//
//	nash-index serve --dir DIR [--idle 10m] [--ready-fd N]
//
// Its environment configures it as it does nash: NASH_EMBEDDER and
// NASH_EMBED_URL (or OLLAMA_HOST, OPENAI_API_KEY) the embedder,
// NASH_STATE_DIR and NASH_VERSIONS_BUDGET the recorder of versions of files
// changed outside nash (nash history). It writes its log to standard
// error.
package indexserver

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"
)

// Exit codes.
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
)

// memoryLimit is the server's default soft limit on Go's memory: indexing
// a large tree allocates in bursts (batches, segment merges), and without
// a limit the collector lets the heap grow to twice what is live.
// GOMEMLIMIT overrides it.
const memoryLimit = 256 << 20

// serveOptions are the flags of nash-index serve.
type serveOptions struct {
	dir     string
	idle    time.Duration
	readyFD int
}

// Main is nash-index: it parses the command line (args without the
// program's name) and serves until ctx ends, the server is idle or asked
// to stop. It returns the exit code.
func Main(ctx context.Context, args []string, log io.Writer, getenv func(string) string) int {
	if len(args) == 0 || args[0] != "serve" {
		fmt.Fprintln(log, "usage: nash-index serve --dir DIR [--idle DURATION] [--ready-fd N]")
		return exitUsage
	}
	var opts serveOptions
	fs := flag.NewFlagSet("nash-index serve", flag.ContinueOnError)
	fs.SetOutput(log)
	fs.StringVar(&opts.dir, "dir", "", "the index directory")
	fs.DurationVar(&opts.idle, "idle", defaultIdle(getenv), "leave after this long with no request (NASH_INDEX_IDLE)")
	fs.IntVar(&opts.readyFD, "ready-fd", -1, "descriptor to say ready on, then close")
	if err := fs.Parse(args[1:]); err != nil {
		return exitUsage
	}
	if opts.dir == "" || fs.NArg() > 0 {
		fmt.Fprintln(log, "nash-index serve: --dir DIR is required and takes no arguments")
		return exitUsage
	}
	var ready io.WriteCloser
	if opts.readyFD >= 0 {
		ready = os.NewFile(uintptr(opts.readyFD), "ready")
	}
	// A detached server must not keep a directory busy, nor lose its
	// working directory.
	if abs, err := filepath.Abs(opts.dir); err == nil {
		opts.dir = abs
	}
	_ = os.Chdir("/")
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	err := serve(ctx, opts, ready, log, getenv)
	switch {
	case err == nil || errors.Is(err, context.Canceled):
		return exitOK
	case errors.Is(err, errLocked):
		return exitOK // another server has the index; the client uses it
	}
	fmt.Fprintf(log, "nash-index: %v\n", err)
	return exitFailed
}

// defaultIdle is how long a server stays with nothing to do: NASH_INDEX_IDLE
// or ten minutes.
func defaultIdle(getenv func(string) string) time.Duration {
	if d, err := time.ParseDuration(getenv("NASH_INDEX_IDLE")); err == nil && d > 0 {
		return d
	}
	return 10 * time.Minute
}
