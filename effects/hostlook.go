package effects

import (
	"slices"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// A sandbox has processes and sockets of its own: ps in it shows two
// processes, and ss an empty table. A question about the host ("what is
// using port 8080") needs the host's. HostLook tells apart the scripts
// that can be run on the host as they are, because all they do is look:
// every command is one that shows processes, sockets, services, users or
// load, or one that filters text, called with words only (no command
// substitution, no assignment, no redirection but to /dev/null), with no
// option that writes, kills or reaches the network. Anything else runs in
// the sandbox as before.

// HostLook is a script that only looks at the host, or also signals its
// processes.
type HostLook struct {
	// Script is what runs: the script, with -n added where a command
	// would otherwise look names up on the network (lsof, netstat).
	Script string
	// Looks names the commands that look at the host, in order.
	Looks []string
	// NoLookup names the commands -n was added to.
	NoLookup []string
	// Acts names the commands that signal the host's processes (kill,
	// pkill, killall): they cannot be undone, so the script runs only
	// once the person has confirmed that.
	Acts []string
	// Commands names every command, in order.
	Commands []string
}

// actCommands signal processes; with words alone they do nothing else.
var actCommands = map[string]bool{"kill": true, "pkill": true, "killall": true}

// lookCommands show the host's processes, sockets, services, users or
// load, and change nothing with any option but those refused.
var lookCommands = map[string]bool{
	"ps": true, "pgrep": true, "pidof": true, "pstree": true, "ss": true, "netstat": true, "lsof": true,
	"free": true, "uptime": true, "who": true, "w": true, "vmstat": true, "top": true, "systemctl": true,
}

// filterCommands read text and write only to their standard output, with
// any option but those refused.
var filterCommands = map[string]bool{
	"grep": true, "egrep": true, "fgrep": true, "head": true, "tail": true, "wc": true, "cut": true,
	"sort": true, "uniq": true, "tr": true, "column": true,
}

// systemctlLooks are the systemctl subcommands that only show.
var systemctlLooks = []string{"status", "show", "list-units", "list-sockets", "list-timers", "is-active", "is-enabled", "is-failed"}

// ParseHostLook returns the script as a HostLook, or false when it does
// anything but look (and signal processes).
func ParseHostLook(script string) (*HostLook, bool) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(script), "")
	if err != nil || len(f.Stmts) == 0 {
		return nil, false
	}
	h := &HostLook{}
	// Edits are insertions of " -n" after a command name, by offset.
	var inserts []int
	var ok func(s *syntax.Stmt) bool
	ok = func(s *syntax.Stmt) bool {
		if s.Background || s.Coprocess || !quietRedirects(s.Redirs) {
			return false
		}
		switch c := s.Cmd.(type) {
		case *syntax.BinaryCmd:
			switch c.Op {
			case syntax.AndStmt, syntax.OrStmt, syntax.Pipe, syntax.PipeAll:
				return ok(c.X) && ok(c.Y)
			}
			return false
		case *syntax.CallExpr:
			if len(c.Assigns) > 0 || len(c.Args) == 0 {
				return false
			}
			words := make([]string, len(c.Args))
			for i, w := range c.Args {
				lit, isLit := plainWord(w)
				if !isLit {
					return false
				}
				words[i] = lit
			}
			name, args := words[0], words[1:]
			h.Commands = append(h.Commands, name)
			switch {
			case actCommands[name]:
				h.Acts = append(h.Acts, name)
				return true
			case filterCommands[name]:
				return filterLooks(name, args)
			case lookCommands[name]:
				if !commandLooks(name, args) {
					return false
				}
				h.Looks = append(h.Looks, name)
				if (name == "lsof" || name == "netstat") && !hasNoLookup(args) {
					h.NoLookup = append(h.NoLookup, name)
					inserts = append(inserts, int(c.Args[0].End().Offset()))
				}
				return true
			}
			return false
		}
		return false
	}
	for _, s := range f.Stmts {
		if !ok(s) {
			return nil, false
		}
	}
	if len(h.Looks) == 0 && len(h.Acts) == 0 {
		return nil, false
	}
	var b strings.Builder
	last := 0
	for _, at := range inserts {
		b.WriteString(script[last:at])
		b.WriteString(" -n")
		last = at
	}
	b.WriteString(script[last:])
	h.Script = b.String()
	return h, true
}

// plainWord returns a word that is text alone (quoted or not, no
// expansion of any kind), unquoted.
func plainWord(w *syntax.Word) (string, bool) {
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, "*?[]{}~\\") {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
			b.WriteString(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				lit, ok := q.(*syntax.Lit)
				if !ok || strings.ContainsAny(lit.Value, "\\") {
					return "", false
				}
				b.WriteString(lit.Value)
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

// quietRedirects reports whether every redirection only silences or joins
// the output: >/dev/null, 2>/dev/null, &>/dev/null, 2>&1.
func quietRedirects(rs []*syntax.Redirect) bool {
	for _, r := range rs {
		word, ok := "", true
		if r.Word != nil {
			word, ok = plainWord(r.Word)
		}
		if !ok || r.Hdoc != nil {
			return false
		}
		switch r.Op {
		case syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll, syntax.RdrClob:
			if word != "/dev/null" {
				return false
			}
		case syntax.DplOut:
			if word != "1" && word != "2" {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// commandLooks reports whether a look command, with these arguments, only
// looks: it neither kills, writes a file, nor runs interactively.
func commandLooks(name string, args []string) bool {
	switch name {
	case "ss":
		// -K kills sockets, -D writes a file, -r looks names up.
		for _, a := range args {
			if a == "--kill" || a == "--resolve" || strings.HasPrefix(a, "--diag") ||
				shortFlags(a, "KDr") {
				return false
			}
		}
	case "top":
		// Only in batch mode: a full-screen top is for a terminal of its own.
		return slices.ContainsFunc(args, func(a string) bool {
			return a == "-b" || shortFlags(a, "b")
		})
	case "systemctl":
		sub := ""
		for _, a := range args {
			// -H and -M reach another host (over ssh) or a container.
			if a == "-H" || a == "-M" || strings.HasPrefix(a, "--host") || strings.HasPrefix(a, "--machine") ||
				shortFlags(a, "HM") {
				return false
			}
			if sub == "" && !strings.HasPrefix(a, "-") {
				sub = a
			}
		}
		// systemctl alone lists units.
		return sub == "" || slices.Contains(systemctlLooks, sub)
	case "who":
		// who FILE and who am i: left to the sandbox.
		for _, a := range args {
			if !strings.HasPrefix(a, "-") {
				return false
			}
		}
	}
	return true
}

// hasNoLookup reports whether lsof's or netstat's arguments already ask
// for numbers rather than names.
func hasNoLookup(args []string) bool {
	for _, a := range args {
		if a == "--numeric" || shortFlags(a, "n") {
			return true
		}
	}
	return false
}

// filterLooks reports whether a filter, with these arguments, writes only
// to its standard output and runs nothing.
func filterLooks(name string, args []string) bool {
	switch name {
	case "sort":
		for _, a := range args {
			if strings.HasPrefix(a, "--output") || strings.HasPrefix(a, "--compress-program") ||
				shortFlags(a, "o") {
				return false
			}
		}
	case "uniq":
		// uniq IN OUT writes OUT: no file names at all.
		for _, a := range args {
			if !strings.HasPrefix(a, "-") {
				return false
			}
		}
	}
	return true
}

// shortFlags reports whether a is a cluster of short options (-tlnp)
// holding one of letters.
func shortFlags(a, letters string) bool {
	return !strings.HasPrefix(a, "--") && strings.HasPrefix(a, "-") && strings.ContainsAny(a[1:], letters)
}
