package indexcli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/tmc/langchaingo/embeddings"
	"github.com/tmc/langchaingo/llms/ollama"
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/index"
	"github.com/nash-shell/nash/internal/size"
	"github.com/nash-shell/nash/internal/xdg"
	"github.com/nash-shell/nash/sandbox"
)

// indexOptions are the flags shared by nash index and nash find.
type indexOptions struct {
	dir     string // --index-dir
	verbose bool
	hidden  bool
}

func newIndexCmd(io stdio) *cobra.Command {
	var opts indexOptions
	cmd := &cobra.Command{
		Use:   "index",
		Short: "keep the file index that nash find and the planner search",
		Long: "index manages the keyword and semantic index of your files.\n" +
			"Hidden directories, files matched by .gitignore or .nashignore, binary files and files\n" +
			"over 32 MiB are left out. Semantic search needs an embedder: set\n" +
			"NASH_EMBEDDER=ollama:MODEL (server from NASH_EMBED_URL or OLLAMA_HOST) or\n" +
			"NASH_EMBEDDER=openai:MODEL (OPENAI_API_KEY, NASH_EMBED_URL for compatible servers).\n" +
			"The index lives in $XDG_DATA_HOME/nash/index unless --index-dir or NASH_INDEX_DIR says otherwise.",
	}
	cmd.Args = func(c *cobra.Command, args []string) error {
		if len(args) > 0 {
			return usageError{fmt.Sprintf("unknown command %q for nash index (add, rm, status, rebuild, watch)", args[0])}
		}
		return nil
	}
	cmd.RunE = func(c *cobra.Command, _ []string) error { return c.Help() }
	cmd.PersistentFlags().StringVar(&opts.dir, "index-dir", "", "where the index lives (default $XDG_DATA_HOME/nash/index)")
	cmd.PersistentFlags().BoolVarP(&opts.verbose, "verbose", "v", false, "list skipped files with the reason")
	cmd.PersistentFlags().BoolVar(&opts.hidden, "hidden", false, "also index hidden directories")

	add := &cobra.Command{
		Use:   "add [PATH...]",
		Short: "index the files under each PATH (default: index.roots of the config) and keep them indexed",
		Args:  cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, args []string) error {
			return runIndexAdd(c.Context(), opts, args, io)
		},
	}
	rm := &cobra.Command{
		Use:   "rm PATH...",
		Short: "drop indexed roots and their files from the index",
		Args:  indexMinArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return runIndexRm(c.Context(), opts, args, io)
		},
	}
	status := &cobra.Command{
		Use:   "status",
		Short: "show the indexed roots, counts and size",
		Args:  indexMinArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			return runIndexStatus(c.Context(), opts, io)
		},
	}
	rebuild := &cobra.Command{
		Use:   "rebuild",
		Short: "throw the index away and index every root again",
		Args:  indexMinArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			return runIndexRebuild(c.Context(), opts, io)
		},
	}
	var versionsBudget string
	watch := &cobra.Command{
		Use:   "watch",
		Short: "keep the index in step with changes under the roots until interrupted",
		Long: `Keep the index in step with changes under the roots until interrupted.
It also records each new version of an indexed file changed outside nash,
for nash history and nash rollback, keeping at most --versions-budget bytes
of copies (NASH_VERSIONS_BUDGET; 0 records nothing).`,
		Args: indexMinArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			if versionsBudget == "" {
				versionsBudget = os.Getenv("NASH_VERSIONS_BUDGET")
			}
			if versionsBudget == "" {
				versionsBudget = "256M"
			}
			budget, err := size.Parse(versionsBudget)
			if err != nil {
				return usageError{"--versions-budget: " + err.Error()}
			}
			var rec versionRecorder
			if budget > 0 {
				var opts []sandbox.Option
				if d := os.Getenv("NASH_STATE_DIR"); d != "" {
					opts = append(opts, sandbox.StateDir(d))
				}
				sb, err := sandbox.New(c.Context(), opts...)
				if err != nil {
					return err
				}
				defer sb.Close()
				rec = func(p string) error { return sb.RecordVersion(p, budget) }
			}
			return runIndexWatch(c.Context(), opts, io, rec)
		},
	}
	watch.Flags().StringVar(&versionsBudget, "versions-budget", "", "bytes of recorded versions to keep (e.g. 256M)")
	cmd.AddCommand(add, rm, status, rebuild, watch)
	return cmd
}

// indexMinArgs accepts at least n arguments, or exactly none when n is 0;
// anything else is a usage error.
func indexMinArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch {
		case n == 0 && len(args) > 0:
			return usageError{fmt.Sprintf("%s takes no arguments", cmd.CommandPath())}
		case len(args) < n:
			return usageError{fmt.Sprintf("%s needs at least %d argument(s): %s", cmd.CommandPath(), n, cmd.Use)}
		}
		return nil
	}
}

// embedderFromEnv builds the embedder NASH_EMBEDDER names, or returns nil
// when it is unset.
func embedderFromEnv(getenv func(string) string) (index.Embedder, string, error) {
	spec := getenv("NASH_EMBEDDER")
	if spec == "" || spec == "none" {
		return nil, "", nil
	}
	provider, model, ok := strings.Cut(spec, ":")
	if !ok || model == "" {
		return nil, "", fmt.Errorf("NASH_EMBEDDER=%q: want PROVIDER:MODEL, e.g. ollama:nomic-embed-text", spec)
	}
	url := getenv("NASH_EMBED_URL")
	var client embeddings.EmbedderClient
	switch provider {
	case "ollama":
		if url == "" {
			url = getenv("OLLAMA_HOST")
		}
		if url != "" && !strings.Contains(url, "://") {
			url = "http://" + url
		}
		opts := []ollama.Option{ollama.WithModel(model)}
		if url != "" {
			opts = append(opts, ollama.WithServerURL(url))
		}
		llm, err := ollama.New(opts...)
		if err != nil {
			return nil, "", fmt.Errorf("embedder %s: %w", spec, err)
		}
		client = llm
	case "openai":
		opts := []openai.Option{openai.WithEmbeddingModel(model)}
		if url != "" {
			opts = append(opts, openai.WithBaseURL(url))
		}
		if key := getenv("OPENAI_API_KEY"); key != "" {
			opts = append(opts, openai.WithToken(key))
		} else if url != "" {
			opts = append(opts, openai.WithToken("none")) // local servers take any key
		}
		llm, err := openai.New(opts...)
		if err != nil {
			return nil, "", fmt.Errorf("embedder %s: %w", spec, err)
		}
		client = llm
	default:
		return nil, "", fmt.Errorf("NASH_EMBEDDER=%q: unknown provider %q (ollama, openai)", spec, provider)
	}
	e, err := embeddings.NewEmbedder(client)
	if err != nil {
		return nil, "", fmt.Errorf("embedder %s: %w", spec, err)
	}
	return e, spec, nil
}

// openIndex opens the index the options and environment name.
func openIndex(ctx context.Context, opts indexOptions, extra ...index.Option) (*index.Index, error) {
	dir, err := xdg.IndexDir(opts.dir, os.Getenv)
	if err != nil {
		return nil, err
	}
	e, model, err := embedderFromEnv(os.Getenv)
	if err != nil {
		return nil, err
	}
	ixOpts := []index.Option{index.IncludeHidden(opts.hidden)}
	if e != nil {
		ixOpts = append(ixOpts, index.Embeddings(e, model))
	}
	ix, err := index.Open(ctx, dir, append(ixOpts, extra...)...)
	if errors.Is(err, index.ErrLocked) {
		return nil, fmt.Errorf("%w (is nash index watch running?)", err)
	}
	return ix, err
}

// progressPrinter reports long indexing runs on w: nothing for the first
// second, then a line at most every two seconds.
func progressPrinter(w io.Writer) index.Option {
	start := time.Now()
	var last time.Time
	return index.OnProgress(func(p index.Progress) {
		now := time.Now()
		if p.Done || now.Sub(start) < time.Second || now.Sub(last) < 2*time.Second {
			return
		}
		last = now
		fmt.Fprintf(w, "indexing: %d files found, %d indexed, %d skipped\n", p.Seen, p.Indexed, p.Skipped)
	})
}

func printStats(io stdio, st index.Stats, verbose bool) {
	fmt.Fprintf(io.out, "indexed %d files (%d chunks), %d unchanged, %d skipped, %d removed in %s\n",
		st.Indexed, st.Chunks, st.Unchanged, len(st.Skipped), st.Removed, st.Elapsed.Round(time.Millisecond))
	if verbose {
		for _, s := range st.Skipped {
			fmt.Fprintf(io.out, "skipped %s: %s\n", quoteIndexPath(s.Path), s.Reason)
		}
	}
	if st.EmbedErr != nil {
		fmt.Fprintf(io.err, "nash: warning: semantic index incomplete, files will be embedded on the next run: %v\n", st.EmbedErr)
	}
}

// quoteIndexPath escapes control characters in a path for display.
func quoteIndexPath(p string) string {
	if strings.IndexFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }) < 0 {
		return p
	}
	q := fmt.Sprintf("%q", p)
	return q
}

func runIndexAdd(ctx context.Context, opts indexOptions, paths []string, io stdio) error {
	if len(paths) == 0 {
		paths = indexRoots()
		if len(paths) == 0 {
			return usageError{"index add: give PATH..., or list index.roots in the config file (or NASH_INDEX_ROOTS)"}
		}
	}
	ix, err := openIndex(ctx, opts, progressPrinter(io.err))
	if err != nil {
		return err
	}
	defer ix.Close()
	st, err := ix.Add(ctx, paths...)
	if err != nil {
		return fmt.Errorf("index add: %w", err)
	}
	printStats(io, st, opts.verbose)
	return ix.Close()
}

func runIndexRm(ctx context.Context, opts indexOptions, paths []string, io stdio) error {
	ix, err := openIndex(ctx, opts)
	if err != nil {
		return err
	}
	defer ix.Close()
	st, err := ix.Remove(ctx, paths...)
	if err != nil {
		return fmt.Errorf("index rm: %w", err)
	}
	fmt.Fprintf(io.out, "removed %d files from the index\n", st.Removed)
	return ix.Close()
}

func runIndexRebuild(ctx context.Context, opts indexOptions, io stdio) error {
	ix, err := openIndex(ctx, opts, progressPrinter(io.err))
	if err != nil {
		return err
	}
	defer ix.Close()
	st, err := ix.Rebuild(ctx)
	if err != nil {
		return fmt.Errorf("index rebuild: %w", err)
	}
	printStats(io, st, opts.verbose)
	return ix.Close()
}

func runIndexStatus(ctx context.Context, opts indexOptions, io stdio) error {
	ix, err := openIndex(ctx, opts)
	if err != nil {
		return err
	}
	defer ix.Close()
	st, err := ix.Status()
	if err != nil {
		return err
	}
	fmt.Fprintf(io.out, "index: %s\n", st.Dir)
	if len(st.Roots) == 0 {
		fmt.Fprintln(io.out, "roots: none (nash index add PATH)")
	} else {
		fmt.Fprintln(io.out, "roots:")
		for _, r := range st.Roots {
			fmt.Fprintf(io.out, "  %s\n", quoteIndexPath(r))
		}
	}
	fmt.Fprintf(io.out, "files: %d (%d chunks), %d skipped\n", st.Files, st.Chunks, len(st.Skipped))
	if st.Model != "" {
		fmt.Fprintf(io.out, "semantic: %d vectors (%s)\n", st.Vectors, st.Model)
	} else {
		fmt.Fprintln(io.out, "semantic: off (set NASH_EMBEDDER=ollama:MODEL)")
	}
	fmt.Fprintf(io.out, "size: %.1f MB\n", float64(st.SizeBytes)/1e6)
	if opts.verbose {
		for _, s := range st.Skipped {
			fmt.Fprintf(io.out, "skipped %s: %s\n", quoteIndexPath(s.Path), s.Reason)
		}
	}
	return ix.Close()
}

// versionRecorder keeps a copy of a file's new content (see nash history).
type versionRecorder func(path string) error

func runIndexWatch(ctx context.Context, opts indexOptions, io stdio, record versionRecorder) error {
	ix, err := openIndex(ctx, opts)
	if err != nil {
		return err
	}
	defer ix.Close()
	// Catch up with what changed while nobody watched.
	st, err := ix.Update(ctx)
	if err != nil {
		return fmt.Errorf("index watch: %w", err)
	}
	printStats(io, st, opts.verbose)
	w, err := ix.Watch(ctx, index.OnWatchEvent(func(ev index.WatchEvent) {
		if record != nil && ev.Op == "sync" {
			for _, p := range ev.Paths {
				if err := record(p); err != nil {
					fmt.Fprintf(io.err, "nash: record a version of %s: %v\n", effects.Quote(p), err)
				}
			}
		}
		switch {
		case ev.Err != nil:
			fmt.Fprintf(io.err, "nash: watch: %v\n", ev.Err)
		case ev.Op == "rescan":
			fmt.Fprintf(io.out, "rescanned after lost events: %d indexed, %d removed\n", ev.Stats.Indexed, ev.Stats.Removed)
		case ev.Stats.Indexed+ev.Stats.Removed > 0:
			fmt.Fprintf(io.out, "updated: %d indexed, %d removed\n", ev.Stats.Indexed, ev.Stats.Removed)
		}
	}))
	if err != nil {
		return fmt.Errorf("index watch: %w", err)
	}
	dir, err := xdg.IndexDir(opts.dir, os.Getenv)
	if err != nil {
		return err
	}
	// nash find cannot open the index while we hold it; it asks us instead.
	if stop, err := serveQueries(ix, dir, io); err != nil {
		fmt.Fprintf(io.err, "nash: warning: nash find will not work while this watch runs: %v\n", err)
	} else {
		defer stop()
	}
	fmt.Fprintln(io.out, "watching; interrupt to stop")
	<-ctx.Done()
	w.Close()
	return ctx.Err()
}

// querySocket is the Unix socket in the index directory where nash index
// watch, which holds the index, answers nash find.
const querySocket = "query.sock"

// remoteQuery and remoteAnswer are the messages on the query socket: one
// JSON request and one JSON answer per connection.
type remoteQuery struct {
	Query   string
	Options index.SearchOptions
}

type remoteAnswer struct {
	Result     *index.Result
	Err        string
	ParseError *index.ParseError `json:",omitempty"` // set when the query did not parse
}

// serveQueries answers searches on the query socket until stop is called.
func serveQueries(ix *index.Index, dir string, io stdio) (stop func(), err error) {
	path := filepath.Join(dir, querySocket)
	os.Remove(path) // a socket left by a crash; we hold the index lock
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("listen for queries: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			conn, err := ln.Accept()
			if err != nil {
				if ctx.Err() == nil {
					fmt.Fprintf(io.err, "nash: watch: query socket: %v\n", err)
				}
				return
			}
			go answerQuery(ctx, ix, conn)
		}
	}()
	return func() {
		cancel()
		ln.Close()
		<-done
		os.Remove(path)
	}, nil
}

func answerQuery(ctx context.Context, ix *index.Index, conn net.Conn) {
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	var q remoteQuery
	if err := json.NewDecoder(conn).Decode(&q); err != nil {
		return
	}
	var a remoteAnswer
	res, err := ix.Search(ctx, q.Query, q.Options)
	if err != nil {
		a.Err = err.Error()
		errors.As(err, &a.ParseError)
	}
	a.Result = res
	json.NewEncoder(conn).Encode(a)
}

// errNoWatcher says no nash index watch answers on the query socket.
var errNoWatcher = errors.New("no nash index watch answers")

// remoteSearch asks the nash index watch that holds the index to search.
func remoteSearch(ctx context.Context, dir, query string, so index.SearchOptions) (*index.Result, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", filepath.Join(dir, querySocket))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNoWatcher, err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	if err := json.NewEncoder(conn).Encode(remoteQuery{Query: query, Options: so}); err != nil {
		return nil, fmt.Errorf("ask nash index watch: %w", err)
	}
	var a remoteAnswer
	if err := json.NewDecoder(conn).Decode(&a); err != nil {
		return nil, fmt.Errorf("answer from nash index watch: %w", err)
	}
	if a.ParseError != nil {
		return nil, a.ParseError
	}
	if a.Err != "" {
		return nil, errors.New(a.Err)
	}
	if a.Result == nil {
		return nil, errors.New("empty answer from nash index watch")
	}
	return a.Result, nil
}
