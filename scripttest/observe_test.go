package scripttest

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/nash-shell/nash/effects"
)

// fakeRun is a host tree on disk and a run's new versions in a directory
// of their own, as a sandbox keeps them in an upper dir.
type fakeRun struct {
	host, upper string
}

func (f fakeRun) Lstat(p string) (fs.FileInfo, error) { return os.Lstat(p) }

func (f fakeRun) NewVersion(p string) (string, bool) {
	rel, err := filepath.Rel(f.host, p)
	if err != nil {
		return "", false
	}
	q := filepath.Join(f.upper, rel)
	if fi, err := os.Lstat(q); err == nil && fi.Mode().IsRegular() {
		return q, true
	}
	return "", false
}

// TestObserve tells a script's effects from its setup's, given what the
// sandbox saw (relative to today's files) and the entries the setup made.
func TestObserve(t *testing.T) {
	file := func(size int64) *effects.Object {
		return &effects.Object{Type: effects.TypeFile, Size: size, Mode: 0o644}
	}
	for _, c := range []struct {
		name    string
		host    map[string]string // today's files ("d/" a directory)
		upper   map[string]string // the run's new versions of files
		entries []Entry           // relative paths
		seen    []effects.Change  // what the sandbox saw, relative paths
		changes []string          // "kind path" of the script's changes
		fates   map[string]Fate   // relative paths
	}{
		{
			name:    "no setup: the run's changes are the script's; a rename is a move",
			host:    map[string]string{"a.txt": "A", "b.txt": "B"},
			upper:   map[string]string{"c.txt": "A"},
			seen:    []effects.Change{{Path: "a.txt", Kind: effects.Deleted, Before: file(1)}, {Path: "c.txt", Kind: effects.Created, After: file(1)}},
			changes: []string{"deleted a.txt", "created c.txt"},
			fates:   map[string]Fate{"a.txt": {Kind: Moved, To: "c.txt"}},
		},
		{
			name:    "a probe the script deleted leaves no trace in the run",
			host:    map[string]string{"a.txt": "A"},
			entries: []Entry{{Path: "my photo.txt", Type: effects.TypeFile, Content: "probe"}},
			changes: []string{"deleted my photo.txt"},
			fates:   map[string]Fate{"my photo.txt": {Kind: Deleted}},
		},
		{
			name:    "a probe the script renamed shows only as the new name",
			host:    map[string]string{"a.txt": "A"},
			upper:   map[string]string{"my photo.md": "probe"},
			entries: []Entry{{Path: "my photo.txt", Type: effects.TypeFile, Content: "probe"}},
			seen:    []effects.Change{{Path: "my photo.md", Kind: effects.Created, After: file(5)}},
			changes: []string{"created my photo.md", "deleted my photo.txt"},
			fates:   map[string]Fate{"my photo.txt": {Kind: Moved, To: "my photo.md"}},
		},
		{
			name:    "a probe the script left is no change",
			upper:   map[string]string{"my photo.txt": "probe"},
			entries: []Entry{{Path: "my photo.txt", Type: effects.TypeFile, Content: "probe"}},
			seen:    []effects.Change{{Path: "my photo.txt", Kind: effects.Created, After: file(5)}},
		},
		{
			name:    "a probe the script rewrote at the same size",
			upper:   map[string]string{"p": "PROBE"},
			entries: []Entry{{Path: "p", Type: effects.TypeFile, Content: "probe"}},
			seen:    []effects.Change{{Path: "p", Kind: effects.Created, After: file(5)}},
			changes: []string{"modified p"},
			fates:   map[string]Fate{"p": {Kind: Modified}},
		},
		{
			name:    "an input the setup emptied and the script left",
			host:    map[string]string{"in": "data"},
			upper:   map[string]string{"in": ""},
			entries: []Entry{{Path: "in", Type: effects.TypeFile}},
			seen:    []effects.Change{{Path: "in", Kind: effects.Modified, Before: file(4), After: file(0)}},
		},
		{
			name:    "an input the setup removed, and a file the script made",
			host:    map[string]string{"in": "data", "d/": "", "d/x": "X"},
			upper:   map[string]string{"out": ""},
			entries: []Entry{{Path: "in", Type: effects.TypeNone}, {Path: "d", Type: effects.TypeNone}},
			seen: []effects.Change{{Path: "d", Kind: effects.Deleted, Before: &effects.Object{Type: effects.TypeDir, Mode: 0o755}},
				{Path: "d/x", Kind: effects.Deleted, Before: file(1)},
				{Path: "in", Kind: effects.Deleted, Before: file(4)}, {Path: "out", Kind: effects.Created, After: file(0)}},
			changes: []string{"created out"},
		},
		{
			name:  "a directory the setup removed and the script made again",
			host:  map[string]string{"d/": "", "d/old": "O"},
			upper: map[string]string{"d/new": "N"},
			entries: []Entry{
				{Path: "d", Type: effects.TypeNone},
			},
			seen: []effects.Change{{Path: "d/new", Kind: effects.Created, After: file(1)},
				{Path: "d/old", Kind: effects.Deleted, Before: file(1)}},
			changes: []string{"created d", "created d/new"},
		},
		{
			name:    "a read-only file the script changed anyway",
			host:    map[string]string{"f": "old"},
			upper:   map[string]string{"f": "new!"},
			entries: []Entry{{Path: "f", Type: effects.TypeFile, Mode: 0o444, Keep: true}},
			seen:    []effects.Change{{Path: "f", Kind: effects.Modified, Before: file(3), After: &effects.Object{Type: effects.TypeFile, Size: 4, Mode: 0o444}}},
			changes: []string{"modified f"},
			fates:   map[string]Fate{"f": {Kind: Modified}},
		},
		{
			name:    "a symlink the script replaced with a file",
			host:    map[string]string{"in": "data"},
			upper:   map[string]string{"in": "data", "elsewhere/in": "data"},
			entries: []Entry{{Path: "elsewhere/in", Type: effects.TypeFile, Content: "data"}, {Path: "in", Type: effects.TypeSymlink, Target: "elsewhere/in"}},
			seen: []effects.Change{{Path: "elsewhere/in", Kind: effects.Created, After: file(4)},
				{Path: "in", Kind: effects.MetaChanged, Before: file(4), After: file(4), Meta: []string{"mtime"}}},
			changes: []string{"type_changed in"},
			fates:   map[string]Fate{"in": {Kind: TypeChanged}},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := t.TempDir()
			fr := fakeRun{host: filepath.Join(base, "host"), upper: filepath.Join(base, "upper")}
			write(t, fr.host, c.host)
			write(t, fr.upper, c.upper)
			abs := func(p string) string { return filepath.Join(fr.host, p) }
			var entries []Entry
			for _, e := range c.entries {
				e.Path = abs(e.Path)
				if e.Target != "" {
					e.Target = abs(e.Target)
				}
				entries = append(entries, e)
			}
			cs := &effects.ChangeSet{}
			for _, ch := range c.seen {
				ch.Path = abs(ch.Path)
				cs.Changes = append(cs.Changes, ch)
			}
			cs.Sort()
			obs := observe(fr, cs, entries)
			var got []string
			for _, ch := range obs.changes {
				rel, _ := filepath.Rel(fr.host, ch.Path)
				got = append(got, string(ch.Kind)+" "+rel)
			}
			sort.Strings(got)
			want := append([]string{}, c.changes...)
			sort.Strings(want)
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("changes (-want +got):\n%s", diff)
			}
			gotFates := map[string]Fate{}
			for p, f := range obs.fates {
				rel, _ := filepath.Rel(fr.host, p)
				if f.To != "" {
					f.To, _ = filepath.Rel(fr.host, f.To)
				}
				gotFates[rel] = f
			}
			if c.fates == nil {
				c.fates = map[string]Fate{}
			}
			if diff := cmp.Diff(c.fates, gotFates); diff != "" {
				t.Errorf("fates (-want +got):\n%s", diff)
			}
		})
	}
}

// write makes files under dir: a name ending in / is a directory.
func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
