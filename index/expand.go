package index

import "strings"

// synonymGroups are small sets of words people use for the same thing when
// looking for files. Without an embedder, a semantic request is answered by
// keyword search over the query's words plus these.
var synonymGroups = [][]string{
	{"picture", "photo", "image", "img", "screenshot", "jpeg", "png"},
	{"movie", "video", "film", "clip"},
	{"song", "music", "audio", "track", "mp3"},
	{"invoice", "bill", "receipt", "payment"},
	{"tax", "taxes", "irs", "return", "deduction"},
	{"salary", "payslip", "payroll", "wage", "income"},
	{"contract", "agreement", "lease"},
	{"resume", "cv", "curriculum"},
	{"letter", "correspondence", "mail", "email"},
	{"note", "notes", "memo", "journal"},
	{"todo", "task", "checklist"},
	{"meeting", "minutes", "agenda"},
	{"report", "summary", "analysis"},
	{"presentation", "slides", "deck"},
	{"spreadsheet", "table", "csv", "sheet"},
	{"doc", "document", "documentation", "manual", "guide", "readme"},
	{"config", "configuration", "settings", "preferences", "options"},
	{"log", "logs", "journal", "trace"},
	{"error", "failure", "bug", "crash", "exception"},
	{"test", "tests", "spec", "check"},
	{"build", "compile", "make"},
	{"delete", "remove", "erase", "rm"},
	{"copy", "duplicate", "cp"},
	{"move", "rename", "mv"},
	{"archive", "compress", "zip", "tar", "backup"},
	{"download", "fetch", "get"},
	{"network", "net", "internet", "http", "web"},
	{"password", "credential", "secret", "key"},
	{"disk", "drive", "storage", "partition", "filesystem"},
	{"process", "job", "task", "pid"},
	{"user", "account", "login"},
	{"search", "find", "locate", "grep", "query"},
	{"edit", "modify", "change", "update"},
	{"show", "display", "print", "list", "view"},
	{"start", "launch", "run", "execute"},
	{"stop", "kill", "terminate", "end"},
	{"recipe", "cooking", "food"},
	{"travel", "trip", "flight", "hotel", "booking"},
	{"medical", "health", "doctor", "prescription"},
	{"bank", "statement", "account", "finance"},
	{"car", "vehicle", "insurance"},
	{"house", "home", "rent", "mortgage"},
	{"code", "source", "program", "script"},
	{"paper", "article", "publication", "thesis"},
}

// synonymsOf returns the words sharing a group with w, excluding w.
func synonymsOf(w string) []string {
	w = strings.ToLower(w)
	var out []string
	for _, g := range synonymGroups {
		for _, s := range g {
			if s == w {
				for _, o := range g {
					if o != w {
						out = append(out, o)
					}
				}
				break
			}
		}
	}
	return out
}

// expandClauses adds the synonyms of each plain scored word as extra
// scored words that weigh less than the person's own.
func expandClauses(clauses []Clause) []Clause {
	out := append([]Clause(nil), clauses...)
	have := map[string]bool{}
	for _, c := range clauses {
		have[strings.ToLower(c.Text)] = true
	}
	for _, c := range clauses {
		if c.Occur != Should || c.Field != "" || c.Phrase || c.Group != nil {
			continue
		}
		for _, w := range strings.Fields(c.Text) {
			for _, s := range synonymsOf(w) {
				if !have[s] {
					have[s] = true
					out = append(out, Clause{Text: s, weight: boostExpand})
				}
			}
		}
	}
	return out
}
