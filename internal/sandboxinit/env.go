package sandboxinit

import "os"

// EnvVar marks a process as the sandbox's init, re-executed from the nash
// binary. main checks it before anything else.
const EnvVar = "_NASH_SANDBOX_CHILD"

// IsChild reports whether this process is a sandbox init that main must hand
// over to Main.
func IsChild() bool { return os.Getenv(EnvVar) != "" }
