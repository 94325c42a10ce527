package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// The tests here fill a file system for real during a commit: a small
// tmpfs, mounted in a mount namespace of the test's own (and, for an
// ordinary user, a user namespace too), in a child process that runs the
// scenario (diskFullMain) and reports.

// inNamespace runs scenario in a child process with a mount namespace of
// its own.
func inNamespace(t *testing.T, scenario string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), "NASH_TEST_DISKFULL="+scenario)
	attr := &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS}
	if uid, gid := os.Getuid(), os.Getgid(); uid != 0 {
		attr.Cloneflags |= syscall.CLONE_NEWUSER
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		// Still who they are inside, with what mounting takes.
		attr.AmbientCaps = []uintptr{unix.CAP_SYS_ADMIN}
	}
	cmd.SysProcAttr = attr
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("scenario %s: %v", scenario, err)
	}
}

// TestCommitDiskFullRollsBackWhole: the disk fills up (another process
// takes the space) in the middle of a commit that copies: the commit
// fails, the roll-back takes back the new versions first, which frees
// the room to put the old ones back, and every path is as before, with
// no temporary left; nash goes on working, and the same run commits once
// there is room.
func TestCommitDiskFullRollsBackWhole(t *testing.T) { inNamespace(t, "fill") }

// TestCommitRefusedForSpace: a commit that cannot fit (the disk is nearly
// full already) is refused before anything moves, saying how much it
// needs. (Without the check, the commit filled the disk half-way, and its
// roll-back, short of room to copy old.txt back, left it truncated.)
func TestCommitRefusedForSpace(t *testing.T) { inNamespace(t, "refuse") }

// TestRollbackShortOfSpace: the disk fills so far that the roll-back
// itself cannot put an old version back. Nothing is left half-written,
// nash stays usable (log, abort, undo of other paths; what touches the
// held paths is refused, saying why), and once there is room again the
// next nash finishes the roll-back: all-before.
func TestRollbackShortOfSpace(t *testing.T) { inNamespace(t, "short") }

// diskFullMain runs one scenario in the namespace inNamespace made; it
// prints what it found wrong and returns 1, or returns 0.
func diskFullMain(scenario string) int {
	// A /tmp of its own: the small tmpfs mounted below /tmp makes the
	// sandbox overlay /tmp's entries one by one, and other processes'
	// temporary dirs come and go meanwhile.
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		fmt.Println("make mounts private:", err)
		return 1
	}
	if err := unix.Mount("nash-test-tmp", "/tmp", "tmpfs", 0, "mode=1777"); err != nil {
		fmt.Println("mount a /tmp:", err)
		return 1
	}
	base := "/tmp/nash-diskfull"
	c := &scene{base: base, small: filepath.Join(base, "small"), state: filepath.Join(base, "state")}
	c.work = filepath.Join(c.small, "work")
	if err := c.setup(); err != nil {
		fmt.Println("setup:", err)
		return 1
	}
	var err error
	switch scenario {
	case "fill":
		err = c.fill()
	case "refuse":
		err = c.refuse()
	case "short":
		err = c.short()
	default:
		err = fmt.Errorf("no scenario %q", scenario)
	}
	c.cleanup()
	if err != nil {
		fmt.Println("FAIL:", err)
		return 1
	}
	fmt.Println("ok")
	return 0
}

type scene struct {
	base, small, work, state string
	sb                       *Sandbox
}

const smallSize = 16 << 20

var (
	oldContent = bytes.Repeat([]byte("a"), 1<<20)
	keepBytes  = []byte("keep me\n")
)

func (c *scene) setup() error {
	if err := os.MkdirAll(c.small, 0o755); err != nil {
		return err
	}
	if err := unix.Mount("nash-test-small", c.small, "tmpfs", 0, fmt.Sprintf("size=%d,mode=0755", smallSize)); err != nil {
		return fmt.Errorf("mount a small tmpfs: %w", err)
	}
	if err := os.Mkdir(c.work, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(c.work, "old.txt"), oldContent, 0o640); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(c.work, "keep.txt"), keepBytes, 0o644); err != nil {
		return err
	}
	return c.open()
}

func (c *scene) open() error {
	sb, err := New(context.Background(), StateDir(c.state), Dir(c.work), Stdio(nil, io.Discard, io.Discard))
	if err != nil {
		return fmt.Errorf("open the sandbox: %w", err)
	}
	c.sb = sb
	return nil
}

func (c *scene) cleanup() {
	runs, _ := os.ReadDir(layout(c.state).runsDir())
	for _, r := range runs {
		_ = c.sb.Abort(r.Name())
	}
	_ = c.sb.Close()
}

// fillUp takes all the small tmpfs's room but leave bytes, as another
// process would.
func (c *scene) fillUp(leave int64) error {
	var st unix.Statfs_t
	if err := unix.Statfs(c.small, &st); err != nil {
		return err
	}
	free := int64(st.Bavail) * st.Bsize
	f, err := os.Create(filepath.Join(c.small, "filler"))
	if err != nil {
		return err
	}
	defer f.Close()
	if free <= leave {
		return nil
	}
	return unix.Fallocate(int(f.Fd()), 0, 0, free-leave)
}

func (c *scene) unfill() error { return os.Remove(filepath.Join(c.small, "filler")) }

// run runs the script that changes old.txt (3 MiB of b, mode 0600) and
// creates new.bin (3 MiB): both are copied into the small tmpfs at
// commit, since their upper dir is elsewhere.
func (c *scene) run(script string) (*Pending, error) {
	if script == "" {
		script = `head -c 3145728 /dev/zero | tr '\0' b > old.txt; chmod 600 old.txt; head -c 3145728 /dev/zero > new.bin`
	}
	p, err := c.sb.Run(context.Background(), script)
	if err != nil {
		return nil, err
	}
	c.sb.waitTorndown(p.ID)
	return p, nil
}

// asBefore checks every path is as before the commit, and that nothing
// nash writes on the way (temporary copies) is left.
func (c *scene) asBefore() error {
	b, err := os.ReadFile(filepath.Join(c.work, "old.txt"))
	if err != nil || !bytes.Equal(b, oldContent) {
		return fmt.Errorf("old.txt is not as before: %d bytes, %v", len(b), err)
	}
	if fi, _ := os.Stat(filepath.Join(c.work, "old.txt")); fi.Mode().Perm() != 0o640 {
		return fmt.Errorf("old.txt has mode %v, not 0640", fi.Mode().Perm())
	}
	if _, err := os.Lstat(filepath.Join(c.work, "new.bin")); err == nil {
		return errors.New("new.bin is there")
	}
	if b, _ := os.ReadFile(filepath.Join(c.work, "keep.txt")); !bytes.Equal(b, keepBytes) {
		return errors.New("keep.txt changed")
	}
	return c.noTemporaries()
}

func (c *scene) noTemporaries() error {
	var left []string
	_ = filepath.WalkDir(c.small, func(p string, _ fs.DirEntry, err error) error {
		if err == nil && (strings.Contains(p, newSuffix) || strings.Contains(p, oldSuffix)) {
			left = append(left, p)
		}
		return nil
	})
	if len(left) > 0 {
		return fmt.Errorf("temporaries left behind: %v", left)
	}
	return nil
}

func (c *scene) journals() int {
	entries, _ := os.ReadDir(layout(c.state).journalDir())
	return len(entries)
}

func (c *scene) fill() error {
	p, err := c.run("")
	if err != nil {
		return err
	}
	// After the first new version is in place, someone takes the room
	// the second needs.
	c.sb.fault = func(point string) error {
		if point != "apply:1" {
			return nil
		}
		if _, err := os.Stat(filepath.Join(c.work, "new.bin")); err != nil {
			return fmt.Errorf("test: new.bin is not in place before old.txt: %w", err)
		}
		return c.fillUp(256 << 10)
	}
	_, err = c.sb.Commit(context.Background(), p.ID, CommitOptions{})
	c.sb.fault = nil
	var re *RecoveryError
	switch {
	case err == nil:
		return errors.New("the commit went through on a full disk")
	case errors.As(err, &re):
		return fmt.Errorf("the roll-back fell short: %v", err)
	case !errors.Is(err, unix.ENOSPC):
		return fmt.Errorf("the commit failed otherwise: %v", err)
	}
	fmt.Println("commit failed as it should:", err)
	if err := c.asBefore(); err != nil {
		return fmt.Errorf("after the roll-back: %w", err)
	}
	if n := c.journals(); n != 0 {
		return fmt.Errorf("%d journals left", n)
	}
	// nash works: a new start, the log; and the run is still pending.
	if err := c.open(); err != nil {
		return err
	}
	if err := c.sb.Unrecovered(); err != nil {
		return fmt.Errorf("nash starts with something unrecovered: %v", err)
	}
	if _, err := c.sb.Log(); err != nil {
		return fmt.Errorf("log: %w", err)
	}
	if err := c.unfill(); err != nil {
		return err
	}
	if _, err := c.sb.Commit(context.Background(), p.ID, CommitOptions{}); err != nil {
		return fmt.Errorf("commit once there is room: %w", err)
	}
	if b, _ := os.ReadFile(filepath.Join(c.work, "old.txt")); len(b) != 3<<20 {
		return fmt.Errorf("old.txt after the commit: %d bytes", len(b))
	}
	return nil
}

func (c *scene) refuse() error {
	p, err := c.run("")
	if err != nil {
		return err
	}
	// Room for new.bin once old.txt is moved out, not for both.
	if err := c.fillUp(2200 << 10); err != nil {
		return err
	}
	_, err = c.sb.Commit(context.Background(), p.ID, CommitOptions{})
	var se *SpaceError
	if !errors.As(err, &se) || se.Need <= se.Free || !strings.Contains(err.Error(), "needs") {
		return fmt.Errorf("commit of 6 MiB into 2: %v, want a SpaceError", err)
	}
	fmt.Println("refused as it should:", err)
	if err := c.asBefore(); err != nil {
		return err
	}
	if n := c.journals(); n != 0 {
		return fmt.Errorf("%d journals left", n)
	}
	return c.sb.Abort(p.ID)
}

func (c *scene) short() error {
	// An earlier transaction on another path, to undo later.
	earlier, err := c.run(`echo other > other.txt`)
	if err != nil {
		return err
	}
	tx, err := c.sb.Commit(context.Background(), earlier.ID, CommitOptions{})
	if err != nil {
		return err
	}
	p, err := c.run("")
	if err != nil {
		return err
	}
	// Once the old versions are kept aside (old.txt copied to the undo
	// layer and removed), someone takes all the room: not even the old
	// old.txt fits back.
	c.sb.fault = func(point string) error {
		if point == "stashed" {
			return c.fillUp(128 << 10)
		}
		return nil
	}
	_, err = c.sb.Commit(context.Background(), p.ID, CommitOptions{})
	c.sb.fault = nil
	var re *RecoveryError
	if !errors.As(err, &re) || !errors.Is(err, unix.ENOSPC) || !strings.Contains(err.Error(), "free some space") {
		return fmt.Errorf("commit: %v, want a RecoveryError that says to free space", err)
	}
	fmt.Println("roll-back fell short, as it must here:", err)
	// Nothing half-written: old.txt is whole (old or new) or not there
	// yet, its old version safe in the undo layer.
	if b, err := os.ReadFile(filepath.Join(c.work, "old.txt")); err == nil && !bytes.Equal(b, oldContent) && len(b) != 3<<20 {
		return fmt.Errorf("old.txt is half-written: %d bytes", len(b))
	}
	if err := c.noTemporaries(); err != nil {
		return err
	}
	if c.journals() != 1 {
		return fmt.Errorf("%d journals, want the unfinished one", c.journals())
	}
	// A new nash works, and says what is unfinished.
	if err := c.open(); err != nil {
		return fmt.Errorf("nash does not start: %w", err)
	}
	if err := c.sb.Unrecovered(); err == nil || !strings.Contains(err.Error(), "free some space") {
		return fmt.Errorf("Unrecovered = %v, want the roll-back named", err)
	}
	if _, err := c.sb.Log(); err != nil {
		return fmt.Errorf("log: %w", err)
	}
	if _, err := c.sb.Undo(context.Background(), tx.ID, UndoOptions{}); err != nil {
		return fmt.Errorf("undo of a transaction on another path: %w", err)
	}
	held, err := c.run(`echo mine > old.txt`)
	if err != nil {
		return err
	}
	if _, err := c.sb.Commit(context.Background(), held.ID, CommitOptions{}); err == nil || !strings.Contains(err.Error(), "unfinished roll-back") {
		return fmt.Errorf("commit to a held path: %v, want it refused", err)
	}
	if err := c.sb.Abort(held.ID); err != nil {
		return fmt.Errorf("abort: %w", err)
	}
	// Room again: the next nash finishes the roll-back.
	if err := c.unfill(); err != nil {
		return err
	}
	if err := c.open(); err != nil {
		return err
	}
	if err := c.sb.Unrecovered(); err != nil {
		return fmt.Errorf("still unrecovered with room: %v", err)
	}
	if n := c.journals(); n != 0 {
		return fmt.Errorf("%d journals left", n)
	}
	return c.asBefore()
}

// TestCommitThroughSwappedDirectory: during a commit, a directory of it is
// replaced by a symlink to another (as someone who can write there could
// do, to make a commit by root write elsewhere). The commit is refused
// and rolled back; nothing is written, moved or removed where the symlink
// points; what cannot be put back where the directory was is kept aside
// and named; and nash goes on working.
func TestCommitThroughSwappedDirectory(t *testing.T) {
	e := newEnv(t)
	e.sh(`mkdir d && echo old-a > d/a.txt && echo old-b > d/b.txt`)
	victim := t.TempDir()
	for _, n := range []string{"a.txt", "b.txt"} {
		if err := os.WriteFile(filepath.Join(victim, n), []byte("victim "+n+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := e.run(`echo new-a > d/a.txt; echo new-b > d/b.txt`)
	e.sb.waitTorndown(p.ID)
	e.sb.fault = func(point string) error {
		if point != "apply:1" {
			return nil
		}
		if err := os.Rename(e.path("d"), e.path("d.moved")); err != nil {
			return err
		}
		return os.Symlink(victim, e.path("d"))
	}
	_, err := e.sb.Commit(context.Background(), p.ID, CommitOptions{})
	e.sb.fault = nil
	var rb *RolledBackError
	if !errors.As(err, &rb) {
		t.Fatalf("commit through a swapped directory: %v, want a RolledBackError", err)
	}
	t.Logf("%v", err)
	entries, _ := os.ReadDir(victim)
	if len(entries) != 2 {
		t.Errorf("the symlink's target gained entries: %v", entries)
	}
	for _, n := range []string{"a.txt", "b.txt"} {
		if b, _ := os.ReadFile(filepath.Join(victim, n)); string(b) != "victim "+n+"\n" {
			t.Errorf("%s where the symlink points is now %q", n, b)
		}
	}
	kept := map[string]string{}
	for _, k := range rb.Kept {
		b, _ := os.ReadFile(k.Object)
		kept[filepath.Base(k.Path)] = string(b)
	}
	if kept["a.txt"] != "old-a\n" || kept["b.txt"] != "old-b\n" {
		t.Errorf("old versions kept aside: %v", kept)
	}
	if left, _ := os.ReadDir(layout(e.state).journalDir()); len(left) != 0 {
		t.Fatalf("journal left: %v", left)
	}
	// nash goes on: a new start, the log names what was kept, undo of it
	// is refused, another commit goes through.
	sb, err := New(context.Background(), StateDir(e.state), Dir(e.work), Stdio(nil, io.Discard, io.Discard))
	if err != nil {
		t.Fatalf("nash does not start after it: %v", err)
	}
	defer sb.Close()
	txs, err := sb.Log()
	if err != nil || len(txs) != 1 || txs[0].State != StateRolledBack || len(txs[0].Kept) != 2 {
		t.Fatalf("log: %+v, %v", txs, err)
	}
	if _, err := sb.Undo(context.Background(), txs[0].ID, UndoOptions{}); err == nil {
		t.Error("undo of a rolled-back transaction went through")
	}
	e.commit(e.run(`echo later > later.txt`))
}
