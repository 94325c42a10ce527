// Package intercode reads the InterCode-ALFA benchmark (natural-language
// tasks with two correct bash commands each, and the scripts that build the
// file systems they run against) and builds its fixtures under any
// directory, so tests and the eval harness need no container.
package intercode

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

// Task is one benchmark query with its two gold commands.
type Task struct {
	FS         int    `json:"fs"`    // which fixture file system (1-5)
	Index      int    `json:"index"` // position within that file system's list
	Query      string `json:"query"`
	Gold       string `json:"gold"`
	Gold2      string `json:"gold2"`
	Difficulty int    `json:"difficulty"`
}

// ID names a task, e.g. "fs2/17".
func (t Task) ID() string { return fmt.Sprintf("fs%d/%d", t.FS, t.Index) }

// NumFS is the number of fixture file systems, numbered from 1.
const NumFS = 5

// Load reads every task from the data directory (the intercode-alfa
// folder).
func Load(dataDir string) ([]Task, error) {
	var out []Task
	for fs := 1; fs <= NumFS; fs++ {
		name := filepath.Join(dataDir, fmt.Sprintf("nl2bash_fs_%d.json", fs))
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("read tasks: %w", err)
		}
		var ts []Task
		if err := json.Unmarshal(b, &ts); err != nil {
			return nil, fmt.Errorf("parse %s: %w", name, err)
		}
		for i := range ts {
			ts[i].FS, ts[i].Index = fs, i
		}
		out = append(out, ts...)
	}
	return out, nil
}

// rootPattern matches the absolute paths the fixtures live at inside the
// benchmark's containers. It is only read.
var rootPattern = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(^|[\s"'=(:;|&<>])/(testbed|system|workspace|backup|index\.html)\b`)
})

// Map rewrites the fixture paths in a command or script (/testbed, /system,
// /workspace, /backup, /index.html) to live under base instead of /.
func Map(cmd, base string) string {
	return rootPattern().ReplaceAllString(cmd, "${1}"+strings.ReplaceAll(base, "$", "$$")+"/${2}")
}

// Build creates file system fs's fixture under base by running its setup
// script, mapped, with bash. base must exist and should be empty.
func Build(dataDir string, fs int, base string) error {
	b, err := os.ReadFile(filepath.Join(dataDir, fmt.Sprintf("setup_nl2b_fs_%d.sh", fs)))
	if err != nil {
		return fmt.Errorf("read setup script: %w", err)
	}
	cmd := exec.Command("bash", "-c", Map(string(b), base))
	cmd.Dir = base
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build fixture %d: %w\n%s", fs, err, out)
	}
	return nil
}
