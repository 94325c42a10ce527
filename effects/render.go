package effects

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// WriteReport writes a report for people: the risk with its reason, notes
// on network use, privilege and irreversible effects, the commands as
// written, the paths by access and every finding (with the risk it raises,
// or its kind for a note that raises none). Names are escaped, so
// the output is safe on a terminal. opts.Width cuts long lines and
// opts.MaxLines bounds each list; Home and CollapseAt are not used.
func WriteReport(w io.Writer, r *Report, opts SummaryOptions) error {
	if opts.MaxLines == 0 {
		opts.MaxLines = DefaultMaxLines
	}
	bw := bufio.NewWriter(w)
	line := func(format string, args ...any) {
		bw.WriteString(truncateEnd(fmt.Sprintf(format, args...), opts.Width))
		bw.WriteByte('\n')
	}
	reason := ""
	for _, f := range r.Findings {
		if f.Risk == r.Risk {
			reason = " (" + EscapeLine(f.Reason) + ")"
			break
		}
	}
	line("risk: %s%s", r.Risk, reason)
	var notes []string
	if r.Network {
		notes = append(notes, "uses the network")
	}
	if r.Privileged {
		notes = append(notes, "runs with privilege")
	}
	if r.Irreversible {
		notes = append(notes, "does things the sandbox cannot undo")
	}
	if len(notes) > 0 {
		line("note: %s", strings.Join(notes, ", "))
	}
	list := func(title string, n int, item func(i int)) {
		if n == 0 {
			return
		}
		line("%s:", title)
		for i := 0; i < n; i++ {
			if opts.MaxLines > 0 && i == opts.MaxLines {
				line("  ... and %s more", commas(int64(n-i)))
				return
			}
			item(i)
		}
	}
	list("commands", len(r.Commands), func(i int) {
		c := r.Commands[i]
		words := []string{Quote(c.Name)}
		for _, a := range c.Args {
			words = append(words, EscapeLine(a))
		}
		via := ""
		if len(c.Via) > 0 {
			via = "  (via " + EscapeLine(strings.Join(c.Via, ", ")) + ")"
		}
		line("  %d:%d  %s%s", c.Line, c.Col, strings.Join(words, " "), via)
	})
	list("paths", len(r.Paths), func(i int) {
		p := r.Paths[i]
		var notes []string
		if p.Recursive {
			notes = append(notes, "recursive")
		}
		if p.Glob {
			notes = append(notes, "glob")
		}
		if p.Dynamic {
			notes = append(notes, "known at run time")
		}
		note := ""
		if len(notes) > 0 {
			note = "  (" + strings.Join(notes, ", ") + ")"
		}
		line("  %-7s %s  by %s%s", Escape(string(p.Access)), Quote(p.Path), Quote(p.Command), note)
	})
	list("findings", len(r.Findings), func(i int) {
		f := r.Findings[i]
		label := f.Risk.String()
		if f.Risk == ReadOnly {
			label = Escape(f.Kind) // a note (privilege, missing), not a risk
		}
		line("  %-18s line %d: %s", label, f.Line, EscapeLine(f.Reason))
	})
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// WriteSurprises writes where a run differed from its prediction, for
// showing loudly next to the summary: the observed changes nothing
// predicted, then the predicted changes that did not happen. It writes
// nothing when s is empty. opts.Width, MaxLines and Home apply as for
// WriteSummary.
func WriteSurprises(w io.Writer, s Surprises, opts SummaryOptions) error {
	if s.Empty() {
		return nil
	}
	if opts.MaxLines == 0 {
		opts.MaxLines = DefaultMaxLines
	}
	bw := bufio.NewWriter(w)
	line := func(format string, args ...any) {
		bw.WriteString(truncateEnd(fmt.Sprintf(format, args...), opts.Width))
		bw.WriteByte('\n')
	}
	show := func(p string) string {
		home := strings.TrimSuffix(opts.Home, "/")
		if home != "" && home != "/" {
			if rest, ok := strings.CutPrefix(p, home+"/"); ok {
				return "~/" + Quote(rest)
			}
		}
		return Quote(p)
	}
	if n := len(s.Unpredicted); n > 0 {
		line("NOT PREDICTED: %s %s the script did not announce:", commas(int64(n)), plural(n, "change", "changes"))
		for i, c := range s.Unpredicted {
			if opts.MaxLines > 0 && i == opts.MaxLines {
				line("  ... and %s more", commas(int64(n-i)))
				break
			}
			verb, details := describe(item{change: &s.Unpredicted[i]})
			if details != "" {
				details = "  " + details
			}
			line("  %-9s%s%s", verb, show(c.Path), details)
		}
	}
	if n := len(s.Missed); n > 0 {
		line("predicted but not done: %s", commas(int64(n)))
		for i, p := range s.Missed {
			if opts.MaxLines > 0 && i == opts.MaxLines {
				line("  ... and %s more", commas(int64(n-i)))
				break
			}
			line("  %-7s %s  by %s (line %d)", Escape(string(p.Access)), show(p.Path), Quote(p.Command), p.Line)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write surprises: %w", err)
	}
	return nil
}
