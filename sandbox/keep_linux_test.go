package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestKeep: what a run writes in the Keep directory comes back in
// Pending.Kept and is no change: neither in the change set nor on disk
// after the commit, whether the directory is outside the working
// directory or inside it. A symlink left there is not followed.
func TestKeep(t *testing.T) {
	for _, inside := range []bool{false, true} {
		name := "outside"
		if inside {
			name = "inside"
		}
		t.Run(name, func(t *testing.T) {
			e := newEnv(t)
			keep := filepath.Join(t.TempDir(), "keep")
			if inside {
				keep = filepath.Join(e.work, ".keep")
			}
			if err := os.MkdirAll(keep, 0o700); err != nil {
				t.Fatal(err)
			}
			// The options, applied to the env's sandbox.
			Keep(keep)(e.sb)
			Env(append(os.Environ(), "K="+keep))(e.sb)
			p := e.run(`printf 'state\n' > "$K/out"; echo hi > file; mkdir "$K/sub"; ln -s /etc/hostname "$K/link"; echo x > "$K/sub/deep"`)
			if p.ExitCode != 0 {
				t.Fatalf("exit %d: %s", p.ExitCode, e.stderr.String())
			}
			if got := string(p.Kept["out"]); got != "state\n" {
				t.Errorf("Kept[out] = %q, want %q (kept: %v)", got, "state\n", keys(p.Kept))
			}
			if _, ok := p.Kept["link"]; ok {
				t.Error("a symlink in the keep directory was read")
			}
			if got, want := kinds(p, e.work), []string{"file created"}; !slices.Equal(got, want) {
				t.Errorf("changes %v, want %v", got, want)
			}
			e.commit(p)
			entries, _ := os.ReadDir(keep)
			if len(entries) != 0 {
				t.Errorf("the keep directory on disk holds %d entries after the commit", len(entries))
			}
		})
	}
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
