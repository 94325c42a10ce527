package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// edgeCase is a script run natively on a copy of the setup and in the
// sandbox; after commit the two trees must be identical, after undo the
// tree must be the setup again, after redo the native result again.
type edgeCase struct {
	name   string
	setup  string
	script string
	want   []string // "path kind", sorted by path; nil: not checked
	count  int      // number of changes, when want is too long to spell
	check  func(t *testing.T, work string)
}

func TestEdgeCases(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cases := []edgeCase{
		{name: "directory rename", setup: "mkdir -p d/sub && echo f > d/sub/f && echo g > d/g", script: "mv d d2",
			want: []string{"d2 renamed"}},
		{name: "file replaced by directory", setup: "echo x > f", script: "rm f && mkdir f && echo y > f/g",
			want: []string{"f type_changed", "f/g created"}},
		{name: "directory replaced by file", setup: "mkdir d && echo a > d/a", script: "rm -r d && echo file > d",
			want: []string{"d type_changed", "d/a deleted"}},
		{name: "tree deleted and recreated (opaque)", setup: "mkdir t && echo a > t/a && echo b > t/b", script: "rm -rf t && mkdir t && echo new > t/a",
			want: []string{"t/a modified", "t/b deleted"}},
		{name: "new hard link", setup: "echo a > a", script: "ln a b", want: []string{"b created"},
			check: func(t *testing.T, w string) { sameInode(t, filepath.Join(w, "a"), filepath.Join(w, "b"), true) }},
		{name: "hard link new pair", script: "echo a > a && ln a b", want: []string{"a created", "b created"},
			check: func(t *testing.T, w string) { sameInode(t, filepath.Join(w, "a"), filepath.Join(w, "b"), true) }},
		{name: "file with hard links modified", setup: "echo a > a && ln a a2", script: "echo more >> a", want: []string{"a modified"},
			check: func(t *testing.T, w string) { sameInode(t, filepath.Join(w, "a"), filepath.Join(w, "a2"), true) }},
		{name: "symlinks dangling, looping, outside", setup: "echo t > target",
			script: "ln -s nowhere dangling && ln -s l1 l2 && ln -s l2 l1 && ln -s /etc/passwd outside && ln -s target rel",
			want:   []string{"dangling created", "l1 created", "l2 created", "outside created", "rel created"}},
		{name: "symlink retargeted", setup: "ln -s a l", script: "ln -sfn b l", want: []string{"l meta_changed"}},
		{name: "chmod only", setup: "echo x > f && chmod 644 f", script: "chmod 600 f", want: []string{"f meta_changed"}},
		{name: "touch only", setup: "echo x > f", script: "touch -d '2001-02-03 04:05:06' f", want: []string{"f meta_changed"}},
		{name: "directory mode", setup: "mkdir d && chmod 755 d", script: "chmod 700 d", want: []string{"d meta_changed"}},
		{name: "content and mode", setup: "echo x > f", script: "echo y > f && chmod 600 f", want: []string{"f modified"}},
		{name: "fifo", script: "mkfifo p", want: []string{"p created"}},
		{name: "empty files", setup: "echo x > full", script: ": > empty && : > full", want: []string{"empty created", "full modified"}},
		{name: "file rename", setup: "echo a > a", script: "mv a b", want: []string{"a deleted", "b created"}},
		{name: "nested new dirs", script: "mkdir -p x/y/z && echo q > x/y/z/q", want: []string{"x created", "x/y created", "x/y/z created", "x/y/z/q created"}},
		{name: "opened but unchanged", setup: "echo a > a", script: "exec 3<>a; cat a >/dev/null", want: []string{}},
		{name: "read-only file deleted", setup: "echo x > r && chmod 444 r", script: "rm -f r", want: []string{"r deleted"}},
		{name: "2 GiB sparse file", script: "truncate -s 2G big", want: []string{"big created"},
			check: func(t *testing.T, w string) {
				var st unix.Stat_t
				if err := unix.Stat(filepath.Join(w, "big"), &st); err != nil {
					t.Fatal(err)
				}
				if st.Size != 2<<30 || st.Blocks*512 > 1<<20 {
					t.Errorf("big: size %d, %d bytes allocated; want 2 GiB, still sparse", st.Size, st.Blocks*512)
				}
			}},
		{name: "hostile names", script: `touch $'nl\nname' $'\e[31mred' $'\xff\xfe' $'rtl\u202egnp.exe' "$(printf 'x%.0s' $(seq 200))"`, count: 5},
		{name: "xattr", setup: "echo x > f", script: "NASH_TEST_SETXATTR=f=user.color=blue " + self, want: []string{"f meta_changed"},
			check: func(t *testing.T, w string) {
				buf := make([]byte, 16)
				n, err := unix.Lgetxattr(filepath.Join(w, "f"), "user.color", buf)
				if err != nil || string(buf[:n]) != "blue" {
					t.Errorf("xattr user.color = %q, %v; want blue", buf[:n], err)
				}
			}},
		{name: "10,000 files in a new directory", script: "mkdir many && cd many && for i in $(seq 10000); do : > f$i; done", count: 10001},
		{name: "10,000 files in the working directory", script: "for i in $(seq 10000); do : > f$i; done", count: 10000},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if testing.Short() && strings.HasPrefix(c.name, "10,000") {
				t.Skip("large case: runs without -short")
			}
			runEdgeCase(t, c)
		})
	}
}

func runEdgeCase(t *testing.T, c edgeCase) {
	e := newEnv(t)
	if c.setup != "" {
		e.sh(c.setup)
	}
	orig := snapshot(t, e.work)
	native := filepath.Join(t.TempDir(), "native")
	if out, err := execCommand("cp", "-a", e.work+"/.", native).CombinedOutput(); err != nil {
		t.Fatalf("copy: %v\n%s", err, out)
	}
	cmd := execCommand("bash", "-c", c.script)
	cmd.Dir = native
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("native run: %v\n%s", err, out)
	}
	want := snapshot(t, native)

	p := e.run(c.script)
	if p.ExitCode != 0 {
		t.Fatalf("exit code %d; stderr: %s", p.ExitCode, e.stderr.String())
	}
	got := kinds(p, e.work)
	if c.want != nil && !slices.Equal(got, c.want) {
		t.Errorf("changes:\n got %q\nwant %q", got, c.want)
	}
	if c.count > 0 && len(got) != c.count {
		t.Errorf("%d changes, want %d", len(got), c.count)
	}
	if d := diffTrees(orig, snapshot(t, e.work)); d != "" {
		t.Fatalf("live tree changed before commit:\n%s", d)
	}
	if len(got) == 0 {
		if err := e.sb.Abort(p.ID); err != nil {
			t.Fatal(err)
		}
		return
	}
	tx := e.commit(p)
	if d := diffTrees(want, snapshot(t, e.work)); d != "" {
		t.Fatalf("after commit, tree differs from a native run:\n%s", d)
	}
	if c.check != nil {
		c.check(t, e.work)
	}
	noOverlayXattrs(t, e.work)
	u := e.undo(tx.ID)
	if d := diffTrees(orig, snapshot(t, e.work)); d != "" {
		t.Fatalf("after undo, tree differs from before:\n%s", d)
	}
	e.undo(u.ID)
	if d := diffTrees(want, snapshot(t, e.work)); d != "" {
		t.Fatalf("after redo, tree differs from a native run:\n%s", d)
	}
	if c.check != nil {
		c.check(t, e.work)
	}
}

func sameInode(t *testing.T, a, b string, want bool) {
	t.Helper()
	var sa, sb unix.Stat_t
	if err := unix.Lstat(a, &sa); err != nil {
		t.Fatal(err)
	}
	if err := unix.Lstat(b, &sb); err != nil {
		t.Fatal(err)
	}
	if (sa.Ino == sb.Ino) != want {
		t.Errorf("%s and %s: same inode = %v, want %v", a, b, sa.Ino == sb.Ino, want)
	}
}

// noOverlayXattrs checks that no overlayfs bookkeeping leaked onto live
// files.
func noOverlayXattrs(t *testing.T, root string) {
	t.Helper()
	_ = filepath.Walk(root, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return nil
		}
		names, _ := listXattrs(p)
		for _, n := range names {
			if strings.HasPrefix(n, overlayXattrPrefix) {
				t.Errorf("%s carries overlay xattr %s", p, n)
			}
		}
		return nil
	})
}

// TestCommitByRename checks that committing a change to a 1 GiB file on the
// same file system moves inodes instead of copying data: after commit the
// live file is the very inode the script wrote, and the old inode sits in
// the undo layer; undo moves it back.
func TestCommitByRename(t *testing.T) {
	e := newEnv(t)
	e.sh("truncate -s 1G big && echo head | dd of=big conv=notrunc status=none")
	var before unix.Stat_t
	if err := unix.Stat(e.path("big"), &before); err != nil {
		t.Fatal(err)
	}
	p := e.run("echo tail >> big")
	newVersion, ok := e.sb.NewVersion(p.ID, e.path("big"))
	if !ok {
		t.Fatal("no new version of big in the run")
	}
	var upper unix.Stat_t
	if err := unix.Stat(newVersion, &upper); err != nil {
		t.Fatal(err)
	}
	tx := e.commit(p)
	var after unix.Stat_t
	if err := unix.Stat(e.path("big"), &after); err != nil {
		t.Fatal(err)
	}
	if after.Ino != upper.Ino || after.Dev != upper.Dev {
		t.Errorf("live big is inode %d, the script wrote inode %d: the commit copied", after.Ino, upper.Ino)
	}
	old, ok := e.sb.OldVersion(tx.ID, e.path("big"))
	if !ok {
		t.Fatal("the undo layer does not hold the old big")
	}
	var stashed unix.Stat_t
	if err := unix.Stat(old, &stashed); err != nil {
		t.Fatal(err)
	}
	if stashed.Ino != before.Ino {
		t.Errorf("the undo layer holds inode %d, the old big was inode %d: the old version was copied", stashed.Ino, before.Ino)
	}
	e.undo(tx.ID)
	var restored unix.Stat_t
	if err := unix.Stat(e.path("big"), &restored); err != nil {
		t.Fatal(err)
	}
	if restored.Ino != before.Ino || restored.Size != before.Size {
		t.Errorf("after undo big is inode %d size %d, want inode %d size %d", restored.Ino, restored.Size, before.Ino, before.Size)
	}
}
