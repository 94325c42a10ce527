package doctor

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/nash-shell/nash/planner"
)

// Config says what to check.
type Config struct {
	Machine Machine
	// StateDir is nash's state directory, where undo layers go.
	StateDir string
	// Exe is nash's executable, named in the AppArmor profile.
	Exe string
	// Sandbox runs a script in a real sandbox and checks that its change
	// was held back from the live files; nil skips the check.
	Sandbox func(ctx context.Context) error
	// Model is the configured model.
	Model ModelConfig
	// Index reports on the retrieval index; nil skips the check.
	Index func(ctx context.Context) (IndexState, error)
}

// ModelConfig is the configured model and how to reach it.
type ModelConfig struct {
	// Spec is the provider spec, like "ollama:qwen2.5-coder:7b".
	Spec string
	// Err is set when no planner could be built for Spec (an unknown
	// provider, a missing key): the check reports it without calling
	// List.
	Err error
	// List asks the provider for its models (planner.ListModels); nil
	// skips the check.
	List func(ctx context.Context) ([]planner.ModelInfo, error)
}

// IndexState is what the index check needs to know.
type IndexState struct {
	Dir    string
	Exists bool // an index was created there
	Files  int  // files indexed
}

// Thresholds of the space check.
const (
	MinFree  = 100 << 20 // below: fail
	WarnFree = 1 << 30   // below (or below WarnFraction of the total): warn
	// WarnFraction is the share of the file system below which free space
	// warns, in percent.
	WarnFraction = 5
)

// ModelTimeout bounds the model check.
const ModelTimeout = 10 * time.Second

// Checks returns the checks of cfg, in the order nash doctor runs them.
func Checks(cfg Config) []Check {
	m := cfg.Machine
	return []Check{
		{"userns", func(ctx context.Context) Result { return checkUserNS(ctx, m, cfg.Exe) }},
		{"overlayfs", func(context.Context) Result { return checkOverlay(m) }},
		{"bash", func(context.Context) Result { return checkBash(m) }},
		{"space", func(context.Context) Result { return checkSpace(m, cfg.StateDir) }},
		{"sandbox", func(ctx context.Context) Result { return checkSandbox(ctx, cfg.Sandbox) }},
		{"model", func(ctx context.Context) Result { return CheckModel(ctx, cfg.Model) }},
		{"index", func(ctx context.Context) Result { return checkIndex(ctx, cfg.Index) }},
	}
}

// sysctl reads a sysctl through /proc/sys; ok is false when it does not
// exist on this kernel.
func sysctl(m Machine, name string) (string, bool) {
	b, err := m.ReadFile("/proc/sys/" + strings.ReplaceAll(name, ".", "/"))
	if err != nil {
		return "", false
	}
	return strings.TrimSpace(string(b)), true
}

func checkUserNS(ctx context.Context, m Machine, exe string) Result {
	err := m.UserNS(ctx)
	restricted, _ := sysctl(m, "kernel.apparmor_restrict_unprivileged_userns")
	if err == nil {
		r := Result{Status: OK, Detail: "nash can create user namespaces"}
		if restricted == "1" && m.Getuid() != 0 {
			r.Detail += " (AppArmor restricts them, and allows nash)"
		}
		return r
	}
	if errors.Is(err, ErrUnsupported) {
		return Result{Status: Fail, Detail: "the sandbox needs Linux user namespaces", Cause: "not-linux"}
	}
	r := Result{Status: Fail, Detail: fmt.Sprintf("nash cannot create user namespaces (%v), so it cannot build its sandbox", err)}
	if exe == "" {
		exe = "/usr/local/bin/nash"
	}
	persist := func(name, value string) string {
		return fmt.Sprintf("echo '%s = %s' | sudo tee /etc/sysctl.d/60-nash-userns.conf   # to keep it after a reboot", name, value)
	}
	switch {
	case restricted == "1" && m.Getuid() != 0:
		r.Cause = "apparmor"
		r.Detail = "Ubuntu's AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns = 1), so nash cannot build its sandbox"
		r.Fix = []string{
			"allow them for nash alone, with an AppArmor profile:",
			fmt.Sprintf("  printf 'abi <abi/4.0>,\\ninclude <tunables/global>\\nprofile nash %s flags=(unconfined) {\\n  userns,\\n}\\n' | sudo tee /etc/apparmor.d/nash", exe),
			"  sudo apparmor_parser -r /etc/apparmor.d/nash",
			"or for every program (less strict):",
			"  sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0",
			"  " + persist("kernel.apparmor_restrict_unprivileged_userns", "0"),
		}
	case isZero(sysctl(m, "kernel.unprivileged_userns_clone")):
		r.Cause = "unprivileged_userns_clone"
		r.Detail = "the kernel does not let unprivileged users create user namespaces (kernel.unprivileged_userns_clone = 0)"
		r.Fix = []string{
			"sudo sysctl -w kernel.unprivileged_userns_clone=1",
			persist("kernel.unprivileged_userns_clone", "1"),
		}
	case isZero(sysctl(m, "user.max_user_namespaces")):
		r.Cause = "max_user_namespaces"
		r.Detail = "user namespaces are turned off (user.max_user_namespaces = 0)"
		r.Fix = []string{
			"sudo sysctl -w user.max_user_namespaces=15000",
			persist("user.max_user_namespaces", "15000"),
		}
	default:
		r.Fix = []string{
			"in a container, allow user namespaces there (Docker's default seccomp profile blocks them: run it with --security-opt seccomp=unconfined, or use podman)",
			"check the sysctls user.max_user_namespaces, kernel.unprivileged_userns_clone and kernel.apparmor_restrict_unprivileged_userns",
		}
	}
	r.Fix = append(r.Fix, "until then, nash run --unprotected runs scripts without a sandbox, and says so each time")
	return r
}

func isZero(v string, ok bool) bool { return ok && v == "0" }

func checkOverlay(m Machine) Result {
	fs, err := m.ReadFile("/proc/filesystems")
	loaded := err == nil && hasFilesystem(string(fs), "overlay")
	release, _ := sysctl(m, "kernel.osrelease")
	major, minor, relOK := kernelVersion(release)
	if m.Getuid() != 0 && relOK && (major < 5 || major == 5 && minor < 11) {
		return Result{
			Status: Warn, Cause: "old-kernel",
			Detail: fmt.Sprintf("Linux %s: overlayfs inside a user namespace needs 5.11 or later (Ubuntu's kernels have it earlier); the sandbox check says whether it works here", release),
			Fix:    []string{"upgrade the kernel to 5.11 or later"},
		}
	}
	if !loaded {
		return Result{
			Status: Warn, Cause: "not-loaded",
			Detail: "overlayfs is not loaded yet (the kernel loads it on first use where it can)",
			Fix:    []string{"sudo modprobe overlay"},
		}
	}
	d := "overlayfs is available"
	if relOK {
		d += " (Linux " + release + ")"
	}
	return Result{Status: OK, Detail: d}
}

// hasFilesystem reports whether /proc/filesystems lists name.
func hasFilesystem(list, name string) bool {
	for _, l := range strings.Split(list, "\n") {
		f := strings.Fields(l)
		if len(f) > 0 && f[len(f)-1] == name {
			return true
		}
	}
	return false
}

// kernelVersion reads "6.8.0-31-generic" as 6, 8.
func kernelVersion(release string) (major, minor int, ok bool) {
	parts := strings.SplitN(release, ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(strings.TrimFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }))
	return major, minor, err1 == nil && err2 == nil
}

func checkBash(m Machine) Result {
	p, err := m.LookPath("bash")
	if err != nil {
		return Result{Status: Fail, Cause: "no-bash", Detail: "bash is not on PATH; nash runs every script with bash", Fix: []string{"install bash (sudo apt install bash, sudo dnf install bash, ...)"}}
	}
	return Result{Status: OK, Detail: "scripts run with " + p}
}

func checkSpace(m Machine, dir string) Result {
	if dir == "" {
		return Result{Status: Skip, Detail: "no state directory"}
	}
	s, err := m.Statfs(dir)
	if err != nil {
		return Result{Status: Skip, Detail: fmt.Sprintf("cannot tell the free space: %v", err)}
	}
	d := fmt.Sprintf("%s free of %s where nash keeps undo layers (%s)", human(s.Free), human(s.Total), dir)
	fix := []string{"nash gc --older-than 7d releases old undo layers", "nash forget ID releases one transaction's"}
	switch {
	case s.Free < MinFree:
		return Result{Status: Fail, Cause: "full", Detail: d + ": too little to run a script that writes", Fix: fix}
	case s.Free < WarnFree || s.Total > 0 && s.Free*100 < s.Total*WarnFraction:
		return Result{Status: Warn, Cause: "low", Detail: d, Fix: fix}
	}
	return Result{Status: OK, Detail: d}
}

// human writes n bytes as 512 B, 3.2 MiB, 41.0 GiB.
func human(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n), -1
	for v >= unit && i < 4 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %ciB", v, "KMGTP"[i])
}

func checkSandbox(ctx context.Context, run func(context.Context) error) Result {
	if run == nil {
		return Result{Status: Skip, Detail: "no sandbox to try"}
	}
	if err := run(ctx); err != nil {
		return Result{Status: Fail, Cause: "sandbox", Detail: "a script could not be run in the sandbox: " + firstLine(err.Error())}
	}
	return Result{Status: OK, Detail: "a script ran in the sandbox and its change was held back until commit"}
}

// CheckModel asks the configured model's provider for its models, which
// costs no tokens, and reports whether it answers and offers the model.
// The first interactive start without a working model runs it alone.
func CheckModel(ctx context.Context, mc ModelConfig) Result {
	setup := setupSteps()
	if mc.Err != nil {
		return Result{Status: Fail, Cause: "no-provider", Detail: firstLine(mc.Err.Error()), Fix: setup}
	}
	if mc.List == nil {
		return Result{Status: Skip, Detail: "no model configured"}
	}
	ctx, cancel := context.WithTimeout(ctx, ModelTimeout)
	defer cancel()
	ms, err := mc.List(ctx)
	var serr *planner.StatusError
	switch {
	case errors.Is(err, planner.ErrNoProvider):
		return Result{Status: Fail, Cause: "no-provider", Detail: firstLine(err.Error()), Fix: setup}
	case errors.As(err, &serr) && (serr.StatusCode == http.StatusUnauthorized || serr.StatusCode == http.StatusForbidden):
		return Result{Status: Fail, Cause: "auth", Detail: fmt.Sprintf("%s refuses the key: %s", mc.Spec, firstLine(err.Error())),
			Fix: []string{"check the provider's key in the environment (OPENAI_API_KEY, ANTHROPIC_API_KEY, GOOGLE_API_KEY)"}}
	case errors.Is(err, context.DeadlineExceeded):
		return Result{Status: Fail, Cause: "timeout", Detail: fmt.Sprintf("%s did not answer within %s", mc.Spec, ModelTimeout)}
	case err != nil:
		return Result{Status: Fail, Cause: "error", Detail: fmt.Sprintf("%s: %s", mc.Spec, firstLine(err.Error()))}
	}
	spec, perr := planner.ParseSpec(mc.Spec)
	if perr != nil {
		return Result{Status: Fail, Cause: "no-provider", Detail: firstLine(perr.Error()), Fix: setup}
	}
	if planner.HasModel(ms, spec.Provider, spec.Model) {
		return Result{Status: OK, Detail: fmt.Sprintf("%s answers and offers the model (%d models in all)", mc.Spec, len(ms))}
	}
	if spec.Provider == planner.ProviderOllama {
		return Result{Status: Fail, Cause: "not-pulled", Detail: fmt.Sprintf("Ollama answers but has not pulled %s", spec.Model),
			Fix: []string{"ollama pull " + spec.Model, "or pick one it has: nash models"}}
	}
	return Result{Status: Warn, Cause: "not-listed", Detail: fmt.Sprintf("%s answers but does not list %s (an alias may still work)", spec.Provider, spec.Model),
		Fix: []string{"nash models lists what it offers"}}
}

// setupSteps is planner.SetupHelp as steps, without its heading.
func setupSteps() []string {
	lines := strings.Split(planner.SetupHelp, "\n")
	var out []string
	for _, l := range lines[1:] {
		if t := strings.TrimSpace(l); t != "" {
			out = append(out, t)
		}
	}
	return out
}

func checkIndex(ctx context.Context, f func(context.Context) (IndexState, error)) Result {
	if f == nil {
		return Result{Status: Skip, Detail: "no index configured"}
	}
	st, err := f(ctx)
	switch {
	case err != nil:
		return Result{Status: Fail, Cause: "error", Detail: "the index cannot be read: " + firstLine(err.Error()),
			Fix: []string{"nash index status says more"}}
	case !st.Exists:
		return Result{Status: Warn, Cause: "none", Detail: "no index yet: finding files by what they contain needs one",
			Fix: []string{"nash index add ~/Documents (or any folder)"}}
	case st.Files == 0:
		return Result{Status: Warn, Cause: "empty", Detail: "the index at " + st.Dir + " holds no files", Fix: []string{"nash index add PATH"}}
	}
	return Result{Status: OK, Detail: fmt.Sprintf("%d files indexed in %s", st.Files, st.Dir)}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
