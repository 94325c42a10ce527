// Command nash-sandbox is nash's sandbox init, built on its own so that
// starting a sandbox does not pay for initialising everything nash links
// (the terminal UI, the model clients): it links only the sandbox. nash
// runs it when it sits next to the nash binary, and re-executes itself
// otherwise. It is not meant to be run by hand.
package main

import (
	"fmt"
	"os"

	"github.com/nash-shell/nash/sandbox"
)

func main() {
	if !sandbox.IsChild() {
		fmt.Fprintln(os.Stderr, "nash-sandbox: this is the sandbox init that nash starts; run nash instead")
		os.Exit(2)
	}
	sandbox.ChildMain() // never returns
}
