// Package configedit changes one setting of nash's YAML config file in
// place, the way a person would with an editor: the rest of the file, its
// comments and its layout stay as they were, and the file is replaced
// atomically, so a crash leaves the old file or the new one, never half
// of either. nash uses it to save the model chosen with nash models or
// :model NAME.
package configedit

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"unicode"

	"gopkg.in/yaml.v3"

	"github.com/nash-shell/nash/internal/atomicfile"
)

// SetString sets the top-level key of the YAML file at path to value. An
// existing key keeps its line, indentation and trailing comment; a new key
// is appended. A missing file (and its directory) is created, readable by
// its owner only. A file that is not YAML, or whose top level is not a
// mapping, is an error and is left as it was. The value is one line of
// printable text.
func SetString(path, key, value string) error {
	if key == "" || strings.ContainsFunc(key, func(r rune) bool { return !unicode.IsPrint(r) || r == ':' || r == '#' }) {
		return fmt.Errorf("config key %q: not a plain key", key)
	}
	if strings.ContainsFunc(value, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }) {
		return fmt.Errorf("config %s: the value of %s must be one line of printable text", path, key)
	}
	enc, err := yaml.Marshal(value)
	if err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	scalar := strings.TrimSuffix(string(enc), "\n")

	old, err := os.ReadFile(path)
	mode := os.FileMode(0o600)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return fmt.Errorf("create config dir: %w", err)
		}
	case err != nil:
		return fmt.Errorf("read config: %w", err)
	default:
		if fi, err := os.Stat(path); err == nil {
			mode = fi.Mode().Perm()
		}
	}
	out, err := set(old, key, scalar)
	if err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	if err := atomicfile.WriteFile(path, out, mode); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	return nil
}

// set returns src with key set to the YAML scalar text scalar: edited as
// lines where that reads back right, else written out again from the
// parsed tree (comments kept, layout normalized).
func set(src []byte, key, scalar string) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, err
	}
	var top *yaml.Node
	switch {
	case doc.Kind == yaml.DocumentNode && len(doc.Content) == 1:
		top = doc.Content[0]
		if top.Kind != yaml.MappingNode {
			return nil, errors.New("the top level is not a mapping of settings")
		}
		if top.Style&yaml.FlowStyle != 0 {
			return nil, errors.New("the settings are written as one flow mapping ({...}); edit it by hand")
		}
	case len(bytes.TrimSpace(stripComments(src))) > 0:
		return nil, errors.New("the top level is not a mapping of settings")
	}
	var nv yaml.Node
	if err := yaml.Unmarshal([]byte(scalar), &nv); err != nil || len(nv.Content) != 1 {
		return nil, fmt.Errorf("encode the value: %v", err)
	}
	val := nv.Content[0]

	if top == nil {
		return appendKey(src, "", key, scalar), nil
	}
	for i := 0; i+1 < len(top.Content); i += 2 {
		k, v := top.Content[i], top.Content[i+1]
		if k.Value != key {
			continue
		}
		if out, err := replaceValue(src, k, v, scalar); err == nil && sameExcept(src, out, key, scalar) {
			return out, nil
		}
		val.LineComment = v.LineComment
		top.Content[i+1] = val
		return encode(&doc)
	}
	indent := ""
	if len(top.Content) > 0 {
		indent = strings.Repeat(" ", max(top.Content[0].Column-1, 0))
	}
	if out := appendKey(src, indent, key, scalar); sameExcept(src, out, key, scalar) {
		return out, nil
	}
	top.Content = append(top.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, val)
	return encode(&doc)
}

func appendKey(src []byte, indent, key, scalar string) []byte {
	var b bytes.Buffer
	b.Write(src)
	if len(src) > 0 && !bytes.HasSuffix(src, []byte("\n")) {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "%s%s: %s\n", indent, key, scalar)
	return b.Bytes()
}

func encode(doc *yaml.Node) ([]byte, error) {
	var b bytes.Buffer
	e := yaml.NewEncoder(&b)
	e.SetIndent(2)
	if err := e.Encode(doc); err != nil {
		return nil, err
	}
	if err := e.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// sameExcept reports whether out reads as src with key set to scalar and
// every other setting unchanged.
func sameExcept(src, out []byte, key, scalar string) bool {
	var before, after map[string]any
	var want any
	if yaml.Unmarshal(src, &before) != nil || yaml.Unmarshal(out, &after) != nil || yaml.Unmarshal([]byte(scalar), &want) != nil {
		return false
	}
	if len(before) != len(after) || !reflect.DeepEqual(after[key], want) {
		return false
	}
	for k, v := range before {
		if k != key && !reflect.DeepEqual(after[k], v) {
			return false
		}
	}
	return true
}

// replaceValue writes scalar in place of v, the value of key k. A value on
// the key's line is replaced on that line, its trailing comment kept; a
// value below the key (a block, a nested mapping) is replaced with the
// scalar on the key's line, its lines removed.
func replaceValue(src []byte, k, v *yaml.Node, scalar string) ([]byte, error) {
	lines := strings.SplitAfter(string(src), "\n")
	kl := k.Line - 1
	if kl < 0 || kl >= len(lines) {
		return nil, errors.New("cannot find the key's line")
	}
	comment := v.LineComment
	if comment == "" {
		comment = k.LineComment
	}
	// The key's line up to its colon.
	line := lines[kl]
	colon := k.Column - 1 + len(keyText(line[k.Column-1:]))
	if colon >= len(line) || line[colon] != ':' {
		return nil, errors.New("cannot find the key's colon")
	}
	nl := ""
	if strings.HasSuffix(line, "\n") {
		nl = "\n"
	}
	newLine := line[:colon+1] + " " + scalar
	if comment != "" {
		// The comment keeps its distance from the value.
		gap := " "
		if i := strings.LastIndex(line, comment); i > colon {
			if g := line[len(strings.TrimRight(line[:i], " \t")):i]; g != "" {
				gap = g
			}
		}
		newLine += gap + comment
	}
	lines[kl] = newLine + nl
	// Drop the value's own lines when it started below the key or spans
	// several lines: up to the next line as little indented as the key.
	end := kl + 1
	for end < len(lines) {
		l := lines[end]
		t := strings.TrimLeft(l, " \t")
		if t == "" || t == "\n" || strings.HasPrefix(t, "#") {
			if indentOf(l) <= k.Column-1 && strings.HasPrefix(t, "#") {
				break
			}
			end++
			continue
		}
		if indentOf(l) <= k.Column-1 {
			break
		}
		end++
	}
	// Keep trailing blank lines and comments that belong to what follows.
	for end > kl+1 && strings.TrimSpace(lines[end-1]) == "" {
		end--
	}
	lines = append(lines[:kl+1], lines[end:]...)
	return []byte(strings.Join(lines, "")), nil
}

// keyText returns the key as written at the start of s: plain, or quoted.
func keyText(s string) string {
	if s == "" {
		return s
	}
	if q := s[0]; q == '"' || q == '\'' {
		for i := 1; i < len(s); i++ {
			if s[i] == q && (q == '\'' || s[i-1] != '\\') {
				if q == '\'' && i+1 < len(s) && s[i+1] == '\'' {
					i++
					continue
				}
				return s[:i+1]
			}
		}
		return s
	}
	if i := strings.Index(s, ":"); i >= 0 {
		return strings.TrimRight(s[:i], " \t")
	}
	return s
}

func indentOf(l string) int { return len(l) - len(strings.TrimLeft(l, " \t")) }

// stripComments drops comment lines, to tell an empty file from one that
// holds something other than a mapping.
func stripComments(b []byte) []byte {
	var out []byte
	for _, l := range bytes.SplitAfter(b, []byte("\n")) {
		if !bytes.HasPrefix(bytes.TrimSpace(l), []byte("#")) && !bytes.Equal(bytes.TrimSpace(l), []byte("---")) {
			out = append(out, l...)
		}
	}
	return out
}
