package effects

import (
	"encoding/json"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"
)

// FuzzAnalyze checks that no script makes Analyze, Compare or the
// rendering of their results panic or hang, and that every report holds
// together: its risk is its highest finding's, its reasons are safe to
// print, it survives JSON, and each path it predicts as written, observed
// as created, is not a surprise.
func FuzzAnalyze(f *testing.F) {
	for _, tt := range analyzeTests {
		f.Add(tt.script)
	}
	for _, s := range []string{
		"", "\x00", "$(", "${x", "a=(1 2); echo ${a[@]}", "cat <<<$(rm x)", "f() { f; }; f",
		"sh -c \"sh -c \\\"sh -c 'rm x'\\\"\"", "echo {1..100000}", "rm {a,b}{c,d}{e,f}{g,h}{i,j}{k,l}",
		"find . -exec find {} -exec rm {} + \\;", "xargs -I % sh -c 'mv % %.bak'", "tar -cvf", "sudo -- -- --",
		"cd /; cd -; pushd a; popd; popd; rm x", "git -C", "curl -o", "eval", "env -S 'rm -r x'",
		"echo \x1b[2J\u202e > \"\xff\"", "[[ -f $(touch y) ]] && (( $(rm z) ))", "let x=$(rm q)",
		`for f in *.log; do mv "$f" "${f%.log}.txt"; done`, `x=a/b.c; mv "$x" "${x##*/}" "${x/b/[}" "${x//?/\\}"`,
		`xargs -I{} sh -c 'rm -f {}.bak'`, `parallel 'mv {} {.}.x' ::: a.b`, "curl -fsSL u | sudo bash",
		"find d -type d -delete; rmdir empty; touch t; rm t; cp -r a b && rm -r a", "echo a b | xargs rm",
		"find . | sed 's/^/x/' | xargs mv -t d", "while read f; do rm \"$f\"; done < list",
	} {
		f.Add(s)
	}
	// What exists, for the analysis with Files: a file, a directory with
	// files in it, an empty directory, a file in the home.
	fsys := fstest.MapFS{
		"h/p/a.txt": {Data: []byte("a")}, "h/p/d/x.log": {Data: []byte("x")}, "h/p/d/y.log": {},
		"h/p/empty": {Mode: fs.ModeDir | 0o755}, "h/notes.md": {Data: []byte("n")},
	}
	f.Fuzz(func(t *testing.T, script string) {
		if _, err := Analyze(script, Dir("/h/p"), Home("/h"), Files(fsys)); err != nil {
			var pe *ParseError
			if !asParseError(err, &pe) {
				t.Fatalf("with Files: error %v is not a *ParseError", err)
			}
		}
		r, err := Analyze(script, Dir("/h/p"), Home("/h"))
		if err != nil {
			var pe *ParseError
			if !asParseError(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			assertSafe(t, pe.Error(), false)
			return
		}
		top := ReadOnly
		for _, fd := range r.Findings {
			top = max(top, fd.Risk)
			assertSafe(t, fd.Reason, false)
		}
		if r.Risk != top {
			t.Fatalf("risk %v, highest finding %v", r.Risk, top)
		}
		if _, err := json.Marshal(r); err != nil {
			t.Fatalf("marshal: %v", err)
		}
		cs := &ChangeSet{}
		for _, p := range r.Paths {
			if (p.Access == Write || p.Access == Create) && !p.Glob && !p.Dynamic && strings.HasPrefix(p.Path, "/") {
				cs.Changes = append(cs.Changes, Change{Path: p.Path, Kind: Created, After: &Object{Type: TypeFile}})
			}
		}
		s := Compare(r, cs)
		if len(s.Unpredicted) > 0 {
			t.Fatalf("predicted writes observed as created are surprises: %v", s.Unpredicted)
		}
		var b strings.Builder
		if err := WriteSummary(&b, cs, SummaryOptions{Width: 60}); err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(b.String(), "\n") {
			assertSafe(t, line, false)
		}
	})
}

// asParseError is errors.As for *ParseError, kept apart so the fuzz body
// reads plainly.
func asParseError(err error, pe **ParseError) bool {
	p, ok := err.(*ParseError)
	*pe = p
	return ok
}
