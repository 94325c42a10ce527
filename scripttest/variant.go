package scripttest

import (
	"io/fs"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/nash-shell/nash/effects"
)

// Kind names what a variant changes about today's files or environment.
type Kind string

// The kinds of variant.
const (
	Today       Kind = "today"        // today's files, as they are
	GlobNone    Kind = "glob-none"    // no file matches a glob
	GlobOne     Kind = "glob-one"     // exactly one file matches a glob
	GlobMany    Kind = "glob-many"    // several files match a glob
	NameSpace   Kind = "name-space"   // names with spaces, and files named after their words
	NameNewline Kind = "name-newline" // names with a newline
	NameDash    Kind = "name-dash"    // names that start with a dash
	NameBytes   Kind = "name-bytes"   // names with bytes that are not UTF-8
	Many        Kind = "many-files"   // a large count of matching files
	Missing     Kind = "missing"      // an input (or a directory cd enters) is missing
	Empty       Kind = "empty"        // an input is an empty file
	Symlink     Kind = "symlink"      // a symlink to elsewhere where a file or directory is expected
	Exists      Kind = "exists"       // an output already exists
	ReadOnly    Kind = "read-only"    // an output (or its directory) is read-only
	VarUnset    Kind = "var-unset"    // a variable the script uses is unset
	VarEmpty    Kind = "var-empty"    // a variable the script uses is empty
	VarDir      Kind = "var-dir"      // a variable used as a directory names one, with files
)

// additive reports whether a variant only adds files that the script
// should treat as it treats today's: then a new error, or a file treated
// otherwise than its like, is a failure. Other variants take something
// away the script needs, and refusing to go on is right.
func (k Kind) additive() bool {
	switch k {
	case GlobOne, GlobMany, NameSpace, NameNewline, NameDash, NameBytes, Many:
		return true
	}
	return false
}

// Entry is one object of a variant's starting state: a file, directory or
// symlink made (replacing what is there), or, with Type effects.TypeNone, a
// path removed.
type Entry struct {
	// Path is absolute.
	Path    string           `json:"path"`
	Type    effects.FileType `json:"type,omitempty"`
	Content string           `json:"content,omitempty"`
	// Mode is the permission bits; 0 means 0644 for a file, 0755 for a
	// directory.
	Mode   fs.FileMode `json:"mode,omitempty"`
	Target string      `json:"target,omitempty"` // a symlink's
	// Keep says a file entry keeps today's content at its path: only its
	// mode changes.
	Keep bool `json:"keep,omitempty"`
	// Role says why the entry is there, for the judge: a probe (a name
	// that should be treated like its pattern's other matches), a
	// control (an ordinary match), a decoy (a file named after a probe's
	// words, which the script should leave alone), or nothing.
	Role Role `json:"role,omitempty"`
	// Pattern is the glob (absolute) a probe or control matches.
	Pattern string `json:"pattern,omitempty"`
	// Like is one of today's files that a probe or control copies (its
	// content, mode and times, which Content and Mode repeat), so that
	// the script's tests on them (find -mtime, -empty, gunzip) see the
	// same: the probe should fare as Like does.
	Like string `json:"like,omitempty"`
}

// Role is what an entry is to the judge.
type Role string

// The roles of entries.
const (
	RoleProbe   Role = "probe"
	RoleControl Role = "control"
	RoleDecoy   Role = "decoy"
)

func (e Entry) mode() fs.FileMode {
	if e.Mode != 0 {
		return e.Mode
	}
	if e.Type == effects.TypeDir {
		return 0o755
	}
	return 0o644
}

// Variant is one starting state: changes to today's files and environment.
type Variant struct {
	// Name identifies the variant within a report: its kind and what it
	// is about ("name-space *.jpeg", "missing list.txt").
	Name string `json:"name"`
	Kind Kind   `json:"kind"`
	// Title says in a few words what the starting state is.
	Title string `json:"title"`
	// Entries are the changes to today's files, parents before children.
	Entries []Entry `json:"entries,omitempty"`
	// Unset and Set change the environment the script starts with.
	Unset []string          `json:"unset,omitempty"`
	Set   map[string]string `json:"set,omitempty"`
	// Pattern is the glob or path the variant is about (absolute), if
	// any: a glob-none variant fails when the script acts on it
	// literally.
	Pattern string `json:"pattern,omitempty"`
}

// setupFailed is the status the setup exits with when it cannot build a
// starting state, saying setupFailedMsg.
const (
	setupFailed    = 197
	setupFailedMsg = "nash test: could not build this starting state"
)

// setup returns the shell code that builds the variant's starting state in
// the sandbox and then runs script in a fresh bash, so that its positions,
// options and variables are its own. The setup exits 197 (and says why on
// stderr) when the state cannot be built; a watchdog kills the script
// after timeout seconds, so that what it did until then is still observed.
// The setup works under umask 022 and gives the script umask, the one it
// would have live.
func (v *Variant) setup(script string, timeoutSec int, umask fs.FileMode, host lstatFunc) string {
	var b strings.Builder
	if len(v.Entries) > 0 {
		writeSetup(&b, v.Entries, umask, host)
	}
	if len(v.Unset) > 0 {
		b.WriteString("unset")
		for _, n := range v.Unset {
			b.WriteString(" " + n)
		}
		b.WriteString("\n")
	}
	names := make([]string, 0, len(v.Set))
	for n := range v.Set {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		b.WriteString("export " + n + "=" + shellQuote(v.Set[n]) + "\n")
	}
	writeTail(&b, script, timeoutSec)
	return b.String()
}

// writeSetup writes the commands that make entries, in the shell that
// then runs the script (a subshell would cost a fork): a failing one
// stops it with setupFailed.
func writeSetup(b *strings.Builder, entries []Entry, umask fs.FileMode, host lstatFunc) {
	b.WriteString("trap 'echo \"" + setupFailedMsg + "\" >&2; exit " + strconv.Itoa(setupFailed) + "' ERR\numask 022\n")
	writeEntries(b, entries, host)
	b.WriteString("trap - ERR\numask " + strconv.FormatUint(uint64(umask.Perm()), 8) + "\n")
}

// writeTail writes the watchdog and the exec of the script.
func writeTail(b *strings.Builder, script string, timeoutSec int) {
	if timeoutSec > 0 {
		// A child of this shell, which the exec'd one does not know: its
		// wait does not wait for it.
		b.WriteString("{ sleep " + strconv.Itoa(timeoutSec) + "; kill -KILL $$; } 2>/dev/null &\n")
	}
	b.WriteString("exec \"$BASH\" -c " + singleQuote(script) + " bash\n")
}

// lstatFunc reports the mode of what is at an absolute path today, and
// whether anything is.
type lstatFunc func(p string) (fs.FileMode, bool)

// writeEntries writes the commands that make entries, under umask 022:
// removals, then directories, files and symlinks, then other modes
// (deepest first, so a read-only directory does not stop what goes into
// it).
func writeEntries(b *strings.Builder, entries []Entry, host lstatFunc) {
	var rm, dirs []string
	for _, e := range entries {
		m, there := host(e.Path)
		switch {
		case !there:
		case e.Type == effects.TypeNone:
			rm = append(rm, e.Path)
		case e.Type == effects.TypeSymlink, e.Type == effects.TypeFile && !m.IsRegular(), e.Type == effects.TypeDir && !m.IsDir():
			// A symlink over anything, a file over what is no file, a
			// directory over what is none, need the old object gone.
			rm = append(rm, e.Path)
		}
	}
	if len(rm) > 0 {
		b.WriteString("rm -rf --")
		for _, p := range rm {
			b.WriteString(" " + shellQuote(p))
		}
		b.WriteString("\n")
	}
	for _, e := range entries {
		if e.Type == effects.TypeDir {
			dirs = append(dirs, e.Path)
		}
	}
	// A directory that holds an entry is made unless it is there today
	// and no entry takes its place or its parent's.
	byPath := map[string]Entry{}
	for _, e := range entries {
		byPath[e.Path] = e
	}
	there := func(d string) bool {
		if m, ok := host(d); !ok || !m.IsDir() {
			return false
		}
		for q := d; q != "/" && q != "."; q = filepath.Dir(q) {
			if e, ok := byPath[q]; ok && e.Type != effects.TypeDir {
				return false
			}
		}
		return true
	}
	parents := map[string]bool{}
	for _, e := range entries {
		if e.Type == effects.TypeFile || e.Type == effects.TypeSymlink {
			d := filepath.Dir(e.Path)
			if !parents[d] && !slices.Contains(dirs, d) && !there(d) {
				parents[d] = true
			}
		}
	}
	for d := range parents {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	if len(dirs) > 0 {
		b.WriteString("mkdir -p --")
		for _, d := range dirs {
			b.WriteString(" " + shellQuote(d))
		}
		b.WriteString("\n")
	}
	var modes []Entry
	likes := map[string][]string{}
	var likeOrder []string
	for _, e := range entries {
		switch e.Type {
		case effects.TypeFile:
			switch {
			case e.Like != "":
				if likes[e.Like] == nil {
					likeOrder = append(likeOrder, e.Like)
				}
				likes[e.Like] = append(likes[e.Like], e.Path)
			case e.Keep:
			case e.Content == "":
				b.WriteString(": > " + shellQuote(e.Path) + "\n")
			default:
				b.WriteString("printf %s " + shellQuote(e.Content) + " > " + shellQuote(e.Path) + "\n")
			}
			if m, there := host(e.Path); e.mode() != 0o644 || e.Keep && there && m.Perm() != 0o644 {
				modes = append(modes, e)
			}
		case effects.TypeDir:
			if e.mode() != 0o755 {
				modes = append(modes, e)
			} else if m, there := host(e.Path); there && m.IsDir() && m.Perm() != 0o755 {
				modes = append(modes, e)
			}
		case effects.TypeSymlink:
			b.WriteString("ln -s -- " + shellQuote(e.Target) + " " + shellQuote(e.Path) + "\n")
		}
	}
	// Copies of one of today's files: its bytes by tee (which takes any
	// content, NULs too, and many files at once), its times by touch.
	for _, like := range likeOrder {
		var names strings.Builder
		for _, p := range likes[like] {
			names.WriteString(" " + shellQuote(p))
		}
		b.WriteString("tee --" + names.String() + " < " + shellQuote(like) + " > /dev/null\n")
		b.WriteString("touch -r " + shellQuote(like) + " --" + names.String() + "\n")
	}
	sort.SliceStable(modes, func(i, j int) bool { return len(modes[i].Path) > len(modes[j].Path) })
	for _, e := range modes {
		b.WriteString("chmod " + strconv.FormatUint(uint64(e.mode().Perm()), 8) + " -- " + shellQuote(e.Path) + "\n")
	}
}

// String returns the kind's name.
func (k Kind) String() string { return string(k) }
