package sandboxinit

import "os"

// EnvVar marks a process as the sandbox's init, re-executed from the nash
// binary. main checks it before anything else.
const EnvVar = "_NASH_SANDBOX_CHILD"

// EgressEnvVar, in the init's environment, names the descriptor of the
// unix socket over which it hands nash the sandbox's network traffic
// (package sandboxnet). The init starts on it at once, before its config
// arrives, so that the set-up overlaps nash's planning of the run.
const EgressEnvVar = "_NASH_SANDBOX_EGRESS_FD"

// IsChild reports whether this process is a sandbox init that main must hand
// over to Main.
func IsChild() bool { return os.Getenv(EnvVar) != "" }
