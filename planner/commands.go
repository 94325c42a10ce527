package planner

import "strings"

// Command describes one of nash's own commands, so the model can use it in
// a script. A description goes into a prompt only when the request uses
// one of its Triggers.
type Command struct {
	Usage       string   // "nash undo [ID] [PATH...]"
	Description string   // one line
	Triggers    []string // lower-case words or phrases that call for it
}

// DefaultCommands returns the descriptions of nash's built-in commands.
func DefaultCommands() []Command {
	return []Command{
		{
			Usage:       `nash find [-k N] "QUERY"`,
			Description: "print paths of files whose contents match QUERY by meaning or keyword (the semantic index), best first",
			Triggers:    []string{"about", "mention", "contain", "related to", "regarding", "discuss", "topic", "semantic", "similar to", "find files that", "documents that"},
		},
		{
			Usage:       "nash undo [ID] [PATH...]",
			Description: "undo a committed transaction (the last one without ID), whole or only the given paths",
			Triggers:    []string{"undo", "revert", "roll back", "rollback", "restore", "put back", "bring back", "recover"},
		},
		{
			Usage:       "nash log [-n N] [PATH]",
			Description: "list committed transactions, newest first, optionally only those that touched PATH",
			Triggers:    []string{"log", "history of", "what did i", "what changed", "transactions", "last change", "recent changes", "when did"},
		},
		{
			Usage:       "nash show ID",
			Description: "show one transaction: its request, script and the files it changed",
			Triggers:    []string{"show transaction", "what did", "changes of", "details of"},
		},
		{
			Usage:       "nash forget ID",
			Description: "drop the undo data of a transaction (it can no longer be undone)",
			Triggers:    []string{"forget", "drop undo", "free space"},
		},
		{
			Usage:       `nash group --by keyword|semantic "QUERY" --into DIR [--dir D] [--link] --yes`,
			Description: "move (with --link: symlink) the indexed files matching QUERY into DIR, suffixing clashing names, as one undoable transaction",
			Triggers:    []string{"group", "gather", "collect", "organize", "organise", "put together", "put all", "sort them into", "sort into", "into one folder", "into a folder", "into one directory", "into a directory", "file them", "bundle"},
		},
		{
			Usage:       "nash join A B [--into C] --yes",
			Description: "concatenate A and B into a new file C, or without --into append B to A and remove B, as one undoable transaction",
			Triggers:    []string{"join", "concatenate", "concat", "combine", "merge", "append", "glue", "stitch", "into one file", "into a single file", "single file"},
		},
		{
			Usage:       "nash lock PATH...",
			Description: "make files read-only and refuse any nash commit or undo that would change them",
			Triggers:    []string{"lock", "protect", "read-only", "readonly", "write-protect", "freeze", "prevent changes", "keep safe", "safe from", "don't let", "do not let", "nobody changes", "no one changes"},
		},
		{
			Usage:       "nash unlock PATH...",
			Description: "give locked files their write permission back, so commits may change them again",
			Triggers:    []string{"unlock", "unprotect", "unfreeze", "make writable", "writable again", "allow changes", "no longer locked", "no longer protected"},
		},
		{
			Usage:       "nash history PATH",
			Description: "list the versions of a file that nash knows (its transactions and changes seen by the watcher), with numbers and dates",
			Triggers:    []string{"history", "versions", "earlier version", "previous version", "older version", "old version", "version of", "how did", "used to look", "used to say"},
		},
		{
			Usage:       "nash rollback PATH (--to-version N | --to-date DATE | --back N) --yes",
			Description: "restore an earlier version of a file by its number from nash history, by date, or N versions back, as one undoable transaction",
			Triggers:    []string{"roll back", "rollback", "roll it back", "revert", "restore", "go back to", "back to version", "earlier version", "previous version", "older version", "old version", "as it was", "version from", "from yesterday", "yesterday's", "last week's"},
		},
		{
			Usage:       "nash share PATH [--for DURATION] | nash share --list | nash share --revoke TOKEN",
			Description: "print a link that lets others download PATH from nash serve until it expires (default 3d); --list shows the links, --revoke ends one",
			Triggers:    []string{"share", "sharing", "link to", "link for", "download link", "send a link", "send them a link", "url for", "url to", "let someone download", "let them download", "give access", "publish", "revoke"},
		},
		{
			Usage:       "nash serve [--addr HOST:PORT]",
			Description: "run the HTTP server that serves the shared links (loopback only unless --addr says otherwise)",
			// Not "serve" alone: it would match every "server".
			Triggers: []string{"nash serve", "serve files", "serve the", "serve it", "serve them", "serving", "share", "sharing", "download link"},
		},
		{
			Usage:       "nash gc [--older-than DURATION]",
			Description: "delete undo data older than DURATION to free space",
			Triggers:    []string{"garbage", "gc", "free space", "clean up undo", "disk space used by nash"},
		},
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
