package datasets

import (
	"os"
	"path/filepath"
	"testing"
)

func TestEveryDataSetIsInTheRepository(t *testing.T) {
	t.Setenv(EnvVar, "")
	for _, name := range []string{InterCode, NL2Bash, TLDR, LongDoc, WordNet} {
		d, err := Dir(name)
		if err != nil {
			t.Fatal(err)
		}
		// Each keeps its licence and says where it came from.
		entries, err := os.ReadDir(d)
		if err != nil {
			t.Fatal(err)
		}
		var licence, source bool
		for _, e := range entries {
			switch n := e.Name(); {
			case n == "SOURCE":
				source = true
			case len(n) >= 7 && n[:7] == "LICENSE":
				licence = true
			}
		}
		if !licence || !source {
			t.Errorf("%s: licence %v, SOURCE %v; want both", d, licence, source)
		}
	}
}

func TestEnvOverrides(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, TLDR), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvVar, dir)
	got, err := Dir(TLDR)
	if err != nil || got != filepath.Join(dir, TLDR) {
		t.Fatalf("Dir = %q, %v; want %q", got, err, filepath.Join(dir, TLDR))
	}
	if _, err := Dir(NL2Bash); err == nil {
		t.Fatal("a missing data set gave no error")
	}
}
