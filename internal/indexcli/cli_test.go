package indexcli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestEmbedderFromEnv(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	for _, bad := range []string{"ollama", "ollama:", "magic:model"} {
		if _, _, err := embedderFromEnv(env(map[string]string{"NASH_EMBEDDER": bad})); err == nil {
			t.Errorf("NASH_EMBEDDER=%q accepted", bad)
		}
	}
	if e, _, err := embedderFromEnv(env(map[string]string{})); e != nil || err != nil {
		t.Errorf("no NASH_EMBEDDER: %v, %v", e, err)
	}
}

// TestMainExitCodes: bad command lines are usage errors (2) with a short
// message; an empty index is a failure (1).
func TestMainExitCodes(t *testing.T) {
	t.Setenv("NASH_INDEX_DIR", t.TempDir())
	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"find"}, exitUsage, "needs at least 1 argument"},
		{[]string{"find", "-k", "-s", "x"}, exitUsage, "exclude each other"},
		{[]string{"find", "--bogus", "x"}, exitUsage, "unknown flag"},
		{[]string{"index", "status", "extra"}, exitUsage, "takes no arguments"},
		{[]string{"index", "bogus"}, exitUsage, "unknown command"},
		{[]string{"find", "receipts"}, exitFailure, "index is empty"},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		code := Main(context.Background(), tt.args, strings.NewReader(""), &out, &errb)
		if code != tt.code || !strings.Contains(errb.String(), tt.msg) {
			t.Errorf("Main(%q) = %d, stderr %q; want %d and %q", tt.args, code, errb.String(), tt.code, tt.msg)
		}
	}
}
