package planner

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/nash-shell/nash/effects"
)

// Bounds on how much of a report goes into a prompt.
const (
	maxReportCommands = 30
	maxReportPaths    = 40
	maxReportFindings = 20
)

// reportSummary renders a static report for a prompt: risk, commands,
// paths and findings, with names escaped and long lists cut.
func reportSummary(r *effects.Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Risk: %s; network: %s; runs as another user: %s; cannot be undone by the sandbox: %s",
		r.Risk, yesNo(r.Network), yesNo(r.Privileged), yesNo(r.Irreversible))
	b.WriteString("\nCommands:")
	for i, c := range r.Commands {
		if i == maxReportCommands {
			fmt.Fprintf(&b, "\n  (and %d more)", len(r.Commands)-i)
			break
		}
		line := effects.Escape(c.Name)
		for _, a := range c.Args {
			line += " " + effects.Escape(a)
		}
		fmt.Fprintf(&b, "\n  line %d: %s", c.Line, oneLine(line, 160))
		if len(c.Via) > 0 {
			fmt.Fprintf(&b, " (via %s)", strings.Join(c.Via, ", "))
		}
	}
	if len(r.Commands) == 0 {
		b.WriteString(" none")
	}
	b.WriteString("\nPaths:")
	for i, p := range r.Paths {
		if i == maxReportPaths {
			fmt.Fprintf(&b, "\n  (and %d more)", len(r.Paths)-i)
			break
		}
		var flags []string
		if p.Recursive {
			flags = append(flags, "recursive")
		}
		if p.Glob {
			flags = append(flags, "glob")
		}
		if p.Dynamic {
			flags = append(flags, "known only at run time")
		}
		fmt.Fprintf(&b, "\n  %s %s by %s", p.Access, oneLine(effects.Escape(p.Path), 160), effects.Escape(p.Command))
		if len(flags) > 0 {
			fmt.Fprintf(&b, " (%s)", strings.Join(flags, ", "))
		}
	}
	if len(r.Paths) == 0 {
		b.WriteString(" none")
	}
	if len(r.Findings) > 0 {
		b.WriteString("\nFindings:")
		for i, f := range r.Findings {
			if i == maxReportFindings {
				fmt.Fprintf(&b, "\n  (and %d more)", len(r.Findings)-i)
				break
			}
			fmt.Fprintf(&b, "\n  %s (%s): %s", f.Kind, f.Risk, oneLine(f.Reason, 200))
		}
	}
	return b.String()
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// parseExplanation reads the model's explanation; prose that is not the
// JSON asked for becomes the summary.
func parseExplanation(raw string) (*Explanation, error) {
	text := strings.TrimSpace(raw)
	if text == "" {
		return nil, fmt.Errorf("explain: %w", ErrEmptyAnswer)
	}
	var v struct {
		Summary  string   `json:"summary"`
		Steps    []Step   `json:"steps"`
		Warnings []string `json:"warnings"`
	}
	for _, c := range jsonCandidates(text) {
		if json.Unmarshal([]byte(c), &v) == nil && (v.Summary != "" || len(v.Steps) > 0) {
			return &Explanation{Summary: v.Summary, Steps: v.Steps, Warnings: v.Warnings}, nil
		}
	}
	return &Explanation{Summary: text}, nil
}
