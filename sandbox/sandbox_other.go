//go:build !linux

package sandbox

import (
	"context"
	"io"
	"os"
	"time"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/sandbox/egress"
)

// Elsewhere than on Linux there are no namespaces to build a sandbox
// from: New returns ErrUnsupported, so nothing below is ever reached on a
// Sandbox. The types mirror the Linux ones (run_linux.go, txn_linux.go,
// history_linux.go, diff_linux.go), so that the packages that use the
// sandbox build everywhere; make lint builds the module for darwin, which
// catches a field that one side has and the other lacks.

// Pending is a finished run waiting for commit or abort.
type Pending struct {
	ID           string             `json:"id"`
	ExitCode     int                `json:"exit_code"`
	Changes      *effects.ChangeSet `json:"-"`
	Unprotected  []string           `json:"unprotected,omitempty"`
	ReadOnly     []string           `json:"read_only,omitempty"`
	Unsandboxed  bool               `json:"unsandboxed,omitempty"`
	Started      time.Time          `json:"started"`
	Network      []egress.Contact   `json:"network,omitempty"`
	NetworkError string             `json:"network_error,omitempty"`
	ScratchFull  int64              `json:"scratch_full,omitempty"`
	Unlimited    []string           `json:"unlimited,omitempty"`
	Kept         map[string][]byte  `json:"-"`
	Typeahead    []byte             `json:"-"`
}

// Warning is something a script may not be able to change in the sandbox
// as it could outside.
type Warning struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Warn sets what Run calls with warnings; Run is never reached here.
func Warn(f func([]Warning)) Option { return func(s *Sandbox) { s.warn = f } }

// CommitOptions narrows a commit.
type CommitOptions struct {
	Paths       []string
	Prompt      string
	Tokens      *Tokens
	Bookkeeping bool
	Tools       []string
}

// UndoOptions narrows an undo.
type UndoOptions struct {
	Paths []string
	Force bool
}

// RecoveryReport says what Recover found.
type RecoveryReport struct {
	RolledBack []string
	Completed  []string
	Discarded  []string
}

// GCResult says what GC released.
type GCResult struct {
	Forgotten []string `json:"forgotten"`
	Freed     int64    `json:"freed_bytes"`
	Kept      int64    `json:"kept_bytes"`
	Discarded []string `json:"discarded_runs,omitempty"`
}

// Version is one version of a file that nash knows.
type Version struct {
	N       int       `json:"n"`
	Until   time.Time `json:"until"`
	Size    int64     `json:"size"`
	Source  string    `json:"source"`
	TxID    string    `json:"tx,omitempty"`
	Content string    `json:"-"`
}

// NewVersioner finds a pending run's new version of a file.
type NewVersioner interface {
	NewVersion(id, path string) (string, bool)
}

// New returns ErrUnsupported: the sandbox needs Linux.
func New(context.Context, ...Option) (*Sandbox, error) { return nil, ErrUnsupported }

// WriteDiff writes nothing: there is no run to compare.
func WriteDiff(io.Writer, NewVersioner, *Pending) int { return 0 }

// PickVersion returns ErrUnsupported.
func PickVersion([]Version, int, time.Time, int) (Version, error) {
	return Version{}, ErrUnsupported
}

// Run returns ErrUnsupported.
func (s *Sandbox) Run(context.Context, string) (*Pending, error) { return nil, ErrUnsupported }

// Commit returns ErrUnsupported.
func (s *Sandbox) Commit(context.Context, string, CommitOptions) (*Tx, error) {
	return nil, ErrUnsupported
}

// Abort returns ErrUnsupported.
func (s *Sandbox) Abort(string) error { return ErrUnsupported }

// Undo returns ErrUnsupported.
func (s *Sandbox) Undo(context.Context, string, UndoOptions) (*Tx, error) {
	return nil, ErrUnsupported
}

// Redo returns ErrUnsupported.
func (s *Sandbox) Redo(context.Context) (*Tx, error) { return nil, ErrUnsupported }

// Keep returns ErrUnsupported.
func (s *Sandbox) Keep(context.Context, string, string) error { return ErrUnsupported }

// ShowKept returns ErrUnsupported.
func (s *Sandbox) ShowKept(string) (*KeptRun, *effects.ChangeSet, error) {
	return nil, nil, ErrUnsupported
}

// Kept returns ErrUnsupported.
func (s *Sandbox) Kept() ([]*KeptRun, error) { return nil, ErrUnsupported }

// Recover returns ErrUnsupported.
func (s *Sandbox) Recover(context.Context) (*RecoveryReport, error) { return nil, ErrUnsupported }

// Log returns ErrUnsupported.
func (s *Sandbox) Log() ([]*Tx, error) { return nil, ErrUnsupported }

// Show returns ErrUnsupported.
func (s *Sandbox) Show(string) (*Tx, *effects.ChangeSet, error) { return nil, nil, ErrUnsupported }

// OldVersion finds nothing.
func (s *Sandbox) OldVersion(string, string) (string, bool) { return "", false }

// NewVersion finds nothing.
func (s *Sandbox) NewVersion(string, string) (string, bool) { return "", false }

// Forget returns ErrUnsupported.
func (s *Sandbox) Forget(context.Context, string) error { return ErrUnsupported }

// GC returns ErrUnsupported.
func (s *Sandbox) GC(context.Context, time.Duration, int64) (*GCResult, error) {
	return nil, ErrUnsupported
}

// History returns ErrUnsupported.
func (s *Sandbox) History(string) ([]Version, error) { return nil, ErrUnsupported }

// Rollback returns ErrUnsupported.
func (s *Sandbox) Rollback(context.Context, string, Version) (*Tx, error) {
	return nil, ErrUnsupported
}

// StageVersion returns ErrUnsupported.
func (s *Sandbox) StageVersion(context.Context, string, Version) (*Pending, error) {
	return nil, ErrUnsupported
}

// RecordVersion returns ErrUnsupported.
func (s *Sandbox) RecordVersion(string, int64) error { return ErrUnsupported }

// StateDirectory is the state directory.
func (s *Sandbox) StateDirectory() string { return s.stateDir }

// Close does nothing.
func (s *Sandbox) Close() error { return nil }

// What the files shared with Linux (sandbox.go, store.go, lock_paths.go,
// summary.go) refer to.

type lightRun struct{}

type ids struct{}

type fingerprint struct{}

type stateLock struct{}

func (*stateLock) unlock() {}

func (s *Sandbox) layout() layout { return layout(s.stateDir) }

func (l layout) lock(context.Context) (*stateLock, error) { return nil, ErrUnsupported }

func writeFileAtomic(string, []byte) error { return ErrUnsupported }

// under is never reached here: nothing commits or undoes, so no lock is
// checked against a change.
func under(string, string) bool { return false }

// input is the Linux sandbox's stdin feeder; there is none here.
type input struct{}

// DiscardInput drops what waits in a terminal's input queue; here it does
// nothing.
func DiscardInput(f *os.File) {}

// Answers is where nash reads answers after a run: never reached here.
func (s *Sandbox) Answers() io.Reader { return s.stdin }

// Unrecovered is what recovery could not finish: nothing here.
func (s *Sandbox) Unrecovered() error { return nil }
