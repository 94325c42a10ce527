package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/shell"
)

// groupOptions are the flags of nash group.
type groupOptions struct {
	run      runOptions // --yes, --json
	by       string
	into     string
	dir      string
	link     bool
	n        int
	indexDir string
}

func newGroupCmd(g *options, io stdio) *cobra.Command {
	var o groupOptions
	cmd := &cobra.Command{
		Use:   "group [--by keyword|semantic] QUERY --into DIR [--dir D] [--link] [-n N] [--yes] [--json]",
		Short: "move (or link) the indexed files matching QUERY into DIR, as an undoable transaction",
		Long: `group searches the index (see nash find) for QUERY and moves the best N
matching files into DIR, or with --link makes symbolic links to them there.
--by semantic ranks by meaning; without an embedder it falls back to keyword
search and says so. --dir D takes only files under D.

nash writes the script (mkdir, then one mv or ln per file), shows it, and runs
it like nash run: in the sandbox, with a summary of what changed, then commit
or abort; 'nash undo' puts everything back. Nothing in DIR is overwritten: a
name already there, or taken by an earlier match, gets a suffix (notes.md,
notes-2.md, notes-3.md). Files already in DIR, and files gone since they were
indexed, are left out and named.`,
		Args: minArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return runGroup(c.Context(), g, o, strings.Join(args, " "), io)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.by, "by", "keyword", "match files by `MODE`: keyword or semantic")
	f.StringVar(&o.into, "into", "", "group the files in `DIR` (created when missing)")
	f.StringVar(&o.dir, "dir", "", "only files under `DIR`")
	f.BoolVar(&o.link, "link", false, "make symbolic links in DIR instead of moving the files")
	f.IntVarP(&o.n, "n", "n", 20, "at most `N` files, best first")
	f.StringVar(&o.indexDir, "index-dir", "", "where the index lives (default $XDG_DATA_HOME/nash/index)")
	addRunFlags(f, &o.run)
	return cmd
}

func runGroup(ctx context.Context, g *options, o groupOptions, query string, io stdio) error {
	q := indexQuery{query: query, mode: o.by, n: o.n, indexDir: o.indexDir}
	switch o.by {
	case "keyword", "semantic":
	default:
		return usageError{fmt.Sprintf("group: --by is keyword or semantic, not %s", effects.Quote(o.by))}
	}
	switch {
	case strings.TrimSpace(query) == "":
		return usageError{"group: empty query"}
	case o.into == "":
		return usageError{"group: say where with --into DIR"}
	case o.n <= 0:
		return usageError{"group: -n must be positive"}
	}
	into, err := filepath.Abs(o.into)
	if err != nil {
		return fmt.Errorf("group: %w", err)
	}
	if fi, err := os.Stat(into); err == nil && !fi.IsDir() {
		return usageError{fmt.Sprintf("group: %s is not a directory", effects.Quote(into))}
	}
	if o.dir != "" {
		if q.dir, err = filepath.Abs(o.dir); err != nil {
			return fmt.Errorf("group: %w", err)
		}
	}
	// searchIndex says what went wrong, and notes such as the
	// semantic fallback, on stderr.
	hits, err := searchIndex(ctx, g, q, io.err)
	if err != nil {
		var se errIndexSearch
		if errors.As(err, &se) {
			return exitError{se.code}
		}
		return err
	}
	paths := make([]string, len(hits))
	for i, h := range hits {
		paths[i] = h.Path
	}
	prompt := fmt.Sprintf("nash group --by %s %s --into %s", o.by, effects.Quote(query), effects.Quote(into))
	if o.link {
		prompt += " --link"
	}
	plan := planGroup(paths, into, o.link, prompt)
	for _, n := range plan.notes {
		fmt.Fprintf(io.err, "nash: %s\n", n)
	}
	if plan.files == 0 {
		if len(hits) == 0 {
			return fmt.Errorf("group: no indexed file matches %s", effects.Quote(query))
		}
		return errors.New("group: nothing to group")
	}
	if len(hits) == o.n {
		fmt.Fprintf(io.err, "nash: note: the best %d matches; -n N takes more\n", o.n)
	}
	return runScript(ctx, g, o.run, shell.Script{Text: plan.script, Title: prompt, Show: true}, io)
}

// groupPlan is the script nash group runs and what it says first.
type groupPlan struct {
	script string
	files  int      // files moved or linked
	notes  []string // files left out or renamed, for the person
}

// planGroup writes the script that moves (or links) paths into the
// absolute directory into, in order, creating into when it is missing.
// Every path in it is quoted with
// effects.Quote. A name already in into, or taken by an earlier path,
// gets a suffix; paths already in into, gone or not files are left out.
// title, escaped, heads the script as a comment.
func planGroup(paths []string, into string, link bool, title string) groupPlan {
	var plan groupPlan
	var body strings.Builder
	taken := map[string]bool{}
	seen := map[string]bool{}
	for _, p := range paths {
		if seen[p] {
			continue
		}
		seen[p] = true
		if p == into || strings.HasPrefix(p, into+"/") {
			plan.notes = append(plan.notes, fmt.Sprintf("left out %s: already in %s", effects.Quote(p), effects.Quote(into)))
			continue
		}
		fi, err := os.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			plan.notes = append(plan.notes, fmt.Sprintf("left out %s: gone since it was indexed", effects.Quote(p)))
			continue
		case err != nil:
			plan.notes = append(plan.notes, fmt.Sprintf("left out %s: %s", effects.Quote(p), lstatReason(err)))
			continue
		case fi.IsDir():
			plan.notes = append(plan.notes, fmt.Sprintf("left out %s: a directory", effects.Quote(p)))
			continue
		}
		name := freeName(into, filepath.Base(p), taken)
		taken[name] = true
		if name != filepath.Base(p) {
			plan.notes = append(plan.notes, fmt.Sprintf("%s goes in as %s: the name is taken", effects.Quote(p), effects.Quote(name)))
		}
		dst := filepath.Join(into, name)
		if link {
			// -T: never into a directory that appeared since; ln
			// fails rather than replace anything.
			fmt.Fprintf(&body, "ln -s -T -- %s %s\n", effects.Quote(p), effects.Quote(dst))
		} else {
			// -n: never overwrite; -T: never into a directory.
			fmt.Fprintf(&body, "mv -n -T -- %s %s\n", effects.Quote(p), effects.Quote(dst))
		}
		plan.files++
	}
	verb := "moves"
	if link {
		verb = "links"
	}
	mkdir := ""
	if _, err := os.Lstat(into); err != nil {
		mkdir = "mkdir -p -- " + effects.Quote(into) + "\n"
	}
	plan.script = fmt.Sprintf("# %s\n# %s %d file(s) into %s\nset -e\n%s%s",
		effects.EscapeLine(title), verb, plan.files, effects.Quote(into), mkdir, body.String())
	return plan
}

// freeName returns name, or name with a suffix before its extension
// (notes-2.md), such that nothing in dir has it and taken does not hold it.
func freeName(dir, name string, taken map[string]bool) string {
	ext := filepath.Ext(name)
	if ext == name {
		ext = "" // .bashrc has no extension
	}
	stem := strings.TrimSuffix(name, ext)
	for i := 1; ; i++ {
		cand := name
		if i > 1 {
			cand = stem + "-" + strconv.Itoa(i) + ext
		}
		if taken[cand] {
			continue
		}
		// A name that cannot be checked is tried: mv -n and ln still
		// refuse to replace anything.
		if _, err := os.Lstat(filepath.Join(dir, cand)); err != nil {
			return cand
		}
	}
}
