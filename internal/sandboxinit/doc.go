// Package sandboxinit is the sandbox's init: the process nash starts in new
// user, mount, pid and (unless the network is kept) network namespaces, in
// a session of its own. It closes every descriptor it inherited but its
// own, reads its Config from the parent, mounts the run's size-capped
// scratch tmpfs, builds the sandbox's root from the Plan (overlays,
// read-only binds, /proc, /dev), pivots into it, caps the run's processes,
// makes the script's pseudo-terminal in its own devpts and hands the master
// to nash over the control socket, runs the script as its only child (in a
// foreground process group of its own, with no capability but what root
// keeps), reports stops for job control, reaps everything, reports a Result
// with the scratch tmpfs attached and exits.
//
// It lives apart from package sandbox, which plans runs and commits their
// changes, so that the nash-sandbox binary links nothing but the standard
// library and x/sys: the init starts in every run, and a smaller binary
// starts sooner.
package sandboxinit
