package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/nash-shell/nash/internal/xdg"
	"github.com/nash-shell/nash/planner"
)

// The index (nash index, nash find) runs in its own binary, nash-index
// (package internal/indexcli): it links bleve, whose start-up costs several
// milliseconds that nash run and the other commands should not pay. nash
// finds it next to itself, then on PATH; NASH_INDEX_BIN overrides both.
const indexBinName = "nash-index"

// indexBinary locates nash-index.
func indexBinary() (string, error) {
	return findHelper(indexBinName, "NASH_INDEX_BIN", "the index")
}

// indexCommand prepares nash-index with args, passing on what nash
// resolved: the state dir and the index roots.
func indexCommand(ctx context.Context, g *options, args []string) (*exec.Cmd, error) {
	bin, err := indexBinary()
	if err != nil {
		return nil, err
	}
	c := exec.CommandContext(ctx, bin, args...)
	c.Args[0] = indexBinName
	env := append(os.Environ(), "NASH_STATE_DIR="+g.stateDir)
	if len(g.indexRoots) > 0 {
		env = append(env, "NASH_INDEX_ROOTS="+strings.Join(g.indexRoots, string(os.PathListSeparator)))
	}
	c.Env = env
	// On ctrl+c the terminal interrupts nash-index too; nash gives it time
	// to close the index cleanly (nash index watch) before killing it.
	c.Cancel = func() error { return c.Process.Signal(syscall.SIGINT) }
	c.WaitDelay = 5 * time.Second
	return c, nil
}

// forwardIndex runs nash-index with args on nash's own stdio and returns
// its exit code as nash's.
func forwardIndex(ctx context.Context, g *options, args []string, io stdio) error {
	c, err := indexCommand(ctx, g, args)
	if err != nil {
		return err
	}
	c.Stdin, c.Stdout, c.Stderr = io.in, io.out, io.err
	return indexExit(c.Run())
}

// indexExit turns nash-index's exit status into nash's: nash-index has
// said why already.
func indexExit(err error) error {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if code := ee.ExitCode(); code > 0 {
			return exitError{code}
		}
		return exitError{exitInterrupted}
	}
	if err != nil {
		return fmt.Errorf("run nash-index: %w", err)
	}
	return nil
}

// newForwardCmd is a nash command carried out by nash-index: its flags and
// help are nash-index's; use is its usage line there.
func newForwardCmd(g *options, io stdio, use, short string) *cobra.Command {
	name, _, _ := strings.Cut(use, " ")
	return &cobra.Command{
		Use:                use,
		Short:              short,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return forwardIndex(cmd.Context(), g, append([]string{name}, args...), io)
		},
	}
}

func newIndexCmd(g *options, io stdio) *cobra.Command {
	return newForwardCmd(g, io, "index (add [PATH...] | rm PATH... | status | rebuild | watch)", "keep the file index that nash find and the planner search (add, rm, status, rebuild, watch)")
}

func newFindCmd(g *options, io stdio) *cobra.Command {
	return newForwardCmd(g, io, "find [-k|-s|--hybrid] [-n N] [--dir D] [--json] QUERY", "find files by keyword or by meaning in the index")
}

// indexQuery is a search nash makes through nash-index find.
type indexQuery struct {
	query string
	mode  string // "", "keyword", "semantic" or "hybrid"
	n     int
	dir   string // only files under dir
	plain bool   // query is plain words, not query syntax
	// indexDir is the index to search; "" is the default.
	indexDir string
}

// indexHit is one hit of nash-index find --json.
type indexHit struct {
	Path    string  `json:"path"`
	Score   float64 `json:"score"`
	Snippet string  `json:"snippet"`
	Line    int     `json:"line"`
}

// errIndexSearch says nash-index find failed and has said why on stderr.
type errIndexSearch struct{ code int }

func (e errIndexSearch) Error() string {
	return fmt.Sprintf("nash find failed (exit status %d)", e.code)
}

// searchIndex runs nash-index find --json for q. Its notes and errors go to
// errw. No match is an empty list, not an error.
func searchIndex(ctx context.Context, g *options, q indexQuery, errw io.Writer) ([]indexHit, error) {
	args := []string{"find", "--json", "-n", fmt.Sprint(q.n)}
	if q.mode != "" {
		args = append(args, "--"+q.mode)
	}
	if q.dir != "" {
		args = append(args, "--dir", q.dir)
	}
	if q.plain {
		args = append(args, "--plain")
	}
	if q.indexDir != "" {
		args = append(args, "--index-dir", q.indexDir)
	}
	args = append(args, "--", q.query)
	c, err := indexCommand(ctx, g, args)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	c.Stdout, c.Stderr = &out, errw
	err = c.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee) && ee.ExitCode() == exitFailure && out.Len() > 0:
		// Exit status 1 with a JSON list: nothing matched.
	case errors.As(err, &ee):
		return nil, errIndexSearch{ee.ExitCode()}
	case err != nil:
		return nil, fmt.Errorf("run nash-index: %w", err)
	}
	var hits []indexHit
	if err := json.Unmarshal(out.Bytes(), &hits); err != nil {
		return nil, fmt.Errorf("read nash find's answer: %w", err)
	}
	return hits, nil
}

// indexRetriever lets the planner find files by what they contain through
// nash-index find, which opens the index per request (or asks the watcher
// that holds it): nash keeps no index lock between requests and scans
// nothing before one. Without an index it finds nothing.
type indexRetriever struct{ g *options }

var _ planner.Retriever = indexRetriever{}

// Retrieve returns the k files that best match a request.
func (r indexRetriever) Retrieve(ctx context.Context, query string, k int) ([]planner.Document, error) {
	if !indexExists() {
		return nil, nil
	}
	var errb bytes.Buffer
	hits, err := searchIndex(ctx, r.g, indexQuery{query: query, mode: "hybrid", n: k, plain: true}, &errb)
	if err != nil {
		if msg := strings.TrimSpace(errb.String()); msg != "" {
			return nil, fmt.Errorf("%s", strings.TrimPrefix(msg, "nash: "))
		}
		return nil, err
	}
	docs := make([]planner.Document, len(hits))
	for i, h := range hits {
		docs[i] = planner.Document{Path: h.Path, Snippet: h.Snippet, Score: h.Score}
	}
	return docs, nil
}

// indexExists reports whether the index directory exists.
func indexExists() bool {
	dir, err := xdg.IndexDir("", os.Getenv)
	if err != nil {
		return false
	}
	_, err = os.Stat(dir)
	return err == nil
}

// watchLog is the file in the state dir where the shell's index watcher
// writes what it does.
const watchLog = "index-watch.log"

// startIndexWatch runs nash index watch for as long as the interactive
// shell lives, so that files changed under the roots are searchable within
// a second (by :find, nash find and the planner) while nash is open. It
// does nothing when no index exists: the shell creates none uninvited. When
// another watcher holds the index, this one says so in its log and ends.
// The returned func stops it.
func startIndexWatch(ctx context.Context, g *options) (stop func(), err error) {
	if !indexExists() {
		return func() {}, nil
	}
	c, err := indexCommand(context.WithoutCancel(ctx), g, []string{"index", "watch"})
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(g.stateDir, 0o700); err != nil {
		return nil, fmt.Errorf("index watcher: %w", err)
	}
	logf, err := os.OpenFile(filepath.Join(g.stateDir, watchLog), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("index watcher: %w", err)
	}
	c.Stdout, c.Stderr = logf, logf
	// Its own process group: ctrl+c at the terminal is meant for the
	// script in the foreground, not for the watcher.
	c.SysProcAttr = watcherAttr()
	if err := c.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start the index watcher: %w", err)
	}
	done := make(chan struct{})
	go func() {
		_ = c.Wait()
		logf.Close()
		close(done)
	}()
	return func() {
		_ = c.Process.Signal(syscall.SIGINT)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = c.Process.Kill()
			<-done
		}
	}, nil
}
