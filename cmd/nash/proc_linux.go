package main

import "syscall"

// watcherAttr puts the index watcher in a process group of its own (ctrl+c
// at the terminal is for the script in the foreground) and has the kernel
// end it when nash dies.
func watcherAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
