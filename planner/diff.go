package planner

import (
	"fmt"
	"strings"
)

// UnifiedDiff returns a unified diff (3 lines of context) from a to b,
// labelled with the given names, or "" when they are equal. Scripts are
// short, so an O(n·m) longest-common-subsequence diff is used; beyond
// 4,000 lines a side it falls back to replacing the whole text.
func UnifiedDiff(nameA, nameB, a, b string) string {
	if a == b {
		return ""
	}
	x, y := splitLines(a), splitLines(b)
	ops := diffLines(x, y)
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", nameA, nameB)
	const ctx = 3
	// Group ops into hunks: runs of changes with up to 2*ctx equal lines
	// between them.
	i := 0
	for i < len(ops) {
		for i < len(ops) && ops[i].kind == ' ' {
			i++
		}
		if i == len(ops) {
			break
		}
		start := max(i-ctx, 0)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == ' ' {
				run++
			}
			if run == len(ops) || run-end > 2*ctx {
				end = min(end+ctx, len(ops))
				break
			}
			end = run
		}
		writeHunk(&out, ops[start:end])
		i = end
	}
	return out.String()
}

type diffOp struct {
	kind       byte // ' ', '-', '+'
	text       string
	aLine, bLn int // 1-based line numbers before the op in a and b
}

func writeHunk(w *strings.Builder, ops []diffOp) {
	aStart, bStart := ops[0].aLine, ops[0].bLn
	var aN, bN int
	for _, o := range ops {
		if o.kind != '+' {
			aN++
		}
		if o.kind != '-' {
			bN++
		}
	}
	if aN == 0 {
		aStart--
	}
	if bN == 0 {
		bStart--
	}
	fmt.Fprintf(w, "@@ -%s +%s @@\n", hunkRange(aStart, aN), hunkRange(bStart, bN))
	for _, o := range ops {
		w.WriteByte(o.kind)
		w.WriteString(o.text)
		w.WriteByte('\n')
	}
}

func hunkRange(start, n int) string {
	if n == 1 {
		return fmt.Sprint(start)
	}
	return fmt.Sprintf("%d,%d", start, n)
}

func splitLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// diffLines computes an edit script from x to y by longest common
// subsequence.
func diffLines(x, y []string) []diffOp {
	const limit = 4000
	var ops []diffOp
	if len(x) > limit || len(y) > limit {
		for i, l := range x {
			ops = append(ops, diffOp{kind: '-', text: l, aLine: i + 1, bLn: 1})
		}
		for j, l := range y {
			ops = append(ops, diffOp{kind: '+', text: l, aLine: len(x) + 1, bLn: j + 1})
		}
		return ops
	}
	n, m := len(x), len(y)
	// lcs[i][j] = LCS length of x[i:], y[j:]
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && x[i] == y[j]:
			ops = append(ops, diffOp{kind: ' ', text: x[i], aLine: i + 1, bLn: j + 1})
			i++
			j++
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, diffOp{kind: '-', text: x[i], aLine: i + 1, bLn: j + 1})
			i++
		default:
			ops = append(ops, diffOp{kind: '+', text: y[j], aLine: i + 1, bLn: j + 1})
			j++
		}
	}
	return ops
}
