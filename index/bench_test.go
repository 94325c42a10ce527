package index

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkIndexTLDR indexes the 6,643 tldr pages into a fresh on-disk
// index, and reports the index size against the extracted text.
func BenchmarkIndexTLDR(b *testing.B) {
	ctx := context.Background()
	corpus := filepath.Join(b.TempDir(), "tldr")
	buildTLDRCorpus(b, corpus)
	text := treeBytes(b, corpus)
	var size int64
	for b.Loop() {
		b.StopTimer()
		dir, err := os.MkdirTemp(b.TempDir(), "index")
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		ix, err := Open(ctx, dir)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ix.Add(ctx, corpus); err != nil {
			b.Fatal(err)
		}
		if err := ix.Close(); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		size = treeBytes(b, dir)
		os.RemoveAll(dir)
		b.StartTimer()
	}
	b.ReportMetric(float64(size)/float64(text), "index/text")
	b.ReportMetric(float64(size)/1e6, "index-MB")
}

// treeBytes sums the sizes of the regular files under dir.
func treeBytes(tb testing.TB, dir string) int64 {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			fi, err := d.Info()
			if err != nil {
				return err
			}
			n += fi.Size()
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// indexedTLDR returns an index of the tldr corpus and its known items.
func indexedTLDR(b *testing.B) (*Index, string, []knownItem) {
	b.Helper()
	corpus := filepath.Join(b.TempDir(), "tldr")
	items := buildTLDRCorpus(b, corpus)
	ix := openTest(b)
	if _, err := ix.Add(context.Background(), corpus); err != nil {
		b.Fatal(err)
	}
	return ix, corpus, items
}

// BenchmarkQueryTLDR runs the known-item queries (top 10, with snippets)
// and reports the latency percentiles over all of them.
func BenchmarkQueryTLDR(b *testing.B) {
	ctx := context.Background()
	ix, _, items := indexedTLDR(b)
	var lat []time.Duration
	i := 0
	for b.Loop() {
		q := PlainQuery(items[i%len(items)].query)
		i++
		start := time.Now()
		if _, err := ix.Search(ctx, q, SearchOptions{Mode: Keyword, N: 10}); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
}

// rgWords are keyword queries for the ripgrep comparison.
var rgWords = []string{"archive", "compress", "partition", "certificate", "bluetooth"}

// BenchmarkKeywordVsRipgrep runs the same one-word queries through the
// index (every matching file, not only a top 10) and through rg -l -i over
// the same files, side by side.
func BenchmarkKeywordVsRipgrep(b *testing.B) {
	ctx := context.Background()
	rg, err := exec.LookPath("rg")
	if err != nil {
		b.Fatal("ripgrep (rg) is needed for this benchmark: apt-get install ripgrep")
	}
	ix, corpus, _ := indexedTLDR(b)
	// Every matching path, as rg -l prints, and the top 10 with snippets,
	// as nash find prints on a terminal.
	b.Run("index-all-paths", func(b *testing.B) {
		i := 0
		for b.Loop() {
			res, err := ix.Search(ctx, rgWords[i%len(rgWords)], SearchOptions{Mode: Keyword, N: 10000, NoSnippets: true})
			if err != nil || len(res.Hits) == 0 {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("index-top10", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if _, err := ix.Search(ctx, rgWords[i%len(rgWords)], SearchOptions{Mode: Keyword, N: 10}); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("rg", func(b *testing.B) {
		i := 0
		for b.Loop() {
			out, err := exec.Command(rg, "-l", "-i", rgWords[i%len(rgWords)], corpus).Output()
			if err != nil || len(out) == 0 {
				b.Fatalf("rg: %v", err)
			}
			i++
		}
	})
}

// BenchmarkReindexOneFile changes one page of the indexed tldr corpus and
// refreshes it, as the watcher does.
func BenchmarkReindexOneFile(b *testing.B) {
	ctx := context.Background()
	ix, _, items := indexedTLDR(b)
	path := items[len(items)/2].path
	i := 0
	for b.Loop() {
		b.StopTimer()
		if err := os.WriteFile(path, []byte(fmt.Sprintf("# page\n\nversion %d of the page\n", i)), 0o644); err != nil {
			b.Fatal(err)
		}
		i++
		b.StartTimer()
		st, err := ix.Refresh(ctx, path)
		if err != nil || st.Indexed != 1 {
			b.Fatalf("refresh: %+v, %v", st, err)
		}
	}
}

// BenchmarkSynthetic100k indexes a generated tree of 100,000 small text
// files and reports the peak resident memory of the process. It takes a
// few minutes, so it runs only with NASH_BENCH_100K=1.
func BenchmarkSynthetic100k(b *testing.B) {
	if os.Getenv("NASH_BENCH_100K") != "1" {
		b.Skip("opt-in: set NASH_BENCH_100K=1 (about 100,000 files, a few minutes)")
	}
	ctx := context.Background()
	dir := filepath.Join(b.TempDir(), "tree")
	vocab := strings.Fields(strings.Repeat("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu ", 1))
	for i := range 2000 {
		vocab = append(vocab, fmt.Sprintf("w%04d", i))
	}
	r := rand.New(rand.NewPCG(1, 2))
	var text int64
	for i := range 100000 {
		d := filepath.Join(dir, fmt.Sprintf("d%03d", i%500))
		if i < 500 {
			if err := os.MkdirAll(d, 0o755); err != nil {
				b.Fatal(err)
			}
		}
		var sb strings.Builder
		for range 20 + r.IntN(200) {
			sb.WriteString(vocab[r.IntN(len(vocab))])
			sb.WriteByte(' ')
		}
		text += int64(sb.Len())
		if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%06d.txt", i)), []byte(sb.String()), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	for b.Loop() {
		idx, err := os.MkdirTemp(b.TempDir(), "index")
		if err != nil {
			b.Fatal(err)
		}
		ix, err := Open(ctx, idx)
		if err != nil {
			b.Fatal(err)
		}
		st, err := ix.Add(ctx, dir)
		if err != nil || st.Indexed != 100000 {
			b.Fatalf("add: indexed %d, %v", st.Indexed, err)
		}
		ix.Close()
		b.ReportMetric(float64(treeBytes(b, idx))/float64(text), "index/text")
		os.RemoveAll(idx)
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MB")
}
