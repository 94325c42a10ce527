package sandbox

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// KeptRun is an aborted run that was kept.
type KeptRun struct {
	ID       string    `json:"id"`
	Script   string    `json:"script"`
	Prompt   string    `json:"prompt,omitempty"`
	Dir      string    `json:"dir"`
	Started  time.Time `json:"started"`
	Aborted  time.Time `json:"aborted"`
	ExitCode int       `json:"exit_code"`
}

// ErrNotKept says a run is not one that was aborted and kept.
var ErrNotKept = errors.New("not an aborted run that was kept")

// NotKeptError says a run cannot be kept: it changed files under Point,
// whose overlay lives on the run's scratch tmpfs, which is freed with the
// process that ran it. Only what a run wrote in the working directory's
// file system (its layer on disk) can be kept.
type NotKeptError struct {
	ID    string
	Point string
}

func (e *NotKeptError) Error() string {
	return fmt.Sprintf("run %s cannot be kept: its changes under %s are held in memory only", e.ID, e.Point)
}

// LostError says changes of a kept run are gone: they were held on tmpfs,
// and the machine restarted since.
type LostError struct {
	ID     string
	Points []string
}

func (e *LostError) Error() string {
	return fmt.Sprintf("run %s kept its changes under %s on tmpfs, and they are gone (the machine restarted since)", e.ID, strings.Join(e.Points, ", "))
}
