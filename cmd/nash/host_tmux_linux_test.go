package main

import (
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"
)

// TestTmuxHostProcesses: a question about the host's processes and
// sockets gets the host's answer (issue 19, item 7): ps sees a process
// started outside nash, ss a port listening outside, and kill, once
// confirmed as something that cannot be undone, ends that process.
func TestTmuxHostProcesses(t *testing.T) {
	outside := exec.Command("sleep", "4242")
	if err := outside.Start(); err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() { ended <- outside.Wait() }()
	t.Cleanup(func() { _ = outside.Process.Kill() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port

	tn := startNash(t, "")
	tn.typeLine(`ps -eo pid,args | grep "sleep 424[2]"`)
	tn.waitFor(fmt.Sprintf(`(?m)^ *%d sleep 4242\s*$`, outside.Process.Pid))
	tn.waitFor(`ran on the host \(ps looks at the host's processes and sockets\)`)
	tn.typeLineDone(fmt.Sprintf(`ss -ltn | grep -c ":%d "`, port))
	tn.waitFor(`(?m)^1\s*$`)

	tn.typeLine("kill " + strconv.Itoa(outside.Process.Pid))
	tn.waitFor(`signals processes on the host, which cannot be undone`)
	tn.waitFor(`type yes to run it anyway: `)
	tn.typeLine("yes")
	select {
	case <-ended:
	case <-time.After(waitLimit):
		tn.fatalf("kill, confirmed, did not end the process outside")
	}
	tn.waitFor(`ran on the host \(kill signals the host's processes\)`)
	if n := tn.requests(); n != 0 {
		tn.fatalf("the lines sent %d request(s) to the model", n)
	}
}
