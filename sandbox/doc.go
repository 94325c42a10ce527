// Package sandbox runs scripts in Linux namespaces (user, mount, pid, net)
// with an overlay on every writable mount, turns what the overlays caught into
// an effects.ChangeSet, and commits or aborts it. It owns the undo layers, the
// write-ahead journal, crash recovery, locking, undo, forget and gc.
//
// It plans each run (the mount plan, the layers' upper and work dirs: on
// the state's file system for the overlay covering the working directory,
// so that commit is a rename there; on tmpfs for the others) and starts the
// init, package internal/sandboxinit, which builds the root and runs the
// script. The two are the only packages that import golang.org/x/sys/unix.
package sandbox
