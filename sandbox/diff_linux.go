package sandbox

import (
	"io"
	"os"

	"github.com/nash-shell/nash/effects"
)

// NewVersioner finds a pending run's new version of a file (*Sandbox is
// one).
type NewVersioner interface {
	NewVersion(id, path string) (string, bool)
}

// WriteDiff writes unified diffs of the files a pending run created or
// modified and returns how many it wrote.
func WriteDiff(w io.Writer, sb NewVersioner, p *Pending) int {
	n := 0
	for _, c := range p.Changes.Changes {
		if c.Kind != effects.Modified && c.Kind != effects.Created {
			continue
		}
		newPath, ok := sb.NewVersion(p.ID, c.Path)
		if !ok {
			continue
		}
		var old []byte
		if c.Kind == effects.Modified {
			old, _ = os.ReadFile(c.Path)
		}
		nb, err := os.ReadFile(newPath)
		if err != nil {
			continue
		}
		_ = effects.Diff(w, c.Path, old, nb, effects.DiffOptions{})
		n++
	}
	return n
}
