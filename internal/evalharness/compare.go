package evalharness

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/internal/intercode"
)

// maxDiffs is how many differences a reason names.
const maxDiffs = 3

// compare describes how run b differs from run a, or returns "" when they
// are equivalent (see the package doc) under judge j. a ran the gold of
// task t, b ran script (as the benchmark writes it); na and nb name the
// runs.
func (h *harness) compare(ctx context.Context, j Judge, t intercode.Task, script string, a, b *execution, na, nb string) (string, error) {
	var diffs []string
	switch {
	case a.timedOut && b.timedOut:
		return "", nil
	case a.timedOut:
		return fmt.Sprintf("the %s command timed out after %s", na, h.timeout), nil
	case b.timedOut:
		return fmt.Sprintf("the %s command timed out after %s", nb, h.timeout), nil
	}
	fd, err := h.compareChanges(a, b, na, nb)
	if err != nil {
		return "", err
	}
	diffs = append(diffs, fd...)
	switch {
	case j.Name() == "exact" || !a.output.whole || !b.output.whole:
		// The exact comparison, also the only one possible for outputs
		// past the kept head.
		if d := compareOutput(a.output, b.output); d != "" {
			diffs = append(diffs, fmt.Sprintf("output differs: %s %s, %s %s", na, describe(a.output, d, h.show), nb, describe(b.output, d, h.show)))
		}
	case len(fd) == 0:
		// Other judges see the outputs only once the changes match.
		why, err := j.Same(ctx, Outputs{
			Query: t.Query, Gold: t.Gold, Predicted: script,
			GoldOutput:      h.showOutput(normalize(a.output.head)),
			PredictedOutput: h.showOutput(normalize(b.output.head)),
			Changed:         h.changedPaths(a),
			Exists:          h.exists,
		})
		if err != nil {
			return "", err
		}
		if why != "" {
			diffs = append(diffs, fmt.Sprintf("output differs (%s judge: %s): %s %s, %s %s", j.Name(), why,
				na, describe(a.output, "", h.show), nb, describe(b.output, "", h.show)))
		}
	}
	if len(diffs) == 0 {
		return "", nil
	}
	if len(diffs) > maxDiffs {
		diffs = append(diffs[:maxDiffs], fmt.Sprintf("and %d more", len(diffs)-maxDiffs))
	}
	msg := strings.Join(diffs, "; ")
	if a.exitCode != b.exitCode {
		msg += fmt.Sprintf(" (%s exited %d, %s %d)", na, a.exitCode, nb, b.exitCode)
	}
	return msg, nil
}

// changedPaths lists the paths a run changed (those compare looks at), as
// the benchmark names them.
func (h *harness) changedPaths(e *execution) []string {
	var out []string
	changes, _ := relevant(e.changes)
	for p := range changes {
		out = append(out, path.Clean(h.show(p)))
	}
	slices.Sort(out)
	return out
}

// exists reports whether path p, as the benchmark names it, exists on the
// fixture as built (runs never change it).
func (h *harness) exists(p string) bool {
	_, err := os.Lstat(intercode.Map(p, h.base))
	return err == nil
}

// showOutput is show for a run's output: it also removes the fixture's
// root written without its leading slash, as tar writes member names.
func (h *harness) showOutput(s string) string {
	return strings.ReplaceAll(h.show(s), strings.TrimPrefix(h.base, "/")+"/", "")
}

// relevant drops what the comparison ignores: directories whose only
// change is their modification time. A renamed directory is spelled out as
// the deletions and creations a copy and a delete would have recorded, so
// that mv and cp -r && rm -r, which end with the same tree, compare equal;
// origins maps each created path whose bytes are still those of the
// fixture to the fixture path they come from.
func relevant(cs *effects.ChangeSet) (out map[string]effects.Change, origins map[string]string) {
	out, origins = map[string]effects.Change{}, map[string]string{}
	byPath := map[string]effects.Change{}
	for _, c := range cs.Changes {
		byPath[c.Path] = c
	}
	keep := func(c effects.Change) {
		if c.Kind == effects.MetaChanged && c.After != nil && c.After.Type == effects.TypeDir &&
			len(c.Meta) == 1 && c.Meta[0] == "mtime" {
			return
		}
		out[c.Path] = c
	}
	for _, c := range cs.Changes {
		if c.Kind != effects.Renamed {
			keep(c)
		}
	}
	for _, c := range cs.Changes {
		if c.Kind != effects.Renamed {
			continue
		}
		if _, ok := byPath[c.From]; !ok {
			out[c.From] = effects.Change{Path: c.From, Kind: effects.Deleted, Before: c.Before}
		}
		out[c.Path] = effects.Change{Path: c.Path, Kind: effects.Created, After: c.After}
		// The source still holds what was moved: runs never change it.
		_ = filepath.WalkDir(c.From, func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == c.From {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return nil
			}
			obj := objectOf(p, info)
			if _, ok := byPath[p]; !ok {
				out[p] = effects.Change{Path: p, Kind: effects.Deleted, Before: obj}
			}
			moved := filepath.Join(c.Path, strings.TrimPrefix(p, c.From+"/"))
			switch below, ok := byPath[moved]; {
			case !ok:
				out[moved] = effects.Change{Path: moved, Kind: effects.Created, After: obj}
				origins[moved] = p
			case below.Kind == effects.Deleted:
				delete(out, moved)
			default:
				out[moved] = effects.Change{Path: moved, Kind: effects.Created, After: below.After}
			}
			return nil
		})
	}
	return out, origins
}

// objectOf describes the file at p as a change set would.
func objectOf(p string, info fs.FileInfo) *effects.Object {
	o := &effects.Object{Type: effects.FileTypeOf(info.Mode()), Size: info.Size(), Mode: info.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)}
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		o.UID, o.GID = int(st.Uid), int(st.Gid)
	}
	if info.Mode()&fs.ModeSymlink != 0 {
		o.Target, _ = os.Readlink(p)
	}
	return o
}

// compareChanges lists the differences between two runs' file system
// changes.
func (h *harness) compareChanges(a, b *execution, na, nb string) ([]string, error) {
	ca, originA := relevant(a.changes)
	cb, originB := relevant(b.changes)
	var paths []string
	for p := range ca {
		paths = append(paths, p)
	}
	for p := range cb {
		if _, ok := ca[p]; !ok {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	var diffs []string
	for _, p := range paths {
		x, inA := ca[p]
		y, inB := cb[p]
		switch {
		case !inB:
			diffs = append(diffs, fmt.Sprintf("%s %s %s, %s did not", na, x.Kind, h.show(p), nb))
			continue
		case !inA:
			diffs = append(diffs, fmt.Sprintf("%s %s %s, %s did not", nb, y.Kind, h.show(p), na))
			continue
		case x.Kind != y.Kind:
			diffs = append(diffs, fmt.Sprintf("%s: %s by %s, %s by %s", h.show(p), x.Kind, na, y.Kind, nb))
			continue
		}
		if d := compareObjects(x.After, y.After); d != "" {
			diffs = append(diffs, fmt.Sprintf("%s: %s", h.show(p), d))
			continue
		}
		if x.After == nil || x.After.Type != effects.TypeFile {
			continue
		}
		fa, okA := a.newVersion(p)
		if o, moved := originA[p]; moved {
			fa, okA = o, true
		}
		fb, okB := b.newVersion(p)
		if o, moved := originB[p]; moved {
			fb, okB = o, true
		}
		if !okA || !okB {
			return nil, fmt.Errorf("compare %s: the new version of a changed file is missing", p)
		}
		same, err := sameFile(fa, fb)
		if err != nil {
			return nil, fmt.Errorf("compare %s: %w", p, err)
		}
		if !same {
			diffs = append(diffs, fmt.Sprintf("%s: contents differ", h.show(p)))
		}
	}
	return diffs, nil
}

// compareObjects describes how two after-states differ in type,
// permissions, owner or symlink target.
func compareObjects(x, y *effects.Object) string {
	switch {
	case x == nil && y == nil:
		return ""
	case x == nil || y == nil:
		return "one exists afterwards, the other does not"
	case x.Type != y.Type:
		return fmt.Sprintf("becomes a %s in one run, a %s in the other", x.Type, y.Type)
	case x.Mode != y.Mode:
		return fmt.Sprintf("mode %v in one run, %v in the other", x.Mode, y.Mode)
	case x.UID != y.UID || x.GID != y.GID:
		return fmt.Sprintf("owner %d:%d in one run, %d:%d in the other", x.UID, x.GID, y.UID, y.GID)
	case x.Target != y.Target:
		return fmt.Sprintf("links to %q in one run, %q in the other", x.Target, y.Target)
	}
	return ""
}

// sameFile reports whether two files hold the same bytes.
func sameFile(a, b string) (bool, error) {
	fa, err := os.Open(a)
	if err != nil {
		return false, err
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		return false, err
	}
	defer fb.Close()
	sa, err := fa.Stat()
	if err != nil {
		return false, err
	}
	sb, err := fb.Stat()
	if err != nil {
		return false, err
	}
	if sa.Size() != sb.Size() {
		return false, nil
	}
	ba, bb := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		na, ea := io.ReadFull(fa, ba)
		nb, eb := io.ReadFull(fb, bb)
		if !bytes.Equal(ba[:na], bb[:nb]) {
			return false, nil
		}
		if ea != nil || eb != nil {
			if (ea == io.EOF || ea == io.ErrUnexpectedEOF) && (eb == io.EOF || eb == io.ErrUnexpectedEOF) {
				return true, nil
			}
			if ea != nil && ea != io.EOF && ea != io.ErrUnexpectedEOF {
				return false, ea
			}
			if eb != nil && eb != io.EOF && eb != io.ErrUnexpectedEOF {
				return false, eb
			}
			return false, nil
		}
	}
}

// normalize removes trailing spaces, tabs and carriage returns from every
// line and drops trailing empty lines.
func normalize(b []byte) string {
	lines := strings.Split(string(b), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t\r")
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n")
}

// compareOutput returns "" when two outputs are equivalent, else the first
// line where they differ, as "line N", or "size" when only length and hash
// can tell.
func compareOutput(a, b captured) string {
	if !a.whole || !b.whole {
		if a.n == b.n && a.sum == b.sum {
			return ""
		}
		return "size"
	}
	x, y := normalize(a.head), normalize(b.head)
	if x == y {
		return ""
	}
	lx, ly := strings.Split(x, "\n"), strings.Split(y, "\n")
	for i := 0; ; i++ {
		if i >= len(lx) || i >= len(ly) || lx[i] != ly[i] {
			return fmt.Sprintf("line %d", i+1)
		}
	}
}

// describe summarises an output for a reason: its line count and the line
// where a difference was found, passed through show.
func describe(c captured, where string, show func(string) string) string {
	if !c.whole {
		return fmt.Sprintf("%d bytes", c.n)
	}
	s := normalize(c.head)
	if s == "" {
		return "printed nothing"
	}
	lines := strings.Split(s, "\n")
	var n int
	if _, err := fmt.Sscanf(where, "line %d", &n); err != nil || n < 1 {
		return fmt.Sprintf("%d line(s)", len(lines))
	}
	if n > len(lines) {
		return fmt.Sprintf("%d line(s), nothing at line %d", len(lines), n)
	}
	return fmt.Sprintf("%d line(s), line %d %q", len(lines), n, clip(show(lines[n-1]), 100))
}
