package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f")
	if err := WriteFile(path, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("two"), 0o640); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	fi, _ := os.Stat(path)
	if string(b) != "two" || fi.Mode().Perm() != 0o640 {
		t.Errorf("got %q mode %v", b, fi.Mode())
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("left temporary files: %v", ents)
	}
	// A directory that does not exist: an error, nothing written.
	if err := WriteFile(filepath.Join(dir, "no", "f"), []byte("x"), 0o600); err == nil {
		t.Error("wrote into a missing directory")
	}
	// The target is a directory: the rename fails and the temporary file goes.
	os.Mkdir(filepath.Join(dir, "d"), 0o700)
	os.WriteFile(filepath.Join(dir, "d", "x"), nil, 0o600)
	if err := WriteFile(filepath.Join(dir, "d"), []byte("x"), 0o600); err == nil {
		t.Error("replaced a non-empty directory")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("left temporary files: %v", ents)
	}
}
