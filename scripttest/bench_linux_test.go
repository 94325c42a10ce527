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
// many variants as it derives (the variants metric), run 2 at a time and 4
// at a time. The median of the iterations is med-ns/op.
func BenchmarkTest(b *testing.B) {
	for _, s := range benchScripts {
		for _, par := range []int{2, 4} {
			b.Run(s.name+"/parallel="+strconv.Itoa(par), func(b *testing.B) {
				work := benchTree(b, s.files)
				env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + filepath.Dir(work), "LANG=C.UTF-8"}
				for _, e := range s.env {
					env = append(env, replaceWork(e, work))
				}
				opts := []sandbox.Option{sandbox.StateDir(b.TempDir())}
				if exe := os.Getenv("NASH_BENCH_INIT"); exe != "" {
					opts = append(opts, sandbox.Executable(exe))
				}
				tr := New(Dir(work), Env(env), Parallel(par), Sandbox(opts...))
				var times []time.Duration
				n := 0
				for b.Loop() {
					start := time.Now()
					rep, err := tr.Test(context.Background(), s.script)
					if err != nil {
						b.Fatal(err)
					}
					times = append(times, time.Since(start))
					n = len(rep.Variants)
				}
				slices.Sort(times)
				b.ReportMetric(float64(times[len(times)/2].Nanoseconds()), "med-ns/op")
				b.ReportMetric(float64(n), "variants")
			})
		}
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
