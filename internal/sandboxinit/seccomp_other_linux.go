//go:build linux && !amd64 && !arm64

package sandboxinit

// renameCalls is empty where nash does not know the system call numbers:
// the init installs no filter, and renaming a merged directory fails with
// EXDEV there, as overlayfs makes it.
func renameCalls() []renameCall { return nil }
