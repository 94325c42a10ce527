// Package sandboxinit is the sandbox's init: the process nash starts in new
// user, mount, pid and (unless the network is kept) network namespaces. It
// reads its Config from the parent, builds the sandbox's root from the
// Plan (overlays, read-only binds, /proc, /dev), pivots into it, runs the
// script as its only child, reaps everything, reports a Result and exits.
//
// It lives apart from package sandbox, which plans runs and commits their
// changes, so that the nash-sandbox binary links nothing but the standard
// library and x/sys: the init starts in every run, and a smaller binary
// starts sooner.
package sandboxinit
