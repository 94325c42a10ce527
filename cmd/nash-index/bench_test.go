package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The end-to-end benchmarks run nash and nash-index as a person does:
// built binaries, a new process per command, over the Go toolchain's
// sources (GOROOT/src: about 11,000 files, 157 MB). They build an index of
// that tree first, which takes a minute or two; NASH_BENCH_INDEX names a
// directory to keep it in between runs.

// benchWords are what a person might look for in the Go sources, from rare
// to common.
var benchWords = []string{
	"goroutine", "deadline", "checksum", "mutex", "utf8", "marshal", "socket", "preemption",
	"inline", "ticker", "escape", "symlink", "loopback", "heap", "certificate", "error",
}

// benchTools builds nash and nash-index (as make build does) into a
// temporary directory.
func benchTools(b *testing.B) (nash, server string) {
	b.Helper()
	dir := b.TempDir()
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	for _, p := range []string{"nash", "nash-index"} {
		cmd := exec.Command(goBin, "build", "-o", filepath.Join(dir, p), "github.com/nash-shell/nash/cmd/"+p)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("build %s: %v\n%s", p, err, out)
		}
	}
	return filepath.Join(dir, "nash"), filepath.Join(dir, "nash-index")
}

// benchEnv is the environment of the benchmarks' nash: its own index and
// state, no embedder.
func benchEnv(b *testing.B, server, indexDir string) []string {
	state := filepath.Join(b.TempDir(), "state")
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "NASH_") || strings.HasPrefix(kv, "XDG_")
	})
	return append(env, "NASH_INDEX_BIN="+server, "NASH_INDEX_DIR="+indexDir, "NASH_STATE_DIR="+state)
}

func runTool(b *testing.B, env []string, name string, args ...string) string {
	b.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s %v: %v\n%s", name, args, err, errb.String())
	}
	return out.String()
}

// goSourcesIndex returns an index of GOROOT/src, built by nash index add
// unless NASH_BENCH_INDEX already holds one, and reports how fast it was
// built and the server's peak memory.
func goSourcesIndex(b *testing.B, nash, server string) (env []string, src string) {
	b.Helper()
	src = filepath.Join(runtime.GOROOT(), "src")
	dir := os.Getenv("NASH_BENCH_INDEX")
	if dir == "" {
		dir = filepath.Join(b.TempDir(), "index")
	}
	env = benchEnv(b, server, dir)
	b.Cleanup(func() {
		cmd := exec.Command(nash, "index", "stop")
		cmd.Env = env
		cmd.Run()
	})
	if _, err := os.Stat(filepath.Join(dir, "catalog.db")); err != nil {
		start := time.Now()
		out := runTool(b, env, nash, "index", "add", src)
		elapsed := time.Since(start)
		status := runTool(b, env, nash, "index", "status")
		b.Logf("%s%s", out, status)
		mb := float64(treeBytes(b, src)) / 1e6
		b.ReportMetric(mb/elapsed.Seconds(), "index-MB/s")
		b.ReportMetric(elapsed.Seconds(), "index-s")
		if m := regexp.MustCompile(`peak memory (\d+) MB`).FindStringSubmatch(status); m != nil {
			n, _ := strconv.Atoi(m[1])
			b.ReportMetric(float64(n), "index-peak-RSS-MB")
		}
	}
	return env, src
}

func treeBytes(b *testing.B, dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

// BenchmarkFindVsRipgrep runs nash find WORD (process start, the client,
// the server's search; paths only, as in a pipe) and rg -l -i -w WORD over
// the same tree, one after the other for each word, and reports the
// medians and the ratio of the medians.
func BenchmarkFindVsRipgrep(b *testing.B) {
	rg, err := exec.LookPath("rg")
	if err != nil {
		b.Fatal("ripgrep (rg) is needed for this benchmark: apt-get install ripgrep")
	}
	nash, server := benchTools(b)
	env, src := goSourcesIndex(b, nash, server)
	// Start the server and warm the page cache for both.
	runTool(b, env, nash, "find", "goroutine")
	exec.Command(rg, "-l", "-i", "-w", "goroutine", src).Run()
	timeRun := func(name string, args ...string) time.Duration {
		cmd := exec.Command(name, args...)
		cmd.Env = env
		start := time.Now()
		if err := cmd.Run(); err != nil {
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 { // 1: nothing found
				b.Fatalf("%s %v: %v", name, args, err)
			}
		}
		return time.Since(start)
	}
	var nashT, rgT []time.Duration
	perWord := map[string][2][]time.Duration{}
	i := 0
	for b.Loop() {
		w := benchWords[i%len(benchWords)]
		i++
		n := timeRun(nash, "find", w)
		r := timeRun(rg, "-l", "-i", "-w", w, src)
		nashT, rgT = append(nashT, n), append(rgT, r)
		pw := perWord[w]
		pw[0], pw[1] = append(pw[0], n), append(pw[1], r)
		perWord[w] = pw
	}
	for _, w := range benchWords {
		if pw, ok := perWord[w]; ok {
			fmt.Fprintf(os.Stderr, "%-12s nash find %6.2f ms   rg %7.2f ms\n", w, ms(median(pw[0])), ms(median(pw[1])))
		}
	}
	b.ReportMetric(ms(median(nashT)), "nash-find-ms")
	b.ReportMetric(ms(median(rgT)), "rg-ms")
	b.ReportMetric(float64(median(rgT))/float64(median(nashT)), "x-faster")
}

func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// BenchmarkFindChange measures how soon a file written under an indexed
// root is found: the watcher's delay and the re-indexing.
func BenchmarkFindChange(b *testing.B) {
	nash, server := benchTools(b)
	root := filepath.Join(b.TempDir(), "files")
	os.MkdirAll(root, 0o755)
	os.WriteFile(filepath.Join(root, "a.txt"), []byte("a first file\n"), 0o644)
	env := benchEnv(b, server, filepath.Join(b.TempDir(), "index"))
	b.Cleanup(func() {
		cmd := exec.Command(nash, "index", "stop")
		cmd.Env = env
		cmd.Run()
	})
	runTool(b, env, nash, "index", "add", root)
	ctx := context.Background()
	var lat []time.Duration
	i := 0
	for b.Loop() {
		word := fmt.Sprintf("zyx%dqw", i)
		i++
		start := time.Now()
		os.WriteFile(filepath.Join(root, word+".txt"), []byte("a note about "+word+"\n"), 0o644)
		for {
			cmd := exec.CommandContext(ctx, nash, "find", word)
			cmd.Env = env
			if out, _ := cmd.Output(); len(out) > 0 {
				break
			}
			if time.Since(start) > 10*time.Second {
				b.Fatalf("%s not found after 10 s", word)
			}
		}
		lat = append(lat, time.Since(start))
	}
	b.ReportMetric(ms(median(lat)), "searchable-after-ms")
}

// millionVocab returns n pronounceable made-up words; word i is used with
// a frequency near 1/(i+1) (Zipf) by millionTree.
func millionVocab(n int) []string {
	cons := []string{"b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "ch", "sh", "tr", "pl"}
	vows := []string{"a", "e", "i", "o", "u", "ai", "ou"}
	words := make([]string, 0, n)
	seen := map[string]bool{}
	for i := 0; len(words) < n; i++ {
		x := uint64(i)*0x9E3779B97F4A7C15 + 12345
		var sb strings.Builder
		for s := 0; s < 2+int(x%3); s++ {
			x = x*6364136223846793005 + 1442695040888963407
			sb.WriteString(cons[(x>>33)%uint64(len(cons))])
			sb.WriteString(vows[(x>>45)%uint64(len(vows))])
		}
		if w := sb.String(); !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	return words
}

// millionTree writes files files of 40 to 300 words under dir, 1,000 to a
// directory, and returns the bytes written. A file done is not written
// again, so an interrupted generation resumes.
func millionTree(b *testing.B, dir string, files int, vocab []string) int64 {
	b.Helper()
	// Cumulative Zipf weights for sampling.
	cum := make([]float64, len(vocab))
	var total float64
	for i := range vocab {
		total += 1 / float64(i+1)
		cum[i] = total
	}
	type part struct{ lo, hi int }
	parts := make(chan part)
	sizes := make(chan int64)
	for range 2 {
		go func() {
			var n int64
			for p := range parts {
				x := uint64(p.lo)*2862933555777941757 + 3037000493
				next := func() float64 {
					x = x*6364136223846793005 + 1442695040888963407
					return float64(x>>11) / (1 << 53)
				}
				for i := p.lo; i < p.hi; i++ {
					d := filepath.Join(dir, fmt.Sprintf("d%02d", i/100000), fmt.Sprintf("e%03d", i/1000%100))
					if i%1000 == 0 || i == p.lo {
						os.MkdirAll(d, 0o755)
					}
					path := filepath.Join(d, fmt.Sprintf("f%07d.txt", i))
					var sb strings.Builder
					for w := 0; w < 40+int(next()*260); w++ {
						r := next() * total
						j, _ := slices.BinarySearch(cum, r)
						sb.WriteString(vocab[min(j, len(vocab)-1)])
						if w%12 == 11 {
							sb.WriteString(".\n")
						} else {
							sb.WriteByte(' ')
						}
					}
					n += int64(sb.Len())
					if _, err := os.Stat(path); err == nil {
						continue
					}
					if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
						panic(err)
					}
				}
			}
			sizes <- n
		}()
	}
	for lo := 0; lo < files; lo += 10000 {
		parts <- part{lo, min(lo+10000, files)}
	}
	close(parts)
	return <-sizes + <-sizes
}

// BenchmarkMillionFiles indexes a generated tree of 1,000,000 text files
// (about 1 GB; NASH_BENCH_1M_FILES sets another count) through nash and
// its server, and reports the time, the server's peak memory, nash find's
// latency for words from common to rare, and the time to re-scan the
// unchanged tree. It takes tens of minutes, so it runs only with
// NASH_BENCH_1M=1; NASH_BENCH_1M_DIR keeps the tree between runs.
func BenchmarkMillionFiles(b *testing.B) {
	if os.Getenv("NASH_BENCH_1M") != "1" {
		b.Skip("opt-in: set NASH_BENCH_1M=1 (1,000,000 files, tens of minutes)")
	}
	files := 1_000_000
	if n, err := strconv.Atoi(os.Getenv("NASH_BENCH_1M_FILES")); err == nil && n > 0 {
		files = n
	}
	tree := os.Getenv("NASH_BENCH_1M_DIR")
	if tree == "" {
		tree = filepath.Join(b.TempDir(), "tree")
	}
	vocab := millionVocab(50000)
	start := time.Now()
	size := millionTree(b, tree, files, vocab)
	b.Logf("tree: %d files, %.0f MB, made in %v", files, float64(size)/1e6, time.Since(start).Round(time.Second))
	nash, server := benchTools(b)
	env := benchEnv(b, server, filepath.Join(b.TempDir(), "index"))
	b.Cleanup(func() {
		cmd := exec.Command(nash, "index", "stop")
		cmd.Env = env
		cmd.Run()
	})
	for b.Loop() {
		start = time.Now()
		out := runTool(b, env, nash, "index", "add", tree)
		elapsed := time.Since(start)
		status := runTool(b, env, nash, "index", "status")
		b.Logf("%s%s", out, status)
		b.ReportMetric(elapsed.Seconds(), "index-s")
		b.ReportMetric(float64(files)/elapsed.Seconds(), "files/s")
		if m := regexp.MustCompile(`peak memory (\d+) MB`).FindStringSubmatch(status); m != nil {
			n, _ := strconv.Atoi(m[1])
			b.ReportMetric(float64(n), "index-peak-RSS-MB")
		}
		// Words by rank: the 10th most common is in most files, the
		// 30,000th in a few hundred.
		var all []time.Duration
		for _, rank := range []int{10, 100, 1000, 5000, 30000} {
			var lat []time.Duration
			for range 7 {
				cmd := exec.Command(nash, "find", vocab[rank])
				cmd.Env = env
				t0 := time.Now()
				if err := cmd.Run(); err != nil {
					b.Fatalf("find %s: %v", vocab[rank], err)
				}
				lat = append(lat, time.Since(t0))
			}
			fmt.Fprintf(os.Stderr, "nash find of the word ranked %5d (%s): median %.2f ms\n", rank, vocab[rank], ms(median(lat)))
			all = append(all, lat...)
		}
		b.ReportMetric(ms(median(all)), "nash-find-ms")
		start = time.Now()
		out = runTool(b, env, nash, "index", "add", tree)
		b.Logf("re-scan: %s", out)
		b.ReportMetric(time.Since(start).Seconds(), "rescan-s")
	}
}
