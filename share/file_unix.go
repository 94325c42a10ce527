//go:build unix

package share

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// identity is what a share records of its file.
type identity struct {
	dev, ino uint64
	size     int64
	mtime    time.Time
}

// openNoFollow opens path for reading without following a symbolic link in
// its last component and without blocking on a FIFO, and returns it with its
// identity if it is a regular file.
func openNoFollow(path string) (*os.File, identity, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, identity{}, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, identity{}, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, identity{}, &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		f.Close()
		return nil, identity{}, fmt.Errorf("stat %s: no device and inode", path)
	}
	return f, identity{dev: uint64(st.Dev), ino: st.Ino, size: fi.Size(), mtime: fi.ModTime()}, nil
}

// openShared opens the file of sh if it is still the file that was shared.
func openShared(sh Share) (*os.File, identity, error) {
	f, id, err := openNoFollow(sh.Path)
	if err != nil {
		return nil, identity{}, &ChangedError{Path: sh.Path, Err: err}
	}
	if id.dev != sh.Dev || id.ino != sh.Ino {
		f.Close()
		return nil, identity{}, &ChangedError{Path: sh.Path}
	}
	return f, id, nil
}

// lockFile takes an exclusive flock on path, waiting until ctx is done. The
// kernel drops the lock when the process dies, so a lock is never stale.
func lockFile(ctx context.Context, path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("flock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
