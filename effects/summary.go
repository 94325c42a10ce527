package effects

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Defaults for SummaryOptions fields left at zero.
const (
	// DefaultMaxLines is how many lines of changes a summary shows at most.
	DefaultMaxLines = 40
	// DefaultCollapseAt is how many entries a new or deleted directory must
	// hold for the summary to show it as one line.
	DefaultCollapseAt = 10
)

// SummaryOptions controls WriteSummary. The zero value is usable.
type SummaryOptions struct {
	// Width is the terminal width in columns; longer lines are cut, long
	// names in the middle so their extension stays. Zero means no limit.
	Width int
	// MaxLines bounds the lines listing changes (directory headers
	// included); the rest is counted in a final "... and N more changes"
	// line. Zero means DefaultMaxLines; negative means no limit.
	MaxLines int
	// CollapseAt: a created (or deleted) directory with at least this
	// many created (deleted) entries below it is shown as one line with
	// counts and total size. Zero means DefaultCollapseAt; negative means
	// never collapse.
	CollapseAt int
	// Home, when set, is shown as ~ at the start of paths under it.
	Home string
}

// WriteSummary writes a summary of cs for people: a line of totals, then
// the changes grouped by directory, one line each, with large new or
// deleted trees collapsed into one line, sizes, and mode, owner, type and
// symlink target changes spelled out. Every name is escaped and quoted
// with Quote, so nothing in a file name can reach the terminal as a
// control sequence. The output is bounded by opts.MaxLines whatever the
// size of cs. cs is not modified.
func WriteSummary(w io.Writer, cs *ChangeSet, opts SummaryOptions) error {
	if opts.MaxLines == 0 {
		opts.MaxLines = DefaultMaxLines
	}
	if opts.CollapseAt == 0 {
		opts.CollapseAt = DefaultCollapseAt
	}
	opts.Home = strings.TrimSuffix(opts.Home, "/")
	bw := bufio.NewWriter(w)
	var changes []*Change
	if cs != nil {
		changes = sortedTree(cs.Changes)
	}
	writeTotals(bw, changes, opts.Width)

	items := collectItems(changes, opts.CollapseAt)
	lines, shown := 0, 0
	dir := "\x00" // no directory header written yet
	for _, it := range items {
		need := 1
		if it.parent != dir {
			need = 2
		}
		if opts.MaxLines > 0 && lines+need > opts.MaxLines {
			break
		}
		if it.parent != dir {
			bw.WriteString(truncateMiddle(displayDir(it.parent, opts.Home), opts.Width))
			bw.WriteByte('\n')
			dir = it.parent
		}
		bw.WriteString(itemLine(it, opts.Width))
		bw.WriteByte('\n')
		lines += need
		shown += 1 + it.below
	}
	if rest := len(changes) - shown; rest > 0 {
		fmt.Fprintf(bw, "... and %s more %s\n", commas(int64(rest)), plural(rest, "change", "changes"))
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	return nil
}

// sortedTree returns pointers to the changes in tree order: a directory is
// followed directly by everything below it.
func sortedTree(cs []Change) []*Change {
	out := make([]*Change, len(cs))
	for i := range cs {
		out[i] = &cs[i]
	}
	less := func(i, j int) bool { return treeLess(out[i].Path, out[j].Path) }
	if !sort.SliceIsSorted(out, less) {
		sort.SliceStable(out, less)
	}
	return out
}

// treeLess orders paths so that a directory's descendants directly follow
// it: like byte order, but with '/' before every other byte.
func treeLess(a, b string) bool {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		ca, cb := a[i], b[i]
		if ca == cb {
			continue
		}
		if ca == '/' {
			return true
		}
		if cb == '/' {
			return false
		}
		return ca < cb
	}
	return len(a) < len(b)
}

// collectItems turns changes in tree order into summary lines, grouped
// by parent directory, each group in name order.
func collectItems(changes []*Change, collapseAt int) []item {
	items := make([]item, 0, len(changes))
	for i := 0; i < len(changes); {
		it := nextItem(changes, i, collapseAt)
		it.parent = path.Dir(it.change.Path)
		items = append(items, it)
		i += 1 + it.below
	}
	sort.SliceStable(items, func(i, j int) bool {
		if items[i].parent != items[j].parent {
			return treeLess(items[i].parent, items[j].parent)
		}
		return items[i].change.Path < items[j].change.Path
	})
	return items
}

// item is one line of a summary: a change, possibly standing for a
// collapsed tree of below more changes of the same kind.
type item struct {
	change       *Change
	parent       string
	below        int   // changes collapsed into this line
	files, dirs  int   // of those, how many are directories and how many not
	bytes        int64 // total size of the collapsed non-directories
	collapsedDir bool
}

// nextItem returns the item starting at changes[i]: a collapsed tree when
// changes[i] is a created or deleted directory with at least collapseAt
// entries below it, all of the same kind, else the single change.
func nextItem(changes []*Change, i, collapseAt int) item {
	c := changes[i]
	it := item{change: c}
	obj := c.After
	if c.Kind == Deleted {
		obj = c.Before
	}
	if collapseAt < 0 || (c.Kind != Created && c.Kind != Deleted) || obj == nil || obj.Type != TypeDir {
		return it
	}
	prefix := c.Path
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	j := i + 1
	for ; j < len(changes) && strings.HasPrefix(changes[j].Path, prefix); j++ {
		d := changes[j]
		if d.Kind != c.Kind {
			return it
		}
		o := d.After
		if c.Kind == Deleted {
			o = d.Before
		}
		switch {
		case o != nil && o.Type == TypeDir:
			it.dirs++
		case o != nil:
			it.files++
			it.bytes += o.Size
		default:
			it.files++
		}
	}
	if j-i-1 < collapseAt {
		return item{change: c}
	}
	it.below = j - i - 1
	it.collapsedDir = true
	return it
}

// writeTotals writes the first line: how many changes of each kind.
func writeTotals(w *bufio.Writer, changes []*Change, width int) {
	if len(changes) == 0 {
		w.WriteString("no changes\n")
		return
	}
	counts := map[Kind]int{}
	for _, c := range changes {
		counts[c.Kind]++
	}
	var parts []string
	for _, k := range []Kind{Created, Modified, Deleted, Renamed, TypeChanged, MetaChanged} {
		if n := counts[k]; n > 0 {
			parts = append(parts, commas(int64(n))+" "+kindWord(k))
			delete(counts, k)
		}
	}
	if len(counts) > 0 { // kinds this version does not know
		n := 0
		for _, v := range counts {
			n += v
		}
		parts = append(parts, commas(int64(n))+" other")
	}
	line := fmt.Sprintf("%s %s: %s", commas(int64(len(changes))), plural(len(changes), "change", "changes"), strings.Join(parts, ", "))
	w.WriteString(truncateEnd(line, width))
	w.WriteByte('\n')
}

func kindWord(k Kind) string {
	switch k {
	case TypeChanged:
		return "type changed"
	case MetaChanged:
		return "metadata changed"
	}
	return Escape(string(k))
}

// verbWidth is the width of the verb column in item lines.
const verbWidth = 9

// itemLine renders one item, cut to width.
func itemLine(it item, width int) string {
	c := it.change
	verb, details := describe(it)
	name := Quote(path.Base(c.Path))
	if t := objType(c); t == TypeDir {
		name += "/"
	}
	prefix := "  " + verb + strings.Repeat(" ", max(1, verbWidth-len(verb)))
	sep := ""
	if details != "" {
		sep = "  "
	}
	line := prefix + name + sep + details
	if width < 1 || displayWidth(line) <= width {
		return line
	}
	if avail := width - len(prefix) - len(sep) - displayWidth(details); avail >= 12 {
		return prefix + truncateMiddle(name, avail) + sep + details
	}
	return truncateEnd(line, width)
}

// objType is the type of the object a change is about: after it, or
// before it for deletions.
func objType(c *Change) FileType {
	if c.After != nil {
		return c.After.Type
	}
	if c.Before != nil {
		return c.Before.Type
	}
	return TypeNone
}

// describe returns the verb and the details of an item.
func describe(it item) (verb, details string) {
	c := it.change
	switch c.Kind {
	case Created, Deleted:
		verb = string(c.Kind)
		obj := c.After
		if c.Kind == Deleted {
			obj = c.Before
		}
		if it.collapsedDir {
			parts := []string{commas(int64(it.files)) + " " + plural(it.files, "file", "files")}
			if it.dirs > 0 {
				parts = append(parts, commas(int64(it.dirs))+" "+plural(it.dirs, "dir", "dirs"))
			}
			parts = append(parts, humanBytes(it.bytes))
			return verb, "with " + strings.Join(parts, ", ")
		}
		return verb, objectDetails(obj)
	case Modified:
		var parts []string
		if c.Before != nil && c.After != nil {
			parts = append(parts, humanBytes(c.Before.Size)+" → "+humanBytes(c.After.Size))
		}
		parts = append(parts, metaDetails(c)...)
		return "modified", strings.Join(parts, ", ")
	case TypeChanged:
		return "replaced", objectDetails(c.Before) + " → " + objectDetails(c.After)
	case MetaChanged:
		return "changed", strings.Join(metaDetails(c), ", ")
	case Renamed:
		parts := []string{"from " + renamedFrom(c)}
		parts = append(parts, metaDetails(c)...)
		return "renamed", strings.Join(parts, ", ")
	}
	return Escape(string(c.Kind)), ""
}

// renamedFrom names where a renamed directory was: by its name when it
// stayed in the same directory, else by its whole path.
func renamedFrom(c *Change) string {
	from := c.From
	if path.Dir(from) == path.Dir(c.Path) {
		from = path.Base(from)
	}
	return Quote(from) + "/"
}

// objectDetails spells out one object: a file's size, a symlink's target,
// or its type.
func objectDetails(o *Object) string {
	if o == nil {
		return "nothing"
	}
	switch o.Type {
	case TypeFile:
		return humanBytes(o.Size)
	case TypeDir:
		return "directory"
	case TypeSymlink:
		return "symlink → " + Quote(o.Target)
	case TypeNone:
		return "unknown"
	}
	return Escape(string(o.Type))
}

// metaDetails spells out the metadata differences of a change: the ones
// named in c.Meta, or when it is empty, the ones visible in Before and
// After.
func metaDetails(c *Change) []string {
	meta := c.Meta
	b, a := c.Before, c.After
	if len(meta) == 0 && b != nil && a != nil {
		if permBits(b.Mode) != permBits(a.Mode) {
			meta = append(meta, "mode")
		}
		if b.UID != a.UID || b.GID != a.GID {
			meta = append(meta, "owner")
		}
		if b.Target != a.Target {
			meta = append(meta, "target")
		}
	}
	var out []string
	for _, m := range meta {
		switch {
		case m == "mode" && b != nil && a != nil:
			out = append(out, "mode "+permString(b.Mode)+" → "+permString(a.Mode))
		case m == "owner" && b != nil && a != nil:
			out = append(out, fmt.Sprintf("owner %d:%d → %d:%d", b.UID, b.GID, a.UID, a.GID))
		case m == "target" && b != nil && a != nil:
			out = append(out, "target "+Quote(b.Target)+" → "+Quote(a.Target))
		case m == "xattr":
			out = append(out, "extended attributes")
		case m == "mtime":
			out = append(out, "times")
		default:
			out = append(out, Escape(m))
		}
	}
	return out
}

// permBits returns the permission, setuid, setgid and sticky bits of m,
// accepting both Go's fs.FileMode flags and the Unix octal bits.
func permBits(m fs.FileMode) uint32 {
	v := uint32(m & 0o7777)
	if m&fs.ModeSetuid != 0 {
		v |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		v |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		v |= 0o1000
	}
	return v
}

// permString renders permission bits like ls does: rwxr-sr-t.
func permString(m fs.FileMode) string {
	v := permBits(m)
	b := []byte("rwxrwxrwx")
	for i := 0; i < 9; i++ {
		if v&(1<<uint(8-i)) == 0 {
			b[i] = '-'
		}
	}
	special := func(bit uint32, i int, set, unset byte) {
		if v&bit != 0 {
			if b[i] == 'x' {
				b[i] = set
			} else {
				b[i] = unset
			}
		}
	}
	special(0o4000, 2, 's', 'S')
	special(0o2000, 5, 's', 'S')
	special(0o1000, 8, 't', 'T')
	return string(b)
}

// displayDir renders a directory for a group header: quoted, with home
// shown as ~, ending in a slash.
func displayDir(dir, home string) string {
	if home != "" && home != "/" {
		if dir == home {
			return "~/"
		}
		if rest, ok := strings.CutPrefix(dir, home+"/"); ok {
			return "~/" + Quote(rest) + "/"
		}
	}
	if dir == "/" {
		return "/"
	}
	return Quote(dir) + "/"
}

// humanBytes renders a size in decimal units: 512 B, 1.2 kB, 88 MB.
func humanBytes(n int64) string {
	if n < 0 {
		return "? B"
	}
	if n < 1000 {
		return strconv.FormatInt(n, 10) + " B"
	}
	units := []string{"kB", "MB", "GB", "TB", "PB", "EB"}
	f := float64(n)
	u := -1
	for f >= 999.95 && u < len(units)-1 {
		f /= 1000
		u++
	}
	if f < 9.95 {
		return strconv.FormatFloat(f, 'f', 1, 64) + " " + units[u]
	}
	return strconv.FormatFloat(f, 'f', 0, 64) + " " + units[u]
}

// commas renders n with thousands separators: 2,341.
func commas(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := ""
	if n < 0 {
		neg, s = "-", s[1:]
	}
	if len(s) <= 3 {
		return neg + s
	}
	var b strings.Builder
	head := len(s) % 3
	if head > 0 {
		b.WriteString(s[:head])
	}
	for i := head; i < len(s); i += 3 {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(s[i : i+3])
	}
	return neg + b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
