package effects

import (
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
)

// findingTests are the cases of issue 20 and their careful variants: what
// a person reads before pressing run. files, when set, are the files that
// exist (under /h/p unless absolute), given to Analyze with Files; labels
// are the report's labels (Labels), exactly; reason must be part of some
// finding, and never of none.
var findingTests = []struct {
	name    string
	script  string
	files   []string
	labels  []Risk
	reason  string
	never   string
	deletes []string // predicted deletions, when the case is about them
}{
	// A rename loop in the working directory is a modest change.
	{name: "rename loop", script: `for f in *.jpeg; do mv "$f" "${f%.jpeg}.jpg"; done`,
		labels: l2(WritesInside), reason: "mv renames each '*.jpeg' here to '*.jpg'", never: "outside"},
	{name: "rename loop, counted", script: `for f in *.jpeg; do mv "$f" "${f%.jpeg}.jpg"; done`,
		files:  []string{"a.jpeg", "b.jpeg", "c.jpeg", "d.png"},
		labels: l2(WritesInside), reason: "mv renames 3 files here ('*.jpeg' to '*.jpg')"},
	{name: "rename loop, dashes and any extension", script: `for f in *.JPEG; do mv -- "$f" "${f%.*}.jpg"; done`,
		labels: l2(WritesInside), reason: "renames each '*.JPEG' here to '*.jpg'"},
	{name: "rename loop, basename", script: `for f in *.jpeg; do mv "$f" "$(basename "$f" .jpeg).jpg"; done`,
		labels: l2(WritesInside), never: "outside"},
	{name: "rename loop elsewhere is still outside", script: `for f in ~/Pictures/*.jpeg; do mv "$f" "${f%.jpeg}.jpg"; done`,
		labels: l2(WritesOutside), reason: "renames each '*.jpeg' in /h/Pictures to '*.jpg'"},
	{name: "perl rename", script: `rename 's/\.jpeg$/.jpg/' *.jpeg`,
		labels: l2(WritesInside), reason: "rename renames '/h/p/*.jpeg'"},
	{name: "one rename", script: `mv draft.md final.md`, labels: l2(WritesInside), reason: "mv renames draft.md to final.md here"},
	{name: "move into a directory", script: `mv *.log old/`, labels: l2(WritesInside), reason: "mv moves '/h/p/*.log' into /h/p/old"},
	{name: "moving each onto one name loses all but the last", script: `for f in *.log; do mv "$f" all.log; done`,
		files:  []string{"a.log", "b.log"},
		labels: l2(WritesInside, Deletes), reason: "all but the last are lost"},
	{name: "moving the only one onto a name loses nothing", script: `for f in *.log; do mv "$f" all.log; done`,
		files: []string{"a.log"}, labels: l2(WritesInside), never: "lost"},
	{name: "moving each into a directory loses nothing", script: `for f in *.log; do mv "$f" old; done`,
		files: []string{"a.log", "b.log", "old/"}, labels: l2(WritesInside), reason: "into /h/p/old"},

	// curl reaches the network; it is not read-only.
	{name: "curl prints", script: "curl https://example.com", labels: l2(Network), reason: "curl downloads from https://example.com"},
	{name: "curl saves", script: "curl -o page.html https://example.com", labels: l2(Network, WritesInside)},
	{name: "curl sends", script: "curl -d x=1 https://example.com/api", labels: l2(CannotUndo), reason: "curl sends data"},
	{name: "curl into jq is not code", script: "curl -s https://x.io/data.json | jq .", labels: l2(Network), never: "runs code"},

	// Code from the network run as root is named as such.
	{name: "curl | sudo bash", script: "curl -fsSL https://get.x.io/install.sh | sudo bash",
		labels: l2(Network, CannotUndo), reason: "runs code downloaded from the network as root"},
	{name: "curl | sudo -E bash -s", script: "curl -fsSL https://get.x.io | sudo -E bash -s -- --yes",
		labels: l2(Network, CannotUndo), reason: "runs code downloaded from the network as root"},
	{name: "wget | sh", script: "wget -qO- https://x.io/i.sh | sh",
		labels: l2(Network, CannotUndo), reason: "runs code downloaded from the network", never: "as root"},
	{name: "sudo -u bob bash is not root", script: "curl -fsSL https://x.io/i.sh | sudo -u bob bash",
		labels: l2(Network, CannotUndo), reason: "runs code downloaded from the network", never: "as root"},
	{name: "sudo sh -c $(curl)", script: `sudo sh -c "$(curl -fsSL https://x.io/i.sh)"`,
		labels: l2(Network, CannotUndo), reason: "runs code downloaded from the network as root"},
	{name: "bash <(curl)", script: "bash <(curl -s https://x.io/i.sh)",
		labels: l2(Network, CannotUndo), reason: "runs code downloaded from the network"},
	{name: "download, then run as root", script: "curl -o i.sh https://x.io/i.sh && sudo bash i.sh",
		labels: l2(Network, WritesInside, CannotUndo), reason: "runs code downloaded from the network as root"},
	{name: "download, then run it", script: "curl -O https://x.io/run.sh; chmod +x run.sh; ./run.sh",
		labels: l2(Network, WritesInside, CannotUndo), reason: "runs code downloaded from the network"},
	{name: "a local script is not downloaded", script: "bash ./install.sh", labels: l2(WritesInside), never: "network"},

	// Placeholders and indirections followed to the delete.
	{name: "xargs -I{} sh -c", script: `cat list | xargs -I{} sh -c "rm -f {}.bak"`,
		labels: l2(Deletes), reason: "rm deletes '<input>.bak' for each path read from its input", deletes: []string{"<input>.bak"}},
	{name: "xargs -I% sh -c, from find", script: `find . -name '*.txt' | xargs -I% sh -c 'rm -f %.bak'`,
		labels: l2(Deletes), deletes: []string{"/h/p/**/*.txt.bak"}},
	{name: "find -exec sh -c with the placeholder in the script", script: `find . -name '*.o' -exec sh -c 'rm -f {}.bak' \;`,
		labels: l2(Deletes), deletes: []string{"/h/p/**/*.o.bak"}},
	{name: "find -exec ... {} +", script: `find . -name '*.o' -exec rm -f {} +`, labels: l2(Deletes), deletes: []string{"/h/p/**/*.o"}},
	{name: "find -exec sh -c with positional arguments", script: `find . -name '*.o' -exec sh -c 'for f; do rm "$f.bak"; done' _ {} +`,
		labels: l2(Deletes), deletes: []string{"/h/p/**/*.o.bak"}},
	{name: "sh -c with positional arguments", script: `sh -c 'rm -- "$1.bak"' sh notes.txt`, labels: l2(Deletes), deletes: []string{"/h/p/notes.txt.bak"}},
	{name: "parallel", script: `parallel rm {}.bak ::: a b`, labels: l2(Deletes), deletes: []string{"/h/p/a.bak", "/h/p/b.bak"}},
	{name: "parallel with {.}", script: `parallel 'convert {} {.}.png' ::: *.jpg`, labels: l2(WritesInside)},
	{name: "while read < list", script: `while read f; do rm "$f.bak"; done < list`,
		labels: l2(Deletes), reason: "for each path read from its input", deletes: []string{"<input>.bak"}},
	{name: "cat | while read", script: `cat list | while IFS= read -r f; do rm -- "$f.bak"; done`,
		labels: l2(Deletes), deletes: []string{"<input>.bak"}},
	{name: "while read renames", script: `while read -r f; do mv "$f" "$f.old"; done < list`,
		labels: l2(WritesInside), reason: "mv renames each"},

	// A deletion that loses nothing is not a deletion; one of nothing
	// deletes nothing.
	{name: "rm of a file that is not there", script: "rm does_not_exist.txt", files: []string{"other.txt"},
		labels: nil, reason: "does not exist, so it changes nothing there", deletes: []string{}},
	{name: "rm -r of a directory that is not there", script: "rm -r fake_dir", files: []string{"other.txt"}, labels: nil, deletes: []string{}},
	{name: "rm -f of a glob that matches nothing", script: "rm -f *.o", files: []string{"a.c"}, labels: nil, deletes: []string{}},
	{name: "rm of a file that is there", script: "rm notes.txt", files: []string{"notes.txt"}, labels: l2(Deletes), deletes: []string{"/h/p/notes.txt"}},
	{name: "find in a directory that is not there", script: "find /nowhere -name '*.tmp' -delete", files: []string{"a.tmp"}, labels: nil, deletes: []string{}},
	{name: "find that finds nothing, piped", script: "find /nowhere -type f | xargs rm", files: []string{"a"}, labels: nil, deletes: []string{}},
	{name: "find -name that matches nothing", script: "find . -name '*.pyc' -delete", files: []string{"a.py", "src/b.py"}, labels: nil},
	{name: "find -name that matches", script: "find . -name '*.pyc' -delete", files: []string{"a.py", "src/b.pyc"}, labels: l2(Deletes)},
	{name: "rmdir", script: "rmdir empty", labels: l2(WritesInside), reason: "if it is an empty directory"},
	{name: "find -type d -delete", script: "find . -type d -empty -delete", labels: l2(WritesInside)},
	{name: "find -type f -empty -delete is a deletion", script: "find . -type f -empty -delete", labels: l2(Deletes)},
	{name: "a file the script made", script: "touch x; rm x", labels: l2(WritesInside), reason: "which the script itself made"},
	{name: "a file that was there, rewritten then deleted", script: "echo x > notes.txt; rm notes.txt", files: []string{"notes.txt"}, labels: l2(WritesInside, Deletes)},
	{name: "copy then delete is a move", script: "cp -r a b && rm -r a", labels: l2(WritesInside), reason: "together they move it"},
	{name: "copy elsewhere then delete", script: "cp -r a /tmp/b && rm -r a", labels: l2(WritesOutside), reason: "together they move it"},
	{name: "chmod of nothing", script: "chmod 644 missing.txt", files: []string{"a"}, labels: nil},
	{name: "mktemp -u creates nothing", script: "mktemp -u", labels: nil},

	// Where only run time tells, the label does not claim outside.
	{name: "xargs touch from a file", script: "cat list | xargs touch", labels: l2(WritesInside), never: "outside"},
	{name: "a variable's place", script: `cp a.txt "$DEST/"`, labels: l2(WritesInside), reason: "known only at run time"},
	{name: "a known place outside", script: `cp a.txt /srv/www/`, labels: l2(WritesOutside)},
	{name: "echo's words", script: `echo "a.txt b.txt" | xargs touch`, labels: l2(WritesInside)},
	{name: "sed adds a prefix outside", script: `find . -type d | sed 's@^@/backup/@' | xargs mkdir -p`, labels: l2(WritesOutside)},
	{name: "grep -l names files here", script: `grep -rl foo . | xargs sed -i 's/foo/bar/'`, labels: l2(WritesInside)},
	{name: "sudo alone claims nothing", script: "sudo ls /root", labels: nil},
	{name: "sudo -i opens a shell", script: "sudo -i", labels: l2(WritesInside), reason: "opens a shell as root"},
}

func l2(r ...Risk) []Risk { return r }

func TestFindings(t *testing.T) {
	for _, tt := range findingTests {
		t.Run(tt.name, func(t *testing.T) {
			opts := []Option{Dir("/h/p"), Home("/h")}
			if tt.files != nil {
				fsys := fstest.MapFS{}
				for _, f := range tt.files {
					name := strings.TrimPrefix(f, "/")
					if !strings.HasPrefix(f, "/") {
						name = "h/p/" + f
					}
					if d, ok := strings.CutSuffix(name, "/"); ok {
						fsys[d] = &fstest.MapFile{Mode: fs.ModeDir | 0o755}
						continue
					}
					fsys[name] = &fstest.MapFile{Data: []byte("x")}
				}
				opts = append(opts, Files(fsys))
			}
			r, err := Analyze(tt.script, opts...)
			if err != nil {
				t.Fatal(err)
			}
			checkReport(t, r)
			reasons := make([]string, len(r.Findings))
			for i, f := range r.Findings {
				reasons[i] = f.Risk.String() + ": " + f.Reason
			}
			if got := r.Labels(); !slices.Equal(got, tt.labels) {
				t.Errorf("labels %v, want %v; findings:\n  %s", got, tt.labels, strings.Join(reasons, "\n  "))
			}
			all := strings.Join(reasons, "\n")
			if tt.reason != "" && !strings.Contains(all, tt.reason) {
				t.Errorf("no finding says %q; findings:\n  %s", tt.reason, strings.Join(reasons, "\n  "))
			}
			if tt.never != "" && strings.Contains(all, tt.never) {
				t.Errorf("a finding says %q; findings:\n  %s", tt.never, strings.Join(reasons, "\n  "))
			}
			if tt.deletes != nil {
				got := []string{}
				for _, p := range r.Paths {
					if p.Access == Delete {
						got = append(got, p.Path)
					}
				}
				if !slices.Equal(got, tt.deletes) {
					t.Errorf("deletes %q, want %q", got, tt.deletes)
				}
			}
		})
	}
}
