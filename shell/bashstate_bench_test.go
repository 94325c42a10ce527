package shell

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// loadHostRC reads rc as the shell reads ~/.bashrc (rcScript, here with
// bash on the host rather than in the sandbox) into a new session.
func loadHostRC(tb testing.TB, rc string) *hostSession {
	tb.Helper()
	h := newHostSession(tb)
	src, err := os.ReadFile(rc)
	if err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(h.dir, ".bashrc"), src, 0o644); err != nil {
		tb.Fatal(err)
	}
	ls, err := h.st.bash.line()
	if err != nil {
		tb.Fatal(err)
	}
	prologue := filepath.Join(h.dir, "prologue.sh")
	if err := os.WriteFile(prologue, []byte(sessionPrologue), 0o600); err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command("bash", "-c", rcScript, "bash")
	cmd.Dir = h.dir
	cmd.Env = append(h.st.Environ(), "__NASH_OUT="+ls.out, "__NASH_PROLOGUE="+prologue)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		tb.Fatalf("read the rc: %v\n%s", err, out.Bytes())
	}
	kept := map[string][]byte{}
	for _, name := range []string{stateFile, funcsrcFile} {
		if b, err := os.ReadFile(filepath.Join(ls.out, name)); err == nil {
			kept[name] = b
		}
	}
	ls.skip = completionFuncs(kept[funcsrcFile])
	h.st.bash.skip = ls.skip
	r := ls.read(kept)
	if r.err != nil {
		tb.Fatalf("the rc left no state: %v\n%s", r.err, out.Bytes())
	}
	h.st.applyLine(r, false, 0)
	return h
}

// TestBashrcSession: what a 300-line ~/.bashrc defines (aliases,
// functions, PATH, shell options) is there for the lines that follow.
func TestBashrcSession(t *testing.T) {
	h := loadHostRC(t, filepath.Join("testdata", "bashrc300.sh"))
	if !h.st.IsCommand("gs") || !h.st.IsCommand("mkcd") {
		t.Errorf("the rc's alias gs and function mkcd are not commands of the session")
	}
	if !strings.HasPrefix(h.st.Getenv("PATH"), filepath.Join(h.dir, "bin")+":") {
		t.Errorf("PATH = %q, want the rc's additions", h.st.Getenv("PATH"))
	}
	out, errs, _ := h.line("mkcd sub/dir >/dev/null; type -t gs; shopt -q globstar && echo globstar")
	if out != "alias\nglobstar\n" || errs != "" {
		t.Errorf("got %q (stderr %q)", out, errs)
	}
	if filepath.Base(h.st.Dir) != "dir" {
		t.Errorf("mkcd did not move the session: %s", h.st.Dir)
	}
}

// BenchmarkSessionRestore is the per-line cost of carrying a session with
// a 300-line ~/.bashrc from one line to the next: writing the state file,
// bash reading it, bash writing the new state as it exits, and nash
// reading that. Each iteration runs the same line twice, interleaved, the
// same way but for the session: plain, then with it; the metrics are
// their times and the difference, the cost. Budget: 5 ms a line.
func BenchmarkSessionRestore(b *testing.B) {
	h := loadHostRC(b, filepath.Join("testdata", "bashrc300.sh"))
	var plain, session time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, errs := h.plainLine("true"); errs != "" {
			b.Fatal(errs)
		}
		t1 := time.Now()
		if _, errs, r := h.line("true"); r.err != nil || errs != "" {
			b.Fatalf("%v %s", r.err, errs)
		}
		plain += t1.Sub(t0)
		session += time.Since(t1)
	}
	n := float64(b.N) * float64(time.Millisecond)
	b.ReportMetric(float64(plain)/n, "plain-ms/line")
	b.ReportMetric(float64(session)/n, "session-ms/line")
	b.ReportMetric(float64(session-plain)/n, "cost-ms/line")
}
