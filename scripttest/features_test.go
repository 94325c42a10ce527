package scripttest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/nash-shell/nash/effects"
)

// TestCollect reads what a script's text says is worth varying.
func TestCollect(t *testing.T) {
	const dir = "/h/p"
	type want struct {
		globs, listings, vars, cds, inputs, outputs []string
		opaque                                      bool
	}
	for _, c := range []struct {
		script string
		want   want
	}{
		{`for f in *.jpeg; do mv "$f" "${f%.jpeg}.jpg"; done`, want{globs: []string{"*.jpeg"}}},
		{`for f in $(ls); do rm $f; done`, want{listings: []string{"."}}},
		{`for f in $(ls *.log); do gzip $f; done`, want{globs: []string{"*.log"}}},
		{`ls -l | awk '{print $9}' | xargs rm`, want{listings: []string{"."}}},
		{`ls data | while read f; do echo "$f"; done`, want{listings: []string{"data"}, inputs: []string{"data"}}},
		{`find . -name '*.tmp' | xargs rm`, want{globs: []string{"*.tmp"}, inputs: []string{"."}}},
		{`find . -name '*.tmp' -print0 | xargs -0 rm`, want{globs: []string{"*.tmp"}, inputs: []string{"."}}},
		{`find src -type f | xargs -0 wc -l`, want{listings: []string{"src"}, inputs: []string{"src"}}},
		{`rm -rf "$DIR/"*`, want{vars: []string{"DIR dir"}}},
		{`rm -rf "${DIR:?}/"*`, want{vars: []string{"DIR dir"}}},
		{`rm -rf "${DIR?}/"*`, want{vars: []string{"DIR dir unset-matters"}}},
		{`echo "${NAME-anon}"`, want{vars: []string{"NAME unset-matters"}}},
		{`set -u; cp a "$DEST"`, want{vars: []string{"DEST dir unset-matters"}, inputs: []string{"a"}}},
		{`X=1; echo $X $Y`, want{vars: []string{"Y"}}},
		{`read -r name; echo "$name $HOME $1"`, want{}},
		{`for i in 1 2; do echo $i; done; (( n++ )); echo $n`, want{}},
		{`cd build; rm *`, want{globs: []string{"build/*"}, cds: []string{"build"}}},
		{`cd "$D" && rm *.o`, want{vars: []string{"D"}}},
		{`rm -rf $BUILD`, want{vars: []string{"BUILD dir"}}},
		{`tar -C "$SRC" -cf out.tar .`, want{vars: []string{"SRC dir"}, outputs: []string{"out.tar"}}},
		{`grep -r "$PATTERN" .`, want{vars: []string{"PATTERN"}, inputs: []string{"."}}},
		{`sort names.txt > sorted.txt && rm names.txt`, want{inputs: []string{"names.txt"}, outputs: []string{"sorted.txt"}}},
		{`sed -i 's/a/b/' *.conf`, want{globs: []string{"*.conf"}}},
		{`for f in *.csv; do wc -l "$f" > "$f.count"; done`, want{globs: []string{"*.csv"}}},
		{`$EDITOR notes.txt`, want{opaque: true}},
		{`./build.sh`, want{opaque: true}},
	} {
		rep, err := effects.Analyze(c.script, effects.Dir(dir), effects.Home("/h"))
		if err != nil {
			t.Fatalf("%s: %v", c.script, err)
		}
		f := collect(c.script, dir, rep)
		rel := func(ps []string) []string {
			var out []string
			for _, p := range ps {
				if p == dir {
					out = append(out, ".")
				} else {
					out = append(out, strings.TrimPrefix(p, dir+"/"))
				}
			}
			return out
		}
		var vars []string
		for _, v := range f.vars {
			s := v.name
			if v.dir {
				s += " dir"
			}
			if v.unsetMatters {
				s += " unset-matters"
			}
			vars = append(vars, s)
		}
		got := want{globs: rel(f.globs), listings: rel(f.listings), vars: vars, cds: rel(f.cds), inputs: rel(f.inputs), outputs: rel(f.outputs), opaque: f.opaque}
		if d := cmp.Diff(c.want, got, cmp.AllowUnexported(want{}), cmpopts.EquateEmpty()); d != "" {
			t.Errorf("%s (-want +got):\n%s", c.script, d)
		}
	}
}

// FuzzCollect: reading a script's features never panics.
func FuzzCollect(f *testing.F) {
	for _, s := range []string{`for f in $(ls *.log); do gzip $f; done`, `rm -rf "${DIR:?}/"*`, `cd build; rm *`,
		`find . -name '*.tmp' | xargs rm`, `ls -l | awk '{print $9}'`, `for f in [!a]*.c; do :; done`, `echo ${a[@]} ${#b} ${c/x/y}`} {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, script string) {
		start := time.Now()
		rep, err := effects.Analyze(script, effects.Dir(dir))
		if err != nil {
			return
		}
		analysed := time.Since(start)
		tr := New(Dir(dir))
		feats := collect(script, tr.dir, rep)
		_ = fmt.Sprint(len(tr.derive(feats)))
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("%s to derive variants (%s to analyse) of %q", d, analysed, script)
		}
	})
}
