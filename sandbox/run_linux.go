package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/internal/sandboxinit"
	"github.com/nash-shell/nash/internal/sandboxnet"
	"github.com/nash-shell/nash/sandbox/egress"
)

// defaultScratchSize is DefaultScratchSize, or a quarter of the memory
// when that is less.
func defaultScratchSize() int64 {
	var si unix.Sysinfo_t
	if unix.Sysinfo(&si) == nil {
		if q := int64(si.Totalram) * int64(si.Unit) / 4; q > 0 && q < DefaultScratchSize {
			return q
		}
	}
	return DefaultScratchSize
}

// Pending is a finished run waiting for commit or abort.
type Pending struct {
	ID       string             `json:"id"`
	ExitCode int                `json:"exit_code"`
	Changes  *effects.ChangeSet `json:"-"`
	// Unprotected names paths that were changed live because they could
	// not be overlaid (only with the Unprotected option).
	Unprotected []string `json:"unprotected,omitempty"`
	// ReadOnly names paths that were read-only inside the sandbox.
	ReadOnly []string `json:"read_only,omitempty"`
	// Unsandboxed is set when the script ran directly on the host because
	// namespaces are unavailable and Unprotected allowed it.
	Unsandboxed bool      `json:"unsandboxed,omitempty"`
	Started     time.Time `json:"started"`
	// ScratchFull, when not zero, is the size of the run's scratch space,
	// which the script filled: its writes outside the working directory
	// beyond it failed with "No space left on device".
	ScratchFull int64 `json:"scratch_full,omitempty"`
	// Unlimited names the limits this system could not apply to the run
	// ("processes").
	Unlimited []string `json:"unlimited,omitempty"`
	// Network lists what the run tried to reach outside the sandbox,
	// allowed or not (none when it had the host's network, unwatched).
	Network []egress.Contact `json:"network,omitempty"`
	// NetworkError says why the run's network attempts could not be
	// caught (it then had its loopback only, and nothing was recorded).
	NetworkError string `json:"network_error,omitempty"`
	// Kept holds the files the run left in the Keep directory, by name.
	Kept map[string][]byte `json:"-"`
	// Typeahead is what the person typed on the terminal while the
	// script ran that the script did not read, as its terminal's line
	// discipline left it (lines end in "\n"): a shell hands it to its
	// next prompt, as bash does. Set only where the script could not
	// type into its terminal itself.
	Typeahead []byte `json:"-"`
}

// New returns a Sandbox and completes or rolls back whatever an earlier nash
// left unfinished in the state directory.
func New(ctx context.Context, opts ...Option) (*Sandbox, error) {
	s := &Sandbox{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, torndown: map[string]<-chan error{}, light: map[string]lightRun{},
		maxProcs: DefaultMaxProcesses, scratchSize: defaultScratchSize()}
	for _, o := range opts {
		o(s)
	}
	if s.stateDir == "" {
		d, err := DefaultStateDir()
		if err != nil {
			return nil, err
		}
		s.stateDir = d
	}
	if abs, err := filepath.Abs(s.stateDir); err == nil {
		s.stateDir = abs
	}
	if s.dir == "" {
		d, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("find working directory: %w", err)
		}
		s.dir = d
	}
	if s.env == nil {
		s.env = os.Environ()
	}
	if s.shell == "" {
		s.shell = "/bin/sh"
		for _, c := range []string{"/bin/bash", "/usr/bin/bash"} {
			if _, err := os.Stat(c); err == nil {
				s.shell = c
				break
			}
		}
	}
	if s.exe == "" {
		s.exe = defaultInit()
	}
	if err := s.layout().ensure(); err != nil {
		return nil, err
	}
	rep, err := s.Recover(ctx)
	var re *RecoveryError
	switch {
	case errors.As(err, &re):
		// A roll-back short of space, say: nash stays usable, and says
		// so (Unrecovered).
		s.unrecovered = re
	case err != nil:
		return nil, err
	}
	s.lastRecovery = rep
	// The sweep also removes scratch dirs of nash processes that are
	// gone, which may be big: Run starts it, Close sees it done.
	s.sweepDue = true
	return s, nil
}

func (s *Sandbox) layout() layout { return layout(s.stateDir) }

// Scratch dirs (tmpfs uppers) are /dev/shm/nash-run-PID-START-RANDOM.
// Layer i of a run has its upper dir u<i> and its work dir w<i> in the run
// dir or the scratch dir.
const (
	upperPrefix   = "u"
	workPrefix    = "w"
	scratchBase   = "/dev/shm"
	scratchPrefix = "nash-run-"
)

// sweepScratch removes the user's scratch dirs whose owning process is
// gone: runs of a nash that crashed, or whose state dir was deleted.
func sweepScratch() {
	entries, _ := os.ReadDir(scratchBase)
	uid := uint32(os.Getuid())
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name(), scratchPrefix)
		if strings.HasPrefix(e.Name(), keptPrefix) && e.IsDir() {
			sweepKeptScratch(filepath.Join(scratchBase, e.Name()))
			continue
		}
		if !ok || !e.IsDir() {
			continue
		}
		f := strings.SplitN(rest, "-", 3)
		if len(f) != 3 {
			continue
		}
		// Other users' dirs first, by a stat: reading each owner's
		// /proc/PID/stat costs more, and they are not ours to remove.
		p := filepath.Join(scratchBase, e.Name())
		var st unix.Stat_t
		if unix.Lstat(p, &st) != nil || st.Uid != uid {
			continue
		}
		pid, err := strconv.Atoi(f[0])
		if err != nil || alive(pid, f[1]) {
			continue
		}
		_ = removeRun(p)
	}
}

// sweepDue reports whether the stamp file is older than every (or
// missing), and marks it now if so.
func sweepDue(stamp string, every time.Duration) bool {
	if fi, err := os.Stat(stamp); err == nil && time.Since(fi.ModTime()) < every {
		return false
	}
	now := time.Now()
	if err := os.Chtimes(stamp, now, now); errors.Is(err, os.ErrNotExist) {
		_ = os.WriteFile(stamp, nil, 0o600)
	}
	return true
}

// initName is the sandbox init binary nash looks for next to itself.
const initName = "nash-sandbox"

// defaultInit picks the binary to start as the sandbox init: nash-sandbox
// next to this executable when there is one (it starts faster: it links
// nothing but the sandbox), else this executable itself.
func defaultInit() string {
	if exe, err := os.Executable(); err == nil {
		cand := filepath.Join(filepath.Dir(exe), initName)
		if fi, err := os.Stat(cand); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return cand
		}
	}
	return "/proc/self/exe"
}

// scratchPrefix starts the names of this process's scratch dirs.
func (s *Sandbox) scratchPrefix() string {
	return fmt.Sprintf("%s%d-%s-", scratchPrefix, os.Getpid(), s.selfStart())
}

// selfStart is procStart of this process, read once.
func (s *Sandbox) selfStart() string {
	if s.pidStart == "" {
		s.pidStart = procStart(os.Getpid())
	}
	return s.pidStart
}

// StateDirectory reports where the sandbox keeps its state.
func (s *Sandbox) StateDirectory() string { return s.stateDir }

// Run runs script in a fresh sandbox and returns the pending result. The
// script's changes are held until Commit or Abort. A non-zero exit code is not
// an error.
func (s *Sandbox) Run(ctx context.Context, script string) (*Pending, error) {
	// The init starts first: the fork and exec of the init, the runtime
	// start-up that follows, the id's allocation and the plan's reading of
	// the mount table and making of upper dirs all overlap.
	type spawned struct {
		ch  *child
		err error
	}
	spawnCh := make(chan spawned, 1)
	m := s.userIDs()
	go func() {
		ch, err := s.spawn(m)
		spawnCh <- spawned{ch, err}
	}()
	// An ordinary user's run needs to know where the script writes
	// (ids_linux.go): the static analysis, meanwhile.
	var writesCh chan []string
	if m != nil {
		writesCh = make(chan []string, 1)
		go func() {
			w := expectedWrites(script, s.dir, s.env)
			if s.keep != "" {
				w = append(w, s.keep)
			}
			writesCh <- w
		}()
	}
	abandon := func() {
		if sp := <-spawnCh; sp.err == nil {
			sp.ch.kill()
		}
	}
	l := s.layout()
	lk, err := l.lock(ctx)
	if err != nil {
		abandon()
		return nil, err
	}
	id, err := l.newRun()
	lk.unlock()
	if err != nil {
		abandon()
		return nil, err
	}
	runDir := l.runDir(id)
	plan, scratch, planErr := s.plan(runDir, m)
	var planted []string
	if planErr == nil && m != nil {
		writes := <-writesCh
		planted, planErr = plant(plan.Layers, writes, m, runDir)
		if ws := warnings(writes, m); len(ws) > 0 && s.warn != nil && planErr == nil {
			s.warn(ws)
		}
	}
	sp := <-spawnCh
	ch, err := sp.ch, sp.err
	if err != nil {
		_ = s.removeRunFiles(&runRecord{ID: id, Scratch: scratch})
		var ue *UnavailableError
		if errors.As(err, &ue) && s.unprotected {
			return s.runUnsandboxed(ctx, script)
		}
		return nil, err
	}
	if planErr != nil {
		ch.kill()
		_ = s.removeRunFiles(&runRecord{ID: id, Scratch: scratch})
		return nil, planErr
	}
	rec := &runRecord{
		ID: id, Script: script, Dir: s.dir, Started: time.Now().UTC(), PID: os.Getpid(),
		PIDStart: s.selfStart(), Layers: plan.Layers, State: runRunning, Scratch: scratch, Planted: planted,
	}
	cfg := &sandboxinit.Config{
		Version: sandboxinit.Version,
		Plan:    *plan, Script: script, Shell: s.shell, Dir: s.dir, Env: s.env,
		Net: s.network, Unprotected: s.unprotected, Root: os.Getuid() == 0,
		MaxProcs: s.maxProcs, ScratchSize: s.scratchSize,
	}
	nr := ch.net
	// The record is written while the init builds the root. Until it is
	// there, recovery by another nash leaves the run dir alone (it is
	// new); should this process die first, the init dies with it and the
	// run is discarded later like any other whose owner is gone.
	ch.send(cfg)
	if err := writeGobVolatile(filepath.Join(runDir, runFile), rec); err != nil {
		ch.stop()
		_ = s.removeRunFiles(rec)
		return nil, fmt.Errorf("record run: %w", err)
	}
	if (s.sweepDue || s.trashDue) && s.sweep() {
		s.sweepDue, s.trashDue = false, false
	}
	res, scratchFS, done, err := ch.finish(ctx)
	contacts, netErr := nr.stop()
	if err != nil {
		_ = s.removeRunFiles(rec)
		return nil, err
	}
	// From here on the scratch tmpfs is reached through the descriptor
	// the init handed back: its mount namespace is gone, or going.
	lr := lightRun{scratch: scratch, scratchFS: scratchFS}
	s.light[id] = lr
	if err := reachScratch(plan.Layers, scratchFS); err != nil {
		_ = s.removeRunFiles(rec)
		return nil, err
	}
	rec.Renames = res.Renames
	rec.Network = contacts
	if m != nil {
		openUppers(plan.Layers, planted)
	}
	var kept map[string][]byte
	if s.keep != "" {
		kept = takeKept(plan.Layers, s.keep)
	}
	cs, ops, err := scanLayers(plan.Layers, rec.Renames, rec.Planted)
	if err != nil {
		_ = s.removeRunFiles(rec)
		return nil, fmt.Errorf("read what the script changed: %w", err)
	}
	rec.Pre = map[string]fingerprint{}
	for _, o := range ops {
		p := o.live()
		fp := fingerprintOf(p)
		rec.Pre[p] = fp
		if !fp.Absent && time.Unix(0, fp.Ctime).After(rec.Started) {
			rec.Touched = append(rec.Touched, p)
		}
		if o.From != "" {
			rec.Pre[o.Path] = fingerprintOf(o.Path) // what the move replaces
		}
	}
	rec.State, rec.ExitCode = runPending, res.ExitCode
	lr.light = isLight(cs)
	if len(ops) == 0 {
		// Nothing to commit, and nothing on disk depends on the state:
		// recovery goes by the owner, and only this process commits its
		// runs. The pending record stays in memory; the disk's says
		// running.
		lr.rec = rec
	} else if err := writeGobVolatile(filepath.Join(runDir, runFile), rec); err != nil {
		_ = s.removeRunFiles(rec)
		return nil, fmt.Errorf("record run: %w", err)
	}
	s.torndown[id] = done
	s.light[id] = lr
	p := &Pending{
		ID: id, ExitCode: res.ExitCode, Changes: cs, Unprotected: res.Unprotected,
		ReadOnly: plan.ReadOnly, Started: rec.Started, Unlimited: res.Limits, Network: contacts, Kept: kept,
	}
	if netErr != nil {
		p.NetworkError = netErr.Error()
	}
	if t := ch.io.term; t != nil && res.Sealed {
		p.Typeahead = t.typeahead
	}
	if scratchFS != nil && scratchFull(scratchFS) {
		p.ScratchFull = s.scratchSize
	}
	return p, nil
}

// reachScratch points the layers on the scratch tmpfs at it through the
// descriptor the init handed back (/proc/self/fd/N/...).
func reachScratch(layers []sandboxinit.Layer, fs *os.File) error {
	for i := range layers {
		l := &layers[i]
		if !l.Scratch {
			continue
		}
		if fs == nil {
			return errors.New("the sandbox init did not hand back the run's scratch space")
		}
		base := "/proc/self/fd/" + strconv.Itoa(rawFd(fs))
		l.Upper = filepath.Join(base, filepath.Base(l.Upper))
		l.Work = filepath.Join(base, filepath.Base(l.Work))
	}
	return nil
}

// scratchFull reports whether a run's scratch tmpfs is full, or nearly:
// writes outside the working directory failed with ENOSPC inside.
func scratchFull(fs *os.File) bool {
	var st unix.Statfs_t
	if err := unix.Fstatfs(rawFd(fs), &st); err != nil || st.Blocks == 0 {
		return false
	}
	return st.Bavail*100 < st.Blocks || st.Files > 0 && st.Ffree*100 < st.Files
}

// matchTop gives an upper dir the mode (and, for root, the owner) of the
// directory its overlay covers: the top of an overlay shows its upper
// dir's attributes, and /tmp must stay 1777 inside, not 0700. The upper
// dir stays private all the same: it sits in a 0700 run or scratch dir.
func matchTop(upper, point string, m *ids) error {
	var st unix.Stat_t
	if err := unix.Stat(point, &st); err != nil {
		return nil // the init names a point it cannot overlay
	}
	if m != nil {
		return dirAttrs(upper, point, &st, m)
	}
	if os.Getuid() == 0 {
		if err := unix.Lchown(upper, int(st.Uid), int(st.Gid)); err != nil {
			return fmt.Errorf("create layer dir: %w", err)
		}
	}
	if err := unix.Chmod(upper, st.Mode&0o7777); err != nil {
		return fmt.Errorf("create layer dir: %w", err)
	}
	return nil
}

// plan builds the mount plan and creates the layers' upper and work dirs.
// It returns the scratch dir on tmpfs that holds some of them, if any.
func (s *Sandbox) plan(runDir string, m *ids) (*sandboxinit.Plan, string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, "", &UnavailableError{Reason: fmt.Sprintf("cannot read the mount table: %v", err)}
	}
	mounts, err := parseMountinfo(f)
	f.Close()
	if err != nil {
		return nil, "", err
	}
	plan, err := buildPlan(mounts, osView{})
	if err != nil {
		return nil, "", err
	}
	// An upper dir on the same file system as the files it covers makes
	// commit a rename, but every directory created on a disk file system
	// costs journaled inode allocation (about 0.1 ms each on ext4, and as
	// much again to remove), and overlayfs creates four more in each work
	// dir. So only the overlay that covers the working directory, where
	// work happens, gets its upper there; the others (/usr, /etc, /tmp,
	// $HOME when the work is elsewhere, ...) get theirs on the run's
	// scratch tmpfs, which costs next to nothing, and commit by copy in
	// the rare case they change. The init mounts that tmpfs, capped at the
	// scratch size, so that what a script writes there cannot take the
	// host's memory: writes beyond the cap fail inside with ENOSPC. It
	// is freed when the run is committed or aborted. The new root's mount
	// point lives there too.
	// The scratch mount point's name says which process owns it, so that
	// one left behind (its state dir deleted, or a crash) is found and
	// removed by a later nash once that process is gone.
	scratch, err := os.MkdirTemp(scratchBase, s.scratchPrefix())
	if err != nil {
		scratch = filepath.Join(runDir, "scratch")
		if err := os.Mkdir(scratch, 0o700); err != nil {
			return nil, "", fmt.Errorf("create run scratch dir: %w", err)
		}
	}
	plan.Scratch = scratch
	plan.Root = filepath.Join(scratch, "root")
	stateDev := devOf(s.stateDir)
	for i := range plan.Layers {
		l := &plan.Layers[i]
		if devOf(l.Point) != stateDev || !under(s.dir, l.Point) {
			l.Scratch = true // the init makes its dirs
			l.Upper = filepath.Join(scratch, upperPrefix+strconv.Itoa(i))
			l.Work = filepath.Join(scratch, workPrefix+strconv.Itoa(i))
			var st unix.Stat_t
			if m != nil && unix.Stat(l.Point, &st) == nil {
				l.Top = topAttrs(l.Point, &st, m) // as matchTop would
			}
			continue
		}
		l.Upper = filepath.Join(runDir, upperPrefix+strconv.Itoa(i))
		l.Work = filepath.Join(runDir, workPrefix+strconv.Itoa(i))
		for _, d := range []string{l.Upper, l.Work} {
			if err := os.Mkdir(d, 0o700); err != nil {
				return nil, scratch, fmt.Errorf("create layer dir: %w", err)
			}
		}
		if err := matchTop(l.Upper, l.Point, m); err != nil {
			return nil, scratch, err
		}
	}
	plan.Hide = append(plan.Hide, scratch)
	if s.breakOverlay != "" {
		// Tests only: split the layer over breakOverlay out and point its
		// lower at a path that does not exist.
		plan.Broken = s.breakOverlay
	}
	// The script must not see (or change) nash's own state, and the
	// overlays' upper dirs live inside it.
	plan.Hide = append(plan.Hide, s.stateDir)
	if !s.network {
		// A network namespace does not isolate path-based Unix sockets:
		// without the network, host daemons are out of reach too.
		hide := []string{fmt.Sprintf("/run/user/%d", os.Getuid()), "/run/docker.sock", "/var/run/docker.sock", "/run/dbus/system_bus_socket"}
		for _, kv := range s.env {
			if v, ok := strings.CutPrefix(kv, "XDG_RUNTIME_DIR="); ok && filepath.IsAbs(v) {
				hide = append(hide, filepath.Clean(v))
			}
		}
		for _, p := range hide {
			if fi, err := os.Lstat(p); err == nil && (fi.IsDir() || fi.Mode()&os.ModeSocket != 0) {
				plan.Hide = append(plan.Hide, p)
			}
		}
	}
	return plan, scratch, nil
}

// sameWriter reports whether a and b are the same writer.
func sameWriter(a, b io.Writer) (same bool) {
	defer func() {
		if recover() != nil {
			same = false // an uncomparable writer
		}
	}()
	return a != nil && a == b
}

// child is a started sandbox init, waiting for its config.
type child struct {
	cmd  *exec.Cmd
	cfgW *os.File
	ctl  *sandboxinit.Control
	done chan error // yields cmd.Wait's result once the namespaces are gone
	io   *streams
	// ended is closed when the run is over, to stop feeding stdin.
	ended chan struct{}
	// sendErr is what sending the config failed with.
	sendErr error
	// net serves the run's network (nil when it has the host's).
	net *netRun
}

// spawn starts the sandbox init in its new namespaces. It waits on its
// config pipe, so the parent can plan while the init starts up.
func (s *Sandbox) spawn(m *ids) (*child, error) {
	uid, gid := os.Getuid(), os.Getgid()
	cfgR, cfgW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	ctlNash, ctlInit, err := sandboxinit.NewControlPair()
	if err != nil {
		cfgR.Close()
		cfgW.Close()
		return nil, err
	}
	ctlF := os.NewFile(uintptr(ctlInit), "control")
	cmd := exec.Command(s.exe)
	cmd.Args = []string{"nash-sandbox"}
	cmd.Env = []string{sandboxinit.EnvVar + "=1", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	ended := make(chan struct{})
	st, err := s.streams(ended)
	if err != nil {
		cfgR.Close()
		cfgW.Close()
		ctlF.Close()
		unix.Close(ctlNash)
		return nil, err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = st.files[0], st.files[1], st.files[2]
	cmd.ExtraFiles = []*os.File{cfgR, ctlF}
	var netParent, netChild *os.File
	if !s.network {
		if netParent, netChild, err = sandboxnet.SocketPair(); err != nil {
			cfgR.Close()
			cfgW.Close()
			ctlF.Close()
			unix.Close(ctlNash)
			st.closeAll()
			return nil, err
		}
		// The init's end is the descriptor after those it already gets;
		// the init keeps it open (closeInherited).
		cmd.Env = append(cmd.Env, sandboxinit.EgressEnvVar+"="+strconv.Itoa(3+len(cmd.ExtraFiles)))
		cmd.ExtraFiles = append(cmd.ExtraFiles, netChild)
	}
	// The network namespace is created here, with the others, although
	// it costs the kernel about a millisecond that the init could spend
	// building the root: created by one thread of the init, it would leave
	// the init's other threads, visible to the script as /proc/1/task/*,
	// in the host's, whose /proc/1/net shows the host's sockets.
	flags := uintptr(syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID)
	if !s.network {
		flags |= syscall.CLONE_NEWNET
	}
	// A session of its own: the person's terminal is not the init's
	// controlling terminal, and its signals go to nash alone.
	attr := &syscall.SysProcAttr{Cloneflags: flags, Pdeathsig: syscall.SIGKILL, Setsid: true}
	if uid == 0 {
		// Root maps every id, so files of every owner can be copied up.
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
		attr.GidMappingsEnableSetgroups = true
	} else {
		// An ordinary user stays who they are inside; the init keeps the
		// capabilities it needs through the ambient set. overlayfs does
		// its own work (copy-up, whiteouts, its mode-000 work dir) with
		// the credentials of whoever mounted it, so the file capabilities
		// are needed too. They count only for ids mapped here: the user's
		// own. The script gets none of them.
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		if m != nil && len(m.extra) > 0 {
			attr.GidMappings = nil // newgidmap maps the gids below (ids_linux.go)
		}
		attr.AmbientCaps = []uintptr{
			unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_NET_BIND_SERVICE, unix.CAP_SETPCAP,
			unix.CAP_DAC_OVERRIDE, unix.CAP_DAC_READ_SEARCH, unix.CAP_FOWNER, unix.CAP_FSETID,
			unix.CAP_CHOWN, unix.CAP_MKNOD,
			// To take the script's sockets (pidfd_getfd) and read its
			// calls' arguments even when it made itself undumpable.
			unix.CAP_SYS_PTRACE,
		}
	}
	cmd.SysProcAttr = attr

	// Pdeathsig fires when the thread that started the child exits, so
	// start and wait on one locked thread.
	started := make(chan error, 1)
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		done <- cmd.Wait()
	}()
	err = <-started
	cfgR.Close()
	ctlF.Close()
	st.started()
	if err == nil && attr.GidMappings == nil && uid != 0 {
		if err = mapGIDs(cmd.Process.Pid, m); err != nil {
			_ = cmd.Process.Kill()
			<-done
		}
	}
	if netChild != nil {
		netChild.Close()
	}
	if err != nil {
		close(ended)
		cfgW.Close()
		unix.Close(ctlNash)
		st.closeAll()
		if netParent != nil {
			netParent.Close()
		}
		return nil, unavailable(err)
	}
	ch := &child{cmd: cmd, cfgW: cfgW, ctl: sandboxinit.NewControl(ctlNash), done: done, io: st, ended: ended}
	if netParent != nil {
		ch.net = s.startNet(netParent)
	}
	return ch, nil
}

// kill stops the init before send and waits until it is gone.
func (c *child) kill() {
	c.cfgW.Close()
	c.stop()
}

// send sends the init its config, which sets it going.
func (c *child) send(cfg *sandboxinit.Config) {
	if c.io.term != nil {
		cfg.Tty = c.io.term.config()
	}
	_, c.sendErr = c.cfgW.Write(sandboxinit.EncodeConfig(cfg))
	c.cfgW.Close()
}

// stop kills the init after send and waits until it is gone.
func (c *child) stop() {
	_ = c.cmd.Process.Kill()
	<-c.done
	c.ctl.Close()
	c.io.end(c.ended)
	c.net.abandon()
}

// end finishes a run's streams once every process of the sandbox is gone:
// stdin stops being fed (what the script left unread is kept for what
// reads next), the output copies reach their end, and the person's
// terminal is given back.
func (st *streams) end(ended chan struct{}) {
	close(ended)
	if st.feed != nil {
		st.feed.finish()
	}
	for _, d := range st.copies {
		<-d
	}
	if st.term != nil {
		st.term.finish()
	}
}

// finish waits, after send, until the script has ended and every process
// of the sandbox is gone, relaying the script's terminal meanwhile. It
// returns the init's result and the run's scratch tmpfs, open (or nil);
// the returned channel yields when the namespaces are torn down.
func (c *child) finish(ctx context.Context) (*sandboxinit.Result, *os.File, <-chan error, error) {
	werr := c.sendErr
	type report struct {
		res     []byte
		scratch int
		err     error
	}
	resCh := make(chan report, 1)
	go func() {
		for {
			kind, body, fd, err := c.ctl.Recv()
			if err != nil {
				resCh <- report{err: err, scratch: -1}
				return
			}
			switch {
			case kind == sandboxinit.MsgResult:
				resCh <- report{res: append([]byte(nil), body...), scratch: fd}
				return
			case kind == sandboxinit.MsgTerminal && fd >= 0 && c.io.term != nil:
				if err := c.io.term.start(fd); err != nil {
					unix.Close(fd)
				}
			case kind == sandboxinit.MsgStopped && c.io.term != nil:
				c.io.term.suspend(c.ctl)
			case kind == sandboxinit.MsgStopped:
				_ = c.ctl.Send(sandboxinit.MsgContinue, nil, -1)
			default:
				if fd >= 0 {
					unix.Close(fd)
				}
			}
		}
	}()
	var rep report
	select {
	case rep = <-resCh:
	case <-ctx.Done():
		_ = c.cmd.Process.Kill()
		<-c.done
		rep = <-resCh
		if rep.scratch >= 0 {
			unix.Close(rep.scratch)
		}
		c.ctl.Close()
		c.io.end(c.ended)
		return nil, nil, nil, ctx.Err()
	}
	c.ctl.Close()
	var scratch *os.File
	if rep.scratch >= 0 {
		scratch = os.NewFile(uintptr(rep.scratch), "scratch")
	}
	fail := func(err error) (*sandboxinit.Result, *os.File, <-chan error, error) {
		if scratch != nil {
			scratch.Close()
		}
		return nil, nil, nil, err
	}
	if werr != nil {
		_ = c.cmd.Process.Kill()
		<-c.done
		c.io.end(c.ended)
		return fail(fmt.Errorf("send sandbox config: %w", werr))
	}
	if rep.err != nil {
		// The init died without a word.
		err := <-c.done
		c.io.end(c.ended)
		if err != nil {
			return fail(fmt.Errorf("sandbox init failed: %w", err))
		}
		return fail(errors.New("sandbox init said nothing"))
	}
	// The init killed and reaped every other process before it reported:
	// the script's streams reach their end now.
	c.io.end(c.ended)
	res, derr := sandboxinit.DecodeResult(rep.res)
	if errors.Is(derr, sandboxinit.ErrOtherVersion) {
		<-c.done
		return fail(&UnavailableError{Reason: fmt.Sprintf("the sandbox init (%s) is from another version of nash; rebuild it with nash (make build) or remove it", c.cmd.Path)})
	}
	if derr != nil {
		<-c.done
		return fail(derr)
	}
	var uerr error
	switch {
	case len(res.Failed) > 0:
		uerr = &UnavailableError{Reason: "these paths cannot be overlaid, so the script's changes to them could not be held back (run with --unprotected to let it change them live)", Paths: res.Failed}
	case res.Error != "":
		uerr = &UnavailableError{Reason: res.Error}
	case !res.Started:
		uerr = &UnavailableError{Reason: "the script could not be started"}
	}
	if uerr != nil {
		<-c.done
		return fail(uerr)
	}
	return res, scratch, c.done, nil
}

// unavailable explains a failure to create the namespaces.
func unavailable(err error) error {
	var en syscall.Errno
	if errors.As(err, &en) && (en == syscall.EPERM || en == syscall.EACCES || en == syscall.ENOSPC || en == syscall.EINVAL || en == syscall.EUSERS) {
		return &UnavailableError{Reason: fmt.Sprintf("cannot create user namespaces (%v); check sysctl user.max_user_namespaces, kernel.unprivileged_userns_clone and, on Ubuntu, kernel.apparmor_restrict_unprivileged_userns", en)}
	}
	return fmt.Errorf("start sandbox: %w", err)
}

// runUnsandboxed runs the script directly on the host: only when namespaces
// are unavailable and the person asked for it explicitly.
func (s *Sandbox) runUnsandboxed(ctx context.Context, script string) (*Pending, error) {
	cmd := exec.CommandContext(ctx, s.shell, "-c", script, filepath.Base(s.shell))
	cmd.Dir, cmd.Env = s.dir, s.env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s.stdin, s.stdout, s.stderr
	p := &Pending{Unsandboxed: true, Changes: &effects.ChangeSet{}, Started: time.Now().UTC()}
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		p.ExitCode = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			p.ExitCode = 128 + int(ws.Signal())
		}
	case err != nil:
		return nil, fmt.Errorf("run script: %w", err)
	}
	if s.keep != "" {
		p.Kept = takeKeptLive(s.keep)
	}
	return p, nil
}

// lightRun is what this process remembers of a run it made.
type lightRun struct {
	scratch string // the run's scratch dir, as in its record
	// scratchFS is the run's scratch tmpfs, open: closing it frees it.
	scratchFS *os.File
	light     bool       // isLight: its remains may wait for a later sweep
	rec       *runRecord // the pending record, when it was not written
}

// Limits under which a run's changes are light.
const (
	lightChanges = 64
	lightBytes   = 1 << 20
)

// isLight reports whether a run's changes are few and small, so that what
// is left of it once discarded (a few hundred empty directories and small
// files at most) may wait in the trash for a later sweep.
func isLight(cs *effects.ChangeSet) bool {
	if len(cs.Changes) > lightChanges {
		return false
	}
	var n int64
	for _, c := range cs.Changes {
		if c.After != nil {
			n += c.After.Size
		}
	}
	return n <= lightBytes
}

// Abort discards a pending run. The live files were never touched.
func (s *Sandbox) Abort(id string) error {
	dir := s.layout().runDir(id)
	if _, err := os.Stat(dir); err != nil {
		return &NotFoundError{ID: id}
	}
	delete(s.torndown, id)
	if r, ok := s.light[id]; ok {
		// A run of this process: its record holds nothing more.
		return s.removeRunFiles(&runRecord{ID: id, Scratch: r.scratch})
	}
	var rec runRecord
	if err := readGob(filepath.Join(dir, runFile), &rec); err != nil {
		return removeRun(dir)
	}
	if rec.State == runKept {
		rec.ID = id
		return s.discardKept(&rec)
	}
	return s.removeRunFiles(&rec)
}

// removeRunFiles discards a run's directory and its scratch dir on tmpfs:
// it moves them to the trash, which the sweeper empties in the background,
// so discarding a run costs a rename or two, not a tree removal.
func (s *Sandbox) removeRunFiles(rec *runRecord) error {
	l := s.layout()
	// overlayfs leaves mode-000 dirs in each work dir: open them up now,
	// so that whatever is left of the run can be removed with rm -r by its
	// owner, even before the sweep.
	openWorkDirs(l.runDir(rec.ID))
	stamp := fmt.Sprintf("%s-%d", rec.ID, time.Now().UnixNano())
	switch {
	case strings.HasPrefix(filepath.Base(rec.Scratch), keptPrefix):
		// A kept run's (kept_linux.go), committed at last.
		_ = os.WriteFile(filepath.Join(l.trashDir(), stamp+".scratch"), []byte(rec.Scratch), 0o600)
	case rec.Scratch == "" || !strings.HasPrefix(filepath.Base(rec.Scratch), scratchPrefix):
	case strings.HasPrefix(filepath.Base(rec.Scratch), s.scratchPrefix()):
		// This process's own: its sweeps remove it, or, once this
		// process is gone, any nash's (sweepScratch).
		s.trashMu.Lock()
		s.trashScratch = append(s.trashScratch, rec.Scratch)
		s.trashMu.Unlock()
	default:
		// Another live process's, on another file system: leave a note
		// of it in the trash, next to the run dir.
		_ = os.WriteFile(filepath.Join(l.trashDir(), stamp+".scratch"), []byte(rec.Scratch), 0o600)
	}
	err := os.Rename(l.runDir(rec.ID), filepath.Join(l.trashDir(), stamp))
	if errors.Is(err, os.ErrNotExist) {
		err = nil
	}
	light := s.light[rec.ID].light
	if fs := s.light[rec.ID].scratchFS; fs != nil {
		fs.Close() // what the run wrote outside the working directory: gone
	}
	delete(s.light, rec.ID)
	if light {
		// Left for the sweep of the next run, here or in a later nash.
		s.trashDue = true
		return err
	}
	s.heavy = true
	s.sweep()
	return err
}

// sweep empties the trash in the background, once at a time, and reports
// whether it started. A sweep cut short by the process exiting is finished
// by a later one. Close waits for it.
func (s *Sandbox) sweep() bool {
	if !s.sweeping.TryLock() {
		return false
	}
	s.sweeps.Add(1)
	go func() {
		defer s.sweeps.Done()
		defer s.sweeping.Unlock()
		s.emptyTrash()
	}()
	return true
}

// scratchSweepEvery is how often a user's nash looks in /dev/shm for the
// scratch dirs of nash processes that are gone: each look reads the whole
// of /dev/shm, and what it finds (light runs' remains, mostly) can wait.
const scratchSweepEvery = time.Minute

func (s *Sandbox) emptyTrash() {
	if stamp := s.layout().sweptFile(); sweepDue(stamp, scratchSweepEvery) {
		sweepScratch()
	}
	s.trashMu.Lock()
	own := s.trashScratch
	s.trashScratch = nil
	s.trashMu.Unlock()
	for _, p := range own {
		_ = removeRun(p)
	}
	dir := s.layout().trashDir()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if strings.HasSuffix(e.Name(), ".scratch") {
			if b, err := os.ReadFile(p); err == nil && (strings.HasPrefix(filepath.Base(string(b)), scratchPrefix) || strings.HasPrefix(filepath.Base(string(b)), keptPrefix)) {
				_ = removeRun(string(b))
			}
			_ = os.Remove(p)
			continue
		}
		_ = removeRun(p)
	}
}

// Close finishes background work: it waits for the sweeps under way and,
// when New's sweep never started or this process discarded a run that was
// not light (isLight) or not its own, empties the trash. The remains of
// light runs, a few hundred empty directories at most, are left to the
// next nash's sweep: removing them is most of what a short run costs after
// its script ends.
func (s *Sandbox) Close() error {
	s.sweeps.Wait()
	if !s.heavy && !s.sweepDue {
		return nil
	}
	s.sweeping.Lock()
	defer s.sweeping.Unlock()
	s.emptyTrash()
	return nil
}

// waitTorndown waits until a run's namespaces are gone, so nothing holds its
// overlays any more.
func (s *Sandbox) waitTorndown(id string) {
	if done, ok := s.torndown[id]; ok {
		<-done
		delete(s.torndown, id)
	}
}

// procStart returns the start time of a process (field 22 of
// /proc/PID/stat), to tell a live owner from a reused pid.
func procStart(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

// alive reports whether the process that owned a run still runs.
func alive(pid int, start string) bool {
	return pid > 0 && start != "" && procStart(pid) == start
}
