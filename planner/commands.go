package planner

import "strings"

// Command describes one of nash's own commands, so the model can use it in
// a script. A description goes into a prompt only when the request uses
// one of its Triggers. nash makes them from its command tree (Usage and
// Description: its usage line and one-line help, so they cannot go stale)
// and from Triggers; a planner given none describes no nash command.
type Command struct {
	Usage       string   // "nash undo [ID] [PATH...] [--force] [--json]"
	Description string   // one line
	Triggers    []string // lower-case words or phrases that call for it
}

// Triggers returns, by the name of a nash command, the lower-case words
// and phrases of a request that call for its description.
func Triggers() map[string][]string {
	return map[string][]string{
		"find":     {"about", "mention", "contain", "related to", "regarding", "discuss", "topic", "semantic", "similar to", "find files that", "documents that"},
		"undo":     {"undo", "revert", "roll back", "rollback", "restore", "put back", "bring back", "recover"},
		"log":      {"log", "history of", "what did i", "what changed", "transactions", "last change", "recent changes", "when did"},
		"show":     {"show transaction", "what did", "changes of", "details of"},
		"forget":   {"forget", "drop undo", "free space"},
		"group":    {"group", "gather", "collect", "organize", "organise", "put together", "put all", "sort them into", "sort into", "into one folder", "into a folder", "into one directory", "into a directory", "file them", "bundle"},
		"join":     {"join", "concatenate", "concat", "combine", "merge", "append", "glue", "stitch", "into one file", "into a single file", "single file"},
		"lock":     {"lock", "protect", "read-only", "readonly", "write-protect", "freeze", "prevent changes", "keep safe", "safe from", "don't let", "do not let", "nobody changes", "no one changes"},
		"unlock":   {"unlock", "unprotect", "unfreeze", "make writable", "writable again", "allow changes", "no longer locked", "no longer protected"},
		"history":  {"history", "versions", "earlier version", "previous version", "older version", "old version", "version of", "how did", "used to look", "used to say"},
		"rollback": {"roll back", "rollback", "roll it back", "revert", "restore", "go back to", "back to version", "earlier version", "previous version", "older version", "old version", "as it was", "version from", "from yesterday", "yesterday's", "last week's"},
		"share":    {"share", "sharing", "link to", "link for", "download link", "send a link", "send them a link", "url for", "url to", "let someone download", "let them download", "give access", "publish", "revoke"},
		// Not "serve" alone: it would match every "server".
		"serve": {"nash serve", "serve files", "serve the", "serve it", "serve them", "serving", "share", "sharing", "download link"},
		"gc":    {"garbage", "gc", "free space", "clean up undo", "disk space used by nash"},
	}
}

// selectCommands returns the commands whose triggers appear in prompt.
func selectCommands(prompt string, cmds []Command) []Command {
	l := " " + strings.Join(strings.Fields(strings.ToLower(prompt)), " ") + " "
	var out []Command
	for _, c := range cmds {
		for _, t := range c.Triggers {
			if containsWord(l, t) {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// containsWord reports whether phrase occurs in l starting at a word
// boundary (l is padded with spaces). A phrase may match a longer word
// ("mention" matches "mentions").
func containsWord(l, phrase string) bool {
	for i := 0; ; {
		j := strings.Index(l[i:], phrase)
		if j < 0 {
			return false
		}
		at := i + j
		if at > 0 && isWordByte(l[at-1]) {
			i = at + 1
			continue
		}
		return true
	}
}

func isWordByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '_'
}
