// Package sandbox runs scripts in Linux namespaces (user, mount, pid, net)
// with an overlay on every writable mount, turns what the overlays caught into
// an effects.ChangeSet, and commits or aborts it. It owns the undo layers, the
// write-ahead journal, crash recovery, locking, undo, forget and gc.
//
// It is the only package that imports golang.org/x/sys/unix.
package sandbox
