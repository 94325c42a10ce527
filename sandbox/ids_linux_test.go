package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/nash-shell/nash/internal/sandboxinit"
)

// TestRootOwnedParents writes in a directory the user owns below one of
// root's that the overlay would have to copy up (/var/tmp below the
// overlay of /var): as the working directory, and as a path the script
// names from elsewhere. As an ordinary user this took planting the
// root-owned parents in the upper dir; as root it always worked. Either
// way the run must do what it does outside, and the summary must not
// name the parents.
func TestRootOwnedParents(t *testing.T) {
	base := rootOwnedBase(t)
	dir, err := os.MkdirTemp(base, "nash-parents-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.WriteFile(filepath.Join(dir, "old"), []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	orig := snapshot(t, dir)

	var warned []Warning
	e := newEnv(t, Dir(dir), Warn(func(ws []Warning) { warned = append(warned, ws...) }))
	e.work = dir
	p := e.run("echo new > new && echo more >> old && mkdir sub && touch sub/f && chmod 700 sub")
	if p.ExitCode != 0 {
		t.Fatalf("exit %d; stderr: %s", p.ExitCode, e.stderr.String())
	}
	got := kinds(p, dir)
	want := []string{"new created", "old modified", "sub created", "sub/f created"}
	if !slices.Equal(got, want) {
		t.Errorf("changes:\n got %q\nwant %q", got, want)
	}
	if len(warned) > 0 {
		t.Errorf("warnings: %v", warned)
	}
	tx := e.commit(p)
	if b, err := os.ReadFile(filepath.Join(dir, "old")); err != nil || string(b) != "old\nmore\n" {
		t.Errorf("old after commit: %q, %v", b, err)
	}
	e.undo(tx.ID)
	if d := diffTrees(orig, snapshot(t, dir)); d != "" {
		t.Errorf("after undo:\n%s", d)
	}

	// Named by a script that runs elsewhere.
	e2 := newEnv(t)
	p = e2.run("echo from-elsewhere > " + filepath.Join(dir, "named"))
	if p.ExitCode != 0 {
		t.Fatalf("exit %d; stderr: %s", p.ExitCode, e2.stderr.String())
	}
	if got := kinds(p, dir); !slices.Equal(got, []string{"named created"}) {
		t.Errorf("changes: %q", got)
	}
	_ = e2.sb.Abort(p.ID)
}

// rootOwnedBase is a directory of root's, writable by all, that lies
// below the top of an overlay: /var/tmp on the machines nash is tested
// on, where /var is one overlay.
func rootOwnedBase(t *testing.T) string {
	t.Helper()
	const base = "/var/tmp"
	var st unix.Stat_t
	if err := unix.Stat(base, &st); err != nil || st.Uid != 0 {
		t.Fatalf("%s: want a directory of root's: %v", base, err)
	}
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	mounts, err := parseMountinfo(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	plan, err := buildPlan(mounts, osView{})
	if err != nil {
		t.Fatal(err)
	}
	if li := layerOf(plan.Layers, base); li < 0 || plan.Layers[li].Point == base {
		t.Fatalf("%s is not below the top of an overlay here: the test needs one", base)
	}
	return base
}

// TestPermissionsOfRootOwnedParents checks that the directories of root's
// that stand in the upper dir for the user (overlay tops, planted
// parents) let the user do there what they can outside, no more.
func TestPermissionsOfRootOwnedParents(t *testing.T) {
	base := rootOwnedBase(t)
	parent := filepath.Dir(base) // /var: root's, not writable by others
	dir, err := os.MkdirTemp(base, "nash-perms-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	script := "mkdir " + filepath.Join(parent, "nash-perm-probe") + " 2>/dev/null; echo mkdir-parent=$?; touch " + filepath.Join(base, "nash-perm-probe") + "; echo touch-base=$?; rm -f " + filepath.Join(base, "nash-perm-probe")
	cmd := execCommand("bash", "-c", script)
	cmd.Dir = dir
	want, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("native: %v\n%s", err, want)
	}
	_ = os.Remove(filepath.Join(parent, "nash-perm-probe"))
	e := newEnv(t, Dir(dir))
	p := e.run(script)
	if got := e.stdout.String(); got != string(want) {
		t.Errorf("in the sandbox:\n%s\noutside:\n%s", got, want)
	}
	_ = e.sb.Abort(p.ID)
}

// TestSupplementaryGroups writes in a setgid directory whose group is one
// of the user's supplementary groups, and appends to a file of that group,
// with newgidmap (when the system maps the group, as CI's does: see
// scripts/test-unprivileged.sh) and without it, where nash must say
// before the run what the script cannot change. As root every group is
// mapped, and the case runs with a group root is not in.
func TestSupplementaryGroups(t *testing.T) {
	gid, mapped := teamGroup(t)
	setup := func(t *testing.T) string {
		dir := filepath.Join(t.TempDir(), "team")
		if err := os.Mkdir(dir, 0o775); err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, "shared")
		if err := os.WriteFile(f, []byte("shared\n"), 0o664); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{dir, f} {
			if err := os.Lchown(p, -1, gid); err != nil {
				t.Fatal(err)
			}
		}
		if err := unix.Chmod(dir, 0o2775); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	const script = "echo more >> shared && echo new > new && mkdir sub && stat -c '%n %g' new sub"
	native := func(t *testing.T) string {
		dir := setup(t)
		cmd := execCommand("bash", "-c", script)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("native: %v\n%s", err, out)
		}
		return string(out)
	}
	t.Run("mapped", func(t *testing.T) {
		if !mapped {
			if os.Getenv("CI") != "" {
				t.Fatal("the system does not map the group for this user (no newgidmap, or no /etc/subgid line); scripts/test-unprivileged.sh and .ci/run set both up")
			}
			t.Skip("the system does not map the group for this user (no newgidmap, or no /etc/subgid line)")
		}
		want := native(t)
		dir := setup(t)
		var warned []Warning
		e := newEnv(t, Dir(dir), Warn(func(ws []Warning) { warned = append(warned, ws...) }))
		e.work = dir
		p := e.run(script)
		if p.ExitCode != 0 || e.stdout.String() != want {
			t.Fatalf("exit %d, output %q (outside: %q); stderr: %s", p.ExitCode, e.stdout.String(), want, e.stderr.String())
		}
		if len(warned) > 0 {
			t.Errorf("warnings: %v", warned)
		}
		e.commit(p)
		for _, n := range []string{"new", "sub"} {
			var st unix.Stat_t
			if err := unix.Lstat(filepath.Join(dir, n), &st); err != nil || int(st.Gid) != gid {
				t.Errorf("%s: group %d, want %d (%v)", n, st.Gid, gid, err)
			}
		}
	})
	t.Run("without newgidmap", func(t *testing.T) {
		dir := setup(t)
		var warned []Warning
		e := newEnv(t, Dir(dir), Warn(func(ws []Warning) { warned = append(warned, ws...) }))
		e.sb.newgidmap = "-"
		p := e.run(script)
		if os.Getuid() == 0 {
			// Root's sandbox maps every group without newgidmap.
			if p.ExitCode != 0 || len(warned) > 0 {
				t.Errorf("as root: exit %d, warnings %v; stderr: %s", p.ExitCode, warned, e.stderr.String())
			}
			return
		}
		var paths []string
		for _, w := range warned {
			paths = append(paths, w.Path)
			if !strings.Contains(w.Reason, "subgid") {
				t.Errorf("%s: the reason does not say how to map the group: %s", w.Path, w.Reason)
			}
		}
		if !slices.Equal(paths, []string{dir, filepath.Join(dir, "shared")}) {
			t.Errorf("warned about %q; want the directory and the file", paths)
		}
	})
}

// teamGroup returns a group to test with, and whether this user's sandbox
// maps it: for root any group; for an ordinary user one of their
// supplementary groups, mapped when newgidmap and /etc/subgid allow.
func teamGroup(t *testing.T) (int, bool) {
	if os.Getuid() == 0 {
		return 4242, true
	}
	sb := &Sandbox{}
	m := sb.userIDs()
	if len(m.groups) == 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("this user has no supplementary group; scripts/test-unprivileged.sh gives the test user one")
		}
		t.Skip("this user has no supplementary group to test with")
	}
	g := m.groups[0]
	if len(m.extra) > 0 {
		g = m.extra[0]
	}
	return g, slices.Contains(m.extra, g)
}

func TestSubordinate(t *testing.T) {
	f := filepath.Join(t.TempDir(), "subgid")
	body := "ann:100000:65536\nann:1002:1\n1001:2000:10\nbob:1003:1\nbad line\nann:x:1\n"
	if err := os.WriteFile(f, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		uid  int
		ids  []int
		want []int
	}{
		{"ann", 1001, []int{1002, 1003, 2005, 100001, 7}, []int{1002, 2005, 100001}},
		{"bob", 1005, []int{1002, 1003}, []int{1003}},
		{"", 1001, []int{2000, 1002}, []int{2000}},
		{"carl", 9, []int{1002}, nil},
	} {
		if got := subordinate(f, c.name, c.uid, c.ids); !slices.Equal(got, c.want) {
			t.Errorf("%s/%d %v: got %v, want %v", c.name, c.uid, c.ids, got, c.want)
		}
	}
}

func TestPlantMakesUnmappedParents(t *testing.T) {
	// A fake layer over a tree whose middle directory has an owner this
	// user's sandbox does not map (root's /var/tmp stands in for it).
	base := rootOwnedBase(t)
	leaf, err := os.MkdirTemp(base, "nash-plant-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(leaf) })
	upper := t.TempDir()
	point := filepath.Dir(base)
	layers := []sandboxinit.Layer{{Point: point, Upper: upper}}
	m := &ids{uid: os.Getuid() + 1, gid: os.Getgid() + 1} // nothing here is mapped
	if os.Getuid() != 0 {
		m = &ids{uid: os.Getuid(), gid: os.Getgid()}
	}
	planted, err := plant(layers, []string{filepath.Join(leaf, "new-file")}, m, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// As after a run, the user gets their access to the upper dir back
	// (and the test can remove it).
	t.Cleanup(func() { openUppers(layers, planted) })
	want := []string{base}
	if os.Getuid() == 0 {
		want = []string{base, leaf} // the leaf's owner is not mapped either
	}
	if !slices.Equal(planted, want) {
		t.Errorf("planted %q, want %q", planted, want)
	}
	var st unix.Stat_t
	if err := unix.Lstat(filepath.Join(upper, filepath.Base(base)), &st); err != nil || !isDir(&st) {
		t.Fatalf("no planted directory in the upper dir: %v", err)
	}
	if bits := st.Mode & 0o700; bits != accessBits(base) {
		t.Errorf("planted %s has owner bits %o; the user may do %o there", base, bits, accessBits(base))
	}
}
