package main

import "testing"

// TestTmuxTabAndForgivingRouting is issue 19's items 5 and 8 as a person
// meets them: Tab completes a file name (quoted), a command and a git
// subcommand, a second Tab lists what matches, a typo gets "did you mean"
// and goes nowhere, and English that starts with a command's name goes to
// the planner.
func TestTmuxTabAndForgivingRouting(t *testing.T) {
	tn := startNashIn(t, `{"script": "ls -S | head -5", "explanation": "Lists the five biggest files."}`, map[string]string{
		"work/quarterly report.txt": "q1 figures\n",
		"work/alpha1":               "",
		"work/alpha2":               "",
	})
	// A file name with a space, completed and quoted.
	tn.tmux("send-keys", "-t", tn.target, "-l", "cat quar")
	tn.send("Tab")
	tn.waitFor(`\[cmd\] cat quarterly\\ report\.txt `)
	tn.send("Enter")
	tn.waitFor(`(?m)^q1 figures`)
	// A command's name.
	tn.tmux("send-keys", "-t", tn.target, "-l", "whoam")
	tn.send("Tab")
	tn.waitFor(`\[cmd\] whoami `)
	tn.send("C-u")
	// A git subcommand.
	tn.tmux("send-keys", "-t", tn.target, "-l", "git stat")
	tn.send("Tab")
	tn.waitFor(`\[cmd\] git status `)
	tn.send("C-u")
	// Several: the common prefix, then a second Tab lists them.
	tn.tmux("send-keys", "-t", tn.target, "-l", "ls al")
	tn.send("Tab")
	tn.waitFor(`\[cmd\] ls alpha`)
	tn.send("Tab")
	tn.waitFor(`(?m)^alpha1 +alpha2\s*$`)
	tn.send("C-u")
	// A typo: a local "did you mean", nothing sent to the model.
	tn.typeLine("gti status")
	tn.waitFor(`nash: gti: command not found; did you mean git\?`)
	if n := tn.requests(); n != 0 {
		tn.fatalf("the typo sent %d request(s) to the model", n)
	}
	// English starting with a command's name: a request.
	tn.tmux("send-keys", "-t", tn.target, "-l", "find the biggest files here")
	tn.waitFor(`\[ask\] find the biggest files here`)
	tn.send("Enter")
	tn.waitFor(`review: enter run`)
	tn.waitFor(`Lists the five biggest files\.`)
	if n := tn.requests(); n != 1 {
		tn.fatalf("the request sent %d request(s) to the model, want 1", n)
	}
}
