//go:build !linux

package sandboxinit

import (
	"fmt"
	"os"
)

// Main says that the sandbox needs Linux and exits: nash never starts an
// init elsewhere (sandbox.New refuses first).
func Main() {
	fmt.Fprintln(os.Stderr, "nash-sandbox: the sandbox needs Linux")
	os.Exit(125)
}
