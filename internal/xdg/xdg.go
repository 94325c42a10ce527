// Package xdg says where nash keeps its data, following the XDG base
// directory specification. It is shared by nash and nash-index and links
// nothing else.
package xdg

import (
	"fmt"
	"os"
	"path/filepath"
)

// DataHome returns $XDG_DATA_HOME, or ~/.local/share as the specification
// says.
func DataHome(getenv func(string) string) (string, error) {
	if d := getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return d, nil
	}
	home := getenv("HOME")
	if home == "" {
		var err error
		if home, err = os.UserHomeDir(); err != nil {
			return "", fmt.Errorf("find the data directory: %w", err)
		}
	}
	return filepath.Join(home, ".local", "share"), nil
}

// IndexDir returns the index directory: flag when set, else NASH_INDEX_DIR,
// else $XDG_DATA_HOME/nash/index.
func IndexDir(flag string, getenv func(string) string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	if d := getenv("NASH_INDEX_DIR"); d != "" {
		return d, nil
	}
	data, err := DataHome(getenv)
	if err != nil {
		return "", err
	}
	return filepath.Join(data, "nash", "index"), nil
}
