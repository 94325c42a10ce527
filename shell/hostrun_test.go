package shell

import (
	"slices"
	"strings"
	"testing"
)

func TestHostLookRespectsSession(t *testing.T) {
	e := newEngine(Config{Home: "/home/ann"})
	for _, tt := range []struct {
		script   string
		shadowed map[string]bool
		host     bool
	}{
		{"ps aux", nil, true},
		{"ps aux", map[string]bool{"ps": true}, false},            // the person's alias or function
		{"ps aux | grep x", map[string]bool{"grep": true}, false}, // a filter shadowed too
		{"ps aux | grep x", map[string]bool{"other": true}, true},
		{"rm x", nil, false},
	} {
		h := e.hostLook(job{shadowed: tt.shadowed}, tt.script)
		if (h != nil) != tt.host {
			t.Errorf("hostLook(%q, %v) = %v, want host %v", tt.script, tt.shadowed, h, tt.host)
		}
	}
}

func TestHostEnv(t *testing.T) {
	env := hostEnv([]string{"HOME=/home/ann", "BASH_ENV=/tmp/state.sh", "__NASH_OUT=/tmp/out", "PATH=/home/ann/bin:/usr/bin",
		"BASH_FUNC_ps%%=() { rm -rf ~; }", "ENV=/x", "LANG=C.UTF-8"}, "/usr/bin:/bin")
	want := []string{"HOME=/home/ann", "LANG=C.UTF-8", "PATH=/usr/bin:/bin", "LESSHISTFILE=-"}
	if !slices.Equal(env, want) {
		t.Fatalf("hostEnv = %q, want %q", env, want)
	}
	for _, d := range strings.Split(trustedPath(), ":") {
		if !slices.Contains(systemDirs, d) {
			t.Fatalf("trustedPath has %q, not a system directory", d)
		}
	}
}
