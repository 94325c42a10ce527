package shell

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/planner"
)

// A Markdown renderer of our own, for the short answers the model gives:
// glamour would do more, but its syntax highlighter and Markdown
// extensions cost about 20 ms of package initialisation on every nash
// start (measured: 1 ms for an empty program, 22-25 ms with glamour
// imported), where a sandboxed command costs 25 ms in all.

// markdown renders a Markdown answer for a terminal width columns wide:
// headings bold, emphasis, code in the command colour (shell blocks
// highlighted), lists with hanging indents, quotes and rules. All of the
// model's text is escaped first (effects.EscapeText), so an answer cannot
// reach the terminal as a control sequence. The shell blocks that parse
// are numbered [1], [2], ... in the margin and returned in that order, for
// the person to pick one to run through the normal review. Without colour
// the layout is the same and no escape code is written; inline code keeps
// its backticks.
func (st *styles) markdown(md string, width int) (string, []planner.Snippet) {
	if width <= 0 {
		width = 80
	}
	width = min(width, 100)
	r := mdRenderer{st: st, re: newMDPatterns(), width: width}
	md = strings.NewReplacer("\r\n", "\n", "\t", "    ").Replace(md)
	r.render(effects.EscapeText(md))
	return strings.TrimRight(r.out.String(), "\n") + "\n", r.snippets
}

type mdRenderer struct {
	st       *styles
	re       *mdPatterns
	width    int
	out      strings.Builder
	snippets []planner.Snippet
	para     []string // lines of the paragraph being collected
	paraKind string   // "", "quote", "item"
	item     listItem
	blank    bool // a blank line is owed before the next block
	lastItem bool // the last block written was a list item
	inTable  bool // the last line written was a table row
}

// mdPatterns are the patterns of the Markdown the renderer reads. They are
// compiled per answer (about 0.2 ms), not at package initialisation, which
// every nash start would pay.
type mdPatterns struct {
	heading, rule, item, quote, fence, code, strong, emStar, emLine, link, auto *regexp.Regexp
}

func newMDPatterns() *mdPatterns {
	return &mdPatterns{
		heading: regexp.MustCompile(`^ {0,3}(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$`),
		rule:    regexp.MustCompile(`^ {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$`),
		item:    regexp.MustCompile(`^([ \t]*)([-*+]|\d{1,9}[.)])[ \t]+(.*)$`),
		quote:   regexp.MustCompile(`^ {0,3}>[ \t]?(.*)$`),
		fence:   regexp.MustCompile("^ {0,3}(```+|~~~+)[ \t]*([^`\\s]*)"),
		code:    regexp.MustCompile("(`+)(.+?)(`+)"),
		strong:  regexp.MustCompile(`\*\*([^*\s](?:[^*]*[^*\s])?)\*\*|__([^_\s](?:[^_]*[^_\s])?)__`),
		emStar:  regexp.MustCompile(`(^|[^\w*\\])\*([^*\s](?:[^*]*[^*\s])?)\*`),
		emLine:  regexp.MustCompile(`(^|[^\w\\])_([^_\s](?:[^_]*[^_\s])?)_($|[^\w])`),
		link:    regexp.MustCompile(`\[([^\]]+)\]\(([^)\s]+)\)`),
		auto:    regexp.MustCompile(`<(https?://[^>\s]+)>`),
	}
}

type listItem struct {
	indent int    // nesting, 0 for a top-level item
	marker string // "•" or "3."
}

func (r *mdRenderer) render(text string) {
	lines := strings.Split(text, "\n")
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		r.inTable = r.inTable && strings.HasPrefix(strings.TrimSpace(line), "|")
		if m := r.re.fence.FindStringSubmatch(line); m != nil {
			r.flush()
			var body []string
			j := i + 1
			for ; j < len(lines); j++ {
				if strings.HasPrefix(strings.TrimLeft(lines[j], " "), m[1]) && strings.TrimSpace(strings.TrimLeft(strings.TrimLeft(lines[j], " "), m[1][:1])) == "" {
					break
				}
				body = append(body, lines[j])
			}
			r.code(strings.ToLower(m[2]), body)
			i = j
			continue
		}
		switch {
		case strings.TrimSpace(line) == "":
			r.flush()
		case r.re.heading.MatchString(line):
			r.flush()
			m := r.re.heading.FindStringSubmatch(line)
			h := r.inline(m[2])
			if len(m[1]) <= 2 {
				h = r.st.title.Render(h)
			} else {
				h = r.st.bold.Render(h)
			}
			r.block(ansi.Wrap(h, r.width, ""))
		case r.re.rule.MatchString(line):
			r.flush()
			r.block(r.st.dim.Render(strings.Repeat("─", min(r.width, 40))))
		case r.re.item.MatchString(line) && (r.paraKind != "" || len(r.para) == 0 || !r.isOrdered(line)):
			r.flush()
			m := r.re.item.FindStringSubmatch(line)
			marker := m[2]
			if marker == "-" || marker == "*" || marker == "+" {
				marker = "•"
			} else {
				marker = strings.TrimRight(marker, ".)") + "."
			}
			r.item = listItem{indent: indentWidth(m[1]) / 2, marker: marker}
			r.paraKind, r.para = "item", []string{strings.TrimSpace(m[3])}
		case r.re.quote.MatchString(line) && (r.paraKind == "quote" || len(r.para) == 0):
			if r.paraKind != "quote" {
				r.flush()
			}
			r.paraKind = "quote"
			r.para = append(r.para, r.re.quote.FindStringSubmatch(line)[1])
		case strings.HasPrefix(strings.TrimSpace(line), "|"):
			// A table: kept as written, which reads well in a fixed font.
			r.flush()
			if r.blank && !r.inTable {
				r.out.WriteString("\n")
			}
			r.out.WriteString(strings.TrimRight(line, " ") + "\n")
			r.blank, r.lastItem, r.inTable = true, false, true
			continue
		default:
			if r.paraKind == "quote" {
				r.flush()
			}
			r.para = append(r.para, strings.TrimSpace(line))
		}
	}
	r.flush()
}

// isOrdered reports a line starting "2025. " or similar, which inside a
// paragraph continues it rather than starting a list.
func (r *mdRenderer) isOrdered(line string) bool {
	m := r.re.item.FindStringSubmatch(line)
	return m != nil && m[2][0] >= '0' && m[2][0] <= '9'
}

func indentWidth(s string) int { return len(strings.ReplaceAll(s, "\t", "    ")) }

// block writes a block, after a blank line when one is owed.
func (r *mdRenderer) block(s string) {
	if r.blank {
		r.out.WriteString("\n")
	}
	r.out.WriteString(s)
	r.out.WriteString("\n")
	r.blank, r.lastItem = true, false
}

// flush writes the paragraph, quote or list item collected so far.
func (r *mdRenderer) flush() {
	if len(r.para) == 0 {
		r.paraKind = ""
		return
	}
	text := r.inline(strings.Join(r.para, " "))
	switch r.paraKind {
	case "item":
		pad := strings.Repeat("  ", r.item.indent)
		head := pad + r.item.marker + " "
		hang := strings.Repeat(" ", ansi.StringWidth(head))
		wrapped := ansi.Wrap(text, max(r.width-len(hang), 20), "")
		lines := strings.Split(wrapped, "\n")
		for i := range lines {
			if i == 0 {
				lines[i] = head + lines[i]
			} else {
				lines[i] = hang + lines[i]
			}
		}
		// The items of a list follow each other without blank lines.
		if r.lastItem {
			r.out.WriteString(strings.Join(lines, "\n") + "\n")
		} else {
			r.block(strings.Join(lines, "\n"))
		}
		r.lastItem = true
	case "quote":
		bar := r.st.dim.Render("│") + " "
		lines := strings.Split(ansi.Wrap(text, max(r.width-2, 20), ""), "\n")
		for i := range lines {
			lines[i] = bar + lines[i]
		}
		r.block(strings.Join(lines, "\n"))
	default:
		r.block(ansi.Wrap(text, r.width, ""))
	}
	r.para, r.paraKind = nil, ""
}

// code writes a fenced block: shell code highlighted, numbered when it is
// a snippet that can be run, other code dimmed; indented four columns.
func (r *mdRenderer) code(lang string, body []string) {
	src := strings.Join(body, "\n")
	var label string
	if snips := planner.Snippets("```" + lang + "\n" + src + "\n```"); len(snips) == 1 {
		r.snippets = append(r.snippets, snips[0])
		label = "[" + strconv.Itoa(len(r.snippets)) + "]"
	}
	shell := false
	switch lang {
	case "", "sh", "bash", "shell", "console", "zsh", "shell-session", "shellsession":
		shell = true
	}
	var b strings.Builder
	for i, l := range body {
		if i > 0 {
			b.WriteString("\n")
		}
		prefix := "    "
		if i == 0 && label != "" {
			prefix = r.st.bold.Render(label) + strings.Repeat(" ", max(4-len(label), 1))
		}
		b.WriteString(prefix)
		if shell {
			b.WriteString(r.st.highlight(l))
		} else {
			b.WriteString(r.st.dim.Render(l))
		}
	}
	if len(body) == 0 {
		return
	}
	r.block(b.String())
}

// inline renders code spans, strong and emphasised text and links of one
// paragraph. Text inside code spans is left as written.
func (r *mdRenderer) inline(s string) string {
	var b strings.Builder
	for s != "" {
		loc := r.re.code.FindStringSubmatchIndex(s)
		if loc == nil || s[loc[2]:loc[3]] != s[loc[6]:loc[7]] {
			b.WriteString(r.prose(s))
			break
		}
		b.WriteString(r.prose(s[:loc[0]]))
		code := strings.TrimSpace(s[loc[4]:loc[5]])
		if r.st.color {
			b.WriteString(r.st.cmd.Render(code))
		} else {
			b.WriteString("`" + code + "`")
		}
		s = s[loc[1]:]
	}
	return b.String()
}

// prose renders emphasis and links in text with no code span.
func (r *mdRenderer) prose(s string) string {
	s = r.re.link.ReplaceAllStringFunc(s, func(m string) string {
		p := r.re.link.FindStringSubmatch(m)
		if p[1] == p[2] {
			return p[2]
		}
		return p[1] + " " + r.st.dim.Render("("+p[2]+")")
	})
	s = r.re.auto.ReplaceAllString(s, "$1")
	s = r.re.strong.ReplaceAllStringFunc(s, func(m string) string {
		p := r.re.strong.FindStringSubmatch(m)
		return r.st.bold.Render(p[1] + p[2])
	})
	italic := r.st.italic
	s = r.re.emStar.ReplaceAllStringFunc(s, func(m string) string {
		p := r.re.emStar.FindStringSubmatch(m)
		return p[1] + italic.Render(p[2])
	})
	s = r.re.emLine.ReplaceAllStringFunc(s, func(m string) string {
		p := r.re.emLine.FindStringSubmatch(m)
		return p[1] + italic.Render(p[2]) + p[3]
	})
	return strings.NewReplacer(`\*`, "*", `\_`, "_", "\\`", "`", `\#`, "#").Replace(s)
}
