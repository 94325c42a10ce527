package sandbox

import "os"

// childEnv marks a process as the sandbox's init, re-executed from the nash
// binary. main checks it before anything else.
const childEnv = "_NASH_SANDBOX_CHILD"

// IsChild reports whether this process is a sandbox init that main must hand
// over to ChildMain.
func IsChild() bool { return os.Getenv(childEnv) != "" }
