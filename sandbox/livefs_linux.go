package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// Commit, undo and their roll-back reach the live tree only through
// parentDir: the directory of a live path, opened without following any
// symlink on the way (openat2 RESOLVE_NO_SYMLINKS). What nash then moves,
// copies, writes, changes or removes there lands in that directory,
// wherever it is moved meanwhile, and never where a symlink planted in its
// place (or in place of any directory above it) points: as root, nash
// would otherwise write, remove or chmod wherever a user who can write a
// directory of the commit points it. A directory that can no longer be
// reached so is an unreachableError.

// parentDir is an open live directory.
type parentDir struct {
	fd   int
	path string // as named, for messages
}

// unreachableError says a live path's directory was moved, removed or
// replaced (by a symlink, say) since the transaction began: nash cannot
// reach it without following what is there now.
type unreachableError struct {
	path string
	err  error
}

func (e *unreachableError) Error() string {
	return fmt.Sprintf("%s: a directory on its way was moved, removed or replaced by a symlink (%v)", e.path, e.err)
}

func (e *unreachableError) Unwrap() error { return e.err }

// openParent opens the directory of the live path p; base is p's last
// element.
func openParent(p string) (d *parentDir, base string, err error) {
	dir := filepath.Dir(p)
	fd, err := openDirNoSymlinks(dir)
	if err != nil {
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.EXDEV) {
			return nil, "", &unreachableError{path: p, err: err}
		}
		return nil, "", err
	}
	return &parentDir{fd: fd, path: dir}, filepath.Base(p), nil
}

func (d *parentDir) close() { unix.Close(d.fd) }

// at names an entry of the directory by a path that starts from the open
// directory itself (its /proc/self/fd link), for calls that take paths.
func (d *parentDir) at(name string) string {
	return "/proc/self/fd/" + strconv.Itoa(d.fd) + "/" + name
}

// lstat stats an entry without following it.
func (d *parentDir) lstat(name string) (unix.Stat_t, error) {
	var st unix.Stat_t
	err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	return st, err
}

// exists reports whether the entry is there.
func (d *parentDir) exists(name string) bool {
	_, err := d.lstat(name)
	return err == nil
}

// rename renames an entry within the directory (renameat2 flags).
func (d *parentDir) rename(from, to string, flags uint) error {
	if err := unix.Renameat2(d.fd, from, d.fd, to, flags); err != nil {
		return &os.LinkError{Op: "rename", Old: filepath.Join(d.path, from), New: filepath.Join(d.path, to), Err: err}
	}
	return nil
}

// remove removes an entry and everything below it; a missing one is no
// error.
func (d *parentDir) remove(name string) error {
	if !d.exists(name) {
		return nil
	}
	return removeAll(d.at(name))
}

// liveExists reports whether the live path p is there, or why it cannot
// be told.
func liveExists(p string) (bool, error) {
	d, base, err := openParent(p)
	if err != nil {
		return false, err
	}
	defer d.close()
	return d.exists(base), nil
}

// removeLive removes the live path p and everything below it.
func removeLive(p string) error {
	d, base, err := openParent(p)
	if err != nil {
		return err
	}
	defer d.close()
	return d.remove(base)
}

// copyFromLive copies the live object at p to dst (outside the live tree).
func copyFromLive(p, dst string) error {
	d, base, err := openParent(p)
	if err != nil {
		return err
	}
	defer d.close()
	return copyTree(d.at(base), dst)
}

// copyIntoLive puts a copy of src at the live path p: it is copied whole
// to p's directory under a temporary name (suffix), then renamed over p
// (replace: else p must not exist). A copy that fails, for want of space
// say, is removed: p is never left half-written.
func copyIntoLive(src, p, suffix string, replace bool) error {
	d, base, err := openParent(p)
	if err != nil {
		return err
	}
	defer d.close()
	tmp := base + suffix
	_ = d.remove(tmp) // a remainder of an attempt cut short
	if err := copyTree(src, d.at(tmp)); err != nil {
		_ = d.remove(tmp)
		return err
	}
	var flags uint = unix.RENAME_NOREPLACE
	if replace {
		flags = 0
	}
	if err := d.rename(tmp, base, flags); err != nil {
		_ = d.remove(tmp)
		return err
	}
	return nil
}

// setMeta gives the live path p the owner (where permitted) and mode of m,
// without following p itself if it is a symlink.
func setMeta(p string, m *meta) error {
	d, base, err := openParent(p)
	if err != nil {
		return err
	}
	defer d.close()
	if err := unix.Fchownat(d.fd, base, m.UID, m.GID, unix.AT_SYMLINK_NOFOLLOW); err != nil && !errors.Is(err, unix.EPERM) {
		return &os.PathError{Op: "chown", Path: p, Err: err}
	}
	st, err := d.lstat(base)
	if err != nil {
		return &os.PathError{Op: "lstat", Path: p, Err: err}
	}
	if st.Mode&unix.S_IFMT == unix.S_IFLNK {
		return nil // a symlink has no mode of its own
	}
	if err := unix.Fchmodat(d.fd, base, m.Mode, 0); err != nil {
		return &os.PathError{Op: "chmod", Path: p, Err: err}
	}
	return nil
}

// overwriteLive replaces the content, mode and times of the regular file
// at the live path p with those of src, keeping p's inode (and so its other
// hard links). The space the new content needs is reserved before p is
// touched (fallocate), so that a full file system fails the call with p
// as it was, never half-written; only where the file system cannot
// reserve space is the file written without.
func overwriteLive(src, p string) error {
	d, base, err := openParent(p)
	if err != nil {
		return err
	}
	defer d.close()
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	fd, err := unix.Openat(d.fd, base, unix.O_WRONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: p, Err: err}
	}
	out := os.NewFile(uintptr(fd), p)
	size := fi.Size()
	if size > 0 {
		if err := unix.Fallocate(fd, unix.FALLOC_FL_KEEP_SIZE, 0, size); err != nil &&
			!errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, unix.ENOSYS) {
			out.Close()
			return &os.PathError{Op: "reserve space for", Path: p, Err: err}
		}
	}
	// Over the old content from the start, then cut to the new size: the
	// blocks are there, so this does not fail for want of space.
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Truncate(size); err != nil {
		out.Close()
		return err
	}
	if err := out.Chmod(fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	st := fi.Sys().(*unixStat)
	ts := []unix.Timespec{unix.NsecToTimespec(st.Atim.Nano()), unix.NsecToTimespec(st.Mtim.Nano())}
	err = unix.UtimesNanoAt(d.fd, base, ts, unix.AT_SYMLINK_NOFOLLOW)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// treeSize is the room the object at p takes: its regular files rounded
// up to whole 4 KiB blocks, and a block for every other entry.
func treeSize(p string) int64 {
	var n int64
	_ = filepath.WalkDir(p, func(_ string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		n += 4096
		if e.Type().IsRegular() {
			if fi, err := e.Info(); err == nil {
				n += (fi.Size() + 4095) &^ 4095
			}
		}
		return nil
	})
	return n
}
