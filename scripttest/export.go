package scripttest

import (
	"bufio"
	"fmt"
	"io"
	"io/fs"
	"strconv"
	"strings"

	"github.com/nash-shell/nash/effects"
)

// Tested is a script with the examples it must pass.
type Tested struct {
	// Name says what the script is for (the request it answers); one
	// line.
	Name     string    `json:"name,omitempty"`
	Script   string    `json:"script"`
	Examples []Example `json:"examples"`
}

// testsHeader opens a file WriteTests writes, so ReadTests knows it.
const testsHeader = "# nash-tests 1"

// WriteTests writes a bash program that checks each script against its
// examples, in temporary directories, and exits 0 when every example
// passes and 1 when one fails, saying which and how. It needs bash, mktemp
// and diff. Each script is embedded whole, so the file tests what was
// exported even when the scripts are run from elsewhere; the examples are
// embedded in their text form too, so that ReadTests reads them back.
func WriteTests(w io.Writer, tests []Tested) error {
	end := delimiter(tests)
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `#!/usr/bin/env bash
%s
# Examples written by nash: each is a tree before and the tree or output
# expected after. Run this file to check that the scripts still do what
# their examples say; it exits 0 when they all pass, 1 when one fails.
set -u
nash_failed=0
nash_check() { # number, name, script
  local t st ok=1
  t=$(mktemp -d) || exit 2
  mkdir -p "$t/run" "$t/want"
  ( cd "$t/run" && nash_before ) || { echo "example $1: cannot build its tree"; exit 2; }
  ( cd "$t/want" && nash_after ) || { echo "example $1: cannot build its tree"; exit 2; }
  ( cd "$t/run" && bash -c "$3" bash ) >"$t/stdout" 2>"$t/stderr" </dev/null
  st=$?
  if [ "$st" != 0 ]; then
    echo "example $1 exits with status $st:"; sed 's/^/  /' "$t/stderr"; ok=0
  fi
  if [ "$nash_tree" = 1 ] && ! diff -r --no-dereference "$t/want" "$t/run" >"$t/diff" 2>&1; then
    echo "example $1 leaves another tree (< expected, > got):"; sed 's/^/  /' "$t/diff"; ok=0
  fi
  if [ "$nash_out" = 1 ] && ! nash_stdout | diff - "$t/stdout" >"$t/diff" 2>&1; then
    echo "example $1 prints something else (< expected, > got):"; sed 's/^/  /' "$t/diff"; ok=0
  fi
  rm -rf "$t"
  if [ "$ok" = 1 ]; then echo "pass: example $1 ($2)"; else echo "FAIL: example $1 ($2)"; nash_failed=1; fi
}
`, testsHeader)
	for i, tt := range tests {
		n := strconv.Itoa(i + 1)
		name := strings.ReplaceAll(effects.EscapeLine(tt.Name), "\n", " ")
		fmt.Fprintf(bw, "\n# --- script %s: %s\nnash_script=$(cat <<'%s'\n%s\n%s\n)\n", n, name, end, strings.TrimRight(tt.Script, "\n"), end)
		for j, ex := range tt.Examples {
			text, err := ex.MarshalText()
			if err != nil {
				return err
			}
			fmt.Fprintf(bw, "\n# --- example %s.%d\n: <<'%s'\n%s%s\n", n, j+1, end, text, end)
			bw.WriteString("nash_before() {\n  :\n")
			writeNodes(bw, ex.Before)
			bw.WriteString("}\nnash_after() {\n  :\n")
			writeNodes(bw, ex.After)
			bw.WriteString("}\n")
			fmt.Fprintf(bw, "nash_tree=%d nash_out=%d\n", b2i(ex.After != nil), b2i(ex.CheckStdout))
			fmt.Fprintf(bw, "nash_stdout() { printf %%s %s; }\n", shellQuote(ex.Stdout))
			label := name
			if ex.Name != "" {
				label = strings.ReplaceAll(effects.EscapeLine(ex.Name), "\n", " ")
			}
			fmt.Fprintf(bw, "nash_check %s %s \"$nash_script\"\n", shellQuote(n+"."+strconv.Itoa(j+1)), shellQuote(label))
		}
	}
	bw.WriteString("\nexit \"$nash_failed\"\n")
	return bw.Flush()
}

// writeNodes writes the commands that make nodes in the current directory.
func writeNodes(w *bufio.Writer, nodes []Node) {
	if len(nodes) == 0 {
		return
	}
	entries := make([]Entry, len(nodes))
	for i, n := range nodes {
		entries[i] = Entry{Path: "./" + n.Path, Type: n.Type, Content: n.Content, Target: n.Target}
	}
	var b strings.Builder
	writeEntries(&b, entries, func(string) (fs.FileMode, bool) { return 0, false })
	for _, l := range strings.SplitAfter(b.String(), "\n") {
		if l != "" {
			w.WriteString("  " + l)
		}
	}
}

func b2i(v bool) int {
	if v {
		return 1
	}
	return 0
}

// delimiter picks a here-document delimiter that is no line of any script
// or example.
func delimiter(tests []Tested) string {
	lines := map[string]bool{}
	for _, tt := range tests {
		for _, l := range strings.Split(tt.Script, "\n") {
			lines[l] = true
		}
		for _, ex := range tt.Examples {
			text, _ := ex.MarshalText()
			for _, l := range strings.Split(string(text), "\n") {
				lines[l] = true
			}
		}
	}
	d := "NASH_END"
	for i := 2; lines[d]; i++ {
		d = "NASH_END_" + strconv.Itoa(i)
	}
	return d
}

// ReadTests reads back the scripts and examples of a file WriteTests
// wrote.
func ReadTests(r io.Reader) ([]Tested, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	if !sc.Scan() || !sc.Scan() || sc.Text() != testsHeader {
		return nil, fmt.Errorf("%w: not a file of nash tests (no %q line)", ErrExample, testsHeader)
	}
	var out []Tested
	// body reads the lines of a here-document up to its delimiter.
	body := func(end string) (string, error) {
		var b strings.Builder
		for sc.Scan() {
			if sc.Text() == end {
				return b.String(), nil
			}
			b.WriteString(sc.Text())
			b.WriteByte('\n')
		}
		return "", fmt.Errorf("%w: here-document %s does not end", ErrExample, end)
	}
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "# --- script "):
			_, name, _ := strings.Cut(l, ": ")
			out = append(out, Tested{Name: name})
		case strings.HasPrefix(l, "nash_script=$(cat <<'") && len(out) > 0:
			s, err := body(strings.TrimSuffix(strings.TrimPrefix(l, "nash_script=$(cat <<'"), "'"))
			if err != nil {
				return nil, err
			}
			out[len(out)-1].Script = strings.TrimSuffix(s, "\n")
		case strings.HasPrefix(l, ": <<'") && len(out) > 0:
			s, err := body(strings.TrimSuffix(strings.TrimPrefix(l, ": <<'"), "'"))
			if err != nil {
				return nil, err
			}
			var ex Example
			if err := ex.UnmarshalText([]byte(s)); err != nil {
				return nil, err
			}
			out[len(out)-1].Examples = append(out[len(out)-1].Examples, ex)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read tests: %w", err)
	}
	return out, nil
}
