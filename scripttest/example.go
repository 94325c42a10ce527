package scripttest

import (
	"errors"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/nash-shell/nash/effects"
)

// Example is the person's own test of a script: a small tree before, and
// the tree or the output expected after. The script runs on Before alone,
// in a directory of its own.
type Example struct {
	Name   string `json:"name,omitempty"`
	Before []Node `json:"before"`
	// After is the whole tree expected after the run; nil when only the
	// output is checked.
	After []Node `json:"after,omitempty"`
	// Stdout is the output expected, when CheckStdout is set.
	Stdout      string `json:"stdout,omitempty"`
	CheckStdout bool   `json:"check_stdout,omitempty"`
}

// Node is one object of an example's tree. Directories holding other
// nodes need not be listed; an empty one must be.
type Node struct {
	// Path is relative, with slashes.
	Path    string           `json:"path"`
	Type    effects.FileType `json:"type"`
	Content string           `json:"content,omitempty"`
	Target  string           `json:"target,omitempty"` // a symlink's
}

// ErrExample is wrapped by the errors of examples that do not parse.
var ErrExample = errors.New("bad example")

func exampleErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrExample, fmt.Sprintf(format, args...))
}

// ParseExample reads an example in its short form, as a person types it:
// the tree before, "=>", and the tree after, as shell words. A word
// ending in / is a directory, NAME=CONTENT a file holding CONTENT and a
// newline, NAME->TARGET a symlink, any other word an empty file. After
// "=>", "stdout:" starts the output expected (the rest of the line, and a
// newline), instead of or after the tree:
//
//	a.jpeg 'my photo.jpeg' => a.jpg 'my photo.jpg'
//	notes.txt='b\na' => stdout: 2 notes.txt
func ParseExample(s string) (Example, error) {
	var ex Example
	before, after, ok := strings.Cut(s, "=>")
	if !ok {
		return ex, exampleErr("an example is: the files before => the files after (or stdout: what it prints)")
	}
	var err error
	if ex.Before, err = parseNodes(before); err != nil {
		return ex, err
	}
	if tree, out, ok := strings.Cut(after, "stdout:"); ok {
		after = tree
		ex.Stdout, ex.CheckStdout = strings.TrimSpace(out)+"\n", true
	}
	if strings.TrimSpace(after) != "" || !ex.CheckStdout {
		if ex.After, err = parseNodes(after); err != nil {
			return ex, err
		}
		if ex.After == nil {
			ex.After = []Node{}
		}
	}
	return ex, nil
}

// parseNodes reads a tree in the short form.
func parseNodes(s string) ([]Node, error) {
	words, err := shellWords(s)
	if err != nil {
		return nil, err
	}
	var out []Node
	for _, w := range words {
		var n Node
		switch {
		case strings.Contains(w, "->"):
			name, target, _ := strings.Cut(w, "->")
			n = Node{Path: name, Type: effects.TypeSymlink, Target: target}
		case strings.Contains(w, "="):
			name, content, _ := strings.Cut(w, "=")
			n = Node{Path: name, Type: effects.TypeFile, Content: strings.ReplaceAll(content, `\n`, "\n") + "\n"}
		case strings.HasSuffix(w, "/"):
			n = Node{Path: w, Type: effects.TypeDir}
		default:
			n = Node{Path: w, Type: effects.TypeFile}
		}
		if n.Path, err = cleanRel(n.Path); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return normalize(out)
}

// shellWords splits s into words as a shell would, with its quotes ('...',
// "...", $'...' with C escapes, backslash) and no expansions; > and | are
// plain characters here (cur->a is one word).
func shellWords(s string) ([]string, error) {
	var words []string
	var b strings.Builder
	in := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if in {
				words = append(words, b.String())
				b.Reset()
				in = false
			}
			continue
		case c == '\\' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, exampleErr("a quote is not closed: %s", effects.Quote(s[i:]))
			}
			b.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			j := strings.IndexByte(s[i+1:], '"')
			if j < 0 {
				return nil, exampleErr("a quote is not closed: %s", effects.Quote(s[i:]))
			}
			b.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '$' && i+1 < len(s) && s[i+1] == '\'':
			j := i + 2
			for ; j < len(s) && s[j] != '\''; j++ {
				if s[j] == '\\' {
					j++
				}
			}
			if j >= len(s) {
				return nil, exampleErr("a quote is not closed: %s", effects.Quote(s[i:]))
			}
			v, err := strconv.Unquote(`"` + strings.ReplaceAll(strings.ReplaceAll(s[i+2:j], `\'`, `'`), `"`, `\"`) + `"`)
			if err != nil {
				return nil, exampleErr("%s: %v", effects.Quote(s[i:j+1]), err)
			}
			b.WriteString(v)
			i = j
		default:
			b.WriteByte(c)
		}
		in = true
	}
	if in {
		words = append(words, b.String())
	}
	return words, nil
}

// cleanRel checks a node's path: relative, inside the example's
// directory.
func cleanRel(p string) (string, error) {
	dir := strings.HasSuffix(p, "/")
	c := path.Clean(p)
	if p == "" || path.IsAbs(p) || c == "." || c == ".." || strings.HasPrefix(c, "../") {
		return "", exampleErr("%s: a path in an example is relative and stays inside it", effects.Quote(p))
	}
	if dir {
		return c + "/", nil
	}
	return c, nil
}

// normalize sorts nodes by path, drops the trailing slash of directories,
// and refuses a path listed twice.
func normalize(nodes []Node) ([]Node, error) {
	seen := map[string]bool{}
	for i := range nodes {
		nodes[i].Path = strings.TrimSuffix(nodes[i].Path, "/")
		if seen[nodes[i].Path] {
			return nil, exampleErr("%s is listed twice", effects.Quote(nodes[i].Path))
		}
		seen[nodes[i].Path] = true
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Path < nodes[j].Path })
	return nodes, nil
}

// Text sections of an example, in its text form (see MarshalText).
const (
	beforePrefix = "before/"
	afterPrefix  = "after/"
	stdoutName   = "stdout"
	// afterEmpty marks an expected tree that is empty.
	afterEmpty = "after/"
	// noNewline ends the header of a file whose content has no final
	// newline, which txtar cannot otherwise say.
	noNewline = " (no newline at end)"
)

// MarshalText writes the example as a txtar archive: its name in the
// comment, then before/PATH and after/PATH for files (PATH/ for a
// directory, PATH -> TARGET for a symlink), and stdout. A path that is not
// plain printable text is written Go-quoted.
func (e Example) MarshalText() ([]byte, error) {
	a := &txtar.Archive{}
	if e.Name != "" {
		a.Comment = []byte("name: " + strings.ReplaceAll(e.Name, "\n", " ") + "\n")
	}
	add := func(prefix string, nodes []Node) {
		for _, n := range nodes {
			name := prefix + quoteName(n.Path)
			data := []byte(n.Content)
			switch n.Type {
			case effects.TypeDir:
				name += "/"
				data = nil
			case effects.TypeSymlink:
				name += " -> " + quoteName(n.Target)
				data = nil
			default:
				if len(data) > 0 && data[len(data)-1] != '\n' {
					name += noNewline
					data = append(data, '\n')
				}
			}
			a.Files = append(a.Files, txtar.File{Name: name, Data: data})
		}
	}
	add(beforePrefix, e.Before)
	if e.After != nil {
		if len(e.After) == 0 {
			a.Files = append(a.Files, txtar.File{Name: afterEmpty})
		}
		add(afterPrefix, e.After)
	}
	if e.CheckStdout {
		f := txtar.File{Name: stdoutName, Data: []byte(e.Stdout)}
		if n := len(e.Stdout); n > 0 && e.Stdout[n-1] != '\n' {
			f.Name += noNewline
			f.Data = append(f.Data, '\n')
		}
		a.Files = append(a.Files, f)
	}
	return txtar.Format(a), nil
}

// UnmarshalText reads an example MarshalText wrote.
func (e *Example) UnmarshalText(b []byte) error {
	a := txtar.Parse(b)
	*e = Example{}
	for _, l := range strings.Split(string(a.Comment), "\n") {
		if v, ok := strings.CutPrefix(l, "name: "); ok {
			e.Name = v
		}
	}
	for _, f := range a.Files {
		name, data := f.Name, string(f.Data)
		if n, ok := strings.CutSuffix(name, noNewline); ok {
			name, data = n, strings.TrimSuffix(data, "\n")
		}
		if name == stdoutName {
			e.Stdout, e.CheckStdout = data, true
			continue
		}
		if name == afterEmpty {
			if e.After == nil {
				e.After = []Node{}
			}
			continue
		}
		var list *[]Node
		switch {
		case strings.HasPrefix(name, beforePrefix):
			list, name = &e.Before, name[len(beforePrefix):]
		case strings.HasPrefix(name, afterPrefix):
			list, name = &e.After, name[len(afterPrefix):]
		default:
			return exampleErr("unknown section %s", effects.Quote(f.Name))
		}
		n := Node{Type: effects.TypeFile, Content: data}
		if p, t, ok := strings.Cut(name, " -> "); ok {
			n = Node{Type: effects.TypeSymlink}
			name = p
			var err error
			if n.Target, err = unquoteName(t); err != nil {
				return err
			}
		} else if p, ok := strings.CutSuffix(name, "/"); ok {
			n = Node{Type: effects.TypeDir}
			name = p
		}
		var err error
		if n.Path, err = unquoteName(name); err != nil {
			return err
		}
		if _, err := cleanRel(n.Path); err != nil {
			return err
		}
		*list = append(*list, n)
	}
	var err error
	if e.Before, err = normalize(e.Before); err != nil {
		return err
	}
	if e.After != nil {
		if e.After, err = normalize(e.After); err != nil {
			return err
		}
	}
	return nil
}

// quoteName writes a path for a txtar header: as it is when it is plain
// printable text with no space at either end and no quote first, else
// Go-quoted (\xHH for bytes that are not UTF-8).
func quoteName(p string) string {
	plain := utf8.ValidString(p) && p != "" && p[0] != '"' && strings.TrimSpace(p) == p && !strings.Contains(p, " -> ") && !strings.HasSuffix(p, noNewline)
	for _, r := range p {
		if r < 0x20 || r == 0x7f || r == 0xfffd {
			plain = false
		}
	}
	if plain {
		return p
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRuneInString(p[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, p[i])
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteString(p[i : i+size])
		}
		i += size
	}
	b.WriteByte('"')
	return b.String()
}

func unquoteName(s string) (string, error) {
	if !strings.HasPrefix(s, `"`) {
		return s, nil
	}
	v, err := strconv.Unquote(s)
	if err != nil {
		return "", exampleErr("%s: %v", effects.Quote(s), err)
	}
	return v, nil
}
