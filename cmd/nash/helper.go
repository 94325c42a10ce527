package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// findHelper locates nash-index, nash's companion binary: the path in
// envVar when set, else next to this executable, else on PATH. what
// names, for the error, what needs it.
func findHelper(name, envVar, what string) (string, error) {
	if p := os.Getenv(envVar); p != "" {
		return p, nil
	}
	if exe, err := os.Executable(); err == nil {
		cand := filepath.Join(filepath.Dir(exe), name)
		if fi, err := os.Stat(cand); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return cand, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("%s needs %s, which is neither next to nash nor on PATH (make build puts both in bin/)", what, name)
}
