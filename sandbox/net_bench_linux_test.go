package sandbox

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/nash-shell/nash/sandbox/egress"
)

// BenchmarkNetDownload downloads 1 GiB from a server on the host's
// loopback with curl, natively, from a sandbox allowed to reach it (a
// direct connection, the default) and from one that relays it (NetRelay),
// side by side in one loop, and reports the rates and their ratios to
// native (curl's own measure of the transfer).
func BenchmarkNetDownload(b *testing.B) {
	const size = 1 << 30
	chunk := make([]byte, 1<<20)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(size))
		for n := 0; n < size; n += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	curl := fmt.Sprintf("curl -sS -o /dev/null -w '%%{speed_download}\\n' %s/gib", srv.URL)
	allow, _ := egress.ParseRules(strings.TrimPrefix(srv.URL, "http://"))
	e := newEnv(b, NetPolicy(egress.Policy{Allow: allow}))
	r := newEnv(b, NetPolicy(egress.Policy{Allow: allow}), NetRelay(true))
	var native, direct, relayed float64
	for b.Loop() {
		out, err := exec.Command("bash", "-c", curl).Output()
		if err != nil {
			b.Fatal(err)
		}
		native += parseRate(b, string(out))
		direct += runRate(b, e, curl)
		relayed += runRate(b, r, curl)
	}
	n := float64(b.N)
	b.ReportMetric(native/n/(1<<20), "native-MiB/s")
	b.ReportMetric(direct/n/(1<<20), "direct-MiB/s")
	b.ReportMetric(relayed/n/(1<<20), "relay-MiB/s")
	b.ReportMetric(direct/native, "direct/native")
	b.ReportMetric(relayed/native, "relay/native")
}

// runRate runs script in e, discards the run, and returns the number the
// script printed.
func runRate(b *testing.B, e *env, script string) float64 {
	e.stdout.Reset()
	p := e.run(script)
	_ = e.sb.Abort(p.ID)
	return parseRate(b, e.stdout.String())
}

func parseRate(b *testing.B, s string) float64 {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || f == 0 {
		b.Fatalf("no rate in %q", s)
	}
	return f
}

// BenchmarkNetConnect makes 200 connections one after another to an echo
// server on the host's loopback, each sending a line and reading the
// answer, natively and from a sandbox allowed to reach it, and reports the
// time each connection takes in both and what nash adds.
func BenchmarkNetConnect(b *testing.B) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				line, _ := bufio.NewReader(c).ReadString('\n')
				io.WriteString(c, line)
				c.Close()
			}()
		}
	}()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	const conns = 200
	loop := fmt.Sprintf(`t0=$(date +%%s%%N); for i in $(seq %d); do exec 3<>/dev/tcp/127.0.0.1/%s; echo x >&3; read -r l <&3; exec 3<&-; done; echo $(( ($(date +%%s%%N) - t0) / %d ))`, conns, port, conns)
	allow, _ := egress.ParseRules("127.0.0.1:" + port)
	e := newEnv(b, NetPolicy(egress.Policy{Allow: allow}))
	r := newEnv(b, NetPolicy(egress.Policy{Allow: allow}), NetRelay(true))
	var native, direct, relayed float64
	for b.Loop() {
		out, err := exec.Command("bash", "-c", loop).Output()
		if err != nil {
			b.Fatal(err)
		}
		native += parseRate(b, string(out))
		direct += runRate(b, e, loop)
		relayed += runRate(b, r, loop)
	}
	n := float64(b.N)
	b.ReportMetric(native/n/1000, "native-µs/conn")
	b.ReportMetric((direct-native)/n/1000, "direct-added-µs/conn")
	b.ReportMetric((relayed-native)/n/1000, "relay-added-µs/conn")
}
