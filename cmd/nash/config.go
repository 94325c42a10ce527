package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/internal/size"
	"github.com/nash-shell/nash/sandbox"
)

// config is nash's configuration: defaults < $XDG_CONFIG_HOME/nash/config.yaml
// < NASH_* environment < flags. Secrets never live here: provider keys come
// from the environment only.
type config struct {
	Model      string   `yaml:"model"`  // provider:model, see planner.ParseSpec
	Editor     string   `yaml:"editor"` // the review's editor; default $VISUAL, $EDITOR, vi
	IndexRoots []string `yaml:"-"`
	Index      struct {
		Roots []string `yaml:"roots"` // what nash index add indexes when given no path
	} `yaml:"index"`
	Keys map[string]keyList `yaml:"keys"` // run, edit, revise, explain, abort, commit, diff, pick
	// Sandbox holds a run's limits (README: The sandbox).
	Sandbox struct {
		MaxProcesses int    `yaml:"max_processes"` // processes and threads at once
		ScratchSize  string `yaml:"scratch_size"`  // what a run may write outside the working directory
	} `yaml:"sandbox"`
}

// sandboxLimits are the run limits the config sets, as sandbox options:
// sandbox.max_processes and sandbox.scratch_size, or NASH_MAX_PROCESSES
// and NASH_SCRATCH_SIZE over them.
func (c config) sandboxLimits(getenv func(string) string) ([]sandbox.Option, error) {
	procs, scratch := c.Sandbox.MaxProcesses, c.Sandbox.ScratchSize
	if v := getenv("NASH_MAX_PROCESSES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("NASH_MAX_PROCESSES=%s: want a number above 0", effects.Quote(v))
		}
		procs = n
	}
	if v := getenv("NASH_SCRATCH_SIZE"); v != "" {
		scratch = v
	}
	if procs < 0 {
		return nil, fmt.Errorf("config: sandbox.max_processes: want a number above 0, not %d", procs)
	}
	opts := []sandbox.Option{sandbox.MaxProcesses(procs)}
	if scratch != "" {
		n, err := size.Parse(scratch)
		if err != nil || n < 1<<20 {
			return nil, fmt.Errorf("config: sandbox.scratch_size %s: want a size of at least 1M, such as 512M or 4G", effects.Quote(scratch))
		}
		opts = append(opts, sandbox.ScratchSize(n))
	}
	return opts, nil
}

// keyList reads a key binding written as one key or a list of keys.
type keyList []string

// UnmarshalYAML accepts "e" and ["e", "ctrl+e"].
func (k *keyList) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*k = keyList{n.Value}
		return nil
	case yaml.SequenceNode:
		var l []string
		if err := n.Decode(&l); err != nil {
			return err
		}
		*k = l
		return nil
	}
	return fmt.Errorf("line %d: a key binding is a key or a list of keys", n.Line)
}

// configPath is $NASH_CONFIG, or $XDG_CONFIG_HOME/nash/config.yaml, or
// ~/.config/nash/config.yaml.
func configPath(getenv func(string) string) string {
	if p := getenv("NASH_CONFIG"); p != "" {
		return p
	}
	if d := getenv("XDG_CONFIG_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "nash", "config.yaml")
	}
	home := getenv("HOME")
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".config", "nash", "config.yaml")
}

// loadConfig reads the config file, then the NASH_* variables over it:
// NASH_MODEL, NASH_EDITOR and NASH_INDEX_ROOTS (a list like PATH). A
// missing file is no error; a malformed one is.
func loadConfig(getenv func(string) string) (config, error) {
	var c config
	if p := configPath(getenv); p != "" {
		b, err := os.ReadFile(p)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			return c, fmt.Errorf("read config: %w", err)
		default:
			if err := yaml.Unmarshal(b, &c); err != nil {
				return c, fmt.Errorf("config %s: %w", effects.Quote(p), err)
			}
		}
	}
	c.IndexRoots = c.Index.Roots
	if v := getenv("NASH_MODEL"); v != "" {
		c.Model = v
	}
	if v := getenv("NASH_EDITOR"); v != "" {
		c.Editor = v
	}
	if v := getenv("NASH_INDEX_ROOTS"); v != "" {
		c.IndexRoots = filepath.SplitList(v)
	}
	if c.Editor == "" {
		c.Editor = getenv("VISUAL")
	}
	if c.Editor == "" {
		c.Editor = getenv("EDITOR")
	}
	home := getenv("HOME")
	for i, r := range c.IndexRoots {
		if rest, ok := strings.CutPrefix(r, "~/"); ok && home != "" {
			c.IndexRoots[i] = filepath.Join(home, rest)
		}
	}
	if err := checkKeys(c.Keys); err != nil {
		return c, err
	}
	return c, nil
}

// checkKeys reports a key binding for an action the review does not have.
func checkKeys(keys map[string]keyList) error {
	for name := range keys {
		switch name {
		case "run", "edit", "revise", "explain", "abort", "commit", "diff", "pick":
		default:
			return fmt.Errorf("config: unknown key binding %s (want run, edit, revise, explain, abort, commit, diff or pick)", effects.Quote(name))
		}
	}
	return nil
}
