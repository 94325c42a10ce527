package effects

import (
	"fmt"
	"path"
	"sort"
	"strings"
)

// Tools keep files of their own as they work: git refreshes its index on
// git status, less and vim remember searches, shells and REPLs their
// history, Python its bytecode, every program its cache. Such a change is
// no decision of the person's; nash commits it with the run, lists it
// apart, and never asks about it alone. ToolFile patterns say which files
// these are; the registry's Also paths (what a command writes of its own
// accord: top's ~/.config/procps) are among them.

// ToolFile names files a tool keeps for itself.
type ToolFile struct {
	// Pattern is a path in glob syntax (see PathUse.Pattern): ~/ is the
	// home directory, $XDG_CACHE_HOME, $XDG_DATA_HOME, $XDG_STATE_HOME
	// and $XDG_CONFIG_HOME the person's (a pattern naming one that is
	// not set is left out). It covers the path and everything below it.
	Pattern string `json:"pattern" yaml:"pattern"`
	// Tool is whose files they are, for people: "git", "less", "a cache".
	Tool string `json:"tool" yaml:"tool"`
}

// defaultToolFiles are the tools' own files nash knows, besides the
// registry's Also paths.
var defaultToolFiles = []ToolFile{
	{"**/.git/index", "git"},
	{"~/.lesshst", "less"}, {"$XDG_STATE_HOME/lesshst", "less"}, {"$XDG_DATA_HOME/lesshst", "less"},
	{"~/.local/state/lesshst", "less"}, {"~/.local/share/lesshst", "less"},
	{"~/.viminfo", "vim"}, {"~/.viminfo.tmp", "vim"}, {"~/.vim/.netrwhist", "vim"},
	{"~/.local/state/nvim", "neovim"}, {"~/.local/share/nvim/shada", "neovim"},
	{"~/.bash_history", "shell history"}, {"~/.zsh_history", "shell history"}, {"~/.histfile", "shell history"},
	{"~/.local/share/fish/fish_history", "shell history"},
	{"~/.python_history", "REPL history"}, {"~/.node_repl_history", "REPL history"}, {"~/.psql_history", "REPL history"},
	{"~/.sqlite_history", "REPL history"}, {"~/.mysql_history", "REPL history"}, {"~/.irb_history", "REPL history"},
	{"~/.rediscli_history", "REPL history"}, {"~/.gdb_history", "REPL history"}, {"~/.lua_history", "REPL history"},
	{"~/.cache", "a cache"}, {"$XDG_CACHE_HOME", "a cache"},
	{"**/__pycache__", "python"}, {"~/.npm/_cacache", "npm"}, {"~/.npm/_logs", "npm"},
	{"~/.wget-hsts", "wget"}, {"/var/cache/man", "man"},
}

// DefaultToolFiles returns the tools' own files nash knows: its list and
// the registry's Also paths. The result is a copy.
func DefaultToolFiles() []ToolFile {
	out := append([]ToolFile(nil), defaultToolFiles...)
	var also []ToolFile
	reg := commands()
	for i := range reg.entries {
		s := reg.entries[i].spec
		for _, a := range s.Also {
			also = append(also, ToolFile{Pattern: a.Path, Tool: s.Name})
		}
	}
	sort.Slice(also, func(i, j int) bool { return also[i].Pattern < also[j].Pattern })
	return append(out, also...)
}

// ConfigureToolFiles applies the configuration's entries to list: a
// pattern adds it (as the person's own), "!PATTERN" takes out the entry
// with that pattern. A pattern must be absolute or start with ~/, ** or $.
func ConfigureToolFiles(list []ToolFile, entries []string) ([]ToolFile, error) {
	out := append([]ToolFile(nil), list...)
	for _, e := range entries {
		pat, drop := strings.CutPrefix(strings.TrimSpace(e), "!")
		if !strings.HasPrefix(pat, "/") && !strings.HasPrefix(pat, "~/") && !strings.HasPrefix(pat, "**") && !strings.HasPrefix(pat, "$") {
			return nil, fmt.Errorf("tool file %s: a pattern is absolute or starts with ~/, ** or $", Quote(e))
		}
		if !drop {
			out = append(out, ToolFile{Pattern: pat, Tool: "your list"})
			continue
		}
		found := false
		for i := 0; i < len(out); i++ {
			if out[i].Pattern == pat {
				out = append(out[:i], out[i+1:]...)
				i--
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("tool file %s: no entry has that pattern", Quote(e))
		}
	}
	return out, nil
}

// ToolMatcher tells tools' own files, for one home directory and
// environment.
type ToolMatcher struct {
	pats []ToolFile // expanded patterns
}

// NewToolMatcher expands list's patterns with home and getenv (which may
// be nil).
func NewToolMatcher(list []ToolFile, home string, getenv func(string) string) *ToolMatcher {
	home = strings.TrimSuffix(home, "/")
	m := &ToolMatcher{}
	for _, t := range list {
		p := t.Pattern
		switch {
		case strings.HasPrefix(p, "~/"):
			if home == "" {
				continue
			}
			p = escapeGlob(home) + p[1:]
		case strings.HasPrefix(p, "$"):
			name, rest, _ := strings.Cut(p[1:], "/")
			v := ""
			if getenv != nil {
				v = getenv(name)
			}
			if !strings.HasPrefix(v, "/") {
				continue
			}
			p = escapeGlob(path.Clean(v))
			if rest != "" {
				p += "/" + rest
			}
		}
		m.pats = append(m.pats, ToolFile{Pattern: strings.TrimSuffix(p, "/"), Tool: t.Tool})
	}
	return m
}

// Match reports whose own file p is, if it is one: p matches a pattern,
// or lies below a path that does.
func (m *ToolMatcher) Match(p string) (tool string, ok bool) {
	if m == nil {
		return "", false
	}
	for _, t := range m.pats {
		if matchPath(t.Pattern, p) || matchPath(t.Pattern+"/**", p) {
			return t.Tool, true
		}
	}
	return "", false
}

// Split parts cs into the person's changes and tools' own. A change is a
// tool's when its path is a tool's file and it creates, modifies or
// changes the metadata of it, or when it creates a directory that only
// holds tools' files (~/.cache itself, made for the first cache); a
// deletion is never a tool's: removing a history or a cache is the
// person's business. Either part may be empty, never nil.
func (m *ToolMatcher) Split(cs *ChangeSet) (own, tools *ChangeSet) {
	own, tools = &ChangeSet{}, &ChangeSet{}
	if cs == nil {
		return own, tools
	}
	isTool := make([]bool, len(cs.Changes))
	for i, c := range cs.Changes {
		switch c.Kind {
		case Created, Modified, MetaChanged:
			_, isTool[i] = m.Match(c.Path)
		}
	}
	// A created directory is a tool's when everything changed below it
	// is, and something is.
	for i, c := range cs.Changes {
		if isTool[i] || c.Kind != Created || c.After == nil || c.After.Type != TypeDir {
			continue
		}
		below, all := 0, true
		for j, d := range cs.Changes {
			if strings.HasPrefix(d.Path, c.Path+"/") {
				below++
				all = all && (isTool[j] || d.Kind == Created && d.After != nil && d.After.Type == TypeDir)
			}
		}
		isTool[i] = below > 0 && all && m.holdsTool(cs, c.Path, isTool)
	}
	for i, c := range cs.Changes {
		if isTool[i] {
			tools.Changes = append(tools.Changes, c)
		} else {
			own.Changes = append(own.Changes, c)
		}
	}
	return own, tools
}

// holdsTool reports whether some tool's change lies below dir.
func (m *ToolMatcher) holdsTool(cs *ChangeSet, dir string, isTool []bool) bool {
	for j, d := range cs.Changes {
		if isTool[j] && strings.HasPrefix(d.Path, dir+"/") {
			return true
		}
	}
	return false
}

// Tools names the tools whose files cs changes, for a short line: "git,
// less". tools is the tools' part of a Split.
func (m *ToolMatcher) Tools(tools *ChangeSet) []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range tools.Changes {
		t, ok := m.Match(c.Path)
		if !ok {
			continue // a directory made to hold them
		}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}
