package sandbox

import (
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/nash-shell/nash/internal/sandboxinit"
)

// takeKept reads what a run left in the Keep directory dir and removes
// it from the upper dirs, where the scan would find it: a directory that
// is not in the upper dir is no change, whatever the run did there.
func takeKept(layers []sandboxinit.Layer, dir string) map[string][]byte {
	li := layerOf(layers, dir)
	if li < 0 || dir == layers[li].Point {
		return nil
	}
	l := layers[li]
	up := filepath.Join(l.Upper, strings.TrimPrefix(strings.TrimPrefix(dir, l.Point), "/"))
	kept := readKept(up)
	_ = os.RemoveAll(up)
	return kept
}

// readKept reads the regular files directly in dir, up to KeptLimit bytes
// in all; symlinks are not followed.
func readKept(dir string) map[string][]byte {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	out := map[string][]byte{}
	var total int64
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		fd, err := unix.Open(filepath.Join(dir, e.Name()), unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
		if err != nil {
			continue
		}
		f := os.NewFile(uintptr(fd), e.Name())
		b, err := io.ReadAll(io.LimitReader(f, KeptLimit-total+1))
		f.Close()
		if err != nil || total+int64(len(b)) > KeptLimit {
			continue
		}
		total += int64(len(b))
		out[e.Name()] = b
	}
	return out
}

// takeKeptLive reads and removes what a run without a sandbox left in dir.
func takeKeptLive(dir string) map[string][]byte {
	kept := readKept(dir)
	for name := range kept {
		_ = os.Remove(filepath.Join(dir, name))
	}
	return kept
}
