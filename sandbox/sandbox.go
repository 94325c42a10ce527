package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/nash-shell/nash/sandbox/egress"
)

// ErrUnsupported is returned where Linux namespaces are not available at all
// (another OS).
var ErrUnsupported = errors.New("the sandbox needs Linux")

// UnavailableError says the sandbox cannot be built here and why. Nothing was
// run.
type UnavailableError struct {
	Reason string   // what is missing, in a sentence
	Paths  []string // paths that could not be protected, when that is the cause
}

func (e *UnavailableError) Error() string {
	if len(e.Paths) == 0 {
		return "sandbox unavailable: " + e.Reason
	}
	return fmt.Sprintf("sandbox unavailable: %s: %s", e.Reason, strings.Join(e.Paths, ", "))
}

// ConflictError says an undo (or commit) would overwrite paths that changed
// since; nothing was changed.
type ConflictError struct {
	Conflicts []Conflict
}

// Conflict names one path and why it conflicts.
type Conflict struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

func (e *ConflictError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d path(s) changed since: ", len(e.Conflicts))
	for i, c := range e.Conflicts {
		if i == 3 {
			fmt.Fprintf(&b, ", and %d more", len(e.Conflicts)-3)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s (%s)", strconvQuote(c.Path), c.Reason)
	}
	return b.String()
}

// NotFoundError says a transaction id is unknown.
type NotFoundError struct{ ID string }

func (e *NotFoundError) Error() string { return fmt.Sprintf("no transaction %s", e.ID) }

// Sandbox runs scripts and manages the transactions they produce. It is safe
// for use by one goroutine; concurrent nash processes serialize through a
// lock file.
type Sandbox struct {
	stateDir string
	network  bool
	// netPolicy says what a run may reach when the network is not the
	// host's; netResolver looks allowed names up (nil: the system's).
	netPolicy   egress.Policy
	netResolver egress.Resolver
	netRelay    bool
	unprotected bool
	stdin       io.Reader
	stdout      io.Writer
	stderr      io.Writer
	dir         string
	env         []string
	shell       string
	exe         string
	// keep is the directory whose content a run leaves for nash (Keep).
	keep string
	// torndown holds, per pending run of this process, a channel that
	// yields once the run's namespaces are gone.
	torndown map[string]<-chan error
	// breakOverlay, set only by tests, makes the overlay at that mount
	// point fail for real (its lower does not exist), to exercise refusal.
	breakOverlay string
	// pidStart is this process's start time (procStart), once read.
	pidStart string
	// lastRecovery is what New's recovery found.
	lastRecovery *RecoveryReport
	// light holds, per run of this process, its scratch dir and whether
	// it changed little enough to leave its remains for a later sweep.
	light map[string]lightRun
	// heavy is set once something was put in the trash that Close must
	// see removed: a run that changed much, or one of another process.
	heavy bool
	// sweepDue says the sweep New owes (it removes the scratch dirs of
	// nash processes that are gone) has not started yet; trashDue, that
	// light runs wait in the trash. Run starts the sweep once the init is
	// at work, not before: a sweep under way slows the fork of the init
	// down by more than it costs.
	sweepDue, trashDue bool
	// trashScratch lists this process's scratch dirs of discarded runs,
	// for the sweep (other processes' get a note in the trash).
	trashMu      sync.Mutex
	trashScratch []string
	// sweeping is held while the trash is being emptied; sweeps counts
	// the sweeps under way, for Close.
	sweeping sync.Mutex
	sweeps   sync.WaitGroup
	// in is the stdin scripts are fed from, one run after another, when
	// it is not a terminal (stdio_linux.go).
	in *input
	// maxProcs caps each run's processes and threads; scratchSize caps
	// each run's scratch tmpfs, which holds what it writes outside the
	// working directory.
	maxProcs    int
	scratchSize int64
	// unrecovered is what New's recovery could not finish: a roll-back
	// that fell short (no space, say), tried again before each commit and
	// undo.
	unrecovered error
	// fault, set only by tests, is called at named points of commit and
	// undo (the test seam: fill the disk, swap a directory there).
	fault func(point string) error
	// warn receives what a script may not change in the sandbox as
	// outside (ids_linux.go); ids is who an ordinary user's sandbox maps,
	// once worked out; newgidmap is the helper's path ("-": none, for
	// tests).
	warn      func([]Warning)
	ids       *ids
	newgidmap string
}

// Option configures a Sandbox.
type Option func(*Sandbox)

// StateDir sets where transactions, undo layers and the journal live.
func StateDir(dir string) Option { return func(s *Sandbox) { s.stateDir = dir } }

// Network gives scripts the host's network, all of it, unwatched. Without
// it a run reaches what its NetPolicy allows, through nash, and every
// attempt is recorded (Pending.Network).
func Network(on bool) Option { return func(s *Sandbox) { s.network = on } }

// NetPolicy sets what a run may reach (default: nothing outside the
// sandbox).
func NetPolicy(p egress.Policy) Option { return func(s *Sandbox) { s.netPolicy = p } }

// NetResolver sets how nash looks up the names a run may reach (default:
// the system's resolver). Tests map names to local servers with it.
func NetResolver(r egress.Resolver) Option { return func(s *Sandbox) { s.netResolver = r } }

// NetRelay keeps every allowed connection on nash's relay, which reads its
// first bytes (TLS server name, HTTP Host, credentials in plain HTTP),
// instead of handing the script a connection of nash's own, which is as
// fast as one outside the sandbox but unread (egress.Proxy.Direct).
func NetRelay(on bool) Option { return func(s *Sandbox) { s.netRelay = on } }

// Unprotected lets a run go ahead when some paths cannot be overlaid (they are
// then changed live and named in the result), or with no sandbox at all when
// namespaces are unavailable. Off by default: nash refuses instead.
func Unprotected(on bool) Option { return func(s *Sandbox) { s.unprotected = on } }

// Stdio sets the script's standard streams (default: nash's own).
func Stdio(in io.Reader, out, err io.Writer) Option {
	return func(s *Sandbox) { s.stdin, s.stdout, s.stderr = in, out, err }
}

// DefaultMaxProcesses is how many processes (threads included) a run may
// have at once unless MaxProcesses says otherwise: far more than a build
// on a big machine starts, far fewer than a fork bomb would.
const DefaultMaxProcesses = 4096

// MaxProcesses caps how many processes, threads included, a run may have
// at once; a fork beyond fails inside with EAGAIN. n <= 0 keeps the
// default. For root the cap is held by the pid namespace alone, so a run
// may have up to n+364 (see sandboxinit.PidHeadroom).
func MaxProcesses(n int) Option {
	return func(s *Sandbox) {
		if n > 0 {
			s.maxProcs = n
		}
	}
}

// DefaultScratchSize is the size of a run's scratch space, where what it
// writes outside the working directory is held until commit, unless
// ScratchSize says otherwise: 1 GiB, or a quarter of the memory when
// that is less.
const DefaultScratchSize = 1 << 30

// ScratchSize caps, in bytes, what a run may write outside the working
// directory (to /tmp, /etc, your home when you work elsewhere): it is held
// in memory until commit, and a write beyond the cap fails inside with
// ENOSPC (Pending.ScratchFull says so). n <= 0 keeps the default.
func ScratchSize(n int64) Option {
	return func(s *Sandbox) {
		if n > 0 {
			s.scratchSize = n
		}
	}
}

// Dir sets the script's working directory (default: nash's).
func Dir(dir string) Option { return func(s *Sandbox) { s.dir = dir } }

// Env sets the script's environment (default: nash's).
func Env(env []string) Option { return func(s *Sandbox) { s.env = env } }

// Keep names a directory where a run leaves data for nash rather than
// changes for the person (the interactive shell's bash state, written as
// the script exits): what the run writes under dir is never a change, is
// neither shown nor committed, and the regular files it leaves directly in
// dir come back in Pending.Kept, up to KeptLimit bytes in all. dir is
// absolute and exists before the run.
func Keep(dir string) Option { return func(s *Sandbox) { s.keep = dir } }

// KeptLimit bounds what Pending.Kept holds: files beyond it are left out.
const KeptLimit = 16 << 20

// Shell sets the shell that runs scripts (default: bash, else sh).
func Shell(path string) Option { return func(s *Sandbox) { s.shell = path } }

// Executable sets the binary re-executed as the sandbox init (default: this
// process's own executable). Tests point it at a built nash.
func Executable(path string) Option { return func(s *Sandbox) { s.exe = path } }

// DefaultStateDir is $XDG_STATE_HOME/nash, or ~/.local/state/nash.
func DefaultStateDir() (string, error) {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "nash"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find state dir: %w", err)
	}
	return filepath.Join(home, ".local", "state", "nash"), nil
}

func strconvQuote(s string) string {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == '"' || r == '\\' || r >= 0x80 {
			return fmt.Sprintf("%q", s)
		}
	}
	return s
}
