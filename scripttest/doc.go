// Package scripttest tests a script before it is trusted: it derives
// starting states that exercise the script's paths and branches from the
// static analysis (effects.Analyze) and the command registry
// (effects.Commands), runs the script on each in a throwaway sandbox over
// the real working directory, and reports per variant what happened and
// where it differs from the run on today's files. It also runs the
// person's own examples (a small tree before, the tree or output expected
// after) and writes them out as a test an exported script can run.
//
// A variant is a set of changes to today's files (names with spaces,
// newlines, a leading dash or bytes that are not UTF-8 matching the
// script's globs; no match, one, many; a missing or empty input; an
// output that already exists or is read-only; a symlink where a file is
// expected) and to the environment (a variable the script uses, unset or
// empty). Each runs in one sandbox: a short setup builds the variant on
// the sandbox's overlay of the working directory, then the script runs in
// a fresh shell; the sandbox observes both, and the package tells the
// script's effects from the setup's, since it knows exactly what the setup
// made. Every run is aborted: nothing reaches the live files.
//
// The package imports effects and sandbox; nothing in it prints.
package scripttest
