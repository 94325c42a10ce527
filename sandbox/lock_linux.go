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
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(fmt.Sprintf("%d %s %s\n", os.Getpid(), host, time.Now().UTC().Format(time.RFC3339))), 0)
	return &stateLock{f: f}, nil
}

func (s *stateLock) unlock() {
	_ = unix.Flock(int(s.f.Fd()), unix.LOCK_UN)
	s.f.Close()
}
