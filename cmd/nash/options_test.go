package main

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestResolveOptions: each setting comes from the flag, else NASH_*, else
// the config file, else its default.
func TestResolveOptions(t *testing.T) {
	home := t.TempDir()
	cfgDir := filepath.Join(home, ".config", "nash")
	if err := os.MkdirAll(cfgDir, 0o755); err != nil {
		t.Fatal(err)
	}
	config := `model: openai:from-config
editor: config-editor
index:
  roots: ["~/notes", /srv/docs]
keys:
  run: ["y", "ctrl+r"]
serve:
  addr: 127.0.0.1:9000
  url: https://files.example
`
	if err := os.WriteFile(filepath.Join(cfgDir, "config.yaml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	env := func(kv ...string) func(string) (string, bool) {
		m := map[string]string{"HOME": home}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
	}

	// Defaults, with no config file at all.
	o, err := resolveOptions(env("NASH_CONFIG", filepath.Join(home, "none.yaml"), "TERM", "xterm"), globalFlags{})
	if err != nil {
		t.Fatal(err)
	}
	if o.stateDir != filepath.Join(home, ".local", "state", "nash") || o.model != "" || o.planModel() == "" ||
		o.serveAddr != defaultServeAddr || o.shareURL != "" || o.editor != "" || !o.color {
		t.Errorf("defaults: %+v", o)
	}

	// The config file over the defaults.
	o, err = resolveOptions(env("XDG_STATE_HOME", filepath.Join(home, "st"), "VISUAL", "visual-editor"), globalFlags{})
	if err != nil {
		t.Fatal(err)
	}
	if o.stateDir != filepath.Join(home, "st", "nash") || o.model != "openai:from-config" || o.planModel() != "openai:from-config" ||
		o.editor != "config-editor" || o.serveAddr != "127.0.0.1:9000" || o.shareURL != "https://files.example" ||
		!slices.Equal(o.indexRoots, []string{filepath.Join(home, "notes"), "/srv/docs"}) ||
		!slices.Equal(o.keys.Run, []string{"y", "ctrl+r"}) || len(o.keys.Abort) == 0 {
		t.Errorf("config: %+v", o)
	}

	// NASH_* over the config file.
	o, err = resolveOptions(env("NASH_STATE_DIR", "/s/env", "NASH_MODEL", "anthropic:from-env", "NASH_EDITOR", "env-editor",
		"NASH_INDEX_ROOTS", "/a:/b", "NASH_SERVE_ADDR", "127.0.0.1:9001", "NASH_SHARE_URL", "https://env.example", "NO_COLOR", ""), globalFlags{})
	if err != nil {
		t.Fatal(err)
	}
	if o.stateDir != "/s/env" || o.model != "anthropic:from-env" || o.editor != "env-editor" ||
		!slices.Equal(o.indexRoots, []string{"/a", "/b"}) || o.serveAddr != "127.0.0.1:9001" ||
		o.shareURL != "https://env.example" || o.color {
		t.Errorf("environment: %+v", o)
	}

	// Flags over everything.
	o, err = resolveOptions(env("NASH_STATE_DIR", "/s/env", "NASH_MODEL", "anthropic:from-env"), globalFlags{stateDir: "/s/flag", model: "ollama:from-flag"})
	if err != nil {
		t.Fatal(err)
	}
	if o.stateDir != "/s/flag" || o.model != "ollama:from-flag" {
		t.Errorf("flags: %+v", o)
	}
}

// TestResolveOptionsRefuses: what cannot work is a usage error before any
// command runs.
func TestResolveOptionsRefuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name  string
		env   map[string]string
		flags globalFlags
	}{
		{"malformed config", map[string]string{"NASH_CONFIG": write("bad.yaml", "model: [unclosed\n")}, globalFlags{}},
		{"unknown key binding", map[string]string{"NASH_CONFIG": write("keys.yaml", "keys:\n  launch: l\n")}, globalFlags{}},
		{"unknown provider by flag", nil, globalFlags{model: "nope:x"}},
		{"unknown provider in the environment", map[string]string{"NASH_MODEL": "nope:x"}, globalFlags{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"HOME": dir, "NASH_CONFIG": filepath.Join(dir, "none.yaml")}
			for k, v := range tt.env {
				env[k] = v
			}
			_, err := resolveOptions(func(k string) (string, bool) { v, ok := env[k]; return v, ok }, tt.flags)
			var ue usageError
			var ce configError
			if !errors.As(err, &ue) && !errors.As(err, &ce) {
				t.Fatalf("err = %T %v, want a usage or config error", err, err)
			}
		})
	}
}
