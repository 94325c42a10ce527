package indexcli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/index"
	"github.com/nash-shell/nash/internal/xdg"
)

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

func newFindCmd(io stdio) *cobra.Command {
	var opts findOptions
	cmd := &cobra.Command{
		Use:   "find [-k|-s|--hybrid] [-n N] [--dir D] [--json] QUERY",
		Short: "find files by keyword or by meaning in the index",
		Long: "find ranks the indexed files for QUERY and prints the best N.\n" +
			"By default it fuses keyword and semantic rankings when an embedder is configured\n" +
			"(NASH_EMBEDDER), and ranks by keyword otherwise. -s without an embedder falls back to\n" +
			"keyword search with query expansion and says so on standard error.\n\n" +
			"QUERY words are scored, any may match; \"quoted phrases\", AND, OR, NOT, -word,\n" +
			"parentheses and filters work: dir:D ext:md,pdf after:2025-01-01 before:7d size:>1M\n" +
			"name:W title:W.\n\n" +
			"On a terminal each hit shows its score and snippet; in a pipe only the paths are printed,\n" +
			"one per line (so nash find -s \"tax receipts\" -n 3 | xargs ... works), unless --snippets.\n" +
			"--json prints path, score and snippet per hit. The exit status is 1 when nothing is found.",
		Args: indexMinArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return runFind(c.Context(), opts, strings.Join(args, " "), io)
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&opts.keyword, "keyword", "k", false, "rank by keyword (BM25) only")
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

// findHit is one line of nash find --json.
type findHit struct {
	Path    string  `json:"path"`
	Score   float64 `json:"score"`
	Snippet string  `json:"snippet"`
	Line    int     `json:"line"`
}

func runFind(ctx context.Context, opts findOptions, query string, io stdio) error {
	so := index.SearchOptions{N: opts.n}
	modes := 0
	for _, m := range []struct {
		set  bool
		mode index.Mode
	}{{opts.keyword, index.Keyword}, {opts.semantic, index.Semantic}, {opts.hybrid, index.Hybrid}} {
		if m.set {
			modes++
			so.Mode = m.mode
		}
	}
	if modes > 1 {
		return usageError{"find: -k, -s and --hybrid exclude each other"}
	}
	if opts.n <= 0 {
		return usageError{"find: -n must be positive"}
	}
	if strings.TrimSpace(query) == "" {
		return usageError{"find: empty query"}
	}
	if opts.dir != "" {
		abs, err := filepath.Abs(opts.dir)
		if err != nil {
			return fmt.Errorf("find: %w", err)
		}
		so.Dir = abs
	}
	so.NoSnippets = !opts.json && !opts.snippets && !isTerminal(io.out)
	if opts.plain {
		query = index.PlainQuery(query)
	}
	res, err := findIn(ctx, opts.index, query, so)
	if err != nil {
		var pe *index.ParseError
		if errors.As(err, &pe) {
			return usageError{fmt.Sprintf("find: %v", err)}
		}
		return err
	}
	if res.Notice != "" {
		fmt.Fprintf(io.err, "nash: note: %s\n", res.Notice)
	}
	switch {
	case opts.json:
		hits := make([]findHit, len(res.Hits))
		for i, h := range res.Hits {
			hits[i] = findHit{Path: h.Path, Score: h.Score, Snippet: h.Snippet, Line: h.Line}
		}
		if err := effects.WriteJSON(io.out, hits, true); err != nil {
			return fmt.Errorf("find: %w", err)
		}
	case opts.snippets || isTerminal(io.out):
		for _, h := range res.Hits {
			fmt.Fprintf(io.out, "%s:%d  %.3f\n", quoteIndexPath(h.Path), h.Line, h.Score)
			if h.Snippet != "" {
				fmt.Fprintf(io.out, "    %s\n", quoteIndexSnippet(h.Snippet))
			}
		}
	default:
		for _, h := range res.Hits {
			fmt.Fprintln(io.out, quoteIndexPath(h.Path))
		}
	}
	if len(res.Hits) == 0 {
		return exitError{exitFailure}
	}
	return nil
}

// findIn searches the index; when nash index watch holds it, the watcher
// answers over its query socket.
func findIn(ctx context.Context, opts indexOptions, query string, so index.SearchOptions) (*index.Result, error) {
	ix, err := openIndex(ctx, opts, index.LockTimeout(300*time.Millisecond))
	if errors.Is(err, index.ErrLocked) {
		dir, derr := xdg.IndexDir(opts.dir, os.Getenv)
		if derr != nil {
			return nil, derr
		}
		res, rerr := remoteSearch(ctx, dir, query, so)
		if errors.Is(rerr, errNoWatcher) {
			return nil, err // the lock error says more than a missing socket
		}
		return res, rerr
	}
	if err != nil {
		return nil, err
	}
	defer ix.Close()
	roots, err := ix.Roots()
	if err != nil {
		return nil, err
	}
	if len(roots) == 0 {
		return nil, fmt.Errorf("find: the index is empty; add files with nash index add PATH")
	}
	res, err := ix.Search(ctx, query, so)
	if err != nil {
		var pe *index.ParseError
		if errors.As(err, &pe) {
			return nil, err
		}
		return nil, fmt.Errorf("find: %w", err)
	}
	return res, ix.Close()
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
