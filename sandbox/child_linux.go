package sandbox

import (
	"fmt"
	"os"
)

// ChildMain is the sandbox init: it builds the sandboxed root and runs the
// script. It never returns.
func ChildMain() {
	fmt.Fprintln(os.Stderr, "nash sandbox: init not built yet")
	os.Exit(1)
}
