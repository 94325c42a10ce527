package scripttest

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/internal/fstree"
)

// TestShellQuote checks that bash reads every quoted word back byte for
// byte, hostile names included.
func TestShellQuote(t *testing.T) {
	words := []string{"", "plain", "a b", "it's", `back\slash`, "line\nbreak", "-x", "caf\xe9", "tab\there",
		"$HOME", "`id`", "*", "a\x01b", "\x7f", "\xff\xfe", "naïve", "'", `"`, "=x", "!", "{a,b}"}
	var script strings.Builder
	for _, w := range words {
		script.WriteString("printf '%s\\0' " + shellQuote(w) + "\n")
	}
	out, err := exec.Command("bash", "-c", script.String()).Output()
	if err != nil {
		t.Fatalf("bash: %v", err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if len(got) != len(words) {
		t.Fatalf("got %d words back, want %d: %q", len(got), len(words), got)
	}
	for i, w := range words {
		if got[i] != w {
			t.Errorf("shellQuote(%q) = %s reads back as %q", w, shellQuote(w), got[i])
		}
		if q := shellQuote(w); strings.ContainsAny(q, "\n\x00\x01\x7f") {
			t.Errorf("shellQuote(%q) = %q holds a control character", w, q)
		}
	}
}

// TestInstantiate makes names for glob elements, with a core where the
// first * is.
func TestInstantiate(t *testing.T) {
	for _, c := range []struct {
		base, core, want string
		ok               bool
	}{
		{"*.jpeg", "my photo", "my photo.jpeg", true},
		{"*.jpeg", "", ".jpeg", true},
		{"*", "-x", "-x.txt", true},
		{"img_*.png", "a b", "img_a b.png", true},
		{"*.tar.*", "x", "x.tar.", true},
		{"file?.txt", "", "filex.txt", true},
		{"file?.txt", "core", "", false},
		{"[abc]*.log", "z", "az.log", true},
		{"[!a]*", "b", "qb", true},
		{"[!a]*.c", "b", "qb.c", true},
		{`\**.md`, "x", "*x.md", true},
		{"report.txt", "x", "", false},
	} {
		got, ok := instantiate(c.base, c.core)
		if ok != c.ok || got != c.want {
			t.Errorf("instantiate(%q, %q) = %q, %v; want %q, %v", c.base, c.core, got, ok, c.want, c.ok)
		}
	}
}

// TestSetup builds a variant's entries with the setup bash runs, natively
// in a temporary directory, and compares the tree with what the entries
// say: removals, replacements, new directories (and their parents),
// hostile names, modes, symlinks.
func TestSetup(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{"gone.txt": "x", "dir/inner": "y", "file-then-dir": "z", "replaced": "old", "ro": "keep me"} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tr := New(Dir(dir))
	entries := tr.complete([]Entry{
		{Path: dir + "/gone.txt", Type: effects.TypeNone},
		{Path: dir + "/dir", Type: effects.TypeNone},
		{Path: dir + "/file-then-dir", Type: effects.TypeDir, Mode: 0o700},
		{Path: dir + "/replaced", Type: effects.TypeSymlink, Target: "/nowhere"},
		{Path: dir + "/new/deep/my photo.jpeg", Type: effects.TypeFile, Content: "probe\n"},
		{Path: dir + "/line\nbreak", Type: effects.TypeFile, Content: "it's \\ 100%\n"},
		{Path: dir + "/-x", Type: effects.TypeFile, Content: ""},
		{Path: dir + "/caf\xe9", Type: effects.TypeFile, Content: "\xff", Mode: 0o600},
		{Path: dir + "/ro", Type: effects.TypeFile, Mode: 0o444, Keep: true},
		{Path: dir + "/locked", Type: effects.TypeDir, Mode: 0o555},
		{Path: dir + "/locked/inside", Type: effects.TypeFile, Content: "in a read-only directory\n"},
	})
	v := Variant{Entries: entries}
	code := v.setup("echo script ran", 0, 0o022, tr.hostMode)
	cmd := exec.Command("bash", "-c", code)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil || string(out) != "script ran\n" {
		t.Fatalf("setup: %v\n%s\n%s", err, out, code)
	}
	got, err := fstree.Snapshot(dir)
	if err != nil {
		t.Fatal(err)
	}
	// What fstree records beyond type, mode, size, content and target
	// (link counts) is taken from what it found.
	want := fstree.Tree{}
	entry := func(name string) fstree.Entry {
		e := got[name]
		e.Type, e.Mode, e.Size, e.Hash, e.Target = "", 0, 0, "", ""
		return e
	}
	file := func(name, content string, mode os.FileMode) {
		e := entry(name)
		e.Type, e.Mode, e.Size, e.Hash = "file", mode, int64(len(content)), hashOf(content)
		want[name] = e
	}
	dirE := func(name string, mode os.FileMode) {
		e := entry(name)
		e.Type, e.Mode = "dir", os.ModeDir|mode
		want[name] = e
	}
	dirE(".", got["."].Mode.Perm())
	dirE("file-then-dir", 0o700)
	link := entry("replaced")
	link.Type, link.Mode, link.Target, link.Size = "symlink", os.ModeSymlink|0o777, "/nowhere", int64(len("/nowhere"))
	want["replaced"] = link
	dirE("new", 0o755)
	dirE("new/deep", 0o755)
	file("new/deep/my photo.jpeg", "probe\n", 0o644)
	file("line\nbreak", "it's \\ 100%\n", 0o644)
	file("-x", "", 0o644)
	file("caf\xe9", "\xff", 0o600)
	file("ro", "keep me", 0o444)
	dirE("locked", 0o555)
	file("locked/inside", "in a read-only directory\n", 0o644)
	if d := fstree.Diff(want, got); d != "" {
		t.Errorf("the setup made another tree:\n%s\nsetup:\n%s", d, code)
	}
	_ = os.Chmod(dir+"/locked", 0o755)
}

// hashOf is a content's hash as fstree records it.
func hashOf(content string) string {
	h := sha256.Sum256([]byte(content))
	return hex.EncodeToString(h[:8])
}
