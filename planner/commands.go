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
