package sandbox

import (
	"bytes"
	"context"
	"encoding/gob"
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
)

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
}

// New returns a Sandbox and completes or rolls back whatever an earlier nash
// left unfinished in the state directory.
func New(ctx context.Context, opts ...Option) (*Sandbox, error) {
	s := &Sandbox{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, torndown: map[string]<-chan error{}}
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
		s.exe = "/proc/self/exe"
	}
	if err := s.layout().ensure(); err != nil {
		return nil, err
	}
	rep, err := s.Recover(ctx)
	if err != nil {
		return nil, err
	}
	s.lastRecovery = rep
	return s, nil
}

func (s *Sandbox) layout() layout { return layout(s.stateDir) }

// StateDirectory reports where the sandbox keeps its state.
func (s *Sandbox) StateDirectory() string { return s.stateDir }

// Run runs script in a fresh sandbox and returns the pending result. The
// script's changes are held until Commit or Abort. A non-zero exit code is not
// an error.
func (s *Sandbox) Run(ctx context.Context, script string) (*Pending, error) {
	l := s.layout()
	lk, err := l.lock(ctx)
	if err != nil {
		return nil, err
	}
	id, err := l.newRun()
	lk.unlock()
	if err != nil {
		return nil, err
	}
	runDir := l.runDir(id)
	plan, scratch, err := s.plan(runDir)
	if err != nil {
		_ = s.removeRunFiles(&runRecord{ID: id, Scratch: scratch})
		return nil, err
	}
	rec := &runRecord{
		ID: id, Script: script, Dir: s.dir, Started: time.Now().UTC(), PID: os.Getpid(),
		PIDStart: procStart(os.Getpid()), Layers: plan.Layers, State: runRunning, Scratch: scratch,
	}
	if err := writeGobVolatile(filepath.Join(runDir, runFile), rec); err != nil {
		_ = s.removeRunFiles(rec)
		return nil, fmt.Errorf("record run: %w", err)
	}
	res, done, err := s.startChild(ctx, plan, script)
	if err != nil {
		_ = s.removeRunFiles(rec)
		var ue *UnavailableError
		if errors.As(err, &ue) && s.unprotected && len(ue.Paths) == 0 {
			return s.runUnsandboxed(ctx, script)
		}
		return nil, err
	}
	cs, ops, err := scanLayers(plan.Layers)
	if err != nil {
		_ = s.removeRunFiles(rec)
		return nil, fmt.Errorf("read what the script changed: %w", err)
	}
	rec.Pre = map[string]fingerprint{}
	for _, o := range ops {
		fp := fingerprintOf(o.Path)
		rec.Pre[o.Path] = fp
		if !fp.Absent && time.Unix(0, fp.Ctime).After(rec.Started) {
			rec.Touched = append(rec.Touched, o.Path)
		}
	}
	rec.State, rec.ExitCode = runPending, res.ExitCode
	if err := writeGobVolatile(filepath.Join(runDir, runFile), rec); err != nil {
		_ = s.removeRunFiles(rec)
		return nil, fmt.Errorf("record run: %w", err)
	}
	s.torndown[id] = done
	return &Pending{
		ID: id, ExitCode: res.ExitCode, Changes: cs, Unprotected: res.Unprotected,
		ReadOnly: plan.ReadOnly, Started: rec.Started,
	}, nil
}

// plan builds the mount plan and creates the layers' upper and work dirs.
// It returns the scratch dir on tmpfs that holds some of them, if any.
func (s *Sandbox) plan(runDir string) (*mountPlan, string, error) {
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
	plan.Root = filepath.Join(runDir, "root")
	if err := os.Mkdir(plan.Root, 0o700); err != nil {
		return nil, "", fmt.Errorf("create run root: %w", err)
	}
	// An upper dir on the same file system as the files it covers makes
	// commit a rename, but creating an overlay's work dir there costs
	// milliseconds of journaled metadata. So only the overlays that cover
	// where work happens get one; the others (/usr, /etc, ...) get a tmpfs
	// upper, which costs next to nothing, and commit by copy in the rare
	// case they change.
	scratch := ""
	stateDev := devOf(s.stateDir)
	for i := range plan.Layers {
		l := &plan.Layers[i]
		base := runDir
		if devOf(l.Point) != stateDev || !s.hot(l.Point) {
			if scratch == "" {
				if d, err := os.MkdirTemp("/dev/shm", "nash-run-"); err == nil {
					scratch = d
				}
			}
			if scratch != "" {
				base = scratch
			}
		}
		l.Upper = filepath.Join(base, "upper", strconv.Itoa(i))
		l.Work = filepath.Join(base, "work", strconv.Itoa(i))
		for _, d := range []string{l.Upper, l.Work} {
			if err := os.MkdirAll(d, 0o700); err != nil {
				return nil, scratch, fmt.Errorf("create layer dir: %w", err)
			}
		}
	}
	if scratch != "" {
		plan.Hide = append(plan.Hide, scratch)
	}
	if s.breakOverlay != "" {
		// Tests only: split the layer over breakOverlay out and point its
		// lower at a path that does not exist.
		plan.Broken = s.breakOverlay
	}
	// The script must not see (or change) nash's own state, and the
	// overlays' upper dirs live inside it.
	plan.Hide = append(plan.Hide, s.stateDir)
	return plan, scratch, nil
}

// hot reports whether an overlay at point covers a place where scripts
// usually write: the working directory, the home directory, temp dirs.
func (s *Sandbox) hot(point string) bool {
	home, _ := os.UserHomeDir()
	for _, p := range []string{s.dir, home, os.Getenv("TMPDIR"), "/tmp", "/var/tmp"} {
		if p != "" && under(p, point) {
			return true
		}
	}
	return false
}

// startChild runs the sandbox init and waits for it.
// It returns once the script has ended and every process of the sandbox is
// gone; the returned channel yields when the namespaces are torn down.
func (s *Sandbox) startChild(ctx context.Context, plan *mountPlan, script string) (*childResult, <-chan error, error) {
	uid, gid := os.Getuid(), os.Getgid()
	cfg := childConfig{
		Plan: *plan, Script: script, Shell: s.shell, Dir: s.dir, Env: s.env,
		Net: s.network, Unprotected: s.unprotected, Root: uid == 0,
	}
	cfgR, cfgW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	resR, resW, err := os.Pipe()
	if err != nil {
		cfgR.Close()
		cfgW.Close()
		return nil, nil, err
	}
	defer resR.Close()
	cmd := exec.Command(s.exe)
	cmd.Args = []string{"nash-sandbox"}
	cmd.Env = []string{childEnv + "=1", "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s.stdin, s.stdout, s.stderr
	cmd.ExtraFiles = []*os.File{cfgR, resW}
	flags := uintptr(syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS | syscall.CLONE_NEWPID)
	if !s.network {
		flags |= syscall.CLONE_NEWNET
	}
	attr := &syscall.SysProcAttr{Cloneflags: flags, Pdeathsig: syscall.SIGKILL}
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
		attr.AmbientCaps = []uintptr{
			unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SETPCAP,
			unix.CAP_DAC_OVERRIDE, unix.CAP_DAC_READ_SEARCH, unix.CAP_FOWNER, unix.CAP_FSETID,
			unix.CAP_CHOWN, unix.CAP_MKNOD,
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
	resW.Close()
	if err != nil {
		cfgW.Close()
		return nil, nil, unavailable(err)
	}
	enc := gob.NewEncoder(cfgW)
	werr := enc.Encode(cfg)
	cfgW.Close()
	// The init closes the result pipe right before it exits; reading to
	// EOF does not wait for the kernel to tear the namespaces down.
	resCh := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(resR)
		resCh <- b
	}()
	var out []byte
	select {
	case out = <-resCh:
	case <-ctx.Done():
		_ = cmd.Process.Kill()
		<-done
		return nil, nil, ctx.Err()
	}
	if werr != nil {
		_ = cmd.Process.Kill()
		<-done
		return nil, nil, fmt.Errorf("send sandbox config: %w", werr)
	}
	var res childResult
	if jerr := gob.NewDecoder(bytes.NewReader(out)).Decode(&res); jerr != nil {
		err := <-done
		if err != nil {
			return nil, nil, fmt.Errorf("sandbox init failed: %w", err)
		}
		return nil, nil, fmt.Errorf("sandbox init said nothing: %w", jerr)
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
		<-done
		return nil, nil, uerr
	}
	return &res, done, nil
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
	cmd := exec.CommandContext(ctx, s.shell, "-c", script, "nash")
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
	return p, nil
}

// Abort discards a pending run. The live files were never touched.
func (s *Sandbox) Abort(id string) error {
	dir := s.layout().runDir(id)
	if _, err := os.Stat(dir); err != nil {
		return &NotFoundError{ID: id}
	}
	delete(s.torndown, id)
	var rec runRecord
	if err := readGob(filepath.Join(dir, runFile), &rec); err != nil {
		return removeRun(dir)
	}
	return s.removeRunFiles(&rec)
}

// removeRunFiles removes a run's directory and its scratch dir on tmpfs.
func (s *Sandbox) removeRunFiles(rec *runRecord) error {
	if rec.Scratch != "" && strings.HasPrefix(filepath.Base(rec.Scratch), "nash-run-") {
		_ = removeRun(rec.Scratch)
	}
	return removeRun(s.layout().runDir(rec.ID))
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
