package scripttest

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nash-shell/nash/sandbox"
)

// benchScripts are a typical one-line and ten-line script, with today's
// files for them.
var benchScripts = []struct {
	name   string
	files  []string
	env    []string
	script string
}{
	{
		name:   "one-line",
		files:  []string{"a.jpeg", "b.jpeg", "c.jpeg", "notes.txt"},
		script: `for f in *.jpeg; do mv -- "$f" "${f%.jpeg}.jpg"; done`,
	},
	{
		name:  "ten-line",
		files: []string{"a.jpeg", "b.jpeg", "notes/", "notes/x.md", "notes/y.md", "names.txt", "archive/", "archive/old.log"},
		env:   []string{"OUT=$WORK/out"},
		script: `set -u
mkdir -p "$OUT"
for f in *.jpeg; do
  mv -- "$f" "${f%.jpeg}.jpg"
done
for f in notes/*.md; do
  cp -- "$f" "$OUT/"
done
sort names.txt > sorted.txt
wc -l < sorted.txt > count.txt
cd archive && tar -cf ../archive.tar .`,
	},
}

// BenchmarkTest times Test of a typical one-line and ten-line script, as
// many variants as it derives (the variants metric), with 2, 3 and 4
// variants run at a time: each iteration runs all three, one after
// another, so that the load of a shared machine weighs on each alike. The
// medians are med-ms-par2, -par3 and -par4.
func BenchmarkTest(b *testing.B) {
	pars := []int{2, 3, 4}
	for _, s := range benchScripts {
		b.Run(s.name, func(b *testing.B) {
			work := benchTree(b, s.files)
			env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Dir(work), "LANG=C.UTF-8"}
			for _, e := range s.env {
				env = append(env, replaceWork(e, work))
			}
			opts := []sandbox.Option{sandbox.StateDir(b.TempDir())}
			if exe := os.Getenv("NASH_BENCH_INIT"); exe != "" {
				opts = append(opts, sandbox.Executable(exe))
			}
			times := make([][]time.Duration, len(pars))
			n := 0
			for b.Loop() {
				for i, par := range pars {
					tr := New(Dir(work), Env(env), Parallel(par), Sandbox(opts...))
					start := time.Now()
					rep, err := tr.Test(context.Background(), s.script)
					if err != nil {
						b.Fatal(err)
					}
					times[i] = append(times[i], time.Since(start))
					n = len(rep.Variants)
				}
			}
			for i, par := range pars {
				slices.Sort(times[i])
				b.ReportMetric(float64(times[i][len(times[i])/2].Microseconds())/1000, "med-ms-par"+strconv.Itoa(par))
			}
			b.ReportMetric(float64(n), "variants")
		})
	}
}

func benchTree(b *testing.B, files []string) string {
	b.Helper()
	work := filepath.Join(b.TempDir(), "work")
	for _, f := range files {
		p := filepath.Join(work, f)
		if f[len(f)-1] == '/' {
			if err := os.MkdirAll(p, 0o755); err != nil {
				b.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("content of "+f+"\n"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return work
}

func replaceWork(s, work string) string { return strings.ReplaceAll(s, "$WORK", work) }
