package sandbox

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestRemoveRun removes trees shaped like a run's remains, the cheap way
// and, where it gives up, the thorough one, and never follows a symlink out.
func TestRemoveRun(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "keep")
	if err := os.WriteFile(outside, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		setup func(dir string) error
	}{
		{"empty dirs", func(dir string) error {
			return os.MkdirAll(filepath.Join(dir, "upper", "0"), 0o700)
		}},
		{"mode-000 empty dir", func(dir string) error {
			w := filepath.Join(dir, "work", "0", "work")
			if err := os.MkdirAll(w, 0o700); err != nil {
				return err
			}
			return os.Chmod(w, 0)
		}},
		{"mode-000 work dirs of a volatile overlay", func(dir string) error {
			v := filepath.Join(dir, "w0", "incompat", "volatile", "dirty")
			if err := os.MkdirAll(v, 0o700); err != nil {
				return err
			}
			for _, p := range []string{v, filepath.Dir(v), filepath.Dir(filepath.Dir(v)), filepath.Join(dir, "w0")} {
				if err := os.Chmod(p, 0); err != nil {
					return err
				}
			}
			return os.Mkdir(filepath.Join(dir, "u0"), 0o700)
		}},
		{"mode-000 dirs with a file", func(dir string) error {
			v := filepath.Join(dir, "work", "0", "work", "incompat", "volatile")
			if err := os.MkdirAll(v, 0o700); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(v, "dirty"), nil, 0); err != nil {
				return err
			}
			for _, p := range []string{v, filepath.Dir(v), filepath.Dir(filepath.Dir(v))} {
				if err := os.Chmod(p, 0); err != nil {
					return err
				}
			}
			return nil
		}},
		{"read-only tree", func(dir string) error {
			d := filepath.Join(dir, "upper", "1", "ro")
			if err := os.MkdirAll(d, 0o700); err != nil {
				return err
			}
			if err := os.WriteFile(filepath.Join(d, "f"), []byte("x"), 0o400); err != nil {
				return err
			}
			return os.Chmod(d, 0o500)
		}},
		{"symlinks out", func(dir string) error {
			d := filepath.Join(dir, "upper", "2")
			if err := os.MkdirAll(d, 0o700); err != nil {
				return err
			}
			if err := os.Symlink(outside, filepath.Join(d, "file")); err != nil {
				return err
			}
			return os.Symlink(filepath.Dir(outside), filepath.Join(d, "dir"))
		}},
	} {
		dir := filepath.Join(t.TempDir(), "run")
		if err := tc.setup(dir); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if err := removeRun(dir); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
		if _, err := os.Lstat(dir); !os.IsNotExist(err) {
			t.Errorf("%s: %s is still there (%v)", tc.name, dir, err)
		}
	}
	if _, err := os.Stat(outside); err != nil {
		t.Errorf("a file outside the tree went: %v", err)
	}
}

func TestSweepDue(t *testing.T) {
	stamp := filepath.Join(t.TempDir(), "scratch-swept")
	if !sweepDue(stamp, time.Minute) {
		t.Fatal("no stamp yet: a sweep is due")
	}
	if sweepDue(stamp, time.Minute) {
		t.Fatal("swept just now: no sweep is due")
	}
	old := time.Now().Add(-2 * time.Minute)
	if err := os.Chtimes(stamp, old, old); err != nil {
		t.Fatal(err)
	}
	if !sweepDue(stamp, time.Minute) {
		t.Fatal("swept two minutes ago: a sweep is due")
	}
	if sweepDue(stamp, time.Minute) {
		t.Fatal("the due sweep did not mark the stamp")
	}
}
