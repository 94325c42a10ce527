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
// A request goes to the Planner; its script is shown for review with the
// explanation and the static report (effects.Analyze): run, edit, revise,
// explain or abort. A script that deletes outside the working directory or
// does something the sandbox cannot undo needs a second confirmation. A
// typed command skips the planner and the review, unless it needs that
// second confirmation. Every script runs in the sandbox with the session's
// directory and environment and the real terminal; afterwards the effect
// summary, with what the report did not predict, asks to commit all, some
// paths, or nothing.
//
// # Two faces, one flow
//
// Run starts the inline bubbletea program (no alternate screen, so the
// transcript stays in scrollback). Lines reads the same flow from any
// reader as plain text, for pipes and for nash -c; it writes no escape
// codes. Both share Session, Route and the renderers here; I/O runs in
// tea.Cmds, never in Update.
package shell
