package planner

import (
	"context"
	"slices"
	"strings"
	"testing"
)

// commandName is the subcommand a description is for: "group" for
// "nash group --by ...".
func commandName(c Command) string { return strings.Fields(c.Usage)[1] }

// TestSelectCommands checks that requests in English bring in the
// descriptions of the commands that do what they ask, and not others.
func TestSelectCommands(t *testing.T) {
	tests := []struct {
		prompt string
		want   []string // must be chosen
		not    []string // must not be chosen
	}{
		// group
		{"group all my tax receipts into a folder called taxes", []string{"group"}, []string{"join", "lock", "share"}},
		{"Gather every invoice from 2025 into one folder", []string{"group"}, []string{"join"}},
		{"collect the files about the garden project into ~/garden", []string{"group", "find"}, []string{"join"}},
		{"organize my recipes by putting them together in recipes/", []string{"group"}, nil},
		{"put links to all the photos of paris into one directory", []string{"group"}, nil},
		// join
		{"join part1.txt and part2.txt", []string{"join"}, []string{"group", "share"}},
		{"concatenate chapter1.md and chapter2.md into book.md", []string{"join"}, nil},
		{"merge notes-old.txt into notes.txt", []string{"join"}, nil},
		{"combine the two csv files into a single file", []string{"join"}, nil},
		{"append draft.txt to report.txt and delete draft", []string{"join"}, nil},
		// lock / unlock
		{"lock thesis.pdf so nothing changes it", []string{"lock"}, []string{"unlock", "join"}},
		{"make contract.docx read-only", []string{"lock"}, []string{"unlock"}},
		{"protect my ssh config from changes", []string{"lock"}, []string{"unlock"}},
		{"unlock thesis.pdf", []string{"unlock"}, []string{"lock"}},
		{"make budget.xlsx writable again", []string{"unlock"}, []string{"lock"}},
		// history / rollback
		{"show the history of notes.txt", []string{"history"}, []string{"share"}},
		{"what versions of todo.md are there", []string{"history"}, nil},
		{"roll back config.yaml to the previous version", []string{"rollback", "history"}, nil},
		{"restore report.txt as it was yesterday", []string{"rollback"}, nil},
		{"revert essay.md to version 3", []string{"rollback"}, nil},
		{"bring back yesterday's version of plan.md", []string{"rollback"}, nil},
		// share / serve
		{"share slides.pdf with my colleague for 3 days", []string{"share", "serve"}, []string{"join", "group"}},
		{"give me a download link for video.mp4", []string{"share", "serve"}, nil},
		{"revoke the link I made for slides.pdf", []string{"share"}, nil},
		{"list my sharing links", []string{"share"}, nil},
		{"start nash serve on port 8080", []string{"serve"}, nil},
		// unrelated requests bring in none of these
		{"rename every .jpeg to .jpg", nil, []string{"group", "join", "lock", "unlock", "history", "rollback", "share", "serve"}},
		{"restart the nginx server", nil, []string{"serve", "share"}},
		{"delete files modified yesterday in /tmp", nil, []string{"rollback", "history"}},
		{"count the lines in block.go and clock.go", nil, []string{"lock", "unlock"}},
	}
	cmds := triggerCommands()
	for _, tt := range tests {
		var got []string
		for _, c := range selectCommands(tt.prompt, cmds) {
			got = append(got, commandName(c))
		}
		for _, w := range tt.want {
			if !slices.Contains(got, w) {
				t.Errorf("%q: %s not chosen (got %v)", tt.prompt, w, got)
			}
		}
		for _, n := range tt.not {
			if slices.Contains(got, n) {
				t.Errorf("%q: %s chosen, should not be (got %v)", tt.prompt, n, got)
			}
		}
	}
}

// triggerCommands is a Command for every name of Triggers, as nash makes
// them (its usage lines are tested in cmd/nash).
func triggerCommands() []Command {
	var out []Command
	for name, tr := range Triggers() {
		out = append(out, Command{Usage: "nash " + name + " ARGS", Description: "does " + name, Triggers: tr})
	}
	slices.SortFunc(out, func(a, b Command) int { return strings.Compare(a.Usage, b.Usage) })
	return out
}

// TestTriggersComplete checks that every command issue 7 adds has
// triggers, all lower-case (selectCommands lower-cases the request, so an
// upper-case trigger would never match).
func TestTriggersComplete(t *testing.T) {
	var names []string
	for _, c := range triggerCommands() {
		names = append(names, commandName(c))
		if c.Description == "" || len(c.Triggers) == 0 {
			t.Errorf("%s: no description or no triggers", c.Usage)
		}
		for _, tr := range c.Triggers {
			if tr != strings.ToLower(tr) || strings.TrimSpace(tr) != tr {
				t.Errorf("%s: trigger %q can never match", commandName(c), tr)
			}
		}
	}
	for _, want := range []string{"group", "join", "lock", "unlock", "history", "rollback", "share", "serve"} {
		if !slices.Contains(names, want) {
			t.Errorf("no description of nash %s", want)
		}
	}
}

// TestCommandsInPrompt checks that a chosen description reaches the model.
func TestCommandsInPrompt(t *testing.T) {
	m := &scriptedLLM{answers: []string{`{"script": "nash join a.txt b.txt --yes", "explanation": "joins"}`}}
	join := Command{Usage: "nash join A B... [--into C] [--yes] [--json]", Description: "concatenate files", Triggers: Triggers()["join"]}
	p, err := New(LLM(m, "test"), ListingLimit(0), Commands([]Command{join}))
	if err != nil {
		t.Fatal(err)
	}
	a, err := p.Plan(context.Background(), Request{Prompt: "concatenate a.txt and b.txt", Cwd: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Commands) != 1 || commandName(a.Commands[0]) != "join" {
		t.Errorf("commands shown: %v", a.Commands)
	}
	if !strings.Contains(m.lastUser(), "nash join A B... [--into C]") {
		t.Errorf("the join description is not in the prompt:\n%s", m.lastUser())
	}
}
