package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// LockedError says a commit or an undo would change locked paths; nothing
// was changed.
type LockedError struct {
	Paths []string // the locked paths it would change
}

func (e *LockedError) Error() string {
	q := make([]string, len(e.Paths))
	for i, p := range e.Paths {
		q[i] = strconvQuote(p)
	}
	return "locked, so nothing was changed: " + strings.Join(q, ", ") + " (nash unlock PATH to allow it)"
}

// Lock is one locked path and the mode it had before nash made it
// read-only.
type Lock struct {
	Path string      `json:"path"`
	Mode fs.FileMode `json:"mode"`
}

func (l layout) locksFile() string { return filepath.Join(string(l), "locks.json") }

func (l layout) readLocks() ([]Lock, error) {
	var locks []Lock
	if err := readJSON(l.locksFile(), &locks); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	return locks, nil
}

// Locks lists the locked paths.
func (s *Sandbox) Locks() ([]Lock, error) { return s.layout().readLocks() }

// Lock makes paths read-only and records them: a commit or an undo that
// would change one of them, or a directory holding one, is refused.
func (s *Sandbox) Lock(ctx context.Context, paths ...string) error {
	return s.editLocks(ctx, func(locks map[string]Lock) error {
		for _, p := range paths {
			fi, err := os.Lstat(p)
			if err != nil {
				return fmt.Errorf("lock %s: %w", strconvQuote(p), err)
			}
			if fi.Mode()&fs.ModeSymlink != 0 {
				return fmt.Errorf("lock %s: a symlink; lock what it points to", strconvQuote(p))
			}
			if _, ok := locks[p]; ok {
				continue
			}
			mode := fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
			if err := os.Chmod(p, mode&^0o222); err != nil {
				return fmt.Errorf("lock %s: %w", strconvQuote(p), err)
			}
			locks[p] = Lock{Path: p, Mode: mode}
		}
		return nil
	})
}

// Unlock gives locked paths their write permission back and forgets them.
func (s *Sandbox) Unlock(ctx context.Context, paths ...string) error {
	return s.editLocks(ctx, func(locks map[string]Lock) error {
		for _, p := range paths {
			lk, ok := locks[p]
			if !ok {
				return fmt.Errorf("unlock %s: not locked", strconvQuote(p))
			}
			if fi, err := os.Lstat(p); err == nil {
				// Give back only the write bits nash took.
				mode := fi.Mode()&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) | lk.Mode&0o222
				if err := os.Chmod(p, mode); err != nil {
					return fmt.Errorf("unlock %s: %w", strconvQuote(p), err)
				}
			}
			delete(locks, p)
		}
		return nil
	})
}

func (s *Sandbox) editLocks(ctx context.Context, edit func(map[string]Lock) error) error {
	l := s.layout()
	lk, err := l.lock(ctx)
	if err != nil {
		return err
	}
	defer lk.unlock()
	list, err := l.readLocks()
	if err != nil {
		return err
	}
	locks := map[string]Lock{}
	for _, x := range list {
		locks[x.Path] = x
	}
	editErr := edit(locks)
	out := make([]Lock, 0, len(locks))
	for _, x := range locks {
		out = append(out, x)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	if err := writeJSON(l.locksFile(), out); err != nil {
		return fmt.Errorf("record locks: %w", err)
	}
	return editErr
}

// change is where an operation changes the tree: at Path, and below it
// when it replaces or deletes a whole directory.
type change struct {
	Path    string
	Subtree bool
}

// lockedBy returns the locked paths that changes would touch: a locked
// path itself, anything inside a locked directory, or a locked path inside
// a directory that is replaced or deleted whole.
func lockedBy(locks []Lock, changes []change) []string {
	var hit []string
	for _, lk := range locks {
		for _, c := range changes {
			if under(c.Path, lk.Path) || c.Subtree && under(lk.Path, c.Path) {
				hit = append(hit, lk.Path)
				break
			}
		}
	}
	sort.Strings(hit)
	return hit
}
