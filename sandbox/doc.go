// Package sandbox runs scripts in Linux namespaces (user, mount, pid, net)
// with an overlay on every writable mount, turns what the overlays caught into
// an effects.ChangeSet, and commits or aborts it. It owns the undo layers, the
// write-ahead journal, crash recovery, locking, undo, forget and gc.
//
// It plans each run (the mount plan, the layers' upper and work dirs: on
// the state's file system for the overlay covering the working directory,
// so that commit is a rename there; on the run's size-capped scratch tmpfs
// for the others) and starts the init, package internal/sandboxinit, which
// builds the root and runs the script, and talks to it over a control
// socket. It relays the script's own pseudo-terminal to the person's and
// its other streams through pipes it owns (terminal_linux.go,
// stdio_linux.go): a script reaches the person only through nash. Commit,
// undo and roll-back reach the live tree only through directories opened
// without following symlinks (livefs_linux.go). The two are the only
// packages that import golang.org/x/sys/unix.
package sandbox
