package scripttest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/nash-shell/nash/effects"
)

// ExampleResult is how a script did on an example.
type ExampleResult struct {
	Example  Example `json:"example"`
	Pass     bool    `json:"pass"`
	ExitCode int     `json:"exit_code"`
	Stdout   string  `json:"stdout,omitempty"`
	Stderr   string  `json:"stderr,omitempty"`
	// Got is the tree the script left.
	Got []Node `json:"got"`
	// Mismatches say where it differs from what the example expects.
	Mismatches []Mismatch `json:"mismatches,omitempty"`
}

// Mismatch is one difference between what an example expects and what
// the script did.
type Mismatch struct {
	// Kind is missing, unexpected, type, content, target (a path of the
	// tree), stdout, or exit.
	Kind string `json:"kind"`
	// Path is the path in the tree, relative; empty for stdout and exit.
	Path string `json:"path,omitempty"`
	// Want and Got describe each side in a few words.
	Want string `json:"want,omitempty"`
	Got  string `json:"got,omitempty"`
	// Diff is a unified diff of a file's content or of the output.
	Diff string `json:"diff,omitempty"`
}

// RunExample runs script on the example's tree, in a directory of its own
// in a sandbox (named like the working directory, under /tmp), and
// compares what it leaves and prints with what the example expects.
func (t *Tester) RunExample(ctx context.Context, script string, ex Example) (*ExampleResult, error) {
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	dir := path.Join("/tmp", "nash-example-"+hex.EncodeToString(rnd[:]), path.Base(t.dir))
	entries := []Entry{{Path: path.Dir(dir), Type: effects.TypeDir}, {Path: dir, Type: effects.TypeDir}}
	for _, n := range ex.Before {
		entries = append(entries, Entry{Path: path.Join(dir, n.Path), Type: n.Type, Content: n.Content, Target: n.Target})
	}
	entries = t.complete(entries)
	var b strings.Builder
	writeSetup(&b, entries, t.umask, t.hostMode)
	b.WriteString("cd -- " + shellQuote(dir) + " || exit " + strconv.Itoa(setupFailed) + "\n")
	writeTail(&b, script, t.timeoutSec())
	bx, err := t.newBox(ctx)
	if err != nil {
		return nil, err
	}
	defer bx.close()
	var got []Node
	r, err := t.runCode(ctx, bx, b.String(), func(cs *effects.ChangeSet, h host) { got = treeUnder(cs, h, dir) })
	if err != nil {
		return nil, err
	}
	res := &ExampleResult{Example: ex, ExitCode: r.exit, Stdout: r.stdout, Stderr: r.stderr, Got: got}
	if r.setupErr != "" {
		res.Mismatches = append(res.Mismatches, Mismatch{Kind: "exit", Want: "the example's tree", Got: r.setupErr})
		return res, nil
	}
	res.Mismatches = compareExample(ex, res)
	res.Pass = len(res.Mismatches) == 0
	return res, nil
}

// treeUnder lists what a run left under dir, which did not exist before
// it: everything there is new.
func treeUnder(cs *effects.ChangeSet, h host, dir string) []Node {
	var out []Node
	for _, c := range cs.Changes {
		if !strings.HasPrefix(c.Path, dir+"/") || c.After == nil {
			continue
		}
		n := Node{Path: strings.TrimPrefix(c.Path, dir+"/"), Type: c.After.Type, Target: c.After.Target}
		if n.Type == effects.TypeFile {
			if p, ok := h.NewVersion(c.Path); ok {
				o := &object{file: p, size: c.After.Size}
				if b, ok := o.content(); ok {
					n.Content = string(b)
				}
			}
		}
		out = append(out, n)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// compareExample lists where a run differs from what its example expects.
func compareExample(ex Example, res *ExampleResult) []Mismatch {
	var out []Mismatch
	if ex.After != nil {
		want := withParents(ex.After)
		got := map[string]Node{}
		for _, n := range res.Got {
			got[n.Path] = n
		}
		paths := make([]string, 0, len(want)+len(got))
		for p := range want {
			paths = append(paths, p)
		}
		for p := range got {
			if _, ok := want[p]; !ok {
				paths = append(paths, p)
			}
		}
		sort.Strings(paths)
		for _, p := range paths {
			w, inWant := want[p]
			g, inGot := got[p]
			switch {
			case !inGot:
				out = append(out, Mismatch{Kind: "missing", Path: p, Want: describeNode(w)})
			case !inWant:
				out = append(out, Mismatch{Kind: "unexpected", Path: p, Got: describeNode(g)})
			case w.Type != g.Type:
				out = append(out, Mismatch{Kind: "type", Path: p, Want: describeNode(w), Got: describeNode(g)})
			case w.Type == effects.TypeSymlink && w.Target != g.Target:
				out = append(out, Mismatch{Kind: "target", Path: p, Want: describeNode(w), Got: describeNode(g)})
			case w.Type == effects.TypeFile && w.Content != g.Content:
				out = append(out, Mismatch{Kind: "content", Path: p, Want: describeNode(w), Got: describeNode(g), Diff: diff(p, w.Content, g.Content)})
			}
		}
	}
	if ex.CheckStdout && ex.Stdout != res.Stdout {
		out = append(out, Mismatch{Kind: "stdout", Want: sizeOf(ex.Stdout), Got: sizeOf(res.Stdout), Diff: diff("stdout", ex.Stdout, res.Stdout)})
	}
	if res.ExitCode != 0 {
		m := Mismatch{Kind: "exit", Want: "status 0", Got: "status " + strconv.Itoa(res.ExitCode)}
		if l, _, _ := strings.Cut(strings.TrimSpace(res.Stderr), "\n"); l != "" {
			m.Got += ": " + effects.EscapeLine(l)
		}
		out = append(out, m)
	}
	return out
}

// withParents maps each node's path to it, with the directories that hold
// nodes added.
func withParents(nodes []Node) map[string]Node {
	out := map[string]Node{}
	for _, n := range nodes {
		out[n.Path] = n
		for d := path.Dir(n.Path); d != "." && d != "/"; d = path.Dir(d) {
			if _, ok := out[d]; !ok {
				out[d] = Node{Path: d, Type: effects.TypeDir}
			}
		}
	}
	return out
}

func describeNode(n Node) string {
	switch n.Type {
	case effects.TypeDir:
		return "a directory"
	case effects.TypeSymlink:
		return "a symlink to " + effects.Quote(n.Target)
	case effects.TypeFile:
		return "a file of " + sizeOf(n.Content)
	}
	return string(n.Type)
}

func sizeOf(s string) string {
	if len(s) == 1 {
		return "1 byte"
	}
	return strconv.Itoa(len(s)) + " bytes"
}

// diff is a unified diff of two texts.
func diff(name, want, got string) string {
	var b bytes.Buffer
	_ = effects.Diff(&b, name, []byte(want), []byte(got), effects.DiffOptions{})
	return b.String()
}
