package shell

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/internal/size"
	"github.com/nash-shell/nash/planner"
	"github.com/nash-shell/nash/sandbox"
	"github.com/nash-shell/nash/sandbox/egress"
)

// styles holds every style the shell draws with. Without colour every
// style is the zero style, which renders its text unchanged, so line mode
// and NO_COLOR write no escape codes at all. With colour the styles are
// 256-colour; the REPL's renderer brings them down to what the terminal
// shows.
type styles struct {
	color                                    bool
	dim, bold, keyword, str, variable, cmd   lipgloss.Style
	err, ok, warn, title, add, del, hunk     lipgloss.Style
	italic                                   lipgloss.Style
	routeCmd, routeEng, routeBuiltin, prompt lipgloss.Style
	risk                                     [6]lipgloss.Style
}

func newStyles(color bool) *styles {
	if !color {
		// Every style plain: Render returns its text unchanged.
		return &styles{}
	}
	c := func(s string) lipgloss.Style { return lipgloss.NewStyle().Foreground(lipgloss.Color(s)) }
	st := &styles{
		color:        true,
		dim:          c("245"),
		bold:         lipgloss.NewStyle().Bold(true),
		italic:       lipgloss.NewStyle().Italic(true),
		keyword:      c("170").Bold(true),
		str:          c("114"),
		variable:     c("80"),
		cmd:          c("75").Bold(true),
		err:          c("203").Bold(true),
		ok:           c("114"),
		warn:         c("214").Bold(true),
		title:        lipgloss.NewStyle().Bold(true).Underline(true),
		add:          c("114"),
		del:          c("203"),
		hunk:         c("80"),
		routeCmd:     c("75").Bold(true),
		routeEng:     c("170").Bold(true),
		routeBuiltin: c("214").Bold(true),
		prompt:       c("245"),
	}
	badge := func(bg string) lipgloss.Style {
		return lipgloss.NewStyle().Background(lipgloss.Color(bg)).Foreground(lipgloss.Color("16")).Bold(true)
	}
	// One per effects.Risk, from read-only to cannot-undo.
	st.risk = [6]lipgloss.Style{badge("114"), badge("80"), badge("75"), badge("214"), badge("203"), badge("196")}
	return st
}

// badge is the risk as a label: [DELETES] and so on.
func (st *styles) badge(r effects.Risk) string {
	label := " " + strings.ToUpper(r.String()) + " "
	if !st.color {
		label = "[" + strings.ToUpper(r.String()) + "]"
	}
	if r < 0 || int(r) >= len(st.risk) {
		return label
	}
	return st.risk[r].Render(label)
}

// isShellKeyword reports whether w is one of bash's reserved words.
func isShellKeyword(w string) bool {
	switch w {
	case "if", "then", "else", "elif", "fi", "for", "in", "do", "done", "while", "until", "case", "esac", "function", "select", "time", "!", "{", "}":
		return true
	}
	return false
}

// highlight colours an escaped script: comments, strings, variables,
// keywords and the word in command position. The text must already be
// escaped (effects.EscapeText); highlight only adds styling.
func (st *styles) highlight(script string) string {
	if !st.color {
		return script
	}
	var out strings.Builder
	for i, line := range strings.Split(script, "\n") {
		if i > 0 {
			out.WriteByte('\n')
		}
		out.WriteString(st.highlightLine(line))
	}
	return out.String()
}

func (st *styles) highlightLine(line string) string {
	var out strings.Builder
	cmdPos := true
	i := 0
	for i < len(line) {
		c := line[i]
		switch {
		case c == '#' && (i == 0 || line[i-1] == ' ' || line[i-1] == '\t'):
			out.WriteString(st.dim.Render(line[i:]))
			return out.String()
		case c == '\'' || c == '"':
			j := i + 1
			for j < len(line) && line[j] != c {
				if c == '"' && line[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(line))
			out.WriteString(st.str.Render(line[i:j]))
			i, cmdPos = j, false
		case c == '$':
			j := i + 1
			if j < len(line) && (line[j] == '{' || line[j] == '(') {
				closer := byte('}')
				if line[j] == '(' {
					closer = ')'
				}
				for j < len(line) && line[j] != closer {
					j++
				}
				j = min(j+1, len(line))
			} else {
				for j < len(line) && (isLetter(line[j]) || line[j] == '_' || line[j] >= '0' && line[j] <= '9' || j == i+1 && strings.IndexByte("?@*#!$-", line[j]) >= 0) {
					j++
				}
			}
			out.WriteString(st.variable.Render(line[i:j]))
			i, cmdPos = j, false
		case c == ' ' || c == '\t':
			out.WriteByte(c)
			i++
		case strings.IndexByte(";|&()", c) >= 0:
			out.WriteByte(c)
			i++
			cmdPos = true
		default:
			j := i
			for j < len(line) && strings.IndexByte(" \t;|&()'\"$", line[j]) < 0 {
				j++
			}
			w := line[i:j]
			switch {
			case isShellKeyword(w):
				out.WriteString(st.keyword.Render(w))
				cmdPos = true
			case cmdPos && !strings.Contains(w, "="):
				out.WriteString(st.cmd.Render(w))
				cmdPos = false
			default:
				out.WriteString(w)
			}
			i = j
		}
	}
	return out.String()
}

// confirmReason says why a report needs a second confirmation, or "":
// the script deletes outside dir, or does what the sandbox cannot undo,
// or cannot be analysed at all. --yes never gives this confirmation.
func confirmReason(rep *effects.Report, dir string) string {
	if rep == nil {
		return ""
	}
	for _, f := range rep.Findings {
		if f.Kind == "unparsed" {
			return "nash cannot tell what it does: " + f.Reason
		}
	}
	var outside []string
	for _, p := range rep.Paths {
		if p.Access == effects.Delete && (p.Dynamic || !under(p.Path, dir)) {
			outside = append(outside, effects.Quote(p.Path))
		}
	}
	switch {
	case len(outside) > 0 && rep.Irreversible:
		return "it deletes outside " + effects.Quote(dir) + " (" + strings.Join(outside, ", ") + ") and does things the sandbox cannot undo"
	case len(outside) > 0:
		return "it deletes outside " + effects.Quote(dir) + ": " + strings.Join(outside, ", ")
	case rep.Host() == effects.HostActs:
		return "it signals processes on the host, which cannot be undone"
	case rep.Irreversible || rep.Risk >= effects.CannotUndo:
		return "it does things the sandbox cannot undo"
	}
	return ""
}

// under reports whether p is below dir. A relative path counts as
// outside: where it lands is not known.
func under(p, dir string) bool {
	if !filepath.IsAbs(p) {
		return false
	}
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && rel != "."
}

// writeReview writes the script, its explanation, the static report and
// the revise diff, for review.
func writeReview(w io.Writer, st *styles, a *planner.Artifact, width int) {
	fmt.Fprintln(w, st.title.Render("script"))
	lines := strings.Split(strings.TrimRight(effects.EscapeText(a.Script), "\n"), "\n")
	for i, l := range lines {
		fmt.Fprintf(w, "%s  %s\n", st.dim.Render(fmt.Sprintf("%3d", i+1)), st.highlightLine(l))
	}
	if strings.TrimSpace(a.Explanation) != "" {
		fmt.Fprintln(w, st.title.Render("explanation"))
		fmt.Fprintln(w, indentText(effects.EscapeText(strings.TrimSpace(a.Explanation))))
	}
	if a.Diff != "" {
		fmt.Fprintln(w, st.title.Render("changes from the previous script"))
		for _, l := range strings.Split(strings.TrimRight(effects.EscapeText(a.Diff), "\n"), "\n") {
			fmt.Fprintln(w, "  "+st.diffLine(l))
		}
	}
	if a.Report != nil {
		fmt.Fprintln(w, st.title.Render("what it will do")+"  "+st.badge(a.Report.Risk))
		var b bytes.Buffer
		_ = effects.WriteReport(&b, a.Report, effects.SummaryOptions{Width: width - 2})
		fmt.Fprint(w, indentText(strings.TrimRight(b.String(), "\n"))+"\n")
	}
	if a.NeedsNetwork {
		fmt.Fprintln(w, st.warn.Render("the planner says this script needs the network; it gets it"))
	}
	if u := usageLine(a.Usage); u != "" {
		fmt.Fprintln(w, st.dim.Render("model: "+u))
	}
}

func (st *styles) diffLine(l string) string {
	switch {
	case strings.HasPrefix(l, "+++") || strings.HasPrefix(l, "---"):
		return st.bold.Render(l)
	case strings.HasPrefix(l, "+"):
		return st.add.Render(l)
	case strings.HasPrefix(l, "-"):
		return st.del.Render(l)
	case strings.HasPrefix(l, "@@"):
		return st.hunk.Render(l)
	}
	return l
}

// writeExplanation writes a step-by-step explanation.
func writeExplanation(w io.Writer, st *styles, e *planner.Explanation) {
	fmt.Fprintln(w, st.title.Render("explanation"))
	if e.Summary != "" {
		fmt.Fprintln(w, indentText(effects.EscapeText(strings.TrimSpace(e.Summary))))
	}
	for _, s := range e.Steps {
		fmt.Fprintf(w, "  %s\n", st.cmd.Render(effects.EscapeLine(strings.TrimSpace(s.Code))))
		fmt.Fprintf(w, "      %s\n", effects.EscapeLine(strings.TrimSpace(s.Explanation)))
	}
	for _, warn := range e.Warnings {
		fmt.Fprintf(w, "  %s %s\n", st.warn.Render("warning:"), effects.EscapeLine(warn))
	}
	if u := usageLine(e.Usage); u != "" {
		fmt.Fprintln(w, st.dim.Render("model: "+u))
	}
}

// writeOutcome writes the effect summary of a run and its surprises.
func writeOutcome(w io.Writer, st *styles, o *outcome, width int, home string) {
	p := o.pending
	if len(p.Unprotected) > 0 {
		fmt.Fprintln(w, st.err.Render("these paths were NOT protected and were changed live: ")+quoteAll(p.Unprotected))
	}
	if p.ScratchFull > 0 {
		fmt.Fprintln(w, st.warn.Render(fmt.Sprintf("the script filled its scratch space (%d MiB): what it wrote outside the working directory beyond that failed with \"No space left on device\"; sandbox.scratch_size in the config allows more", p.ScratchFull>>20)))
	}
	for _, l := range p.Unlimited {
		fmt.Fprintln(w, st.warn.Render("this system could not cap the run's "+l))
	}
	if p.Changes == nil || p.Changes.Len() == 0 {
		writeNetwork(w, st, p)
		return
	}
	own := o.own
	if own == nil {
		own = p.Changes
	}
	var b bytes.Buffer
	if own.Len() > 0 {
		_ = effects.WriteSummary(&b, own, effects.SummaryOptions{Width: width, Home: home})
		fmt.Fprint(w, b.String())
	}
	if o.tools != nil && o.tools.Len() > 0 {
		fmt.Fprintln(w, st.dim.Render(toolsLine(o, home)))
	}
	if o.report != nil {
		s := effects.Compare(o.report, own)
		if len(s.Unpredicted) > 0 {
			b.Reset()
			_ = effects.WriteSurprises(&b, effects.Surprises{Unpredicted: s.Unpredicted}, effects.SummaryOptions{Width: width, Home: home})
			fmt.Fprint(w, st.warn.Render(strings.TrimRight(b.String(), "\n"))+"\n")
		}
		if len(s.Missed) > 0 {
			b.Reset()
			_ = effects.WriteSurprises(&b, effects.Surprises{Missed: s.Missed}, effects.SummaryOptions{Width: width, Home: home})
			fmt.Fprint(w, st.dim.Render(strings.TrimRight(b.String(), "\n"))+"\n")
		}
	}
	writeNetwork(w, st, p)
}

// toolsLine lists the tools' own files a run changed, for the summary.
func toolsLine(o *outcome, home string) string {
	const most = 4
	var names []string
	for _, c := range o.tools.Changes {
		if len(names) == most {
			names = append(names, fmt.Sprintf("and %d more", o.tools.Len()-most))
			break
		}
		names = append(names, tildePath(c.Path, home))
	}
	return fmt.Sprintf("and tools' own files (%s), committed with the run: %s", strings.Join(o.toolNames, ", "), strings.Join(names, ", "))
}

// autoLine is the one line that says what a typed command's commit
// changed: "modified essay.txt · transaction 7 · :undo".
func autoLine(o *outcome, txID, undo string, home string) string {
	var what string
	switch n := o.own.Len(); n {
	case 1:
		c := o.own.Changes[0]
		what = kindVerb(c.Kind) + " " + relPath(c.Path, o.dir, home)
	default:
		what = fmt.Sprintf("%d changes", n)
	}
	if len(o.toolNames) > 0 {
		what += " · and tools' own files (" + strings.Join(o.toolNames, ", ") + ")"
	}
	return what + " · transaction " + txID + " · " + undo
}

// kindVerb is how a one-change line says what happened to the path.
func kindVerb(k effects.Kind) string {
	switch k {
	case effects.Created:
		return "created"
	case effects.Modified:
		return "modified"
	case effects.Deleted:
		return "deleted"
	case effects.Renamed:
		return "renamed"
	case effects.TypeChanged:
		return "replaced"
	}
	return "changed"
}

// relPath shows p relative to dir when below it, else with ~ for home;
// escaped and quoted as needed.
func relPath(p, dir, home string) string {
	if under(p, dir) {
		if rel, err := filepath.Rel(dir, p); err == nil {
			return effects.Quote(rel)
		}
	}
	return tildePath(p, home)
}

func quoteAll(ps []string) string {
	q := make([]string, len(ps))
	for i, p := range ps {
		q[i] = effects.Quote(p)
	}
	return strings.Join(q, ", ")
}

func indentText(s string) string {
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}

// writeNetwork shows what a run tried to reach, after its effect summary.
// It writes nothing for a run that tried nothing.
func writeNetwork(w io.Writer, st *styles, p *sandbox.Pending) {
	if p.NetworkError != "" {
		fmt.Fprintln(w, st.warn.Render("network: NOT watched ("+effects.EscapeLine(p.NetworkError)+"): the run had its own loopback only"))
	}
	if len(p.Network) == 0 {
		return
	}
	denied := 0
	for _, c := range p.Network {
		if !c.Allowed {
			denied++
		}
	}
	fmt.Fprintf(w, "network: %d destination(s) tried, %d denied\n", len(p.Network), denied)
	for i, c := range p.Network {
		fmt.Fprintf(w, "  %2d %s\n", i+1, NetworkLine(c))
	}
}

// NetworkLine is one destination a run tried, as nash shows it: allowed
// or denied, what was seen of it, escaped.
func NetworkLine(c egress.Contact) string {
	verdict := "denied "
	if c.Allowed {
		verdict = "allowed"
	}
	var what []string
	switch {
	case c.Proto == egress.ProtoDNS:
		what = append(what, "name looked up only")
	case c.Proto == egress.ProtoUDP:
		what = append(what, "udp")
	case c.TLS:
		what = append(what, "tls")
	case c.HTTPHost != "":
		what = append(what, "http")
	}
	if c.ViaProxy {
		what = append(what, "as a proxy request")
	}
	if c.Host != "" && c.Addr != "" {
		what = append(what, "at "+c.Addr)
	}
	if c.SNI != "" && c.SNI != c.Host {
		what = append(what, "server name "+effects.Quote(c.SNI))
	}
	if h := c.HTTPHost; h != "" && h != c.Host && h != c.Destination() && (c.Host == "" || !strings.HasPrefix(h, c.Host+":")) {
		what = append(what, "Host "+effects.Quote(c.HTTPHost))
	}
	switch {
	case c.Attempts > 1 && c.Proto == egress.ProtoDNS:
		what = append(what, strconv.Itoa(c.Attempts)+" lookups")
	case c.Attempts > 1:
		what = append(what, strconv.Itoa(c.Attempts)+" attempts")
	}
	if c.Allowed && c.Proto == egress.ProtoTCP {
		what = append(what, fmt.Sprintf("sent %s, received %s", size.Format(c.Sent), size.Format(c.Received)))
		switch {
		case c.Direct:
			what = append(what, "direct: contents not read")
		case c.TLS:
			what = append(what, "encrypted: headers not visible")
		}
		if c.Uncounted {
			what = append(what, "some bytes not counted")
		}
	}
	if len(c.Credentials) > 0 {
		sent := "credential sent: "
		if !c.Allowed {
			sent = "credential held back: "
		}
		what = append(what, sent+strings.Join(c.Credentials, ", "))
	}
	if c.Error != "" {
		what = append(what, "failed: "+c.Error)
	}
	line := verdict + "  " + effects.Quote(c.Destination())
	if len(what) > 0 {
		line += "  (" + strings.Join(what, "; ") + ")"
	}
	return effects.EscapeLine(line)
}

// writeNetOffer lists destinations a run may not reach, numbered.
func writeNetOffer(w io.Writer, q netQuestion) {
	if !q.again {
		fmt.Fprintf(w, "network: the script names %d destination(s); it reaches none unless allowed:\n", len(q.rules))
	}
	for i, r := range q.rules {
		fmt.Fprintf(w, "  %2d %s\n", i+1, effects.Quote(r.String()))
	}
}

// quoteRules quotes rules for a sentence.
func quoteRules(rules []egress.Rule) string {
	q := make([]string, len(rules))
	for i, r := range rules {
		q[i] = effects.Quote(r.String())
	}
	return strings.Join(q, ", ")
}
