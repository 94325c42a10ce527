package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/sandbox"
)

// A script that only looks at the host's processes and sockets (ps, ss,
// lsof; effects.ParseHostLook), and perhaps signals them (kill, once the
// person confirmed that it cannot be undone), runs on the host, not in the
// sandbox: in the sandbox it would see the sandbox's own two processes and
// no sockets, and answer a question about the host wrongly. It changes no
// file and reaches no network (lsof and netstat get -n), so there is
// nothing to hold back or to commit. It runs with the system's programs
// alone: bash without startup files, PATH the system's directories that
// only root can write, none of the session's aliases or functions (a line
// that uses one by these names runs in the sandbox instead).

// systemDirs are where the host's look commands are taken from, when root
// owns them and no one else can write them.
var systemDirs = []string{"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin"}

// hostLook returns j's script as a look at the host, or nil to run it in
// the sandbox.
func (e *engine) hostLook(j job, script string) *effects.HostLook {
	h, ok := effects.ParseHostLook(script)
	if !ok {
		return nil
	}
	for _, c := range h.Commands {
		if j.shadowed[c] {
			return nil
		}
	}
	return h
}

// trustedPath is the PATH for a run on the host: the system directories
// that exist, are root's, and that no one else can write.
func trustedPath() string {
	var dirs []string
	for _, d := range systemDirs {
		fi, err := os.Stat(d)
		if err != nil || !fi.IsDir() {
			continue
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok || st.Uid != 0 || fi.Mode().Perm()&0o022 != 0 {
			continue
		}
		dirs = append(dirs, d)
	}
	return strings.Join(dirs, ":")
}

// hostEnv is env for a run on the host: nothing that makes bash read a
// file at start, the trusted PATH, and no history file for a pager.
func hostEnv(env []string, path string) []string {
	out := make([]string, 0, len(env)+2)
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == "BASH_ENV", name == "ENV", name == "PATH", name == "LESSHISTFILE",
			strings.HasPrefix(name, "__NASH_"), strings.HasPrefix(name, "BASH_FUNC_"):
			continue
		}
		out = append(out, kv)
	}
	return append(out, "PATH="+path, "LESSHISTFILE=-")
}

// runHost runs a host look in dir with env, on the given streams. Only a
// terminal (or another file) is handed over as stdin: input piped to nash
// stays for what reads next.
func (e *engine) runHost(ctx context.Context, h *effects.HostLook, dir string, env []string, stdin io.Reader, stdout, stderr io.Writer) (*outcome, error) {
	path := trustedPath()
	bash := ""
	for _, d := range filepath.SplitList(path) {
		if fi, err := os.Stat(filepath.Join(d, "bash")); err == nil && fi.Mode().IsRegular() {
			bash = filepath.Join(d, "bash")
			break
		}
	}
	if bash == "" {
		return nil, errors.New("no bash in the system's directories to look at the host with")
	}
	cmd := exec.CommandContext(ctx, bash, "--norc", "--noprofile", "-c", h.Script)
	cmd.Dir, cmd.Env = dir, hostEnv(env, path)
	if f, ok := stdin.(*os.File); ok {
		cmd.Stdin = f
	}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	started := time.Now().UTC()
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			code = 128 + int(ws.Signal())
		}
	case err != nil:
		return nil, fmt.Errorf("look at the host: %w", err)
	}
	p := &sandbox.Pending{ExitCode: code, Started: started}
	return &outcome{pending: p, script: h.Script, dir: dir, host: h}, nil
}

// hostNote says what ran on the host, and why.
func hostNote(h *effects.HostLook) string {
	var b strings.Builder
	switch {
	case len(h.Acts) > 0:
		fmt.Fprintf(&b, "ran on the host (%s signals the host's processes)", strings.Join(dedup(h.Acts), ", "))
	default:
		fmt.Fprintf(&b, "ran on the host (%s looks at the host's processes and sockets)", strings.Join(dedup(h.Looks), ", "))
	}
	b.WriteString("; it changes no file")
	if len(h.NoLookup) > 0 {
		fmt.Fprintf(&b, " (%s with -n: no name lookups on the network)", strings.Join(dedup(h.NoLookup), ", "))
	}
	return b.String()
}

func dedup(s []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}
