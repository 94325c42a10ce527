package shell

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/scripttest"
)

// writeTestReport writes what testing a script found, for people: the
// totals; today's files first, as the run the others are compared with;
// then each starting state that failed, differs from today's run in kind,
// or could not be built, with what happened there and why; then the ones
// that passed, by title, on one line. Every name is escaped.
func writeTestReport(w io.Writer, st *styles, rep *scripttest.Report) {
	counts := map[scripttest.Verdict]int{}
	for _, v := range rep.Variants {
		counts[v.Verdict]++
	}
	var parts []string
	for _, v := range []scripttest.Verdict{scripttest.Fail, scripttest.Differs, scripttest.Pass, scripttest.NotRun} {
		if n := counts[v]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, verdictWord(v)))
		}
	}
	fmt.Fprintf(w, "%s %d starting %s in %s: %s\n", st.title.Render("tested"), len(rep.Variants),
		pluralWord(len(rep.Variants), "state", "states"), secondsText(rep.Elapsed), strings.Join(parts, ", "))
	var passed []string
	for i, v := range rep.Variants {
		if v.Verdict == scripttest.Pass && i > 0 {
			passed = append(passed, effects.EscapeLine(v.Title))
			continue
		}
		writeVariant(w, st, v)
	}
	// The ones that passed, by title, on lines of about 80 columns.
	for len(passed) > 0 {
		n, width := 1, len(passed[0])
		for n < len(passed) && width+3+len(passed[n]) <= 80-len(variantIndent) {
			width += 3 + len(passed[n])
			n++
		}
		fmt.Fprintf(w, "  %s %s\n", st.ok.Render("pass   "), strings.Join(passed[:n], st.dim.Render(" · ")))
		passed = passed[n:]
	}
}

// writeVariant writes one starting state's result: its verdict and title,
// what the script did there, and the problems and differences found.
func writeVariant(w io.Writer, st *styles, v scripttest.Result) {
	label := map[scripttest.Verdict]string{
		scripttest.Fail: st.err.Render("FAIL   "), scripttest.Differs: st.warn.Render("differs"),
		scripttest.Pass: st.ok.Render("pass   "), scripttest.NotRun: st.dim.Render("not run"),
	}[v.Verdict]
	if label == "" {
		label = effects.EscapeLine(string(v.Verdict))
	}
	fmt.Fprintf(w, "  %s %s  %s\n", label, effects.EscapeLine(v.Title), st.dim.Render("("+effects.EscapeLine(v.Name)+")"))
	indent := variantIndent
	if v.Verdict == scripttest.NotRun {
		if v.SetupError != "" {
			fmt.Fprintf(w, "%s%s\n", indent, st.dim.Render("could not be built: "+effects.EscapeLine(v.SetupError)))
		}
		return
	}
	fmt.Fprintf(w, "%s%s\n", indent, st.dim.Render(happened(v)))
	for _, p := range v.Problems {
		fmt.Fprintf(w, "%s%s\n", indent, effects.EscapeLine(p.Reason))
	}
	for _, d := range v.Differences {
		fmt.Fprintf(w, "%s%s %s\n", indent, st.warn.Render("unlike today:"), effects.EscapeLine(d.Reason))
	}
}

// variantIndent indents what is said of one result, below its verdict.
const variantIndent = "          "

// happened says what the script did in one starting state: its exit, and
// how many changes of each kind it made.
func happened(v scripttest.Result) string {
	var b strings.Builder
	if v.TimedOut {
		b.WriteString("stopped: it ran too long")
	} else {
		fmt.Fprintf(&b, "exit %d", v.ExitCode)
	}
	switch {
	case v.NumChanges == 0:
		b.WriteString(", no changes")
	case v.NumChanges > len(v.Changes):
		fmt.Fprintf(&b, ", %d changes", v.NumChanges)
	default:
		n := map[effects.Kind]int{}
		for _, c := range v.Changes {
			n[c.Kind]++
		}
		var parts []string
		for _, k := range []effects.Kind{effects.Created, effects.Modified, effects.Deleted, effects.Renamed, effects.TypeChanged, effects.MetaChanged} {
			if n[k] > 0 {
				parts = append(parts, fmt.Sprintf("%d %s", n[k], strings.ReplaceAll(string(k), "-", " ")))
			}
		}
		fmt.Fprintf(&b, ", %d %s: %s", v.NumChanges, pluralWord(v.NumChanges, "change", "changes"), strings.Join(parts, ", "))
	}
	if v.NumOutside > 0 {
		fmt.Fprintf(&b, ", %d outside the working directory", v.NumOutside)
	}
	return b.String()
}

func verdictWord(v scripttest.Verdict) string {
	switch v {
	case scripttest.Fail:
		return "fail"
	case scripttest.NotRun:
		return "not run"
	}
	return string(v)
}

// writeExampleResult writes how the script fared on example n (from 1):
// pass, or each mismatch with its diff.
func writeExampleResult(w io.Writer, st *styles, n int, res *scripttest.ExampleResult, again bool) {
	name := effects.EscapeLine(res.Example.Name)
	if name == "" {
		name = st.dim.Render("(no short form)")
	}
	which := fmt.Sprintf("example %d", n)
	if again {
		which += " (new script)"
	}
	if res.Pass {
		fmt.Fprintf(w, "  %s %s: %s\n", st.ok.Render("pass   "), which, name)
		return
	}
	fmt.Fprintf(w, "  %s %s: %s\n", st.err.Render("FAIL   "), which, name)
	for _, m := range res.Mismatches {
		fmt.Fprintf(w, "%s%s\n", variantIndent, effects.EscapeLine(mismatchLine(m)))
		if m.Diff != "" {
			for _, l := range strings.Split(strings.TrimRight(effects.EscapeText(clipText(m.Diff, maxFedOutput)), "\n"), "\n") {
				fmt.Fprintf(w, "%s  %s\n", variantIndent, st.diffLine(l))
			}
		}
	}
	if res.Example.After != nil {
		var left []string
		for _, g := range res.Got {
			left = append(left, nodeWord(g))
		}
		if len(left) == 0 {
			left = append(left, "nothing")
		}
		fmt.Fprintf(w, "%s%s %s\n", variantIndent, st.dim.Render("it left:"), strings.Join(left, " "))
	}
}

// nodeWord is an example node in the short form: a directory ends in /, a
// symlink shows its target.
func nodeWord(n scripttest.Node) string {
	switch n.Type {
	case effects.TypeDir:
		return effects.Quote(n.Path) + "/"
	case effects.TypeSymlink:
		return effects.Quote(n.Path) + "->" + effects.Quote(n.Target)
	}
	return effects.Quote(n.Path)
}

// writeFeedbackCarries says what goes to the model with a revision's
// feedback.
func writeFeedbackCarries(w io.Writer, st *styles, ev evFeedbackCarries) {
	var what []string
	if ev.examples > 0 {
		what = append(what, fmt.Sprintf("%d failing %s", ev.examples, pluralWord(ev.examples, "example", "examples")))
	}
	if ev.states > 0 {
		what = append(what, fmt.Sprintf("%d failing starting %s", ev.states, pluralWord(ev.states, "state", "states")))
	}
	verb := "go"
	if ev.examples+ev.states == 1 {
		verb = "goes"
	}
	fmt.Fprintln(w, st.dim.Render(strings.Join(what, " and ")+" "+verb+" to the model with what you type"))
}

// secondsText is d for people: 0.4 s, 12 s.
func secondsText(d time.Duration) string {
	if d < 10*time.Second {
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return fmt.Sprintf("%.0f s", d.Seconds())
}

func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
