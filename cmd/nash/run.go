package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/sandbox"
	"github.com/nash-shell/nash/shell"
)

// runOptions are the flags of nash run, and of the commands that run a
// script they write (nash group, nash join).
type runOptions struct {
	yes         bool
	json        bool
	net         string // --net: "" none, "*" the host's network, else HOST[:PORT] rules
	unprotected bool
	file        string
}

func newRunCmd(g *options, io stdio) *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run [--yes] [--json] [--net[=HOST[:PORT],...]] [--unprotected] (-- SCRIPT | -f FILE)",
		Short: "run a shell script in the sandbox, show what it changed, then commit or abort",
		Long: `Run a script (bash syntax) in a sandbox: the live files stay untouched while
it runs; afterwards nash shows exactly what changed and asks whether to
commit all of it, pick some paths, or abort. Every commit can be undone
with 'nash undo'.

--yes commits without asking, but never covers a script that deletes
outside the working directory or does what the sandbox cannot undo: such
a script needs the word yes typed, so --yes refuses it (exit 3).

By default the script reaches nothing outside the sandbox: every attempt
(DNS lookup, connection) is recorded and refused, and the summary lists
them; nash then offers to run it again with those destinations allowed.
--net=HOST[:PORT],... allows those destinations (*.example.com: any name
below example.com; an address; a port or any), for every program; --net
alone gives the script the host's network, all of it, unwatched. The
config file's net: section allows or denies destinations for every run or
per directory; --yes never allows what the flag or the config did not.

The script's exit code becomes nash's exit code.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRun(cmd.Context(), g, o, args, io)
		},
	}
	f := cmd.Flags()
	addRunFlags(f, &o)
	f.StringVar(&o.net, "net", "", "allow these destinations (`HOST[:PORT],...`); --net alone: the host's whole network")
	f.Lookup("net").NoOptDefVal = netAllFlag
	f.BoolVar(&o.unprotected, "unprotected", false, "run even where the sandbox cannot hold back changes (they happen live)")
	f.StringVarP(&o.file, "file", "f", "", "read the script from `FILE` (- for stdin)")
	return cmd
}

// addRunFlags adds --yes and --json, which every command that runs a
// script has.
func addRunFlags(f flagSet, o *runOptions) {
	f.BoolVarP(&o.yes, "yes", "y", false, "commit without asking (never covers deleting outside the directory or what cannot be undone)")
	f.BoolVar(&o.json, "json", false, "print one JSON object describing the run (see the README)")
}

// flagSet is the part of pflag.FlagSet addRunFlags uses.
type flagSet interface {
	BoolVarP(p *bool, name, shorthand string, value bool, usage string)
	BoolVar(p *bool, name string, value bool, usage string)
}

func readScript(o runOptions, args []string, io stdio) (string, error) {
	switch {
	case o.file != "" && len(args) > 0:
		return "", usageError{"give the script as arguments or with -f, not both"}
	case o.file == "-":
		b, err := readAll(io.in)
		return string(b), err
	case o.file != "":
		b, err := os.ReadFile(o.file)
		if err != nil {
			return "", fmt.Errorf("read script: %w", err)
		}
		return string(b), nil
	case len(args) == 0:
		return "", usageError{"nothing to run: give a script after -- or a file with -f"}
	}
	return strings.Join(args, " "), nil
}

func runRun(ctx context.Context, g *options, o runOptions, args []string, io stdio) error {
	script, err := readScript(o, args, io)
	if err != nil {
		return err
	}
	if strings.TrimSpace(script) == "" {
		return usageError{"the script is empty"}
	}
	if o.file == "-" {
		// The script came on stdin: nothing is left there to answer with.
		io.in = strings.NewReader("")
	}
	return runScript(ctx, g, o, shell.Script{Text: script}, io)
}

// runScript takes a script in hand through nash's one run flow (package
// shell): analysis, the second confirmation where it needs one, the
// sandboxed run, the effect summary, then commit, pick or abort; nash run,
// group and join all go this way, as nash -c does.
func runScript(ctx context.Context, g *options, o runOptions, s shell.Script, io stdio) error {
	cfg, err := shellConfig(g, io)
	if err != nil {
		return err
	}
	opts := shell.LineOptions{Yes: o.yes, JSON: o.json, Unprotected: o.unprotected}
	switch o.net {
	case "":
	case netAllFlag:
		opts.Network = true
	default:
		rules, err := netRules(o.net)
		if err != nil {
			return err
		}
		opts.Allow = rules
	}
	if isTerminal(io.in) || o.yes {
		opts.ScriptStdin = io.in // the answers, if any, come from the terminal
	}
	return shell.RunScript(ctx, cfg, s, io.in, io.out, io.err, opts)
}

func quoteAll(ps []string) string {
	q := make([]string, len(ps))
	for i, p := range ps {
		q[i] = effects.Quote(p)
	}
	return strings.Join(q, ", ")
}

// lstatReason says in a few words why a path cannot be used.
func lstatReason(err error) string {
	if errors.Is(err, fs.ErrNotExist) {
		return "no such file"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// warnUnwritable says, before the script starts, what it may not be able
// to change in the sandbox as it could outside, and why.
func warnUnwritable(w io.Writer) func([]sandbox.Warning) {
	return func(ws []sandbox.Warning) {
		for _, x := range ws {
			fmt.Fprintf(w, "nash: warning: %s: %s\n", effects.Quote(x.Path), effects.EscapeLine(x.Reason))
		}
	}
}
