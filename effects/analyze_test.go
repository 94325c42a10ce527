package effects

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// summary is the part of a report the table checks, in a form easy to
// write: paths by access, each with its flags: (r) recursive, (g) glob,
// (d) dynamic.
type summary struct {
	Cmds                              []string
	Read, Write, Create, Delete, Meta []string
	Network, Priv, Irrev              bool
	Risk                              Risk
}

func summarize(r *Report) summary {
	s := summary{Network: r.Network, Priv: r.Privileged, Irrev: r.Irreversible, Risk: r.Risk}
	for _, c := range r.Commands {
		s.Cmds = append(s.Cmds, c.Name)
	}
	for _, p := range r.Paths {
		flags := ""
		if p.Recursive {
			flags += "r"
		}
		if p.Glob {
			flags += "g"
		}
		if p.Dynamic {
			flags += "d"
		}
		e := p.Path
		if flags != "" {
			e += " (" + flags + ")"
		}
		switch p.Access {
		case Read:
			s.Read = append(s.Read, e)
		case Write:
			s.Write = append(s.Write, e)
		case Create:
			s.Create = append(s.Create, e)
		case Delete:
			s.Delete = append(s.Delete, e)
		case Meta:
			s.Meta = append(s.Meta, e)
		}
	}
	return s
}

// l is shorthand for a list of strings.
func l(s ...string) []string { return s }

// analyzeTests run with Dir("/h/p") and Home("/h"). Commands are listed in
// the order they run: a substitution before the command that uses it.
var analyzeTests = []struct {
	script string
	want   summary
}{
	// Read-only commands.
	{"ls -l", summary{Cmds: l("ls"), Risk: ReadOnly}},
	{"ls -la /etc", summary{Cmds: l("ls"), Read: l("/etc"), Risk: ReadOnly}},
	{"cat notes.txt | grep -i todo | wc -l", summary{Cmds: l("cat", "grep", "wc"), Read: l("/h/p/notes.txt"), Risk: ReadOnly}},
	{"grep -rn TODO src", summary{Cmds: l("grep"), Read: l("/h/p/src (r)"), Risk: ReadOnly}},
	{"grep -e foo -e bar a.txt", summary{Cmds: l("grep"), Read: l("/h/p/a.txt"), Risk: ReadOnly}},
	{"head -n 5 log.txt", summary{Cmds: l("head"), Read: l("/h/p/log.txt"), Risk: ReadOnly}},
	{"awk '{print $1}' data.csv", summary{Cmds: l("awk"), Read: l("/h/p/data.csv"), Risk: ReadOnly}},
	{"du -sh ~/Downloads", summary{Cmds: l("du"), Read: l("/h/Downloads (r)"), Risk: ReadOnly}},
	{"find . -name '*.go'", summary{Cmds: l("find"), Read: l("/h/p (r)"), Risk: ReadOnly}},
	{"diff <(sort a) <(sort b)", summary{Cmds: l("sort", "sort", "diff"), Read: l("/h/p/a", "/h/p/b"), Risk: ReadOnly}},
	{"echo hello > /dev/null 2>&1", summary{Cmds: l("echo"), Risk: ReadOnly}},
	{"wc -l < input.txt", summary{Cmds: l("wc"), Read: l("/h/p/input.txt"), Risk: ReadOnly}},
	{"sort -u names.txt", summary{Cmds: l("sort"), Read: l("/h/p/names.txt"), Risk: ReadOnly}},

	// Writes inside the working directory.
	{"echo hi > out.txt", summary{Cmds: l("echo"), Write: l("/h/p/out.txt"), Risk: WritesInside}},
	{"date >> log/run.log", summary{Cmds: l("date"), Write: l("/h/p/log/run.log"), Risk: WritesInside}},
	{"mkdir -p build/out", summary{Cmds: l("mkdir"), Create: l("/h/p/build/out"), Risk: WritesInside}},
	{"touch a b c", summary{Cmds: l("touch"), Write: l("/h/p/a", "/h/p/b", "/h/p/c"), Risk: WritesInside}},
	{"cp -r src backup", summary{Cmds: l("cp"), Read: l("/h/p/src (r)"), Create: l("/h/p/backup (r)"), Risk: WritesInside}},
	{"cp a.txt b.txt dir/", summary{Cmds: l("cp"), Read: l("/h/p/a.txt", "/h/p/b.txt"), Create: l("/h/p/dir (r)"), Risk: WritesInside}},
	{"cp -t dest x y", summary{Cmds: l("cp"), Read: l("/h/p/x", "/h/p/y"), Create: l("/h/p/dest (r)"), Risk: WritesInside}},
	{"mv draft.md final.md", summary{Cmds: l("mv"), Delete: l("/h/p/draft.md (r)"), Create: l("/h/p/final.md (r)"), Risk: WritesInside}},
	{"ln -s target link", summary{Cmds: l("ln"), Create: l("/h/p/link (r)"), Risk: WritesInside}},
	{"ln -s /usr/bin/python3", summary{Cmds: l("ln"), Create: l("/h/p/python3"), Risk: WritesInside}},
	{"ls | tee list.txt", summary{Cmds: l("ls", "tee"), Write: l("/h/p/list.txt"), Risk: WritesInside}},
	{"truncate -s 0 big.log", summary{Cmds: l("truncate"), Write: l("/h/p/big.log"), Risk: WritesInside}},
	{"dd if=/dev/zero of=disk.img bs=1M count=10", summary{Cmds: l("dd"), Write: l("/h/p/disk.img"), Risk: WritesInside}},
	{"sed -i 's/foo/bar/g' a.txt b.txt", summary{Cmds: l("sed"), Write: l("/h/p/a.txt", "/h/p/b.txt"), Risk: WritesInside}},
	{"sed -n '1,5p' a.txt", summary{Cmds: l("sed"), Read: l("/h/p/a.txt"), Risk: ReadOnly}},
	{"sed -e 's/a/b/' -i.bak conf", summary{Cmds: l("sed"), Write: l("/h/p/conf"), Risk: WritesInside}},
	{"perl -pi -e 's/\\r$//' *.txt", summary{Cmds: l("perl"), Write: l("/h/p/*.txt (g)"), Risk: WritesInside}},
	{"perl -ne 'print if /x/' f", summary{Cmds: l("perl"), Read: l("/h/p/f"), Risk: ReadOnly}},
	{"chmod +x run.sh", summary{Cmds: l("chmod"), Meta: l("/h/p/run.sh"), Risk: WritesInside}},
	{"chmod -R 755 public", summary{Cmds: l("chmod"), Meta: l("/h/p/public (r)"), Risk: WritesInside}},
	{"chmod -x run.sh", summary{Cmds: l("chmod"), Meta: l("/h/p/run.sh"), Risk: WritesInside}},
	{"chown -R me:me data", summary{Cmds: l("chown"), Meta: l("/h/p/data (r)"), Risk: WritesInside}},
	{"chgrp staff f", summary{Cmds: l("chgrp"), Meta: l("/h/p/f"), Risk: WritesInside}},
	{"tar czf site.tgz public", summary{Cmds: l("tar"), Write: l("/h/p/site.tgz"), Read: l("/h/p/public (r)"), Risk: WritesInside}},
	{"tar -xzf site.tgz -C out", summary{Cmds: l("tar"), Read: l("/h/p/site.tgz"), Write: l("/h/p/out (r)"), Risk: WritesInside}},
	{"tar xf a.tar", summary{Cmds: l("tar"), Read: l("/h/p/a.tar"), Write: l("/h/p (r)"), Risk: WritesInside}},
	{"tar -xzOf a.tgz | grep x", summary{Cmds: l("tar", "grep"), Read: l("/h/p/a.tgz"), Risk: ReadOnly}},
	{"tar tf a.tar", summary{Cmds: l("tar"), Read: l("/h/p/a.tar"), Risk: ReadOnly}},
	{"tar --create --file=b.tar docs", summary{Cmds: l("tar"), Write: l("/h/p/b.tar"), Read: l("/h/p/docs (r)"), Risk: WritesInside}},
	{"zip -r site.zip public", summary{Cmds: l("zip"), Write: l("/h/p/site.zip"), Read: l("/h/p/public (r)"), Risk: WritesInside}},
	{"unzip -o a.zip -d out", summary{Cmds: l("unzip"), Read: l("/h/p/a.zip"), Write: l("/h/p/out (r)"), Risk: WritesInside}},
	{"unzip -l a.zip", summary{Cmds: l("unzip"), Read: l("/h/p/a.zip"), Risk: ReadOnly}},
	{"gzip -k notes.txt", summary{Cmds: l("gzip"), Read: l("/h/p/notes.txt"), Create: l("/h/p/notes.txt.gz"), Risk: WritesInside}},
	{"gzip -c notes.txt > n.gz", summary{Cmds: l("gzip"), Read: l("/h/p/notes.txt"), Write: l("/h/p/n.gz"), Risk: WritesInside}},
	{"split -l 100 big.csv part_", summary{Cmds: l("split"), Read: l("/h/p/big.csv"), Create: l("/h/p/part_* (g)"), Risk: WritesInside}},
	{"patch -p1 < fix.diff", summary{Cmds: l("patch"), Write: l("/h/p (r)"), Delete: l("/h/p (r)"), Read: l("/h/p/fix.diff"), Risk: Deletes}},
	{"install -m 755 tool bin/", summary{Cmds: l("install"), Read: l("/h/p/tool"), Create: l("/h/p/bin (r)"), Risk: WritesInside}},
	{"rsync -av src/ backup/", summary{Cmds: l("rsync"), Read: l("/h/p/src (r)"), Create: l("/h/p/backup (r)"), Risk: WritesInside}},
	{"sort -o sorted.txt in.txt", summary{Cmds: l("sort"), Read: l("/h/p/in.txt"), Write: l("/h/p/sorted.txt"), Risk: WritesInside}},
	{"git add . && git commit -m wip", summary{Cmds: l("git", "git"), Write: l("/h/p/.git (r)"), Risk: WritesInside}},
	{"git status", summary{Cmds: l("git"), Read: l("/h/p (r)"), Risk: ReadOnly}},
	{"git checkout -- main.go", summary{Cmds: l("git"), Write: l("/h/p/main.go (r)"), Risk: WritesInside}},

	{"gcc -fno-common -o app main.c", summary{Cmds: l("gcc"), Read: l("/h/p/main.c"), Write: l("/h/p/app"), Risk: WritesInside}},
	{"gcc -Wall x.c", summary{Cmds: l("gcc"), Read: l("/h/p/x.c"), Write: l("/h/p/a.out"), Risk: WritesInside}},
	// Where $out is, only run time tells: not labelled outside.
	{"curl -sLo \"$out\" https://e.com/f", summary{Cmds: l("curl"), Write: l("$out (d)"), Network: true, Risk: WritesInside}},
	{"curl --output=dl/f.bin https://e.com/f", summary{Cmds: l("curl"), Write: l("/h/p/dl/f.bin"), Network: true, Risk: WritesInside}},
	{"xargs -a list.txt rm", summary{Cmds: l("xargs", "rm"), Read: l("/h/p/list.txt"), Delete: l("<input> (d)"), Risk: Deletes}},
	{"strace -o trace.txt ls -o", summary{Cmds: l("strace", "ls"), Write: l("/h/p/trace.txt"), Risk: WritesInside}},

	// Writes outside.
	{"echo x > /tmp/x", summary{Cmds: l("echo"), Write: l("/tmp/x"), Risk: WritesOutside}},
	{"cp notes.txt ~/backup/", summary{Cmds: l("cp"), Read: l("/h/p/notes.txt"), Create: l("/h/backup (r)"), Risk: WritesOutside}},
	{"cp a ../b", summary{Cmds: l("cp"), Read: l("/h/p/a"), Create: l("/h/b (r)"), Risk: WritesOutside}},
	{"touch $HOME/.hushlogin", summary{Cmds: l("touch"), Write: l("/h/.hushlogin"), Risk: WritesOutside}},
	{"mktemp -d", summary{Cmds: l("mktemp"), Create: l("/tmp/tmp.* (rg)"), Risk: WritesOutside}},

	// Deletes.
	{"rm -rf build", summary{Cmds: l("rm"), Delete: l("/h/p/build (r)"), Risk: Deletes}},
	{"rm *.o", summary{Cmds: l("rm"), Delete: l("/h/p/*.o (g)"), Risk: Deletes}},
	{`rm "*.o"`, summary{Cmds: l("rm"), Delete: l("/h/p/*.o"), Risk: Deletes}},
	{"rm -- -f", summary{Cmds: l("rm"), Delete: l("/h/p/-f"), Risk: Deletes}},
	{"rm -r ~/old ./tmp/ /var/tmp/x", summary{Cmds: l("rm"), Delete: l("/h/old (r)", "/h/p/tmp (r)", "/var/tmp/x (r)"), Risk: Deletes}},
	// rmdir removes only an empty directory: nothing is lost.
	{"rmdir empty", summary{Cmds: l("rmdir"), Delete: l("/h/p/empty"), Risk: WritesInside}},
	{"unlink f", summary{Cmds: l("unlink"), Delete: l("/h/p/f"), Risk: Deletes}},
	{"shred -u secret", summary{Cmds: l("shred"), Write: l("/h/p/secret"), Delete: l("/h/p/secret"), Risk: Deletes}},
	{"find . -name '*.tmp' -delete", summary{Cmds: l("find"), Read: l("/h/p (r)"), Delete: l("/h/p/**/*.tmp (g)"), Risk: Deletes}},
	{"find . \\( -name '*.c' -o -name '*.h' \\) ! -name 'x.c' -exec rm {} +", summary{Cmds: l("find", "rm"), Read: l("/h/p (r)"), Delete: l("/h/p/**/*.c (g)", "/h/p/**/*.h (g)"), Risk: Deletes}},
	{"find /tmp -mtime +7 -delete", summary{Cmds: l("find"), Read: l("/tmp (r)"), Delete: l("/tmp (r)"), Risk: Deletes}},
	{"find . -name '*.bak' -exec rm {} \\;", summary{Cmds: l("find", "rm"), Read: l("/h/p (r)"), Delete: l("/h/p/**/*.bak (g)"), Risk: Deletes}},
	{"find . -type f -print0 | xargs -0 rm -f", summary{Cmds: l("find", "xargs", "rm"), Read: l("/h/p (r)"), Delete: l("/h/p/** (g)"), Risk: Deletes}},
	// xargs reads what find printed, also through line filters.
	{"find /tmp/a -name '*.log' -mtime +5 | sort | head -n 3 | xargs rm", summary{Cmds: l("find", "sort", "head", "xargs", "rm"), Read: l("/tmp/a (r)"), Delete: l("/tmp/a/**/*.log (g)"), Risk: Deletes}},
	{"find a -name '*.c' -o -name '*.h' | grep -v test | xargs -I{} mv {} b", summary{Cmds: l("find", "grep", "xargs", "mv"), Read: l("/h/p/a (r)"), Delete: l("/h/p/a/**/*.c (rg)", "/h/p/a/**/*.h (rg)"), Create: l("/h/p/b (r)"), Risk: WritesInside}},
	{"find a -type f | xargs -i cp -p {} .", summary{Cmds: l("find", "xargs", "cp"), Read: l("/h/p/a (r)", "/h/p/a/** (g)"), Create: l("/h/p (r)"), Risk: WritesInside}},
	// ls prints the names here, one per line.
	{"ls | xargs -l1 -i{} rm {}", summary{Cmds: l("ls", "xargs", "rm"), Delete: l("/h/p/* (g)"), Risk: Deletes}},
	{"find a -name '*.tmp' | while IFS= read -r f; do rm -- \"$f\"; done", summary{Cmds: l("find", "read", "rm"), Read: l("/h/p/a (r)"), Delete: l("/h/p/a/**/*.tmp (g)"), Risk: Deletes}},
	{"find a | while read f g; do rm \"$f\"; done", summary{Cmds: l("find", "read", "rm"), Read: l("/h/p/a (r)"), Delete: l("$f (d)"), Risk: Deletes}},
	// but not through what changes the lines, or from find -exec.
	{"find a | grep -c x | xargs rm", summary{Cmds: l("find", "grep", "xargs", "rm"), Read: l("/h/p/a (r)"), Delete: l("<input> (d)"), Risk: Deletes}},
	{"find a | sort | uniq -c | xargs rm", summary{Cmds: l("find", "sort", "uniq", "xargs", "rm"), Read: l("/h/p/a (r)"), Delete: l("<input> (d)"), Risk: Deletes}},
	{"find a -exec cat {} + | xargs rm", summary{Cmds: l("find", "cat", "xargs", "rm"), Read: l("/h/p/a (r)", "/h/p/a/** (g)"), Delete: l("<input> (d)"), Risk: Deletes}},
	{"find a | xargs sh -c 'ls | xargs rm'", summary{Cmds: l("find", "xargs", "sh", "ls", "xargs", "rm"), Read: l("/h/p/a (r)"), Delete: l("/h/p/* (g)"), Risk: Deletes}},
	// sh -c sees its arguments as $0, $1, "$@".
	{"find a -name '*.txt' -exec sh -c 'mv \"$0\" \"${0%.txt}.md\"' {} \\;", summary{Cmds: l("find", "sh", "mv"), Read: l("/h/p/a (r)"), Delete: l("/h/p/a/**/*.txt (rg)"), Create: l("/h/p/a/**/*.md (rg)"), Risk: WritesInside}},
	{"find a -name '*.o' -exec bash -c 'for f; do rm \"$f\"; done' _ {} +", summary{Cmds: l("find", "bash", "rm"), Read: l("/h/p/a (r)"), Delete: l("/h/p/a/**/*.o (g)"), Risk: Deletes}},
	{"sh -c 'rm \"$1\" \"$0\"' x y", summary{Cmds: l("sh", "rm"), Delete: l("/h/p/y", "/h/p/x"), Risk: Deletes}},
	{"sh -c 'rm \"$1\"'", summary{Cmds: l("sh", "rm"), Delete: l("$1 (d)"), Risk: Deletes}},
	{"ls *.log | xargs -I{} mv {} old/", summary{Cmds: l("ls", "xargs", "mv"), Read: l("/h/p/*.log (g)"), Delete: l("/h/p/*.log (rg)"), Create: l("/h/p/old (r)"), Risk: WritesInside}},
	{"gzip notes.txt", summary{Cmds: l("gzip"), Read: l("/h/p/notes.txt"), Delete: l("/h/p/notes.txt"), Create: l("/h/p/notes.txt.gz"), Risk: Deletes}},
	{"gunzip a.gz", summary{Cmds: l("gunzip"), Read: l("/h/p/a.gz"), Delete: l("/h/p/a.gz"), Create: l("/h/p/a"), Risk: Deletes}},
	{"git clean -fdx", summary{Cmds: l("git"), Delete: l("/h/p (r)"), Risk: Deletes}},
	{"git reset --hard HEAD~1", summary{Cmds: l("git"), Write: l("/h/p/.git (r)", "/h/p (r)"), Delete: l("/h/p (r)"), Risk: Deletes}},
	{"rsync -a --delete src/ dst/", summary{Cmds: l("rsync"), Read: l("/h/p/src (r)"), Create: l("/h/p/dst (r)"), Delete: l("/h/p/dst (r)"), Risk: Deletes}},
	{"zip -m a.zip f", summary{Cmds: l("zip"), Write: l("/h/p/a.zip"), Read: l("/h/p/f"), Delete: l("/h/p/f"), Risk: Deletes}},

	// Wrappers and nesting.
	{"sudo rm -rf /var/cache/apt", summary{Cmds: l("sudo", "rm"), Delete: l("/var/cache/apt (r)"), Priv: true, Risk: Deletes}},
	{"sudo -u www-data touch /srv/x", summary{Cmds: l("sudo", "touch"), Write: l("/srv/x"), Priv: true, Risk: WritesOutside}},
	{"doas rm f", summary{Cmds: l("doas", "rm"), Delete: l("/h/p/f"), Priv: true, Risk: Deletes}},
	{"su -c 'rm -r /opt/x'", summary{Cmds: l("su", "rm"), Delete: l("/opt/x (r)"), Priv: true, Risk: Deletes}},
	{"pkexec chmod 600 /etc/shadow", summary{Cmds: l("pkexec", "chmod"), Meta: l("/etc/shadow"), Priv: true, Risk: WritesOutside}},
	{"env FOO=1 LANG=C sort -o out in", summary{Cmds: l("env", "sort"), Read: l("/h/p/in"), Write: l("/h/p/out"), Risk: WritesInside}},
	{"nice -n 10 timeout 5s rm x", summary{Cmds: l("nice", "timeout", "rm"), Delete: l("/h/p/x"), Risk: Deletes}},
	{"nohup rm -r big &", summary{Cmds: l("nohup", "rm"), Delete: l("/h/p/big (r)"), Risk: Deletes}},
	{"sh -c 'echo hi > greeting'", summary{Cmds: l("sh", "echo"), Write: l("/h/p/greeting"), Risk: WritesInside}},
	{"bash -lc \"sh -c 'rm -f x'\"", summary{Cmds: l("bash", "sh", "rm"), Delete: l("/h/p/x"), Risk: Deletes}},
	{"eval 'rm a'", summary{Cmds: l("eval", "rm"), Delete: l("/h/p/a"), Risk: Deletes}},
	{"echo $(rm -f lock) done", summary{Cmds: l("rm", "echo"), Delete: l("/h/p/lock"), Risk: Deletes}},
	{"x=`touch stamp`", summary{Cmds: l("touch"), Write: l("/h/p/stamp"), Risk: WritesInside}},
	{"clean() { rm -rf out; }; clean", summary{Cmds: l("rm", "clean"), Delete: l("/h/p/out (r)"), Risk: Deletes}},
	{"for f in a.txt b.txt; do rm \"$f\"; done", summary{Cmds: l("rm"), Delete: l("/h/p/a.txt", "/h/p/b.txt"), Risk: Deletes}},
	{"for f in *.jpg; do mv \"$f\" archive/; done", summary{Cmds: l("mv"), Delete: l("/h/p/*.jpg (rg)"), Create: l("/h/p/archive (r)"), Risk: WritesInside}},
	{"while read f; do rm \"$f\"; done < list", summary{Cmds: l("read", "rm"), Delete: l("<input> (d)"), Read: l("/h/p/list"), Risk: Deletes}},
	{"if [ -d out ]; then rm -r out; else mkdir out; fi", summary{Cmds: l("[", "rm", "mkdir"), Delete: l("/h/p/out (r)"), Create: l("/h/p/out"), Risk: Deletes}},
	{"case $1 in clean) rm -rf dist;; esac", summary{Cmds: l("rm"), Delete: l("/h/p/dist (r)"), Risk: Deletes}},
	{"(cd /tmp && rm x); rm y", summary{Cmds: l("cd", "rm", "rm"), Delete: l("/tmp/x", "/h/p/y"), Risk: Deletes}},
	{"cd sub; touch a; cd ..; touch b", summary{Cmds: l("cd", "touch", "cd", "touch"), Write: l("/h/p/sub/a", "/h/p/b"), Risk: WritesInside}},
	{"cd $X && rm f", summary{Cmds: l("cd", "rm"), Delete: l("$PWD/f (d)"), Risk: Deletes}},
	{"f=a.txt; read f; rm \"$f\"", summary{Cmds: l("read", "rm"), Delete: l("$f (d)"), Risk: Deletes}},
	{"f=a.txt; unset f; rm \"$f\"", summary{Cmds: l("unset", "rm"), Delete: l("$f (d)"), Risk: Deletes}},
	{"D=/srv/www; rm -r $D/cache", summary{Cmds: l("rm"), Delete: l("/srv/www/cache (r)"), Risk: Deletes}},
	{"rm -rf \"$DIR\"/*", summary{Cmds: l("rm"), Delete: l("$DIR/* (rgd)"), Risk: Deletes}},
	{"rm -f file{1,2,3}.txt", summary{Cmds: l("rm"), Delete: l("/h/p/file1.txt", "/h/p/file2.txt", "/h/p/file3.txt"), Risk: Deletes}},
	{"mkdir -p out/{a,b}", summary{Cmds: l("mkdir"), Create: l("/h/p/out/a", "/h/p/out/b"), Risk: WritesInside}},
	{"time make", summary{Cmds: l("make"), Risk: WritesInside}},
	{"watch -n 5 'ls -l'", summary{Cmds: l("watch", "ls"), Risk: ReadOnly}},
	{"xargs rm < files.txt", summary{Cmds: l("xargs", "rm"), Read: l("/h/p/files.txt"), Delete: l("<input> (d)"), Risk: Deletes}},
	{"$EDITOR notes.txt", summary{Cmds: l("$EDITOR"), Risk: WritesInside}},
	{"command -v git", summary{Cmds: l("command"), Risk: ReadOnly}},
	{"exec > log.txt", summary{Cmds: l("exec"), Write: l("/h/p/log.txt"), Risk: WritesInside}},
	{"{ echo a; echo b; } > both", summary{Cmds: l("echo", "echo"), Write: l("/h/p/both"), Risk: WritesInside}},
	{"cat <<EOF > conf\nx=$(date)\nEOF", summary{Cmds: l("cat", "date"), Write: l("/h/p/conf"), Risk: WritesInside}},
	{"bash <<'EOF'\nrm -rf cache\nEOF", summary{Cmds: l("bash", "rm"), Delete: l("/h/p/cache (r)"), Risk: Deletes}},
	{"sh <<< 'touch x'", summary{Cmds: l("sh", "touch"), Write: l("/h/p/x"), Risk: WritesInside}},
	{"sudo sh <<EOF\nrm $X\nEOF", summary{Cmds: l("sudo", "sh"), Priv: true, Risk: WritesInside}},
	{"X='*.txt'; rm $X; rm \"$X\"", summary{Cmds: l("rm", "rm"), Delete: l("/h/p/*.txt (g)", "/h/p/*.txt"), Risk: Deletes}},
	{"for f in $(ls); do rm \"$f.bak\"; done", summary{Cmds: l("ls", "rm"), Delete: l("$f.bak (d)"), Risk: Deletes}},

	// Network, privilege, irreversible.
	{"curl -sSL https://example.com/x.tgz -o x.tgz", summary{Cmds: l("curl"), Write: l("/h/p/x.tgz"), Network: true, Risk: WritesInside}},
	{"curl -O https://example.com/f.zip", summary{Cmds: l("curl"), Write: l("/h/p/f.zip"), Network: true, Risk: WritesInside}},
	{"curl -X POST -d @data.json https://api.example.com", summary{Cmds: l("curl"), Network: true, Irrev: true, Risk: CannotUndo}},
	{"curl -fsSL https://get.example.com | sh", summary{Cmds: l("curl", "sh"), Network: true, Irrev: true, Risk: CannotUndo}},
	{"wget https://example.com/a/b.iso", summary{Cmds: l("wget"), Write: l("/h/p/b.iso"), Network: true, Risk: WritesInside}},
	{"wget -O - https://x.io/i.sh | sudo bash", summary{Cmds: l("wget", "sudo", "bash"), Network: true, Priv: true, Irrev: true, Risk: CannotUndo}},
	{"scp report.pdf me@host:/srv/", summary{Cmds: l("scp"), Read: l("/h/p/report.pdf (r)"), Network: true, Irrev: true, Risk: CannotUndo}},
	{"scp host:/etc/motd .", summary{Cmds: l("scp"), Create: l("/h/p (r)"), Network: true, Risk: WritesInside}},
	{"rsync -a dir/ backup@nas:/b/", summary{Cmds: l("rsync"), Read: l("/h/p/dir (r)"), Network: true, Irrev: true, Risk: CannotUndo}},
	{"ssh host uptime", summary{Cmds: l("ssh"), Network: true, Irrev: true, Risk: CannotUndo}},
	{"ping -c 3 example.com", summary{Cmds: l("ping"), Network: true, Risk: Network}},
	{"nc -l 8080", summary{Cmds: l("nc"), Network: true, Irrev: true, Risk: CannotUndo}},
	{"git clone https://github.com/a/b.git", summary{Cmds: l("git"), Create: l("/h/p/b (r)"), Network: true, Risk: WritesInside}},
	{"git pull", summary{Cmds: l("git"), Write: l("/h/p (r)"), Network: true, Risk: WritesInside}},
	{"git push origin main", summary{Cmds: l("git"), Network: true, Irrev: true, Risk: CannotUndo}},
	{"sudo apt-get install -y jq", summary{Cmds: l("sudo", "apt-get"), Network: true, Priv: true, Risk: WritesOutside}},
	{"npm install", summary{Cmds: l("npm"), Write: l("/h/p/node_modules (r)", "/h/p/package-lock.json"), Network: true, Risk: WritesInside}},
	{"pip install requests", summary{Cmds: l("pip"), Network: true, Risk: WritesOutside}},
	{"kill -9 1234", summary{Cmds: l("kill"), Irrev: true, Risk: CannotUndo}},
	{"pkill firefox", summary{Cmds: l("pkill"), Irrev: true, Risk: CannotUndo}},
	{"sudo systemctl restart nginx", summary{Cmds: l("sudo", "systemctl"), Priv: true, Irrev: true, Risk: CannotUndo}},
	{"systemctl status nginx", summary{Cmds: l("systemctl"), Risk: ReadOnly}},
	{"sudo shutdown -h now", summary{Cmds: l("sudo", "shutdown"), Priv: true, Irrev: true, Risk: CannotUndo}},
	{"crontab -l", summary{Cmds: l("crontab"), Risk: ReadOnly}},
	{"crontab mycron", summary{Cmds: l("crontab"), Read: l("/h/p/mycron"), Irrev: true, Risk: CannotUndo}},
	{"echo body | mail -s hi a@b.c", summary{Cmds: l("echo", "mail"), Network: true, Irrev: true, Risk: CannotUndo}},
	{"sudo dd if=img.iso of=/dev/sdb", summary{Cmds: l("sudo", "dd"), Read: l("/h/p/img.iso"), Write: l("/dev/sdb"), Priv: true, Irrev: true, Risk: CannotUndo}},
	{"echo 3 | sudo tee /proc/sys/vm/drop_caches", summary{Cmds: l("echo", "sudo", "tee"), Write: l("/proc/sys/vm/drop_caches"), Priv: true, Irrev: true, Risk: CannotUndo}},
	{"date", summary{Cmds: l("date"), Risk: ReadOnly}},
	{"sudo useradd bob", summary{Cmds: l("sudo", "useradd"), Write: l("/etc/passwd", "/etc/shadow", "/etc/group"), Priv: true, Risk: WritesOutside}},

	// Unknown and unanalysable: the sandbox shows what they change; where,
	// the analysis does not claim.
	{"frobnicate --all", summary{Cmds: l("frobnicate"), Risk: WritesInside}},
	{"python3 script.py", summary{Cmds: l("python3"), Read: l("/h/p/script.py"), Risk: WritesInside}},
	{"bash deploy.sh", summary{Cmds: l("bash"), Read: l("/h/p/deploy.sh"), Risk: WritesInside}},
	{"sh -c \"$CMD\"", summary{Cmds: l("sh"), Risk: WritesInside}},
	{"sh -c 'echo \"unclosed'", summary{Cmds: l("sh"), Risk: WritesInside}},
}

func TestAnalyze(t *testing.T) {
	for _, tt := range analyzeTests {
		t.Run(tt.script, func(t *testing.T) {
			r, err := Analyze(tt.script, Dir("/h/p"), Home("/h"))
			if err != nil {
				t.Fatal(err)
			}
			got := summarize(r)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Analyze(%q) mismatch (-want +got):\n%s", tt.script, diff)
			}
			checkReport(t, r)
		})
	}
}

// checkReport checks what must hold for every report.
func checkReport(t *testing.T, r *Report) {
	t.Helper()
	top := ReadOnly
	for _, f := range r.Findings {
		top = max(top, f.Risk)
		if f.Reason == "" || f.Kind == "" {
			t.Errorf("finding without a kind or reason: %+v", f)
		}
		assertSafe(t, f.Reason, false)
	}
	if r.Risk != top {
		t.Errorf("risk %v, but the highest finding is %v", r.Risk, top)
	}
	for _, p := range r.Paths {
		switch p.Access {
		case Read, Write, Create, Delete, Meta:
		default:
			t.Errorf("path %q has access %q", p.Path, p.Access)
		}
		if p.Access != Read {
			found := false
			for _, f := range r.Findings {
				found = found || f.Line == p.Line
			}
			if !found {
				t.Errorf("%s of %q has no finding", p.Access, p.Path)
			}
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatalf("marshal report: %v", err)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatalf("unmarshal report: %v", err)
	}
	if back.Risk != r.Risk || len(back.Paths) != len(r.Paths) || len(back.Commands) != len(r.Commands) {
		t.Errorf("report does not survive JSON")
	}
}

func TestAnalyzeVia(t *testing.T) {
	r, err := Analyze("sudo find . -exec sh -c 'rm \"$1\"' _ {} \\; | xargs echo $(whoami)")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range r.Commands {
		got = append(got, c.Name+" via "+strings.Join(c.Via, ","))
	}
	want := l(
		"sudo via |", "find via |,sudo", "sh via |,sudo,find -exec", "rm via |,sudo,find -exec,sh -c",
		"whoami via |,$(...)", "xargs via |", "echo via |,xargs",
	)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("via mismatch (-want +got):\n%s", diff)
	}
}

func TestAnalyzePositions(t *testing.T) {
	r, err := Analyze("echo a\n  rm -f x\nsh -c 'touch y'\n")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range r.Commands {
		got = append(got, fmt.Sprintf("%s %d:%d", c.Name, c.Line, c.Col))
	}
	if diff := cmp.Diff(l("echo 1:1", "rm 2:3", "sh 3:1", "touch 3:1"), got); diff != "" {
		t.Errorf("positions (-want +got):\n%s", diff)
	}
	lines := map[string]int{}
	for _, p := range r.Paths {
		lines[p.Path] = p.Line
	}
	if lines["x"] != 2 || lines["y"] != 3 {
		t.Errorf("path lines %v, want x:2 y:3", lines)
	}
}

func TestAnalyzeNoDir(t *testing.T) {
	r, err := Analyze("rm -r build; echo > /etc/x; cat ~/f")
	if err != nil {
		t.Fatal(err)
	}
	got := summarize(r)
	want := summary{Cmds: l("rm", "echo", "cat"), Delete: l("build (r)"), Write: l("/etc/x"), Read: l("~/f"), Risk: Deletes}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
	kinds := map[string]Risk{}
	for _, f := range r.Findings {
		kinds[f.Reason] = f.Risk
	}
	if kinds["echo writes /etc/x, outside the working directory"] != WritesOutside {
		t.Errorf("findings %v: want /etc/x as a write outside", kinds)
	}
}

func TestParseError(t *testing.T) {
	tests := []struct {
		script     string
		line, col  int
		text       string
		incomplete bool
	}{
		{"echo 'unclosed", 1, 6, "echo 'unclosed", true},
		{"ls\nif true; then\n  echo x\n", 2, 1, "if true; then", true},
		{"ls\necho a |\n| b", 2, 8, "echo a |", false},
		{"echo \x1b[2K(", 1, 10, "echo \x1b[2K(", false},
	}
	for _, tt := range tests {
		_, err := Analyze(tt.script)
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Fatalf("Analyze(%q) error %v, want a *ParseError", tt.script, err)
		}
		if pe.Line != tt.line || pe.Col != tt.col || pe.Text != tt.text || pe.Incomplete != tt.incomplete {
			t.Errorf("Analyze(%q): got line %d col %d text %q incomplete %v, want %d %d %q %v",
				tt.script, pe.Line, pe.Col, pe.Text, pe.Incomplete, tt.line, tt.col, tt.text, tt.incomplete)
		}
		assertSafe(t, pe.Error(), false)
	}
}

func TestAnalyzeRiskReasons(t *testing.T) {
	r, err := Analyze("rm -rf ~/x; curl -d @f http://e.com", Dir("/h/p"), Home("/h"))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range r.Findings {
		got = append(got, fmt.Sprintf("%s/%s: %s", f.Risk, f.Kind, f.Reason))
	}
	sort.Strings(got)
	want := l(
		"cannot-undo/network: curl sends data to http://e.com, which the sandbox cannot undo",
		"deletes/delete: rm deletes /h/x and everything under it",
	)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("findings (-want +got):\n%s", diff)
	}
}

func TestRiskJSON(t *testing.T) {
	for r := ReadOnly; r <= CannotUndo; r++ {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var back Risk
		if err := json.Unmarshal(b, &back); err != nil || back != r {
			t.Errorf("risk %v: JSON %s decodes to %v, %v", r, b, back, err)
		}
	}
	if _, err := json.Marshal(Risk(42)); err == nil {
		t.Errorf("marshal of an unknown risk succeeded")
	}
	var r Risk
	if err := json.Unmarshal([]byte(`"bogus"`), &r); err == nil {
		t.Errorf("unmarshal of an unknown risk succeeded")
	}
}

func ExampleAnalyze() {
	r, err := Analyze("tar czf site.tgz public && rm -rf public", Dir("/home/ann/web"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("risk:", r.Risk)
	for _, p := range r.Paths {
		fmt.Println(p.Access, p.Path, p.Recursive)
	}
	for _, f := range r.Findings {
		fmt.Println(f.Reason)
	}
	// Output:
	// risk: deletes
	// write /home/ann/web/site.tgz false
	// read /home/ann/web/public true
	// delete /home/ann/web/public true
	// tar writes /home/ann/web/site.tgz
	// rm deletes /home/ann/web/public and everything under it
}

func ExampleAnalyze_parseError() {
	_, err := Analyze("echo 'oops")
	var pe *ParseError
	if errors.As(err, &pe) {
		fmt.Println(pe.Line, pe.Col, pe.Msg)
	}
	// Output:
	// 1 6 reached EOF without closing quote `'`
}

func TestAnalyzeArgs(t *testing.T) {
	r, err := Analyze(`rm -f file{1,2}.txt "$x" ~/a; find . -exec rm {} \; ; ls | xargs -0 rm -v`, Home("/h"))
	if err != nil {
		t.Fatal(err)
	}
	var got [][]string
	for _, c := range r.Commands {
		got = append(got, append([]string{c.Name}, c.Args...))
	}
	want := [][]string{
		{"rm", "-f", "file{1,2}.txt", `"$x"`, "~/a"},
		{"find", ".", "-exec", "rm", "{}", `\;`},
		{"rm", "{}"},
		{"ls"},
		{"xargs", "-0", "rm", "-v"},
		{"rm", "-v", "*"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("args as written (-want +got):\n%s", diff)
	}
}

func TestUnquoteANSIC(t *testing.T) {
	tests := map[string]string{
		`plain`:        "plain",
		`a\nb\tc`:      "a\nb\tc",
		`\e[2K`:        "\x1b[2K",
		`\x41\x4a`:     "AJ",
		`\u202e`:       "\u202e",
		`\U0001F600`:   "\U0001F600",
		`\101\0`:       "A\x00",
		`\cA`:          "\x01",
		`\'\"\\`:       `'"\`,
		`\xZ \q \`:     `\xZ \q \`,
		`end\x4`:       "end\x04",
		`\u12345`:      "\u1234" + "5",
		`mixed \x1b]8`: "mixed \x1b]8",
	}
	for in, want := range tests {
		if got := unquoteANSIC(in); got != want {
			t.Errorf("unquoteANSIC(%q) = %q, want %q", in, got, want)
		}
	}
}
