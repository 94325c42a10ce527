package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/internal/fstree"
)

// workflow is a developer's everyday work with a real tool, run natively
// (fenced) and through nash run --yes on the same fixture at the same path.
type workflow struct {
	name  string
	needs []string // commands it needs on PATH
	quick bool     // part of the quick tier (-short)
	// setup builds the fixture in the current directory, natively.
	setup string
	// warm, when set, runs the script once natively on a copy of the
	// fixture elsewhere first, so that a cache outside the fixture is warm
	// for both runs (the Go build cache: compiling the standard library).
	warm   bool
	script string
	env    []string // {base} stands for the fixture, {cache} for a cache dir outside it
	stdout bool     // the script's stdout must match too
	// ignore lists paths (globs, **/ for any depth; a trailing / for a
	// whole tree) left out of
	// the comparison with the native run, with why in a comment where
	// they are set; noContent, paths whose content is left out. Undo is
	// checked on the whole tree, always.
	ignore, noContent []string
	// renamed are directories (relative) the summary must show renamed.
	renamed []string
}

// workflowPath is PATH for the workflows: the system's tools and Go, not
// a user's version managers, so that a run as root and one as another
// user use the same ones.
const workflowPath = "PATH=/usr/local/go/bin:/usr/local/bin:/usr/bin:/bin"

var workflows = []workflow{
	{
		name: "git", needs: []string{"git"}, quick: true, stdout: true,
		env: []string{"HOME={base}/home", "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=Ann", "GIT_AUTHOR_EMAIL=ann@example.org",
			"GIT_COMMITTER_NAME=Ann", "GIT_COMMITTER_EMAIL=ann@example.org",
			"GIT_AUTHOR_DATE=2024-01-02T03:04:05Z", "GIT_COMMITTER_DATE=2024-01-02T03:04:05Z"},
		setup: `mkdir home repo && cd repo && git init -q -b main . && git config gc.auto 0
mkdir -p src/lib docs && for i in 1 2 3; do echo "line $i" > src/lib/f$i.c; done
echo readme > README && echo doc > docs/guide && git add -A && git commit -qm init
echo more >> README && git commit -qam second`,
		script: `set -e
cd repo
echo change >> src/lib/f1.c
git stash -q
git checkout -q -b feature
echo feat > feature.txt && git add feature.txt && git commit -qm feature
git checkout -q main
echo main >> README && git commit -qam main-change
git checkout -q feature
git rebase -q main
git stash pop -q
git commit -qam wip
git mv src/lib src/core
git commit -qm "move lib to core"
git worktree add -q ../wt main
git log --oneline --all
git status --short
ls ../wt ../wt/src`,
		// The index caches each file's inode, device and times.
		noContent: []string{"repo/.git/index", "repo/.git/worktrees/*/index"},
		renamed:   []string{"repo/src/core"},
	},
	{
		name: "make", needs: []string{"make"}, quick: true, stdout: true,
		setup: `mkdir in && for f in a b c; do echo "$f text" > in/$f.txt; done
touch -d 2020-01-01 in/*.txt
cat > Makefile <<'EOF'
SRC := $(wildcard in/*.txt)
OUT := $(patsubst in/%.txt,out/%.txt,$(SRC))
all: $(OUT) out/all.txt
out/%.txt: in/%.txt
	@mkdir -p out && sed 's/^/> /' $< > $@ && echo built $@
out/all.txt: $(OUT)
	@cat $^ > $@ && echo built $@
clean:
	rm -rf out
.PHONY: all clean
EOF`,
		script: `set -e
make
touch -d 2030-01-01 in/b.txt
echo changed > in/b.txt && touch -d 2030-01-01 in/b.txt
make
make
make clean && make`,
	},
	{
		name: "sqlite", needs: []string{"sqlite3"}, quick: true, stdout: true,
		setup: `sqlite3 shop.db "create table items(id integer primary key, name text, qty int); insert into items(name, qty) values ('apple', 3), ('pear', 5);"`,
		script: `set -e
sqlite3 shop.db "insert into items(name, qty) values ('plum', 7); update items set qty = qty + 1 where name = 'apple'; delete from items where name = 'pear';"
sqlite3 shop.db "create index by_name on items(name); vacuum;"
sqlite3 shop.db .dump > dump.sql
sqlite3 shop.db "select name, qty from items order by id"`,
	},
	{
		name: "tar, zip, rsync", needs: []string{"tar", "gzip", "zip", "unzip", "rsync"}, quick: true, stdout: true,
		setup: `mkdir -p src/a/b mirror && for i in 1 2 3; do echo "file $i" > src/a/f$i; done
echo deep > src/a/b/deep && ln src/a/f1 src/a/f1-link && ln -s f2 src/a/f2-sym && chmod 600 src/a/f3
echo stale > mirror/stale && echo old > mirror/f && touch -d 2020-01-01 src/a/f* src/a/b/deep`,
		script: `set -e
tar czf src.tgz src && mkdir restored && tar xzf src.tgz -C restored
zip -qrXy src.zip src && unzip -q src.zip -d unzipped
rsync -aH --delete src/ mirror/
tar tzf src.tgz | sort
unzip -Z1 src.zip | sort`,
	},
	{
		name: "python venv and pip", needs: []string{"python3"}, stdout: true,
		env: []string{"HOME={base}/home", "PIP_NO_CACHE_DIR=1", "PIP_DISABLE_PIP_VERSION_CHECK=1", "PYTHONDONTWRITEBYTECODE=1"},
		setup: `mkdir home wheels pkgs && cat > backend.py <<'EOF'
# A PEP 517 build backend with no requirements, so pip builds offline.
import base64, hashlib, os, zipfile

def get_requires_for_build_wheel(config_settings=None):
    return []

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    name, version = open("NAME").read().split()
    dist = f"{name}-{version}.dist-info"
    files = {}
    for root, _, names in sorted(os.walk(name)):
        for n in sorted(names):
            p = os.path.join(root, n)
            files[p] = open(p, "rb").read()
    files[f"{dist}/METADATA"] = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode()
    files[f"{dist}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: nash-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = []
    for p, b in files.items():
        h = base64.urlsafe_b64encode(hashlib.sha256(b).digest()).rstrip(b"=").decode()
        record.append(f"{p},sha256={h},{len(b)}")
    record.append(f"{dist}/RECORD,,")
    files[f"{dist}/RECORD"] = ("\n".join(record) + "\n").encode()
    whl = f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, whl), "w") as z:
        for p in sorted(files):
            zi = zipfile.ZipInfo(p, date_time=(2024, 1, 2, 3, 4, 6))
            zi.external_attr = 0o644 << 16
            z.writestr(zi, files[p])
    return whl
EOF
for v in 1 2; do d=pkgs/greet$v; mkdir -p $d/greet; echo "greet 1.$v" > $d/NAME
  echo "def hello(): return 'hello v$v'" > $d/greet/__init__.py; cp backend.py $d/
  (cd $d && python3 -c 'import backend; backend.build_wheel("../../wheels")'); done
d=pkgs/shout; mkdir -p $d/shout; echo "shout 0.1" > $d/NAME; cp backend.py $d/
echo "def shout(s): return s.upper()" > $d/shout/__init__.py
printf '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n' > $d/pyproject.toml`,
		script: `set -e
python3 -m venv venv
venv/bin/pip install -q --no-index --find-links wheels greet==1.1
venv/bin/python -c 'import greet; print(greet.hello())'
venv/bin/pip install -q --no-index --find-links wheels --upgrade greet
venv/bin/python -c 'import greet; print(greet.hello())'
venv/bin/pip install -q --no-index pkgs/shout
venv/bin/python -c 'import shout; print(shout.shout("hi"))'
venv/bin/pip uninstall -q -y greet
venv/bin/pip list --format=freeze`,
		// pip compiles what it installs; a .pyc records its source's
		// modification time, which is the time of the install.
		noContent: []string{"**/__pycache__/*.pyc"},
	},
	{
		name: "npm", needs: []string{"node", "npm"}, stdout: true,
		env: []string{"HOME={base}/home"},
		setup: `mkdir -p home pkgs/left-pad pkgs/upper app
echo '{"name": "left-pad", "version": "1.0.0", "main": "index.js"}' > pkgs/left-pad/package.json
echo 'module.exports = (s, n) => String(s).padStart(n);' > pkgs/left-pad/index.js
echo '{"name": "upper", "version": "2.1.0", "main": "index.js"}' > pkgs/upper/package.json
echo 'module.exports = (s) => String(s).toUpperCase();' > pkgs/upper/index.js
(cd pkgs && npm pack --silent ./left-pad ./upper >/dev/null)
echo '{"name": "app", "version": "1.0.0", "private": true}' > app/package.json`,
		script: `set -e
cd app
npm install --offline --no-audit --no-fund --silent ../pkgs/left-pad-1.0.0.tgz ../pkgs/upper-2.1.0.tgz
node -e 'console.log(require("left-pad")("x", 3), require("upper")("y"))'
npm uninstall --offline --no-audit --no-fund --silent upper
cat package.json; echo
ls node_modules`,
		// npm's cache index and logs carry the time of day in names and
		// contents.
		ignore: []string{"home/.npm/"},
	},
	{
		name: "go build with a module cache", needs: []string{"go", "zip"}, stdout: true, warm: true,
		env: []string{"HOME={base}/home", "GOPATH={base}/home/go", "GOMODCACHE={base}/home/go/pkg/mod", "GOFLAGS=-mod=mod",
			"GOPROXY=file://{base}/proxy", "GOSUMDB=off", "GOTOOLCHAIN=local", "GOCACHE={cache}/go-build", "CGO_ENABLED=0"},
		setup: `mkdir -p home app proxy/example.com/greet/@v z/example.com/greet@v1.0.0
go telemetry off
printf 'module example.com/greet\n\ngo 1.22\n' > z/example.com/greet@v1.0.0/go.mod
printf 'package greet\n\n// Hello greets.\nfunc Hello(n string) string { return "hello, " + n }\n' > z/example.com/greet@v1.0.0/greet.go
v=proxy/example.com/greet/@v
(cd z && zip -qX -D ../$v/v1.0.0.zip example.com/greet@v1.0.0/go.mod example.com/greet@v1.0.0/greet.go) && rm -r z
printf 'module example.com/greet\n\ngo 1.22\n' > $v/v1.0.0.mod
echo '{"Version":"v1.0.0","Time":"2024-01-02T03:04:05Z"}' > $v/v1.0.0.info && echo v1.0.0 > $v/list
printf 'module example.com/app\n\ngo 1.22\n\nrequire example.com/greet v1.0.0\n' > app/go.mod
printf 'package main\n\nimport (\n\t"fmt"\n\n\t"example.com/greet"\n)\n\nfunc main() { fmt.Println(greet.Hello("nash")) }\n' > app/main.go`,
		script: `set -e
cd app
go build -o bin/app .
./bin/app
cat go.sum`,
	},
}

// TestDeveloperWorkflows runs real developer workflows natively (fenced)
// and through nash run --yes on the same fixture at the same path: the
// exit status, the output and the trees (types, modes, contents, symlink
// targets, hard links) must match; nash undo must then restore the
// fixture exactly. -short runs the quick ones; make accept all. It runs
// as root and, in make test and make accept, as an ordinary user.
func TestDeveloperWorkflows(t *testing.T) {
	cache := t.TempDir()
	for _, w := range workflows {
		t.Run(w.name, func(t *testing.T) {
			if testing.Short() && !w.quick {
				t.Skip("a slow workflow: make accept runs it")
			}
			runWorkflow(t, w, cache)
		})
	}
}

func runWorkflow(t *testing.T, w workflow, cache string) {
	work := t.TempDir()
	base := filepath.Join(work, "w")
	env := []string{workflowPath}
	for _, kv := range w.env {
		env = append(env, strings.NewReplacer("{base}", base, "{cache}", cache).Replace(kv))
	}
	for _, c := range w.needs {
		if _, err := lookPathIn(c, env); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed: .ci/run must install it", c)
			}
			t.Skipf("%s is not installed", c)
		}
	}
	sh := func(dir, script string) {
		t.Helper()
		cmd := exec.Command("bash", "-c", script)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("in %s: %s: %v\n%s", dir, script, err, out)
		}
	}
	if err := os.Mkdir(base, 0o755); err != nil {
		t.Fatal(err)
	}
	sh(base, w.setup)
	sh(work, "cp -a w template")
	// Some workflows leave read-only trees (Go's module cache).
	t.Cleanup(func() { _ = exec.Command("chmod", "-R", "u+w", work).Run() })
	if w.warm {
		warm := filepath.Join(work, "warm")
		sh(work, "cp -a w warm")
		sh(warm, w.script)
	}
	reset := func() fstree.Tree {
		t.Helper()
		sh(work, "chmod -R u+w w && rm -rf w && cp -a template w")
		return snapshotOf(t, base)
	}

	// Natively, fenced: everything read-only but the fixture and /tmp.
	orig := reset()
	fenceEnv := env
	nativeOut, nativeCode := runFenced(t, base, w.script, fenceEnv...)
	native := snapshotOf(t, base)

	reset()
	n := newNash(t, base)
	n.env = env
	// The undo layers hold read-only trees too.
	t.Cleanup(func() { _ = exec.Command("chmod", "-R", "u+w", n.state).Run() })
	out, errOut, code := n.run("", "run", "--yes", "--", w.script)
	if code != nativeCode {
		t.Fatalf("exit status %d, natively %d; stderr:\n%s", code, nativeCode, clip(errOut))
	}
	if w.stdout && out != nativeOut {
		t.Errorf("output differs:\nnatively:\n%s\nin nash:\n%s", nativeOut, out)
	}
	if d := fstree.Diff(w.compared(native), w.compared(snapshotOf(t, base))); d != "" {
		t.Errorf("the tree after nash run --yes differs from the native run's:\n%s", d)
	}
	if txCount(t, n) == 0 {
		t.Fatalf("nash committed nothing; stderr:\n%s", clip(errOut))
	}
	if len(w.renamed) > 0 {
		jout, _, _ := n.run("", "show", "1", "--json")
		var shown struct {
			ChangeList []effects.Change `json:"change_list"`
		}
		if err := json.Unmarshal([]byte(jout), &shown); err != nil {
			t.Fatalf("nash show --json: %v", err)
		}
		for _, r := range w.renamed {
			found := false
			for _, c := range shown.ChangeList {
				found = found || c.Kind == effects.Renamed && c.Path == filepath.Join(base, r)
			}
			if !found {
				t.Errorf("%s is not shown renamed", r)
			}
		}
	}
	if _, errOut, code := n.run("", "undo"); code != 0 {
		t.Fatalf("undo: exit %d: %s", code, errOut)
	}
	if d := fstree.Diff(orig, snapshotOf(t, base)); d != "" {
		t.Errorf("after undo the fixture differs from before:\n%s", d)
	}
}

// compared is a snapshot without what w leaves out of the comparison.
func (w workflow) compared(tr fstree.Tree) fstree.Tree {
	out := fstree.Tree{}
	for p, e := range tr {
		if matchAny(w.ignore, p) {
			continue
		}
		if matchAny(w.noContent, p) {
			e.Hash, e.Size = "", 0
		}
		out[p] = e
	}
	return out
}

// matchAny reports whether rel matches a glob (one starting **/ at any
// depth), or lies in a tree named with a trailing slash.
func matchAny(patterns []string, rel string) bool {
	for _, p := range patterns {
		if strings.HasSuffix(p, "/") {
			if rel == strings.TrimSuffix(p, "/") || strings.HasPrefix(rel, p) {
				return true
			}
			continue
		}
		if rest, ok := strings.CutPrefix(p, "**/"); ok {
			// At any depth: against every tail of rel.
			for i := 0; i < len(rel); i++ {
				if i == 0 || rel[i-1] == '/' {
					if ok, _ := path.Match(rest, rel[i:]); ok {
						return true
					}
				}
			}
			continue
		}
		if ok, _ := path.Match(p, rel); ok {
			return true
		}
	}
	return false
}

func snapshotOf(t *testing.T, root string) fstree.Tree {
	t.Helper()
	tr, err := fstree.Snapshot(root)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// lookPathIn finds a command on the PATH of env.
func lookPathIn(name string, env []string) (string, error) {
	for _, kv := range env {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			for _, d := range filepath.SplitList(p) {
				f := filepath.Join(d, name)
				if fi, err := os.Stat(f); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
					return f, nil
				}
			}
		}
	}
	return "", fmt.Errorf("%s: not found", name)
}
