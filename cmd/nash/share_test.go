package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// linkRE matches a share link and captures the host and token.
var linkRE = regexp.MustCompile(`^http://([^/]+)/s/([A-Za-z0-9_-]{43})/([^/\s]+)\n$`)

func TestShareCLI(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	n := newNash(t, dir)
	// Port 1 on loopback: nothing answers, so share says how to start serve.
	n.env = append(n.env, "NASH_SERVE_ADDR=127.0.0.1:1", "NASH_SHARE_URL=", "NASH_CONFIG="+filepath.Join(dir, "none.yaml"))

	out, errOut, code := n.run("", "share", "notes.txt", "--for", "3d")
	m := linkRE.FindStringSubmatch(out)
	if code != 0 || m == nil || m[1] != "127.0.0.1:1" || m[3] != "notes.txt" {
		t.Fatalf("share: exit %d, stdout %q, stderr %q; want a link to 127.0.0.1:1", code, out, errOut)
	}
	token := m[2]
	if !strings.Contains(errOut, "nash serve") {
		t.Errorf("share with no server: stderr %q does not say to start nash serve", errOut)
	}
	out2, _, _ := n.run("", "share", "notes.txt", "--addr", "[::1]:8080")
	if !strings.HasPrefix(out2, "http://[::1]:8080/s/") {
		t.Errorf("share --addr [::1]:8080: %q", out2)
	}

	out, errOut, code = n.run("", "share", "--list", "--json")
	var list []shareJSON
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != 2 {
		t.Fatalf("share --list --json: exit %d, %q, %q", code, out, errOut)
	}
	first := list[0]
	if first.Path != filepath.Join(dir, "notes.txt") || first.Expires.Sub(first.Created) != 72*time.Hour || first.Expired {
		t.Errorf("listed share %+v: want notes.txt for 72h", first)
	}
	out, _, code = n.run("", "share", "--list")
	if code != 0 || !strings.Contains(out, first.ID) || !strings.Contains(out, "notes.txt") || strings.Contains(out, token) {
		t.Errorf("share --list: exit %d\n%s", code, out)
	}

	// Revoke the second by ID, the first by its link.
	out, errOut, code = n.run("", "share", "--revoke", list[1].ID)
	if code != 0 || !strings.Contains(out, "revoked "+list[1].ID) {
		t.Errorf("revoke by id: exit %d, %q %q", code, out, errOut)
	}
	out, errOut, code = n.run("", "share", "--revoke", strings.TrimSpace(m[0]))
	if code != 0 || !strings.Contains(out, "revoked "+first.ID) {
		t.Errorf("revoke by link: exit %d, %q %q", code, out, errOut)
	}
	out, _, _ = n.run("", "share", "--list", "--json")
	if strings.TrimSpace(out) != "[]" {
		t.Errorf("after revoking both: %q", out)
	}
	_, errOut, code = n.run("", "share", "--revoke", token)
	if code != exitFailure || !strings.Contains(errOut, "no share with that token") || strings.Contains(errOut, token) {
		t.Errorf("revoke again: exit %d, %q", code, errOut)
	}

	// Refused: a directory, a missing file.
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ arg, want string }{{"sub", "directory"}, {"missing.txt", "no such file"}} {
		out, errOut, code := n.run("", "share", tc.arg)
		if code != exitFailure || out != "" || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("share %s: exit %d, %q %q; want exit 1 and one line saying %q", tc.arg, code, out, errOut, tc.want)
		}
	}
	// Bad command lines: exit 2.
	for _, args := range [][]string{
		{"share"},
		{"share", "a", "b"},
		{"share", "--list", "notes.txt"},
		{"share", "--list", "--revoke", "x"},
		{"share", "--revoke", "x", "--for", "1d"},
		{"share", "notes.txt", "--json"},
		{"share", "notes.txt", "--for", "soon"},
		{"share", "notes.txt", "--for", "0"},
		{"share", "notes.txt", "--for", "-1d"},
		{"share", "notes.txt", "--for", "99999d"},
		{"share", "notes.txt", "--addr", "nocolon"},
		{"share", "--bogus"},
	} {
		if _, errOut, code := n.run("", args...); code != exitUsage {
			t.Errorf("nash %s: exit %d (%q), want %d", strings.Join(args, " "), code, errOut, exitUsage)
		}
	}
	if out, _, _ := n.run("", "share", "--list", "--json"); strings.TrimSpace(out) != "[]" {
		t.Errorf("refused shares were stored: %s", out)
	}
}

func TestShareBadStore(t *testing.T) {
	dir := t.TempDir()
	n := newNash(t, dir)
	if err := os.MkdirAll(n.state, 0o700); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(n.state, "shares.json")
	if err := os.WriteFile(store, []byte("not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := n.run("", "share", "--list")
	if code != exitFailure || !strings.Contains(errOut, store) || !strings.Contains(errOut, "not a share store") {
		t.Errorf("share --list on a bad store: exit %d, %q", code, errOut)
	}
}

// server is a nash serve running in the background.
type server struct {
	cmd  *exec.Cmd
	addr string
	done chan error
}

// startServe starts nash serve with args and waits (at most a minute) for
// the line that gives its address.
func startServe(t *testing.T, n *nashCmd, args ...string) *server {
	t.Helper()
	cmd := exec.Command(testBin(t, "nash"), append([]string{"serve"}, args...)...)
	cmd.Dir = n.dir
	cmd.Env = append(os.Environ(), "NASH_STATE_DIR="+n.state)
	cmd.Env = append(cmd.Env, n.env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &server{cmd: cmd, done: make(chan error, 1)}
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-s.done
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "nash: serving shared files on http://"); ok {
				found <- strings.Fields(a)[0]
			}
		}
		close(found)
		io.Copy(io.Discard, stderr)
		s.done <- cmd.Wait()
	}()
	select {
	case a, ok := <-found:
		if !ok {
			t.Fatalf("nash serve %v exited without serving", args)
		}
		s.addr = a
	case <-time.After(time.Minute):
		t.Fatalf("nash serve %v: no address after a minute", args)
	}
	return s
}

// stop sends SIGTERM and returns the exit code.
func (s *server) stop(t *testing.T) int {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-s.done:
	case <-time.After(time.Minute):
		t.Fatal("nash serve did not stop within a minute of SIGTERM")
	}
	s.done <- nil // for the cleanup
	return s.cmd.ProcessState.ExitCode()
}

func httpGet(t *testing.T, url string, hdr ...string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func TestServeEndToEnd(t *testing.T) {
	dir := t.TempDir()
	data := strings.Repeat("0123456789", 1000)
	if err := os.WriteFile(filepath.Join(dir, "digits.txt"), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "secret.txt"), []byte("SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	n := newNash(t, dir)
	n.env = append(n.env, "NASH_SERVE_ADDR=", "NASH_SHARE_URL=", "NASH_CONFIG="+filepath.Join(dir, "none.yaml"))
	srv := startServe(t, n, "--addr", "127.0.0.1:0")

	// Share after the server started: it reads the store on every request.
	out, errOut, code := n.run("", "share", "digits.txt", "--addr", srv.addr)
	m := linkRE.FindStringSubmatch(out)
	if code != 0 || m == nil || m[1] != srv.addr {
		t.Fatalf("share: exit %d, %q %q", code, out, errOut)
	}
	if strings.Contains(errOut, "nothing answers") {
		t.Errorf("share said no server answers while one does: %q", errOut)
	}
	link := strings.TrimSpace(out)
	if status, body := httpGet(t, link); status != 200 || body != data {
		t.Errorf("GET link: %d, %d bytes; want 200 and %d bytes", status, len(body), len(data))
	}
	if status, body := httpGet(t, link, "Range", "bytes=10-19"); status != 206 || body != data[10:20] {
		t.Errorf("GET range: %d %q", status, body)
	}
	for _, p := range []string{"/s/../secret.txt", "/s/" + m[2] + "/..%2fsecret.txt", "/secret.txt", "/"} {
		if status, body := httpGet(t, "http://"+srv.addr+p); status != 404 || strings.Contains(body, "SECRET") {
			t.Errorf("GET %s: %d %q, want 404", p, status, body)
		}
	}
	// Revoked by another process: 404 at once.
	if _, errOut, code := n.run("", "share", "--revoke", link); code != 0 {
		t.Fatalf("revoke: exit %d %q", code, errOut)
	}
	if status, _ := httpGet(t, link); status != 404 {
		t.Errorf("GET after revoke: %d, want 404", status)
	}
	if code := srv.stop(t); code != 0 {
		t.Errorf("nash serve exit %d after SIGTERM, want 0", code)
	}
}

func TestServeAddress(t *testing.T) {
	dir := t.TempDir()
	n := newNash(t, dir)
	cfg := filepath.Join(dir, "config.yaml")
	n.env = append(n.env, "NASH_SERVE_ADDR=", "NASH_CONFIG="+cfg)
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "example.com:80", "192.0.2.1:8080"} {
		_, errOut, code := n.run("", "serve", "--addr", addr)
		if code != exitUsage || !strings.Contains(errOut, "--public") || !strings.Contains(errOut, "not a loopback") {
			t.Errorf("serve --addr %s: exit %d, %q; want 2 and a word about --public", addr, code, errOut)
		}
	}
	if _, errOut, code := n.run("", "serve", "--addr", "nonsense"); code != exitUsage {
		t.Errorf("serve --addr nonsense: exit %d %q", code, errOut)
	}
	if _, errOut, code := n.run("", "serve", "extra"); code != exitUsage {
		t.Errorf("serve extra: exit %d %q", code, errOut)
	}
	// The config file's address, refused the same way; the environment wins over it.
	if err := os.WriteFile(cfg, []byte("serve:\n  addr: 0.0.0.0:0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := n.run("", "serve"); code != exitUsage || !strings.Contains(errOut, "0.0.0.0:0") {
		t.Errorf("serve with serve.addr 0.0.0.0:0: exit %d, %q", code, errOut)
	}
	n.env = append(n.env, "NASH_SERVE_ADDR=localhost:0")
	srv := startServe(t, n)
	if !strings.HasPrefix(srv.addr, "127.0.0.1:") && !strings.HasPrefix(srv.addr, "[::1]:") {
		t.Errorf("NASH_SERVE_ADDR=localhost:0 served on %s", srv.addr)
	}
	if code := srv.stop(t); code != 0 {
		t.Errorf("exit %d", code)
	}
	// --public allows every interface, and says so.
	srv = startServe(t, n, "--addr", "0.0.0.0:0", "--public")
	if status, _ := httpGet(t, "http://"+strings.Replace(srv.addr, "0.0.0.0", "127.0.0.1", 1)+"/s/x"); status != 404 {
		t.Errorf("public server: %d", status)
	}
	if code := srv.stop(t); code != 0 {
		t.Errorf("exit %d", code)
	}
}
