package effects

import (
	"fmt"
	"path"
	"strings"
)

// inputText is the text of an argument that xargs reads from its input.
const inputText = "<input>"

// invocation is one command with its arguments, after any wrappers.
type invocation struct {
	a         *analyzer
	name      string    // base name of the command
	args      []wordVal // arguments after the name
	line, col int
}

// exec analyses a command and its arguments.
func (a *analyzer) exec(args []wordVal, line, col int) {
	if len(args) == 0 {
		return
	}
	name := args[0]
	texts := make([]string, 0, len(args)-1)
	for _, w := range args[1:] {
		switch {
		case w.alt:
		case w.src != "":
			texts = append(texts, w.src)
		default:
			texts = append(texts, w.text)
		}
	}
	cmd := Command{Name: name.text, Args: texts, Line: line, Col: col, Dynamic: !name.lit}
	if len(a.via) > 0 {
		cmd.Via = append([]string(nil), a.via...)
	}
	if len(texts) == 0 {
		cmd.Args = nil
	}
	a.rep.Commands = append(a.rep.Commands, cmd)
	if !name.lit {
		a.finding(WritesOutside, "dynamic", fmt.Sprintf("runs a command whose name is known only at run time: %s", Quote(name.text)), line)
		return
	}
	inv := &invocation{a: a, name: path.Base(name.text), args: args[1:], line: line, col: col}
	if a.funcs[name.text] {
		return
	}
	if h := handler(inv.name); h != nil {
		h(inv)
		return
	}
	if spec, ok := readers[inv.name]; ok {
		inv.readOperands(spec)
		return
	}
	if quiet[inv.name] {
		return
	}
	a.finding(WritesInside, "unknown-command", fmt.Sprintf("%s is not a command nash knows; the sandbox will show what it changes", Quote(inv.name)), line)
}

// path records a path use by this invocation.
func (c *invocation) path(v wordVal, acc Access, recursive bool) {
	c.a.path(v, acc, recursive, c.name, c.line)
}

// finding records a finding for this invocation.
func (c *invocation) finding(r Risk, kind, format string, args ...any) {
	c.a.finding(r, kind, fmt.Sprintf(format, args...), c.line)
}

// run analyses a wrapped command line.
func (c *invocation) run(args []wordVal, via string) {
	c.a.withVia(via, func() { c.a.exec(args, c.line, c.col) })
}

// script analyses a string run as a script.
func (c *invocation) script(v wordVal, via string) {
	if !v.lit {
		c.finding(WritesOutside, "dynamic", "%s runs a script known only at run time: %s", via, Quote(v.text))
		return
	}
	c.a.script(v.text, via, c.line, c.col)
}

// cwd returns the current directory as a value, "." when unknown.
func (c *invocation) cwd() wordVal {
	if c.a.cwdDyn {
		return wordVal{text: "$PWD", pattern: string(anyMark), dynamic: true}
	}
	if c.a.cwd == "" {
		return wordVal{text: ".", pattern: ".", lit: true}
	}
	return literal(c.a.cwd)
}

// literal returns a value for a known string.
func literal(s string) wordVal { return wordVal{text: s, pattern: escapeGlob(s), lit: true} }

// join appends a literal element to a value: dir/name.
func join(dir wordVal, name string) wordVal {
	if dir.text == "." && dir.lit {
		return literal(name)
	}
	sep := "/"
	if strings.HasSuffix(dir.text, "/") {
		sep = ""
	}
	dir.text += sep + name
	dir.pattern += sep + escapeGlob(name)
	return dir
}

// withSuffix appends a literal suffix to a value: file.gz.
func withSuffix(v wordVal, suf string) wordVal {
	v.text += suf
	v.pattern += escapeGlob(suf)
	return v
}

// optSpec describes a command's options.
type optSpec struct {
	arg  string   // short options that take an argument
	long []string // long options that take an argument when written without =
	stop bool     // options end at the first operand, as for wrappers
	// optional are short options whose argument is optional and only
	// ever attached (xargs -i, -i{}, -l, -l5).
	optional string
}

// parsed is a command line split into options and operands.
type parsed struct {
	flags map[string]string  // by letter or long name without dashes
	vals  map[string]wordVal // the arguments of options that take one
	ops   []wordVal
	dash  int // index in ops of the first operand after "--", or -1
}

// val returns the argument of the first of the named options given, as
// a value that keeps whether it is dynamic: -o FILE, -oFILE, --output=FILE.
func (p parsed) val(names ...string) (wordVal, bool) {
	for _, n := range names {
		if v, ok := p.vals[n]; ok {
			return v, true
		}
	}
	return wordVal{}, false
}

// tail returns w without its first n bytes of text, as the argument glued
// to an option: -oFILE, --output=FILE.
func tail(w wordVal, n int) wordVal {
	rest := w.text[n:]
	if w.lit {
		return literal(rest)
	}
	w.text = rest
	w.src = ""
	// The dynamic part is after the option name, so the pattern keeps
	// everything from the first wildcard on.
	if i := strings.IndexByte(w.pattern, anyMark); i >= 0 && i >= n {
		w.pattern = w.pattern[n:]
	} else {
		w.pattern = escapeGlob(rest)
	}
	return w
}

func (p parsed) has(names ...string) bool {
	for _, n := range names {
		if _, ok := p.flags[n]; ok {
			return true
		}
	}
	return false
}

func (p parsed) get(names ...string) (string, bool) {
	for _, n := range names {
		if v, ok := p.flags[n]; ok {
			return v, true
		}
	}
	return "", false
}

// parseOpts splits args into options and operands by spec. With
// spec.stop, every argument from the first operand on is an operand.
func parseOpts(args []wordVal, spec optSpec) parsed {
	p := parsed{flags: map[string]string{}, vals: map[string]wordVal{}, dash: -1}
	for i := 0; i < len(args); i++ {
		t := args[i].text
		switch {
		case t == "--" && args[i].lit:
			p.dash = len(p.ops)
			p.ops = append(p.ops, args[i+1:]...)
			return p
		case strings.HasPrefix(t, "--") && len(t) > 2:
			name, val, hasVal := strings.Cut(t[2:], "=")
			switch {
			case hasVal:
				p.vals[name] = tail(args[i], len(name)+3)
			case contains(spec.long, name) && i+1 < len(args):
				i++
				val = args[i].text
				p.vals[name] = args[i]
			}
			p.flags[name] = val
		case strings.HasPrefix(t, "-") && len(t) > 1:
		letters:
			for j := 1; j < len(t); j++ {
				f := t[j : j+1]
				if strings.Contains(spec.optional, f) {
					if val := t[j+1:]; val != "" {
						p.vals[f] = tail(args[i], j+1)
						p.flags[f] = val
					} else {
						p.flags[f] = ""
					}
					break letters
				}
				if strings.Contains(spec.arg, f) {
					val := t[j+1:]
					switch {
					case val != "":
						p.vals[f] = tail(args[i], j+1)
					case i+1 < len(args):
						i++
						val = args[i].text
						p.vals[f] = args[i]
					}
					p.flags[f] = val
					break letters
				}
				p.flags[f] = ""
			}
		default:
			if spec.stop {
				p.ops = append(p.ops, args[i:]...)
				return p
			}
			p.ops = append(p.ops, args[i])
		}
	}
	return p
}

func contains(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

// readerSpec describes a command that only reads its operands.
type readerSpec struct {
	opts    optSpec
	skip    int    // leading operands that are not files (a pattern, a program)
	skipOpt string // options that, when given, replace the skipped operand
	dirs    bool   // operands are directories read recursively
}

// readers are commands that read their operands and change nothing.
var readers = map[string]readerSpec{
	"cat": {}, "tac": {}, "less": {}, "more": {}, "nl": {opts: optSpec{arg: "bdfhilnsvw"}},
	"head": {opts: optSpec{arg: "nc"}}, "tail": {opts: optSpec{arg: "ncs", long: []string{"pid", "sleep-interval"}}},
	"wc": {}, "file": {opts: optSpec{arg: "emfFP"}}, "stat": {opts: optSpec{arg: "c", long: []string{"format", "printf"}}},
	"du":   {opts: optSpec{arg: "BdtX", long: []string{"max-depth", "exclude"}}, dirs: true},
	"ls":   {opts: optSpec{arg: "ITw", long: []string{"ignore", "hide", "sort", "format", "time-style", "color", "block-size"}}},
	"tree": {opts: optSpec{arg: "LIPo", long: []string{"charset"}}, dirs: true},
	"diff": {opts: optSpec{arg: "CUFIxX", long: []string{"label", "exclude", "ignore-matching-lines"}}},
	"cmp":  {opts: optSpec{arg: "inI"}}, "comm": {}, "md5sum": {}, "sha1sum": {}, "sha256sum": {}, "sha512sum": {},
	"sha224sum": {}, "sha384sum": {}, "b2sum": {}, "cksum": {}, "sum": {}, "shasum": {opts: optSpec{arg: "a"}},
	"od": {opts: optSpec{arg: "AjNSstw"}}, "xxd": {opts: optSpec{arg: "cglos"}}, "hexdump": {opts: optSpec{arg: "enfs"}},
	"strings": {opts: optSpec{arg: "ntT"}}, "fold": {opts: optSpec{arg: "w"}}, "fmt": {opts: optSpec{arg: "wpg"}},
	"column": {opts: optSpec{arg: "cstoNHWE"}}, "paste": {opts: optSpec{arg: "d"}}, "join": {opts: optSpec{arg: "tjoae12"}},
	"rev": {}, "expand": {opts: optSpec{arg: "t"}}, "unexpand": {opts: optSpec{arg: "t"}}, "base64": {opts: optSpec{arg: "w"}},
	"readlink": {}, "realpath": {opts: optSpec{long: []string{"relative-to", "relative-base"}}},
	"cut":   {opts: optSpec{arg: "bcdf", long: []string{"output-delimiter"}}},
	"tr":    {skip: 99},
	"grep":  {opts: optSpec{arg: "efmABCDd", long: []string{"regexp", "file", "max-count", "include", "exclude", "exclude-dir", "context", "label", "color", "colour"}}, skip: 1, skipOpt: "ef"},
	"egrep": {opts: optSpec{arg: "efmABCDd"}, skip: 1, skipOpt: "ef"}, "fgrep": {opts: optSpec{arg: "efmABCDd"}, skip: 1, skipOpt: "ef"},
	"zgrep": {opts: optSpec{arg: "efmABC"}, skip: 1, skipOpt: "ef"}, "rg": {opts: optSpec{arg: "efmABCgtTj", long: []string{"glob", "type"}}, skip: 1, skipOpt: "ef"},
	"ag":  {opts: optSpec{arg: "ABCGm"}, skip: 1},
	"awk": {opts: optSpec{arg: "fvF"}, skip: 1, skipOpt: "f"}, "gawk": {opts: optSpec{arg: "fvFe"}, skip: 1, skipOpt: "f"},
	"mawk": {opts: optSpec{arg: "fvF"}, skip: 1, skipOpt: "f"}, "nawk": {opts: optSpec{arg: "fvF"}, skip: 1, skipOpt: "f"},
	"jq":   {opts: optSpec{arg: "f", long: []string{"arg", "argjson", "slurpfile", "rawfile", "indent"}}, skip: 1, skipOpt: "f"},
	"zcat": {}, "bzcat": {}, "xzcat": {}, "zstdcat": {}, "zless": {}, "zmore": {}, "lsattr": {}, "ldd": {},
	"nm": {}, "objdump": {}, "readelf": {}, "look": {skip: 1}, "md5": {}, "basename": {skip: 99}, "dirname": {skip: 99},
	"bat": {}, "pv": {opts: optSpec{arg: "LNsiBwHd"}}, "pr": {opts: optSpec{arg: "hlwoN"}}, "tsort": {}, "ptx": {}, "shuf": {opts: optSpec{arg: "nio"}},
}

// quiet are commands known to touch no files and need no finding.
var quiet = map[string]bool{
	"echo": true, "printf": true, "df": true, "pwd": true, "date": true, "cal": true, "whoami": true, "id": true, "groups": true,
	"uname": true, "hostname": true, "uptime": true, "free": true, "ps": true, "top": true, "htop": true, "pgrep": true,
	"pidof": true, "lsof": true, "netstat": true, "ss": true, "printenv": true, "history": true, "true": true, "false": true,
	"test": true, "[": true, "sleep": true, "seq": true, "yes": true, "expr": true, "bc": true, "dc": true, "wait": true,
	"jobs": true, "fg": true, "bg": true, "set": true, "shift": true, "alias": true, "unalias": true, "hash": true,
	"ulimit": true, "umask": true, "getconf": true, "locale": true, "tty": true, "stty": true, "tput": true, "clear": true,
	"reset": true, "man": true, "info": true, "help": true, "whatis": true, "apropos": true, "lsblk": true, "blkid": true,
	"findmnt": true, "lscpu": true, "lsusb": true, "lspci": true, "dmesg": true, "journalctl": true, "last": true,
	"w": true, "who": true, "users": true, "finger": true, "vmstat": true, "iostat": true, "mpstat": true, "sar": true,
	"nproc": true, "arch": true, "getent": true, "locate": true, "dirs": true, "let": true, ":": true, "return": true,
	"exit": true, "break": true, "continue": true, "trap": true, "shopt": true, "getopts": true, "which": true,
	"whereis": true, "type": true, "read": true, "unset": true, "local": true, "declare": true, "typeset": true,
	"export": true, "readonly": true, "times": true, "caller": true, "compgen": true, "complete": true, "disown": true,
	"logout": true, "mapfile": true, "readarray": true, "enable": true, "bind": true, "fc": true, "suspend": true,
	"numfmt": true, "factor": true, "cowsay": true, "lsmod": true,
	"ifconfig": true, "iwconfig": true, "route": true, "arp": true, "xclip": true, "xsel": true, "pbcopy": true,
	"pbpaste": true, "lsb_release": true, "hostid": true, "logname": true, "sensors": true, "fuser": true,
	"pstree":    true,
	"dircolors": true, "chage": true, "quota": true, "vdir": true, "dir": true,
}

// readOperands records the operands of a reading command as read.
func (c *invocation) readOperands(spec readerSpec) {
	p := parseOpts(c.args, spec.opts)
	ops := p.ops
	skip := spec.skip
	if spec.skipOpt != "" && p.has(strings.Split(spec.skipOpt, "")...) {
		skip = 0
	}
	if skip > len(ops) {
		skip = len(ops)
	}
	for _, o := range ops[skip:] {
		if o.lit && strings.HasPrefix(o.text, "-") && o.text != "-" {
			continue
		}
		c.path(o, Read, spec.dirs || (c.name == "grep" && p.has("r", "R")))
	}
}

// handler returns the analysis of a command whose arguments mean more
// than files read, or nil.
func handler(name string) func(*invocation) {
	switch name {
	case "sudo", "doas", "pkexec", "su", "runuser":
		return privileged
	case "env", "nice", "nohup", "setsid", "stdbuf", "ionice", "timeout", "time", "exec", "command", "builtin",
		"chroot", "taskset", "chrt", "flock", "unbuffer", "strace", "ltrace", "torsocks", "proxychains", "proxychains4",
		"sshpass", "xvfb-run", "caffeinate", "catchsegv", "fakeroot", "nocache", "cpulimit", "trickle":
		return wrapper
	case "xargs", "parallel":
		return xargs
	case "find":
		return find
	case "sh", "bash", "dash", "zsh", "ksh", "mksh", "fish", "csh", "tcsh", "busybox":
		return shell
	case "eval":
		return evalCmd
	case "source", ".":
		return source
	case "watch":
		return watch
	case "cd", "pushd", "popd":
		return cd
	case "rm", "rmdir", "unlink", "shred", "srm", "trash", "trash-put", "gio":
		return remove
	case "mv", "cp", "install", "ln", "link", "rename", "mmv":
		return copyMove
	case "mkdir", "mkfifo", "mknod", "touch", "truncate", "fallocate", "tee", "dd", "mktemp":
		return create
	case "chmod", "chown", "chgrp", "chattr", "setfacl", "setfattr", "chcon":
		return chmod
	case "sed", "perl", "python", "python2", "python3", "ruby", "node", "nodejs", "php", "lua", "Rscript", "osascript":
		return interpreter
	case "tar", "zip", "unzip", "gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "lzma", "unlzma", "zstd",
		"unzstd", "lz4", "compress", "uncompress", "pigz", "7z", "7za", "rar", "unrar", "cpio", "ar":
		return archive
	case "rsync", "scp", "sftp", "ftp", "lftp", "curl", "wget", "ssh", "ssh-copy-id", "nc", "ncat", "netcat",
		"telnet", "socat", "ping", "ping6", "traceroute", "tracepath", "dig", "nslookup", "host", "whois", "mtr",
		"nmap", "aria2c", "axel", "http", "httpie", "mail", "mailx", "sendmail", "mutt", "mpack", "ssmtp", "msmtp":
		return network
	case "git":
		return git
	case "read", "unset", "mapfile", "readarray", "getopts":
		return setVars
	case "patch", "split", "csplit", "sort", "uniq", "dos2unix", "unix2dos", "iconv", "vi", "vim", "nvim", "nano",
		"emacs", "ed", "ex", "pico", "joe", "code", "gcc", "cc", "g++", "clang", "clang++", "convert", "ffmpeg":
		return writers
	case "kill", "killall", "pkill", "skill", "xkill", "renice", "systemctl", "service", "shutdown", "reboot",
		"halt", "poweroff", "init", "telinit", "crontab", "at", "batch", "atrm", "mount", "umount", "swapon",
		"swapoff", "mkswap", "fdisk", "parted", "sfdisk", "gdisk", "losetup", "cryptsetup", "wipefs", "hdparm",
		"iptables", "ip6tables", "ufw", "nft", "sysctl", "modprobe", "insmod", "rmmod", "hwclock", "timedatectl",
		"hostnamectl", "nmcli", "ifup", "ifdown", "wall", "write", "logger", "notify-send", "docker", "podman",
		"kubectl", "virsh", "vagrant", "launchctl", "loginctl", "ip", "date", "xdg-open", "open", "mkfs":
		return irreversible
	case "apt", "apt-get", "aptitude", "yum", "dnf", "pacman", "zypper", "apk", "brew", "snap", "flatpak", "pip",
		"pip3", "npm", "yarn", "pnpm", "gem", "cargo", "go", "conda", "port", "emerge", "dpkg", "rpm", "pipx":
		return packages
	case "useradd", "userdel", "usermod", "groupadd", "groupdel", "groupmod", "passwd", "chpasswd", "adduser",
		"deluser", "addgroup", "delgroup", "gpasswd", "visudo", "chsh", "chfn":
		return accounts
	}
	if strings.HasPrefix(name, "mkfs.") {
		return irreversible
	}
	return nil
}

// privileged: sudo, doas, pkexec, su, runuser.
func privileged(c *invocation) {
	switch c.name {
	case "su", "runuser":
		p := parseOpts(c.args, optSpec{arg: "cgGsuw", long: []string{"command", "group", "supp-group", "shell", "user", "whitelist-environment"}})
		user := "root"
		for _, o := range p.ops {
			if o.text != "-" {
				user = o.text
				break
			}
		}
		c.finding(WritesOutside, "privilege", "%s runs commands as %s", c.name, Quote(user))
		if v, ok := p.val("c", "command"); ok {
			c.script(v, c.name+" -c")
		}
		return
	}
	spec := optSpec{arg: "ugChprtUDRT", long: []string{"user", "group", "close-from", "host", "prompt", "role", "type", "other-user", "chdir", "chroot", "command-timeout"}, stop: true}
	if c.name == "doas" {
		spec = optSpec{arg: "uC", stop: true}
	}
	if c.name == "pkexec" {
		spec = optSpec{long: []string{"user"}, stop: true}
	}
	p := parseOpts(c.args, spec)
	user := "root"
	if u, ok := p.get("u", "user"); ok {
		user = u
	}
	switch {
	case p.has("e", "edit") || c.name == "sudoedit":
		c.finding(WritesOutside, "privilege", "%s edits files as %s", c.name, Quote(user))
		for _, o := range p.ops {
			c.path(o, Write, false)
		}
		return
	case len(p.ops) == 0:
		if p.has("i", "s", "login", "shell") {
			c.finding(WritesOutside, "privilege", "%s opens a shell as %s", c.name, Quote(user))
		}
		return
	}
	c.finding(WritesOutside, "privilege", "%s runs %s as %s", c.name, Quote(p.ops[0].text), Quote(user))
	c.run(p.ops, c.name)
}

// wrapper: commands that run another command given as arguments.
func wrapper(c *invocation) {
	var spec optSpec
	skip := 0 // operands before the command
	switch c.name {
	case "env":
		spec = optSpec{arg: "uCS", long: []string{"unset", "chdir", "split-string"}, stop: true}
	case "nice":
		spec = optSpec{arg: "n", long: []string{"adjustment"}, stop: true}
	case "stdbuf":
		spec = optSpec{arg: "ioe", long: []string{"input", "output", "error"}, stop: true}
	case "ionice":
		spec = optSpec{arg: "cnp", long: []string{"class", "classdata", "pid"}, stop: true}
	case "timeout":
		spec, skip = optSpec{arg: "sk", long: []string{"signal", "kill-after"}, stop: true}, 1
	case "time":
		spec = optSpec{arg: "fo", long: []string{"format", "output"}, stop: true}
	case "exec":
		spec = optSpec{arg: "a", stop: true}
	case "command":
		spec = optSpec{stop: true}
	case "chroot":
		spec, skip = optSpec{long: []string{"userspec", "groups"}, stop: true}, 1
		c.finding(WritesOutside, "privilege", "chroot runs a command in another root directory")
	case "taskset":
		spec, skip = optSpec{stop: true}, 1
	case "chrt":
		spec, skip = optSpec{arg: "T", stop: true}, 1
	case "flock":
		spec, skip = optSpec{arg: "wEc", long: []string{"timeout", "conflict-exit-code", "command"}, stop: true}, 1
	case "strace", "ltrace":
		spec = optSpec{arg: "oepsEuIabXU", long: []string{"output"}, stop: true}
	case "sshpass":
		spec = optSpec{arg: "pfde", stop: true}
		c.finding(ReadOnly, "network", "sshpass logs in to another host with a password")
	case "torsocks", "proxychains", "proxychains4":
		spec = optSpec{arg: "f", stop: true}
		c.finding(ReadOnly, "network", "%s sends the command's traffic through a proxy", c.name)
	case "xvfb-run":
		spec = optSpec{arg: "nsfe", stop: true}
	default:
		spec = optSpec{stop: true}
	}
	p := parseOpts(c.args, spec)
	if c.name == "command" && p.has("v", "V") {
		return
	}
	if c.name == "time" || c.name == "strace" || c.name == "ltrace" {
		if o, ok := p.val("o", "output"); ok {
			c.path(o, Write, false)
		}
	}
	if c.name == "env" {
		if s, ok := p.val("S", "split-string"); ok {
			c.script(s, "env -S")
			return
		}
		for len(p.ops) > 0 && p.ops[0].lit && strings.Contains(p.ops[0].text, "=") && !strings.HasPrefix(p.ops[0].text, "=") {
			p.ops = p.ops[1:]
		}
	}
	if c.name == "flock" {
		if s, ok := p.val("c", "command"); ok {
			if len(p.ops) > 0 {
				c.path(p.ops[0], Write, false)
			}
			c.script(s, "flock -c")
			return
		}
		if len(p.ops) > 0 {
			c.path(p.ops[0], Write, false)
		}
	}
	if len(p.ops) <= skip {
		return
	}
	c.run(p.ops[skip:], c.name)
}

// xargs runs a command with arguments read from its input.
func xargs(c *invocation) {
	spec := optSpec{arg: "adEILnPs", optional: "eil", long: []string{"arg-file", "delimiter", "eof", "replace", "max-lines", "max-args", "max-procs", "max-chars", "process-slot-var"}, stop: true}
	if c.name == "parallel" {
		spec = optSpec{arg: "ajJSn", long: []string{"jobs", "arg-file", "sshlogin", "joblog", "results", "delay"}, stop: true}
	}
	p := parseOpts(c.args, spec)
	if f, ok := p.val("a", "arg-file"); ok {
		c.path(f, Read, false)
	}
	inputs := []wordVal{{text: inputText, pattern: string(anyMark), dynamic: true}}
	if c.a.piped() && len(c.a.pipeIn) > 0 {
		// What find printed before it in the pipeline.
		inputs = c.a.pipeIn
	}
	cmd := p.ops
	if c.name == "parallel" {
		for i, o := range cmd {
			if o.text == ":::" || o.text == "::::" {
				cmd = cmd[:i]
				break
			}
		}
	}
	if len(cmd) == 0 {
		cmd = []wordVal{literal("echo")}
	}
	repl, hasRepl := p.get("I", "i", "replace")
	if hasRepl && repl == "" {
		repl = "{}"
	}
	if c.name == "parallel" {
		repl, hasRepl = "{}", true
	}
	out := make([]wordVal, 0, len(cmd)+len(inputs))
	replaced := false
	for _, w := range cmd {
		if !hasRepl || !strings.Contains(w.text, repl) {
			out = append(out, w)
			continue
		}
		for k, in := range inputs {
			v := substitute(w, repl, in)
			v.alt = k > 0
			out = append(out, v)
		}
		replaced = true
	}
	if !replaced {
		for k, in := range inputs {
			in.alt = k > 0
			out = append(out, in)
		}
	}
	c.run(out, c.name)
}

// substitute replaces every occurrence of placeholder in w with v.
func substitute(w wordVal, placeholder string, v wordVal) wordVal {
	w.text = strings.ReplaceAll(w.text, placeholder, v.text)
	w.pattern = strings.ReplaceAll(w.pattern, escapeGlob(placeholder), v.pattern)
	w.dynamic = w.dynamic || v.dynamic
	w.glob = w.glob || v.glob
	w.lit = w.lit && v.lit
	return w
}

// findPrimariesWithArg are find's tests and actions that take one
// argument.
var findPrimariesWithArg = map[string]bool{
	"-name": true, "-iname": true, "-path": true, "-ipath": true, "-wholename": true, "-iwholename": true,
	"-regex": true, "-iregex": true, "-type": true, "-xtype": true, "-mtime": true, "-mmin": true, "-atime": true,
	"-amin": true, "-ctime": true, "-cmin": true, "-size": true, "-perm": true, "-user": true, "-group": true,
	"-uid": true, "-gid": true, "-newer": true, "-anewer": true, "-cnewer": true, "-maxdepth": true,
	"-mindepth": true, "-links": true, "-inum": true, "-samefile": true, "-fstype": true, "-used": true,
	"-printf": true, "-fprint": true, "-fprint0": true, "-fls": true, "-context": true, "-regextype": true,
	"-lname": true, "-ilname": true, "-files0-from": true,
}

// find walks directory trees, and may delete or run commands on what it
// finds.
func find(c *invocation) {
	args := c.args
	i := 0
	for i < len(args) && (args[i].text == "-H" || args[i].text == "-L" || args[i].text == "-P" || strings.HasPrefix(args[i].text, "-O")) {
		i++
	}
	if i < len(args) && args[i].text == "-D" {
		i += 2
	}
	var starts []wordVal
	for ; i < len(args); i++ {
		t := args[i].text
		if (strings.HasPrefix(t, "-") && len(t) > 1 && args[i].lit) || t == "(" || t == "!" || t == "," {
			break
		}
		starts = append(starts, args[i])
	}
	if len(starts) == 0 {
		starts = []wordVal{c.cwd()}
	}
	var names []wordVal // -name patterns, not negated
	// matches returns values standing for the files found under start:
	// one per -name pattern.
	matches := func(start wordVal) []wordVal {
		m := start
		if !strings.HasSuffix(m.text, "/") {
			m.text += "/"
			m.pattern += "/"
		}
		m.text += "**"
		m.glob = true
		if len(names) == 0 {
			// find's start path is among what it finds.
			m.pattern = start.pattern + string(anyMark)
			return []wordVal{m}
		}
		m.pattern += string(anyMark)
		out := make([]wordVal, len(names))
		for i, n := range names {
			out[i] = m
			out[i].text += "/" + n.text
			out[i].pattern += n.pattern
		}
		return out
	}
	for _, s := range starts {
		c.path(s, Read, true)
	}
	prints := true // prints the paths it finds, and nothing else
	defer func() {
		if !prints || !c.a.piped() {
			return
		}
		out := []wordVal{}
		for _, s := range starts {
			out = append(out, matches(s)...)
		}
		c.a.pipeOut = out
	}()
	for ; i < len(args); i++ {
		t := args[i].text
		switch t {
		case "-exec", "-execdir", "-ok", "-okdir", "-printf", "-ls", "-fls", "-fprint", "-fprint0", "-fprintf":
			prints = false
		}
		switch {
		case t == "-name" || t == "-iname":
			negated := i > 0 && (args[i-1].text == "!" || args[i-1].text == "-not")
			if i+1 < len(args) && !negated {
				n := args[i+1]
				n.pattern = globOfLiteral(n)
				names = append(names, n)
			}
			i++
		case t == "-delete":
			for _, s := range starts {
				if len(names) > 0 {
					// Only matching entries go; a matching directory
					// that is not empty stays.
					for _, m := range matches(s) {
						c.path(m, Delete, false)
					}
				} else {
					c.path(s, Delete, true)
				}
			}
		case t == "-exec" || t == "-execdir" || t == "-ok" || t == "-okdir":
			j := i + 1
			for j < len(args) && args[j].text != ";" && args[j].text != "+" {
				j++
			}
			for _, s := range starts {
				ms := matches(s)
				var cmd []wordVal
				for _, w := range args[i+1 : j] {
					if !strings.Contains(w.text, "{}") {
						cmd = append(cmd, w)
						continue
					}
					for k, m := range ms {
						v := substitute(w, "{}", m)
						v.alt = k > 0
						cmd = append(cmd, v)
					}
				}
				if len(cmd) > 0 {
					c.run(cmd, "find "+t)
				}
			}
			i = j
		case t == "-fprint" || t == "-fprint0" || t == "-fls" || t == "-fprintf":
			if i+1 < len(args) {
				c.path(args[i+1], Write, false)
			}
			i++
			if t == "-fprintf" {
				i++
			}
		case t == "-newer" || t == "-anewer" || t == "-cnewer" || t == "-samefile":
			if i+1 < len(args) {
				c.path(args[i+1], Read, false)
			}
			i++
		case findPrimariesWithArg[t] || strings.HasPrefix(t, "-newer"):
			i++
		}
	}
}

// globOfLiteral returns the pattern of a word used as a glob by a command
// (find -name '*.txt'): its quoted glob characters are live.
func globOfLiteral(w wordVal) string {
	if w.lit {
		return w.text
	}
	return w.pattern
}

// shell: sh, bash and friends, with -c or a script file.
func shell(c *invocation) {
	args := c.args
	if c.name == "busybox" {
		if len(args) > 0 {
			c.run(args, "busybox")
		}
		return
	}
	hasC := false
	i := 0
	for ; i < len(args); i++ {
		t := args[i].text
		if t == "--" {
			i++
			break
		}
		if !strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "+") || t == "-" {
			break
		}
		if t == "-o" || t == "+o" || t == "-O" || t == "+O" || t == "--rcfile" || t == "--init-file" {
			i++
			continue
		}
		if !strings.HasPrefix(t, "--") && strings.Contains(t, "c") {
			hasC = true
		}
	}
	if i >= len(args) {
		return // reads commands from its input
	}
	if hasC {
		c.a.withParams(groupWords(args[i+1:]), func() { c.script(args[i], c.name+" -c") })
		return
	}
	c.path(args[i], Read, false)
	c.finding(WritesOutside, "unknown-command", "%s runs the script %s, which nash does not analyse", c.name, Quote(args[i].text))
}

// groupWords splits arguments into words, each with its values: a word
// that may take several values (find -exec's {} with two -name patterns)
// has its later values marked alt.
func groupWords(args []wordVal) [][]wordVal {
	var out [][]wordVal
	for _, w := range args {
		if w.alt && len(out) > 0 {
			out[len(out)-1] = append(out[len(out)-1], w)
			continue
		}
		out = append(out, []wordVal{w})
	}
	return out
}

// positional are the names of the positional parameters a script run by
// sh -c sees.
var positional = []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "@", "*"}

// withParams runs f with the positional parameters $0, $1... set to the
// words of params (sh -c 'script' $0 $1...), and "$@" to all but the
// first, then restores them.
func (a *analyzer) withParams(params [][]wordVal, f func()) {
	saved := map[string][]wordVal{}
	for _, n := range positional {
		if v, ok := a.vars[n]; ok {
			saved[n] = v
		}
		delete(a.vars, n)
	}
	var all []wordVal
	for k, vals := range params {
		vals = append([]wordVal(nil), vals...)
		for i := range vals {
			vals[i].alt, vals[i].src = false, ""
		}
		if k < 10 {
			a.vars[positional[k]] = vals
		}
		if k > 0 {
			all = append(all, vals...)
		}
	}
	if len(all) > 0 && len(all) <= maxAlternatives {
		a.vars["@"], a.vars["*"] = all, all
	}
	f()
	for _, n := range positional {
		delete(a.vars, n)
		if v, ok := saved[n]; ok {
			a.vars[n] = v
		}
	}
}

func evalCmd(c *invocation) {
	if len(c.args) == 0 {
		return
	}
	parts := make([]string, len(c.args))
	lit := true
	for i, a := range c.args {
		parts[i] = a.text
		lit = lit && a.lit
	}
	v := wordVal{text: strings.Join(parts, " "), lit: lit}
	c.script(v, "eval")
}

func source(c *invocation) {
	if len(c.args) == 0 {
		return
	}
	c.path(c.args[0], Read, false)
	c.finding(WritesOutside, "unknown-command", "%s runs the commands in %s, which nash does not analyse", c.name, Quote(c.args[0].text))
}

func watch(c *invocation) {
	p := parseOpts(c.args, optSpec{arg: "nqd", long: []string{"interval", "differences"}, stop: true})
	if len(p.ops) == 0 {
		return
	}
	if len(p.ops) == 1 {
		c.script(p.ops[0], "watch")
		return
	}
	c.run(p.ops, "watch")
}

// cd changes the directory later relative paths resolve against.
func cd(c *invocation) {
	a := c.a
	p := parseOpts(c.args, optSpec{})
	if c.name == "popd" {
		if n := len(a.dirStack); n > 0 {
			a.cwd, a.cwdDyn = a.dirStack[n-1], a.dirStack[n-1] == ""
			a.dirStack = a.dirStack[:n-1]
		} else {
			a.cwdDyn = true
		}
		return
	}
	old := a.cwd
	if a.cwdDyn {
		old = ""
	}
	var target wordVal
	switch {
	case len(p.ops) == 0 && a.cfg.home != "":
		target = literal(a.cfg.home)
	case len(p.ops) == 0 || p.ops[0].text == "-" || !p.ops[0].lit:
		a.cwdDyn = true
		if c.name == "pushd" {
			a.dirStack = append(a.dirStack, old)
		}
		return
	default:
		target = p.ops[0]
	}
	show, _, dyn := a.resolve(target)
	if c.name == "pushd" {
		a.dirStack = append(a.dirStack, old)
	}
	if dyn || (!strings.HasPrefix(show, "/") && a.cfg.dir != "") {
		a.cwdDyn = true
		return
	}
	a.cwd, a.cwdDyn = show, false
}

// remove: rm, rmdir, unlink, shred, trash.
func remove(c *invocation) {
	p := parseOpts(c.args, optSpec{arg: "ns", long: []string{"iterations", "size", "random-source", "interactive"}})
	switch c.name {
	case "shred":
		for _, o := range p.ops {
			c.path(o, Write, false)
			if p.has("u", "remove") {
				c.path(o, Delete, false)
			}
		}
		return
	case "gio":
		if len(p.ops) == 0 || (p.ops[0].text != "remove" && p.ops[0].text != "trash") {
			return
		}
		p.ops = p.ops[1:]
	}
	recursive := c.name == "rm" && p.has("r", "R", "recursive")
	recursive = recursive || c.name == "trash" || c.name == "trash-put" || c.name == "gio" || c.name == "srm"
	for _, o := range p.ops {
		c.path(o, Delete, recursive)
	}
}

// copyMove: cp, mv, install, ln, rename.
func copyMove(c *invocation) {
	spec := optSpec{arg: "tS", long: []string{"target-directory", "suffix", "backup", "sparse", "reflink", "preserve", "no-preserve"}}
	if c.name == "install" {
		spec = optSpec{arg: "tSmogZ", long: []string{"target-directory", "suffix", "mode", "owner", "group", "strip-program"}}
	}
	p := parseOpts(c.args, spec)
	ops := p.ops
	if c.name == "rename" || c.name == "mmv" {
		// rename FROM TO FILES... or rename 's/a/b/' FILES: each file is
		// replaced by a name known only at run time.
		skip := 1
		if c.name == "rename" && len(ops) > 0 && !strings.HasPrefix(ops[0].text, "s") && !strings.HasPrefix(ops[0].text, "y") {
			skip = 2
		}
		if skip > len(ops) {
			skip = len(ops)
		}
		for _, o := range ops[skip:] {
			c.path(o, Delete, false)
			d := o
			d.text = path.Dir(o.text) + "/" + inputText
			d.pattern = escapeGlob(path.Dir(o.text)) + "/" + string(anyMark)
			d.dynamic, d.lit = true, false
			c.path(d, Create, false)
		}
		return
	}
	if c.name == "install" && p.has("d", "directory") {
		for _, o := range ops {
			c.path(o, Create, false)
		}
		return
	}
	var dest wordVal
	named := true // dest was given, and may be a directory
	if t, ok := p.val("t", "target-directory"); ok {
		dest = t
	} else if len(ops) >= 2 {
		dest, ops = ops[len(ops)-1], ops[:len(ops)-1]
	} else if len(ops) == 1 && (c.name == "ln" || c.name == "link") {
		dest, named = join(c.cwd(), path.Base(ops[0].text)), false
	} else {
		for _, o := range ops {
			c.path(o, Read, false)
		}
		return
	}
	switch c.name {
	case "mv":
		for _, o := range ops {
			c.path(o, Delete, true)
		}
		c.path(dest, Create, true)
	case "ln", "link":
		// Like cp, ln makes dest/name when dest is a directory.
		c.path(dest, Create, named)
	default: // cp, install
		rec := p.has("r", "R", "a", "recursive", "archive")
		for _, o := range ops {
			c.path(o, Read, rec)
		}
		c.path(dest, Create, true)
		if p.has("remove-destination") {
			c.path(dest, Delete, false)
		}
	}
}

// createOpts are the options of the commands create handles.
var createOpts = map[string]optSpec{
	"mkdir":     {arg: "mZ", long: []string{"mode", "context"}},
	"mkfifo":    {arg: "mZ", long: []string{"mode", "context"}},
	"mknod":     {arg: "mZ", long: []string{"mode", "context"}},
	"touch":     {arg: "rdt", long: []string{"reference", "date", "time"}},
	"truncate":  {arg: "sr", long: []string{"size", "reference"}},
	"fallocate": {arg: "lon", long: []string{"length", "offset"}},
	"tee":       {long: []string{"output-error"}},
}

// create: mkdir, touch, truncate, tee, dd, mktemp.
func create(c *invocation) {
	switch c.name {
	case "dd":
		for _, a := range c.args {
			k, _, ok := strings.Cut(a.text, "=")
			if !ok {
				continue
			}
			v := a
			v.text = a.text[len(k)+1:]
			v.pattern = strings.TrimPrefix(a.pattern, escapeGlob(k+"="))
			switch k {
			case "if":
				c.path(v, Read, false)
			case "of":
				c.path(v, Write, false)
			}
		}
		return
	case "mktemp":
		p := parseOpts(c.args, optSpec{arg: "p", long: []string{"tmpdir", "suffix"}})
		dir := literal("/tmp")
		if d, ok := p.get("p", "tmpdir"); ok && d != "" {
			dir = literal(d)
		}
		tmpl := "tmp.*"
		if len(p.ops) > 0 {
			tmpl = strings.ReplaceAll(p.ops[0].text, "XXX", "*")
			for strings.Contains(tmpl, "**") {
				tmpl = strings.ReplaceAll(tmpl, "**", "*")
			}
			if !p.has("t", "p", "tmpdir") {
				dir = c.cwd()
			}
		}
		v := join(dir, "")
		v.text += tmpl
		v.pattern += tmpl
		v.glob = true
		c.path(v, Create, p.has("d", "directory"))
		return
	}
	p := parseOpts(c.args, createOpts[c.name])
	acc := Write
	switch c.name {
	case "mkdir", "mkfifo", "mknod":
		acc = Create
	case "touch":
		if r, ok := p.val("r", "reference"); ok {
			c.path(r, Read, false)
		}
	case "truncate":
		if r, ok := p.val("r", "reference"); ok {
			c.path(r, Read, false)
		}
	}
	ops := p.ops
	if c.name == "mknod" && len(ops) > 1 {
		ops = ops[:1]
	}
	for _, o := range ops {
		c.path(o, acc, false)
	}
}

// chmod: chmod, chown, chgrp, chattr, setfacl, setfattr, chcon.
func chmod(c *invocation) {
	var ops []wordVal
	recursive, reference := false, false
	for i := 0; i < len(c.args); i++ {
		a := c.args[i]
		t := a.text
		switch {
		case t == "-R" || t == "--recursive":
			recursive = true
		case strings.HasPrefix(t, "--reference"):
			reference = true
			if t == "--reference" && i+1 < len(c.args) {
				i++
				c.path(c.args[i], Read, false)
			}
		case t == "--":
			ops = append(ops, c.args[i+1:]...)
			i = len(c.args)
		case strings.HasPrefix(t, "--"):
		case (c.name == "setfacl" || c.name == "setfattr") && (t == "-m" || t == "-x" || t == "-n" || t == "-v" || t == "-M" || t == "-X"):
			i++
		case len(t) > 1 && strings.HasPrefix(t, "-") && strings.Trim(t[1:], "RvcfhHLPV") == "":
			recursive = recursive || strings.Contains(t, "R")
		default:
			ops = append(ops, a)
		}
	}
	if !reference && c.name != "setfacl" && c.name != "setfattr" && len(ops) > 0 {
		ops = ops[1:] // the mode, owner or attributes
	}
	for _, o := range ops {
		c.path(o, Meta, recursive)
	}
}

// interpreter: sed, perl, python and other languages given a program.
func interpreter(c *invocation) {
	inPlace, program, progFile := false, false, false
	var ops []wordVal
	args := c.args
	for i := 0; i < len(args); i++ {
		t := args[i].text
		switch {
		case t == "--":
			ops = append(ops, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(t, "--"):
			name, _, hasVal := strings.Cut(t[2:], "=")
			switch name {
			case "in-place":
				inPlace = true
			case "expression":
				program = true
				if !hasVal {
					i++
				}
			case "file":
				progFile = true
				if !hasVal && i+1 < len(args) {
					i++
					c.path(args[i], Read, false)
				}
			}
		case strings.HasPrefix(t, "-") && len(t) > 1:
		cluster:
			for j := 1; j < len(t); j++ {
				switch t[j] {
				case 'i':
					if c.name == "sed" || c.name == "perl" || c.name == "ruby" {
						inPlace = true
						break cluster
					}
				case 'e', 'E':
					if c.name == "sed" || c.name == "perl" || c.name == "ruby" || c.name == "node" || c.name == "nodejs" {
						program = true
						if j == len(t)-1 {
							i++
						}
						break cluster
					}
				case 'c':
					if c.name != "sed" && c.name != "perl" {
						program = true
						if j == len(t)-1 {
							i++
						}
						break cluster
					}
				case 'm':
					if strings.HasPrefix(c.name, "python") {
						program = true
						if j == len(t)-1 {
							i++
						}
						break cluster
					}
				case 'f':
					if c.name == "sed" {
						progFile = true
						if j == len(t)-1 && i+1 < len(args) {
							i++
							c.path(args[i], Read, false)
						}
						break cluster
					}
				case 'l', 'I', 'M', '0', 'x', 'C', 'd', 'D', 'W', 'X':
					if c.name == "perl" {
						break cluster
					}
					if c.name == "sed" && t[j] == 'l' {
						if j == len(t)-1 {
							i++
						}
						break cluster
					}
				}
			}
		default:
			ops = append(ops, args[i])
		}
	}
	if !program && !progFile && len(ops) > 0 {
		if c.name != "sed" {
			c.path(ops[0], Read, false)
		}
		ops = ops[1:]
		program = true
	}
	acc := Read
	if inPlace {
		acc = Write
	}
	for _, o := range ops {
		if c.name != "sed" && c.name != "perl" && !inPlace {
			continue // arguments to the program, not files it reads
		}
		c.path(o, acc, false)
	}
	if c.name != "sed" && !(c.name == "perl" && (inPlace || len(ops) > 0 || strings.Contains(strings.Join(texts(args), " "), "-n") || strings.Contains(strings.Join(texts(args), " "), "-p"))) {
		if program || progFile {
			c.finding(WritesInside, "unknown-command", "%s runs a program whose effects nash does not analyse", c.name)
		}
	}
}

func texts(ws []wordVal) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = w.text
	}
	return out
}

// archiveExt is the suffix each compressor adds.
var archiveExt = map[string]string{
	"gzip": ".gz", "gunzip": ".gz", "pigz": ".gz", "bzip2": ".bz2", "bunzip2": ".bz2", "xz": ".xz", "unxz": ".xz",
	"lzma": ".lzma", "unlzma": ".lzma", "zstd": ".zst", "unzstd": ".zst", "lz4": ".lz4", "compress": ".Z", "uncompress": ".Z",
}

// archive: tar, zip, unzip and the compressors.
func archive(c *invocation) {
	switch c.name {
	case "tar":
		tarCmd(c)
	case "zip":
		p := parseOpts(c.args, optSpec{arg: "bntPZOxi", long: []string{"temp-path", "suffixes", "password", "compression-method", "output-file", "exclude", "include"}})
		if len(p.ops) == 0 {
			return
		}
		c.path(p.ops[0], Write, false)
		for _, o := range p.ops[1:] {
			c.path(o, Read, p.has("r", "recurse-paths"))
			if p.has("m", "move") {
				c.path(o, Delete, p.has("r", "recurse-paths"))
			}
		}
	case "unzip":
		p := parseOpts(c.args, optSpec{arg: "dPx"})
		if len(p.ops) == 0 {
			return
		}
		c.path(p.ops[0], Read, false)
		if p.has("l", "t", "v", "Z", "p", "z") {
			return
		}
		dir := c.cwd()
		if d, ok := p.val("d"); ok {
			dir = d
		}
		c.path(dir, Write, true)
	case "7z", "7za", "rar", "unrar":
		p := parseOpts(c.args, optSpec{})
		if len(p.ops) < 2 {
			return
		}
		cmd, arc := p.ops[0].text, p.ops[1]
		switch cmd {
		case "a", "u", "d":
			c.path(arc, Write, false)
			for _, o := range p.ops[2:] {
				c.path(o, Read, true)
			}
		case "x", "e":
			c.path(arc, Read, false)
			c.path(c.cwd(), Write, true)
		default:
			c.path(arc, Read, false)
		}
	case "cpio", "ar":
		c.finding(WritesInside, "unknown-command", "%s may create or extract files nash does not list", c.name)
	default:
		compressor(c)
	}
}

func compressor(c *invocation) {
	p := parseOpts(c.args, optSpec{arg: "SbTFCMoBp", long: []string{"suffix", "threads", "format", "check", "memlimit", "output", "block-size", "processes"}})
	ext := archiveExt[c.name]
	if s, ok := p.get("S", "suffix"); ok && s != "" && c.name != "zstd" {
		ext = s
	}
	decompress := strings.HasPrefix(c.name, "un") || c.name == "gunzip" || c.name == "bunzip2" || p.has("d", "decompress", "uncompress")
	if p.has("l", "t", "list", "test") {
		for _, o := range p.ops {
			c.path(o, Read, false)
		}
		return
	}
	toStdout := p.has("c", "stdout", "to-stdout")
	keep := p.has("k", "keep") || ((c.name == "zstd" || c.name == "unzstd" || c.name == "lz4") && !p.has("rm"))
	for _, o := range p.ops {
		if p.has("r", "recursive") {
			c.path(o, Write, true)
			continue
		}
		c.path(o, Read, false)
		if toStdout {
			continue
		}
		if !keep {
			c.path(o, Delete, false)
		}
		if out, ok := p.val("o", "output"); ok {
			c.path(out, Create, false)
			continue
		}
		if decompress {
			if strings.HasSuffix(o.text, ext) && o.text != ext {
				n := o
				n.text = strings.TrimSuffix(o.text, ext)
				n.pattern = strings.TrimSuffix(o.pattern, escapeGlob(ext))
				c.path(n, Create, false)
			} else if strings.HasSuffix(o.text, ".tgz") {
				n := o
				n.text = strings.TrimSuffix(o.text, ".tgz") + ".tar"
				n.pattern = strings.TrimSuffix(o.pattern, ".tgz") + ".tar"
				c.path(n, Create, false)
			}
			continue
		}
		c.path(withSuffix(o, ext), Create, false)
	}
}

// tarLongWithArg are tar's long options that take an argument.
var tarLongWithArg = map[string]bool{"file": true, "directory": true, "exclude": true, "files-from": true, "exclude-from": true, "use-compress-program": true, "transform": true, "owner": true, "group": true, "mode": true, "mtime": true, "newer": true, "after-date": true, "label": true, "blocking-factor": true, "format": true, "strip-components": true, "checkpoint-action": true, "index-file": true, "to-command": true}

// tarCmd: tar in its create, extract, list and append modes.
func tarCmd(c *invocation) {
	args := c.args
	mode := byte(0)
	var file, dir *wordVal
	var ops []wordVal
	removeFiles, toStdout := false, false
	takesArg := "fCbgHIKLNTVX"
	for i := 0; i < len(args); i++ {
		t := args[i].text
		first := i == 0 && !strings.HasPrefix(t, "-") && args[i].lit
		switch {
		case strings.HasPrefix(t, "--"):
			name, val, hasVal := strings.Cut(t[2:], "=")
			if tarLongWithArg[name] && !hasVal && i+1 < len(args) {
				i++
				val = args[i].text
			}
			v := literal(val)
			switch name {
			case "create":
				mode = 'c'
			case "extract", "get":
				mode = 'x'
			case "list":
				mode = 't'
			case "append", "update", "concatenate", "catenate":
				mode = 'r'
			case "delete":
				mode = 'd'
			case "file":
				file = &v
			case "directory":
				dir = &v
			case "files-from":
				c.path(v, Read, false)
			case "remove-files":
				removeFiles = true
			case "to-stdout":
				toStdout = true
			}
		case strings.HasPrefix(t, "-") || first:
			cluster := strings.TrimPrefix(t, "-")
			for j := 0; j < len(cluster); j++ {
				ch := cluster[j]
				switch ch {
				case 'O':
					toStdout = true
				case 'c', 'x', 't', 'r', 'u', 'A':
					mode = ch
					if ch == 'u' || ch == 'A' {
						mode = 'r'
					}
				}
				if strings.IndexByte(takesArg, ch) >= 0 {
					var v wordVal
					if !first && j < len(cluster)-1 {
						v = literal(cluster[j+1:])
						j = len(cluster)
					} else if i+1 < len(args) {
						i++
						v = args[i]
					}
					switch ch {
					case 'f':
						file = &v
					case 'C':
						dir = &v
					case 'T':
						c.path(v, Read, false)
					}
					if !first {
						break
					}
				}
			}
		default:
			ops = append(ops, args[i])
		}
	}
	base := c.cwd()
	if dir != nil {
		base = *dir
	}
	switch mode {
	case 'c':
		if file != nil && file.text != "-" {
			c.path(*file, Write, false)
		}
		for _, o := range ops {
			if dir != nil && !strings.HasPrefix(o.text, "/") {
				o = join(base, o.text)
			}
			c.path(o, Read, true)
			if removeFiles {
				c.path(o, Delete, true)
			}
		}
	case 'x':
		if file != nil {
			c.path(*file, Read, false)
		}
		if toStdout {
			return
		}
		if len(ops) > 0 {
			for _, o := range ops {
				c.path(join(base, o.text), Write, true)
			}
		} else {
			c.path(base, Write, true)
		}
	case 'r', 'd':
		if file != nil {
			c.path(*file, Write, false)
		}
		for _, o := range ops {
			if mode == 'r' {
				c.path(o, Read, true)
			}
		}
	default:
		if file != nil {
			c.path(*file, Read, false)
		}
	}
}

// isRemote reports whether an rsync or scp operand names another host.
func isRemote(s string) bool {
	if strings.HasPrefix(s, "rsync://") {
		return true
	}
	i := strings.IndexByte(s, ':')
	if i <= 0 {
		return false
	}
	return !strings.Contains(s[:i], "/")
}

// network: transfers, remote shells, mail and lookups.
func network(c *invocation) {
	switch c.name {
	case "rsync", "scp":
		spec := optSpec{arg: "eBMfTPiFoclJS", long: []string{"rsh", "exclude", "include", "filter", "files-from", "exclude-from", "include-from", "log-file", "backup-dir", "partial-dir", "temp-dir", "compare-dest", "link-dest", "copy-dest", "chmod", "chown", "port", "password-file", "timeout", "bwlimit", "max-size", "min-size", "suffix", "out-format", "rsync-path", "info", "debug"}}
		if c.name == "scp" {
			spec = optSpec{arg: "PiFoclJSD"}
		}
		p := parseOpts(c.args, spec)
		if len(p.ops) < 2 {
			for _, o := range p.ops {
				if isRemote(o.text) {
					c.finding(ReadOnly, "network", "%s contacts %s", c.name, Quote(o.text))
				}
			}
			return
		}
		srcs, dest := p.ops[:len(p.ops)-1], p.ops[len(p.ops)-1]
		dry := c.name == "rsync" && p.has("n", "dry-run")
		for _, s := range srcs {
			if isRemote(s.text) {
				c.finding(ReadOnly, "network", "%s downloads from %s", c.name, Quote(s.text))
				continue
			}
			c.path(s, Read, true)
			if p.has("remove-source-files") && !dry {
				c.path(s, Delete, true)
			}
		}
		if isRemote(dest.text) {
			c.finding(CannotUndo, "network", "%s sends files to %s, which the sandbox cannot undo", c.name, Quote(dest.text))
			return
		}
		if dry {
			return
		}
		c.path(dest, Create, true)
		for f := range p.flags {
			if strings.HasPrefix(f, "delete") {
				c.path(dest, Delete, true)
				break
			}
		}
	case "curl":
		curl(c)
	case "wget", "aria2c", "axel":
		wget(c)
	case "ssh":
		p := parseOpts(c.args, optSpec{arg: "bcDEeFIiJLlmOopQRSWwB", stop: true})
		if len(p.ops) == 0 {
			return
		}
		if len(p.ops) > 1 {
			c.finding(CannotUndo, "network", "ssh runs %s on %s, which the sandbox cannot undo", Quote(strings.Join(texts(p.ops[1:]), " ")), Quote(p.ops[0].text))
			return
		}
		c.finding(CannotUndo, "network", "ssh opens a session on %s, which the sandbox cannot undo", Quote(p.ops[0].text))
	case "ping", "ping6", "traceroute", "tracepath", "dig", "nslookup", "host", "whois", "mtr", "nmap":
		c.finding(ReadOnly, "network", "%s contacts other hosts", c.name)
	case "mail", "mailx", "sendmail", "mutt", "mpack", "ssmtp", "msmtp":
		c.finding(CannotUndo, "network", "%s sends mail, which the sandbox cannot undo", c.name)
		p := parseOpts(c.args, optSpec{arg: "sacbrAqSFf"})
		if a, ok := p.get("A", "a"); ok && a != "" && c.name == "mutt" {
			c.path(literal(a), Read, false)
		}
	default: // sftp, ftp, lftp, nc, telnet, socat, ssh-copy-id, http
		c.finding(CannotUndo, "network", "%s sends data over the network, which the sandbox cannot undo", c.name)
	}
}

func curl(c *invocation) {
	p := parseOpts(c.args, optSpec{arg: "oTdFXKuHAebcxmwrCzDEYyQtU", long: []string{"output", "upload-file", "data", "data-raw", "data-binary", "data-urlencode", "form", "request", "config", "user", "header", "user-agent", "referer", "cookie", "cookie-jar", "proxy", "max-time", "write-out", "range", "continue-at", "time-cond", "dump-header", "cert", "cacert", "key", "connect-timeout", "retry", "output-dir", "json", "url", "form-string", "limit-rate"}})
	send := p.has("d", "data", "data-raw", "data-binary", "data-urlencode", "F", "form", "form-string", "json", "T", "upload-file")
	if m, ok := p.get("X", "request"); ok && m != "GET" && m != "HEAD" {
		send = true
	}
	urls := p.ops
	if u, ok := p.get("url"); ok {
		urls = append(urls, literal(u))
	}
	where := "the network"
	if len(urls) > 0 {
		where = Quote(urls[0].text)
	}
	if send {
		c.finding(CannotUndo, "network", "curl sends data to %s, which the sandbox cannot undo", where)
	} else {
		c.finding(ReadOnly, "network", "curl downloads from %s", where)
	}
	if t, ok := p.val("T", "upload-file"); ok {
		c.path(t, Read, false)
	}
	if o, ok := p.val("o", "output"); ok {
		c.path(o, Write, false)
	}
	if o, ok := p.val("c", "cookie-jar"); ok {
		c.path(o, Write, false)
	}
	if o, ok := p.val("D", "dump-header"); ok {
		c.path(o, Write, false)
	}
	if p.has("O", "remote-name", "remote-name-all") {
		dir := c.cwd()
		if d, ok := p.get("output-dir"); ok {
			dir = literal(d)
		}
		for _, u := range urls {
			c.path(urlFile(dir, u, ""), Write, false)
		}
	}
}

// urlFile is the file a download of u lands in, in dir.
func urlFile(dir, u wordVal, fallback string) wordVal {
	name := ""
	if u.lit {
		s := u.text
		if i := strings.IndexAny(s, "?#"); i >= 0 {
			s = s[:i]
		}
		if i := strings.Index(s, "://"); i >= 0 {
			s = s[i+3:]
		}
		if i := strings.IndexByte(s, '/'); i >= 0 {
			name = path.Base(s[i:])
		}
		if name == "/" || name == "." {
			name = ""
		}
	}
	if name == "" {
		name = fallback
	}
	if name == "" {
		v := join(dir, "")
		v.text += inputText
		v.pattern += string(anyMark)
		v.dynamic, v.lit = true, false
		return v
	}
	return join(dir, name)
}

func wget(c *invocation) {
	p := parseOpts(c.args, optSpec{arg: "OoaPitTwUeBQlARDXIk", long: []string{"output-document", "output-file", "append-output", "directory-prefix", "input-file", "tries", "timeout", "wait", "user-agent", "execute", "base", "quota", "level", "accept", "reject", "domains", "exclude-directories", "include-directories", "header", "user", "password", "post-data", "post-file", "method", "body-data", "limit-rate", "referer", "load-cookies", "save-cookies"}})
	send := p.has("post-data", "post-file", "body-data", "body-file")
	if m, ok := p.get("method"); ok && m != "GET" && m != "HEAD" {
		send = true
	}
	where := "the network"
	if len(p.ops) > 0 {
		where = Quote(p.ops[0].text)
	}
	if send {
		c.finding(CannotUndo, "network", "%s sends data to %s, which the sandbox cannot undo", c.name, where)
	} else {
		c.finding(ReadOnly, "network", "%s downloads from %s", c.name, where)
	}
	for _, k := range []string{"i", "input-file", "post-file", "load-cookies"} {
		if v, ok := p.get(k); ok {
			c.path(literal(v), Read, false)
		}
	}
	for _, k := range []string{"o", "output-file", "a", "append-output", "save-cookies"} {
		if v, ok := p.get(k); ok {
			c.path(literal(v), Write, false)
		}
	}
	dir := c.cwd()
	if d, ok := p.get("P", "directory-prefix"); ok {
		dir = literal(d)
	}
	if o, ok := p.val("O", "output-document"); ok {
		c.path(o, Write, false)
		return
	}
	if p.has("r", "m", "recursive", "mirror") {
		c.path(dir, Write, true)
		return
	}
	for _, u := range p.ops {
		c.path(urlFile(dir, u, "index.html"), Write, false)
	}
}

// git: version control commands that change the working tree or send.
func git(c *invocation) {
	args := c.args
	repo := c.cwd()
	for len(args) > 0 {
		t := args[0].text
		switch {
		case t == "-C" && len(args) > 1:
			repo = args[1]
			args = args[2:]
			continue
		case t == "-c" && len(args) > 1:
			args = args[2:]
			continue
		case strings.HasPrefix(t, "--work-tree="):
			repo = literal(strings.TrimPrefix(t, "--work-tree="))
		case strings.HasPrefix(t, "-"):
		default:
			goto sub
		}
		args = args[1:]
	}
	return
sub:
	sub, rest := args[0].text, args[1:]
	p := parseOpts(rest, optSpec{arg: "emuoCcbBsSpU", long: []string{"exclude", "message", "branch", "origin", "depth", "source", "reference", "upload-pack", "template", "separate-git-dir", "config", "jobs", "filter"}})
	gitDir := join(repo, ".git")
	after := func() []wordVal {
		if p.dash >= 0 {
			return p.ops[p.dash:]
		}
		return nil
	}
	switch sub {
	case "clone":
		if len(p.ops) == 0 {
			return
		}
		c.finding(ReadOnly, "network", "git clone downloads %s", Quote(p.ops[0].text))
		var dest wordVal
		if len(p.ops) > 1 {
			dest = p.ops[1]
		} else {
			name := strings.TrimSuffix(path.Base(strings.TrimSuffix(p.ops[0].text, "/")), ".git")
			if i := strings.LastIndexByte(name, ':'); i >= 0 {
				name = name[i+1:]
			}
			dest = join(c.cwd(), name)
		}
		c.path(dest, Create, true)
	case "fetch", "remote", "submodule", "ls-remote":
		c.finding(ReadOnly, "network", "git %s contacts a remote repository", sub)
		c.path(gitDir, Write, true)
	case "pull":
		c.finding(ReadOnly, "network", "git pull downloads from a remote repository")
		c.path(repo, Write, true)
	case "push":
		c.finding(CannotUndo, "network", "git push sends commits to a remote repository, which the sandbox cannot undo")
	case "send-email":
		c.finding(CannotUndo, "network", "git send-email sends mail, which the sandbox cannot undo")
	case "clean":
		if p.has("n", "dry-run") {
			c.path(repo, Read, true)
			return
		}
		targets := p.ops
		if len(targets) == 0 {
			targets = []wordVal{repo}
		}
		for _, t := range targets {
			c.path(t, Delete, true)
		}
	case "checkout", "restore", "switch":
		paths := after()
		if sub == "restore" && len(paths) == 0 {
			paths = p.ops
		}
		if len(paths) == 0 {
			c.path(repo, Write, true)
			c.path(repo, Delete, true)
			return
		}
		for _, t := range paths {
			c.path(t, Write, true)
		}
	case "reset":
		c.path(gitDir, Write, true)
		if p.has("hard", "merge", "keep") {
			c.path(repo, Write, true)
			c.path(repo, Delete, true)
		}
	case "rm":
		if !p.has("cached") && !p.has("n", "dry-run") {
			for _, t := range p.ops {
				c.path(t, Delete, p.has("r"))
			}
		}
		c.path(gitDir, Write, true)
	case "mv":
		if len(p.ops) >= 2 {
			for _, t := range p.ops[:len(p.ops)-1] {
				c.path(t, Delete, true)
			}
			c.path(p.ops[len(p.ops)-1], Create, true)
		}
		c.path(gitDir, Write, true)
	case "init":
		d := repo
		if len(p.ops) > 0 {
			d = p.ops[0]
		}
		c.path(join(d, ".git"), Create, true)
	case "merge", "rebase", "stash", "apply", "am", "cherry-pick", "revert", "bisect":
		c.path(gitDir, Write, true)
		c.path(repo, Write, true)
	case "status", "log", "diff", "show", "blame", "grep", "ls-files", "rev-parse", "shortlog", "describe",
		"rev-list", "cat-file", "ls-tree", "whatchanged", "reflog", "help", "version", "--version", "count-objects":
		c.path(repo, Read, true)
	default: // add, commit, branch, tag, config, gc, notes, ...
		c.path(gitDir, Write, true)
	}
}

// writers: commands that write files named in their arguments.
func writers(c *invocation) {
	switch c.name {
	case "patch":
		p := parseOpts(c.args, optSpec{arg: "pioBDdFrVYzgx", long: []string{"strip", "input", "output", "directory", "reject-file", "backup-if-mismatch", "prefix", "suffix", "fuzz", "quoting-style"}})
		if i, ok := p.val("i", "input"); ok {
			c.path(i, Read, false)
		}
		if p.has("dry-run", "C", "check") {
			return
		}
		if o, ok := p.val("o", "output"); ok {
			c.path(o, Write, false)
			return
		}
		if len(p.ops) > 0 {
			c.path(p.ops[0], Write, false)
			if len(p.ops) > 1 {
				c.path(p.ops[1], Read, false)
			}
			return
		}
		dir := c.cwd()
		if d, ok := p.val("d", "directory"); ok {
			dir = d
		}
		c.path(dir, Write, true)
		c.path(dir, Delete, true)
	case "split", "csplit":
		p := parseOpts(c.args, optSpec{arg: "lbCnatfk", long: []string{"lines", "bytes", "line-bytes", "number", "suffix-length", "additional-suffix", "separator", "prefix", "filter", "digits"}})
		ops := p.ops
		prefix := "x"
		if c.name == "csplit" {
			prefix = "xx"
			if f, ok := p.get("f", "prefix"); ok {
				prefix = f
			}
			if len(ops) > 0 {
				c.path(ops[0], Read, false)
			}
		} else {
			if len(ops) > 0 && ops[0].text != "-" {
				c.path(ops[0], Read, false)
			}
			if len(ops) > 1 {
				prefix = ops[1].text
			}
		}
		v := literal(prefix)
		v.text += "*"
		v.pattern += "*"
		v.glob = true
		c.path(v, Create, false)
	case "sort":
		p := parseOpts(c.args, optSpec{arg: "oktST", long: []string{"output", "key", "field-separator", "buffer-size", "temporary-directory", "parallel", "files0-from"}})
		for _, o := range p.ops {
			c.path(o, Read, false)
		}
		if o, ok := p.val("o", "output"); ok {
			c.path(o, Write, false)
		}
	case "uniq":
		p := parseOpts(c.args, optSpec{arg: "fsw", long: []string{"skip-fields", "skip-chars", "check-chars"}})
		if len(p.ops) > 0 {
			c.path(p.ops[0], Read, false)
		}
		if len(p.ops) > 1 {
			c.path(p.ops[1], Write, false)
		}
	case "iconv":
		p := parseOpts(c.args, optSpec{arg: "fto", long: []string{"from-code", "to-code", "output"}})
		for _, o := range p.ops {
			c.path(o, Read, false)
		}
		if o, ok := p.val("o", "output"); ok {
			c.path(o, Write, false)
		}
	case "gcc", "cc", "g++", "clang", "clang++":
		p := parseOpts(c.args, optSpec{arg: "oIlLDUx"})
		for _, o := range p.ops {
			c.path(o, Read, false)
		}
		if o, ok := p.val("o"); ok {
			c.path(o, Write, false)
		} else if p.has("c") {
			for _, o := range p.ops {
				if ext := path.Ext(o.text); ext != "" {
					c.path(literal(strings.TrimSuffix(o.text, ext)+".o"), Write, false)
				}
			}
		} else {
			c.path(join(c.cwd(), "a.out"), Write, false)
		}
	case "convert", "ffmpeg":
		p := parseOpts(c.args, optSpec{arg: "i"})
		if c.name == "ffmpeg" {
			if in, ok := p.val("i"); ok {
				c.path(in, Read, false)
			}
		}
		if len(p.ops) > 0 {
			for _, o := range p.ops[:len(p.ops)-1] {
				if c.name == "convert" {
					c.path(o, Read, false)
				}
			}
			c.path(p.ops[len(p.ops)-1], Write, false)
		}
	default: // editors, dos2unix: change the files named
		p := parseOpts(c.args, optSpec{arg: "cnSu"})
		for _, o := range p.ops {
			if strings.HasPrefix(o.text, "+") {
				continue
			}
			c.path(o, Write, false)
		}
	}
}

// readOnlySubcommands are subcommands of irreversible commands that only
// look.
var readOnlySubcommands = map[string]bool{
	"status": true, "show": true, "list-units": true, "list-unit-files": true, "is-active": true, "is-enabled": true,
	"is-failed": true, "cat": true, "list-timers": true, "ps": true, "images": true, "inspect": true, "logs": true,
	"version": true, "info": true, "top": true, "stats": true, "get": true, "describe": true, "list": true, "-l": true,
	"--version": true, "help": true, "--help": true, "search": true, "history": true, "diff": true, "port": true,
	"addr": true, "a": true, "route": true, "r": true, "link": true, "l": true, "neigh": true, "n": true,
	"-p": true, "-a": true, "--list": true, "-L": true, "-n": true, "list-dependencies": true, "explain": true,
	"config": true, "events": true,
}

// irreversibleWhat says what each irreversible command does.
var irreversibleWhat = map[string]string{
	"kill": "sends a signal to processes", "killall": "sends a signal to processes", "pkill": "sends a signal to processes",
	"skill": "sends a signal to processes", "xkill": "kills a window's client", "renice": "changes process priorities",
	"systemctl": "changes system services", "service": "changes system services", "shutdown": "shuts the machine down",
	"reboot": "reboots the machine", "halt": "halts the machine", "poweroff": "powers the machine off",
	"init": "changes the run level", "telinit": "changes the run level", "crontab": "changes scheduled jobs",
	"at": "schedules a job", "batch": "schedules a job", "atrm": "removes scheduled jobs", "mount": "mounts a file system",
	"umount": "unmounts a file system", "wall": "sends a message to every terminal", "write": "sends a message to a user",
	"logger": "writes to the system log", "notify-send": "shows a desktop notification", "date": "sets the system clock",
	"hwclock": "sets the hardware clock", "xdg-open": "opens a file in another program", "open": "opens a file in another program",
	"ip": "changes network settings", "docker": "changes containers or images", "podman": "changes containers or images",
	"kubectl": "changes a cluster", "sysctl": "changes kernel settings",
}

// irreversible: commands whose effects are outside the file system.
func irreversible(c *invocation) {
	sub := ""
	for _, a := range c.args {
		if !strings.HasPrefix(a.text, "-") || c.name == "crontab" || c.name == "sysctl" || c.name == "iptables" || c.name == "date" {
			sub = a.text
			break
		}
	}
	if c.name == "mount" || c.name == "ip" || c.name == "date" || c.name == "sysctl" || c.name == "crontab" {
		if len(c.args) == 0 {
			return // lists mounts, shows the date, edits nothing
		}
	}
	if c.name == "date" {
		if sub != "-s" && sub != "--set" && !strings.HasPrefix(sub, "--set=") {
			return
		}
	}
	if c.name == "sysctl" && sub != "-w" && sub != "--write" && sub != "-p" {
		if !strings.Contains(strings.Join(texts(c.args), " "), "=") {
			return
		}
	}
	if c.name == "iptables" && (sub == "-L" || sub == "-S" || sub == "--list") {
		return
	}
	if c.name == "crontab" && sub != "-l" && sub != "-r" && sub != "-e" {
		if len(c.args) > 0 {
			c.path(c.args[len(c.args)-1], Read, false)
		}
	}
	if readOnlySubcommands[sub] && c.name != "kill" && c.name != "crontab" || (c.name == "crontab" && sub == "-l") {
		return
	}
	what := irreversibleWhat[c.name]
	if what == "" {
		what = "changes system state outside the file system"
	}
	c.finding(CannotUndo, "irreversible", "%s %s, which the sandbox cannot undo", c.name, what)
}

// lockFiles are the files JavaScript package managers rewrite on install.
var lockFiles = map[string]string{"npm": "package-lock.json", "yarn": "yarn.lock", "pnpm": "pnpm-lock.yaml"}

// packages: package managers.
func packages(c *invocation) {
	sub := ""
	for _, a := range c.args {
		if !strings.HasPrefix(a.text, "-") {
			sub = a.text
			break
		}
		if c.name == "pacman" || c.name == "dpkg" || c.name == "rpm" {
			sub = a.text
			break
		}
	}
	switch sub {
	case "list", "show", "search", "info", "policy", "madison", "freeze", "-l", "-q", "-Q", "-Ss", "-Qi", "-Ql", "-L",
		"-S", "-p", "-qa", "-qi", "-ql", "-qf", "--search", "--status", "--listfiles", "--get-selections", "-W",
		"-s", "--version", "version", "help", "outdated", "ls", "view", "env", "doctor", "depends", "rdepends", "query", "check":
		if sub == "search" || sub == "show" || sub == "info" || sub == "-Ss" || sub == "view" || sub == "outdated" {
			c.finding(ReadOnly, "network", "%s %s may contact a package index", c.name, sub)
		}
		return
	case "":
		if c.name != "npm" && c.name != "yarn" && c.name != "pnpm" {
			return
		}
	}
	switch c.name {
	case "npm", "yarn", "pnpm":
		c.finding(ReadOnly, "network", "%s %s downloads packages", c.name, sub)
		if sub == "run" || sub == "start" || sub == "test" || sub == "exec" || sub == "run-script" {
			c.finding(WritesInside, "unknown-command", "%s %s runs scripts nash does not analyse", c.name, sub)
			return
		}
		if contains(texts(c.args), "-g") || contains(texts(c.args), "--global") {
			c.finding(WritesOutside, "write", "%s installs packages system-wide", c.name)
			return
		}
		c.path(join(c.cwd(), "node_modules"), Write, true)
		c.path(join(c.cwd(), lockFiles[c.name]), Write, false)
		return
	case "go", "cargo":
		if sub == "build" || sub == "test" || sub == "run" || sub == "fmt" || sub == "vet" {
			c.finding(WritesInside, "unknown-command", "%s %s builds code and may run it", c.name, sub)
			return
		}
	}
	c.finding(ReadOnly, "network", "%s %s downloads packages", c.name, sub)
	c.finding(WritesOutside, "write", "%s %s changes installed packages outside the working directory", c.name, sub)
}

// accounts: user and group management.
func accounts(c *invocation) {
	for _, f := range []string{"/etc/passwd", "/etc/shadow", "/etc/group"} {
		c.path(literal(f), Write, false)
	}
}

// setVars: builtins that give variables values only known at run time.
func setVars(c *invocation) {
	p := parseOpts(c.args, optSpec{arg: "adinNptuCc"})
	ops := p.ops
	if c.name == "getopts" && len(ops) > 1 {
		ops = ops[1:2]
	}
	for _, o := range ops {
		delete(c.a.vars, o.text)
	}
	if c.name == "read" && len(ops) == 1 && ops[0].lit && len(c.a.readIn) > 0 && !p.has("a", "u") {
		// One whole line of a while loop's piped input (see pipeline).
		c.a.vars[ops[0].text] = c.a.readIn
		return
	}
	if c.name == "read" || c.name == "mapfile" || c.name == "readarray" {
		name := "REPLY"
		if c.name != "read" {
			name = "MAPFILE"
		}
		delete(c.a.vars, name)
	}
}
