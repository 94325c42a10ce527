package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"gopkg.in/yaml.v3"

	"github.com/nash-shell/nash/effects"
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
