package effects

import (
	"fmt"
	"strings"
)

// newCommandTable builds the command registry's table: one entry per
// command nash knows
// (see CommandSpec). Options and operands are written in a short notation,
// read by opts and operands:
//
//	opts("-o,--output=write -r,-R,--recursive:recursive -e,--regexp=>PATTERN -i=?:in-place")
//
// is an option spelled -o or --output whose value is a file written; a flag
// -r, -R or --recursive that turns SetRecursive on; an option -e whose value
// (a plain value: nothing after "=") stands for the PATTERN operand; and
// an option -i whose value is optional and only attached.
//
//	operands("PATTERN=value [FILE...=read]")
//
// is a required operand PATTERN with RoleValue, then any number of files
// read. Entries are grouped by what they do; within a group, the order is
// the old one.
func newCommandTable() []CommandSpec {
	return []CommandSpec{
		// Commands that touch no file.
		quiet("echo"), quiet("printf"), quiet("df"), quiet("pwd"), quiet("cal"), quiet("whoami"), quiet("id"),
		quiet("groups"), quiet("uname"), quiet("hostname"), quiet("uptime"), quiet("free"), looks(quiet("ps")),
		{Name: "top", Class: ClassQuiet, Also: []AlsoSpec{{"~/.config/procps", RoleCreate}}, Host: HostLooks},
		{Name: "htop", Class: ClassQuiet, Also: []AlsoSpec{{"~/.config/htop", RoleCreate}}, Host: HostLooks}, looks(quiet("pgrep")), looks(quiet("pidof")), looks(quiet("lsof")), looks(quiet("netstat")), looks(quiet("ss")), quiet("printenv"),
		quiet("history"), quiet("true"), quiet("false"), quiet("test"), quiet("["), quiet("sleep"), quiet("seq"),
		quiet("yes"), quiet("expr"), quiet("bc"), quiet("dc"), quiet("wait"), quiet("jobs"), quiet("fg"), quiet("bg"),
		quiet("set"), quiet("shift"), quiet("alias"), quiet("unalias"), quiet("hash"), quiet("ulimit"), quiet("umask"),
		quiet("getconf"), quiet("locale"), quiet("tty"), quiet("stty"), quiet("tput"), quiet("clear"), quiet("reset"),
		quiet("man"), quiet("info"), quiet("help"), quiet("whatis"), quiet("apropos"), quiet("lsblk"), quiet("blkid"),
		quiet("findmnt"), quiet("lscpu"), quiet("lsusb"), quiet("lspci"), quiet("dmesg"), quiet("journalctl"),
		quiet("last"), looks(quiet("w")), quiet("who"), quiet("users"), quiet("finger"), quiet("vmstat"), quiet("iostat"),
		quiet("mpstat"), quiet("sar"), quiet("nproc"), quiet("arch"), quiet("getent"), quiet("locate"), quiet("dirs"),
		quiet("let"), quiet(":"), quiet("return"), quiet("exit"), quiet("break"), quiet("continue"), quiet("trap"),
		quiet("shopt"), quiet("which"), quiet("whereis"), quiet("type"), quiet("local"), quiet("declare"),
		quiet("typeset"), quiet("export"), quiet("readonly"), quiet("times"), quiet("caller"), quiet("compgen"),
		quiet("complete"), quiet("disown"), quiet("logout"), quiet("enable"), quiet("bind"), quiet("fc"),
		quiet("suspend"), quiet("numfmt"), quiet("factor"), quiet("cowsay"), quiet("lsmod"), quiet("ifconfig"),
		quiet("iwconfig"), quiet("route"), quiet("arp"), quiet("xclip"), quiet("xsel"), quiet("pbcopy"),
		quiet("pbpaste"), quiet("lsb_release"), quiet("hostid"), quiet("logname"), quiet("sensors"), looks(quiet("fuser")),
		looks(quiet("pstree")), quiet("dircolors"),
		{Name: "tmux", Class: ClassRuns, analyze: session, Also: []AlsoSpec{{"/tmp/tmux-*", RoleTarget}},
			Operands: operands("[SUBCOMMAND=subcommand] [ARG...=value]"),
			Looks: []string{"ls", "list-sessions", "list-windows", "list-panes", "list-clients", "list-keys",
				"list-commands", "has-session", "has", "display-message", "display", "show-options", "show", "info", "-V"}},
		{Name: "screen", Class: ClassRuns, analyze: session, Also: []AlsoSpec{{"/run/screen", RoleTarget}},
			Operands: operands("[ARG...=value]"), Looks: []string{"-ls", "-list", "-v", "-version"}}, quiet("chage"), quiet("quota"), quiet("vdir"), quiet("dir"),

		// Commands that read their operands and change nothing.
		reads("cat", ""), reads("tac", "-s,--separator=", "[FILE...=read]", filter),
		reads("less", ""), reads("more", ""), reads("nl", "-b= -d= -f= -h= -i= -l= -n= -s= -v= -w="),
		reads("head", "-n,--lines= -c,--bytes=", "[FILE...=read]", filter),
		reads("tail", "-n,--lines= -c,--bytes= -s,--sleep-interval= --pid=", "[FILE...=read]", filter),
		reads("wc", ""), reads("file", "-e= -m= -f,--files-from=read -F= -P="), reads("stat", "-c,--format= --printf="),
		reads("du", "-B,--block-size= -d,--max-depth= -t,--threshold= -X,--exclude-from=read --exclude=", "[DIR...=read-tree]"),
		reads("ls", "-I,--ignore= -T,--tabsize= -w,--width= --hide= --sort= --format= --time-style= --color= --block-size="),
		reads("tree", "-L= -I= -P= -o=write --charset=", "[DIR...=read-tree]"),
		reads("diff", "-C= -U= -F= -I,--ignore-matching-lines= -x,--exclude= -X,--exclude-from=read --label= -r,--recursive:recursive"),
		reads("cmp", "-i= -n= -I="), reads("comm", ""), reads("md5sum", ""), reads("sha1sum", ""), reads("sha256sum", ""),
		reads("sha512sum", ""), reads("sha224sum", ""), reads("sha384sum", ""), reads("b2sum", ""), reads("cksum", ""),
		reads("sum", ""), reads("shasum", "-a="), reads("od", "-A= -j= -N= -S= -s= -t= -w="),
		reads("xxd", "-c= -g= -l= -o= -s="), reads("hexdump", "-e= -n= -f=read -s="), reads("strings", "-n= -t= -T="),
		reads("fold", "-w,--width="), reads("fmt", "-w,--width= -p= -g="), reads("column", "-c= -s= -t= -o= -N= -H= -W= -E="),
		reads("paste", "-d,--delimiters="), reads("join", "-t= -j= -o= -a= -e= -1= -2="), reads("rev", ""),
		reads("expand", "-t,--tabs="), reads("unexpand", "-t,--tabs="), reads("base64", "-w,--wrap="),
		reads("readlink", ""), reads("realpath", "--relative-to= --relative-base="),
		reads("cut", "-b,--bytes= -c,--characters= -d,--delimiter= -f,--fields= --output-delimiter="),
		reads("tr", "", "[SET...=value]"),
		reads("grep", grepOpts+" --include= --exclude= --exclude-dir= --label= --color=? --colour=?", "PATTERN=value [FILE...=read]", filter),
		reads("egrep", grepOpts, "PATTERN=value [FILE...=read]", filter),
		reads("fgrep", grepOpts, "PATTERN=value [FILE...=read]", filter),
		reads("zgrep", "-e,--regexp=>PATTERN -f,--file=read>PATTERN -m= -A= -B= -C=", "PATTERN=value [FILE...=read]"),
		reads("rg", "-e,--regexp=>PATTERN -f,--file=read>PATTERN -m= -A= -B= -C= -g,--glob= -t,--type= -T= -j=", "PATTERN=value [PATH...=read-tree]"),
		reads("ag", "-A= -B= -C= -G= -m=", "PATTERN=value [PATH...=read-tree]"),
		reads("awk", "-f,--file=read>PROGRAM -v= -F=", "PROGRAM=program [FILE...=read]"),
		reads("gawk", "-f,--file=read>PROGRAM -v= -F= -e=program>PROGRAM", "PROGRAM=program [FILE...=read]"),
		reads("mawk", "-f=read>PROGRAM -v= -F=", "PROGRAM=program [FILE...=read]"),
		reads("nawk", "-f=read>PROGRAM -v= -F=", "PROGRAM=program [FILE...=read]"),
		reads("jq", "-f,--from-file=read>FILTER --arg= --argjson= --slurpfile= --rawfile= --indent=", "FILTER=program [FILE...=read]"),
		reads("zcat", ""), reads("bzcat", ""), reads("xzcat", ""), reads("zstdcat", ""), reads("zless", ""),
		reads("zmore", ""), reads("lsattr", ""), reads("ldd", ""), reads("nm", ""), reads("objdump", ""),
		reads("readelf", ""), reads("look", "", "WORD=value [FILE=read]"), reads("md5", ""),
		reads("basename", "", "[NAME...=value]"), reads("dirname", "", "[NAME...=value]"), reads("bat", ""),
		reads("pv", "-L= -N= -s= -i= -B= -w= -H= -d="), reads("pr", "-h= -l= -w= -o= -N="), reads("tsort", ""),
		reads("ptx", ""), reads("shuf", "-n,--head-count= -i,--input-range= -o,--output=write", "[FILE...=read]", filter),

		// Shell builtins that change the shell's own state.
		{Name: "cd", Class: ClassShell, Operands: operands("[DIR=dir]"), analyze: cd},
		{Name: "pushd", Class: ClassShell, Operands: operands("[DIR=dir]"), analyze: cd},
		{Name: "popd", Class: ClassShell, analyze: cd},
		{Name: "read", Class: ClassShell, Options: opts(readOpts), Operands: operands("[NAME...=value]"), analyze: setVars},
		{Name: "mapfile", Class: ClassShell, Options: opts(readOpts), Operands: operands("[ARRAY=value]"), analyze: setVars},
		{Name: "readarray", Class: ClassShell, Options: opts(readOpts), Operands: operands("[ARRAY=value]"), analyze: setVars},
		{Name: "unset", Class: ClassShell, Operands: operands("[NAME...=value]"), analyze: setVars},
		{Name: "getopts", Class: ClassShell, Operands: operands("OPTSTRING=value NAME=value [ARG...=value]"), analyze: setVars},

		// Commands that run a command given as arguments.
		{Name: "sudo", Class: ClassRuns, OptionsFirst: true, analyze: privileged,
			Options:  opts(sudoOpts),
			Operands: operands("[COMMAND=command]")},
		{Name: "sudoedit", Class: ClassWrites, analyze: privileged, Options: opts(sudoOpts), Operands: operands("FILE...=write")},
		{Name: "doas", Class: ClassRuns, OptionsFirst: true, analyze: privileged,
			Options: opts("-u=value -C=read -s:login-shell"), Operands: operands("[COMMAND=command]")},
		{Name: "pkexec", Class: ClassRuns, OptionsFirst: true, analyze: privileged,
			Options: opts("--user="), Operands: operands("[COMMAND=command]")},
		{Name: "su", Class: ClassRuns, analyze: privileged, Options: opts(suOpts), Operands: operands("[USER=value]")},
		{Name: "runuser", Class: ClassRuns, analyze: privileged, Options: opts(suOpts), Operands: operands("[USER=value]")},
		runs("env", "-u,--unset= -C,--chdir=dir -S,--split-string=script", "[ASSIGNMENT...=value] [COMMAND=command]"),
		runs("nice", "-n,--adjustment=", "[COMMAND=command]"),
		runs("nohup", "", "COMMAND=command"),
		runs("setsid", "", "COMMAND=command"),
		runs("stdbuf", "-i,--input= -o,--output= -e,--error=", "COMMAND=command"),
		runs("ionice", "-c,--class= -n,--classdata= -p,--pid=", "[COMMAND=command]"),
		runs("timeout", "-s,--signal= -k,--kill-after=", "DURATION=value COMMAND=command"),
		runs("time", "-f,--format= -o,--output=write", "[COMMAND=command]"),
		runs("exec", "-a=", "[COMMAND=command]"),
		runs("command", "-v:query -V:query", "COMMAND=command"),
		runs("builtin", "", "COMMAND=command"),
		runs("chroot", "--userspec= --groups=", "NEWROOT=value [COMMAND=command]"),
		runs("taskset", "", "MASK=value COMMAND=command"),
		runs("chrt", "-T=", "PRIORITY=value COMMAND=command"),
		runs("flock", "-w,--timeout= -E,--conflict-exit-code= -c,--command=script", "FILE=write [COMMAND=command]"),
		runs("unbuffer", "", "COMMAND=command"),
		runs("strace", straceOpts, "[COMMAND=command]"),
		runs("ltrace", straceOpts, "[COMMAND=command]"),
		runs("torsocks", "-f=read", "COMMAND=command"),
		runs("proxychains", "-f=read", "COMMAND=command"),
		runs("proxychains4", "-f=read", "COMMAND=command"),
		runs("sshpass", "-p= -f=read -d= -e=", "COMMAND=command"),
		runs("xvfb-run", "-n= -s= -f=write -e=write", "COMMAND=command"),
		runs("caffeinate", "", "[COMMAND=command]"),
		runs("catchsegv", "", "COMMAND=command"),
		runs("fakeroot", "", "[COMMAND=command]"),
		runs("nocache", "", "COMMAND=command"),
		runs("cpulimit", "", "[COMMAND=command]"),
		runs("trickle", "", "COMMAND=command"),
		{Name: "xargs", Class: ClassRuns, OptionsFirst: true, analyze: xargs,
			Options: opts("-a,--arg-file=read -d,--delimiter= -E,--eof= -e=? -I,--replace= -i=? -L,--max-lines= -l=? " +
				"-n,--max-args= -P,--max-procs= -s,--max-chars= --process-slot-var="),
			Operands: operands("[COMMAND=command]")},
		{Name: "parallel", Class: ClassRuns, OptionsFirst: true, analyze: xargs,
			Options:  opts("-a,--arg-file=read -j,--jobs= -J= -S,--sshlogin= -n= --joblog=write --results=write --delay="),
			Operands: operands("[COMMAND=command]")},
		// find's expression (tests, -delete, -exec ... ;) follows its starting
		// points; its analysis reads it.
		{Name: "find", Class: ClassRuns, analyze: find, Operands: operands("[START...=read-tree]")},
		shell("sh"), shell("bash"), shell("dash"), shell("zsh"), shell("ksh"), shell("mksh"), shell("fish"),
		shell("csh"), shell("tcsh"),
		{Name: "busybox", Class: ClassRuns, analyze: shellCmd, Operands: operands("COMMAND=command")},
		{Name: "eval", Class: ClassRuns, analyze: evalCmd, Operands: operands("[ARG...=script]")},
		{Name: "source", Class: ClassRuns, analyze: source, Operands: operands("FILE=read [ARG...=value]")},
		{Name: ".", Class: ClassRuns, analyze: source, Operands: operands("FILE=read [ARG...=value]")},
		{Name: "watch", Class: ClassRuns, OptionsFirst: true, analyze: watch,
			Options: opts("-n,--interval= -d,--differences=?"), Operands: operands("COMMAND=command")},

		// Commands that remove files.
		{Name: "rm", Class: ClassDeletes, analyze: remove,
			Options: opts("-r,-R,--recursive:recursive"), Operands: operands("FILE...=delete")},
		{Name: "rmdir", Class: ClassDeletes, analyze: remove, Options: opts("-p,--parents"), Operands: operands("DIR...=delete")},
		{Name: "unlink", Class: ClassDeletes, analyze: remove, Operands: operands("FILE=delete")},
		{Name: "shred", Class: ClassDeletes, analyze: remove,
			Options:  opts("-n,--iterations= -s,--size= --random-source=read -u,--remove=?:remove"),
			Operands: operands("FILE...=write")},
		{Name: "srm", Class: ClassDeletes, analyze: remove, Operands: operands("FILE...=delete-tree")},
		{Name: "trash", Class: ClassDeletes, analyze: remove, Operands: operands("FILE...=delete-tree")},
		{Name: "trash-put", Class: ClassDeletes, analyze: remove, Operands: operands("FILE...=delete-tree")},
		{Name: "gio", Class: ClassDeletes, analyze: remove, Operands: operands("SUBCOMMAND=subcommand [FILE...=delete-tree]"),
			Looks: []string{"info", "list", "cat", "mime", "monitor", "tree", "version", "help"}},

		// Commands that copy, move and link.
		{Name: "mv", Class: ClassWrites, analyze: copyMove,
			Options:  opts("-t,--target-directory=target>DEST -S,--suffix= --backup=?"),
			Operands: operands("SOURCE...=move DEST=target")},
		{Name: "cp", Class: ClassWrites, analyze: copyMove,
			Options: opts("-t,--target-directory=target>DEST -S,--suffix= --backup=? --sparse= --reflink=? --preserve=? " +
				"--no-preserve= -r,-R,-a,--recursive,--archive:recursive --remove-destination"),
			Operands: operands("SOURCE...=read DEST=target")},
		{Name: "install", Class: ClassWrites, analyze: copyMove,
			Options: opts("-t,--target-directory=target>DEST -S,--suffix= -m,--mode= -o,--owner= -g,--group= -Z=? " +
				"--strip-program= -d,--directory:directory"),
			Operands: operands("SOURCE...=read DEST=target")},
		{Name: "ln", Class: ClassWrites, analyze: copyMove,
			Options:  opts("-t,--target-directory=target>LINK -S,--suffix="),
			Operands: operands("TARGET...=value [LINK=target]")},
		{Name: "link", Class: ClassWrites, analyze: copyMove, Operands: operands("FILE=value LINK=target")},
		{Name: "rename", Class: ClassWrites, analyze: copyMove, Operands: operands("EXPRESSION=program FILE...=move")},
		{Name: "mmv", Class: ClassWrites, analyze: copyMove, Operands: operands("FROM=value TO=value")},

		// Commands that create files and directories.
		{Name: "mkdir", Class: ClassWrites, Options: opts(mkOpts + " -p,--parents:parents"), Operands: operands("DIR...=create")},
		{Name: "mkfifo", Class: ClassWrites, Options: opts(mkOpts), Operands: operands("NAME...=create")},
		{Name: "mknod", Class: ClassWrites, Options: opts(mkOpts), Operands: operands("NAME=create TYPE=value [MAJOR=value] [MINOR=value]")},
		{Name: "touch", Class: ClassWrites, Options: opts("-r,--reference=read -d,--date= -t="), Operands: operands("FILE...=write")},
		{Name: "truncate", Class: ClassWrites, Options: opts("-s,--size= -r,--reference=read"), Operands: operands("FILE...=write")},
		{Name: "fallocate", Class: ClassWrites, Options: opts("-l,--length= -o,--offset="), Operands: operands("FILE=write")},
		{Name: "tee", Class: ClassWrites, Options: opts("--output-error=?"), Operands: operands("[FILE...=write]")},
		{Name: "dd", Class: ClassWrites, analyze: dd, Operands: operands("[OPERAND...=value]")},
		{Name: "mktemp", Class: ClassWrites, analyze: mktemp,
			Options:  opts("-p=dir --tmpdir=?dir --suffix= -d,--directory:directory -u,--dry-run:dry-run -t"),
			Operands: operands("[TEMPLATE=value]")},

		// Commands that change metadata.
		{Name: "chmod", Class: ClassWrites, analyze: chmod,
			Options: opts("-R,--recursive:recursive --reference=read>MODE"), Operands: operands("MODE=value FILE...=meta")},
		{Name: "chown", Class: ClassWrites, analyze: chmod,
			Options: opts("-R,--recursive:recursive --reference=read>OWNER"), Operands: operands("OWNER=value FILE...=meta")},
		{Name: "chgrp", Class: ClassWrites, analyze: chmod,
			Options: opts("-R,--recursive:recursive --reference=read>GROUP"), Operands: operands("GROUP=value FILE...=meta")},
		{Name: "chattr", Class: ClassWrites, analyze: chmod,
			Options: opts("-R:recursive"), Operands: operands("ATTRIBUTES=value FILE...=meta")},
		{Name: "setfacl", Class: ClassWrites, analyze: chmod,
			Options: opts("-R,--recursive:recursive -m= -x= -M=read -X=read"), Operands: operands("FILE...=meta")},
		{Name: "setfattr", Class: ClassWrites, analyze: chmod, Options: opts("-n= -v= -x="), Operands: operands("FILE...=meta")},
		{Name: "chcon", Class: ClassWrites, analyze: chmod,
			Options: opts("-R,--recursive:recursive --reference=read>CONTEXT"), Operands: operands("CONTEXT=value FILE...=meta")},

		// Languages given a program.
		{Name: "sed", Class: ClassWrites, analyze: interpreter, Filter: false,
			Options:  opts("-e,--expression=program>SCRIPT -f,--file=read>SCRIPT -i,--in-place=?:in-place -l,--line-length="),
			Operands: operands("SCRIPT=program [FILE...=read]")},
		{Name: "perl", Class: ClassWrites, analyze: interpreter, StdinScript: true,
			Options:  opts("-e,-E=program>SCRIPT -i=?:in-place -I=? -M=? -l=? -0=? -x=? -C=? -d=? -D=?"),
			Operands: operands("[SCRIPT=read] [ARG...=value]")},
		interp("python"), interp("python2"), interp("python3"),
		{Name: "ruby", Class: ClassWrites, analyze: interpreter, StdinScript: true,
			Options:  opts("-e=program>SCRIPT -i=?:in-place"),
			Operands: operands("[SCRIPT=read] [ARG...=value]")},
		{Name: "node", Class: ClassWrites, analyze: interpreter, StdinScript: true,
			Options: opts("-e,--eval=program>SCRIPT -p,--print=program>SCRIPT"), Operands: operands("[SCRIPT=read] [ARG...=value]")},
		{Name: "nodejs", Class: ClassWrites, analyze: interpreter,
			Options: opts("-e,--eval=program>SCRIPT -p,--print=program>SCRIPT"), Operands: operands("[SCRIPT=read] [ARG...=value]")},
		{Name: "php", Class: ClassWrites, analyze: interpreter, Options: opts("-r=program>SCRIPT"), Operands: operands("[SCRIPT=read] [ARG...=value]")},
		{Name: "lua", Class: ClassWrites, analyze: interpreter, Options: opts("-e=program>SCRIPT"), Operands: operands("[SCRIPT=read] [ARG...=value]")},
		{Name: "Rscript", Class: ClassWrites, analyze: interpreter, Options: opts("-e=program>SCRIPT"), Operands: operands("[SCRIPT=read] [ARG...=value]")},
		{Name: "osascript", Class: ClassWrites, analyze: interpreter, Options: opts("-e=program>SCRIPT"), Operands: operands("[SCRIPT=read] [ARG...=value]")},

		// Archives and compressors.
		{Name: "tar", Class: ClassWrites, analyze: tarCmd,
			Options: opts("-f,--file=write -C,--directory=dir -T,--files-from=read -X,--exclude-from=read -b,--blocking-factor= " +
				"-g,--listed-incremental=write -H,--format= -I,--use-compress-program= -K,--starting-file= -L,--tape-length= " +
				"-N,--newer,--after-date= -V,--label= --exclude= --transform= --owner= --group= --mode= --mtime= " +
				"--strip-components= --checkpoint-action= --index-file=write --to-command= -O,--to-stdout:stdout " +
				"--remove-files:remove -t,--list:list"),
			Operands: operands("[FILE...=read-tree]")},
		{Name: "zip", Class: ClassWrites, analyze: archive,
			Options: opts("-b,--temp-path=dir -n,--suffixes= -t= -P,--password= -Z,--compression-method= -O,--output-file=write " +
				"-x,--exclude= -i,--include= -r,--recurse-paths:recursive -m,--move:remove"),
			Operands: operands("ARCHIVE=write [FILE...=read]")},
		{Name: "unzip", Class: ClassWrites, analyze: archive,
			Options:  opts("-d=dir -P= -x= -l:list -t:list -v:list -Z:list -p:stdout -z:list"),
			Operands: operands("ARCHIVE=read [MEMBER...=value]")},
		compressor("gzip"), compressor("gunzip"), compressor("bzip2"), compressor("bunzip2"), compressor("xz"),
		compressor("unxz"), compressor("lzma"), compressor("unlzma"), compressor("zstd"), compressor("unzstd"),
		compressor("lz4"), compressor("compress"), compressor("uncompress"), compressor("pigz"),
		{Name: "7z", Class: ClassWrites, analyze: archive, Operands: operands("COMMAND=subcommand ARCHIVE=write [FILE...=read-tree]")},
		{Name: "7za", Class: ClassWrites, analyze: archive, Operands: operands("COMMAND=subcommand ARCHIVE=write [FILE...=read-tree]")},
		{Name: "rar", Class: ClassWrites, analyze: archive, Operands: operands("COMMAND=subcommand ARCHIVE=write [FILE...=read-tree]")},
		{Name: "unrar", Class: ClassWrites, analyze: archive, Operands: operands("COMMAND=subcommand ARCHIVE=read [FILE...=value]")},
		{Name: "cpio", Class: ClassWrites, analyze: archive, Operands: operands("[ARG...=value]")},
		{Name: "ar", Class: ClassWrites, analyze: archive, Operands: operands("[ARG...=value]")},

		// Commands that write files named in their arguments.
		{Name: "patch", Class: ClassWrites, analyze: patch,
			Options: opts("-p,--strip= -i,--input=read -o,--output=write -B,--prefix= -D= -d,--directory=dir -F,--fuzz= " +
				"-r,--reject-file=write -V= -Y= -z,--suffix= -g= -x= --backup-if-mismatch=? --quoting-style= " +
				"--dry-run:dry-run -C,--check:dry-run"),
			Operands: operands("[FILE=write] [PATCHFILE=read]")},
		{Name: "split", Class: ClassWrites, analyze: split,
			Options: opts("-l,--lines= -b,--bytes= -C,--line-bytes= -n,--number= -a,--suffix-length= --additional-suffix= " +
				"-t,--separator= --filter=script"),
			Operands: operands("[FILE=read] [PREFIX=value]")},
		{Name: "csplit", Class: ClassWrites, analyze: split,
			Options:  opts("-f,--prefix= -b,--suffix-format= -n,--digits="),
			Operands: operands("FILE=read PATTERN...=value")},
		{Name: "sort", Class: ClassReads, Filter: true,
			Options: opts("-o,--output=write -k,--key= -t,--field-separator= -S,--buffer-size= -T,--temporary-directory=dir " +
				"--parallel= --files0-from=read"),
			Operands: operands("[FILE...=read]")},
		{Name: "uniq", Class: ClassReads, Filter: true,
			Options: opts("-f,--skip-fields= -s,--skip-chars= -w,--check-chars="), Operands: operands("[INPUT=read] [OUTPUT=write]")},
		{Name: "iconv", Class: ClassReads, Options: opts("-f,--from-code= -t,--to-code= -o,--output=write"), Operands: operands("[FILE...=read]")},
		{Name: "dos2unix", Class: ClassWrites, Operands: operands("FILE...=write")},
		{Name: "unix2dos", Class: ClassWrites, Operands: operands("FILE...=write")},
		editor("vi"), editor("vim"), editor("nvim"), editor("nano"), editor("emacs"), editor("ed"), editor("ex"),
		editor("pico"), editor("joe"), editor("code"),
		cc("gcc"), cc("cc"), cc("g++"), cc("clang"), cc("clang++"),
		{Name: "convert", Class: ClassWrites, Operands: operands("INPUT...=read OUTPUT=write")},
		{Name: "ffmpeg", Class: ClassWrites, Options: opts("-i=read"), Operands: operands("[OPTION...=value] OUTPUT=write")},

		// Commands that reach other hosts.
		{Name: "rsync", Class: ClassNetwork, analyze: rsync,
			Options: opts("-e,--rsh= -B,--block-size= -M,--remote-option= -f,--filter= -T,--temp-dir=dir -P= -i= -F= " +
				"-o= -c= -l= -J= -S= --exclude= --include= --files-from=read --exclude-from=read --include-from=read " +
				"--log-file=write --backup-dir=dir --partial-dir=dir --compare-dest=dir --link-dest=dir --copy-dest=dir " +
				"--chmod= --chown= --port= --password-file=read --timeout= --bwlimit= --max-size= --min-size= --suffix= " +
				"--out-format= --rsync-path= --info= --debug= -n,--dry-run:dry-run --remove-source-files:remove " +
				"--delete,--delete-before,--delete-during,--delete-delay,--delete-after,--delete-excluded:mirror"),
			Operands: operands("SOURCE...=read-tree DEST=target")},
		{Name: "scp", Class: ClassNetwork, analyze: rsync,
			Options: opts("-P= -i=read -F=read -o= -c= -l= -J= -S= -D="), Operands: operands("SOURCE...=read-tree DEST=target")},
		network("sftp", "HOST=remote"), network("ftp", "[HOST=remote]"), network("lftp", "[HOST=remote]"),
		{Name: "curl", Class: ClassNetwork, analyze: curl,
			Options: opts("-o,--output=write -T,--upload-file=read:send -d,--data,--data-raw,--data-binary,--data-urlencode,--json=:send " +
				"-F,--form,--form-string=:send -X,--request= -K,--config=read -u,--user= -H,--header= -A,--user-agent= " +
				"-e,--referer= -b,--cookie= -c,--cookie-jar=write -x,--proxy= -m,--max-time= -w,--write-out= -r,--range= " +
				"-C,--continue-at= -z,--time-cond= -D,--dump-header=write -E,--cert= --cacert= --key= -Y= -y= -Q= -t= -U= " +
				"--connect-timeout= --retry= --output-dir=dir --url=remote --limit-rate= -O,--remote-name,--remote-name-all:remote-name"),
			Operands: operands("[URL...=remote]")},
		{Name: "wget", Class: ClassNetwork, analyze: wget, Options: opts(wgetOpts), Operands: operands("[URL...=remote]")},
		{Name: "aria2c", Class: ClassNetwork, analyze: wget, Options: opts(wgetOpts), Operands: operands("[URL...=remote]")},
		{Name: "axel", Class: ClassNetwork, analyze: wget, Options: opts(wgetOpts), Operands: operands("[URL...=remote]")},
		{Name: "ssh", Class: ClassNetwork, OptionsFirst: true, analyze: ssh,
			Options:  opts("-b= -c= -D= -E=write -e= -F=read -I= -i=read -J= -L= -l= -m= -O= -o= -p= -Q= -R= -S= -W= -w= -B="),
			Operands: operands("HOST=remote [COMMAND...=value]")},
		network("ssh-copy-id", "HOST=remote"), network("nc", "[HOST=remote] [PORT=value]"), network("ncat", "[HOST=remote] [PORT=value]"),
		network("netcat", "[HOST=remote] [PORT=value]"), network("telnet", "[HOST=remote] [PORT=value]"), network("socat", "ADDRESS...=remote"),
		probe("ping"), probe("ping6"), probe("traceroute"), probe("tracepath"), probe("dig"), probe("nslookup"),
		probe("host"), probe("whois"), probe("mtr"), probe("nmap"),
		network("http", "[ARG...=value]"), network("httpie", "[ARG...=value]"),
		mail("mail"), mail("mailx"), mail("sendmail"), mail("mutt"), mail("mpack"), mail("ssmtp"), mail("msmtp"),

		{Name: "git", Class: ClassWrites, analyze: git,
			Options:  opts("-C=dir -c= --work-tree=dir --git-dir=dir"),
			Operands: operands("SUBCOMMAND=subcommand [ARG...=value]")},

		// Commands that change state outside the file system.
		acts(system("kill", "sends a signal to processes", "-l", "-L", "--list")),
		acts(system("killall", "sends a signal to processes", "-l", "--list")),
		acts(system("pkill", "sends a signal to processes")),
		acts(system("skill", "sends a signal to processes")),
		system("xkill", "kills a window's client"),
		system("renice", "changes process priorities"),
		system("systemctl", "changes system services", "status", "show", "list-units", "list-unit-files", "is-active",
			"is-enabled", "is-failed", "cat", "list-timers", "list-sockets", "list-dependencies", "help", "--help", "--version", "-a",
			"--all", "--failed", "--type", "-t"),
		system("service", "changes system services", "--status-all", "status", "--help", "-h"),
		system("shutdown", "shuts the machine down"),
		system("reboot", "reboots the machine"),
		system("halt", "halts the machine"),
		system("poweroff", "powers the machine off"),
		system("init", "changes the run level"),
		system("telinit", "changes the run level"),
		system("crontab", "changes scheduled jobs", "-l"),
		system("at", "schedules a job", "-l", "-c"),
		system("batch", "schedules a job"),
		system("atrm", "removes scheduled jobs"),
		withAlso(system("mount", "mounts a file system", "", "-l"), AlsoSpec{"/run/mount", RoleTarget}),
		withAlso(system("umount", "unmounts a file system"), AlsoSpec{"/run/mount", RoleTarget}),
		system("swapon", "changes swap space", "", "--show", "-s", "--summary"),
		system("swapoff", "changes swap space"),
		system("mkswap", "makes a swap area"),
		system("fdisk", "changes partition tables", "-l", "--list"),
		system("parted", "changes partition tables", "-l", "--list"),
		system("sfdisk", "changes partition tables", "-l", "--list", "-d", "--dump"),
		system("gdisk", "changes partition tables", "-l"),
		system("losetup", "changes loop devices", "", "-a", "--all", "-l", "--list"),
		system("cryptsetup", "changes encrypted devices", "status", "luksDump", "isLuks"),
		system("wipefs", "erases signatures from devices"),
		system("hdparm", "changes disk settings", "-I", "-i"),
		system("iptables", "changes firewall rules", "-L", "-S", "--list", "--list-rules"),
		system("ip6tables", "changes firewall rules", "-L", "-S", "--list", "--list-rules"),
		system("ufw", "changes firewall rules", "status", "app", "show"),
		system("nft", "changes firewall rules", "list"),
		system("sysctl", "changes kernel settings", "", "-a", "--all", "-n"),
		system("modprobe", "loads kernel modules", "-n", "--dry-run", "-c", "--showconfig"),
		system("insmod", "loads kernel modules"),
		system("rmmod", "unloads kernel modules"),
		system("hwclock", "sets the hardware clock", "", "-r", "--show", "--get"),
		system("timedatectl", "changes the system clock", "", "status", "show", "list-timezones", "timesync-status"),
		system("hostnamectl", "changes the host's name", "", "status"),
		system("nmcli", "changes network connections", "general", "g", "device", "d", "dev", "monitor", "help", "-h"),
		system("ifup", "brings network interfaces up"),
		system("ifdown", "takes network interfaces down"),
		system("wall", "sends a message to every terminal"),
		system("write", "sends a message to a user"),
		system("logger", "writes to the system log"),
		system("notify-send", "shows a desktop notification"),
		system("docker", "changes containers or images", "ps", "images", "inspect", "logs", "version", "info", "top",
			"stats", "search", "history", "diff", "port", "events", "help", "--help", "--version"),
		system("podman", "changes containers or images", "ps", "images", "inspect", "logs", "version", "info", "top",
			"stats", "search", "history", "diff", "port", "events", "help", "--help", "--version"),
		system("kubectl", "changes a cluster", "get", "describe", "logs", "version", "explain", "top", "config",
			"api-resources", "cluster-info", "help"),
		system("virsh", "changes virtual machines", "list", "dominfo", "dumpxml", "help"),
		system("vagrant", "changes virtual machines", "status", "global-status", "version", "help"),
		system("launchctl", "changes system services", "list", "print", "help"),
		system("loginctl", "changes login sessions", "", "list-sessions", "list-users", "show-session", "show-user",
			"session-status", "user-status"),
		{Name: "ip", Class: ClassSystem, Does: "changes network settings", analyze: ipCmd,
			Operands: operands("[OBJECT=subcommand] [COMMAND=subcommand] [ARG...=value]"),
			Looks:    []string{"", "show", "list", "ls", "lst", "get", "help"}},
		{Name: "date", Class: ClassSystem, Does: "sets the system clock", analyze: irreversible,
			Options: opts("-s,--set=:change -d,--date= -r,--reference=read -I,--iso-8601=?")},
		system("xdg-open", "opens a file in another program"),
		system("open", "opens a file in another program"),
		system("mkfs", "makes a file system on a device"),

		// Package managers.
		packages("apt", "list", "show", "search", "policy", "madison", "depends", "rdepends", "help", "--version", "-v"),
		packages("apt-get", "check", "help", "--version", "-v", "-s", "--simulate", "--dry-run"),
		packages("apt-cache", "show", "search", "policy", "madison", "depends", "rdepends", "showpkg", "stats", "pkgnames", "dump", "showsrc", ""),
		packages("aptitude", "search", "show", "why", "why-not", "help", "--version"),
		packages("yum", "list", "info", "search", "provides", "check-update", "history", "repolist", "deplist", "help", "--version"),
		packages("dnf", "list", "info", "search", "provides", "check-update", "history", "repolist", "repoquery", "help", "--version"),
		packages("pacman", "-Q", "-Qi", "-Ql", "-Qs", "-Qe", "-Qo", "-Ss", "-Si", "-Sl", "-Sg", "-F", "-Fl", "-T", "--version", "-V", "-h", "--help"),
		packages("zypper", "search", "se", "info", "if", "list-updates", "lu", "repos", "lr", "help", "--version"),
		packages("apk", "info", "search", "list", "policy", "stats", "--version"),
		packages("brew", "list", "ls", "info", "search", "outdated", "deps", "uses", "doctor", "config", "help", "--version", "leaves"),
		packages("snap", "list", "info", "find", "search", "version", "help", "services", "connections"),
		packages("flatpak", "list", "info", "search", "remotes", "help", "--version"),
		packages("pip", "list", "show", "freeze", "search", "check", "help", "--version", "-V", "debug", "index"),
		packages("pip3", "list", "show", "freeze", "search", "check", "help", "--version", "-V", "debug", "index"),
		packages("pipx", "list", "environment", "help", "--version"),
		packages("npm", "list", "ls", "ll", "la", "view", "info", "show", "search", "outdated", "help", "--version", "-v", "version", "config", "doctor", "root", "prefix", "bin"),
		packages("yarn", "list", "info", "why", "outdated", "help", "--version", "-v", "config"),
		packages("pnpm", "list", "ls", "outdated", "why", "help", "--version", "-v"),
		packages("gem", "list", "search", "info", "query", "specification", "contents", "environment", "env", "help", "--version", "outdated"),
		packages("cargo", "search", "tree", "metadata", "help", "--version", "version", "--list", "locate-project", "pkgid"),
		packages("go", "version", "env", "list", "doc", "help", "vet"),
		packages("conda", "list", "info", "search", "env", "config", "help", "--version", "-V"),
		packages("port", "list", "info", "search", "installed", "outdated", "contents", "deps", "help", "version"),
		packages("emerge", "--search", "-s", "--info", "--pretend", "-p", "--version"),
		packages("dpkg", "-l", "--list", "-L", "--listfiles", "-s", "--status", "-S", "--search", "-p", "--print-avail",
			"--get-selections", "-c", "--contents", "-I", "--info", "--version", "--print-architecture", "-W"),
		packages("rpm", "-q", "-qa", "-qi", "-ql", "-qf", "-qc", "-qd", "-qR", "--query", "-V", "--verify", "--version", "--querytags"),

		// User and group management.
		accounts("useradd"), accounts("userdel"), accounts("usermod"), accounts("groupadd"), accounts("groupdel"),
		accounts("groupmod"), accounts("passwd"), accounts("chpasswd"), accounts("adduser"), accounts("deluser"),
		accounts("addgroup"), accounts("delgroup"), accounts("gpasswd"), accounts("visudo"), accounts("chsh"),
		accounts("chfn"),
	}
}

// looks marks a command that shows the host's processes, sockets or
// users (CommandSpec.Host).
func looks(s CommandSpec) CommandSpec { s.Host = HostLooks; return s }

// acts marks a command that acts on the host's processes.
func acts(s CommandSpec) CommandSpec { s.Host = HostActs; return s }

// withAlso adds paths a command writes of its own accord to its entry.
func withAlso(s CommandSpec, also ...AlsoSpec) CommandSpec {
	s.Also = append(s.Also, also...)
	return s
}

// Option lists several entries share.
const (
	grepOpts   = "-e,--regexp=>PATTERN -f,--file=read>PATTERN -m,--max-count= -A,--after-context= -B,--before-context= -C,--context= -D,--devices= -d,--directories= -r,-R,--recursive,--dereference-recursive:recursive"
	readOpts   = "-a= -d= -i= -n= -N= -p= -t= -u= -C= -c="
	sudoOpts   = "-u,--user= -g,--group= -C,--close-from= -h,--host= -p,--prompt= -r,--role= -t,--type= -U,--other-user= -D,--chdir=dir -R,--chroot=dir -T,--command-timeout= -e,--edit:edit -i,--login,-s,--shell:login-shell"
	suOpts     = "-c,--command=script -g,--group= -G,--supp-group= -s,--shell= -u,--user= -w,--whitelist-environment="
	straceOpts = "-o,--output=write -e= -p= -s= -E= -u= -I= -a= -b= -X= -U="
	mkOpts     = "-m,--mode= -Z,--context=?"
	wgetOpts   = "-O,--output-document=write -o,--output-file=write -a,--append-output=write -P,--directory-prefix=dir " +
		"-i,--input-file=read -t,--tries= -T,--timeout= -w,--wait= -U,--user-agent= -e,--execute= -B,--base= -Q,--quota= " +
		"-l,--level= -A,--accept= -R,--reject= -D,--domains= -X,--exclude-directories= -I,--include-directories= " +
		"--header= --user= --password= --post-data=:send --post-file=read:send --body-data=:send --body-file=read:send " +
		"--method= --limit-rate= --referer= --load-cookies=read --save-cookies=write -k -r,--recursive,-m,--mirror:recursive"
)

// filter marks a reader as a line filter (CommandSpec.Filter).
const filter = true

func quiet(name string) CommandSpec { return CommandSpec{Name: name, Class: ClassQuiet} }

// reads is a command that reads its operands: by default, any number of
// files.
func reads(name, options string, rest ...any) CommandSpec {
	s := CommandSpec{Name: name, Class: ClassReads, Options: opts(options), Operands: operands("[FILE...=read]")}
	for _, r := range rest {
		switch r := r.(type) {
		case string:
			s.Operands = operands(r)
		case bool:
			s.Filter = r
		}
	}
	return s
}

func runs(name, options, ops string) CommandSpec {
	return CommandSpec{Name: name, Class: ClassRuns, OptionsFirst: true, analyze: wrapper, Options: opts(options), Operands: operands(ops)}
}

func shell(name string) CommandSpec {
	return CommandSpec{Name: name, Class: ClassRuns, analyze: shellCmd, StdinScript: name != "csh" && name != "tcsh" && name != "fish",
		Options:  opts("-c:command-string -o= -O= --rcfile=read --init-file=read"),
		Operands: operands("[SCRIPT=read] [ARG...=value]")}
}

func interp(name string) CommandSpec {
	return CommandSpec{Name: name, Class: ClassWrites, analyze: interpreter, StdinScript: name != "python2",
		Options: opts("-c=program>SCRIPT -m=>SCRIPT -W= -X="), Operands: operands("[SCRIPT=read] [ARG...=value]")}
}

// compressor replaces each file by its compressed or decompressed version;
// zstd, unzstd and lz4 keep the file unless told --rm.
func compressor(name string) CommandSpec {
	role := "convert"
	if name == "zstd" || name == "unzstd" || name == "lz4" {
		role = "read"
	}
	return CommandSpec{Name: name, Class: ClassWrites, analyze: archive,
		Options: opts("-S,--suffix= -b,--block-size= -T,--threads= -F,--format= -C,--check= -M,--memlimit= -o,--output=create " +
			"-B= -p,--processes= -k,--keep:keep -c,--stdout,--to-stdout:stdout -d,--decompress,--uncompress:decompress " +
			"-l,-t,--list,--test:list -r,--recursive:recursive --rm"),
		Operands: operands("[FILE...=" + role + "]")}
}

func editor(name string) CommandSpec {
	return CommandSpec{Name: name, Class: ClassWrites, analyze: editFiles, Options: opts("-c= -n= -S= -u="), Operands: operands("[FILE...=write]")}
}

func cc(name string) CommandSpec {
	return CommandSpec{Name: name, Class: ClassWrites, analyze: compile,
		Options: opts("-o=write -I=dir -l= -L=dir -D= -U= -x= -c:compile"), Operands: operands("FILE...=read")}
}

func network(name, ops string) CommandSpec {
	return CommandSpec{Name: name, Class: ClassNetwork, analyze: networkCmd, Operands: operands(ops)}
}

func probe(name string) CommandSpec {
	return CommandSpec{Name: name, Class: ClassNetwork, analyze: networkCmd, Operands: operands("[ARG...=value]")}
}

func mail(name string) CommandSpec {
	return CommandSpec{Name: name, Class: ClassNetwork, analyze: networkCmd,
		Options: opts("-s= -a=read -c= -b= -r= -A=read -q=read -S= -F= -f="), Operands: operands("[ADDRESS...=value]")}
}

// system is a command the sandbox cannot undo: does says what it does, and
// looks lists the first arguments with which it only looks ("" for none).
func system(name, does string, looks ...string) CommandSpec {
	return CommandSpec{Name: name, Class: ClassSystem, Does: does, analyze: irreversible, Looks: looks,
		Operands: operands("[ARG...=value]")}
}

func packages(name string, looks ...string) CommandSpec {
	return CommandSpec{Name: name, Class: ClassPackages, Does: "installs or removes software", analyze: packageCmd,
		Looks: looks, Operands: operands("[SUBCOMMAND=subcommand] [ARG...=value]")}
}

func accounts(name string) CommandSpec {
	return CommandSpec{Name: name, Class: ClassWrites, Does: "changes users and groups", analyze: accountsCmd,
		Operands: operands("[ARG...=value]")}
}

// opts reads the option notation of commandTable. It panics on a malformed
// item: the table is fixed, and any test of the package would fail.
func opts(s string) []OptionSpec {
	var out []OptionSpec
	for _, item := range strings.Fields(s) {
		var o OptionSpec
		if i := strings.IndexByte(item, '>'); i >= 0 {
			item, o.Fills = item[:i], item[i+1:]
		}
		if i := strings.IndexByte(item, ':'); i >= 0 && i > 0 {
			item, o.Sets = item[:i], Setting(item[i+1:])
		}
		names, arg, hasArg := strings.Cut(item, "=")
		if hasArg {
			if strings.HasPrefix(arg, "?") {
				o.OptionalArg, arg = true, arg[1:]
			}
			if strings.HasSuffix(arg, "?") {
				o.OptionalArg, arg = true, arg[:len(arg)-1]
			}
			o.Arg = RoleValue
			if arg != "" {
				o.Arg = Role(arg)
			}
		}
		o.Names = strings.Split(names, ",")
		out = append(out, o)
	}
	return out
}

// operands reads the operand notation of commandTable.
func operands(s string) []OperandSpec {
	var out []OperandSpec
	for _, item := range strings.Fields(s) {
		var o OperandSpec
		if strings.HasPrefix(item, "[") && strings.HasSuffix(item, "]") {
			o.Optional, item = true, item[1:len(item)-1]
		}
		name, role, ok := strings.Cut(item, "=")
		if !ok {
			panic(fmt.Sprintf("effects: operand %q has no role", item))
		}
		o.Name, o.Role = name, Role(role)
		if n, ok := strings.CutSuffix(o.Name, "..."); ok {
			o.Name, o.Many = n, true
		}
		out = append(out, o)
	}
	return out
}
