package configedit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestSetString(t *testing.T) {
	tests := []struct {
		name, src, key, value, want string
	}{
		{"new file", "", "model", "openai:gpt-4o-mini", "model: openai:gpt-4o-mini\n"},
		{"comments only", "# my nash settings\n", "model", "ollama:llama3.2", "# my nash settings\nmodel: ollama:llama3.2\n"},
		{"no final newline", "editor: vim", "model", "x", "editor: vim\nmodel: x\n"},
		{
			"replace keeps the rest byte for byte",
			"# nash\nmodel: ollama:qwen2.5-coder:7b   # the laptop one\neditor: vim\nkeys:\n    run: [\"y\"]   # odd indent kept\n",
			"model", "anthropic:claude-3-5-haiku-latest",
			"# nash\nmodel: anthropic:claude-3-5-haiku-latest   # the laptop one\neditor: vim\nkeys:\n    run: [\"y\"]   # odd indent kept\n",
		},
		{"quoted value", "model: 'ollama:x'\n", "model", "true", "model: \"true\"\n"},
		{"value needing quotes", "model: a\n", "model", "a # b", "model: 'a # b'\n"},
		{"quoted key", "\"model\": a\neditor: vi\n", "model", "b", "\"model\": b\neditor: vi\n"},
		{
			"block value replaced",
			"model:\n  provider: ollama\n  name: x\n\n# the editor\neditor: vim\n",
			"model", "openai:gpt-4o",
			"model: openai:gpt-4o\n\n# the editor\neditor: vim\n",
		},
		{
			"multi-line scalar replaced",
			"model: >\n  ollama:\n  qwen\neditor: vim\n",
			"model", "openai:gpt-4o",
			"model: openai:gpt-4o\neditor: vim\n",
		},
		{"indented document", "  model: a\n  editor: b\n", "model", "c", "  model: c\n  editor: b\n"},
		{"unicode", "model: a\n", "model", "ollama:modèle", "model: ollama:modèle\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "nash", "config.yaml")
			if tt.src != "" || tt.name != "new file" {
				os.MkdirAll(filepath.Dir(path), 0o755)
				if err := os.WriteFile(path, []byte(tt.src), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if err := SetString(path, tt.key, tt.value); err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(path)
			if string(got) != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
			var m map[string]any
			if err := yaml.Unmarshal(got, &m); err != nil || m[tt.key] != tt.value {
				t.Errorf("reads back as %v (%v), want %s = %q", m, err, tt.key, tt.value)
			}
		})
	}
}

// TestSetStringLayoutFallback: a layout the line edit cannot handle (a
// sequence at the key's indentation) is written out from the tree: the
// other settings and the comments stay.
func TestSetStringLayoutFallback(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	src := "# top\nmodel:\n- a\n- b\neditor: vim # mine\n"
	os.WriteFile(path, []byte(src), 0o600)
	if err := SetString(path, "model", "ollama:x"); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	var m map[string]any
	if err := yaml.Unmarshal(got, &m); err != nil || m["model"] != "ollama:x" || m["editor"] != "vim" || len(m) != 2 {
		t.Fatalf("got %q: %v %v", got, m, err)
	}
	if !strings.Contains(string(got), "# top") || !strings.Contains(string(got), "# mine") {
		t.Errorf("comments lost:\n%s", got)
	}
}

// TestSetStringRefuses: bad input is a clear error and the file is left as
// it was.
func TestSetStringRefuses(t *testing.T) {
	tests := []struct{ name, src, key, value, want string }{
		{"not YAML", "model: [unclosed\n", "model", "x", "config"},
		{"a list", "- a\n- b\n", "model", "x", "not a mapping"},
		{"a scalar", "hello\n", "model", "x", "not a mapping"},
		{"flow mapping", "{model: a, editor: b}\n", "model", "x", "flow mapping"},
		{"newline in value", "model: a\n", "model", "x\ny", "one line"},
		{"escape in value", "model: a\n", "model", "x\x1b[2J", "one line"},
		{"bad key", "model: a\n", "mo:del", "x", "not a plain key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.yaml")
			os.WriteFile(path, []byte(tt.src), 0o600)
			err := SetString(path, tt.key, tt.value)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one saying %q", err, tt.want)
			}
			if got, _ := os.ReadFile(path); string(got) != tt.src {
				t.Errorf("file changed to %q", got)
			}
			if ents, _ := os.ReadDir(filepath.Dir(path)); len(ents) != 1 {
				t.Errorf("left files behind: %v", ents)
			}
		})
	}
}

func TestSetStringModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cfg", "nash")
	path := filepath.Join(dir, "config.yaml")
	if err := SetString(path, "model", "x"); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(path)
	di, _ := os.Stat(dir)
	if fi.Mode().Perm() != 0o600 || di.Mode().Perm() != 0o700 {
		t.Errorf("new file %v, dir %v; want 0600 and 0700", fi.Mode(), di.Mode())
	}
	os.Chmod(path, 0o640)
	if err := SetString(path, "model", "y"); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode after an edit %v, want the file's own 0640", fi.Mode())
	}
}

func FuzzSetString(f *testing.F) {
	f.Add("model: a # c\neditor: b\n", "ollama:x")
	f.Add("model:\n  - a\nkeys:\n  run: y\n", "true")
	f.Add("# c\n", "")
	f.Fuzz(func(t *testing.T, src, value string) {
		path := filepath.Join(t.TempDir(), "config.yaml")
		os.WriteFile(path, []byte(src), 0o600)
		if err := SetString(path, "model", value); err != nil {
			if got, _ := os.ReadFile(path); string(got) != src {
				t.Fatalf("failed (%v) and changed the file", err)
			}
			return
		}
		got, _ := os.ReadFile(path)
		var before, after map[string]any
		yaml.Unmarshal([]byte(src), &before)
		if err := yaml.Unmarshal(got, &after); err != nil {
			t.Fatalf("wrote YAML that does not parse: %v\n%s", err, got)
		}
		if after["model"] != value {
			t.Fatalf("model = %#v, want %q\n%s", after["model"], value, got)
		}
		for k, v := range before {
			if k != "model" && !equal(after[k], v) {
				t.Fatalf("%s changed from %#v to %#v", k, v, after[k])
			}
		}
	})
}

func equal(a, b any) bool {
	x, _ := yaml.Marshal(a)
	y, _ := yaml.Marshal(b)
	return string(x) == string(y)
}
