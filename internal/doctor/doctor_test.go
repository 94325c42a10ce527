package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nash-shell/nash/planner"
)

// fakeMachine is a machine described by its files and answers.
type fakeMachine struct {
	uid    int
	files  map[string]string
	userns error
	space  Space
	bash   bool
}

func (f fakeMachine) machine() Machine {
	return Machine{
		Getuid: func() int { return f.uid },
		ReadFile: func(name string) ([]byte, error) {
			if v, ok := f.files[name]; ok {
				return []byte(v), nil
			}
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		},
		Statfs: func(string) (Space, error) { return f.space, nil },
		LookPath: func(file string) (string, error) {
			if file == "bash" && f.bash {
				return "/usr/bin/bash", nil
			}
			return "", errors.New("not found")
		},
		UserNS: func(context.Context) error { return f.userns },
	}
}

// healthy is a Debian machine where everything nash needs is there.
func healthy() fakeMachine {
	return fakeMachine{
		uid: 1000,
		files: map[string]string{
			"/proc/filesystems":                  "nodev\tsysfs\nnodev\ttmpfs\n\text4\nnodev\toverlay\n",
			"/proc/sys/kernel/osrelease":         "6.1.0-27-amd64\n",
			"/proc/sys/user/max_user_namespaces": "63349\n",
		},
		space: Space{Free: 50 << 30, Total: 100 << 30},
		bash:  true,
	}
}

// ubuntu is Ubuntu 24.04 with its AppArmor restriction on and no profile
// for nash: creating the user namespace works, setting it up does not.
func ubuntu() fakeMachine {
	m := healthy()
	m.files["/proc/sys/kernel/osrelease"] = "6.8.0-31-generic\n"
	m.files["/proc/sys/kernel/apparmor_restrict_unprivileged_userns"] = "1\n"
	m.userns = fmt.Errorf("fork/exec /usr/bin/true: %w", syscall.EACCES)
	return m
}

func run(t *testing.T, m fakeMachine, name string) Result {
	t.Helper()
	for _, c := range Checks(Config{Machine: m.machine(), StateDir: "/home/alice/.local/state/nash", Exe: "/usr/local/bin/nash"}) {
		if c.Name == name {
			r := Run(context.Background(), []Check{c})[0]
			if r.Check != name {
				t.Errorf("result names check %q", r.Check)
			}
			return r
		}
	}
	t.Fatalf("no check %s", name)
	return Result{}
}

// TestUserNS: a machine without user namespaces fails the check with the
// cause named and the fix for it, Ubuntu's AppArmor restriction first.
func TestUserNS(t *testing.T) {
	tests := []struct {
		name   string
		m      func() fakeMachine
		status Status
		cause  string
		detail string
		fix    []string // each must appear in some fix line
	}{
		{"healthy", healthy, OK, "", "nash can create user namespaces", nil},
		{"ubuntu with AppArmor restriction", ubuntu, Fail, "apparmor", "kernel.apparmor_restrict_unprivileged_userns = 1",
			[]string{"profile nash /usr/local/bin/nash flags=(unconfined)", "userns,", "sudo apparmor_parser -r /etc/apparmor.d/nash", "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0", "/etc/sysctl.d/", "--unprotected"}},
		{"ubuntu with a profile for nash", func() fakeMachine { m := ubuntu(); m.userns = nil; return m }, OK, "", "AppArmor restricts them, and allows nash", nil},
		{"ubuntu as root: not AppArmor's doing", func() fakeMachine { m := ubuntu(); m.uid = 0; return m }, Fail, "", "permission denied", []string{"container"}},
		{"debian's switch off", func() fakeMachine {
			m := healthy()
			m.files["/proc/sys/kernel/unprivileged_userns_clone"] = "0\n"
			m.userns = syscall.EPERM
			return m
		}, Fail, "unprivileged_userns_clone", "kernel.unprivileged_userns_clone = 0", []string{"sudo sysctl -w kernel.unprivileged_userns_clone=1"}},
		{"no user namespaces at all", func() fakeMachine {
			m := healthy()
			m.files["/proc/sys/user/max_user_namespaces"] = "0\n"
			m.userns = syscall.ENOSPC
			return m
		}, Fail, "max_user_namespaces", "user.max_user_namespaces = 0", []string{"sudo sysctl -w user.max_user_namespaces=15000"}},
		{"a container's seccomp", func() fakeMachine { m := healthy(); m.userns = syscall.EPERM; return m }, Fail, "", "operation not permitted", []string{"seccomp=unconfined"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, tt.m(), "userns")
			if r.Status != tt.status || r.Cause != tt.cause || !strings.Contains(r.Detail, tt.detail) {
				t.Errorf("got %v %q %q, want %v %q with %q", r.Status, r.Cause, r.Detail, tt.status, tt.cause, tt.detail)
			}
			fix := strings.Join(r.Fix, "\n")
			for _, f := range tt.fix {
				if !strings.Contains(fix, f) {
					t.Errorf("fix lacks %q:\n%s", f, fix)
				}
			}
			if tt.status == OK && len(r.Fix) > 0 {
				t.Errorf("a passing check offers a fix: %v", r.Fix)
			}
		})
	}
}

func TestOverlayBashSpace(t *testing.T) {
	tests := []struct {
		name   string
		check  string
		m      func() fakeMachine
		status Status
		cause  string
		detail string
	}{
		{"overlay", "overlayfs", healthy, OK, "", "overlayfs is available (Linux 6.1.0-27-amd64)"},
		{"overlay not loaded", "overlayfs", func() fakeMachine {
			m := healthy()
			m.files["/proc/filesystems"] = "nodev\tsysfs\n\text4\n"
			return m
		}, Warn, "not-loaded", "not loaded"},
		{"old kernel", "overlayfs", func() fakeMachine {
			m := healthy()
			m.files["/proc/sys/kernel/osrelease"] = "5.10.0-30-amd64"
			return m
		}, Warn, "old-kernel", "needs 5.11"},
		{"old kernel as root", "overlayfs", func() fakeMachine {
			m := healthy()
			m.uid = 0
			m.files["/proc/sys/kernel/osrelease"] = "5.4.0"
			return m
		}, OK, "", "available"},
		{"bash", "bash", healthy, OK, "", "/usr/bin/bash"},
		{"no bash", "bash", func() fakeMachine { m := healthy(); m.bash = false; return m }, Fail, "no-bash", "not on PATH"},
		{"room", "space", healthy, OK, "", "50.0 GiB free of 100.0 GiB"},
		{"full disk", "space", func() fakeMachine { m := healthy(); m.space = Space{Free: 50 << 20, Total: 100 << 30}; return m }, Fail, "full", "50.0 MiB free"},
		{"little room", "space", func() fakeMachine { m := healthy(); m.space = Space{Free: 500 << 20, Total: 100 << 30}; return m }, Warn, "low", "500.0 MiB"},
		{"little room for its size", "space", func() fakeMachine { m := healthy(); m.space = Space{Free: 20 << 30, Total: 1 << 40}; return m }, Warn, "low", "20.0 GiB free of 1.0 TiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, tt.m(), tt.check)
			if r.Status != tt.status || r.Cause != tt.cause || !strings.Contains(r.Detail, tt.detail) {
				t.Errorf("got %v %q %q, want %v %q with %q", r.Status, r.Cause, r.Detail, tt.status, tt.cause, tt.detail)
			}
			if r.Status == Fail && len(r.Fix) == 0 {
				t.Error("a failure without a fix")
			}
		})
	}
}

// tagsServer is an Ollama that has pulled the models named.
func tagsServer(t *testing.T, models ...string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/tags" {
			http.NotFound(w, r)
			return
		}
		var b strings.Builder
		b.WriteString(`{"models":[`)
		for i, m := range models {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"name":%q,"model":%q,"size":1}`, m, m)
		}
		b.WriteString("]}")
		w.Write([]byte(b.String()))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestModel: the model check lists the provider's models through the real
// planner: answering with the model, without it, not answering at all,
// refusing the key, or not configurable.
func TestModel(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + l.Addr().String()
	l.Close()
	keyRefused := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"Incorrect API key provided"}}`, http.StatusUnauthorized)
	}))
	t.Cleanup(keyRefused.Close)
	openai := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"object":"list","data":[{"id":"gpt-4.1","object":"model"}]}`))
	}))
	t.Cleanup(openai.Close)

	tests := []struct {
		name   string
		spec   string
		env    map[string]string
		status Status
		cause  string
		detail string
		fix    string
	}{
		{"pulled", "ollama:qwen2.5-coder:7b", map[string]string{"OLLAMA_HOST": tagsServer(t, "qwen2.5-coder:7b")}, OK, "", "answers and offers the model (1 models in all)", ""},
		{"pulled as latest", "ollama:llama3.2", map[string]string{"OLLAMA_HOST": tagsServer(t, "llama3.2:latest")}, OK, "", "offers the model", ""},
		{"not pulled", "ollama:qwen2.5-coder:7b", map[string]string{"OLLAMA_HOST": tagsServer(t, "llama3.2:latest")}, Fail, "not-pulled", "has not pulled qwen2.5-coder:7b", "ollama pull qwen2.5-coder:7b"},
		{"nothing answers", "ollama:qwen2.5-coder:7b", map[string]string{"OLLAMA_HOST": down}, Fail, "no-provider", "nothing answers", "ollama serve"},
		{"key refused", "openai:gpt-4o-mini", map[string]string{"OPENAI_BASE_URL": keyRefused.URL + "/v1", "OPENAI_API_KEY": "sk-bad"}, Fail, "auth", "refuses the key", "OPENAI_API_KEY"},
		{"not listed", "openai:gpt-4o-mini", map[string]string{"OPENAI_BASE_URL": openai.URL + "/v1", "OPENAI_API_KEY": "k"}, Warn, "not-listed", "does not list gpt-4o-mini", "nash models"},
		{"no key", "anthropic:claude-3-5-haiku-latest", nil, Fail, "no-provider", "ANTHROPIC_API_KEY is not set", "ANTHROPIC_API_KEY"},
		{"unknown provider", "mistral:large", nil, Fail, "no-provider", "unknown provider", "ollama serve"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mc := ModelConfig{Spec: tt.spec}
			p, err := planner.New(planner.ModelSpec(tt.spec), planner.Getenv(func(k string) string { return tt.env[k] }))
			if err != nil {
				mc.Err = err
			} else {
				mc.List = p.ListModels
			}
			r := CheckModel(context.Background(), mc)
			if r.Status != tt.status || r.Cause != tt.cause || !strings.Contains(r.Detail, tt.detail) {
				t.Errorf("got %v %q %q, want %v %q with %q", r.Status, r.Cause, r.Detail, tt.status, tt.cause, tt.detail)
			}
			if strings.Contains(r.Detail, "\n") {
				t.Errorf("detail is more than a line: %q", r.Detail)
			}
			if tt.fix != "" && !strings.Contains(strings.Join(r.Fix, "\n"), tt.fix) {
				t.Errorf("fix lacks %q: %q", tt.fix, r.Fix)
			}
		})
	}
}

func TestSandboxAndIndex(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		cfg  Config
		want map[string]Status
	}{
		{"skipped", Config{}, map[string]Status{"sandbox": Skip, "index": Skip, "model": Skip}},
		{"all well", Config{
			Sandbox: func(context.Context) error { return nil },
			Index:   func(context.Context) (IndexState, error) { return IndexState{Dir: "/x", Exists: true, Files: 12}, nil },
		}, map[string]Status{"sandbox": OK, "index": OK}},
		{"broken", Config{
			Sandbox: func(context.Context) error { return errors.New("sandbox unavailable: cannot mount overlay\nmore") },
			Index:   func(context.Context) (IndexState, error) { return IndexState{Dir: "/x"}, errors.New("bad format") },
		}, map[string]Status{"sandbox": Fail, "index": Fail}},
		{"no index yet", Config{
			Index: func(context.Context) (IndexState, error) { return IndexState{Dir: "/x"}, nil },
		}, map[string]Status{"index": Warn}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Machine = healthy().machine()
			got := map[string]Status{}
			for _, r := range Run(ctx, Checks(tt.cfg)) {
				if _, ok := tt.want[r.Check]; ok {
					got[r.Check] = r.Status
				}
				if strings.Contains(r.Detail, "\n") {
					t.Errorf("%s: detail is more than a line: %q", r.Check, r.Detail)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestRunAndWorst(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var ran []string
	checks := []Check{
		{"a", func(context.Context) Result { ran = append(ran, "a"); return Result{Status: Warn} }},
		{"b", func(context.Context) Result { ran = append(ran, "b"); cancel(); return Result{Status: OK} }},
		{"c", func(context.Context) Result { ran = append(ran, "c"); return Result{Status: Fail} }},
	}
	rs := Run(ctx, checks)
	if diff := cmp.Diff([]string{"a", "b"}, ran); diff != "" {
		t.Errorf("ran (-want +got):\n%s", diff)
	}
	if rs[2].Status != Skip || Worst(rs) != Warn {
		t.Errorf("results %+v, worst %v", rs, Worst(rs))
	}
	if Worst([]Result{{Status: OK}, {Status: Fail}, {Status: Warn}}) != Fail {
		t.Error("a failure is not the worst")
	}
	b, _ := json.Marshal(Result{Check: "x", Status: Fail})
	if !strings.Contains(string(b), `"status":"fail"`) {
		t.Errorf("JSON %s", b)
	}
}

// TestHost: on this machine, where nash's sandbox tests run, the real
// probes find user namespaces and room in a directory that does not exist
// yet.
func TestHost(t *testing.T) {
	h := Host()
	if err := h.UserNS(context.Background()); err != nil {
		t.Errorf("user namespaces: %v", err)
	}
	s, err := h.Statfs(t.TempDir() + "/state/nash/not/yet")
	if err != nil || s.Total == 0 || s.Free > s.Total {
		t.Errorf("statfs: %+v, %v", s, err)
	}
	if _, err := os.Stat("/proc/filesystems"); err == nil {
		if r := checkOverlay(h); r.Status == Fail {
			t.Errorf("overlay: %+v", r)
		}
	}
}
