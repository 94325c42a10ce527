package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// overlayXattrPrefix is the namespace overlayfs uses for its own bookkeeping
// when mounted with userxattr. Nothing with it may leave the upper dir.
const overlayXattrPrefix = "user.overlay."

// openDirNoSymlinks opens dir for use as the base of *at calls, refusing any
// symlink on the way, so that a symlink planted in a parent cannot redirect
// a commit or an undo out of the intended place.
func openDirNoSymlinks(dir string) (int, error) {
	how := &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_SYMLINKS}
	fd, err := unix.Openat2(unix.AT_FDCWD, dir, how)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	return fd, nil
}

// renameNoSymlinks renames from to to; neither parent may be reached through
// a symlink. flags are renameat2 flags.
func renameNoSymlinks(from, to string, flags uint) error {
	fd1, err := openDirNoSymlinks(filepath.Dir(from))
	if err != nil {
		return err
	}
	defer unix.Close(fd1)
	fd2, err := openDirNoSymlinks(filepath.Dir(to))
	if err != nil {
		return err
	}
	defer unix.Close(fd2)
	if err := unix.Renameat2(fd1, filepath.Base(from), fd2, filepath.Base(to), flags); err != nil {
		return &os.LinkError{Op: "rename", Old: from, New: to, Err: err}
	}
	return nil
}

// stripOverlayXattrs removes overlayfs's xattrs from p and, when tree is
// set, from everything below it.
func stripOverlayXattrs(p string, tree bool) error {
	strip := func(p string) error {
		names, err := listXattrs(p)
		if err != nil {
			return err
		}
		for _, n := range names {
			if strings.HasPrefix(n, overlayXattrPrefix) {
				if err := removeXattr(p, n); err != nil {
					return fmt.Errorf("remove xattr %s of %s: %w", n, p, err)
				}
			}
		}
		return nil
	}
	if !tree {
		return strip(p)
	}
	return filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return strip(q)
	})
}

// removeXattr removes the extended attribute name of p. A user.* one
// needs write permission on the file: an ordinary user's read-only file
// (git's objects) is opened up for the moment it takes.
func removeXattr(p, name string) error {
	err := unix.Lremovexattr(p, name)
	if errors.Is(err, unix.ENODATA) {
		return nil
	}
	if !errors.Is(err, unix.EACCES) {
		return err
	}
	var st unix.Stat_t
	if unix.Lstat(p, &st) != nil || st.Mode&unix.S_IFMT == unix.S_IFLNK || int(st.Uid) != os.Getuid() {
		return err
	}
	if cerr := unix.Chmod(p, st.Mode&0o7777|0o200); cerr != nil {
		return err
	}
	err = unix.Lremovexattr(p, name)
	if cerr := unix.Chmod(p, st.Mode&0o7777); cerr != nil && err == nil {
		err = cerr
	}
	if errors.Is(err, unix.ENODATA) {
		return nil
	}
	return err
}

// listXattrs lists the extended attribute names of p (not following
// symlinks).
func listXattrs(p string) ([]string, error) {
	buf := make([]byte, 256)
	for {
		n, err := unix.Llistxattr(p, buf)
		if errors.Is(err, unix.ERANGE) {
			buf = make([]byte, len(buf)*4)
			continue
		}
		if errors.Is(err, unix.ENOTSUP) {
			return nil, nil
		}
		if err != nil {
			return nil, fmt.Errorf("list xattrs of %s: %w", p, err)
		}
		var out []string
		for _, s := range strings.Split(string(buf[:n]), "\x00") {
			if s != "" {
				out = append(out, s)
			}
		}
		return out, nil
	}
}

// getXattr reads one extended attribute; missing means "".
func getXattr(p, name string) string {
	buf := make([]byte, 64)
	n, err := unix.Lgetxattr(p, name, buf)
	if err != nil {
		return ""
	}
	return string(buf[:n])
}

// removeRun removes a run's directory, after opening its work dirs.
func removeRun(dir string) error {
	if removeEmptyTree(dir) == nil {
		return nil
	}
	openWorkDirs(dir)
	return removeAll(dir)
}

// removeEmptyTree removes dir and everything below it the cheap way for
// what a run leaves, mostly empty directories: each directory is first
// removed as if empty, and opened only when that fails. It gives up at the
// first obstacle (permissions, say), leaving the rest to removeAll.
func removeEmptyTree(dir string) error {
	err := unix.Rmdir(dir)
	switch {
	case err == nil || errors.Is(err, unix.ENOENT):
		return nil
	case errors.Is(err, unix.ENOTEMPTY) || errors.Is(err, unix.EEXIST):
	default:
		return err
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	err = removeEntries(fd)
	unix.Close(fd)
	if err != nil {
		return err
	}
	return unix.Rmdir(dir)
}

// removeEntries removes everything in the directory open at fd.
func removeEntries(fd int) error {
	d, err := unix.Dup(fd)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(d), "dir")
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		return err
	}
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() {
			if err := unix.Unlinkat(fd, name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
				return err
			}
			continue
		}
		err := unix.Unlinkat(fd, name, unix.AT_REMOVEDIR)
		if err == nil || errors.Is(err, unix.ENOENT) {
			continue
		}
		if !errors.Is(err, unix.ENOTEMPTY) && !errors.Is(err, unix.EEXIST) {
			return err
		}
		sub, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		err = removeEntries(sub)
		unix.Close(sub)
		if err != nil {
			return err
		}
		if err := unix.Unlinkat(fd, name, unix.AT_REMOVEDIR); err != nil {
			return err
		}
	}
	return nil
}

// openWorkDirs makes everything below a run's overlay work dirs readable
// and writable by its owner: overlayfs creates them mode 000 ("work",
// "incompat/volatile/dirty", ...), which would stop rm -r, and our own
// removal, from getting in.
func openWorkDirs(runDir string) {
	var open func(p string)
	open = func(p string) {
		_ = os.Chmod(p, 0o700)
		entries, err := os.ReadDir(p)
		if err != nil {
			return
		}
		for _, e := range entries {
			if e.IsDir() {
				open(filepath.Join(p, e.Name()))
			}
		}
	}
	works, _ := filepath.Glob(filepath.Join(runDir, workPrefix+"[0-9]*"))
	// Older versions of nash kept them in work/<i>.
	old, _ := filepath.Glob(filepath.Join(runDir, "work", "*"))
	for _, w := range append(works, old...) {
		open(w)
	}
}

// removeAll removes p and everything below it, making directories writable
// and searchable as needed (overlayfs leaves a mode-000 work dir; scripts
// leave read-only trees).
func removeAll(p string) error {
	err := os.RemoveAll(p)
	if err == nil {
		return nil
	}
	_ = filepath.WalkDir(p, func(q string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() {
			_ = os.Chmod(q, 0o700)
		}
		if err != nil && d != nil && d.IsDir() {
			_ = os.Chmod(q, 0o700)
			return nil
		}
		return nil
	})
	// Walking may have been blocked at a mode-000 dir; chmod from the top
	// down until removal succeeds.
	for i := 0; i < 64; i++ {
		if err = os.RemoveAll(p); err == nil {
			return nil
		}
		var pe *os.PathError
		if !errors.As(err, &pe) {
			break
		}
		_ = os.Chmod(filepath.Dir(pe.Path), 0o700)
		_ = os.Chmod(pe.Path, 0o700)
	}
	return fmt.Errorf("remove %s: %w", p, err)
}

// copyTree copies the object at src to dst (which must not exist):
// regular files, directories, symlinks and fifos, with mode, times, xattrs
// (except overlayfs's) and, where permitted, owner. It is the cross-device
// path; renames are used whenever source and target share a file system.
func copyTree(src, dst string) error {
	fi, err := os.Lstat(src)
	if err != nil {
		return err
	}
	switch {
	case fi.IsDir():
		if err := os.Mkdir(dst, 0o700); err != nil {
			return err
		}
		entries, err := os.ReadDir(src)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if err := copyTree(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
				return err
			}
		}
	case fi.Mode().IsRegular():
		if err := copyFile(src, dst); err != nil {
			return err
		}
	case fi.Mode()&fs.ModeSymlink != 0:
		t, err := os.Readlink(src)
		if err != nil {
			return err
		}
		if err := os.Symlink(t, dst); err != nil {
			return err
		}
	case fi.Mode()&fs.ModeNamedPipe != 0:
		if err := unix.Mkfifo(dst, uint32(fi.Mode().Perm())); err != nil {
			return &os.PathError{Op: "mkfifo", Path: dst, Err: err}
		}
	default:
		return fmt.Errorf("copy %s: unsupported file type %v", src, fi.Mode().Type())
	}
	return copyMeta(src, dst, fi)
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	// Reflink when the file systems can; io.Copy uses copy_file_range.
	if err := unix.IoctlFileClone(int(out.Fd()), int(in.Fd())); err != nil {
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return fmt.Errorf("copy %s: %w", src, err)
		}
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// copyMeta copies owner (best effort), mode, xattrs and times of fi (at src)
// onto dst.
func copyMeta(src, dst string, fi fs.FileInfo) error {
	st := fi.Sys().(*unixStat)
	_ = os.Lchown(dst, int(st.Uid), int(st.Gid))
	if fi.Mode()&fs.ModeSymlink == 0 {
		if err := os.Chmod(dst, fi.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)); err != nil {
			return err
		}
	}
	names, _ := listXattrs(src)
	for _, n := range names {
		if strings.HasPrefix(n, overlayXattrPrefix) {
			continue
		}
		buf := make([]byte, 64*1024)
		k, err := unix.Lgetxattr(src, n, buf)
		if err == nil {
			_ = unix.Lsetxattr(dst, n, buf[:k], 0)
		}
	}
	ts := []unix.Timespec{unix.NsecToTimespec(st.Atim.Nano()), unix.NsecToTimespec(st.Mtim.Nano())}
	return unix.UtimesNanoAt(unix.AT_FDCWD, dst, ts, unix.AT_SYMLINK_NOFOLLOW)
}

// syncFS flushes the file system that holds p (one syncfs, not an fsync per
// file).
func syncFS(p string) error {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: p, Err: err}
	}
	defer unix.Close(fd)
	if err := unix.Syncfs(fd); err != nil {
		return &os.PathError{Op: "syncfs", Path: p, Err: err}
	}
	return nil
}

// writeFileAtomic writes data to path durably: temp file, fsync, rename,
// fsync of the directory.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(dir)
}

// syncDir fsyncs a directory so renames into it are durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// devOf returns the device of the file system that holds p, or of its
// nearest existing ancestor.
func devOf(p string) uint64 {
	for {
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err == nil {
			return st.Dev
		}
		parent := filepath.Dir(p)
		if parent == p {
			return 0
		}
		p = parent
	}
}
