package sandbox

import "github.com/nash-shell/nash/effects"

// committedTools keeps, of the paths the caller calls tools' own files,
// those the commit changed (all of them, unless paths were picked).
func committedTools(tools []string, cs *effects.ChangeSet) []string {
	if len(tools) == 0 || cs == nil {
		return nil
	}
	in := make(map[string]bool, len(cs.Changes))
	for _, c := range cs.Changes {
		in[c.Path] = true
	}
	var out []string
	for _, p := range tools {
		if in[p] {
			out = append(out, p)
		}
	}
	return out
}
