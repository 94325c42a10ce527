package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/internal/indexrpc"
	"github.com/nash-shell/nash/internal/size"
	"github.com/nash-shell/nash/internal/xdg"
	"github.com/nash-shell/nash/planner"
)

// The index lives in a server of its own, nash-index: it links bleve, whose
// start-up costs milliseconds that no other nash command should pay, and
// staying up between commands it answers in a fraction of one, keeping the
// index in step with the disk as it goes. nash talks to it through
// package indexrpc, starting it when none answers (it leaves after ten
// minutes with nothing to do). nash finds nash-index next to itself, then
// on PATH; NASH_INDEX_BIN overrides both.
const indexBinName = "nash-index"

// indexOptions say which index and how nash reaches its server; every
// index command resolves them once.
type indexOptions struct {
	dir      string // --index-dir
	stateDir string // where the server logs, and records versions
	getenv   func(string) string
}

// indexOpts are the options of the index dir (the default when "") that
// nash's resolved options name.
func indexOpts(g *options, dir string) indexOptions {
	return indexOptions{dir: dir, stateDir: g.stateDir, getenv: g.getenv}
}

// indexLog is the server's log, in the state dir.
const indexLog = "index-server.log"

// indexClient returns the client of the index the options name.
func indexClient(opts indexOptions) (*indexrpc.Client, error) {
	getenv := opts.getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	dir, err := xdg.IndexDir(opts.dir, getenv)
	if err != nil {
		return nil, err
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, err
	}
	c := &indexrpc.Client{Dir: dir, Env: os.Environ()}
	if bin, err := findHelper(indexBinName, "NASH_INDEX_BIN", "the index"); err == nil {
		c.Server = bin
	}
	if opts.stateDir != "" {
		c.Env = append(c.Env, "NASH_STATE_DIR="+opts.stateDir)
		c.Log = filepath.Join(opts.stateDir, indexLog)
	}
	c.Identify(getenv)
	return c, nil
}

// indexError turns an error of the index server into nash's: a query that
// does not parse is a usage error; no server binary is said plainly.
func indexError(what string, err error) error {
	var re *indexrpc.Error
	switch {
	case errors.As(err, &re) && re.Kind == indexrpc.KindQuery:
		return usageError{fmt.Sprintf("%s: %v", what, err)}
	case errors.Is(err, indexrpc.ErrNoServer):
		_, ferr := findHelper(indexBinName, "NASH_INDEX_BIN", "the index")
		return ferr
	case errors.Is(err, indexrpc.ErrEmpty), errors.Is(err, context.Canceled):
		return err
	}
	return fmt.Errorf("%s: %w", what, err)
}

func newIndexCmd(g *options, io stdio) *cobra.Command {
	var opts indexOptions
	var verbose, hidden bool
	cmd := &cobra.Command{
		Use:   "index",
		Short: "keep the file index that nash find and the planner search (add, rm, status, rebuild, watch, stop)",
		Long: "index manages the keyword and semantic index of your files.\n" +
			"Hidden directories, files matched by .gitignore or .nashignore, binary files and files\n" +
			"over 32 MiB are left out. Semantic search needs an embedder: set\n" +
			"NASH_EMBEDDER=ollama:MODEL (server from NASH_EMBED_URL or OLLAMA_HOST) or\n" +
			"NASH_EMBEDDER=openai:MODEL (OPENAI_API_KEY, NASH_EMBED_URL for compatible servers).\n" +
			"The index lives in $XDG_DATA_HOME/nash/index unless --index-dir or NASH_INDEX_DIR says otherwise.\n\n" +
			"A server, nash-index, holds the index: nash starts it when needed and it keeps the index\n" +
			"in step with the disk while it runs, leaving after ten minutes with nothing to do\n" +
			"(NASH_INDEX_IDLE); its log is index-server.log in the state dir.",
	}
	cmd.Args = func(c *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usageError{fmt.Sprintf("unknown command %q for nash index (add, rm, status, rebuild, watch, stop)", args[0])}
		}
		return nil
	}
	cmd.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
	cmd.PersistentFlags().StringVar(&opts.dir, "index-dir", "", "where the index lives (default $XDG_DATA_HOME/nash/index)")
	cmd.PersistentFlags().BoolVarP(&verbose, "verbose", "v", false, "list skipped files with the reason")
	cmd.PersistentFlags().BoolVar(&hidden, "hidden", false, "also index hidden directories, from now on")
	// resolve fills what the flags do not say.
	resolve := func(*cobra.Command) (indexOptions, error) {
		return indexOpts(g, opts.dir), nil
	}
	add := &cobra.Command{
		Use:   "add [PATH...]",
		Short: "index the files under each PATH (default: index.roots of the config) and keep them indexed",
		Args:  cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			o, err := resolve(c)
			if err != nil {
				return err
			}
			if len(args) == 0 {
				args = g.indexRoots
			}
			return runIndexAdd(c.Context(), o, args, hidden, verbose, io)
		},
	}
	rm := &cobra.Command{
		Use:   "rm PATH...",
		Short: "drop indexed roots and their files from the index",
		Args:  minArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o, err := resolve(c)
			if err != nil {
				return err
			}
			return runIndexRm(c.Context(), o, args, io)
		},
	}
	status := &cobra.Command{
		Use:   "status",
		Short: "show the indexed roots, counts and size",
		Args:  noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			o, err := resolve(c)
			if err != nil {
				return err
			}
			return runIndexStatus(c.Context(), o, verbose, io)
		},
	}
	rebuild := &cobra.Command{
		Use:   "rebuild",
		Short: "throw the index away and index every root again",
		Args:  noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			o, err := resolve(c)
			if err != nil {
				return err
			}
			return runIndexRebuild(c.Context(), o, hidden, verbose, io)
		},
	}
	var versionsBudget string
	watch := &cobra.Command{
		Use:   "watch",
		Short: "keep the index in step with changes under the roots, showing what changes, until interrupted",
		Long: `Keep the index server up, and show what it re-indexes, until interrupted.
The server also records each new version of an indexed file changed outside
nash, for nash history and nash rollback, keeping at most --versions-budget
bytes of copies (NASH_VERSIONS_BUDGET, default 256M; 0 records nothing).`,
		Args: noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			o, err := resolve(c)
			if err != nil {
				return err
			}
			var budget int64
			if versionsBudget != "" {
				n, err := size.Parse(versionsBudget)
				if err != nil {
					return usageError{"--versions-budget: " + err.Error()}
				}
				budget = n
				if n == 0 {
					budget = -1
				}
			}
			return runIndexWatch(c.Context(), o, budget, io)
		},
	}
	watch.Flags().StringVar(&versionsBudget, "versions-budget", "", "bytes of recorded versions to keep (e.g. 256M)")
	stop := &cobra.Command{
		Use:   "stop",
		Short: "stop the index server (nash starts it again when needed)",
		Args:  noArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			o, err := resolve(c)
			if err != nil {
				return err
			}
			cl, err := indexClient(o)
			if err != nil {
				return err
			}
			if err := cl.Stop(c.Context()); err != nil {
				return indexError("index stop", err)
			}
			return nil
		},
	}
	cmd.AddCommand(add, rm, status, rebuild, watch, stop)
	return cmd
}

// progressPrinter reports long indexing runs on w: nothing for the first
// second, then a line at most every two seconds.
func progressPrinter(w io.Writer) func(indexrpc.Progress) {
	start := time.Now()
	var last time.Time
	return func(p indexrpc.Progress) {
		now := time.Now()
		if now.Sub(start) < time.Second || now.Sub(last) < 2*time.Second {
			return
		}
		last = now
		fmt.Fprintf(w, "indexing: %d files found, %d indexed, %d skipped\n", p.Seen, p.Indexed, p.Skipped)
	}
}

func printStats(io stdio, st *indexrpc.Stats, verbose bool) {
	chunks := ""
	if st.Chunks > 0 {
		chunks = fmt.Sprintf(" (%d passages embedded)", st.Chunks)
	}
	fmt.Fprintf(io.out, "indexed %d files%s, %d unchanged, %d skipped, %d removed in %s\n",
		st.Indexed, chunks, st.Unchanged, len(st.Skipped), st.Removed, st.Elapsed.Round(time.Millisecond))
	if verbose {
		for _, s := range st.Skipped {
			fmt.Fprintf(io.out, "skipped %s: %s\n", effects.Quote(s.Path), s.Reason)
		}
	}
	if st.EmbedErr != "" {
		fmt.Fprintf(io.err, "nash: warning: semantic index incomplete, files will be embedded on the next run: %s\n", st.EmbedErr)
	}
}

func runIndexAdd(ctx context.Context, opts indexOptions, paths []string, hidden, verbose bool, io stdio) error {
	if len(paths) == 0 {
		return usageError{"index add: give PATH..., or list index.roots in the config file (or NASH_INDEX_ROOTS)"}
	}
	abs, err := absPaths(paths)
	if err != nil {
		return fmt.Errorf("index add: %w", err)
	}
	c, err := indexClient(opts)
	if err != nil {
		return err
	}
	st, err := c.Add(ctx, abs, hidden, progressPrinter(io.err))
	if err != nil {
		return indexError("index add", err)
	}
	printStats(io, st, verbose)
	return nil
}

func runIndexRm(ctx context.Context, opts indexOptions, paths []string, io stdio) error {
	abs, err := absPaths(paths)
	if err != nil {
		return fmt.Errorf("index rm: %w", err)
	}
	c, err := indexClient(opts)
	if err != nil {
		return err
	}
	st, err := c.Remove(ctx, abs)
	if err != nil {
		return indexError("index rm", err)
	}
	fmt.Fprintf(io.out, "removed %d files from the index\n", st.Removed)
	return nil
}

func runIndexRebuild(ctx context.Context, opts indexOptions, hidden, verbose bool, io stdio) error {
	c, err := indexClient(opts)
	if err != nil {
		return err
	}
	st, err := c.Rebuild(ctx, hidden, progressPrinter(io.err))
	if err != nil {
		return indexError("index rebuild", err)
	}
	printStats(io, st, verbose)
	return nil
}

func runIndexStatus(ctx context.Context, opts indexOptions, verbose bool, io stdio) error {
	c, err := indexClient(opts)
	if err != nil {
		return err
	}
	st, err := c.Status(ctx)
	if errors.Is(err, indexrpc.ErrEmpty) {
		st, err = &indexrpc.Status{Dir: c.Dir}, nil
	}
	if err != nil {
		return indexError("index status", err)
	}
	fmt.Fprintf(io.out, "index: %s\n", effects.Quote(st.Dir))
	if len(st.Roots) == 0 {
		fmt.Fprintln(io.out, "roots: none (nash index add PATH)")
	} else {
		fmt.Fprintln(io.out, "roots:")
		for _, r := range st.Roots {
			fmt.Fprintf(io.out, "  %s\n", effects.Quote(r))
		}
	}
	fmt.Fprintf(io.out, "files: %d, %d skipped\n", st.Files, len(st.Skipped))
	if st.Model != "" {
		fmt.Fprintf(io.out, "semantic: %d passages embedded (%s)\n", st.Vectors, st.Model)
	} else {
		fmt.Fprintln(io.out, "semantic: off (set NASH_EMBEDDER=ollama:MODEL)")
	}
	fmt.Fprintf(io.out, "size: %.1f MB\n", float64(st.SizeBytes)/1e6)
	if st.Server.PID > 0 {
		fmt.Fprintf(io.out, "server: pid %d, up %s, peak memory %.0f MB\n", st.Server.PID,
			time.Since(st.Server.Started).Round(time.Second), float64(st.Server.PeakRSS)/1e6)
	}
	if st.Catching {
		fmt.Fprintln(io.out, "the server is catching up with changes made while none ran")
	}
	if verbose {
		for _, s := range st.Skipped {
			fmt.Fprintf(io.out, "skipped %s: %s\n", effects.Quote(s.Path), s.Reason)
		}
	}
	return nil
}

// printEvent writes a line for an event of the server's watcher, if it
// is worth one.
func printEvent(out, errw io.Writer, e indexrpc.Event) {
	switch {
	case e.Err != "":
		fmt.Fprintf(errw, "nash: watch: %s\n", e.Err)
	case e.Op == "ready":
		fmt.Fprintln(out, "watching; interrupt to stop")
	case e.Op == "rescan":
		fmt.Fprintf(out, "rescanned after lost events: %d indexed, %d removed\n", e.Indexed, e.Removed)
	case e.Indexed+e.Removed > 0:
		fmt.Fprintf(out, "updated: %d indexed, %d removed\n", e.Indexed, e.Removed)
	}
}

func runIndexWatch(ctx context.Context, opts indexOptions, budget int64, io stdio) error {
	c, err := indexClient(opts)
	if err != nil {
		return err
	}
	err = c.Watch(ctx, budget, func(e indexrpc.Event) { printEvent(io.out, io.err, e) })
	return indexError("index watch", err)
}

// findOptions are the flags of nash find.
type findOptions struct {
	index    indexOptions
	keyword  bool
	semantic bool
	hybrid   bool
	n        int
	dir      string
	json     bool
	snippets bool
	plain    bool
}

func newFindCmd(g *options, io stdio) *cobra.Command {
	var opts findOptions
	cmd := &cobra.Command{
		Use:   "find [-k|-s|--hybrid] [-n N] [--dir D] [--json] QUERY",
		Short: "find files by keyword or by meaning in the index",
		Long: "find ranks the indexed files for QUERY and prints the best N.\n" +
			"Keyword ranking scores each whole file (BM25F over its name, title, headings and text)\n" +
			"together with its best passage. With an embedder configured (NASH_EMBEDDER) it is fused\n" +
			"with the ranking by meaning; -s without one ranks by keyword and says so on standard error.\n\n" +
			"QUERY words are scored, any may match; \"quoted phrases\", AND, OR, NOT, -word,\n" +
			"parentheses and filters work: dir:D ext:md,pdf after:2025-01-01 before:7d size:>1M\n" +
			"name:W title:W.\n\n" +
			"On a terminal each hit shows its score and snippet; in a pipe only the paths are printed,\n" +
			"one per line (so nash find -s \"tax receipts\" -n 3 | xargs ... works), unless --snippets.\n" +
			"--json prints path, score and snippet per hit. The exit status is 1 when nothing is found.",
		Args: minArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			opts.index = indexOpts(g, opts.index.dir)
			return runFind(c.Context(), opts, strings.Join(args, " "), io)
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&opts.keyword, "keyword", "k", false, "rank by keyword only")
	f.BoolVarP(&opts.semantic, "semantic", "s", false, "rank by meaning (embeddings) only")
	f.BoolVar(&opts.hybrid, "hybrid", false, "fuse keyword and semantic rankings")
	f.IntVarP(&opts.n, "n", "n", 10, "how many files to print")
	f.StringVar(&opts.dir, "dir", "", "only files under `DIR`")
	f.BoolVar(&opts.json, "json", false, "print hits as JSON")
	f.BoolVar(&opts.snippets, "snippets", false, "print scores and snippets even in a pipe")
	f.BoolVar(&opts.plain, "plain", false, "take QUERY as plain words: no phrases, operators or filters")
	f.StringVar(&opts.index.dir, "index-dir", "", "where the index lives (default $XDG_DATA_HOME/nash/index)")
	return cmd
}

func runFind(ctx context.Context, opts findOptions, query string, io stdio) error {
	req := indexrpc.SearchRequest{N: opts.n, Plain: opts.plain}
	modes := 0
	for _, m := range []struct {
		set  bool
		mode indexrpc.Mode
	}{{opts.keyword, indexrpc.Keyword}, {opts.semantic, indexrpc.Semantic}, {opts.hybrid, indexrpc.Hybrid}} {
		if m.set {
			modes++
			req.Mode = m.mode
		}
	}
	switch {
	case modes > 1:
		return usageError{"find: -k, -s and --hybrid exclude each other"}
	case opts.n <= 0:
		return usageError{"find: -n must be positive"}
	case strings.TrimSpace(query) == "":
		return usageError{"find: empty query"}
	}
	req.Query = query
	if opts.dir != "" {
		abs, err := filepath.Abs(opts.dir)
		if err != nil {
			return fmt.Errorf("find: %w", err)
		}
		req.Dir = abs
	}
	pretty := !opts.json && (opts.snippets || isTerminal(io.out))
	req.Snippets = opts.json || pretty
	c, err := indexClient(opts.index)
	if err != nil {
		return err
	}
	res, err := c.Search(ctx, req)
	if err != nil {
		return indexError("find", err)
	}
	if res.Notice != "" {
		fmt.Fprintf(io.err, "nash: note: %s\n", res.Notice)
	}
	switch {
	case opts.json:
		hits := res.Hits
		if hits == nil {
			hits = []indexrpc.Hit{}
		}
		if err := effects.WriteJSON(io.out, hits, true); err != nil {
			return fmt.Errorf("find: %w", err)
		}
	case pretty:
		for _, h := range res.Hits {
			fmt.Fprintf(io.out, "%s:%d  %.3f\n", effects.Quote(h.Path), h.Line, h.Score)
			if h.Snippet != "" {
				fmt.Fprintf(io.out, "    %s\n", quoteIndexSnippet(h.Snippet))
			}
		}
	default:
		for _, h := range res.Hits {
			fmt.Fprintln(io.out, effects.Quote(h.Path))
		}
	}
	if len(res.Hits) == 0 {
		return exitError{exitFailure}
	}
	return nil
}

// quoteIndexSnippet replaces control characters in a snippet with spaces
// so a hostile file cannot drive the terminal.
func quoteIndexSnippet(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, s)
}

// indexQuery is a search nash makes for its own commands (group).
type indexQuery struct {
	query string
	mode  string // "", "keyword", "semantic" or "hybrid"
	n     int
	dir   string // only files under dir
	plain bool   // query is plain words, not query syntax
	// indexDir is the index to search; "" is the default.
	indexDir string
}

// indexHit is one file a search found.
type indexHit struct {
	Path    string
	Score   float64
	Snippet string
	Line    int
}

// errIndexSearch says a search failed and was reported on stderr.
type errIndexSearch struct{ code int }

func (e errIndexSearch) Error() string {
	return fmt.Sprintf("nash find failed (exit status %d)", e.code)
}

// searchIndex searches for q. Its notes and errors go to errw; an error is
// then errIndexSearch. No match is an empty list, not an error.
func searchIndex(ctx context.Context, g *options, q indexQuery, errw io.Writer) ([]indexHit, error) {
	c, err := indexClient(indexOpts(g, q.indexDir))
	if err != nil {
		return nil, err
	}
	res, err := c.Search(ctx, indexrpc.SearchRequest{Query: q.query, Mode: indexrpc.Mode(q.mode), N: q.n, Dir: q.dir, Plain: q.plain, Snippets: true})
	if err != nil {
		err = indexError("find", err)
		fmt.Fprintf(errw, "nash: %v\n", err)
		var ue usageError
		if errors.As(err, &ue) {
			return nil, errIndexSearch{exitUsage}
		}
		return nil, errIndexSearch{exitFailure}
	}
	if res.Notice != "" {
		fmt.Fprintf(errw, "nash: note: %s\n", res.Notice)
	}
	hits := make([]indexHit, len(res.Hits))
	for i, h := range res.Hits {
		hits[i] = indexHit{Path: h.Path, Score: h.Score, Snippet: h.Snippet, Line: h.Line}
	}
	return hits, nil
}

// indexRetriever lets the planner find files by what they contain, asking
// the index server (started if needed). Without an index it finds nothing.
type indexRetriever struct{ g *options }

var _ planner.Retriever = indexRetriever{}

// Retrieve returns the k files that best match a request.
func (r indexRetriever) Retrieve(ctx context.Context, query string, k int) ([]planner.Document, error) {
	c, err := indexClient(indexOpts(r.g, ""))
	if err != nil {
		return nil, err
	}
	if !c.Exists() {
		return nil, nil
	}
	res, err := c.Search(ctx, indexrpc.SearchRequest{Query: query, Mode: indexrpc.Hybrid, N: k, Plain: true, Snippets: true})
	if errors.Is(err, indexrpc.ErrEmpty) {
		return nil, nil
	}
	if err != nil {
		return nil, indexError("retrieve files", err)
	}
	docs := make([]planner.Document, len(res.Hits))
	for i, h := range res.Hits {
		docs[i] = planner.Document{Path: h.Path, Snippet: h.Snippet, Score: h.Score}
	}
	return docs, nil
}

// indexExists reports whether the default index exists.
func indexExists(g *options) bool {
	c, err := indexClient(indexOpts(g, ""))
	return err == nil && c.Exists()
}

// watchLog is the file in the state dir where the shell's index watch
// writes what the server re-indexes.
const watchLog = "index-watch.log"

// startIndexWatch keeps the index server up for as long as the interactive
// shell lives, so that files changed under the roots are searchable within
// a second (by :find, nash find and the planner) while nash is open. It
// does nothing when no index exists: the shell creates none uninvited. The
// returned func stops it.
func startIndexWatch(ctx context.Context, g *options) (stop func(), err error) {
	if !indexExists(g) {
		return func() {}, nil
	}
	c, err := indexClient(indexOpts(g, ""))
	if err != nil {
		return nil, err
	}
	stateDir := g.stateDir
	if err := os.MkdirAll(stateDir, 0o700); err != nil {
		return nil, fmt.Errorf("index watcher: %w", err)
	}
	logf, err := os.OpenFile(filepath.Join(stateDir, watchLog), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("index watcher: %w", err)
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer logf.Close()
		// A server that stops (replaced, killed) is started again.
		for ctx.Err() == nil {
			err := c.Watch(ctx, 0, func(e indexrpc.Event) { printEvent(logf, logf, e) })
			if ctx.Err() != nil {
				return
			}
			fmt.Fprintf(logf, "nash: watch: %v\n", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
		}
	}()
	return func() {
		cancel()
		wg.Wait()
	}, nil
}
