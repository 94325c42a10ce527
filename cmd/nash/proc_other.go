//go:build !linux

package main

import "syscall"

// watcherAttr puts the index watcher in a process group of its own (ctrl+c
// at the terminal is for the script in the foreground).
func watcherAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
