package index

import (
	"bufio"
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
)

// ignoreFiles are read in every directory walked; their patterns apply to
// that directory and below, with .gitignore syntax.
var ignoreFiles = []string{".gitignore", ".nashignore"}

// ignoreRule is one line of an ignore file.
type ignoreRule struct {
	base     string // directory holding the ignore file
	re       *regexp.Regexp
	negate   bool
	dirOnly  bool
	basename bool // pattern has no slash: match the name at any depth
}

// ignoreRules is a stack of rules; later rules override earlier ones.
type ignoreRules []ignoreRule

// parseIgnore parses the content of an ignore file found in dir.
func parseIgnore(dir string, data []byte) ignoreRules {
	var rules ignoreRules
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), " \t\r")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r := ignoreRule{base: dir}
		if strings.HasPrefix(line, "!") {
			r.negate = true
			line = line[1:]
		}
		line = strings.TrimPrefix(line, `\`)
		if strings.HasSuffix(line, "/") {
			r.dirOnly = true
			line = strings.TrimRight(line, "/")
		}
		if line == "" {
			continue
		}
		if !strings.Contains(line, "/") {
			r.basename = true
		}
		line = strings.TrimPrefix(line, "/")
		re, err := regexp.Compile("^" + globToRegexp(line) + "$")
		if err != nil {
			continue // a malformed pattern ignores nothing, as git does
		}
		r.re = re
		rules = append(rules, r)
	}
	return rules
}

// globToRegexp translates a gitignore glob into a regular expression.
func globToRegexp(g string) string {
	var b strings.Builder
	for i := 0; i < len(g); i++ {
		c := g[i]
		switch {
		case strings.HasPrefix(g[i:], "**/"):
			b.WriteString("(?:.*/)?")
			i += 2
		case strings.HasPrefix(g[i:], "/**") && i+3 == len(g):
			b.WriteString("(?:/.*)?")
			i += 2
		case strings.HasPrefix(g[i:], "**"):
			b.WriteString(".*")
			i++
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		case c == '[':
			end := strings.IndexByte(g[i+1:], ']')
			if end < 0 {
				b.WriteString(`\[`)
				continue
			}
			class := g[i+1 : i+1+end]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += end + 1
		case c == '\\' && i+1 < len(g):
			i++
			b.WriteString(regexp.QuoteMeta(string(g[i])))
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return b.String()
}

// ignored reports whether path (absolute, cleaned) is excluded by the rules.
func (rs ignoreRules) ignored(path string, isDir bool) bool {
	ignored := false
	for _, r := range rs {
		if r.dirOnly && !isDir {
			continue
		}
		var subject string
		if r.basename {
			subject = filepath.Base(path)
		} else {
			rel, err := filepath.Rel(r.base, path)
			if err != nil || strings.HasPrefix(rel, "..") {
				continue
			}
			subject = filepath.ToSlash(rel)
		}
		if r.re.MatchString(subject) {
			ignored = !r.negate
		}
	}
	return ignored
}
