package planner

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// staticSummary describes what a script runs and writes, read from its
// syntax tree, to ground an explanation. The script must parse.
func staticSummary(script string) string {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(script), "")
	if err != nil {
		return "(does not parse: " + err.Error() + ")"
	}
	var cmds, writes []string
	printer := syntax.NewPrinter()
	word := func(w *syntax.Word) string {
		if lit := w.Lit(); lit != "" {
			return lit
		}
		var b strings.Builder
		printer.Print(&b, w)
		return b.String()
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.CallExpr:
			if len(n.Args) > 0 {
				cmds = append(cmds, word(n.Args[0]))
			}
		case *syntax.Redirect:
			switch n.Op {
			case syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll, syntax.ClbOut:
				if n.Word != nil {
					writes = append(writes, word(n.Word))
				}
			}
		}
		return true
	})
	slices.Sort(cmds)
	cmds = slices.Compact(cmds)
	slices.Sort(writes)
	writes = slices.Compact(writes)
	var b strings.Builder
	fmt.Fprintf(&b, "Commands run: %s", orNone(cmds))
	fmt.Fprintf(&b, "\nFiles written by redirection: %s", orNone(writes))
	return b.String()
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	for i := range s {
		s[i] = oneLine(s[i], 80)
	}
	return strings.Join(s, ", ")
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
