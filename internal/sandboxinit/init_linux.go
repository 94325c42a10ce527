package sandboxinit

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// Fds the parent passes to the init, after stdin, stdout and stderr.
const (
	configFd  = 3
	controlFd = 4
	firstFree = 5 // the first fd nash does not pass on purpose
)

// Main is the sandbox init, PID 1 of the sandbox's pid namespace: it
// builds the root from the parent's plan, runs the script, reports its exit
// code and exits, which kills every process the script left behind. It never
// returns.
func Main() {
	// Descriptors the caller of nash left open without close-on-exec
	// reach this process through nash's exec: close them before anything
	// else, so that neither the init nor the script holds them.
	egress := egressFd()
	closeInherited(egress)
	// The terminal sends ctrl+c to the whole foreground group: the script
	// decides what to do with it; the init must not die of it. Catching
	// (not ignoring) keeps the script's own dispositions at their defaults.
	// Set up now, while the parent is still sending the config: the first
	// Notify starts the runtime's signal thread, a third of a millisecond.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, unix.SIGINT, unix.SIGQUIT, unix.SIGTERM, unix.SIGHUP)
	gate := startNet(egress)
	syscall.CloseOnExec(configFd)
	syscall.CloseOnExec(controlFd)
	ctl := NewControl(controlFd)
	var r Result
	cf := os.NewFile(configFd, "config")
	b, err := io.ReadAll(cf)
	cf.Close()
	var cfg *Config
	if err == nil {
		cfg, err = DecodeConfig(b)
	}
	scratch := -1
	switch {
	case errors.Is(err, ErrOtherVersion):
		r.Error = fmt.Sprintf("the sandbox init (%s) is from another version of nash; rebuild it with nash (make build) or remove it", os.Args[0])
	case err != nil:
		r.Error = fmt.Sprintf("read sandbox config: %v", err)
	default:
		r, scratch = runInit(cfg, sigs, ctl, gate)
	}
	// The parent goes on as soon as it has the result, while the kernel
	// tears the namespaces down after this exit. The scratch tmpfs goes
	// with it, open: it outlives the namespaces until nash closes it.
	_ = ctl.Send(MsgResult, EncodeResult(&r), scratch)
	os.Exit(0)
}

// closeInherited closes every descriptor from firstFree on but keep (nash's
// egress socket, or -1) and the Go runtime's own (its poller's, which package initialisation may have
// started already): those are anonymous inodes, not files, and close-on-
// exec like everything else here, so no program started from here gets
// them.
func closeInherited(keep int) {
	_ = unix.CloseRange(firstFree, ^uint(0), unix.CLOSE_RANGE_CLOEXEC)
	dir, err := unix.Open("/proc/self/fd", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(dir)
	var fds []int
	buf := make([]byte, 4096)
	for {
		n, err := unix.ReadDirent(dir, buf)
		if err != nil || n <= 0 {
			break
		}
		_, _, names := unix.ParseDirent(buf[:n], -1, nil)
		for _, name := range names {
			if fd, err := strconv.Atoi(name); err == nil && fd >= firstFree && fd != dir && fd != keep {
				fds = append(fds, fd)
			}
		}
	}
	link := make([]byte, 256)
	for _, fd := range fds {
		n, err := unix.Readlink("/proc/self/fd/"+strconv.Itoa(fd), link)
		if err == nil && strings.HasPrefix(string(link[:n]), "anon_inode:") {
			continue
		}
		unix.Close(fd)
	}
}

// runInit builds the root and runs the script. It returns the result and
// the scratch tmpfs, open, or -1.
func runInit(cfg *Config, sigs <-chan os.Signal, ctl *Control, gate *netGate) (Result, int) {
	var r Result
	// The loopback comes up while the root is built: the network
	// namespace belongs to the whole process, not to a thread.
	lo := make(chan error, 1)
	if cfg.Net {
		lo <- nil
	} else {
		go func() { lo <- LoopbackUp() }()
	}
	scratch, err := buildRoot(cfg, &r)
	if err != nil {
		r.Error = err.Error()
		return r, scratch
	}
	if len(r.Failed) > 0 {
		return r, scratch
	}
	if err := <-lo; err != nil {
		r.Error = fmt.Sprintf("bring up loopback: %v", err)
		return r, scratch
	}
	if cfg.MaxProcs > 0 && !capPids(cfg.MaxProcs) && cfg.Root {
		// An ordinary user's cap holds through RLIMIT_NPROC alone;
		// root is exempt from that.
		r.Limits = append(r.Limits, "processes")
	}
	if cfg.MaxProcs > 0 && cfg.Root {
		// Root's script can fill the pid namespace: the init's threads
		// are made now, while there is room.
		reserveThreads(spareThreads)
	}
	if err := sealProcSys(); err != nil {
		r.Error = err.Error()
		return r, scratch
	}
	// On a goroutine of its own, whose thread ends with it: the thread
	// carries the script's seccomp filter, and the init's own calls
	// after the script (sending the result is a sendmsg, which the
	// filter hands to the supervisor when the network is watched) must
	// not.
	type ran struct {
		code    int
		renames []Rename
		sealed  bool
		err     error
	}
	done := make(chan ran, 1)
	go func() {
		var x ran
		x.code, x.renames, x.sealed, x.err = runScript(cfg, sigs, ctl, gate)
		done <- x
	}()
	x := <-done
	code, renames, sealed, err := x.code, x.renames, x.sealed, x.err
	if err != nil {
		r.Error = err.Error()
		return r, scratch
	}
	r.Started, r.ExitCode, r.Renames, r.Sealed = true, code, renames, sealed
	return r, scratch
}

// buildRoot assembles the new root at cfg.Plan.Root and pivots into it.
// It returns the scratch tmpfs, open, or -1.
func buildRoot(cfg *Config, r *Result) (int, error) {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return -1, fmt.Errorf("make mounts private: %w", err)
	}
	scratch, err := mountScratch(cfg)
	if err != nil {
		return scratch, err
	}
	err = buildTree(cfg, r)
	return scratch, err
}

// mountScratch mounts the run's scratch tmpfs, capped at cfg.ScratchSize,
// at Plan.Scratch, and makes the new root's mount point and the upper and
// work dirs of the layers on it there. It returns the tmpfs opened O_PATH,
// which the parent gets with the result: the only way to it once this
// mount namespace is gone. Writes beyond the cap fail inside with ENOSPC;
// nothing of it stays in memory once nash closes it.
func mountScratch(cfg *Config) (int, error) {
	p := &cfg.Plan
	if p.Scratch == "" {
		return -1, nil
	}
	// Every inode costs memory the size does not count: allow one per
	// 4 KiB of the cap, and never fewer than a full source tree needs.
	inodes := max(cfg.ScratchSize/4096, 1<<16)
	opts := fmt.Sprintf("mode=0700,size=%d,nr_inodes=%d", cfg.ScratchSize, inodes)
	if err := unix.Mount("nash-scratch", p.Scratch, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return -1, fmt.Errorf("mount the scratch tmpfs: %w", err)
	}
	fd, err := unix.Open(p.Scratch, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("open the scratch tmpfs: %w", err)
	}
	if under(p.Root, p.Scratch) {
		if err := os.Mkdir(p.Root, 0o700); err != nil {
			return fd, fmt.Errorf("create run root: %w", err)
		}
	}
	for _, l := range p.Layers {
		if !l.Scratch {
			continue
		}
		for _, d := range []string{l.Upper, l.Work} {
			if err := os.Mkdir(d, 0o700); err != nil {
				return fd, fmt.Errorf("create layer dir: %w", err)
			}
		}
		if err := matchTop(l, cfg.Root); err != nil {
			return fd, err
		}
	}
	return fd, nil
}

// matchTop gives a layer's upper dir the mode (and, for root, the owner)
// of the directory it covers, or what nash worked out for it (Top), which
// the overlay's top then shows.
func matchTop(l Layer, root bool) error {
	upper := l.Upper
	if t := l.Top; t != nil {
		if t.GID >= 0 {
			// EINVAL: the group is not mapped after all (newgidmap
			// failed); the directory keeps the user's.
			if err := unix.Lchown(upper, -1, t.GID); err != nil && !errors.Is(err, unix.EINVAL) {
				return fmt.Errorf("create layer dir: %w", err)
			}
		}
		if err := unix.Chmod(upper, t.Mode); err != nil {
			return fmt.Errorf("create layer dir: %w", err)
		}
		return nil
	}
	var st unix.Stat_t
	if err := unix.Stat(l.Point, &st); err != nil {
		return nil // mountOverlays names a point it cannot overlay
	}
	if root {
		if err := unix.Lchown(upper, int(st.Uid), int(st.Gid)); err != nil {
			return fmt.Errorf("create layer dir: %w", err)
		}
	}
	if err := unix.Chmod(upper, st.Mode&0o7777); err != nil {
		return fmt.Errorf("create layer dir: %w", err)
	}
	return nil
}

// under reports whether p is dir or below it.
func under(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// buildTree mounts the root tmpfs, the plan's steps and the hidden paths,
// and pivots into the new root.
func buildTree(cfg *Config, r *Result) error {
	p := &cfg.Plan
	root := p.Root
	if err := unix.Mount("nash", root, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=4m"); err != nil {
		return fmt.Errorf("mount root tmpfs: %w", err)
	}
	// Overlays are independent of each other and most of their cost is in
	// the kernel setting up each upper dir, so once the skeleton they sit
	// on exists they are mounted by a few workers, while this goroutine
	// binds the rest (/proc, /sys, /dev, read-only mounts). Nothing is
	// mounted below an overlay, so the two never meet.
	var overlays []Op
	for _, op := range p.Ops {
		switch op.Kind {
		case OpDir, OpSymlink:
			if err := doOp(root, p, op, cfg, r); err != nil {
				return err
			}
		case OpOverlay:
			overlays = append(overlays, op)
		}
	}
	var ovr Result
	ovDone := make(chan error, 1)
	go func() { ovDone <- mountOverlays(root, p, overlays, cfg, &ovr) }()
	var err error
	for _, op := range p.Ops {
		switch op.Kind {
		case OpDir, OpSymlink, OpOverlay:
			continue
		}
		if err = doOp(root, p, op, cfg, r); err != nil {
			break
		}
	}
	if ovErr := <-ovDone; err == nil {
		err = ovErr
	}
	if err != nil {
		return err
	}
	r.Failed = append(r.Failed, ovr.Failed...)
	r.Unprotected = append(r.Unprotected, ovr.Unprotected...)
	if len(r.Failed) > 0 {
		return nil
	}
	for _, h := range p.Hide {
		target := root + h
		fi, err := os.Lstat(target)
		if err != nil {
			continue
		}
		if !fi.IsDir() {
			// A socket: /dev/null in its place refuses connections.
			if err := unix.Mount("/dev/null", target, "", unix.MS_BIND, ""); err != nil {
				return fmt.Errorf("hide %s: %w", h, err)
			}
			continue
		}
		if err := unix.Mount("nash-hidden", target, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=4k"); err != nil {
			return fmt.Errorf("hide %s: %w", h, err)
		}
	}
	if err := os.Chdir(root); err != nil {
		return fmt.Errorf("enter new root: %w", err)
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detach old root: %w", err)
	}
	if err := os.Chdir("/"); err != nil {
		return fmt.Errorf("enter new root: %w", err)
	}
	// The skeleton is sealed: new entries directly in it could not be
	// captured by any overlay.
	if err := unix.Mount("", "/", "", unix.MS_REMOUNT|unix.MS_BIND|unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV, ""); err != nil {
		return fmt.Errorf("seal root: %w", err)
	}
	return nil
}

// doOp carries out one step of the plan under root; overlays are not
// among them (mountOverlays mounts those).
func doOp(root string, p *Plan, op Op, cfg *Config, r *Result) error {
	target := root + op.Path
	if op.Path == "/" {
		target = root
	}
	switch op.Kind {
	case OpDir:
		if op.Path == "/" {
			return os.Chmod(root, os.FileMode(op.Mode))
		}
		if err := os.Mkdir(target, os.FileMode(op.Mode)|0o700); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("create %s: %w", op.Path, err)
		}
		return os.Chmod(target, os.FileMode(op.Mode))
	case OpSymlink:
		if err := os.Symlink(op.Target, target); err != nil {
			return fmt.Errorf("create symlink %s: %w", op.Path, err)
		}
		return nil
	case OpBindRO:
		return bind(op.Path, target, op.File, true)
	case OpProc:
		if err := os.MkdirAll(target, 0o555); err != nil {
			return fmt.Errorf("create %s: %w", op.Path, err)
		}
		if err := unix.Mount("proc", target, "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
			return fmt.Errorf("mount /proc: %w", err)
		}
		return nil
	case OpSys:
		return bind(op.Path, target, false, true)
	case OpDev:
		return buildDev(target, p, op, cfg, r)
	}
	return fmt.Errorf("unknown mount op %q", op.Kind)
}

// mountOverlays mounts the overlay ops with a few workers.
func mountOverlays(root string, p *Plan, ops []Op, cfg *Config, r *Result) error {
	type result struct {
		op  Op
		err error
	}
	work := make(chan Op)
	results := make(chan result)
	workers := min(4, len(ops))
	for range workers {
		go func() {
			for op := range work {
				lower := op.Path
				if p.Broken != "" && (p.Broken == op.Path || strings.HasPrefix(p.Broken, op.Path+"/")) {
					lower = "/nonexistent-lower-for-tests"
				}
				results <- result{op, mountOverlay(root+op.Path, lower, p.Layers[op.Layer])}
			}
		}()
	}
	go func() {
		for _, op := range ops {
			work <- op
		}
		close(work)
	}()
	var failed []result
	for range ops {
		if res := <-results; res.err != nil {
			failed = append(failed, res)
		}
	}
	sort.Slice(failed, func(i, j int) bool { return failed[i].op.Path < failed[j].op.Path })
	for _, f := range failed {
		if !cfg.Unprotected {
			r.Failed = append(r.Failed, fmt.Sprintf("%s (%v)", f.op.Path, errnoText(f.err)))
			continue
		}
		if err := bind(f.op.Path, root+f.op.Path, false, false); err != nil {
			return err
		}
		r.Unprotected = append(r.Unprotected, f.op.Path)
	}
	return nil
}

// mountOverlay mounts an overlay of the host path lower at target.
func mountOverlay(target, lower string, l Layer) error {
	if err := os.MkdirAll(target, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", target, err)
	}
	// volatile: the upper is scratch until commit, which syncs what it
	// moves; without it every unmount would sync the whole file system.
	// An upper on tmpfs has nothing to sync, and volatile would cost it
	// three more directories (work/incompat/volatile/dirty) to create now
	// and remove later.
	opts := "userxattr,volatile,"
	var st unix.Statfs_t
	if unix.Statfs(l.Upper, &st) == nil && st.Type == unix.TMPFS_MAGIC {
		opts = "userxattr,"
	}
	opts += "lowerdir=" + escapeOpt(lower) + ",upperdir=" + escapeOpt(l.Upper) + ",workdir=" + escapeOpt(l.Work)
	return unix.Mount("overlay", target, "overlay", 0, opts)
}

// escapeOpt escapes the characters overlayfs's option parser treats
// specially.
func escapeOpt(s string) string {
	return strings.NewReplacer(`\`, `\\`, `,`, `\,`, `:`, `\:`).Replace(s)
}

// bind binds src onto target, recursively; readOnly makes every mount of the
// bound tree read-only.
func bind(src, target string, file, readOnly bool) error {
	if file {
		f, err := os.OpenFile(target, os.O_CREATE|os.O_WRONLY, 0o444)
		if err != nil {
			return fmt.Errorf("create mount point %s: %w", src, err)
		}
		f.Close()
	} else if err := os.MkdirAll(target, 0o755); err != nil {
		return fmt.Errorf("create mount point %s: %w", src, err)
	}
	if err := unix.Mount(src, target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind %s: %w", src, err)
	}
	if !readOnly {
		return nil
	}
	attr := &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}
	if err := unix.MountSetattr(-1, target, unix.AT_RECURSIVE, attr); err != nil {
		return fmt.Errorf("make %s read-only: %w", src, err)
	}
	return nil
}

// buildDev makes a minimal /dev: the usual nodes bound from the host, a
// private devpts, /dev/shm overlaid, and the /proc/self/fd links.
func buildDev(target string, p *Plan, op Op, cfg *Config, r *Result) error {
	if err := os.MkdirAll(target, 0o755); err != nil {
		return fmt.Errorf("create /dev: %w", err)
	}
	if err := unix.Mount("nash-dev", target, "tmpfs", unix.MS_NOSUID, "mode=0755,size=64k"); err != nil {
		return fmt.Errorf("mount /dev: %w", err)
	}
	for _, n := range []string{"null", "zero", "full", "random", "urandom", "tty"} {
		if _, err := os.Stat("/dev/" + n); err != nil {
			continue
		}
		if err := bind("/dev/"+n, filepath.Join(target, n), true, false); err != nil {
			return err
		}
	}
	pts := filepath.Join(target, "pts")
	if err := os.Mkdir(pts, 0o755); err != nil {
		return fmt.Errorf("create /dev/pts: %w", err)
	}
	if err := unix.Mount("devpts", pts, "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"); err != nil {
		return fmt.Errorf("mount /dev/pts: %w", err)
	}
	links := map[string]string{"ptmx": "pts/ptmx", "fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"}
	for name, to := range links {
		if err := os.Symlink(to, filepath.Join(target, name)); err != nil {
			return fmt.Errorf("create /dev/%s: %w", name, err)
		}
	}
	shm := filepath.Join(target, "shm")
	if op.Layer < 0 {
		if err := os.Mkdir(shm, 0o1777); err != nil {
			return fmt.Errorf("create /dev/shm: %w", err)
		}
		return unix.Mount("shm", shm, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777")
	}
	if err := mountOverlay(shm, "/dev/shm", p.Layers[op.Layer]); err != nil {
		if !cfg.Unprotected {
			r.Failed = append(r.Failed, fmt.Sprintf("/dev/shm (%v)", errnoText(err)))
			return nil
		}
		if err := bind("/dev/shm", shm, false, false); err != nil {
			return err
		}
		r.Unprotected = append(r.Unprotected, "/dev/shm")
	}
	return nil
}

// egressFd is the descriptor of nash's egress socket (EgressEnvVar), the
// one descriptor from firstFree on that nash passes on purpose, or -1.
func egressFd() int {
	fd, err := strconv.Atoi(os.Getenv(EgressEnvVar))
	if err != nil || fd < firstFree {
		return -1
	}
	return fd
}

// startNet, when nash passed its egress socket (EgressEnvVar), returns
// the gate through which the script's network calls reach nash
// (netcalls_linux.go); else nil. Nothing is set up until the script first
// sends to an address outside its loopback: a run that uses no network
// pays for none of it.
func startNet(fd int) *netGate {
	if fd < 0 {
		return nil
	}
	syscall.CloseOnExec(fd)
	return newNetGate(fd)
}

// LoopbackUp brings up lo in the calling process's network namespace (the
// sandbox's own, in the init), as it is on any machine.
func LoopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP | unix.IFF_RUNNING)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// rootCaps are the capabilities a script run by root keeps, in its own
// user namespace: what root needs to act on files and users (README: The
// sandbox). Nothing else: without CAP_SYS_ADMIN it cannot unmount an
// overlay, without CAP_SYS_PTRACE it cannot reach the init, without
// CAP_SYS_RESOURCE it cannot lift its limits, without CAP_NET_ADMIN it
// cannot undo the rules that hand nash its network attempts. An ordinary
// user's script keeps none.
const rootCaps = 1<<unix.CAP_CHOWN | 1<<unix.CAP_DAC_OVERRIDE | 1<<unix.CAP_DAC_READ_SEARCH |
	1<<unix.CAP_FOWNER | 1<<unix.CAP_FSETID | 1<<unix.CAP_KILL | 1<<unix.CAP_SETGID | 1<<unix.CAP_SETUID

// runScript runs the script as the init's only child, in a session of its
// own (on its own terminal when cfg.Tty is set), and waits for it, reaping
// every orphan meanwhile and telling the parent when the script is
// stopped. It returns the script's exit code (128+signal when a signal
// ended it), the directories moved for it, and whether its seccomp filter
// (which refuses TIOCSTI) was in place.
func runScript(cfg *Config, sigs <-chan os.Signal, ctl *Control, gate *netGate) (code int, moved []Rename, sealed bool, err error) {
	// Capabilities are per thread: drop them on this locked thread, which
	// then forks the script. The thread is never unlocked, so the runtime
	// retires it with the init.
	runtime.LockOSThread()
	if err := dropCaps(cfg.Root); err != nil {
		return 0, nil, false, fmt.Errorf("drop capabilities: %w", err)
	}
	// The script inherits this thread's rename filter (seccomp_linux.go).
	sup := watchRenames(gate)
	if sup == nil && gate != nil {
		// No supervisor to set the network up on first use: now.
		gate.setUp()
	}
	dir := cfg.Dir
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		dir = "/"
	}
	// $0 is the shell's name, as in bash -c: the script's own error
	// messages read "bash: line 1: ...", apart from nash's.
	cmd := exec.Command(cfg.Shell, "-c", cfg.Script, filepath.Base(cfg.Shell))
	cmd.Env, cmd.Dir = cfg.Env, dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// The init leads a session of its own (nash started it so), with no
	// terminal of the person's. The script gets a process group of its
	// own in that session, the one job control stops and continues; on
	// its terminal, the foreground group. Its parent, the init, being in
	// the same session, the group is not orphaned, so the kernel lets
	// ctrl+z stop it (as sudo's monitor process does).
	attr := &syscall.SysProcAttr{Setpgid: true}
	var slave *os.File
	if t := cfg.Tty; t != nil {
		master, s, err := openTerminal(t)
		if err != nil {
			return 0, nil, false, fmt.Errorf("make the script's terminal: %w", err)
		}
		slave = os.NewFile(uintptr(s), "tty")
		if err := unix.IoctlSetInt(s, unix.TIOCSCTTY, 0); err != nil {
			unix.Close(master)
			slave.Close()
			return 0, nil, false, fmt.Errorf("take the script's terminal: %w", err)
		}
		streams := []*io.Writer{nil, &cmd.Stdout, &cmd.Stderr}
		for i := 0; i < 3; i++ {
			if t.Streams&(1<<i) == 0 {
				continue
			}
			if i == 0 {
				cmd.Stdin = slave
			} else {
				*streams[i] = slave
			}
		}
		// For Foreground, Ctty is the terminal's descriptor in this
		// process, not in the child.
		attr.Foreground, attr.Ctty = true, s
		err = ctl.Send(MsgTerminal, nil, master)
		unix.Close(master)
		if err != nil {
			slave.Close()
			return 0, nil, false, fmt.Errorf("hand over the script's terminal: %w", err)
		}
	}
	// The script and everything it starts share the process cap; the
	// init keeps its own limit, so it can always make a thread. The
	// script is capped before it runs a single instruction: it starts
	// traced, stops at its exec, gets its limit and goes on untraced.
	// Where tracing is refused, it is capped just after it started (the
	// pid namespace's pid_max holds what that could let through).
	attr.Ptrace = cfg.MaxProcs > 0
	cmd.SysProcAttr = attr
	err = cmd.Start()
	if err != nil && attr.Ptrace {
		retry := exec.Command(cmd.Path, cmd.Args[1:]...)
		retry.Env, retry.Dir = cmd.Env, cmd.Dir
		retry.Stdin, retry.Stdout, retry.Stderr = cmd.Stdin, cmd.Stdout, cmd.Stderr
		attr.Ptrace = false
		retry.SysProcAttr = attr
		cmd, err = retry, retry.Start()
	}
	if slave != nil {
		slave.Close()
	}
	if err != nil {
		return 0, nil, false, fmt.Errorf("start %s: %w", cfg.Shell, err)
	}
	pid := cmd.Process.Pid
	if cfg.MaxProcs > 0 {
		lim := &unix.Rlimit{Cur: uint64(cfg.MaxProcs), Max: uint64(cfg.MaxProcs)}
		if attr.Ptrace {
			var ws unix.WaitStatus
			for {
				_, err := unix.Wait4(pid, &ws, 0, nil)
				if !errors.Is(err, unix.EINTR) {
					break
				}
			}
		}
		err := unix.Prlimit(pid, unix.RLIMIT_NPROC, lim, nil)
		if attr.Ptrace {
			_ = unix.PtraceDetach(pid)
		}
		if err != nil {
			_ = unix.Kill(pid, unix.SIGKILL)
			return 0, nil, false, fmt.Errorf("cap the script's processes: %w", err)
		}
	}
	go func() {
		for s := range sigs {
			if s == unix.SIGTERM || s == unix.SIGHUP {
				_ = unix.Kill(pid, s.(syscall.Signal))
			}
		}
	}()
	go func() {
		// The parent says when a stopped script may go on.
		for {
			kind, _, fd, err := ctl.Recv()
			if fd >= 0 {
				unix.Close(fd)
			}
			if err != nil {
				return
			}
			if kind == MsgContinue {
				_ = unix.Kill(-pid, unix.SIGCONT)
			}
		}
	}()
	for {
		var ws unix.WaitStatus
		wpid, err := unix.Wait4(-1, &ws, unix.WUNTRACED, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return 0, nil, false, fmt.Errorf("wait for script: %w", err)
		}
		if wpid != pid {
			continue // an orphan the init reaps (or one that stopped)
		}
		if ws.Stopped() {
			// ctrl+z on its terminal (or a stop signal): the parent
			// gives the person back their shell and continues the
			// script when they do.
			if err := ctl.Send(MsgStopped, []byte{byte(ws.StopSignal())}, -1); err != nil {
				_ = unix.Kill(-pid, unix.SIGCONT)
			}
			continue
		}
		code = ws.ExitStatus()
		if ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
		killAll()
		// Nothing of the sandbox writes any more: let the parent's copies
		// of the script's output reach their end before the report.
		for fd := 0; fd <= 2; fd++ {
			_ = unix.Close(fd)
		}
		return code, sup.report(), sup != nil, nil
	}
}

// killAll kills every other process of the sandbox and reaps them, so that
// nothing writes to the overlays once the init reports the run finished.
func killAll() {
	_ = unix.Kill(-1, unix.SIGKILL)
	for {
		var ws unix.WaitStatus
		_, err := unix.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return // ECHILD: all gone
		}
	}
}

// dropCaps leaves this thread, and so the script it starts, with no
// capability (rootCaps for root) in any set: the bounding set is cut down,
// so no program the script runs gains more, and the inheritable and
// ambient sets are cleared.
func dropCaps(root bool) error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clear ambient: %w", err)
	}
	var keep uint64
	if root {
		keep = rootCaps
	}
	for c := 0; c < 64; c++ {
		if keep&(1<<c) != 0 {
			continue
		}
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			if errors.Is(err, unix.EINVAL) {
				break // past the last capability this kernel knows
			}
			return fmt.Errorf("drop capability %d: %w", c, err)
		}
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capget: %w", err)
	}
	data[0].Inheritable, data[1].Inheritable = 0, 0
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("capset: %w", err)
	}
	return nil
}

// errnoText gives a short name for a mount error.
func errnoText(err error) string {
	var en unix.Errno
	if errors.As(err, &en) {
		return en.Error()
	}
	return err.Error()
}
