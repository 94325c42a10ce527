package doctor

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
)

// Machine is how the checks read the machine. Host returns the real one;
// a test replaces any function to play another machine.
type Machine struct {
	Getuid func() int
	// ReadFile reads /proc/filesystems and the sysctls under /proc/sys.
	ReadFile func(name string) ([]byte, error)
	// Statfs says how much room the file system holding path has.
	Statfs func(path string) (Space, error)
	// LookPath finds a program on PATH.
	LookPath func(file string) (string, error)
	// UserNS creates a user namespace with a mount namespace in it, as
	// the sandbox does, runs nothing of note there, and reports why it
	// could not.
	UserNS func(ctx context.Context) error
}

// Space is the room on a file system, in bytes.
type Space struct {
	Free  uint64 // available to an unprivileged user
	Total uint64
}

// ErrUnsupported is what Host's UserNS and Statfs give off Linux.
var ErrUnsupported = errors.New("not supported on this system")

// Host returns the machine nash runs on.
func Host() Machine {
	return Machine{
		Getuid:   os.Getuid,
		ReadFile: os.ReadFile,
		Statfs:   statfsNearest,
		LookPath: exec.LookPath,
		UserNS:   userNS,
	}
}

// statfsNearest is statfs of path or, when it does not exist yet (a state
// directory before the first run), of its nearest existing parent.
func statfsNearest(path string) (Space, error) {
	p := filepath.Clean(path)
	for {
		s, err := statfs(p)
		if err == nil || !errors.Is(err, os.ErrNotExist) {
			return s, err
		}
		parent := filepath.Dir(p)
		if parent == p {
			return s, err
		}
		p = parent
	}
}
