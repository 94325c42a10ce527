//go:build !unix

package share

import (
	"context"
	"errors"
	"os"
	"time"
)

// errUnsupported is returned where sharing needs what only Unix has:
// O_NOFOLLOW, device and inode numbers, flock.
var errUnsupported = errors.New("sharing files needs a Unix system")

type identity struct {
	dev, ino uint64
	size     int64
	mtime    time.Time
}

func openNoFollow(string) (*os.File, identity, error) { return nil, identity{}, errUnsupported }

func openShared(Share) (*os.File, identity, error) { return nil, identity{}, errUnsupported }

func lockFile(context.Context, string) (func(), error) { return nil, errUnsupported }
