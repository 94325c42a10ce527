// Package effects tells what a shell script does: statically, before it runs
// (Analyze), and as observed after a sandboxed run (ChangeSet). It also renders
// both for people, with every control character made visible.
//
// The package is pure: it does no I/O beyond reading files for diffs.
package effects
