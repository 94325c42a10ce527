// Package shell is the interactive nash and its plain line mode: the program
// a person types into. It is the only package that imports bubbletea and
// lipgloss.
//
// # The way a line travels
//
// Route decides what a line is before Enter, and the prompt shows it: a
// line that parses as a shell command whose first word is a builtin, a
// function defined in the line, or an executable on the session's PATH is
// a command; anything else is a request in English. A leading ! forces a
// command, a leading ? forces English, a leading : is a nash built-in
// (:undo, :log, :show, :find, :export, :model, :help). cd, export, unset
// and exit change the session itself and never reach the sandbox.
//
// # One run flow
//
// Every script nash runs takes the same way (flow.go), whatever brought
// it: a line of the REPL or the line mode, nash -c, or a script in hand
// from nash run, nash group or nash join (RunScript). A request is planned
// first; its script is shown for review with the explanation and the
// static report (effects.Analyze): run, edit, revise, explain, test (t:
// package scripttest's starting states), an example (g: the person's own,
// which runs again on every revision and goes to the model with a revise
// when it fails; trial.go) or abort. A script in hand skips the planner
// and the review. A script that deletes
// outside the working directory, does what the sandbox cannot undo, or
// cannot be analysed needs a second confirmation, the typed word yes,
// which --yes never gives. The destinations the script names beyond what
// the configuration allows are offered before it runs, in one question.
// Every script runs in the sandbox with the session's directory and
// environment and the terminal; afterwards the effect summary, with what
// the report did not predict and what the run tried to reach, offers the
// destinations it was refused (allowing them runs it again), then asks to
// commit all, some paths, or nothing. One Record describes the pass, the
// same for nash -c --json and nash run --json.
//
// # Two faces, one flow
//
// The flow decides and a face asks: the face answers the flow's questions
// (review, confirm, decide, ...) and renders its events. Run starts the
// inline bubbletea program (no alternate screen, so the transcript stays
// in scrollback); there the flow runs in a goroutine of its own and each
// question becomes a screen, answered by Update (replface.go). Lines reads
// answers from any reader as plain text, for pipes, nash -c and nash run;
// it writes no escape codes. Both share Session, Route and the renderers
// here; in the REPL all I/O runs in tea.Cmds or the flow's goroutine,
// never in Update.
package shell
