package effects

import (
	"fmt"
	"io/fs"
	"slices"
	"strings"
)

// Risk ranks what a script may do, from harmless to irreversible: what a
// person should weigh before running it. A report's label says what the
// analysis knows: a write whose place is known only at run time is not
// said to be outside the working directory (its finding says so instead),
// and a deletion of a file that is not there is no deletion.
type Risk int

// The risk levels, in increasing order.
const (
	ReadOnly      Risk = iota // reads files, changes nothing
	Network                   // reaches the network (downloads, lookups), changes no file
	WritesInside              // creates, changes or moves files under the working directory, or where only run time tells
	WritesOutside             // creates, changes or moves files outside the working directory
	Deletes                   // deletes files: their content is gone, not moved
	CannotUndo                // does something the sandbox cannot undo: network sends, signals, services
)

var riskNames = [...]string{"read-only", "network", "writes-inside-cwd", "writes-outside-cwd", "deletes", "cannot-undo"}

// String returns the risk's name as used in JSON: read-only, network,
// writes-inside-cwd, writes-outside-cwd, deletes, cannot-undo.
func (r Risk) String() string {
	if r < 0 || int(r) >= len(riskNames) {
		return fmt.Sprintf("risk(%d)", int(r))
	}
	return riskNames[r]
}

// MarshalText encodes the risk as its name.
func (r Risk) MarshalText() ([]byte, error) {
	if r < 0 || int(r) >= len(riskNames) {
		return nil, fmt.Errorf("marshal risk: unknown level %d", int(r))
	}
	return []byte(riskNames[r]), nil
}

// UnmarshalText decodes a risk from its name.
func (r *Risk) UnmarshalText(b []byte) error {
	for i, n := range riskNames {
		if n == string(b) {
			*r = Risk(i)
			return nil
		}
	}
	return fmt.Errorf("unmarshal risk: unknown level %q", b)
}

// Access is what a command does to a path.
type Access string

// The kinds of access to a path.
const (
	Read   Access = "read"   // reads the path
	Write  Access = "write"  // creates or changes the path's content
	Create Access = "create" // creates the path (a directory, link or new file)
	Delete Access = "delete" // removes the path
	Meta   Access = "meta"   // changes mode, owner or times
)

// Command is one command that can run, as written in the script.
type Command struct {
	// Name is the command name; for a name known only at run time, its
	// source text (such as "$EDITOR"), with Dynamic set.
	Name string `json:"name"`
	// Args are the arguments after the name as written in the script,
	// quotes kept. For a command that a wrapper builds (xargs, find
	// -exec), an argument it adds is shown as a value: "<input>" for what
	// xargs reads.
	Args []string `json:"args,omitempty"`
	// Line and Col locate the command in the script. A command inside a
	// string (sh -c '...') has the position of the outer command.
	Line int `json:"line"`
	Col  int `json:"col"`
	// Via lists the wrappers the command runs through, outermost first:
	// "sudo", "xargs", "find -exec", "sh -c", "$(...)", "|" and so on.
	Via []string `json:"via,omitempty"`
	// Dynamic is set when the command's name is only known at run time.
	Dynamic bool `json:"dynamic,omitempty"`
}

// PathUse is one path a command reads, writes, creates, deletes or
// changes the metadata of.
type PathUse struct {
	// Path is absolute when the working directory is known (see Dir) and
	// cleaned. Globs are kept as written ("/home/ann/*.txt"); parts known
	// only at run time keep their source text ("/home/ann/$f").
	Path   string `json:"path"`
	Access Access `json:"access"`
	// Glob is set when Path holds glob characters to be matched.
	Glob bool `json:"glob,omitempty"`
	// Dynamic is set when Path depends on variables, command
	// substitutions or input only known at run time.
	Dynamic bool `json:"dynamic,omitempty"`
	// Recursive is set when the access covers everything under Path, as
	// for rm -r, chmod -R, or the destination of cp and mv.
	Recursive bool `json:"recursive,omitempty"`
	// Command is the command that accesses the path, Line its line.
	Command string `json:"command"`
	Line    int    `json:"line"`

	// Pattern matches the paths this use may stand for, in glob syntax:
	// * and ? within one path element, [...] a class, a backslash quotes
	// the next character, ** any string including slashes. Quoted glob
	// characters are quoted here, and parts known only at run time are
	// **. Compare matches observed paths against it.
	Pattern string `json:"pattern"`
}

// Finding is one reason a script is risky, with the level it raises the
// script's risk to.
type Finding struct {
	Risk Risk `json:"risk"`
	// Kind classifies the finding: write, rename, delete, missing,
	// network, privilege, irreversible, dynamic, unknown-command, unparsed.
	// A missing finding is a path the command acts on that does not
	// exist (see Files), so the command does nothing to it.
	Kind string `json:"kind"`
	// Reason is a sentence for people. It quotes paths with Quote, so it
	// is safe to print.
	Reason string `json:"reason"`
	Line   int    `json:"line,omitempty"`
}

// Report is what Analyze predicts a script will do.
type Report struct {
	// Commands lists every command that can run, in script order, with
	// the commands inside wrappers and substitutions after their wrapper.
	Commands []Command `json:"commands"`
	// Paths lists the paths the script accesses, one entry per path and
	// access, in order of first use.
	Paths []PathUse `json:"paths"`
	// Network is set when the script may use the network.
	Network bool `json:"network"`
	// Privileged is set when the script runs something as another user
	// (sudo, su, doas, pkexec).
	Privileged bool `json:"privileged"`
	// Irreversible is set when the script may do something the sandbox
	// cannot undo: some finding has risk CannotUndo.
	Irreversible bool `json:"irreversible"`
	// Risk is the highest risk of any finding, ReadOnly when none.
	Risk Risk `json:"risk"`
	// Findings gives a reason for every risk, in script order.
	Findings []Finding `json:"findings"`
}

// PathsWith returns the paths accessed with a, in order.
func (r *Report) PathsWith(a Access) []string {
	var out []string
	for _, p := range r.Paths {
		if p.Access == a {
			out = append(out, p.Path)
		}
	}
	return out
}

// Labels returns what the report says the script does: the distinct risks
// its findings raise, lowest first, without ReadOnly. A script that
// deletes inside the working directory and writes outside it is labelled
// both writes-outside-cwd and deletes; Risk is the last label.
func (r *Report) Labels() []Risk {
	var seen [CannotUndo + 1]bool
	for _, f := range r.Findings {
		if f.Risk > ReadOnly && f.Risk <= CannotUndo {
			seen[f.Risk] = true
		}
	}
	if r.Irreversible {
		seen[CannotUndo] = true
	}
	var out []Risk
	for l, ok := range seen {
		if ok {
			out = append(out, Risk(l))
		}
	}
	return out
}

// Host says what the script does with the host's processes and sockets:
// HostActs when some command acts on them (kill), else HostLooks when some
// command looks at them (ps, ss), else "". Commands whose name only run
// time tells count for nothing.
func (r *Report) Host() HostUse {
	var use HostUse
	for _, c := range r.Commands {
		if c.Dynamic {
			continue
		}
		e := lookup(c.Name)
		if e == nil {
			continue
		}
		switch e.spec.Host {
		case HostActs:
			if e.spec.Class != ClassSystem || !invocationLooks(e.spec, c.Args) {
				return HostActs
			}
		case HostLooks:
			use = HostLooks
		}
	}
	return use
}

// invocationLooks reports whether a command with Looks was called with
// one of them as its first argument (kill -l lists signals).
func invocationLooks(s *CommandSpec, args []string) bool {
	if len(args) == 0 {
		return false
	}
	return slices.Contains(s.Looks, strings.Trim(args[0], `'"`))
}

// CommandNames returns the names of the commands that can run, in order,
// without repeats.
func (r *Report) CommandNames() []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range r.Commands {
		if !seen[c.Name] {
			seen[c.Name] = true
			out = append(out, c.Name)
		}
	}
	return out
}

// ParseError is a script that does not parse. It points at the line and
// column of the problem and carries the offending line.
type ParseError struct {
	Line, Col int
	// Text is the script line the error is on, unescaped.
	Text string
	// Msg is the parser's description of the problem.
	Msg string
	// Incomplete is set when the script ended too early, as with an
	// unclosed quote; more input could make it valid.
	Incomplete bool
}

// Error describes the error in one line, with the offending text escaped.
func (e *ParseError) Error() string {
	return fmt.Sprintf("parse script: line %d, column %d: %s: %s", e.Line, e.Col, EscapeLine(e.Msg), strings.TrimSpace(Escape(e.Text)))
}

// Option configures Analyze.
type Option func(*config)

type config struct {
	dir, home string
	maxDepth  int
	files     fs.FS
}

// Dir sets the working directory the script runs in, so relative paths
// become absolute and writes can be told inside from outside it.
func Dir(dir string) Option { return func(c *config) { c.dir = dir } }

// Home sets the home directory, so ~ and $HOME resolve.
func Home(dir string) Option { return func(c *config) { c.home = dir } }

// Files lets Analyze look at the file system the script will run on,
// through fsys, a view of / (os.DirFS("/") for the real one; names in it
// have no leading slash). With it, a command on a path that is not there
// (rm of a missing file, find in a directory that does not exist) is not
// predicted to change it, a move onto a name that is not a directory is
// told from one into a directory, and findings count what a glob covers
// ("renames 3 files here"). Analyze looks only at paths the script has not
// changed before it, and walks a directory for a pattern of any depth (find
// -name) only up to a few thousand entries. The caller chooses what it
// reads, so the package does no I/O of its own.
func Files(fsys fs.FS) Option { return func(c *config) { c.files = fsys } }

// MaxDepth bounds how deeply strings run as scripts (sh -c, eval, su -c)
// are analysed; deeper ones become an "unparsed" finding. The default is 8.
func MaxDepth(n int) Option { return func(c *config) { c.maxDepth = n } }
