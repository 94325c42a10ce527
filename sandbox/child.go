package sandbox

import "github.com/nash-shell/nash/internal/sandboxinit"

// IsChild reports whether this process is a sandbox init, re-executed from
// the nash binary, that main must hand over to ChildMain before anything
// else.
func IsChild() bool { return sandboxinit.IsChild() }

// ChildMain is the sandbox init (see package sandboxinit). It never returns.
func ChildMain() { sandboxinit.Main() }
