package shell

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/internal/conversation"
	"github.com/nash-shell/nash/planner"
	"github.com/nash-shell/nash/sandbox"
	"github.com/nash-shell/nash/sandbox/egress"
)

// Planner is what the shell needs of *planner.Planner.
type Planner interface {
	Plan(ctx context.Context, req planner.Request) (*planner.Artifact, error)
	Revise(ctx context.Context, req planner.Request, previous, feedback string) (*planner.Artifact, error)
	Explain(ctx context.Context, req planner.Request, script string) (*planner.Explanation, error)
	Remember(r planner.Record) error
}

// Sandbox is what the shell needs of *sandbox.Sandbox.
type Sandbox interface {
	Run(ctx context.Context, script string) (*sandbox.Pending, error)
	Commit(ctx context.Context, id string, opt sandbox.CommitOptions) (*sandbox.Tx, error)
	Abort(id string) error
	// Keep aborts a pending run but keeps it, to be committed later.
	Keep(ctx context.Context, id, prompt string) error
	Undo(ctx context.Context, id string, opt sandbox.UndoOptions) (*sandbox.Tx, error)
	Redo(ctx context.Context) (*sandbox.Tx, error)
	ShowKept(id string) (*sandbox.KeptRun, *effects.ChangeSet, error)
	Log() ([]*sandbox.Tx, error)
	Show(id string) (*sandbox.Tx, *effects.ChangeSet, error)
	NewVersion(id, path string) (string, bool)
	OldVersion(id, path string) (string, bool)
}

// OpenSpec is what a sandbox is opened with: the session's directory and
// environment, and the streams the script gets.
type OpenSpec struct {
	Dir            string
	Env            []string
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Network gives the script the host's network, all of it (nash run
	// --net); without it the script reaches only what the configuration
	// (Config.Net) and Allow allow, and every attempt is recorded.
	Network bool
	// Allow names destinations this run may reach beyond the
	// configuration's: --net=HOST,... and the person's answers.
	Allow []egress.Rule
	// Unprotected lets the run go ahead where the sandbox cannot hold
	// changes back (they happen live, and the run says which).
	Unprotected bool
	// Keep is a directory whose content the run leaves for nash (the
	// shell's bash state), never a change: sandbox.Keep.
	Keep string
}

// OpenFunc opens a sandbox. The shell opens one per run (the directory and
// environment change between runs) and one per built-in that needs it.
type OpenFunc func(ctx context.Context, spec OpenSpec) (Sandbox, error)

// FindFunc searches the file index for query and writes the hits to w. It
// returns ErrNoIndex when no index is set up.
type FindFunc func(ctx context.Context, query string, w io.Writer) error

// ErrNoIndex is returned by a FindFunc when there is no index to search.
var ErrNoIndex = errors.New("the index is not set up: add files with nash index add PATH")

// Config is everything the shell is started with. Planner is called at
// most once per model, on the first request in English to it, so starting
// the shell contacts no model.
type Config struct {
	// Planner builds the planner of model (a provider spec): the
	// configured Model, or one :model switched to.
	Planner func(model string) (Planner, error)
	Open    OpenFunc
	Find    FindFunc // nil: :find says the index is not set up
	Model   string   // shown in the prompt and by :model
	// Models lists the models of model's provider, for :model; nil: the
	// shell lists none. SaveModel makes model the configured one (:model
	// NAME --save writes it to the config file); nil: it cannot be saved.
	Models    func(ctx context.Context, model string) ([]planner.ModelInfo, error)
	SaveModel func(model string) error
	// History is what the planner sees of earlier steps when the session
	// starts: those of a resumed session (nash --resume, nash -c
	// --continue). Keep, when set, is told each step of this one, so that
	// it can be resumed; it is called from the goroutine of the pass and
	// must not block long.
	History  []planner.HistoryEntry
	Keep     func(conversation.Exchange)
	StateDir string   // where the history file lives; "" keeps no history
	Dir      string   // the starting directory
	Env      []string // the starting environment, as os.Environ
	Home     string
	Editor   string // $VISUAL or $EDITOR; "" means vi
	Color    bool   // false: no colour or styling escape codes (NO_COLOR)
	Keys     KeyMap
	// Tester, when set, makes what tests a script before it is trusted:
	// t and g at the review, nash test (TestScript). Nil: none.
	Tester TesterFunc
	// Summarize, when set (a model is configured), writes the plain-English
	// summary of a committed transaction and returns it. The shell calls
	// it after each commit without holding up the prompt.
	Summarize SummarizeFunc
	// Net is the network policy of runs in dir: what they reach without
	// asking (the configuration's allow and deny lists). Nil: nothing.
	Net func(dir string) (egress.Policy, error)
	// Typed says what becomes of what a command the person typed (not a
	// planned script) changed: TypedAuto (the default) commits it when
	// the line ends, shown in one line and undoable; TypedAsk shows the
	// effect summary and asks, as for a planned script. Either way a line
	// that does what --yes never covers asks first.
	Typed TypedMode
	// ToolFiles are the tools' own files (effects.DefaultToolFiles when
	// nil): changes to them alone are committed without a question, and
	// are listed apart.
	ToolFiles []effects.ToolFile
	// Background, when set, starts work that lives as long as the
	// interactive shell (the index watcher) and returns how to stop it.
	// The shell starts it a moment after the first prompt is drawn, so it
	// never delays that prompt, and stops it on exit; an error goes to
	// the shell's log (nash.log in the state dir).
	Background func(ctx context.Context) (stop func(), err error)
	// FirstStart, when set, runs in the background once the first prompt
	// is drawn; what it returns ("" for nothing) is shown above the
	// prompt: the guidance of the first start without a working model.
	FirstStart func(ctx context.Context) string
	// BashSession carries one bash session from typed line to typed line
	// (variables, $?, functions, aliases, options, umask, the directory
	// stack), where the system has bash; Open must honour OpenSpec.Keep.
	BashSession bool
	// ReadBashrc has the interactive shell read ~/.bashrc once at start
	// (as an interactive bash does, in the sandbox, its writes
	// discarded), for the session's aliases, functions and PATH.
	ReadBashrc bool
}

// TypedMode is what becomes of a typed command's changes (Config.Typed).
type TypedMode string

// The typed modes.
const (
	TypedAuto TypedMode = "auto"
	TypedAsk  TypedMode = "ask"
)

// SummarizeFunc summarizes what committed transaction txID changed.
type SummarizeFunc func(ctx context.Context, txID string, cs *effects.ChangeSet) (string, error)

// HistoryFile is the name of the history file in the state directory.
const HistoryFile = "history"

// ErrAborted is returned when the person aborts at review or at the commit
// prompt: nothing was changed.
var ErrAborted = errors.New("aborted; nothing was changed")

// ExitStatus is a script's own non-zero exit code, passed on as nash's.
type ExitStatus int

func (e ExitStatus) Error() string { return fmt.Sprintf("the script exited with status %d", int(e)) }

// PlanError says the planner could not produce a script.
type PlanError struct{ Err error }

func (e *PlanError) Error() string { return e.Err.Error() }

// Unwrap returns the planner's error.
func (e *PlanError) Unwrap() error { return e.Err }

// ConfirmError says a script needs a second confirmation that --yes does
// not give (it deletes outside the directory or cannot be undone).
type ConfirmError struct{ Reason string }

func (e *ConfirmError) Error() string {
	return "not run: " + e.Reason + "; --yes does not cover this, run without it to confirm"
}
