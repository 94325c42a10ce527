package egress

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestPredict(t *testing.T) {
	repo := t.TempDir()
	os.MkdirAll(filepath.Join(repo, ".git"), 0o755)
	os.WriteFile(filepath.Join(repo, ".git", "config"), []byte("[remote \"origin\"]\n\turl = git@github.com:nash-shell/nash.git\n[remote \"mirror\"]\n\turl = https://git.example.org:8443/nash.git\n"), 0o644)
	for _, tc := range []struct {
		script string
		want   []string
	}{
		{"curl -fsSL https://example.com/install.sh -o i.sh", []string{"example.com:443"}},
		{"wget http://10.0.0.5:8080/x; curl http://[::1]:11434/api", []string{"10.0.0.5:8080", "[::1]:11434"}},
		{"git clone git@github.com:a/b.git && cd b", []string{"github.com:22"}},
		{"pip install requests", []string{"pypi.org:443", "files.pythonhosted.org:443"}},
		{"cd x && npm ci", []string{"registry.npmjs.org:443"}},
		{"go mod download", []string{"proxy.golang.org:443", "sum.golang.org:443"}},
		{"git pull --rebase", []string{"github.com:22", "git.example.org:8443"}},
		{"echo pip install is how; ls", nil},
		{"curl https://$HOST/x", nil},
		{"echo hi", nil},
	} {
		var got []string
		for _, r := range Predict(tc.script, repo) {
			got = append(got, r.String())
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("Predict(%q) = %q, want %q", tc.script, got, tc.want)
		}
	}
}
