package sandboxinit

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Renaming a directory that exists below an overlay's lower layer fails
// with EXDEV inside the sandbox: an overlay mounted in a user namespace
// must use userxattr, and overlayfs refuses redirect_dir with userxattr,
// so it cannot record that a merged directory moved. The init therefore
// watches the script's rename calls through a seccomp filter with user
// notification: every rename, renameat and renameat2 of the script and its
// descendants stops until the init (the supervisor, on threads that carry
// no filter) has looked at it. A rename whose source is not a directory
// continues in the kernel untouched; a directory's rename the supervisor
// carries out itself with the caller's credentials (rename_linux.go), so
// that it can move a merged directory when the kernel cannot.
//
// The filter is a handful of BPF instructions written out below rather
// than built with a library: libseccomp-golang needs cgo, which nash's
// static binaries do not link, and the pure-Go assemblers would add a
// dependency for fifteen instructions.

// seccompNotif is struct seccomp_notif (linux/seccomp.h).
type seccompNotif struct {
	ID    uint64
	PID   uint32
	Flags uint32
	Data  seccompData
}

// seccompData is struct seccomp_data.
type seccompData struct {
	Nr                 int32
	Arch               uint32
	InstructionPointer uint64
	Args               [6]uint64
}

// seccompNotifResp is struct seccomp_notif_resp.
type seccompNotifResp struct {
	ID    uint64
	Val   int64
	Error int32
	Flags uint32
}

// ioctls on the listener that x/sys does not name.
const (
	ioctlNotifIDValid  = 0x40082102 // SECCOMP_IOCTL_NOTIF_ID_VALID: _IOW('!', 2, __u64)
	ioctlNotifSetFlags = 0x40082104 // SECCOMP_IOCTL_NOTIF_SET_FLAGS: _IOW('!', 4, __u64)
)

// renameCall is one architecture's rename system calls, as the filter
// sees them, and its ioctl calls, whose TIOCSTI the filter refuses.
type renameCall struct {
	arch   uint32
	nrs    map[uint32]renameKind
	ioctls []uint32
	// net are the calls that can send to an address (netcalls_linux.go),
	// watched when nash intercepts the sandbox's network.
	net map[uint32]renameKind
}

// The filter also refuses TIOCSTI, on every descriptor: a script could
// otherwise type into its own terminal what nash reads back from it after
// the run as the person's typeahead (sandbox/terminal_linux.go), and so
// type a line at nash's prompt. The ioctl's request is an unsigned int:
// the kernel reads only the argument's low 32 bits, and so does the filter.
const tiocsti = unix.TIOCSTI

// renameKind says how a rename call passes its arguments.
type renameKind int

const (
	callRename    renameKind = iota // rename(old, new)
	callRenameat                    // renameat(olddirfd, old, newdirfd, new)
	callRenameat2                   // renameat2(olddirfd, old, newdirfd, new, flags)
	callConnect                     // connect(fd, addr, len)
	callSendto                      // sendto(fd, buf, n, flags, addr, len)
	callSendmsg                     // sendmsg(fd, msg, flags)
	callSendmmsg                    // sendmmsg(fd, msgs, n, flags)
	callNetOther                    // another way to send (i386's socketcall, x32's compat calls)
	callBind                        // bind(fd, addr, len)
	callListen                      // listen(fd, backlog)
	callRefuse                      // io_uring_setup: refused (ENOSYS)
)

// isNet says the call is one of the network calls.
func (k renameKind) isNet() bool { return k >= callConnect }

// bpf instructions.
func bpfStmt(code uint16, k uint32) unix.SockFilter {
	return unix.SockFilter{Code: code, K: k}
}

func bpfJump(code uint16, k uint32, jt, jf uint8) unix.SockFilter {
	return unix.SockFilter{Code: code, Jt: jt, Jf: jf, K: k}
}

// renameFilter is the BPF program: for each architecture in calls, its
// rename calls are sent to the supervisor, its TIOCSTI ioctls fail with
// EPERM, everything else is allowed.
func renameFilter(calls []renameCall) []unix.SockFilter {
	const (
		ldArch = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
		jeq    = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
		ret    = unix.BPF_RET | unix.BPF_K
		// seccomp_data.args[1]'s low word (little-endian, as every
		// architecture nash builds for).
		arg1Low = 24
	)
	var prog []unix.SockFilter
	prog = append(prog, bpfStmt(ldArch, 4)) // seccomp_data.arch
	for _, c := range calls {
		// The block for one arch: skip it unless the arch matches. Its
		// tail: allow (a), notify (n), then the ioctl check.
		block := []unix.SockFilter{bpfStmt(ldArch, 0)} // seccomp_data.nr
		nrs := sortedNrs(c.nrs)
		tests := len(nrs) + len(c.ioctls)
		for i, nr := range c.ioctls {
			// Jump past allow and notify to the ioctl check.
			block = append(block, bpfJump(jeq, nr, uint8(tests-i-1+2), 0))
		}
		for i, nr := range nrs {
			// Jump to the notify on a match.
			block = append(block, bpfJump(jeq, nr, uint8(len(nrs)-i), 0))
		}
		block = append(block, bpfStmt(ret, unix.SECCOMP_RET_ALLOW), bpfStmt(ret, unix.SECCOMP_RET_USER_NOTIF))
		block = append(block,
			bpfStmt(ldArch, arg1Low),
			bpfJump(jeq, tiocsti, 0, 1),
			bpfStmt(ret, unix.SECCOMP_RET_ERRNO|uint32(unix.EPERM)),
			bpfStmt(ret, unix.SECCOMP_RET_ALLOW))
		prog = append(prog, bpfJump(jeq, c.arch, 0, uint8(len(block))))
		prog = append(prog, block...)
	}
	return append(prog, bpfStmt(ret, unix.SECCOMP_RET_ALLOW))
}

func sortedNrs(m map[uint32]renameKind) []uint32 {
	out := make([]uint32, 0, len(m))
	for nr := range m {
		out = append(out, nr)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// installRenameFilter installs the filter on the calling thread only (no
// TSYNC: the init's other threads, the supervisor's among them, must stay
// free of it) and returns the listener. The caller must be locked to its
// thread and start the script from it, so the script inherits the filter.
// It needs CAP_SYS_ADMIN in the sandbox's user namespace, which the init
// holds, so no_new_privs stays unset and set-id programs behave as before.
func installRenameFilter(withNet bool) (int, error) {
	calls := watchedCalls(withNet)
	if len(calls) == 0 {
		return -1, errors.ErrUnsupported
	}
	prog := renameFilter(calls)
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	fd, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER,
		unix.SECCOMP_FILTER_FLAG_NEW_LISTENER, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if errno != 0 {
		return -1, fmt.Errorf("install seccomp filter: %w", errno)
	}
	// Wake the supervisor on the caller's CPU and the caller on the
	// supervisor's: a rename then costs two context switches, not two
	// migrations (Linux 6.6; older kernels simply do without).
	var flags uint64 = unix.SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
	_, _, _ = unix.Syscall(unix.SYS_IOCTL, fd, ioctlNotifSetFlags, uintptr(flags))
	return int(fd), nil
}

// supervisor answers the script's rename calls and keeps the record of
// the directories it moved.
type supervisor struct {
	fd    int
	calls map[uint32]map[uint32]renameKind // arch -> nr -> kind
	self  selfIDs
	net   *netGate // nil: the script's network calls are not watched

	mu      sync.Mutex // held while a call is handled, and by report
	renames []Rename
}

// watchRenames installs the rename filter on the calling thread, which
// must be locked and start the script, and serves it. It returns nil when
// the kernel has no user notification (before Linux 5.5): renaming a
// merged directory then fails with EXDEV, as overlayfs makes it.
//
// With gate (nash intercepts the sandbox's network), the script's calls
// that can send to an address are watched too (netcalls_linux.go).
func watchRenames(gate *netGate) *supervisor {
	fd, err := installRenameFilter(gate != nil)
	if err != nil {
		return nil
	}
	return startSupervisor(fd, gate)
}

// watchedCalls are renameCalls, with the network calls when withNet.
func watchedCalls(withNet bool) []renameCall {
	calls := renameCalls()
	if !withNet {
		return calls
	}
	for i, c := range calls {
		nrs := make(map[uint32]renameKind, len(c.nrs)+len(c.net))
		for nr, k := range c.nrs {
			nrs[nr] = k
		}
		for nr, k := range c.net {
			nrs[nr] = k
		}
		calls[i].nrs = nrs
	}
	return calls
}

// startSupervisor serves the listener fd on a goroutine of its own.
func startSupervisor(fd int, gate *netGate) *supervisor {
	s := &supervisor{fd: fd, calls: map[uint32]map[uint32]renameKind{}, net: gate}
	if gate != nil {
		gate.sup = s
	}
	for _, c := range watchedCalls(gate != nil) {
		s.calls[c.arch] = c.nrs
	}
	go s.serve()
	return s
}

// report returns the directories moved so far; once the script and its
// descendants are gone, it is the whole record.
func (s *supervisor) report() []Rename {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Rename(nil), s.renames...)
}

func (s *supervisor) serve() {
	// Directory renames run with the caller's credentials, set on this
	// thread alone; new threads of the runtime are started from a clean
	// template thread while this one is locked.
	runtime.LockOSThread()
	if err := s.self.read(); err != nil {
		s.self.broken = true
	}
	for {
		var n seccompNotif
		_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(s.fd), unix.SECCOMP_IOCTL_NOTIF_RECV, uintptr(unsafe.Pointer(&n)))
		switch errno {
		case 0:
		case unix.EINTR, unix.ENOENT:
			// ENOENT: the caller died before the notification was read.
			continue
		default:
			return
		}
		if kind := s.calls[n.Data.Arch][uint32(n.Data.Nr)]; kind.isNet() && s.net != nil {
			// A network call may wait for nash or for a connection: on
			// a goroutine of its own, with the init's credentials.
			go s.serveNet(n, kind)
			continue
		}
		s.mu.Lock()
		resp := s.handle(&n)
		s.mu.Unlock()
		if resp == nil {
			continue // the caller is gone
		}
		resp.ID = n.ID
		// ENOENT: the caller died meanwhile; nothing more to do.
		_, _, _ = unix.Syscall(unix.SYS_IOCTL, uintptr(s.fd), unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(resp)))
	}
}

// send answers notification id; an ENOENT (the caller died meanwhile)
// needs nothing more.
func (s *supervisor) send(id uint64, resp *seccompNotifResp) {
	resp.ID = id
	_, _, _ = unix.Syscall(unix.SYS_IOCTL, uintptr(s.fd), unix.SECCOMP_IOCTL_NOTIF_SEND, uintptr(unsafe.Pointer(resp)))
}

// idValid reports whether notification id is still pending: the caller is
// alive and still waiting, so its pid still names it.
func (s *supervisor) idValid(id uint64) bool {
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(s.fd), ioctlNotifIDValid, uintptr(unsafe.Pointer(&id)))
	return errno == 0
}

// answers.
func respContinue() *seccompNotifResp {
	return &seccompNotifResp{Flags: unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE}
}

func respErrno(err error) *seccompNotifResp {
	if err == nil {
		return &seccompNotifResp{}
	}
	var en unix.Errno
	if !errors.As(err, &en) {
		en = unix.EXDEV
	}
	return &seccompNotifResp{Error: -int32(en)}
}
