package main

import (
	"fmt"
	"io"
)

// maxScript bounds a script read from stdin.
const maxScript = 16 << 20

func readAll(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, maxScript+1))
	if err != nil {
		return nil, fmt.Errorf("read script: %w", err)
	}
	if len(b) > maxScript {
		return nil, fmt.Errorf("read script: longer than %d MiB", maxScript>>20)
	}
	return b, nil
}
