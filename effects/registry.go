package effects

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
)

// CommandSpec describes one command nash knows: what it does, which of its
// options matter, and the role each argument plays, in the spirit of PaSh's
// and POSH's command annotations. Analyze reads one table of them, one entry
// per command name (see Commands); a command without an entry is unknown
// and left to the sandbox to observe.
//
// The roles say what happens to each path argument when the command runs
// as written; what depends on the file system (a target that is an existing
// directory, a file that is missing) is decided by the analysis. Options
// not listed are flags that take no value and change nothing the analysis
// follows.
type CommandSpec struct {
	// Name is the command's name, the last element of its path.
	Name string `json:"name"`
	// Class is what the command does in general.
	Class CommandClass `json:"class"`
	// Does says in a few words what the command does beyond the files it
	// names, for a finding: "sends a signal to processes". Mostly for
	// ClassSystem commands.
	Does string `json:"does,omitempty"`
	// Options are the options that take a value, and the flags that change
	// what the command does (Sets).
	Options []OptionSpec `json:"options,omitempty"`
	// Operands are the roles of the arguments that are not options, in
	// order. One of them may repeat (Many); those after it are taken from
	// the end of the command line (cp SOURCE... DEST).
	Operands []OperandSpec `json:"operands,omitempty"`
	// OptionsFirst is set when options end at the first operand, as for a
	// command that runs the rest of its arguments (sudo, env, xargs).
	OptionsFirst bool `json:"options_first,omitempty"`
	// Looks are the subcommands (or first arguments) with which the
	// command only looks: systemctl status, crontab -l, apt list. With any
	// other, a ClassSystem or ClassPackages command changes something.
	Looks []string `json:"looks,omitempty"`
	// Filter is set for a command that prints only lines of its input,
	// unchanged (sort, head, grep), so that the paths find printed before
	// it in a pipeline are what it passes on.
	Filter bool `json:"filter,omitempty"`
	// StdinScript is set for a shell or interpreter that runs a program
	// read from its standard input when it is given none (sh, python).
	StdinScript bool `json:"stdin_script,omitempty"`
	// Also lists what the command writes whatever its arguments: its own
	// settings, caches and sockets.
	Also []AlsoSpec `json:"also,omitempty"`
	// Host says the command is about the host rather than files: it looks
	// at (or acts on) the machine's processes, sockets or users, which a
	// sandbox with namespaces of its own would hide.
	Host HostUse `json:"host,omitempty"`

	// analyze is the analysis for a command whose arguments mean more than
	// their roles say; nil for one the roles describe (byRoles).
	analyze func(*invocation)
}

// CommandClass is what a command does in general.
type CommandClass string

// The command classes.
const (
	// ClassQuiet commands touch no file: echo, date, ps.
	ClassQuiet CommandClass = "quiet"
	// ClassReads commands read their operands and change nothing.
	ClassReads CommandClass = "reads"
	// ClassWrites commands create, change or move files named in their
	// arguments: touch, cp, sed -i, tar.
	ClassWrites CommandClass = "writes"
	// ClassDeletes commands remove files: rm, rmdir, shred -u.
	ClassDeletes CommandClass = "deletes"
	// ClassRuns commands run another command or a script given as
	// arguments: sudo, env, xargs, sh -c, find -exec.
	ClassRuns CommandClass = "runs"
	// ClassNetwork commands reach other hosts: curl, ssh, rsync host:.
	ClassNetwork CommandClass = "network"
	// ClassSystem commands change state outside the file system, which the
	// sandbox cannot undo: kill, systemctl, mount.
	ClassSystem CommandClass = "system"
	// ClassPackages commands install or remove software: apt, pip, npm.
	ClassPackages CommandClass = "packages"
	// ClassShell are shell builtins that change the shell's own state:
	// cd, read, unset.
	ClassShell CommandClass = "shell"
)

// Role is what an argument is to the command that receives it.
type Role string

// The roles of arguments.
const (
	RoleValue      Role = "value"       // not a path: a count, a mode, a pattern, a user
	RoleRead       Role = "read"        // a file the command reads
	RoleReadTree   Role = "read-tree"   // a directory read with everything under it
	RoleWrite      Role = "write"       // a file written: created, replaced or changed in place
	RoleCreate     Role = "create"      // a path created: a directory, link, node or empty file
	RoleTarget     Role = "target"      // where copies or moves go: a new name, or a directory they go into
	RoleDelete     Role = "delete"      // a path removed
	RoleDeleteTree Role = "delete-tree" // a path removed with everything under it
	RoleConvert    Role = "convert"     // a file replaced by one made from it next to it (gzip FILE makes FILE.gz)
	RoleMove       Role = "move"        // a path moved away to the target
	RoleMeta       Role = "meta"        // a path whose mode, owner, times or attributes change
	RoleDir        Role = "dir"         // the directory the command works in (tar -C)
	RoleScript     Role = "script"      // a string run as a shell script (sh -c)
	RoleCommand    Role = "command"     // this and the remaining arguments are a command line to run
	RoleProgram    Role = "program"     // a program in the command's own language (awk, sed, perl -e)
	RoleRemote     Role = "remote"      // a URL, a host, or host:path
	RoleSubcommand Role = "subcommand"  // selects what the command does (git commit)
)

// access returns the access a path role implies, and whether it covers
// everything under the path; ok is false for a role that is not a path.
func (r Role) access(recursive bool) (acc Access, rec, ok bool) {
	switch r {
	case RoleRead:
		return Read, recursive, true
	case RoleReadTree:
		return Read, true, true
	case RoleWrite:
		return Write, false, true
	case RoleCreate:
		return Create, false, true
	case RoleTarget:
		return Create, true, true
	case RoleDelete:
		return Delete, recursive, true
	case RoleDeleteTree:
		return Delete, true, true
	case RoleConvert:
		return Delete, false, true
	case RoleMove:
		return Delete, true, true
	case RoleMeta:
		return Meta, recursive, true
	}
	return "", false, false
}

// Setting is something an option turns on that changes what a command does
// to its arguments.
type Setting string

// The settings options turn on.
const (
	SetRecursive     Setting = "recursive"      // operands are whole trees (rm -r, cp -r, chmod -R, grep -r)
	SetInPlace       Setting = "in-place"       // files named are changed in place (sed -i)
	SetDryRun        Setting = "dry-run"        // only says what it would do (rsync -n, mktemp -u)
	SetKeep          Setting = "keep"           // keeps its input files (gzip -k)
	SetStdout        Setting = "stdout"         // writes to standard output, not to files (gzip -c, tar -O)
	SetDecompress    Setting = "decompress"     // decompresses (gzip -d)
	SetList          Setting = "list"           // only lists or tests (tar -t, unzip -l, gzip -l)
	SetRemove        Setting = "remove"         // removes its sources once done (zip -m, shred -u, tar --remove-files)
	SetSend          Setting = "send"           // sends data to the remote end (curl -d, wget --post-data)
	SetMirror        Setting = "mirror"         // deletes at the destination what the source lacks (rsync --delete)
	SetDirectory     Setting = "directory"      // creates directories (install -d, mktemp -d)
	SetCompile       Setting = "compile"        // compiles without linking (cc -c)
	SetQuery         Setting = "query"          // only shows where a command is (command -v)
	SetLoginShell    Setting = "login-shell"    // opens a shell (sudo -i, sudo -s)
	SetEdit          Setting = "edit"           // edits files (sudo -e)
	SetRemoteName    Setting = "remote-name"    // saves under the remote file's name (curl -O)
	SetCommandString Setting = "command-string" // the first operand is a script to run, not a file (sh -c)
	SetChange        Setting = "change"         // changes what the command otherwise only shows (date -s)
	SetParents       Setting = "parents"        // makes missing parent directories too (mkdir -p)
)

// OptionSpec is one option of a command.
type OptionSpec struct {
	// Names are the option's spellings, with their dashes: "-o",
	// "--output". A short option's value may be attached (-ofile) or be
	// the next argument; a long one's follows "=" or is the next argument.
	Names []string `json:"names"`
	// Arg is the role of the option's value, "" when it takes none.
	Arg Role `json:"arg,omitempty"`
	// OptionalArg is set when the value is optional and only ever attached
	// (xargs -i, -i{}).
	OptionalArg bool `json:"optional_arg,omitempty"`
	// Sets is what the option turns on, if anything.
	Sets Setting `json:"sets,omitempty"`
	// Fills names the operand the option's value stands for, which the
	// command line then lacks: grep -e PATTERN, cp -t DEST.
	Fills string `json:"fills,omitempty"`
}

// HostUse is what a command does with the host's processes and sockets.
type HostUse string

// The uses of the host.
const (
	// HostLooks: the command shows processes, sockets, users or load (ps,
	// ss, who, free).
	HostLooks HostUse = "looks"
	// HostActs: the command acts on processes (kill, pkill), which
	// cannot be undone.
	HostActs HostUse = "acts"
)

// AlsoSpec is a path a command writes of its own accord.
type AlsoSpec struct {
	// Path is absolute, or starts with ~/ for the home directory; * stands
	// for any name (tmux's /tmp/tmux-UID).
	Path string `json:"path"`
	// Role is RoleCreate (made when missing), RoleWrite or RoleTarget
	// (written into).
	Role Role `json:"role"`
}

// OperandSpec is the role of one operand, or of a run of them.
type OperandSpec struct {
	// Name is how usage lines call the operand: FILE, SOURCE, DEST.
	Name string `json:"name"`
	Role Role   `json:"role"`
	// Many is set for an operand that may repeat.
	Many bool `json:"many,omitempty"`
	// Optional is set for an operand that may be left out.
	Optional bool `json:"optional,omitempty"`
}

// Commands returns the specification of every command nash knows, sorted by
// name. The result is a copy: changing it changes nothing.
func Commands() []CommandSpec {
	reg := commands()
	out := make([]CommandSpec, 0, len(reg.entries))
	for i := range reg.entries {
		out = append(out, reg.entries[i].spec.clone())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// LookupCommand returns the specification of the command name (a path's
// last element is used), and whether nash knows it.
func LookupCommand(name string) (CommandSpec, bool) {
	e := lookup(name)
	if e == nil {
		return CommandSpec{}, false
	}
	return e.spec.clone(), true
}

func (s *CommandSpec) clone() CommandSpec {
	c := *s
	c.Options = slices.Clone(s.Options)
	for i := range c.Options {
		c.Options[i].Names = slices.Clone(c.Options[i].Names)
	}
	c.Operands = slices.Clone(s.Operands)
	c.Looks = slices.Clone(s.Looks)
	c.Also = slices.Clone(s.Also)
	c.analyze = nil
	return c
}

// entry is a command's spec with its options indexed for parsing.
type entry struct {
	spec *CommandSpec
	opts optSpec
	// byName finds an option by a spelling without dashes: "o", "output".
	byName map[string]*OptionSpec
}

// registry is the command table with its index by name. Its entries are
// built the first time a command is looked up: indexing every option of
// every command took 0.6 ms of each nash's start, for the few commands a
// script names.
type registry struct {
	table   []CommandSpec
	index   map[string]int
	entries []lazyEntry
}

// lazyEntry is a command's entry, built once, on first use.
type lazyEntry struct {
	spec *CommandSpec
	once sync.Once
	e    *entry
}

// commands returns the registry, built on first use: building the table
// (reading its option notation) costs about 1 ms, which every nash process
// paid at start before, the sandbox's init among them, which never looks a
// command up. init sets it, and nothing changes it after. (An initializer
// would make an initialization cycle: the table holds the analyses, which
// look commands up.)
var commands func() *registry

func init() { commands = sync.OnceValue(newRegistry) }

func newRegistry() *registry {
	r := &registry{table: newCommandTable()}
	r.index = make(map[string]int, len(r.table))
	r.entries = make([]lazyEntry, len(r.table))
	for i := range r.table {
		r.index[r.table[i].Name] = i
		r.entries[i].spec = &r.table[i]
	}
	return r
}

// Warm builds the command registry in the background, so that a process
// that will analyse a script has it ready by then.
func Warm() { go commands() }

// lookup returns the entry for a command name, or nil. mkfs.ext4 and its
// kin are mkfs.
func lookup(name string) *entry {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	reg := commands()
	i, ok := reg.index[name]
	if !ok && strings.HasPrefix(name, "mkfs.") {
		i, ok = reg.index["mkfs"]
	}
	if !ok {
		return nil
	}
	l := &reg.entries[i]
	l.once.Do(func() { l.e = indexEntry(l.spec) })
	return l.e
}

// buildIndex indexes the whole table, as lookup does one command at a
// time. It panics on an entry listed twice or an option it cannot read,
// which the package's tests catch at once (TestCommandTableIndexes).
func buildIndex(table []CommandSpec) map[string]*entry {
	idx := make(map[string]*entry, len(table))
	for i := range table {
		s := &table[i]
		if _, dup := idx[s.Name]; dup {
			panic(fmt.Sprintf("effects: command %q is listed twice", s.Name))
		}
		idx[s.Name] = indexEntry(s)
	}
	return idx
}

// indexEntry indexes a command's options for parsing. It panics on an
// option name it cannot read.
func indexEntry(s *CommandSpec) *entry {
	e := &entry{spec: s, byName: map[string]*OptionSpec{}, opts: optSpec{stop: s.OptionsFirst}}
	for j := range s.Options {
		o := &s.Options[j]
		for _, n := range o.Names {
			bare := strings.TrimLeft(n, "-")
			long := strings.HasPrefix(n, "--")
			if bare == "" || !strings.HasPrefix(n, "-") || (!long && len(bare) != 1) {
				panic(fmt.Sprintf("effects: command %q: bad option name %q", s.Name, n))
			}
			e.byName[bare] = o
			switch {
			case o.Arg == "":
			case long:
				e.opts.long = append(e.opts.long, bare)
			case o.OptionalArg:
				e.opts.optional += bare
			default:
				e.opts.arg += bare
			}
		}
	}
	return e
}

// is reports whether an option that turns s on was given.
func (e *entry) is(p parsed, s Setting) bool {
	for name := range p.flags {
		if o := e.byName[name]; o != nil && o.Sets == s {
			return true
		}
	}
	return false
}

// operands assigns the parsed operands to the spec's operand roles: those
// before the repeating one from the front, those after it from the back,
// leaving out the ones an option filled. It returns each operand with its
// role, in command-line order; operands beyond the spec get no role.
func (e *entry) operands(p parsed) []roled {
	specs := make([]OperandSpec, 0, len(e.spec.Operands))
	for _, o := range e.spec.Operands {
		if !e.filled(p, o.Name) {
			specs = append(specs, o)
		}
	}
	out := make([]roled, len(p.ops))
	for i, v := range p.ops {
		out[i] = roled{v: v}
	}
	many := slices.IndexFunc(specs, func(o OperandSpec) bool { return o.Many })
	if many < 0 {
		for i := range out {
			if i < len(specs) {
				out[i].spec = specs[i]
			}
		}
		return out
	}
	front, back := specs[:many], specs[many+1:]
	n := len(out)
	// Required operands after the repeating one come from the back, as
	// long as the front ones still get theirs.
	nb := 0
	for _, b := range back {
		if n-nb > len(front) || !b.Optional {
			nb++
		}
	}
	nb = min(nb, max(n-len(front), 0))
	for i := range out {
		switch {
		case i < len(front):
			out[i].spec = front[i]
		case i >= n-nb:
			out[i].spec = back[i-(n-nb)]
		default:
			out[i].spec = specs[many]
		}
	}
	return out
}

// filled reports whether an option that stands for the named operand was
// given.
func (e *entry) filled(p parsed, operand string) bool {
	for name := range p.flags {
		if o := e.byName[name]; o != nil && o.Fills == operand {
			return true
		}
	}
	return false
}

// roled is an operand with the role the spec gives it.
type roled struct {
	v    wordVal
	spec OperandSpec
}

// byRoles analyses a command its spec describes: every path among its
// option values and operands is used as its role says, recursively when a
// SetRecursive option was given.
func byRoles(c *invocation) {
	p := c.parse()
	rec := c.e.is(p, SetRecursive)
	for name, v := range p.vals {
		if o := c.e.byName[name]; o != nil {
			c.pathRole(v, o.Arg, rec)
		}
	}
	parents := c.e.is(p, SetParents)
	for _, o := range c.e.operands(p) {
		if o.v.lit && strings.HasPrefix(o.v.text, "-") && o.v.text != "-" {
			continue // an option after the operands
		}
		switch o.spec.Role {
		case RoleDelete, RoleMeta, RoleConvert:
			if c.missing(o.v) {
				continue
			}
		case RoleWrite, RoleCreate:
			if !parents && c.a.parentMissing(o.v, c.name, c.line) {
				continue
			}
		}
		c.pathRole(o.v, o.spec.Role, rec)
	}
}

// pathRole records a path use as its role says.
func (c *invocation) pathRole(v wordVal, r Role, recursive bool) {
	if acc, rec, ok := r.access(recursive); ok {
		c.path(v, acc, rec)
	}
}
