package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nash-shell/nash/effects"
)

// renameMain is the test binary as a small program that calls renameat2
// directly (no libc: as every Go or Rust binary, static or not, does), once
// per "old new [noreplace|exchange]" triple of arguments, and prints what
// each call returned.
func renameMain(args []string) int {
	for len(args) >= 2 {
		old, new := args[0], args[1]
		args = args[2:]
		var flags uint
		if len(args) > 0 && (args[0] == "noreplace" || args[0] == "exchange") {
			if args[0] == "noreplace" {
				flags = unix.RENAME_NOREPLACE
			} else {
				flags = unix.RENAME_EXCHANGE
			}
			args = args[1:]
		}
		res := "ok"
		if err := unix.Renameat2(unix.AT_FDCWD, old, unix.AT_FDCWD, new, flags); err != nil {
			res = unix.ErrnoName(err.(unix.Errno))
		}
		fmt.Printf("rename %s %s: %s\n", old, new, res)
	}
	return 0
}

// renameCase is a script run natively on a copy of the setup and in the
// sandbox: the output (what each rename call returned) must match, the
// summary must read as want, and after commit the tree must be the native
// one, directories keeping their inodes; undo must restore the setup
// exactly, inodes included.
type renameCase struct {
	name   string
	setup  string
	script string   // $R runs renameMain
	want   []string // "path kind"; nil: not checked
}

func TestRenameDirectories(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tree := "mkdir -p d/sub/deep && echo f > d/sub/f && echo g > d/g && echo deep > d/sub/deep/x && ln -s sub d/link && chmod 750 d/sub && touch -d 2001-02-03 d/sub d"
	cases := []renameCase{
		{name: "mv", setup: tree, script: "mv d d2", want: []string{"d2 renamed"}},
		{name: "renameat2 of a static binary", setup: tree, script: "$R d d2", want: []string{"d2 renamed"}},
		{name: "into another directory", setup: tree + " && mkdir other", script: "$R d other/d2", want: []string{"other/d2 renamed"}},
		{name: "then changed inside", setup: tree, script: "$R d d2 && echo more >> d2/sub/f && rm d2/g && mkdir d2/new && touch d2/new/n && chmod 700 d2",
			want: []string{"d2 renamed", "d2/g deleted", "d2/new created", "d2/new/n created", "d2/sub/f modified"}},
		{name: "twice", setup: tree, script: "$R d d2 d2 d3", want: []string{"d3 renamed"}},
		{name: "and back", setup: tree, script: "$R d d2 d2 d && echo x > d/g", want: []string{"d/g modified"}},
		{name: "over an empty directory", setup: tree + " && mkdir e", script: "$R d e", want: []string{"e renamed"}},
		{name: "over a non-empty directory", setup: tree + " && mkdir e && touch e/x", script: "$R d e", want: []string{}},
		{name: "noreplace onto a file", setup: tree + " && touch e", script: "$R d e noreplace", want: []string{}},
		{name: "into itself", setup: tree, script: "$R d d/sub/d", want: []string{}},
		// Exchanges are carried out; nash shows them entry by entry.
		{name: "exchange two directories", setup: tree + " && mkdir -p e/in && echo e > e/in/e", script: "$R d e exchange"},
		{name: "exchange a directory and a file", setup: tree + " && echo file > e", script: "$R d e exchange"},
		{name: "a directory created in the run", script: "mkdir n && touch n/x && $R n n2", want: []string{"n2 created", "n2/x created"}},
		{name: "a subdirectory out of a renamed one", setup: tree, script: "$R d d2 d2/sub s",
			want: []string{"d2 renamed", "s created", "s/deep created", "s/deep/x created", "s/f created", "d2/sub deleted", "d2/sub/deep deleted", "d2/sub/deep/x deleted", "d2/sub/f deleted"}},
		{name: "read-only directory", setup: tree + " && chmod 555 d", script: "$R d d2", want: []string{"d2 renamed"}},
		{name: "with trailing slashes", setup: tree, script: "$R d/ d2/", want: []string{"d2 renamed"}},
		{name: "a symlink to a directory, with a trailing slash", setup: tree + " && ln -s d l", script: "$R l/ l2 l l2", want: []string{"l deleted", "l2 created"}},
		{name: "file renames continue untouched", setup: "echo a > a && mkdir d && echo b > d/b", script: "$R a b d/b d/c", want: []string{"a deleted", "b created", "d/b deleted", "d/c created"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { runRenameCase(t, self, c) })
	}
}

func runRenameCase(t *testing.T, self string, c renameCase) {
	e := newEnv(t)
	if c.setup != "" {
		e.sh(c.setup)
	}
	// Read-only directories the case makes must not stop the removal of
	// the test's files (work, state and what runs left in its trash) by an
	// ordinary user.
	t.Cleanup(func() { _ = execCommand("chmod", "-R", "u+w", filepath.Dir(e.work)).Run() })
	orig := snapshot(t, e.work)
	origInodes := inodes(t, e.work)
	native := filepath.Join(t.TempDir(), "native")
	if out, err := execCommand("cp", "-a", e.work+"/.", native).CombinedOutput(); err != nil {
		t.Fatalf("copy: %v\n%s", err, out)
	}
	t.Cleanup(func() { _ = execCommand("chmod", "-R", "u+w", native).Run() })
	script := "R() { NASH_TEST_RENAME=1 " + self + " \"$@\"; }; " + strings.ReplaceAll(c.script, "$R", "R")
	cmd := execCommand("bash", "-c", script)
	cmd.Dir = native
	wantOut, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("native run: %v\n%s", err, wantOut)
	}
	want := snapshot(t, native)

	p := e.run(script)
	if p.ExitCode != 0 {
		t.Fatalf("exit code %d; stderr: %s", p.ExitCode, e.stderr.String())
	}
	if got := e.stdout.String() + e.stderr.String(); got != string(wantOut) {
		t.Errorf("output in the sandbox:\n%s\nnatively:\n%s", got, wantOut)
	}
	got := kinds(p, e.work)
	slices.Sort(got)
	slices.Sort(c.want)
	if c.want != nil && !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
		t.Errorf("changes:\n got %q\nwant %q", got, c.want)
	}
	for _, ch := range p.Changes.Changes {
		if ch.Kind == effects.Renamed && !strings.HasPrefix(ch.From, e.work+"/") {
			t.Errorf("%s renamed from %q", ch.Path, ch.From)
		}
	}
	if len(got) == 0 {
		if err := e.sb.Abort(p.ID); err != nil {
			t.Fatal(err)
		}
		if d := diffTrees(orig, snapshot(t, e.work)); d != "" {
			t.Fatalf("after abort, tree differs from before:\n%s", d)
		}
		return
	}
	tx := e.commit(p)
	if d := diffTrees(want, snapshot(t, e.work)); d != "" {
		t.Fatalf("after commit, tree differs from a native run:\n%s", d)
	}
	// A renamed directory is the very directory, moved: its inode, and
	// those of the unchanged files in it, are the ones it had.
	for _, ch := range p.Changes.Changes {
		if ch.Kind != effects.Renamed {
			continue
		}
		from, _ := filepath.Rel(e.work, ch.From)
		var st unix.Stat_t
		if err := unix.Lstat(ch.Path, &st); err != nil {
			t.Fatal(err)
		}
		if st.Ino != origInodes[from] {
			t.Errorf("%s is inode %d after commit; %s was inode %d", ch.Path, st.Ino, from, origInodes[from])
		}
	}
	noOverlayXattrs(t, e.work)
	u := e.undo(tx.ID)
	if d := diffTrees(orig, snapshot(t, e.work)); d != "" {
		t.Fatalf("after undo, tree differs from before:\n%s", d)
	}
	if got := inodes(t, e.work); !mapsEqual(got, origInodes) {
		t.Errorf("after undo, inodes differ from before:\n got %v\nwant %v", got, origInodes)
	}
	e.undo(u.ID)
	if d := diffTrees(want, snapshot(t, e.work)); d != "" {
		t.Fatalf("after redo, tree differs from a native run:\n%s", d)
	}
}

// inodes maps every path below root to its inode.
func inodes(t *testing.T, root string) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	err := filepath.Walk(root, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out[rel] = st.Ino
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func mapsEqual(a, b map[string]uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// renamesMain is the test binary as a rename-heavy program, in its
// working directory: with create, it first makes files f<i> and
// directories d<i> of three files each (and with only "create", stops
// there); then it renames f<i> to g<i> for i below files and d<i> to e<i>
// for i below dirs, one rename(2) each, and prints how long the file
// renames and the directory renames took, in nanoseconds.
func renamesMain(spec string) int {
	var files, dirs int
	var mode string
	if _, err := fmt.Sscanf(spec, "%d %d %s", &files, &dirs, &mode); err != nil {
		if _, err := fmt.Sscanf(spec, "%d %d", &files, &dirs); err != nil {
			fmt.Fprintln(os.Stderr, "NASH_TEST_RENAMES:", err)
			return 2
		}
	}
	fail := func(err error) int { fmt.Fprintln(os.Stderr, err); return 1 }
	if mode == "create" || mode == "setup" {
		for i := range files {
			if err := os.WriteFile(fmt.Sprintf("f%d", i), []byte(strconv.Itoa(i)), 0o644); err != nil {
				return fail(err)
			}
		}
		for i := range dirs {
			d := fmt.Sprintf("d%d", i)
			if err := os.Mkdir(d, 0o755); err != nil {
				return fail(err)
			}
			for _, f := range []string{"a", "b", "c"} {
				if err := os.WriteFile(filepath.Join(d, f), []byte(f), 0o644); err != nil {
					return fail(err)
				}
			}
		}
		if mode == "setup" {
			return 0
		}
	}
	t0 := time.Now()
	for i := range files {
		if err := os.Rename(fmt.Sprintf("f%d", i), fmt.Sprintf("g%d", i)); err != nil {
			return fail(err)
		}
	}
	t1 := time.Now()
	for i := range dirs {
		if err := os.Rename(fmt.Sprintf("d%d", i), fmt.Sprintf("e%d", i)); err != nil {
			return fail(err)
		}
	}
	fmt.Printf("%d %d\n", t1.Sub(t0).Nanoseconds(), time.Since(t1).Nanoseconds())
	return 0
}
