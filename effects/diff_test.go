package effects

import (
	"fmt"
	"math/rand"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDiff(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		opts     DiffOptions
		want     string
	}{
		{name: "equal", old: "a\n", new: "a\n", want: ""},
		{
			name: "one line changed",
			old:  "a\nb\nc\nd\ne\nf\ng\nh\n",
			new:  "a\nb\nc\nd\nE\nf\ng\nh\n",
			want: "--- a/p/f.txt\n+++ b/p/f.txt\n@@ -2,7 +2,7 @@\n b\n c\n d\n-e\n+E\n f\n g\n h\n",
		},
		{
			name: "from empty",
			old:  "",
			new:  "x\ny\n",
			want: "--- a/p/f.txt\n+++ b/p/f.txt\n@@ -0,0 +1,2 @@\n+x\n+y\n",
		},
		{
			name: "to empty",
			old:  "x\n",
			new:  "",
			want: "--- a/p/f.txt\n+++ b/p/f.txt\n@@ -1 +0,0 @@\n-x\n",
		},
		{
			name: "no newline at end",
			old:  "a\nb",
			new:  "a\nb\n",
			want: "--- a/p/f.txt\n+++ b/p/f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n",
		},
		{
			name: "two hunks",
			old:  "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n",
			new:  "one\n2\n3\n4\n5\n6\n7\n8\n9\nten\n",
			opts: DiffOptions{Context: 1},
			want: "--- a/p/f.txt\n+++ b/p/f.txt\n@@ -1,2 +1,2 @@\n-1\n+one\n 2\n@@ -9,2 +9,2 @@\n 9\n-10\n+ten\n",
		},
		{
			name: "hunks merged when close",
			old:  "1\n2\n3\n4\n",
			new:  "one\n2\n3\nfour\n",
			opts: DiffOptions{Context: 1},
			want: "--- a/p/f.txt\n+++ b/p/f.txt\n@@ -1,4 +1,4 @@\n-1\n+one\n 2\n 3\n-4\n+four\n",
		},
		{
			name: "hostile content escaped",
			old:  "ok\n",
			new:  "ok\n\x1b[1A\x1b[2Kok\r\n\u202eevil\n",
			want: "--- a/p/f.txt\n+++ b/p/f.txt\n@@ -1 +1,3 @@\n ok\n+\\x1b[1A\\x1b[2Kok\\r\n+\\u202eevil\n",
		},
		{
			name: "binary",
			old:  "a\x00b",
			new:  "a\x00c",
			want: "binary file /p/f.txt differs (3 B → 3 B)\n",
		},
		{
			name: "too large",
			old:  strings.Repeat("a\n", 100),
			new:  "b\n",
			opts: DiffOptions{MaxBytes: 100},
			want: "file /p/f.txt too large to diff (200 B → 2 B)\n",
		},
		{
			name: "cut",
			old:  "",
			new:  "1\n2\n3\n4\n5\n",
			opts: DiffOptions{MaxLines: 5},
			want: "--- a/p/f.txt\n+++ b/p/f.txt\n@@ -0,0 +1,5 @@\n+1\n+2\n... diff cut after 5 lines\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b strings.Builder
			if err := Diff(&b, "/p/f.txt", []byte(tt.old), []byte(tt.new), tt.opts); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, b.String()); diff != "" {
				t.Errorf("diff mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDiffApplies checks on random inputs that the edits turn old into new
// and are minimal in the number of changed lines when small.
func TestDiffApplies(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	randLines := func() []string {
		n := rng.Intn(30)
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("%d\n", rng.Intn(5))
		}
		return out
	}
	for iter := 0; iter < 2000; iter++ {
		a, b := randLines(), randLines()
		edits := diffLines(a, b)
		var gotA, gotB []string
		changed := 0
		for _, e := range edits {
			switch e.kind {
			case ' ':
				if a[e.a] != b[e.b] {
					t.Fatalf("kept lines differ: %q %q", a[e.a], b[e.b])
				}
				gotA, gotB = append(gotA, a[e.a]), append(gotB, b[e.b])
			case '-':
				gotA = append(gotA, a[e.a])
				changed++
			case '+':
				gotB = append(gotB, b[e.b])
				changed++
			}
		}
		if !cmp.Equal(gotA, a, cmp.Comparer(func(x, y []string) bool { return strings.Join(x, "") == strings.Join(y, "") })) ||
			strings.Join(gotB, "") != strings.Join(b, "") {
			t.Fatalf("edits do not rebuild the inputs:\na=%q\nb=%q\nedits=%v", a, b, edits)
		}
		if want := len(a) + len(b) - 2*lcs(a, b); changed != want {
			t.Fatalf("diff of %q and %q changes %d lines, minimum is %d", a, b, changed, want)
		}
	}
}

// lcs is the length of the longest common subsequence, by dynamic
// programming, to check Myers' result.
func lcs(a, b []string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}

func TestDiffHostileName(t *testing.T) {
	var b strings.Builder
	if err := Diff(&b, "/p/my \x1b[2Kfile", []byte("a\n"), []byte("b\n"), DiffOptions{}); err != nil {
		t.Fatal(err)
	}
	want := "--- a/$'p/my \\x1b[2Kfile'\n+++ b/$'p/my \\x1b[2Kfile'\n@@ -1 +1 @@\n-a\n+b\n"
	if diff := cmp.Diff(want, b.String()); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

func TestDiffLargeEditDistance(t *testing.T) {
	var a, b strings.Builder
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&a, "old %d\n", i)
		fmt.Fprintf(&b, "new %d\n", i)
	}
	var out strings.Builder
	if err := Diff(&out, "f", []byte(a.String()), []byte(b.String()), DiffOptions{MaxLines: -1}); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out.String(), "\n-old"); n != 3000 {
		t.Errorf("got %d deleted lines, want 3000", n)
	}
	if n := strings.Count(out.String(), "\n+new"); n != 3000 {
		t.Errorf("got %d inserted lines, want 3000", n)
	}
}

func ExampleDiff() {
	old := []byte("name = nash\nversion = 1\n")
	new := []byte("name = nash\nversion = 2\n")
	Diff(os.Stdout, "/etc/nash.conf", old, new, DiffOptions{})
	// Output:
	// --- a/etc/nash.conf
	// +++ b/etc/nash.conf
	// @@ -1,2 +1,2 @@
	//  name = nash
	// -version = 1
	// +version = 2
}

// FuzzDiff checks that no pair of contents makes Diff panic, and that its
// output is always safe to print.
func FuzzDiff(f *testing.F) {
	f.Add("a\nb\n", "a\nc\n")
	f.Add("", "x")
	f.Add("\x1b[2K\r\n", "\u202e\n\xff")
	f.Add("1\n2\n3\n4\n5\n6\n7\n8\n", "1\n3\n5\n7\n9\n")
	f.Fuzz(func(t *testing.T, a, b string) {
		var out strings.Builder
		if err := Diff(&out, "/f\x1b", []byte(a), []byte(b), DiffOptions{Context: 2, MaxLines: 50}); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		if a == b {
			if out.Len() != 0 {
				t.Fatalf("equal contents gave %q", out.String())
			}
			return
		}
		if len(lines) > 52 {
			t.Fatalf("%d lines, want at most 50 and the cut notice", len(lines))
		}
		for _, l := range lines {
			assertSafe(t, l, false)
		}
	})
}
