package sandbox

import (
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/nash-shell/nash/internal/sandboxinit"
)

// kernelFS are file systems that are interfaces to the kernel, not storage:
// they are bound read-only, never overlaid.
var kernelFS = map[string]bool{
	"proc": true, "sysfs": true, "cgroup": true, "cgroup2": true, "devpts": true,
	"mqueue": true, "bpf": true, "debugfs": true, "tracefs": true, "securityfs": true,
	"pstore": true, "configfs": true, "fusectl": true, "binfmt_misc": true,
	"autofs": true, "efivarfs": true, "hugetlbfs": true, "nsfs": true, "devtmpfs": true,
}

// hostView is the part of the host file system the planner reads; tests fake it.
type hostView interface {
	ReadDir(dir string) ([]fs.DirEntry, error)
	Readlink(p string) (string, error)
	Lstat(p string) (fs.FileInfo, error)
}

type osView struct{}

func (osView) ReadDir(d string) ([]fs.DirEntry, error) { return os.ReadDir(d) }
func (osView) Readlink(p string) (string, error)       { return os.Readlink(p) }
func (osView) Lstat(p string) (fs.FileInfo, error)     { return os.Lstat(p) }

// buildPlan decides, for every part of the host tree, how it appears in the
// sandbox. A directory with no mount below it is overlaid (or bound
// read-only when its mount is read-only or a kernel interface). A directory
// with mounts below cannot be an overlay lower in a user namespace (its
// children are locked), so it becomes a read-only skeleton whose entries are
// planned one by one.
func buildPlan(mounts []mountEntry, host hostView) (*sandboxinit.Plan, error) {
	p := &sandboxinit.Plan{}
	points := make([]string, 0, len(mounts))
	byPoint := map[string]mountEntry{}
	for _, m := range mounts {
		points = append(points, m.Point)
		byPoint[m.Point] = m
	}
	sort.Strings(points)
	b := planner{p: p, points: points, byPoint: byPoint, host: host}
	if err := b.visit("/"); err != nil {
		return nil, err
	}
	return p, nil
}

type planner struct {
	p       *sandboxinit.Plan
	points  []string
	byPoint map[string]mountEntry
	host    hostView
}

// mountOf returns the mount that holds dir.
func (b *planner) mountOf(dir string) mountEntry {
	best := mountEntry{Point: "/"}
	for _, pt := range b.points {
		if under(dir, pt) && len(pt) >= len(best.Point) {
			best = b.byPoint[pt]
		}
	}
	return best
}

// hasMountBelow reports whether a mount point lies strictly below dir.
func (b *planner) hasMountBelow(dir string) bool {
	for _, pt := range b.points {
		if pt != dir && under(pt, dir) {
			return true
		}
	}
	return false
}

func (b *planner) visit(dir string) error {
	switch dir {
	case "/proc":
		b.p.Ops = append(b.p.Ops, sandboxinit.Op{Kind: sandboxinit.OpProc, Path: dir})
		return nil
	case "/sys":
		b.p.Ops = append(b.p.Ops, sandboxinit.Op{Kind: sandboxinit.OpSys, Path: dir})
		return nil
	case "/dev":
		op := sandboxinit.Op{Kind: sandboxinit.OpDev, Path: dir, Layer: -1}
		if fi, err := b.host.Lstat("/dev/shm"); err == nil && fi.IsDir() && !b.hasMountBelow("/dev/shm") {
			op.Layer = b.addLayer("/dev/shm")
		}
		b.p.Ops = append(b.p.Ops, op)
		return nil
	}
	if !b.hasMountBelow(dir) {
		m := b.mountOf(dir)
		if m.ReadOnly || kernelFS[m.FSType] {
			b.p.Ops = append(b.p.Ops, sandboxinit.Op{Kind: sandboxinit.OpBindRO, Path: dir})
			b.p.ReadOnly = append(b.p.ReadOnly, dir)
			return nil
		}
		b.p.Ops = append(b.p.Ops, sandboxinit.Op{Kind: sandboxinit.OpOverlay, Path: dir, Layer: b.addLayer(dir)})
		return nil
	}
	fi, err := b.host.Lstat(dir)
	if err != nil {
		return nil // vanished or unreadable: it simply does not appear
	}
	b.p.Ops = append(b.p.Ops, sandboxinit.Op{Kind: sandboxinit.OpDir, Path: dir, Mode: uint32(fi.Mode().Perm())})
	b.p.ReadOnly = append(b.p.ReadOnly, strings.TrimSuffix(dir, "/")+"/ (new entries)")
	entries, err := b.host.ReadDir(dir)
	if err != nil {
		return nil // an unreadable sealed directory stays empty, as it looks to the user
	}
	for _, e := range entries {
		child := path.Join(dir, e.Name())
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			t, err := b.host.Readlink(child)
			if err != nil {
				continue
			}
			b.p.Ops = append(b.p.Ops, sandboxinit.Op{Kind: sandboxinit.OpSymlink, Path: child, Target: t})
		case e.IsDir():
			if err := b.visit(child); err != nil {
				return err
			}
		default:
			b.p.Ops = append(b.p.Ops, sandboxinit.Op{Kind: sandboxinit.OpBindRO, Path: child, File: true})
			b.p.ReadOnly = append(b.p.ReadOnly, child)
		}
	}
	return nil
}

func (b *planner) addLayer(point string) int {
	b.p.Layers = append(b.p.Layers, sandboxinit.Layer{Point: point})
	return len(b.p.Layers) - 1
}

// under reports whether p is root or below it.
func under(p, root string) bool {
	if root == "/" {
		return strings.HasPrefix(p, "/")
	}
	return p == root || strings.HasPrefix(p, root+"/")
}
