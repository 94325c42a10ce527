// Package datasets finds the data sets the tests read: InterCode-ALFA and
// NL2Bash (MIT), the tldr pages (CC BY 4.0), the long-document known-item
// set (Debian documentation, each under its package's licence) and a
// table of WordNet's synonyms (WordNet 3.0 licence), kept in the
// repository under testdata/ with their licences and sources, so that the
// tests pass in any clone.
package datasets

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// EnvVar overrides where the data sets are: a directory holding
// intercode-alfa/, nl2bash/ and tldr/. The unprivileged test pass sets it,
// since it runs test binaries outside the repository.
const EnvVar = "NASH_DATA"

// Names of the data sets, as directories under the data dir.
const (
	InterCode = "intercode-alfa"
	NL2Bash   = "nl2bash"
	TLDR      = "tldr"
	LongDoc   = "longdoc" // long documents and their descriptions, from Debian 12
	WordNet   = "wordnet" // synonyms from WordNet 3.0
)

// Dir returns the directory of one data set: $NASH_DATA/name, else
// testdata/name at the root of the module that holds the working directory.
func Dir(name string) (string, error) {
	base := os.Getenv(EnvVar)
	if base == "" {
		root, err := moduleRoot()
		if err != nil {
			return "", err
		}
		base = filepath.Join(root, "testdata")
	}
	d := filepath.Join(base, name)
	if _, err := os.Stat(d); err != nil {
		return "", fmt.Errorf("data set %s: %w (it lives in the repository's testdata/; %s overrides)", name, err, EnvVar)
	}
	return d, nil
}

// moduleRoot walks up from the working directory to the one with go.mod.
func moduleRoot() (string, error) {
	d, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		up := filepath.Dir(d)
		if up == d {
			return "", errors.New("no go.mod above the working directory, and " + EnvVar + " is not set")
		}
		d = up
	}
}

// TB is the part of testing.TB that Must uses.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// Must is Dir for tests: a missing data set fails the test, never skips it.
func Must(tb TB, name string) string {
	tb.Helper()
	d, err := Dir(name)
	if err != nil {
		tb.Fatalf("%v", err)
	}
	return d
}
