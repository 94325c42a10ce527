package scripttest

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/sandbox"
)

// Tester derives variants of a script's starting state and runs the script
// on each in a sandbox. Its methods may be called from several goroutines.
type Tester struct {
	dir      string
	env      []string
	files    fs.FS // a view of /, for the analysis (effects.Files)
	sbOpts   []sandbox.Option
	parallel int
	timeout  time.Duration
	maxOut   int
	many     int
	umask    fs.FileMode // this process's, which the script inherits
}

// Option configures a Tester.
type Option func(*Tester)

// Dir sets the working directory the script runs in (default: the
// process's).
func Dir(dir string) Option { return func(t *Tester) { t.dir = dir } }

// Env sets the environment the script starts with (default: the
// process's). Variables the script uses are unset or emptied from it in
// some variants.
func Env(env []string) Option { return func(t *Tester) { t.env = env } }

// Sandbox adds options for every sandbox a run gets: its state dir, the
// init binary. Dir, Env and Stdio are the Tester's own.
func Sandbox(opts ...sandbox.Option) Option {
	return func(t *Tester) { t.sbOpts = append(t.sbOpts, opts...) }
}

// Parallel sets how many variants run at once (default: twice the number
// of CPUs, at least 4: a run spends much of its time waiting for the
// kernel, and on 2 cores 4 at once is quickest; BenchmarkTest).
func Parallel(n int) Option { return func(t *Tester) { t.parallel = n } }

// Timeout sets how long the script may run in one variant before it is
// killed (default 5s); what it did until then is still observed.
func Timeout(d time.Duration) Option { return func(t *Tester) { t.timeout = d } }

// ManyFiles sets how many files the many-files variant makes (default
// 50: a script that runs a command per file takes about 5 ms a file in the
// sandbox, and a test should take a second).
func ManyFiles(n int) Option { return func(t *Tester) { t.many = n } }

// New returns a Tester.
func New(opts ...Option) *Tester {
	t := &Tester{}
	for _, o := range opts {
		o(t)
	}
	if t.dir == "" {
		t.dir, _ = os.Getwd()
	}
	if abs, err := filepath.Abs(t.dir); err == nil {
		t.dir = abs
	}
	if t.env == nil {
		t.env = os.Environ()
	}
	t.files = os.DirFS("/")
	t.umask = processUmask()
	if t.parallel <= 0 {
		t.parallel = max(2*runtime.NumCPU(), 4)
	}
	if t.timeout <= 0 {
		t.timeout = 5 * time.Second
	}
	if t.maxOut <= 0 {
		t.maxOut = 16 << 10
	}
	if t.many <= 0 {
		t.many = 50
	}
	return t
}

// lstat looks at today's file at an absolute path.
func (t *Tester) lstat(p string) (fs.FileInfo, error) { return os.Lstat(p) }

func (t *Tester) hostMode(p string) (fs.FileMode, bool) {
	fi, err := t.lstat(p)
	if err != nil {
		return 0, false
	}
	return fi.Mode(), true
}

// fsName turns an absolute path into a name in a view of /.
func fsName(p string) string {
	p = filepath.Clean(p)
	if p == "/" {
		return "."
	}
	return p[1:]
}

// complete adds, before the entries, the directories the setup makes on
// the way to them (mkdir -p), so the observer knows them as the setup's.
func (t *Tester) complete(entries []Entry) []Entry {
	have := map[string]bool{}
	for _, e := range entries {
		have[e.Path] = true
	}
	var parents []Entry
	for _, e := range entries {
		if e.Type == effects.TypeNone {
			continue
		}
		var chain []string
		for d := filepath.Dir(e.Path); d != "/" && !have[d]; d = filepath.Dir(d) {
			if m, ok := t.hostMode(d); ok && m.IsDir() {
				break
			}
			chain = append(chain, d)
			have[d] = true
		}
		for i := len(chain) - 1; i >= 0; i-- {
			parents = append(parents, Entry{Path: chain[i], Type: effects.TypeDir})
		}
	}
	if len(parents) == 0 {
		return entries
	}
	return append(parents, entries...)
}

// processUmask reads this process's umask from /proc/self/status (setting
// it to read it would race with other goroutines); 022 when it cannot.
func processUmask() fs.FileMode {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0o022
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "Umask:"); ok {
			if n, err := strconv.ParseUint(strings.TrimSpace(v), 8, 32); err == nil {
				return fs.FileMode(n)
			}
		}
	}
	return 0o022
}
