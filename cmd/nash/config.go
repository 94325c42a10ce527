package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"gopkg.in/yaml.v3"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/internal/size"
	"github.com/nash-shell/nash/sandbox"
)

// configFile is $XDG_CONFIG_HOME/nash/config.yaml. Secrets never live
// here: provider keys come from the environment only.
type configFile struct {
	Model  string `yaml:"model"`  // provider:model, see planner.ParseSpec
	Editor string `yaml:"editor"` // the review's editor; default $VISUAL, $EDITOR, vi
	Index  struct {
		Roots []string `yaml:"roots"` // what nash index add indexes when given no path
	} `yaml:"index"`
	Keys  map[string]keyList `yaml:"keys"` // run, edit, revise, explain, abort, commit, diff, pick
	Serve serveConfig        `yaml:"serve"`
	Net   netConfig          `yaml:"net"` // destinations runs may (or may never) reach
	// Sandbox holds a run's limits (README: The sandbox).
	Sandbox struct {
		MaxProcesses int    `yaml:"max_processes"` // processes and threads at once
		ScratchSize  string `yaml:"scratch_size"`  // what a run may write outside the working directory
	} `yaml:"sandbox"`
	// Typed is what becomes of a typed command's changes: auto (committed
	// when it ends, undoable) or ask (the summary and the question).
	Typed string `yaml:"typed"`
	// ToolFiles adds patterns of tools' own files ("~/.myapp/state"), or
	// takes a default out ("!**/.git/index").
	ToolFiles []string `yaml:"tool_files"`
	// Prices are what models cost, per million tokens, by spec
	// ("openai:gpt-4o": {input: 2.5, output: 10}): providers report
	// tokens, not prices.
	Prices map[string]priceConfig `yaml:"prices"`
	// Init shapes the key binding of nash init: what Alt+N does with the
	// line, run (review, sandbox, commit) or insert (the planned script
	// replaces the line, for editing); Alt+M does the other.
	Init struct {
		Action string `yaml:"action"`
	} `yaml:"init"`
}

// priceConfig is a model's price in the config file.
type priceConfig struct {
	Input    float64 `yaml:"input"`
	Output   float64 `yaml:"output"`
	Currency string  `yaml:"currency"` // default USD
}

// serveConfig is the serve section of the config file.
type serveConfig struct {
	Addr string `yaml:"addr"` // where nash serve listens
	URL  string `yaml:"url"`  // the base of links, when the server is reached by another name (a proxy)
}

// sandboxLimits are the run limits the config sets, as sandbox options:
// sandbox.max_processes and sandbox.scratch_size, or NASH_MAX_PROCESSES
// and NASH_SCRATCH_SIZE over them.
func (c configFile) sandboxLimits(getenv func(string) string) ([]sandbox.Option, error) {
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

// readConfig reads the config file. A missing file is an empty config; a
// malformed one is a configError.
func readConfig(getenv func(string) string) (configFile, error) {
	var c configFile
	p := configPath(getenv)
	if p == "" {
		return c, nil
	}
	b, err := os.ReadFile(p)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return c, nil
	case err != nil:
		return c, configError{fmt.Errorf("read config: %w", err)}
	}
	if err := yaml.Unmarshal(b, &c); err != nil {
		return c, configError{fmt.Errorf("config %s: %w", effects.Quote(p), err)}
	}
	return c, nil
}

// configError is a config file nash cannot use: a usage error (exit 2).
type configError struct{ err error }

func (e configError) Error() string { return e.err.Error() }
func (e configError) Unwrap() error { return e.err }
