package main

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/planner"
	"github.com/nash-shell/nash/sandbox"
	"github.com/nash-shell/nash/shell"
)

// options are nash's settings, resolved once before a command runs, from
// defaults < the config file < NASH_* environment < flags. Commands read
// them from here: nothing below a command's RunE looks at flags, the
// config file or NASH_* again.
type options struct {
	stateDir   string   // --state-dir, NASH_STATE_DIR, else $XDG_STATE_HOME/nash
	model      string   // --model, NASH_MODEL, model:; "" when none is configured
	editor     string   // NASH_EDITOR, editor:, $VISUAL, $EDITOR; "" means vi
	indexRoots []string // NASH_INDEX_ROOTS (a list like PATH), index.roots
	keys       shell.KeyMap
	serveAddr  string                   // NASH_SERVE_ADDR, serve.addr, else defaultServeAddr
	shareURL   string                   // NASH_SHARE_URL, serve.url; "" derives it from serveAddr
	net        netConfig                // the config's net: section: what runs may (or may never) reach
	prices     map[string]planner.Price // prices:, by model spec
	initAction string                   // init.action: run or insert
	// limits are each run's limits (sandbox.max_processes and
	// scratch_size, NASH_MAX_PROCESSES and NASH_SCRATCH_SIZE), as
	// sandbox options.
	limits    []sandbox.Option
	typed     shell.TypedMode
	toolFiles []effects.ToolFile
	home      string
	color     bool // NO_COLOR unset and TERM not dumb
	getenv    func(string) string
	// commands describes nash's commands to the planner, from the tree.
	commands func() []planner.Command
}

// globalFlags are the flags every command has.
type globalFlags struct {
	stateDir string
	model    string
}

// planModel is the model that plans requests: the configured one, else
// nash's default. (A commit summary uses only a configured one.)
func (o *options) planModel() string {
	if o.model == "" {
		return planner.DefaultSpec
	}
	return o.model
}

// resolveOptions reads the config file, then NASH_* over it, then the
// flags over both, and checks what it can without contacting anything: a
// malformed config, an unknown key binding or a model spec naming an
// unknown provider is a usage error.
// lookup is os.LookupEnv or a test's stand-in.
func resolveOptions(lookup func(string) (string, bool), f globalFlags) (*options, error) {
	getenv := func(k string) string { v, _ := lookup(k); return v }
	c, err := readConfig(getenv)
	if err != nil {
		return nil, err
	}
	o := &options{
		stateDir:   getenv("NASH_STATE_DIR"),
		model:      c.Model,
		editor:     c.Editor,
		indexRoots: c.Index.Roots,
		serveAddr:  c.Serve.Addr,
		shareURL:   c.Serve.URL,
		net:        c.Net,
		home:       getenv("HOME"),
		getenv:     getenv,
	}
	set := func(dst *string, env string) {
		if v := getenv(env); v != "" {
			*dst = v
		}
	}
	set(&o.model, "NASH_MODEL")
	set(&o.editor, "NASH_EDITOR")
	set(&o.serveAddr, "NASH_SERVE_ADDR")
	set(&o.shareURL, "NASH_SHARE_URL")
	if v := getenv("NASH_INDEX_ROOTS"); v != "" {
		o.indexRoots = filepath.SplitList(v)
	}
	if f.stateDir != "" {
		o.stateDir = f.stateDir
	}
	if f.model != "" {
		o.model = f.model
	}
	if o.stateDir == "" {
		if o.stateDir, err = defaultStateDir(getenv); err != nil {
			return nil, err
		}
	}
	if abs, err := filepath.Abs(o.stateDir); err == nil {
		o.stateDir = abs
	}
	if o.editor == "" {
		o.editor = getenv("VISUAL")
	}
	if o.editor == "" {
		o.editor = getenv("EDITOR")
	}
	if o.serveAddr == "" {
		o.serveAddr = defaultServeAddr
	}
	for i, r := range o.indexRoots {
		if rest, ok := strings.CutPrefix(r, "~/"); ok && o.home != "" {
			o.indexRoots[i] = filepath.Join(o.home, rest)
		}
	}
	if o.keys, err = keyMap(c.Keys); err != nil {
		return nil, err
	}
	if o.prices, err = prices(c.Prices); err != nil {
		return nil, err
	}
	switch o.initAction = c.Init.Action; o.initAction {
	case "":
		o.initAction = "run"
	case "run", "insert":
	default:
		return nil, configError{fmt.Errorf("config: init.action is %s; want run or insert", effects.Quote(o.initAction))}
	}
	switch t := shell.TypedMode(c.Typed); t {
	case "", shell.TypedAuto, shell.TypedAsk:
		o.typed = t
	default:
		return nil, configError{fmt.Errorf("config: typed: %s: want auto or ask", effects.Quote(c.Typed))}
	}
	if o.toolFiles, err = effects.ConfigureToolFiles(effects.DefaultToolFiles(), c.ToolFiles); err != nil {
		return nil, configError{fmt.Errorf("config: %w", err)}
	}
	if o.model != "" {
		if _, err := planner.ParseSpec(o.model); err != nil {
			return nil, usageError{err.Error()}
		}
	}
	_, noColor := lookup("NO_COLOR")
	o.color = !noColor && getenv("TERM") != "dumb"
	if o.limits, err = c.sandboxLimits(getenv); err != nil {
		return nil, configError{err}
	}
	return o, nil
}

// defaultStateDir is $XDG_STATE_HOME/nash, or ~/.local/state/nash.
func defaultStateDir(getenv func(string) string) (string, error) {
	if d := getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "nash"), nil
	}
	home := getenv("HOME")
	if home == "" {
		return "", usageError{"no state directory: set HOME, XDG_STATE_HOME, NASH_STATE_DIR or --state-dir"}
	}
	return filepath.Join(home, ".local", "state", "nash"), nil
}

// keyMap is the key bindings: the defaults with the config's over them.
func keyMap(keys map[string]keyList) (shell.KeyMap, error) {
	var k shell.KeyMap
	for name, ks := range keys {
		dst := map[string]*[]string{
			"run": &k.Run, "edit": &k.Edit, "revise": &k.Revise, "explain": &k.Explain,
			"abort": &k.Abort, "test": &k.Test, "example": &k.Example, "commit": &k.Commit, "diff": &k.Diff, "pick": &k.Pick,
		}[name]
		if dst == nil {
			return k, configError{fmt.Errorf("config: unknown key binding %s (want run, edit, revise, explain, abort, test, example, commit, diff or pick)", effects.Quote(name))}
		}
		*dst = ks
	}
	return shell.DefaultKeys().Merge(k), nil
}

// checkServeAddr checks that addr is HOST:PORT.
func checkServeAddr(addr string) error {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return usageError{fmt.Sprintf("serve address %q: want HOST:PORT, like %s", addr, defaultServeAddr)}
	}
	return nil
}
