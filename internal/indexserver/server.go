package indexserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/index"
	"github.com/nash-shell/nash/internal/indexrpc"
	"github.com/nash-shell/nash/internal/size"
	"github.com/nash-shell/nash/sandbox"
)

// errLocked: another process holds the index (another server, most
// likely, started at the same moment).
var errLocked = errors.New("the index is in use by another process")

// server holds an open index and answers requests for it.
type server struct {
	ix       *index.Index
	dir      string
	identity indexrpc.Identity
	log      io.Writer
	getenv   func(string) string
	stop     context.CancelFunc // ends the server

	mu        sync.Mutex
	watcher   *index.Watcher
	watchCtx  context.Context // the server's lifetime, for the watcher
	subs      map[chan indexrpc.Event]bool
	active    int       // requests in hand
	writing   int       // add, remove, rebuild in hand
	catching  bool      // the start-up rescan runs
	last      time.Time // when the last request ended
	progress  func(index.Progress)
	started   time.Time
	budget    int64            // bytes of recorded versions; 0 records none
	recorder  *sandbox.Sandbox // opened on the first version to record
	recordErr error
}

// serve opens the index, listens, says so on ready and answers until ctx
// ends, the server is idle for opts.idle or asked to stop.
func serve(ctx context.Context, opts serveOptions, ready io.WriteCloser, log io.Writer, getenv func(string) string) (err error) {
	signalErr := func(err error) {
		if ready != nil {
			indexrpc.SignalError(ready, err)
			ready = nil
		}
	}
	defer func() {
		if err != nil && !errors.Is(err, errLocked) {
			signalErr(err)
		}
	}()
	dir, err := filepath.Abs(opts.dir)
	if err != nil {
		return err
	}
	emb, spec, err := embedderFromEnv(getenv)
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find own executable: %w", err)
	}
	budget := int64(256 << 20)
	if v := getenv("NASH_VERSIONS_BUDGET"); v != "" {
		if budget, err = size.Parse(v); err != nil {
			return fmt.Errorf("NASH_VERSIONS_BUDGET: %w", err)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s := &server{
		dir:      dir,
		identity: indexrpc.Identity{Build: indexrpc.BuildOf(exe), Embedder: indexrpc.EmbedderOf(getenv)},
		log:      log,
		getenv:   getenv,
		stop:     cancel,
		subs:     map[chan indexrpc.Event]bool{},
		last:     time.Now(),
		started:  time.Now(),
		watchCtx: ctx,
		budget:   budget,
	}
	ixOpts := []index.Option{index.LockTimeout(2 * time.Second), index.OnProgress(s.onProgress)}
	if emb != nil {
		ixOpts = append(ixOpts, index.Embeddings(emb, spec))
	}
	s.ix, err = index.Open(ctx, dir, ixOpts...)
	if errors.Is(err, index.ErrLocked) {
		if ready != nil {
			indexrpc.SignalLocked(ready)
		}
		return errLocked
	}
	if err != nil {
		return err
	}
	defer s.close()
	ln, err := indexrpc.Listen(dir)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	if ready != nil {
		indexrpc.SignalReady(ready)
		ready = nil
	}
	s.logf("serving %s (pid %d, embedder %q, idle %v)", dir, os.Getpid(), spec, opts.idle)
	ours, err := os.Stat(filepath.Join(dir, "catalog.db"))
	if err != nil {
		return err
	}
	go s.catchUp(ctx)
	go s.idle(ctx, opts.idle, ours)
	err = indexrpc.Serve(ctx, ln, s.handle)
	s.logf("stopping")
	return err
}

// close stops the watcher and closes the index.
func (s *server) close() {
	s.mu.Lock()
	w := s.watcher
	s.watcher = nil
	rec := s.recorder
	s.mu.Unlock()
	if w != nil {
		w.Close()
	}
	if rec != nil {
		rec.Close()
	}
	if err := s.ix.Close(); err != nil {
		s.logf("close the index: %v", err)
	}
}

func (s *server) logf(format string, args ...any) {
	fmt.Fprintf(s.log, "%s nash-index: %s\n", time.Now().Format(time.RFC3339), fmt.Sprintf(format, args...))
}

// catchUp brings the index in step with what changed while no server
// watched, then watches. Searches are answered meanwhile, from the index
// as it stands.
func (s *server) catchUp(ctx context.Context) {
	roots, err := s.ix.Roots()
	if err != nil || len(roots) == 0 {
		return
	}
	s.mu.Lock()
	s.catching = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.catching = false
		s.last = time.Now()
		s.mu.Unlock()
	}()
	// Watch first, so that what changes during the rescan is seen.
	s.restartWatcher(ctx)
	update := s.ix.Update
	if s.ix.NeedsRebuild() {
		s.logf("the index is of an older layout: rebuilding it")
		update = s.ix.Rebuild
	}
	st, err := update(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.logf("catch up: %v", err)
		}
		return
	}
	s.logf("caught up: %d indexed, %d unchanged, %d removed in %v", st.Indexed, st.Unchanged, st.Removed, st.Elapsed.Round(time.Millisecond))
}

// restartWatcher (re)starts the watcher over the index's current roots.
func (s *server) restartWatcher(ctx context.Context) {
	s.mu.Lock()
	old := s.watcher
	s.watcher = nil
	s.mu.Unlock()
	if old != nil {
		old.Close()
	}
	if ctx.Err() != nil {
		return
	}
	roots, err := s.ix.Roots()
	if err != nil || len(roots) == 0 {
		return
	}
	w, err := s.ix.Watch(s.watchCtx, index.OnWatchEvent(s.onWatch))
	if err != nil {
		s.logf("watch: %v", err)
		return
	}
	s.mu.Lock()
	s.watcher = w
	s.mu.Unlock()
	s.broadcast(indexrpc.Event{Op: "ready", Paths: roots})
}

// onWatch records versions of the files the watcher re-indexed and tells
// the subscribers.
func (s *server) onWatch(ev index.WatchEvent) {
	e := indexrpc.Event{Op: ev.Op, Paths: ev.Paths, Indexed: ev.Stats.Indexed, Removed: ev.Stats.Removed}
	if ev.Err != nil {
		e.Err = ev.Err.Error()
		s.logf("watch: %v", ev.Err)
	}
	if ev.Op == "sync" {
		for _, p := range ev.Paths {
			if err := s.recordVersion(p); err != nil {
				s.logf("record a version of %s: %v", effects.Quote(p), err)
			}
		}
	}
	s.broadcast(e)
}

// recordVersion keeps a copy of a file changed outside nash, for nash
// history, within the budget.
func (s *server) recordVersion(path string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.budget <= 0 || s.recordErr != nil {
		return nil
	}
	if s.recorder == nil {
		opts := []sandbox.Option{sandbox.Dir("/")}
		if d := s.getenv("NASH_STATE_DIR"); d != "" {
			opts = append(opts, sandbox.StateDir(d))
		}
		sb, err := sandbox.New(s.watchCtx, opts...)
		if err != nil {
			s.recordErr = err
			return fmt.Errorf("open the state dir: %w (no versions will be recorded)", err)
		}
		s.recorder = sb
	}
	return s.recorder.RecordVersion(path, s.budget)
}

func (s *server) broadcast(e indexrpc.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ch := range s.subs {
		select {
		case ch <- e:
		default: // a subscriber that does not read loses events
		}
	}
}

func (s *server) onProgress(p index.Progress) {
	s.mu.Lock()
	f := s.progress
	s.mu.Unlock()
	if f != nil {
		f(p)
	}
}

// idle stops the server after d with no request in hand, or when its
// index is deleted or replaced under it (it would answer for a ghost).
func (s *server) idle(ctx context.Context, d time.Duration, ours os.FileInfo) {
	catalog := filepath.Join(s.dir, "catalog.db")
	tick := time.NewTicker(min(d/4+time.Millisecond, time.Second))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if now, err := os.Stat(catalog); err != nil || !os.SameFile(ours, now) {
			s.logf("the index was deleted or replaced")
			s.stop()
			return
		}
		s.mu.Lock()
		idle := s.active == 0 && !s.catching && time.Since(s.last) >= d
		s.mu.Unlock()
		if idle {
			s.logf("idle for %v", d)
			s.stop()
			return
		}
	}
}

// handle answers one request.
func (s *server) handle(ctx context.Context, req indexrpc.Request, send func(indexrpc.Response) error) indexrpc.Response {
	s.mu.Lock()
	s.active++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.active--
		s.last = time.Now()
		s.mu.Unlock()
	}()
	if req.Op != indexrpc.OpStop && req.Expect != s.identity {
		return failure(indexrpc.KindMismatch, fmt.Sprintf("this index server is %+v, not %+v", s.identity, req.Expect))
	}
	switch req.Op {
	case indexrpc.OpSearch:
		return s.search(ctx, req.Search)
	case indexrpc.OpStatus:
		return s.status()
	case indexrpc.OpAdd, indexrpc.OpRemove, indexrpc.OpRebuild:
		return s.write(ctx, req, send)
	case indexrpc.OpWatch:
		return s.watch(ctx, req, send)
	case indexrpc.OpStop:
		s.mu.Lock()
		busy := s.writing > 0
		s.mu.Unlock()
		if busy {
			return failure(indexrpc.KindBusy, indexrpc.ErrBusy.Error())
		}
		s.logf("asked to stop")
		s.stop()
		return indexrpc.Response{}
	}
	return failure(indexrpc.KindBadOp, fmt.Sprintf("unknown request %q", req.Op))
}

func failure(kind indexrpc.Kind, msg string) indexrpc.Response {
	return indexrpc.Response{Err: &indexrpc.Error{Kind: kind, Msg: msg}}
}

func failed(err error) indexrpc.Response { return failure(indexrpc.KindFailed, err.Error()) }

func (s *server) search(ctx context.Context, req *indexrpc.SearchRequest) indexrpc.Response {
	if req == nil {
		return failure(indexrpc.KindBadOp, "search without a query")
	}
	roots, err := s.ix.Roots()
	if err != nil {
		return failed(err)
	}
	if len(roots) == 0 {
		return failure(indexrpc.KindEmpty, indexrpc.ErrEmpty.Error())
	}
	so := index.SearchOptions{N: req.N, Dir: req.Dir, NoSnippets: !req.Snippets}
	switch req.Mode {
	case indexrpc.Keyword:
		so.Mode = index.Keyword
	case indexrpc.Semantic:
		so.Mode = index.Semantic
	case indexrpc.Hybrid:
		so.Mode = index.Hybrid
	}
	q := req.Query
	if req.Plain {
		q = index.PlainQuery(q)
	}
	res, err := s.ix.Search(ctx, q, so)
	if err != nil {
		var pe *index.ParseError
		if errors.As(err, &pe) {
			return indexrpc.Response{Err: &indexrpc.Error{Kind: indexrpc.KindQuery, Msg: pe.Msg, Pos: pe.Pos}}
		}
		return failed(err)
	}
	out := &indexrpc.SearchResult{Mode: indexrpc.Mode(res.Mode.String()), Notice: res.Notice, Hits: make([]indexrpc.Hit, len(res.Hits))}
	if res.Mode == index.Auto {
		out.Mode = indexrpc.Auto
	}
	for i, h := range res.Hits {
		out.Hits[i] = indexrpc.Hit{Path: h.Path, Score: h.Score, Snippet: h.Snippet, Line: h.Line, Title: h.Title}
	}
	s.mu.Lock()
	catching := s.catching
	s.mu.Unlock()
	if catching && out.Notice == "" {
		out.Notice = "the index server started moments ago and is still catching up with changes made while none ran"
	}
	return indexrpc.Response{Search: out}
}

func (s *server) status() indexrpc.Response {
	st, err := s.ix.Status()
	if err != nil {
		return failed(err)
	}
	out := &indexrpc.Status{Dir: st.Dir, Roots: st.Roots, Files: st.Files, Chunks: st.Chunks, Vectors: st.Vectors, Model: st.Model, SizeBytes: st.SizeBytes}
	for _, sk := range st.Skipped {
		out.Skipped = append(out.Skipped, indexrpc.Skipped{Path: sk.Path, Reason: sk.Reason})
	}
	s.mu.Lock()
	out.Catching = s.catching
	s.mu.Unlock()
	out.Server = indexrpc.Server{PID: os.Getpid(), Started: s.started, PeakRSS: peakRSS()}
	return indexrpc.Response{Status: out}
}

// write runs add, remove or rebuild, reporting progress, and restarts the
// watcher over the roots as they now are.
func (s *server) write(ctx context.Context, req indexrpc.Request, send func(indexrpc.Response) error) indexrpc.Response {
	s.mu.Lock()
	s.writing++
	last := time.Time{}
	s.progress = func(p index.Progress) {
		if p.Done || time.Since(last) < 200*time.Millisecond {
			return
		}
		last = time.Now()
		send(indexrpc.Response{Progress: &indexrpc.Progress{Seen: p.Seen, Indexed: p.Indexed, Skipped: p.Skipped, Path: p.Path}})
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.writing--
		s.progress = nil
		s.mu.Unlock()
	}()
	if req.Hidden {
		if err := s.ix.IncludeHidden(); err != nil {
			return failed(err)
		}
	}
	var st index.Stats
	var err error
	switch req.Op {
	case indexrpc.OpAdd:
		st, err = s.ix.Add(ctx, req.Paths...)
	case indexrpc.OpRemove:
		st, err = s.ix.Remove(ctx, req.Paths...)
	case indexrpc.OpRebuild:
		st, err = s.ix.Rebuild(ctx)
	}
	s.restartWatcher(s.watchCtx)
	if err != nil {
		return failed(err)
	}
	out := &indexrpc.Stats{Seen: st.Seen, Indexed: st.Indexed, Unchanged: st.Unchanged, Removed: st.Removed, Chunks: st.Chunks, Elapsed: st.Elapsed}
	for _, sk := range st.Skipped {
		out.Skipped = append(out.Skipped, indexrpc.Skipped{Path: sk.Path, Reason: sk.Reason})
	}
	if st.EmbedErr != nil {
		out.EmbedErr = st.EmbedErr.Error()
	}
	return indexrpc.Response{Stats: out}
}

// watch keeps the server up and streams the watcher's events until the
// client leaves or the server stops.
func (s *server) watch(ctx context.Context, req indexrpc.Request, send func(indexrpc.Response) error) indexrpc.Response {
	ch := make(chan indexrpc.Event, 64)
	s.mu.Lock()
	s.subs[ch] = true
	switch {
	case req.VersionsBudget > 0:
		s.budget = req.VersionsBudget
	case req.VersionsBudget < 0:
		s.budget = 0
	}
	w := s.watcher
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.subs, ch)
		s.mu.Unlock()
	}()
	if w != nil {
		roots, _ := s.ix.Roots()
		send(indexrpc.Response{Event: &indexrpc.Event{Op: "ready", Paths: roots}})
	}
	for {
		select {
		case <-ctx.Done():
			return indexrpc.Response{}
		case e := <-ch:
			if err := send(indexrpc.Response{Event: &e}); err != nil {
				return indexrpc.Response{}
			}
		}
	}
}
