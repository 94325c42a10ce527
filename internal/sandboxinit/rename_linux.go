package sandboxinit

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// How the supervisor answers a rename (see seccomp_linux.go):
//
//   - the source is not a directory: the call continues in the kernel,
//     untouched (the supervisor only looked at the path);
//   - the source is a directory: the supervisor makes the same call itself,
//     with the caller's credentials, through descriptors for the caller's
//     working directory, root and directory fds (taken from /proc/PID and
//     checked still to be the caller's with the notification id), so the
//     kernel checks it as the caller's own. Whatever the kernel answers is
//     the answer, but for overlayfs's EXDEV on a merged directory: then
//     the supervisor first turns the merged directory into one that lives
//     in the upper layer alone, with the same entries, modes, owners, times
//     and xattrs (materialize: a fresh directory next to it receives its
//     entries one by one, children first, and then replaces it), and makes
//     the call again, which the kernel can now carry out.
//
// What it moved is recorded (Rename), so that nash can show and commit a
// directory's rename as one rename.

// auditArch64 marks the 64-bit architectures (__AUDIT_ARCH_64BIT).
const auditArch64 = 0x80000000

// maxRenames bounds the record; past it, renames are still carried out,
// and nash shows them as deletions and creations.
const maxRenames = 100000

// handle answers one notification; nil means no answer is due (the caller
// is gone).
func (s *supervisor) handle(n *seccompNotif) *seccompNotifResp {
	kind, ok := s.calls[n.Data.Arch][uint32(n.Data.Nr)]
	if !ok {
		return respContinue()
	}
	c := decodeRename(kind, n.Data.Arch, n.Data.Args)
	pid := int(n.PID)
	old, err := readString(pid, c.oldPtr)
	if err != nil {
		return respContinue() // the kernel reports the bad pointer or name
	}
	var st unix.Stat_t
	if unix.Lstat(procPath(pid, c.oldFd, old), &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return respContinue()
	}
	newp, err := readString(pid, c.newPtr)
	if err != nil {
		return respContinue()
	}
	return s.renameDir(n, pid, c, old, newp)
}

// renameArgs are a rename call's arguments, whichever call it was.
type renameArgs struct {
	oldFd, newFd   int
	oldPtr, newPtr uint64
	flags          uint
}

func decodeRename(kind renameKind, arch uint32, a [6]uint64) renameArgs {
	ptr := func(v uint64) uint64 {
		if arch&auditArch64 == 0 {
			return v & 0xffffffff
		}
		return v
	}
	fd := func(v uint64) int { return int(int32(uint32(v))) }
	switch kind {
	case callRename:
		return renameArgs{oldFd: unix.AT_FDCWD, newFd: unix.AT_FDCWD, oldPtr: ptr(a[0]), newPtr: ptr(a[1])}
	case callRenameat:
		return renameArgs{oldFd: fd(a[0]), oldPtr: ptr(a[1]), newFd: fd(a[2]), newPtr: ptr(a[3])}
	default:
		return renameArgs{oldFd: fd(a[0]), oldPtr: ptr(a[1]), newFd: fd(a[2]), newPtr: ptr(a[3]), flags: uint(uint32(a[4]))}
	}
}

// procPath names, for the supervisor, the path p as the caller resolves it
// relative to dirfd.
func procPath(pid, dirfd int, p string) string {
	pre := "/proc/" + strconv.Itoa(pid)
	switch {
	case strings.HasPrefix(p, "/"):
		return pre + "/root" + p
	case dirfd == unix.AT_FDCWD:
		return pre + "/cwd/" + p
	default:
		return pre + "/fd/" + strconv.Itoa(dirfd) + "/" + p
	}
}

// readString reads a NUL-terminated path from the caller's memory.
func readString(pid int, addr uint64) (string, error) {
	if addr == 0 {
		return "", unix.EFAULT
	}
	buf := make([]byte, 0, 256)
	const pathMax = 4096
	for len(buf) < pathMax {
		// Read up to the end of the page: the next may not be mapped.
		chunk := 4096 - int(addr%4096)
		chunk = min(chunk, pathMax-len(buf))
		b := make([]byte, chunk)
		local := []unix.Iovec{{Base: &b[0]}}
		local[0].SetLen(chunk)
		remote := []unix.RemoteIovec{{Base: uintptr(addr), Len: chunk}}
		n, err := unix.ProcessVMReadv(pid, local, remote, 0)
		if err != nil {
			return "", err
		}
		if i := indexNUL(b[:n]); i >= 0 {
			return string(append(buf, b[:i]...)), nil
		}
		buf = append(buf, b[:n]...)
		if n < chunk {
			return "", unix.EFAULT
		}
		addr += uint64(n)
	}
	return "", unix.ENAMETOOLONG
}

func indexNUL(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return -1
}

// renameDir carries out the rename of a directory for the caller.
func (s *supervisor) renameDir(n *seccompNotif, pid int, c renameArgs, old, newp string) *seccompNotifResp {
	if s.self.broken {
		return respContinue()
	}
	who, err := readCaller(pid)
	if err != nil {
		return respContinue()
	}
	var fds []int
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	open := func(p string) int {
		fd, err := unix.Open(p, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1
		}
		fds = append(fds, fd)
		return fd
	}
	pre := "/proc/" + strconv.Itoa(pid)
	root := open(pre + "/root")
	base := func(dirfd int, p string) int {
		switch {
		case strings.HasPrefix(p, "/"):
			return root
		case dirfd == unix.AT_FDCWD:
			return open(pre + "/cwd")
		default:
			return open(pre + "/fd/" + strconv.Itoa(dirfd))
		}
	}
	oldBase, newBase := base(c.oldFd, old), base(c.newFd, newp)
	nsOK := sameFileAs(pre+"/ns/mnt", "/proc/self/ns/mnt") && sameFileAs(pre+"/ns/user", "/proc/self/ns/user")
	// Everything read of /proc/PID above belongs to the caller only if it
	// is still waiting: otherwise the pid may name another process now.
	if !s.idValid(n.ID) {
		return nil
	}
	if root < 0 || oldBase < 0 || newBase < 0 || !nsOK || !sameFileFd(root, "/") {
		// A caller in a chroot or a namespace of its own: the kernel
		// alone (a merged directory then stays where it is: EXDEV).
		return respContinue()
	}
	oldDir, oldName, ok1 := openParent(oldBase, old, &fds)
	newDir, newName, ok2 := openParent(newBase, newp, &fds)
	if !ok1 || !ok2 {
		return respContinue() // ".", "..", "/" or a bad parent: the kernel says which error
	}
	// The call itself keeps any trailing slashes, which the kernel judges
	// (a symlink named with one is ENOTDIR).
	oldArg, newArg := oldName+trailingSlashes(old), newName+trailingSlashes(newp)
	probe := func() error {
		if err := s.self.assume(who); err != nil {
			if rerr := s.self.restore(); rerr != nil {
				s.self.broken = true
			}
			return errNotMine
		}
		err := unix.Renameat2(oldDir, oldArg, newDir, newArg, c.flags)
		if rerr := s.self.restore(); rerr != nil {
			s.self.broken = true
		}
		return err
	}
	err = probe()
	if errors.Is(err, errNotMine) {
		return respContinue()
	}
	if !errors.Is(err, unix.EXDEV) || s.self.broken || !sameOverlay(oldDir, newDir) || c.flags&unix.RENAME_WHITEOUT != 0 {
		return respErrno(err)
	}
	// EXDEV from overlayfs comes after every permission check of the
	// call has passed: a merged directory is being moved.
	from, to := dirPath(oldDir, oldName), dirPath(newDir, newName)
	ino, err := materialize(oldDir, oldName)
	if err != nil {
		return respErrno(unix.EXDEV)
	}
	moved := []Rename{{From: from, To: to, Ino: ino}}
	err = probe()
	if errors.Is(err, unix.EXDEV) && c.flags&unix.RENAME_EXCHANGE != 0 {
		// The other side of an exchange is a merged directory too.
		if ino2, merr := materialize(newDir, newName); merr == nil {
			moved = append(moved, Rename{From: to, To: from, Ino: ino2})
			err = probe()
		}
	}
	if err == nil && len(s.renames) < maxRenames {
		s.renames = append(s.renames, moved...)
	}
	return respErrno(err)
}

// errNotMine says the supervisor could not take on the caller's
// credentials.
var errNotMine = errors.New("cannot act as the caller")

// openParent opens the directory that holds the last component of p,
// resolved from base as the kernel resolves a rename's path, and returns
// it with that component. It refuses what rename refuses anyway.
func openParent(base int, p string, fds *[]int) (int, string, bool) {
	trimmed := strings.TrimRight(p, "/")
	if trimmed == "" {
		return -1, "", false
	}
	dir, name := path.Split(trimmed)
	if name == "." || name == ".." {
		return -1, "", false
	}
	switch {
	case dir == "":
		dir = "."
	case strings.HasPrefix(dir, "/"):
		// base is the caller's root, the same as the init's.
		dir = "." + dir
	}
	fd, err := unix.Openat(base, dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, "", false
	}
	*fds = append(*fds, fd)
	return fd, name, true
}

// trailingSlashes returns the slashes that end p.
func trailingSlashes(p string) string {
	return p[len(strings.TrimRight(p, "/")):]
}

// sameFileAs reports whether two paths name the same file.
func sameFileAs(a, b string) bool {
	var sa, sb unix.Stat_t
	return unix.Stat(a, &sa) == nil && unix.Stat(b, &sb) == nil && sa.Dev == sb.Dev && sa.Ino == sb.Ino
}

func sameFileFd(fd int, p string) bool {
	var sa, sb unix.Stat_t
	return unix.Fstat(fd, &sa) == nil && unix.Stat(p, &sb) == nil && sa.Dev == sb.Dev && sa.Ino == sb.Ino
}

// sameOverlay reports whether two directories are on one overlay mount.
func sameOverlay(a, b int) bool {
	var fs unix.Statfs_t
	if unix.Fstatfs(a, &fs) != nil || fs.Type != unix.OVERLAYFS_SUPER_MAGIC {
		return false
	}
	var sa, sb unix.Statx_t
	const mask = unix.STATX_MNT_ID
	if unix.Statx(a, "", unix.AT_EMPTY_PATH, mask, &sa) != nil || unix.Statx(b, "", unix.AT_EMPTY_PATH, mask, &sb) != nil {
		return false
	}
	return sa.Mask&mask != 0 && sb.Mask&mask != 0 && sa.Mnt_id == sb.Mnt_id
}

// dirPath is the path, inside the sandbox, of name in the directory dir.
func dirPath(dir int, name string) string {
	p, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(dir))
	if err != nil {
		return ""
	}
	return path.Join(p, name)
}

// materialize turns the merged directory name in parent into a directory
// of the upper layer alone with the same entries and attributes, which
// the kernel can then rename, and returns its inode number. On failure
// the directory's entries are put back and it is left merged.
func materialize(parent int, name string) (uint64, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(parent, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return 0, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return 0, unix.ENOTDIR
	}
	var r [6]byte
	_, _ = rand.Read(r[:])
	tmp := ".nash-moving-" + hex.EncodeToString(r[:])
	if err := unix.Mkdirat(parent, tmp, 0o700); err != nil {
		return 0, err
	}
	src, err := unix.Openat(parent, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = unix.Unlinkat(parent, tmp, unix.AT_REMOVEDIR)
		return 0, err
	}
	defer unix.Close(src)
	dst, err := unix.Openat(parent, tmp, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = unix.Unlinkat(parent, tmp, unix.AT_REMOVEDIR)
		return 0, err
	}
	defer unix.Close(dst)
	names, err := readNames(src)
	var moved []string
	undo := func() {
		for i := len(moved) - 1; i >= 0; i-- {
			_ = unix.Renameat2(dst, moved[i], src, moved[i], unix.RENAME_NOREPLACE)
		}
		_ = unix.Unlinkat(parent, tmp, unix.AT_REMOVEDIR)
	}
	if err != nil {
		undo()
		return 0, err
	}
	for _, n := range names {
		err := unix.Renameat2(src, n, dst, n, unix.RENAME_NOREPLACE)
		if errors.Is(err, unix.EXDEV) {
			// A merged directory below: children first.
			if _, err = materialize(src, n); err == nil {
				err = unix.Renameat2(src, n, dst, n, unix.RENAME_NOREPLACE)
			}
		}
		if err != nil {
			undo()
			return 0, err
		}
		moved = append(moved, n)
	}
	if err := copyDirMeta(src, dst, parent, tmp, &st); err != nil {
		undo()
		return 0, err
	}
	// The merged directory is empty now: the new one replaces it.
	if err := unix.Renameat2(parent, tmp, parent, name, 0); err != nil {
		undo()
		return 0, err
	}
	var nst unix.Stat_t
	if err := unix.Fstat(dst, &nst); err != nil {
		return 0, nil
	}
	return nst.Ino, nil
}

// readNames lists a directory's entries.
func readNames(fd int) ([]string, error) {
	d, err := unix.Openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(d), "dir")
	defer f.Close()
	return f.Readdirnames(-1)
}

// copyDirMeta gives the directory dst (name in parent) the xattrs, owner,
// mode and times of src, whose stat is st.
func copyDirMeta(src, dst, parent int, name string, st *unix.Stat_t) error {
	if err := copyXattrs(src, dst); err != nil {
		return err
	}
	var dt unix.Stat_t
	if err := unix.Fstat(dst, &dt); err != nil {
		return err
	}
	if dt.Uid != st.Uid || dt.Gid != st.Gid {
		if err := unix.Fchownat(parent, name, int(st.Uid), int(st.Gid), unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return err
		}
	}
	if err := unix.Fchmodat(parent, name, st.Mode&0o7777, 0); err != nil {
		return err
	}
	ts := []unix.Timespec{st.Atim, st.Mtim}
	return unix.UtimesNanoAt(parent, name, ts, unix.AT_SYMLINK_NOFOLLOW)
}

// copyXattrs copies every extended attribute the overlay shows (not its
// own) from src to dst.
func copyXattrs(src, dst int) error {
	sz, err := unix.Flistxattr(src, nil)
	if err != nil || sz == 0 {
		if errors.Is(err, unix.ENOTSUP) {
			return nil
		}
		return err
	}
	buf := make([]byte, sz)
	sz, err = unix.Flistxattr(src, buf)
	if err != nil {
		return err
	}
	for _, name := range strings.Split(string(buf[:sz]), "\x00") {
		if name == "" {
			continue
		}
		vs, err := unix.Fgetxattr(src, name, nil)
		if err != nil {
			return err
		}
		v := make([]byte, vs)
		vs, err = unix.Fgetxattr(src, name, v)
		if err != nil {
			return err
		}
		if err := unix.Fsetxattr(dst, name, v[:vs], 0); err != nil {
			return err
		}
	}
	return nil
}
