//go:build linux

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/internal/fstree"
	"github.com/nash-shell/nash/sandbox"
)

// hostileNames are file names a script must quote right: spaces, a
// newline, a leading dash, shell syntax, quotes, an escape sequence.
var hostileNames = []string{
	"two words.txt",
	"new\nline.txt",
	"-rf receipt.txt",
	"$(touch pwned) receipt.txt",
	"it's; rm -r ~.txt",
	"\x1b[2Jclear.txt",
}

// groupTree writes files that mention receipts (some with hostile names,
// two with the same name in different directories, one whose name is
// already in taxes/), plus one that does not, and indexes them in a
// private index.
func groupTree(t *testing.T) (dir string, n *nashCmd) {
	t.Helper()
	dir = t.TempDir()
	files := map[string]string{
		"a/receipt.txt":     "receipt from the dentist\n",
		"b/receipt.txt":     "receipt from the pharmacy\n",
		"taxes/receipt.txt": "an older receipt already filed\n",
		"bread.md":          "flour water salt\n",
	}
	for _, name := range hostileNames {
		files[filepath.Join("odd", name)] = "a receipt with an odd name\n"
	}
	for rel, body := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	n = newNash(t, dir)
	emptyTrashOnCleanup(t, n)
	n.env = append(n.env, "NASH_INDEX_DIR="+filepath.Join(t.TempDir(), "index"), "NASH_EMBEDDER=",
		"NASH_MODEL=", "NASH_CONFIG="+filepath.Join(t.TempDir(), "none.yaml"))
	if out, errOut, code := n.run("", "index", "add", dir); code != 0 {
		t.Fatalf("index add: code %d\n%s%s", code, out, errOut)
	}
	t.Cleanup(func() { n.run("", "index", "stop") }) // before the temp dirs go
	return dir, n
}

// emptyTrashOnCleanup removes, before the test's temp dirs go, what the
// runs of n left in the trash of its state dir. nash leaves that to a
// background sweep which a short-lived process may not finish, and the
// overlayfs work dirs there are mode 000, which t.TempDir's cleanup
// cannot enter as an ordinary user; Close empties the trash.
func emptyTrashOnCleanup(t *testing.T, n *nashCmd) {
	t.Cleanup(func() {
		sb, err := sandbox.New(context.Background(), sandbox.StateDir(n.state), sandbox.Dir(n.dir))
		if err != nil {
			t.Errorf("empty the trash: %v", err)
			return
		}
		if err := sb.Close(); err != nil {
			t.Errorf("empty the trash: %v", err)
		}
	})
}

func snapshot(t *testing.T, dir string) fstree.Tree {
	t.Helper()
	tr, err := fstree.Snapshot(dir)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestGroupMoveAndUndo groups every file about receipts into taxes/: each
// moves (clashing names get suffixes, the file already there stays), the
// script is shown first, hostile names arrive intact and run nothing, and
// nash undo puts the tree back exactly.
func TestGroupMoveAndUndo(t *testing.T) {
	dir, n := groupTree(t)
	before := snapshot(t, dir)
	out, errOut, code := n.run("", "group", "--by", "keyword", "receipt", "--into", "taxes", "--yes")
	if code != 0 {
		t.Fatalf("group: code %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	script, _, _ := strings.Cut(errOut, "changes:")
	if !strings.Contains(script, "script\n") || !strings.Contains(script, "mv -n -T -- ") || !strings.Contains(script, "what it will do") {
		t.Errorf("the script was not shown before the run:\n%s", errOut)
	}
	if strings.ContainsRune(errOut, 0x1b) {
		t.Errorf("an escape sequence from a file name reached the terminal:\n%q", errOut)
	}
	if !strings.Contains(errOut, "already in") || !strings.Contains(errOut, "the name is taken") {
		t.Errorf("left-out and renamed files not named:\n%s", errOut)
	}
	// Both receipt.txt moved, as receipt-2.txt and receipt-3.txt in rank
	// order; the one already filed is untouched.
	var moved []string
	for _, name := range []string{"receipt-2.txt", "receipt-3.txt"} {
		b, err := os.ReadFile(filepath.Join(dir, "taxes", name))
		if err != nil {
			t.Fatalf("taxes/%s: %v", name, err)
		}
		moved = append(moved, string(b))
	}
	if !(strings.Contains(moved[0]+moved[1], "dentist") && strings.Contains(moved[0]+moved[1], "pharmacy")) {
		t.Errorf("renamed files hold %q", moved)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "taxes", "receipt.txt")); string(b) != "an older receipt already filed\n" {
		t.Errorf("taxes/receipt.txt = %q: a file already in DIR was overwritten", b)
	}
	for _, rel := range []string{"a/receipt.txt", "b/receipt.txt"} {
		if _, err := os.Lstat(filepath.Join(dir, rel)); err == nil {
			t.Errorf("%s is still there", rel)
		}
	}
	for _, name := range hostileNames {
		if b, err := os.ReadFile(filepath.Join(dir, "taxes", name)); err != nil || string(b) != "a receipt with an odd name\n" {
			t.Errorf("taxes/%s: %q, %v", effects.Quote(name), b, err)
		}
		if _, err := os.Lstat(filepath.Join(dir, "odd", name)); err == nil {
			t.Errorf("odd/%s was not moved", effects.Quote(name))
		}
	}
	for _, p := range []string{filepath.Join(dir, "pwned"), filepath.Join(dir, "taxes", "pwned"), filepath.Join(dir, "odd", "pwned")} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("a file name ran a command: %s exists", p)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "bread.md")); err != nil {
		t.Errorf("bread.md, which does not match, moved: %v", err)
	}
	logOut, _, _ := n.run("", "log")
	if !strings.Contains(logOut, "nash group --by keyword receipt --into") {
		t.Errorf("the log does not show the request:\n%s", logOut)
	}

	if out, errOut, code := n.run("", "undo"); code != 0 {
		t.Fatalf("undo: code %d\n%s%s", code, out, errOut)
	}
	if d := fstree.Diff(before, snapshot(t, dir)); d != "" {
		t.Errorf("undo did not restore the tree:\n%s", d)
	}
}

// TestGroupLinkAndUndo links the matches into a new directory: the files
// stay, links to them appear, and undo removes the directory again.
func TestGroupLinkAndUndo(t *testing.T) {
	dir, n := groupTree(t)
	before := snapshot(t, dir)
	out, errOut, code := n.run("", "group", "receipt", "--into", "linked", "--link", "--dir", filepath.Join(dir, "odd"), "--yes", "--json")
	if code != 0 {
		t.Fatalf("group --link: code %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	res := decodeRun(t, out)
	if !res.Committed {
		t.Fatalf("--json: %+v\n%s", res, out)
	}
	if !strings.Contains(errOut, "ln -s -T -- ") || !strings.Contains(errOut, "mkdir -p -- ") {
		t.Errorf("script not shown:\n%s", errOut)
	}
	if len(res.Changes) != len(hostileNames)+1 { // the links and the directory
		t.Errorf("%d changes, want %d: %+v", len(res.Changes), len(hostileNames)+1, res.Changes)
	}
	for _, name := range hostileNames {
		link := filepath.Join(dir, "linked", name)
		target, err := os.Readlink(link)
		if err != nil || target != filepath.Join(dir, "odd", name) {
			t.Errorf("linked/%s -> %q, %v", effects.Quote(name), target, err)
		}
		if b, err := os.ReadFile(link); err != nil || string(b) != "a receipt with an odd name\n" {
			t.Errorf("through linked/%s: %q, %v", effects.Quote(name), b, err)
		}
	}
	// --dir kept the other receipts out.
	if _, err := os.Lstat(filepath.Join(dir, "linked", "receipt.txt")); err == nil {
		t.Error("--dir did not restrict the matches")
	}
	if _, _, code := n.run("", "undo"); code != 0 {
		t.Fatal("undo failed")
	}
	if d := fstree.Diff(before, snapshot(t, dir)); d != "" {
		t.Errorf("undo did not restore the tree:\n%s", d)
	}
}

// TestGroupSemanticFallsBack: --by semantic without an embedder searches
// by keyword and says so; an abort changes nothing.
func TestGroupSemanticFallsBack(t *testing.T) {
	dir, n := groupTree(t)
	before := snapshot(t, dir)
	_, errOut, code := n.run("a\n", "group", "--by", "semantic", "receipt", "--into", "taxes")
	if code != exitAborted {
		t.Fatalf("code %d, want %d (aborted)\n%s", code, exitAborted, errOut)
	}
	if !strings.Contains(errOut, "no embedder configured") {
		t.Errorf("the fallback to keyword search is not said:\n%s", errOut)
	}
	if !strings.Contains(errOut, "commit these changes?") || !strings.Contains(errOut, "nash: aborted") {
		t.Errorf("no question and abort:\n%s", errOut)
	}
	if d := fstree.Diff(before, snapshot(t, dir)); d != "" {
		t.Errorf("abort changed the tree:\n%s", d)
	}
}

func TestGroupRefusals(t *testing.T) {
	dir, n := groupTree(t)
	before := snapshot(t, dir)
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"group", "--by", "fuzzy", "receipt", "--into", "taxes"}, exitUsage, "keyword or semantic"},
		{[]string{"group", "receipt"}, exitUsage, "--into"},
		{[]string{"group", "receipt", "--into", "bread.md"}, exitUsage, "not a directory"},
		{[]string{"group", "--into", "taxes"}, exitUsage, "argument"},
		{[]string{"group", "receipt", "--into", "taxes", "-n", "0"}, exitUsage, "-n"},
		{[]string{"group", "zeppelin", "--into", "taxes", "--yes"}, exitFailure, "no indexed file matches"},
		{[]string{"group", "older", "--into", "taxes", "--yes"}, exitFailure, "nothing to group"},
	}
	for _, tt := range tests {
		_, errOut, code := n.run("", tt.args...)
		if code != tt.code || !strings.Contains(errOut, tt.want) {
			t.Errorf("nash %q: code %d, stderr %q; want code %d and %q", tt.args, code, errOut, tt.code, tt.want)
		}
	}
	if d := fstree.Diff(before, snapshot(t, dir)); d != "" {
		t.Errorf("a refused group changed the tree:\n%s", d)
	}
}

// TestPlanGroupNames checks the names planGroup picks and that its script
// parses back to exactly the paths it was given.
func TestPlanGroupNames(t *testing.T) {
	src := t.TempDir()
	into := t.TempDir()
	for _, name := range []string{"notes.md", ".bashrc", "README"} {
		if err := os.WriteFile(filepath.Join(into, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mk := func(rel string) string {
		p := filepath.Join(src, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		path, want string // want "" means left out
	}{
		{mk("x/notes.md"), "notes-2.md"},
		{mk("y/notes.md"), "notes-3.md"},
		{mk("x/.bashrc"), ".bashrc-2"},
		{mk("x/README"), "README-2"},
		{mk("x/site.tar.gz"), "site.tar.gz"},
		{mk("y/site.tar.gz"), "site.tar-2.gz"},
		{mk("x/-n\nodd 'name'"), "-n\nodd 'name'"},
		{filepath.Join(src, "gone.txt"), ""},
		{filepath.Join(into, "notes.md"), ""},
		{filepath.Join(src, "x"), ""}, // a directory
	}
	var paths []string
	for _, tt := range tests {
		paths = append(paths, tt.path)
	}
	paths = append(paths, tests[0].path) // a repeated hit counts once
	plan := planGroup(paths, into, false, "nash group test")
	if plan.files != 7 {
		t.Errorf("%d files, want 7\n%s", plan.files, plan.script)
	}
	if strings.Contains(plan.script, "mkdir") {
		t.Errorf("mkdir of a directory that exists:\n%s", plan.script)
	}
	mv := commandArgs(t, plan.script, "mv")
	i := 0
	for _, tt := range tests {
		if tt.want == "" {
			continue
		}
		if i >= len(mv) {
			t.Fatalf("only %d mv commands:\n%s", len(mv), plan.script)
		}
		args := mv[i]
		if len(args) < 2 || args[len(args)-2] != tt.path || args[len(args)-1] != filepath.Join(into, tt.want) {
			t.Errorf("mv %q, want %q -> %q", args, tt.path, filepath.Join(into, tt.want))
		}
		i++
	}
	if len(plan.notes) != 3+5 { // 3 left out, 5 renamed
		t.Errorf("notes: %q", plan.notes)
	}
}

// commandArgs parses script as bash and returns the arguments, as bash
// reads them, of each call of the command name.
func commandArgs(t *testing.T, script, name string) [][]string {
	t.Helper()
	f, err := syntax.NewParser().Parse(strings.NewReader(script), "")
	if err != nil {
		t.Fatalf("the script does not parse: %v\n%s", err, script)
	}
	var out [][]string
	syntax.Walk(f, func(n syntax.Node) bool {
		call, ok := n.(*syntax.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		var args []string
		for _, w := range call.Args {
			s, err := expand.Literal(&expand.Config{}, w)
			if err != nil {
				t.Fatalf("expand %v: %v", w, err)
			}
			args = append(args, s)
		}
		if args[0] == name {
			out = append(out, args[1:])
		}
		return true
	})
	return out
}
