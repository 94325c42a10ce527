package effects

import (
	"strings"
	"testing"
)

func TestToolMatcherSplit(t *testing.T) {
	env := map[string]string{"XDG_STATE_HOME": "/h/ann/.state", "XDG_DATA_HOME": "relative/ignored"}
	m := NewToolMatcher(DefaultToolFiles(), "/h/ann", func(k string) string { return env[k] })
	file := &Object{Type: TypeFile, Size: 10}
	dir := &Object{Type: TypeDir}
	tests := []struct {
		name  string
		cs    []Change
		tools []string // paths split off as tools' own
	}{
		{"git status refreshes the index", []Change{{Path: "/p/.git/index", Kind: Modified, Before: file, After: file}}, []string{"/p/.git/index"}},
		{"git add writes objects too", []Change{
			{Path: "/p/.git/index", Kind: Modified, Before: file, After: file},
			{Path: "/p/.git/objects/ab/cdef", Kind: Created, After: file},
		}, []string{"/p/.git/index"}},
		{"less history, old and XDG places", []Change{
			{Path: "/h/ann/.lesshst", Kind: Created, After: file},
			{Path: "/h/ann/.state/lesshst", Kind: Modified, Before: file, After: file},
		}, []string{"/h/ann/.lesshst", "/h/ann/.state/lesshst"}},
		{"a relative XDG value names nothing", []Change{{Path: "relative/ignored/lesshst", Kind: Created, After: file}}, nil},
		{"vim edit: the file is the person's, viminfo vim's", []Change{
			{Path: "/h/ann/.viminfo", Kind: Modified, Before: file, After: file},
			{Path: "/p/essay.txt", Kind: Created, After: file},
		}, []string{"/h/ann/.viminfo"}},
		{"a cache made from nothing, directories and all", []Change{
			{Path: "/h/ann/.cache", Kind: Created, After: dir},
			{Path: "/h/ann/.cache/pip", Kind: Created, After: dir},
			{Path: "/h/ann/.cache/pip/x", Kind: Created, After: file},
		}, []string{"/h/ann/.cache", "/h/ann/.cache/pip", "/h/ann/.cache/pip/x"}},
		{"python bytecode next to the code", []Change{
			{Path: "/p/pkg/__pycache__", Kind: Created, After: dir},
			{Path: "/p/pkg/__pycache__/m.cpython-311.pyc", Kind: Created, After: file},
		}, []string{"/p/pkg/__pycache__", "/p/pkg/__pycache__/m.cpython-311.pyc"}},
		{"a directory made for a tool file is the tool's", []Change{
			{Path: "/h/ann/.local", Kind: Created, After: dir},
			{Path: "/h/ann/.local/state", Kind: Created, After: dir},
			{Path: "/h/ann/.local/state/lesshst", Kind: Created, After: file},
		}, []string{"/h/ann/.local", "/h/ann/.local/state", "/h/ann/.local/state/lesshst"}},
		{"a directory holding a person's file too is the person's", []Change{
			{Path: "/h/ann/.local", Kind: Created, After: dir},
			{Path: "/h/ann/.local/notes", Kind: Created, After: file},
			{Path: "/h/ann/.local/state/lesshst", Kind: Created, After: file},
		}, []string{"/h/ann/.local/state/lesshst"}},
		{"deleting a history is the person's", []Change{{Path: "/h/ann/.bash_history", Kind: Deleted, Before: file}}, nil},
		{"top's settings, from the registry", []Change{{Path: "/h/ann/.config/procps/toprc", Kind: Created, After: file}}, []string{"/h/ann/.config/procps/toprc"}},
		{"a file named like a history elsewhere", []Change{{Path: "/p/.bash_history", Kind: Created, After: file}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			own, tools := m.Split(&ChangeSet{Changes: tc.cs})
			got := strings.Join(tools.Paths(), " ")
			if want := strings.Join(tc.tools, " "); got != want {
				t.Errorf("tools' part %q, want %q", got, want)
			}
			if own.Len()+tools.Len() != len(tc.cs) {
				t.Errorf("split lost changes: %d + %d of %d", own.Len(), tools.Len(), len(tc.cs))
			}
		})
	}
}

func TestToolMatcherNamesTools(t *testing.T) {
	m := NewToolMatcher(DefaultToolFiles(), "/h/ann", nil)
	_, tools := m.Split(&ChangeSet{Changes: []Change{
		{Path: "/p/.git/index", Kind: Modified},
		{Path: "/h/ann/.viminfo", Kind: Modified},
		{Path: "/q/.git/index", Kind: Modified},
	}})
	if got := strings.Join(m.Tools(tools), ", "); got != "git, vim" {
		t.Errorf("tools %q", got)
	}
}

func TestConfigureToolFiles(t *testing.T) {
	base := DefaultToolFiles()
	list, err := ConfigureToolFiles(base, []string{"~/.myapp/state", "!**/.git/index"})
	if err != nil {
		t.Fatal(err)
	}
	m := NewToolMatcher(list, "/h/ann", nil)
	if _, ok := m.Match("/h/ann/.myapp/state/db"); !ok {
		t.Error("an added pattern does not match")
	}
	if _, ok := m.Match("/p/.git/index"); ok {
		t.Error("a removed default still matches")
	}
	if len(base) != len(DefaultToolFiles()) {
		t.Error("ConfigureToolFiles changed its argument")
	}
	for _, bad := range []string{"relative/path", "!~/.not-a-default"} {
		if _, err := ConfigureToolFiles(base, []string{bad}); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func TestReportHost(t *testing.T) {
	tests := []struct {
		script string
		want   HostUse
	}{
		{"ps aux | grep python", HostLooks},
		{"ss -ltnp 'sport = :8080'", HostLooks},
		{"lsof -i :8080 > ports.txt", HostLooks},
		{"kill 1234", HostActs},
		{"ps aux; pkill -f server", HostActs},
		{"kill -l", ""},
		{"ls -l; cat notes", ""},
		{"uptime", ""}, // /proc/loadavg is the host's in any sandbox
		{"$CMD aux", ""},
	}
	for _, tc := range tests {
		r, err := Analyze(tc.script, Dir("/p"), Home("/h/ann"))
		if err != nil {
			t.Fatalf("%s: %v", tc.script, err)
		}
		if got := r.Host(); got != tc.want {
			t.Errorf("%s: host %q, want %q", tc.script, got, tc.want)
		}
	}
}
