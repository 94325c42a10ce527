package main

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/nash-shell/nash/sandbox/egress"
)

// hostServers are an HTTP and a plain TCP server on the host's loopback,
// counting who reaches them, and a config file that names the HTTP one
// web.nash.test for nash's resolver.
type hostServers struct {
	webPort, tcpPort string
	webHits, tcpHits atomic.Int32
	config           string
}

func startHostServers(t *testing.T, extraConfig string) *hostServers {
	t.Helper()
	s := &hostServers{}
	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.webHits.Add(1)
		fmt.Fprintf(w, "hello from web %s\n", r.URL.Path)
	}))
	t.Cleanup(web.Close)
	_, s.webPort, _ = net.SplitHostPort(web.Listener.Addr().String())
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	_, s.tcpPort, _ = net.SplitHostPort(l.Addr().String())
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			s.tcpHits.Add(1)
			fmt.Fprint(c, "echo ping\n")
			c.Close()
		}
	}()
	s.config = filepath.Join(t.TempDir(), "config.yaml")
	cfg := "net:\n  hosts:\n    web.nash.test: 127.0.0.1\n" + extraConfig
	if err := os.WriteFile(s.config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return s
}

// script reaches the web server by name with curl, the TCP server with
// bash's own sockets, and a name that nothing serves. The names are in
// variables, so that nothing is predicted from the text and asked up front.
// The TCP server speaks first and the script only reads: writing to
// /dev/tcp is a send the sandbox cannot undo, which --yes never covers.
func (s *hostServers) script() string {
	return fmt.Sprintf(`web=web.nash.test other=elsewhere.nash.test
curl -sS -m 10 http://$web:%s/page > web.out; echo "web=$?"
if exec 3</dev/tcp/127.0.0.1/%s; then read -t 10 line <&3; fi; echo "tcp=$line"
curl -sS -m 10 https://$other/ > /dev/null; echo "elsewhere=$?"
`, s.webPort, s.tcpPort)
}

func (s *hostServers) nash(t *testing.T, dir string) *nashCmd {
	n := newNash(t, dir)
	n.env = append(n.env, "NASH_CONFIG="+s.config)
	return n
}

// TestNetAskOnceAllowPicked is the whole exchange: a run is refused three
// destinations and lists them; one answer picks two; the script runs again
// and reaches exactly those two; the transaction keeps them.
func TestNetAskOnceAllowPicked(t *testing.T) {
	s := startHostServers(t, "")
	n := s.nash(t, t.TempDir())
	out, errOut, code := n.run("p\n1 2\nc\n", "run", "--", s.script())
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, errOut)
	}
	first, second, ok := strings.Cut(errOut, "running the script again")
	if !ok {
		t.Fatalf("no second run:\n%s", errOut)
	}
	for _, want := range []string{
		"network: 3 destination(s) tried, 3 denied",
		"denied   web.nash.test:" + s.webPort,
		"denied   127.0.0.1:" + s.tcpPort,
		"denied   elsewhere.nash.test:443",
		"allow and run again? [a]ll 3, [p]ick, [n]one:",
	} {
		if !strings.Contains(first, want) {
			t.Errorf("first run's summary lacks %q:\n%s", want, first)
		}
	}
	for _, want := range []string{
		"with web.nash.test:" + s.webPort + ", 127.0.0.1:" + s.tcpPort + " allowed",
		"network: 3 destination(s) tried, 1 denied",
		"allowed  web.nash.test:" + s.webPort,
		"allowed  127.0.0.1:" + s.tcpPort,
		"committed as transaction",
	} {
		if !strings.Contains(second, want) {
			t.Errorf("second run lacks %q:\n%s", want, second)
		}
	}
	if strings.Count(errOut, "allow and run again?") != 1 {
		t.Errorf("asked more than once (elsewhere was offered already):\n%s", errOut)
	}
	if !strings.Contains(out, "web=0") || !strings.Contains(out, "tcp=echo ping") || strings.Contains(out, "elsewhere=0") {
		t.Errorf("script output:\n%s", out)
	}
	if s.webHits.Load() != 1 || s.tcpHits.Load() != 1 {
		t.Errorf("hits: web %d, tcp %d; want 1 each (only the second run reaches them)", s.webHits.Load(), s.tcpHits.Load())
	}
	_, rest, _ := strings.Cut(second, "committed as transaction ")
	id, _, _ := strings.Cut(rest, " ")
	showOut, _, code := n.run("", "show", "--json", id)
	if code != 0 {
		t.Fatalf("show: %d %s", code, showOut)
	}
	var tx struct {
		Network []egress.Contact `json:"network"`
	}
	if err := json.Unmarshal([]byte(showOut), &tx); err != nil {
		t.Fatal(err)
	}
	got := map[string]egress.Contact{}
	for _, c := range tx.Network {
		got[c.Destination()] = c
	}
	web, raw := got["web.nash.test:"+s.webPort], got["127.0.0.1:"+s.tcpPort]
	// The server closes first: the kernel counts its FIN as one byte of
	// a direct connection (egress.Contact.Received).
	if n := int64(len("echo ping\n")); !web.Allowed || web.Sent == 0 || web.Received == 0 || !raw.Allowed || (raw.Received != n && raw.Received != n+1) {
		t.Errorf("transaction's network: %+v", tx.Network)
	}
	if c, ok := got["elsewhere.nash.test:443"]; !ok || c.Allowed {
		t.Errorf("the still-denied destination is not kept: %+v", tx.Network)
	}
	logOut, _, _ := n.run("", "log")
	if !strings.Contains(logOut, "network: web.nash.test:"+s.webPort) {
		t.Errorf("nash log does not list the destinations:\n%s", logOut)
	}
}

// TestNetYesAllowsNothingMore: --yes never asks, so a destination neither
// the flag nor the config allows is never reached, and --json lists it.
func TestNetYesAllowsNothingMore(t *testing.T) {
	s := startHostServers(t, "")
	n := s.nash(t, t.TempDir())
	out, errOut, code := n.run("a\na\n", "run", "--yes", "--json", "--net=127.0.0.1:"+s.tcpPort, "--", s.script())
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if s.webHits.Load() != 0 || s.tcpHits.Load() != 1 || strings.Contains(errOut, "allow and run again") {
		t.Fatalf("hits web %d tcp %d; stderr:\n%s", s.webHits.Load(), s.tcpHits.Load(), errOut)
	}
	res := decodeRun(t, out) // the script's output went to stderr
	verdict := map[string]bool{}
	for _, c := range res.Network {
		verdict[c.Destination()] = c.Allowed
	}
	if a, ok := verdict["web.nash.test:"+s.webPort]; !ok || a || !verdict["127.0.0.1:"+s.tcpPort] {
		t.Errorf("network in --json: %+v", res.Network)
	}
}

// TestNetConfigLists: the config's allow list, global and per directory,
// and its deny list, which holds over --net too.
func TestNetConfigLists(t *testing.T) {
	proj := t.TempDir()
	s := startHostServers(t, "  deny: [\"127.0.0.1:TCPPORT\"]\n  dirs:\n    "+proj+":\n      allow: [web.nash.test]\n")
	b, _ := os.ReadFile(s.config)
	os.WriteFile(s.config, []byte(strings.ReplaceAll(string(b), "TCPPORT", s.tcpPort)), 0o644)

	// In the project: web allowed by the directory's list; tcp denied
	// by the global deny list although --net allows it.
	out, errOut, _ := s.nash(t, proj).run("", "run", "--yes", "--net=127.0.0.1:"+s.tcpPort, "--", s.script())
	if !strings.Contains(out, "web=0") || strings.Contains(out, "tcp=echo") || s.tcpHits.Load() != 0 {
		t.Fatalf("in the project:\n%s\n%s", out, errOut)
	}
	// Elsewhere the directory's list does not hold.
	out, errOut, _ = s.nash(t, t.TempDir()).run("", "run", "--yes", "--", s.script())
	if strings.Contains(out, "web=0") || s.webHits.Load() != 1 {
		t.Fatalf("elsewhere:\n%s\n%s", out, errOut)
	}
	// A bad entry is a clear error, and nothing runs.
	os.WriteFile(s.config, []byte("net:\n  allow: [\"bad host:1:2\"]\n"), 0o644)
	_, errOut, code := s.nash(t, proj).run("", "run", "--yes", "--", "touch x")
	if code != exitUsage || !strings.Contains(errOut, "config net.allow") {
		t.Fatalf("bad config entry: exit %d, %s", code, errOut)
	}
}

// TestNetAllowPredictedUpFront: the destinations the script's text names
// are offered before it runs, in one answer, and not asked about again.
func TestNetAllowPredictedUpFront(t *testing.T) {
	s := startHostServers(t, "")
	n := s.nash(t, t.TempDir())
	script := fmt.Sprintf("curl -sS -m 10 http://web.nash.test:%s/early; echo web=$?; curl -sS -m 5 https://elsewhere.nash.test/; echo done", s.webPort)
	out, errOut, code := n.run("p\n1\n", "run", "--", script)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	before, after, _ := strings.Cut(errOut, "allow them for this run?")
	if !strings.Contains(before, "the script names 2 destination(s)") || !strings.Contains(before, "web.nash.test:"+s.webPort) {
		t.Fatalf("no prediction before the run:\n%s", errOut)
	}
	if !strings.Contains(out, "web=0") || s.webHits.Load() != 1 {
		t.Errorf("the destination allowed up front was not reached:\n%s\n%s", out, errOut)
	}
	if strings.Contains(after, "allow and run again?") {
		t.Errorf("a destination declined up front was asked about again:\n%s", errOut)
	}
	if !strings.Contains(after, "denied   elsewhere.nash.test:443") {
		t.Errorf("the declined destination is not in the summary:\n%s", errOut)
	}
}

// TestNetPromptInTerminal is the batched question as a person sees it in a
// terminal: the destinations the run was refused, one question, a pick,
// the second run with exactly that one allowed, the commit.
func TestNetPromptInTerminal(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatalf("tmux is needed for this test (.ci/run installs it): %v", err)
	}
	s := startHostServers(t, "")
	t.Setenv("NASH_CONFIG", s.config) // the tmux server, and so nash, inherit it
	dir := t.TempDir()
	rt := startRunTerm(t, dir, filepath.Join(t.TempDir(), "state"), "run", "--", s.script())
	rt.waitFor(`allow and run again\? \[a\]ll 3, \[p\]ick, \[n\]one:`)
	screen := rt.screen()
	for _, want := range []string{"network: 3 destination(s) tried, 3 denied", "denied   web.nash.test:" + s.webPort, "denied   127.0.0.1:" + s.tcpPort} {
		if !strings.Contains(screen, want) {
			t.Errorf("the screen lacks %q:\n%s", want, screen)
		}
	}
	rt.send("p", "Enter")
	rt.waitFor(`numbers to allow \(e\.g\. 1 3\), empty for none:`)
	rt.send("2", "Enter")
	rt.waitFor(`commit these changes\? \[c\]ommit, \[a\]bort, \[d\]iff, \[p\]ick paths:`)
	screen = rt.screen()
	if !strings.Contains(screen, "running the script again with 127.0.0.1:"+s.tcpPort+" allowed") ||
		!strings.Contains(screen, "allowed  127.0.0.1:"+s.tcpPort) || !strings.Contains(screen, "tcp=echo ping") {
		t.Errorf("second run:\n%s", screen)
	}
	rt.send("c", "Enter")
	rt.waitFor(`NASH-EXIT=0`)
	if s.tcpHits.Load() != 1 || s.webHits.Load() != 0 {
		t.Errorf("hits: tcp %d web %d, want 1 0", s.tcpHits.Load(), s.webHits.Load())
	}
}

// TestNetShellYes: in the shell's flow (nash -c), --yes does not give the
// network the analysis predicts, only what the config allows.
func TestNetShellYes(t *testing.T) {
	s := startHostServers(t, "")
	n := s.nash(t, t.TempDir())
	curl := "curl -sS -m 5 http://127.0.0.1:" + s.webPort + "/shell"
	_, errOut, _ := n.run("", "-c", "--yes", curl)
	if s.webHits.Load() != 0 {
		t.Fatalf("nash -c --yes reached a destination nothing allowed:\n%s", errOut)
	}
	b, _ := os.ReadFile(s.config)
	os.WriteFile(s.config, append(b, []byte("  allow: [\"127.0.0.1:"+s.webPort+"\"]\n")...), 0o644)
	out, errOut, _ := n.run("", "-c", "--yes", curl)
	if s.webHits.Load() != 1 || !strings.Contains(out, "hello from web /shell") {
		t.Fatalf("the config's allow list does not hold in nash -c:\n%s\n%s", out, errOut)
	}
}

// TestNetShellAsksToo: nash -c takes a script through the same flow as
// nash run, so it offers the destinations a script names before it runs.
func TestNetShellAsksToo(t *testing.T) {
	s := startHostServers(t, "")
	n := s.nash(t, t.TempDir())
	curl := "curl -sS -m 5 http://web.nash.test:" + s.webPort + "/asked"
	out, errOut, code := n.run("a\n", "-c", curl)
	if code != 0 || s.webHits.Load() != 1 || !strings.Contains(out, "hello from web /asked") {
		t.Fatalf("exit %d, hits %d\nstdout: %s\nstderr: %s", code, s.webHits.Load(), out, errOut)
	}
	if !strings.Contains(errOut, "the script names 1 destination(s)") || !strings.Contains(errOut, "allow them for this run? [a]ll 1, [p]ick, [n]one:") {
		t.Errorf("no question before the run:\n%s", errOut)
	}
	if !strings.Contains(errOut, "allowed  web.nash.test:"+s.webPort) || !strings.Contains(errOut, "no file changes; what the run reached is kept as transaction") {
		t.Errorf("the summary does not say what was reached:\n%s", errOut)
	}
}

// TestNetDirectOrRelay: an allowed connection is handed to the script
// directly, and the summary says its contents were not read; with the
// config's net.relay it goes through nash's relay, which names the
// credential the request carried.
func TestNetDirectOrRelay(t *testing.T) {
	s := startHostServers(t, "  allow: [\"web.nash.test\"]\n")
	curl := "h=web.nash.test; curl -sS -m 10 -H 'Authorization: Bearer s3cret' http://$h:" + s.webPort + "/d"
	out, errOut, code := s.nash(t, t.TempDir()).run("", "run", "--yes", "--", curl)
	if code != 0 || !strings.Contains(out, "hello from web /d") {
		t.Fatalf("direct: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "allowed  web.nash.test:"+s.webPort) || !strings.Contains(errOut, "direct: contents not read") || strings.Contains(errOut, "credential") {
		t.Errorf("direct: the summary does not say so:\n%s", errOut)
	}
	b, _ := os.ReadFile(s.config)
	os.WriteFile(s.config, append(b, []byte("  relay: true\n")...), 0o644)
	out, errOut, code = s.nash(t, t.TempDir()).run("", "run", "--yes", "--", curl)
	if code != 0 || !strings.Contains(out, "hello from web /d") {
		t.Fatalf("relayed: exit %d\n%s\n%s", code, out, errOut)
	}
	if strings.Contains(errOut, "direct") || !strings.Contains(errOut, "credential sent: Authorization header") {
		t.Errorf("relayed: the summary does not name the credential:\n%s", errOut)
	}
	if s.webHits.Load() != 2 {
		t.Errorf("web reached %d times, want 2", s.webHits.Load())
	}
}
