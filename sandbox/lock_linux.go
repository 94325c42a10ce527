package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// stateLock serializes commits, undos and recovery between nash processes.
// It is an flock on the lock file, so the kernel releases it when its holder
// dies: a stale lock cannot block anyone. The file records the holder's pid,
// host and time for the message shown to whoever waits.
type stateLock struct{ f *os.File }

// lockLineWidth is the width the holder's line is padded to.
const lockLineWidth = 64

func (l layout) lock(ctx context.Context) (*stateLock, error) {
	f, err := os.OpenFile(l.lockFile(), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open lock: %w", err)
	}
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock state: %w", err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	host, _ := os.Hostname()
	// The line is padded to a fixed width and written over the last one:
	// truncating the file to zero first would make ext4 flush it on close
	// (auto_da_alloc), which costs more than the rest of locking.
	line := fmt.Sprintf("%d %s %s", os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))
	line = fmt.Sprintf("%-*s\n", lockLineWidth-1, line)
	if _, err := f.WriteAt([]byte(line), 0); err == nil {
		if fi, err := f.Stat(); err == nil && fi.Size() > int64(len(line)) {
			_ = f.Truncate(int64(len(line)))
		}
	}
	return &stateLock{f: f}, nil
}

func (s *stateLock) unlock() {
	_ = unix.Flock(int(s.f.Fd()), unix.LOCK_UN)
	s.f.Close()
}
