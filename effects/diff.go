package effects

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
)

// Defaults for DiffOptions fields left at zero.
const (
	// DefaultDiffContext is the number of unchanged lines around a change.
	DefaultDiffContext = 3
	// DefaultDiffMaxBytes is the largest side Diff compares line by line.
	DefaultDiffMaxBytes = 256 << 10
	// DefaultDiffMaxLines bounds the lines of one diff.
	DefaultDiffMaxLines = 200
)

// maxEditDistance bounds the work of the line diff: past this many
// inserted plus deleted lines the rest of the file is shown as replaced.
const maxEditDistance = 1000

// DiffOptions controls Diff. The zero value is usable.
type DiffOptions struct {
	// Context is the number of unchanged lines shown around each change.
	// Zero means DefaultDiffContext; negative means none.
	Context int
	// MaxBytes: when either side is larger, Diff writes one line saying
	// so instead of a diff. Zero means DefaultDiffMaxBytes.
	MaxBytes int
	// MaxLines bounds the lines written; a longer diff ends with a line
	// saying it was cut. Zero means DefaultDiffMaxLines; negative means no
	// limit.
	MaxLines int
}

// Diff writes a unified diff of old and new, the contents of the file at
// path before and after a change. The caller reads the bytes, so Diff does
// no I/O of its own beyond writing to w. Every line is escaped with
// EscapeText, so file content cannot reach the terminal as a control
// sequence. A side holding a NUL byte in its first 8000 bytes is binary,
// and a side larger than opts.MaxBytes is too large: for both Diff writes
// one line saying so, with the sizes. Equal contents write nothing.
func Diff(w io.Writer, path string, old, new []byte, opts DiffOptions) error {
	if opts.Context == 0 {
		opts.Context = DefaultDiffContext
	} else if opts.Context < 0 {
		opts.Context = 0
	}
	if opts.MaxBytes == 0 {
		opts.MaxBytes = DefaultDiffMaxBytes
	}
	if opts.MaxLines == 0 {
		opts.MaxLines = DefaultDiffMaxLines
	}
	if bytes.Equal(old, new) {
		return nil
	}
	bw := bufio.NewWriter(w)
	name := Quote(path)
	sizes := humanBytes(int64(len(old))) + " → " + humanBytes(int64(len(new)))
	switch {
	case isBinary(old) || isBinary(new):
		fmt.Fprintf(bw, "binary file %s differs (%s)\n", name, sizes)
	case len(old) > opts.MaxBytes || len(new) > opts.MaxBytes:
		fmt.Fprintf(bw, "file %s too large to diff (%s)\n", name, sizes)
	default:
		writeUnified(bw, Quote(strings.TrimPrefix(path, "/")), splitLines(old), splitLines(new), opts)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write diff of %s: %w", name, err)
	}
	return nil
}

// isBinary reports whether b looks binary: a NUL byte in its first 8000
// bytes, as git decides.
func isBinary(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0
}

// splitLines splits b after each newline; the last line lacks one when b
// does not end in a newline.
func splitLines(b []byte) []string {
	var lines []string
	s := string(b)
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i+1])
		s = s[i+1:]
	}
	return lines
}

// edit is one step of a line diff: kind ' ' keeps old line a (= new line
// b), '-' deletes old line a, '+' inserts new line b. a and b are always
// the positions in old and new at which the step applies.
type edit struct {
	kind byte
	a, b int
}

// diffLines returns the edits that turn a into b: a minimal script found
// with Myers' algorithm, or when more than maxEditDistance lines differ, a
// correct but longer one.
func diffLines(a, b []string) []edit {
	ids := map[string]int{}
	intern := func(lines []string) []int {
		out := make([]int, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = len(ids)
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	x, y := intern(a), intern(b)
	var edits []edit
	pre := 0
	for pre < len(x) && pre < len(y) && x[pre] == y[pre] {
		edits = append(edits, edit{' ', pre, pre})
		pre++
	}
	suf := 0
	for suf < len(x)-pre && suf < len(y)-pre && x[len(x)-1-suf] == y[len(y)-1-suf] {
		suf++
	}
	edits = append(edits, myers(x[pre:len(x)-suf], y[pre:len(y)-suf], pre, pre)...)
	for i := suf; i > 0; i-- {
		edits = append(edits, edit{' ', len(x) - i, len(y) - i})
	}
	return edits
}

// myers diffs a and b, which start at offsets oa and ob of the files.
func myers(a, b []int, oa, ob int) []edit {
	n, m := len(a), len(b)
	replaceAll := func() []edit {
		out := make([]edit, 0, n+m)
		for i := 0; i < n; i++ {
			out = append(out, edit{'-', oa + i, ob})
		}
		for j := 0; j < m; j++ {
			out = append(out, edit{'+', oa + n, ob + j})
		}
		return out
	}
	if n == 0 || m == 0 {
		return replaceAll()
	}
	off := n + m + 1
	v := make([]int, 2*off+1)
	// trace[d] holds v[k] for k in [-d-1, d+1] as it was before step d.
	var trace [][]int
	found := -1
	for d := 0; d <= maxEditDistance && d <= n+m && found < 0; d++ {
		snap := make([]int, 2*d+3)
		copy(snap, v[off-d-1:off+d+2])
		trace = append(trace, snap)
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				found = d
				break
			}
		}
	}
	if found < 0 {
		return replaceAll()
	}
	var rev []edit
	x, y := n, m
	for d := found; d >= 0; d-- {
		snap := trace[d]
		at := func(k int) int { return snap[k+d+1] }
		k := x - y
		var pk int
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := at(pk)
		py := px - pk
		for x > px && y > py {
			x--
			y--
			rev = append(rev, edit{' ', oa + x, ob + y})
		}
		if d > 0 {
			if x == px {
				rev = append(rev, edit{'+', oa + px, ob + py})
			} else {
				rev = append(rev, edit{'-', oa + px, ob + py})
			}
		}
		x, y = px, py
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev
}

// writeUnified writes the diff of a and b in unified format; name is the
// quoted path without its leading slash.
func writeUnified(w *bufio.Writer, name string, a, b []string, opts DiffOptions) {
	edits := diffLines(a, b)
	fmt.Fprintf(w, "--- a/%s\n+++ b/%s\n", name, name)
	lines := 2
	ctx := opts.Context
	for i := 0; i < len(edits); {
		if edits[i].kind == ' ' {
			i++
			continue
		}
		start := max(0, i-ctx)
		last, j := i, i
		for j < len(edits) {
			if edits[j].kind != ' ' {
				last = j
				j++
				continue
			}
			r := j
			for r < len(edits) && edits[r].kind == ' ' {
				r++
			}
			if r == len(edits) || r-j > 2*ctx {
				break
			}
			j = r
		}
		end := min(len(edits), last+1+ctx)
		if opts.MaxLines > 0 && lines >= opts.MaxLines {
			fmt.Fprintf(w, "... diff cut after %d lines\n", lines)
			return
		}
		writeHunk(w, edits[start:end])
		lines++
		for _, e := range edits[start:end] {
			if opts.MaxLines > 0 && lines >= opts.MaxLines {
				fmt.Fprintf(w, "... diff cut after %d lines\n", lines)
				return
			}
			lines++
			line := ""
			switch e.kind {
			case '-':
				line = a[e.a]
			default:
				line = b[e.b]
			}
			w.WriteByte(e.kind)
			body, nl := strings.CutSuffix(line, "\n")
			w.WriteString(EscapeText(body))
			w.WriteByte('\n')
			if !nl {
				w.WriteString("\\ No newline at end of file\n")
				lines++
			}
		}
		i = end
	}
}

// writeHunk writes the @@ header of the hunk made of edits.
func writeHunk(w *bufio.Writer, edits []edit) {
	var na, nb int
	for _, e := range edits {
		if e.kind != '+' {
			na++
		}
		if e.kind != '-' {
			nb++
		}
	}
	sa, sb := edits[0].a, edits[0].b
	if na > 0 {
		sa++
	}
	if nb > 0 {
		sb++
	}
	fmt.Fprintf(w, "@@ -%s +%s @@\n", hunkRange(sa, na), hunkRange(sb, nb))
}

func hunkRange(start, n int) string {
	if n == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}
