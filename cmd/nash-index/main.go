// Command nash-index is the per-user server of nash's file index (package
// internal/indexserver). nash starts it when it needs the index, finding it
// next to itself, then on PATH; it is not meant to be run by hand.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/nash-shell/nash/internal/indexserver"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := indexserver.Main(ctx, os.Args[1:], os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}
