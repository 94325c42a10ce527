package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/shell"
)

// joinOptions are the flags of nash join.
type joinOptions struct {
	run  runOptions // --yes, --json
	into string
}

func newJoinCmd(g *options, io stdio) *cobra.Command {
	var o joinOptions
	cmd := &cobra.Command{
		Use:   "join A B... [--into C] [--yes] [--json]",
		Short: "concatenate files into a new one, or append them to the first, as an undoable transaction",
		Long: `join concatenates regular files byte for byte (like cat). With --into C it
writes A, B, ... into the new file C and leaves them as they are; C must not
exist. Without --into it appends B, ... to A and removes them.

nash writes the script, shows it, and runs it like nash run: in the sandbox,
with a summary of what changed, then commit or abort; 'nash undo' puts
everything back. A name starting with - needs -- first: nash join -- -a -b.`,
		Args: minArgs(2),
		RunE: func(c *cobra.Command, args []string) error {
			return runJoin(c.Context(), g, o, args, io)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.into, "into", "", "write the result to the new file `C` and keep the inputs")
	addRunFlags(f, &o.run)
	return cmd
}

func runJoin(ctx context.Context, g *options, o joinOptions, args []string, io stdio) error {
	paths, err := absPaths(args)
	if err != nil {
		return err
	}
	into := ""
	if o.into != "" {
		if into, err = filepath.Abs(o.into); err != nil {
			return fmt.Errorf("join: %w", err)
		}
	}
	script, err := planJoin(paths, into)
	if err != nil {
		return err
	}
	prompt := "nash join " + quoteWords(paths)
	if into != "" {
		prompt += " --into " + effects.Quote(into)
	}
	return runScript(ctx, g, o.run, shell.Script{Text: script, Title: prompt, Show: true}, io)
}

// planJoin checks the files and writes the script that joins them: into
// the new file into, or (into empty) onto the first. Every path in it is
// quoted with effects.Quote. Refusals are usage errors that name the
// path.
func planJoin(paths []string, into string) (string, error) {
	var infos []os.FileInfo
	for _, p := range paths {
		fi, err := os.Lstat(p)
		switch {
		case err != nil:
			return "", usageError{fmt.Sprintf("join: %s: %s", effects.Quote(p), lstatReason(err))}
		case fi.Mode()&os.ModeSymlink != 0:
			return "", usageError{fmt.Sprintf("join: %s is a symlink; join the file it points to", effects.Quote(p))}
		case !fi.Mode().IsRegular():
			return "", usageError{fmt.Sprintf("join: %s is not a regular file", effects.Quote(p))}
		}
		for i, prev := range infos {
			if os.SameFile(prev, fi) {
				return "", usageError{fmt.Sprintf("join: %s and %s are the same file", effects.Quote(paths[i]), effects.Quote(p))}
			}
		}
		infos = append(infos, fi)
	}
	if into == "" {
		first, rest := paths[0], paths[1:]
		return fmt.Sprintf("# nash join: append %s to %s, then remove %s\nset -e\ncat -- %s >> %s\nrm -- %s\n",
			quoteWords(rest), effects.Quote(first), pluralIt(len(rest)), quoteWords(rest), effects.Quote(first), quoteWords(rest)), nil
	}
	if _, err := os.Lstat(into); err == nil {
		return "", usageError{fmt.Sprintf("join: %s exists; --into names a new file", effects.Quote(into))}
	}
	if fi, err := os.Stat(filepath.Dir(into)); err != nil || !fi.IsDir() {
		return "", usageError{fmt.Sprintf("join: no directory %s for %s", effects.Quote(filepath.Dir(into)), effects.Quote(into))}
	}
	// noclobber: the > fails rather than replace a file that appeared.
	return fmt.Sprintf("# nash join: %s into the new file %s\nset -e -o noclobber\ncat -- %s > %s\n",
		quoteWords(paths), effects.Quote(into), quoteWords(paths), effects.Quote(into)), nil
}

// quoteWords quotes each path with effects.Quote and joins them with
// spaces, as words of a command line.
func quoteWords(ps []string) string {
	q := make([]string, len(ps))
	for i, p := range ps {
		q[i] = effects.Quote(p)
	}
	return strings.Join(q, " ")
}

func pluralIt(n int) string {
	if n == 1 {
		return "it"
	}
	return "them"
}
