// Command nash-sandbox is nash's sandbox init, built on its own so that
// starting a sandbox does not pay for initialising everything nash links:
// it links only the init (package sandboxinit: the standard library and
// x/sys), so it starts about half a millisecond sooner than even a binary
// linking the sandbox package would. nash runs it when it sits next to the
// nash binary, and re-executes itself otherwise. It is not meant to be run
// by hand.
package main

import (
	"fmt"
	"os"

	"github.com/nash-shell/nash/internal/sandboxinit"
)

func main() {
	if !sandboxinit.IsChild() {
		fmt.Fprintln(os.Stderr, "nash-sandbox: this is the sandbox init that nash starts; run nash instead")
		os.Exit(2)
	}
	sandboxinit.Main() // never returns
}
