// Command nash-index carries out nash index and nash find. nash starts it
// for those commands (it finds it next to itself), so that nash run and the
// other commands do not link the index and pay for its start-up. It is not
// meant to be run by hand.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/nash-shell/nash/internal/indexcli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := indexcli.Main(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
