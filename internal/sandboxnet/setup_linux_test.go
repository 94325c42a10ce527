package sandboxnet

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

const childEnv = "_NASH_SANDBOXNET_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(child())
	}
	os.Exit(m.Run())
}

// child is the test's sandbox: it sets its namespace up, then tries the
// network the ways a script would, and reports on stdout.
func child() int {
	if err := loopbackUp(); err != nil {
		fmt.Println("loopback:", err)
		return 1
	}
	t0 := time.Now()
	if err := Handover(3); err != nil {
		fmt.Println("handover:", err)
		return 1
	}
	say := func(f string, a ...any) { fmt.Printf(f+"\n", a...) }
	say("handover took %v", time.Since(t0))
	// The sandbox's own loopback service is its own.
	own, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		say("own listen: %v", err)
		return 1
	}
	go func() {
		c, err := own.Accept()
		if err == nil {
			c.Write([]byte("own\n"))
			c.Close()
		}
	}()
	for _, addr := range []string{"203.0.113.7:80", "127.0.0.1:9", own.Addr().String(), "[2001:db8::5]:443"} {
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			say("dial %s: %v", addr, err)
			continue
		}
		fmt.Fprintf(c, "hello %s\n", addr)
		line, _ := bufio.NewReader(c).ReadString('\n')
		say("tcp %s -> %s", addr, strings.TrimSpace(line))
		c.Close()
	}
	// DNS to any address reaches the port-53 socket, and its answer comes
	// from the address asked.
	u, err := net.Dial("udp", "198.51.100.53:53")
	if err == nil {
		u.Write([]byte("query"))
		u.SetReadDeadline(time.Now().Add(2 * time.Second))
		b := make([]byte, 100)
		n, err := u.Read(b)
		say("dns -> %q %v", b[:n], err)
	}
	if u, err := net.Dial("udp", "192.0.2.9:123"); err == nil {
		u.Write([]byte("ntp"))
	}
	// ping's echo request to an outside address is dropped, not answered.
	if fd, err := unix.Socket(unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP); err == nil {
		echo := []byte{8, 0, 0xf7, 0xff, 0, 0, 0, 0}
		unix.Sendto(fd, echo, 0, &unix.SockaddrInet4{Addr: [4]byte{192, 0, 2, 1}})
		unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &unix.Timeval{Usec: 300000})
		b := make([]byte, 100)
		n, _, err := unix.Recvfrom(fd, b, 0)
		say("ping -> %d %v", n, err)
	}
	say("done")
	return 0
}

func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP | unix.IFF_RUNNING)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// startChild starts this test binary as the child, in new user and
// network namespaces, as the sandbox init is started.
func startChild(t *testing.T, sock *os.File, out io.Writer) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.ExtraFiles = []*os.File{sock}
	cmd.Stdout, cmd.Stderr = out, out
	uid, gid := os.Getuid(), os.Getgid()
	attr := &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET}
	if uid == 0 {
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1}}
	} else {
		attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
		attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
		attr.AmbientCaps = []uintptr{unix.CAP_NET_ADMIN, unix.CAP_NET_BIND_SERVICE, unix.CAP_NET_RAW}
	}
	cmd.SysProcAttr = attr
	if err := cmd.Start(); err != nil {
		t.Skipf("no user namespaces here: %v", err) // the sandbox tests say so loudly
	}
	return cmd
}

// TestHandover sets a namespace up and checks that what leaves it reaches
// the handed-over sockets, with its original destination, while the
// namespace's own loopback services stay its own.
func TestHandover(t *testing.T) {
	parent, childEnd, err := SocketPair()
	if err != nil {
		t.Fatal(err)
	}
	defer parent.Close()
	var out bytes.Buffer
	cmd := startChild(t, childEnd, &out)
	childEnd.Close()
	socks, err := Receive(parent)
	if err != nil {
		cmd.Wait()
		t.Fatalf("receive: %v\nchild said:\n%s", err, out.String())
	}
	var mu sync.Mutex
	var got []string
	seen := func(s string) {
		mu.Lock()
		got = append(got, s)
		mu.Unlock()
	}
	for _, s := range socks {
		switch s.Kind {
		case TCP:
			l, err := net.FileListener(s.File)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			go func() {
				for {
					c, err := l.Accept()
					if err != nil {
						return
					}
					line, _ := bufio.NewReader(c).ReadString('\n')
					seen(c.LocalAddr().String() + " " + strings.TrimSpace(line))
					fmt.Fprintf(c, "caught %s\n", c.LocalAddr())
					c.Close()
				}
			}()
		case DNS, UDP:
			pc, err := net.FilePacketConn(s.File)
			if err != nil {
				t.Fatal(err)
			}
			defer pc.Close()
			uc := pc.(*net.UDPConn)
			kind := s.Kind
			go func() {
				b := make([]byte, 512)
				oob := make([]byte, 512)
				for {
					n, oobn, _, from, err := uc.ReadMsgUDPAddrPort(b, oob)
					if err != nil {
						return
					}
					dst, err := OriginalDst(oob[:oobn])
					seen(fmt.Sprintf("%s %v %q %v", kind, dst, b[:n], err))
					if kind == DNS {
						uc.WriteMsgUDPAddrPort([]byte("answer"), ReplyFrom(dst.Addr()), from)
					}
				}
			}()
		}
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v\n%s", err, out.String())
	}
	time.Sleep(50 * time.Millisecond)
	said := out.String()
	for _, want := range []string{
		"tcp 203.0.113.7:80 -> caught 203.0.113.7:80",
		"tcp 127.0.0.1:9 -> caught 127.0.0.1:9",
		"-> own",
		"tcp [2001:db8::5]:443 -> caught [2001:db8::5]:443",
		`dns -> "answer" <nil>`,
		"ping -> -1 resource temporarily unavailable",
	} {
		if !strings.Contains(said, want) {
			t.Errorf("child did not say %q; it said:\n%s", want, said)
		}
	}
	mu.Lock()
	all := strings.Join(got, "\n")
	mu.Unlock()
	for _, want := range []string{
		"203.0.113.7:80 hello 203.0.113.7:80",
		`dns 198.51.100.53:53 "query" <nil>`,
		`udp 192.0.2.9:123 "ntp" <nil>`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("nash side did not see %q; it saw:\n%s", want, all)
		}
	}
	if strings.Contains(all, "own") {
		t.Errorf("the namespace's own loopback connection reached nash:\n%s", all)
	}
}
