package sandbox

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"golang.org/x/sys/unix"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/internal/datasets"
)

// judgedLabels are the labels whose precision the evaluations measure: the
// ones that ask a person to stop and read.
var judgedLabels = []effects.Risk{effects.WritesOutside, effects.Deletes, effects.CannotUndo}

// labelTally counts, for one label, how the labels of many reports compare
// with what their runs did.
type labelTally struct {
	TP, FP, FN, TN int
	// Unobserved counts commands whose run cannot tell whether the label
	// is right: the label says a change that the evaluation's sandbox
	// refuses (new entries in a read-only directory such as /), or the
	// command needs the network, which the evaluation does not give it.
	Unobserved int
	// Examples of each kind of error, "id command: why".
	FPs, FNs, Unobs []string
}

// Precision is the share of labels given that were right, 1 when none
// was given.
func (t *labelTally) Precision() float64 {
	if t.TP+t.FP == 0 {
		return 1
	}
	return float64(t.TP) / float64(t.TP+t.FP)
}

// Recall is the share of runs that did what the label says which had the
// label, 1 when none did.
func (t *labelTally) Recall() float64 {
	if t.TP+t.FN == 0 {
		return 1
	}
	return float64(t.TP) / float64(t.TP+t.FN)
}

// labelEval tallies every judged label over a corpus.
type labelEval map[effects.Risk]*labelTally

func newLabelEval() labelEval {
	e := labelEval{}
	for _, l := range judgedLabels {
		e[l] = &labelTally{}
	}
	return e
}

// runTruth is what one run did, in the terms of the labels. Known is
// false for a label the run cannot tell (judged elsewhere, or not at all).
type runTruth struct {
	did   map[effects.Risk]bool
	known map[effects.Risk]bool
	why   map[effects.Risk]string // a path that shows it, for messages
	// unobservable says why a label the report gives cannot be judged
	// from this run, per label; "" when it can.
	unobservable map[effects.Risk]string
}

// add tallies one command: the report's labels against the run's truth.
func (e labelEval) add(id, cmd string, rep *effects.Report, truth runTruth) {
	labels := rep.Labels()
	for _, l := range judgedLabels {
		if !truth.known[l] {
			continue
		}
		t := e[l]
		said, did := slices.Contains(labels, l), truth.did[l]
		what := fmt.Sprintf("%s %q", id, cmd)
		switch {
		case said && !did && truth.unobservable[l] != "":
			t.Unobserved++
			t.Unobs = append(t.Unobs, what+": "+truth.unobservable[l])
		case said && did:
			t.TP++
		case said:
			t.FP++
			t.FPs = append(t.FPs, what+": "+reasonFor(rep, l))
		case did:
			t.FN++
			t.FNs = append(t.FNs, what+": "+truth.why[l])
		default:
			t.TN++
		}
	}
}

// reasonFor is the first finding that gives a report label l.
func reasonFor(rep *effects.Report, l effects.Risk) string {
	for _, f := range rep.Findings {
		if f.Risk == l {
			return f.Reason
		}
	}
	return l.String()
}

// log prints precision and recall per label, and every error.
func (e labelEval) log(t *testing.T, corpus string) {
	t.Helper()
	t.Logf("%s: labels a person reads (right when the run did it; the observed change set is the truth):", corpus)
	for _, l := range judgedLabels {
		a := e[l]
		t.Logf("  %-18s precision %5.3f (%4d of %4d given were right)  recall %5.3f (%4d of %4d runs that did it were labelled)  not observable %d",
			l, a.Precision(), a.TP, a.TP+a.FP, a.Recall(), a.TP, a.TP+a.FN, a.Unobserved)
	}
	for _, l := range judgedLabels {
		a := e[l]
		for _, s := range a.FPs {
			t.Logf("  %s wrongly given: %s", l, s)
		}
		for _, s := range a.FNs {
			t.Logf("  %s missed: %s", l, s)
		}
		for _, s := range a.Unobs {
			t.Logf("  %s not observable: %s", l, s)
		}
	}
}

// observeLabels tells what a pending run did, in the terms of the labels,
// for a script run in dir. It must be called before the run is aborted:
// it reads the run's new versions to tell a move from a loss.
//
//   - writes-outside-cwd: some change outside dir that loses nothing: a
//     path created, modified or with new metadata, or deleted but moved
//     (its content now at another path). A directory's new times, which
//     follow from a change to an entry, do not count.
//   - deletes: some file, link or other non-directory is deleted and its
//     content is not at any path the run created or changed (a move or a
//     copy then delete loses nothing). An empty directory removed loses
//     nothing either.
//   - cannot-undo: not observable from a change set; known only when the
//     caller judges it (see irreversibleGold).
//
// A label the report gives that the sandbox refused to let happen (a new
// entry in a read-only directory, such as / on a host whose / has mounts
// below it) is marked unobservable; so is every label of a script that
// needs the network, since the evaluation runs without it.
func observeLabels(sb *Sandbox, p *Pending, rep *effects.Report, dir string) runTruth {
	tr := runTruth{
		did: map[effects.Risk]bool{}, why: map[effects.Risk]string{}, unobservable: map[effects.Risk]string{},
		known: map[effects.Risk]bool{effects.WritesOutside: true, effects.Deletes: true},
	}
	lost := lostPaths(sb, p)
	lostUnder := func(d string) bool {
		for l := range lost {
			if within(l, d) {
				return true
			}
		}
		return false
	}
	for _, c := range p.Changes.Changes {
		if dirTimesOnly(c) {
			continue
		}
		if lost[c.Path] || c.Kind == effects.Deleted && c.Before != nil && c.Before.Type == effects.TypeDir && lostUnder(c.Path) {
			if !tr.did[effects.Deletes] {
				tr.did[effects.Deletes], tr.why[effects.Deletes] = true, "deleted "+c.Path
			}
			continue
		}
		if !within(c.Path, dir) && !tr.did[effects.WritesOutside] {
			tr.did[effects.WritesOutside], tr.why[effects.WritesOutside] = true, string(c.Kind)+" "+c.Path
		}
	}
	why := ""
	switch prog := missingProgram(rep); {
	case rep.Network:
		why = "it needs the network, which the evaluation's sandbox does not have"
	case prog != "":
		why = prog + " is not installed here"
	}
	if why != "" {
		for _, l := range judgedLabels {
			tr.unobservable[l] = why
		}
		return tr
	}
	inRO := func(acc func(effects.PathUse) bool) string {
		n, ro := 0, ""
		for _, u := range rep.Paths {
			if !acc(u) {
				continue
			}
			n++
			if r := readOnlyArea(u.Path, p.ReadOnly); r != "" {
				ro = "the sandbox refuses it (" + r + " is read-only there)"
			} else if d := deniedArea(u.Path); d != "" {
				ro = "this user may not write in " + d + ", in the sandbox as outside"
			} else {
				return ""
			}
		}
		if n == 0 {
			return ""
		}
		return ro
	}
	tr.unobservable[effects.WritesOutside] = inRO(func(u effects.PathUse) bool {
		return u.Access != effects.Read && !within(u.Path, dir) && !strings.Contains(u.Path, "$")
	})
	tr.unobservable[effects.Deletes] = inRO(func(u effects.PathUse) bool { return u.Access == effects.Delete })
	return tr
}

// deniedArea returns the nearest existing ancestor of p (or p) when the
// calling user may not write in it, or "": an ordinary user's run of
// mkdir /usr/x fails natively too, so the label cannot be judged there.
func deniedArea(p string) string {
	if os.Geteuid() == 0 {
		return ""
	}
	p = strings.TrimSuffix(strings.SplitN(p, "*", 2)[0], "/")
	for a := p; a != "" && a != "."; a = path.Dir(a) {
		if _, err := os.Lstat(a); err != nil {
			if a == "/" {
				return ""
			}
			continue
		}
		if unix.Access(a, unix.W_OK) != nil {
			return a
		}
		return ""
	}
	return ""
}

// readOnlyArea returns the entry of ro that makes p read-only in the
// sandbox, or "": p itself, a path under it, or a path whose first missing
// ancestor would be a new entry in a directory listed as "DIR/ (new
// entries)" (/path/to/x, when / has no "path").
func readOnlyArea(p string, ro []string) string {
	p = strings.TrimSuffix(strings.SplitN(p, "*", 2)[0], "/")
	if p == "" {
		p = "/"
	}
	first := "" // the first ancestor of p (or p) that does not exist
	for a := p; ; a = path.Dir(a) {
		if _, err := os.Lstat(a); err != nil {
			first = a
		}
		if a == "/" || a == "." {
			break
		}
	}
	for _, r := range ro {
		if d, ok := strings.CutSuffix(r, "/ (new entries)"); ok {
			if d == "" {
				d = "/"
			}
			if p == d || first != "" && path.Dir(first) == d {
				return r
			}
			continue
		}
		if within(p, r) {
			return r
		}
	}
	return ""
}

// builtins are the names bash runs itself, not from PATH.
var builtins = sync.OnceValue(func() map[string]bool {
	out, _ := exec.Command("bash", "-c", "compgen -b; compgen -k").Output()
	m := map[string]bool{}
	for _, n := range strings.Fields(string(out)) {
		m[n] = true
	}
	return m
})

// missingProgram returns the first command a report says runs that is not
// installed on this machine (and is not a builtin or a function the script
// defines), or "": its run shows only "command not found".
func missingProgram(rep *effects.Report) string {
	for _, c := range rep.Commands {
		if c.Dynamic || builtins()[c.Name] || c.Name == "" {
			continue
		}
		if _, err := exec.LookPath(c.Name); err != nil && !definesFunction(rep, c.Name) {
			return c.Name
		}
	}
	return ""
}

// definesFunction reports whether a script's commands include a call of a
// function by that name, which the analysis lists with the function's
// name in Via.
func definesFunction(rep *effects.Report, name string) bool {
	for _, c := range rep.Commands {
		for _, v := range c.Via {
			if v == "function "+name {
				return true
			}
		}
	}
	return false
}

// dirTimesOnly reports whether a change is a directory's times alone.
func dirTimesOnly(c effects.Change) bool {
	isDir := (c.After != nil && c.After.Type == effects.TypeDir) || (c.Before != nil && c.Before.Type == effects.TypeDir)
	if !isDir || (c.Kind != effects.MetaChanged && c.Kind != effects.Modified) {
		return false
	}
	for _, m := range c.Meta {
		if m != "mtime" {
			return false
		}
	}
	return true
}

// lostPaths returns the non-directories a run deleted whose content it
// did not keep at another path: each deleted file is paired with at most
// one created or modified file of the same type and the same bytes (a
// link: the same target), one of the same name first.
func lostPaths(sb *Sandbox, p *Pending) map[string]bool {
	type dest struct {
		c    effects.Change
		used bool
	}
	var dests []*dest
	for _, c := range p.Changes.Changes {
		if c.Kind != effects.Deleted && c.After != nil && c.After.Type != effects.TypeDir {
			dests = append(dests, &dest{c: c})
		}
	}
	lost := map[string]bool{}
	for _, c := range p.Changes.Changes {
		if c.Kind != effects.Deleted || c.Before == nil || c.Before.Type == effects.TypeDir {
			continue
		}
		var best *dest
		for _, d := range dests {
			if d.used || d.c.After.Type != c.Before.Type || d.c.After.Size != c.Before.Size || !sameObject(sb, p.ID, c, d.c) {
				continue
			}
			if best == nil || path.Base(d.c.Path) == path.Base(c.Path) && path.Base(best.c.Path) != path.Base(c.Path) {
				best = d
			}
		}
		if best == nil {
			lost[c.Path] = true
			continue
		}
		best.used = true
	}
	return lost
}

// sameObject reports whether the deleted path's old object and the
// changed path's new one hold the same thing. The live tree still holds
// the old versions: runs are compared before they are aborted.
func sameObject(sb *Sandbox, id string, deleted, changed effects.Change) bool {
	switch deleted.Before.Type {
	case effects.TypeSymlink:
		return deleted.Before.Target == changed.After.Target
	case effects.TypeFile:
		newPath, ok := sb.NewVersion(id, changed.Path)
		if !ok {
			return false
		}
		return sameFileBytes(deleted.Path, newPath)
	}
	return true
}

// sameFileBytes reports whether two files hold the same bytes.
func sameFileBytes(a, b string) bool {
	fa, err := os.Open(a)
	if err != nil {
		return false
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		return false
	}
	defer fb.Close()
	ba, bb := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		na, ea := io.ReadFull(fa, ba)
		nb, eb := io.ReadFull(fb, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false
		}
		if ea != nil || eb != nil {
			return (ea == io.EOF || ea == io.ErrUnexpectedEOF) && (eb == io.EOF || eb == io.ErrUnexpectedEOF)
		}
	}
}

// nl2bashFixture builds a home directory of the kind NL2Bash's commands
// expect under base, and returns it and the project directory in it where
// the commands run. The names are the corpus's most frequent ones (file.txt,
// *.jpg, dir1, foo, src, ...), with content, some of it old, so that finds
// by name, type and age match, and rm, mv, sed -i and the rest have
// something to act on.
func nl2bashFixture(t *testing.T, base string) (home, work string) {
	t.Helper()
	home = filepath.Join(base, "home", "user")
	work = filepath.Join(home, "project")
	old := time.Now().Add(-40 * 24 * time.Hour)
	text := func(name string) string {
		return fmt.Sprintf("hello from %s\nfoo bar baz\nTODO: check %s\n123 456\nerror: none\n", name, name)
	}
	files := map[string]string{
		".bashrc": "export PATH=$PATH:$HOME/bin\nalias ll='ls -l'\n", ".profile": "# profile\n",
		"Documents/report.txt": "", "Documents/notes.md": "", "Downloads/file.pdf": "", "Downloads/song.mp3": "",
		"Pictures/photo.jpg": "", "Pictures/img.png": "", "bin/script.sh": "#!/bin/sh\necho hi\n",
	}
	for _, n := range []string{
		"file", "file.txt", "file1.txt", "file2.txt", "foo.txt", "a.txt", "b.txt", "test.txt", "text.txt", "temp.txt",
		"myfile.txt", "input.txt", "output.txt", "out.txt", "log.txt", "report.txt", "data.csv", "error.log", "app.log",
		"index.html", "index.php", "style.css", "app.js", "config.xml", "data.json", "main.c", "util.c", "util.h",
		"MyCProgram.c", "Main.java", "Main.class", "script.py", "test.py", "script.sh", "myscript.sh", "run.pl",
		"app.rb", "httpd.conf", "notes.md", "README", "Makefile", "photo.jpg", "image.jpeg", "pic.png", "song.mp3",
		"doc.pdf", "old.bak", "x.tmp", "a.o", "b.o", ".hidden", "file with space.txt",
		"dir/a.txt", "dir/b.log", "dir1/x.txt", "dir1/sub/y.txt", "dir2/z.txt", "foo/bar.txt", "test/t1.txt",
		"tmp/a.tmp", "tmp/b.tmp", "src/main.c", "src/lib/util.c", "src/js/app.js", "build/main.o", "logs/app.log",
		"logs/old.log", "backup/file.txt.bak", "images/a.jpg", "images/b.JPG", "data/records.csv", "folder/doc.txt",
	} {
		files["project/"+n] = text(n)
	}
	files["project/list.txt"] = "a.txt\nb.txt\ndir/a.txt\n"
	files["project/files.txt"] = "file1.txt\nfile2.txt\n"
	for name, content := range files {
		p := filepath.Join(home, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(name, "old") || strings.HasSuffix(name, ".bak") || strings.HasSuffix(name, ".log") || strings.HasSuffix(name, ".tmp") {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, d := range []string{"project/empty", "project/dir3", ".cache"} {
		if err := os.MkdirAll(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range [][2]string{{"project/link", "file.txt"}, {"project/dangling", "nowhere"}} {
		if err := os.Symlink(s[1], filepath.Join(home, s[0])); err != nil {
			t.Fatal(err)
		}
	}
	for _, a := range []string{"archive.tar.gz", "file.tar.gz", "archive.tar", "file.gz", "file.zip"} {
		writeArchive(t, filepath.Join(work, a))
	}
	if err := os.Chmod(filepath.Join(work, "script.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	return home, work
}

// writeArchive writes a small archive of two files in the format its name
// says: .tar, .tar.gz, .gz or .zip.
func writeArchive(t *testing.T, name string) {
	t.Helper()
	var b bytes.Buffer
	entries := [][2]string{{"inner/one.txt", "one\n"}, {"inner/two.txt", "two\n"}}
	switch {
	case strings.HasSuffix(name, ".zip"):
		z := zip.NewWriter(&b)
		for _, e := range entries {
			w, err := z.Create(e[0])
			if err != nil {
				t.Fatal(err)
			}
			io.WriteString(w, e[1])
		}
		if err := z.Close(); err != nil {
			t.Fatal(err)
		}
	case strings.HasSuffix(name, ".tar") || strings.HasSuffix(name, ".tar.gz"):
		var w io.Writer = &b
		var gz *gzip.Writer
		if strings.HasSuffix(name, ".gz") {
			gz = gzip.NewWriter(&b)
			w = gz
		}
		tw := tar.NewWriter(w)
		for _, e := range entries {
			if err := tw.WriteHeader(&tar.Header{Name: e[0], Mode: 0o644, Size: int64(len(e[1])), ModTime: time.Now()}); err != nil {
				t.Fatal(err)
			}
			io.WriteString(tw, e[1])
		}
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
		if gz != nil {
			if err := gz.Close(); err != nil {
				t.Fatal(err)
			}
		}
	default: // .gz
		gz := gzip.NewWriter(&b)
		io.WriteString(gz, "compressed text\n")
		if err := gz.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(name, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// nl2bashTimeout is how long one NL2Bash command may run before it counts
// as not observed (sleep 500, watch, top and tail -f never end).
const nl2bashTimeout = 3 * time.Second

// TestNL2BashLabels runs a sample of the NL2Bash corpus (every 12th distinct
// command; every 300th with -short) in the sandbox, on a fixture home
// (nl2bashFixture), and measures the labels a person reads against what
// each run did, as TestInterCodePrediction does for InterCode-ALFA. NL2Bash
// has no file system of its own, so only what shows on this fixture can
// be judged: a command that needs the network, does not finish within
// nl2bashTimeout, or acts on paths the fixture lacks tells little, and the
// cannot-undo label is not judged at all (no run shows it, and the corpus
// is too large to judge by hand). Each command runs within limits
// (nl2bashLimits), so that dd of=... cannot fill the disk nor a loop of
// forks the machine.
func TestNL2BashLabels(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(datasets.Must(t, datasets.NL2Bash), "all.cm"))
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	seen := map[string]bool{}
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if !seen[l] {
			seen[l] = true
			cmds = append(cmds, l)
		}
	}
	step := 12
	if testing.Short() {
		step = 300
	}
	work := t.TempDir()
	home, dir := nl2bashFixture(t, work)
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "USER=" + userName(), "LANG=C.UTF-8", "TERM=dumb"}
	sb, err := New(context.Background(), StateDir(filepath.Join(work, "state")), Dir(dir), Env(env), Stdio(null, io.Discard, io.Discard))
	if err != nil {
		t.Fatalf("new sandbox: %v", err)
	}
	labels := newLabelEval()
	var ran, parseErrors, timeouts int
	var failed []string // runs the sandbox could not make
	for i := 0; i < len(cmds); i += step {
		cmd := cmds[i]
		id := fmt.Sprintf("line %d", i+1)
		rep, err := effects.Analyze(cmd, effects.Dir(dir), effects.Home(home), effects.Files(os.DirFS("/")))
		if err != nil {
			parseErrors++
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), nl2bashTimeout)
		p, err := sb.Run(ctx, nl2bashLimits+cmd)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			timeouts++
			continue
		}
		if err != nil {
			failed = append(failed, fmt.Sprintf("%s %q: %v", id, cmd, err))
			continue
		}
		ran++
		labels.add(id, cmd, rep, observeLabels(sb, p, rep, dir))
		if err := sb.Abort(p.ID); err != nil {
			t.Fatalf("%s: abort: %v", id, err)
		}
	}
	t.Logf("NL2Bash: %d of %d distinct commands sampled (every %d): %d ran, %d did not parse, %d did not finish within %v",
		(len(cmds)+step-1)/step, len(cmds), step, ran, parseErrors, timeouts, nl2bashTimeout)
	labels.log(t, "NL2Bash")
	for _, f := range failed {
		t.Errorf("run: %s", f)
	}
	// Every run that deleted something must have been labelled so, on
	// any sample. Without -short, floors below today's figures (deletes
	// 0.67 precision, writes outside 0.76 and 0.94 recall) catch a
	// regression; NL2Bash's snippets use variables they never set and
	// paths the fixture lacks, so they are not targets.
	if r := labels[effects.Deletes].Recall(); r < 0.95 {
		t.Errorf("label deletes: recall %.3f, want at least 0.95", r)
	}
	if !testing.Short() {
		floors := []struct {
			l         effects.Risk
			prec, rec float64
		}{{effects.Deletes, 0.55, 0.95}, {effects.WritesOutside, 0.65, 0.85}}
		for _, f := range floors {
			if p := labels[f.l].Precision(); p < f.prec {
				t.Errorf("label %s: precision %.3f, below its floor %.2f", f.l, p, f.prec)
			}
			if r := labels[f.l].Recall(); r < f.rec {
				t.Errorf("label %s: recall %.3f, below its floor %.2f", f.l, r, f.rec)
			}
		}
	}
}

// nl2bashLimits bound what one NL2Bash command may take: files of at most
// 20 MB, a thousand processes, 20 s of CPU and 4 GB of memory (dd, yes,
// fork bombs and the like).
const nl2bashLimits = "ulimit -f 20000 -u 1000 -t 20 -v 4000000\n"
