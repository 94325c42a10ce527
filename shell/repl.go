package shell

import (
	"context"
	"os"
)

// Run starts the interactive shell on the terminal in and out.
func Run(ctx context.Context, cfg Config, in, out *os.File) error {
	return Lines(ctx, cfg, in, out, os.Stderr, LineOptions{ScriptStdin: in})
}
