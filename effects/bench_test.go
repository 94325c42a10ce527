package effects

import (
	"io"
	"strings"
	"testing"
)

// script50 is a 50-line script of the kind nash plans: loops, pipelines,
// substitutions, wrappers and file commands.
var script50 = strings.Repeat(`set -eu
dest="$HOME/invoices/2025"
mkdir -p "$dest"
for f in ~/Downloads/*.pdf; do
  if pdftotext "$f" - | grep -qi 'invoice'; then
    mv -n "$f" "$dest/"
  fi
done
find . -name '*.tmp' -mtime +7 -print0 | xargs -0 rm -f
tar czf "backup-$(date +%F).tgz" --exclude=node_modules src docs
`, 5)

func BenchmarkAnalyze50Lines(b *testing.B) {
	if n := strings.Count(script50, "\n"); n != 50 {
		b.Fatalf("script has %d lines, want 50", n)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Analyze(script50, Dir("/home/ann/work"), Home("/home/ann")); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSummary100k(b *testing.B) {
	cs := manyChanges(100000)
	b.ReportAllocs()
	for b.Loop() {
		if err := WriteSummary(io.Discard, cs, SummaryOptions{Width: 100}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSummary100kCollapsed(b *testing.B) {
	cs := &ChangeSet{Changes: bigTree("/home/ann/build", 100000, 4096)}
	b.ReportAllocs()
	for b.Loop() {
		if err := WriteSummary(io.Discard, cs, SummaryOptions{Width: 100}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCompare100k(b *testing.B) {
	r, err := Analyze(script50, Dir("/home/u/proj"), Home("/home/u"))
	if err != nil {
		b.Fatal(err)
	}
	cs := manyChanges(100000)
	b.ReportAllocs()
	for b.Loop() {
		Compare(r, cs)
	}
}

func BenchmarkEscape(b *testing.B) {
	names := []string{"/home/ann/invoices/2025/jan.pdf", "evil\x1b[2K\u202e.txt", strings.Repeat("é", 200)}
	b.ReportAllocs()
	for b.Loop() {
		for _, n := range names {
			_ = Escape(n)
		}
	}
}
