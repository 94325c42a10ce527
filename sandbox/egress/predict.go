package egress

import (
	"bufio"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Predict lists the destinations a script's text names, to be offered
// before it runs: hosts in URLs and git remotes (host:path), the remotes
// of the git repository in dir when the script pulls, fetches or pushes,
// and the registries of the package managers it runs (pip, npm, yarn, go,
// cargo, gem; apt's from /etc/apt). It is a prediction from the text: the
// run records what is really tried.
func Predict(script, dir string) []Rule {
	var out []Rule
	seen := map[string]bool{}
	add := func(host string, port uint16) {
		host = strings.ToLower(strings.Trim(host, "[]"))
		if host == "" || strings.Contains(host, "$") {
			return
		}
		r := Rule{Host: host, Port: port}
		if a, err := netip.ParseAddr(host); err == nil {
			r = Rule{Prefix: netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()), Port: port}
		} else if !validName(host) {
			return
		}
		if !seen[r.String()] {
			seen[r.String()] = true
			out = append(out, r)
		}
	}
	for _, m := range urlRE().FindAllStringSubmatch(script, -1) {
		add(m[2], urlPort(m[1], m[3]))
	}
	for _, m := range scpRE().FindAllStringSubmatch(script, -1) {
		add(m[1], 22)
	}
	for _, pm := range managers() {
		if !pm.re.MatchString(script) {
			continue
		}
		hosts := pm.hosts
		if pm.hostsFn != nil {
			hosts = pm.hostsFn(dir)
		}
		for _, h := range hosts {
			host, port, ok := strings.Cut(h, ":")
			p := uint16(443)
			if ok {
				n, _ := strconv.ParseUint(port, 10, 16)
				p = uint16(n)
			}
			add(host, p)
		}
	}
	return out
}

// The patterns are compiled on first use: every nash process links this
// package, and only the runs that are asked about need them.
var (
	urlRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\b(https?|ftp|git|ssh|wss?|rsync)://(?:[^/\s'"@]*@)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(?::(\d{1,5}))?`)
	})
	scpRE = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`\b[A-Za-z0-9._-]+@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+):`)
	})
)

func urlPort(scheme, port string) uint16 {
	if n, err := strconv.ParseUint(port, 10, 16); err == nil && n > 0 {
		return uint16(n)
	}
	switch scheme {
	case "http", "ws":
		return 80
	case "ftp":
		return 21
	case "git":
		return 9418
	case "ssh":
		return 22
	case "rsync":
		return 873
	}
	return 443
}

// manager is a package manager and the hosts its commands reach.
type manager struct {
	re      *regexp.Regexp
	hosts   []string
	hostsFn func(dir string) []string
}

// managers are the package managers Predict knows, compiled on first use.
var managers = sync.OnceValue(func() []manager {
	return []manager{
		{re: cmdRE(`pip3?|python3? -m pip|uv pip|pipx`, `install|download|wheel`), hosts: []string{"pypi.org", "files.pythonhosted.org"}},
		{re: cmdRE(`npm|pnpm`, `install|i|ci|add|update|exec`), hosts: []string{"registry.npmjs.org"}},
		{re: cmdRE(`npx`, ``), hosts: []string{"registry.npmjs.org"}},
		{re: cmdRE(`yarn`, ``), hosts: []string{"registry.yarnpkg.com"}},
		{re: cmdRE(`go`, `get|install|mod download|mod tidy|build|run|test`), hosts: []string{"proxy.golang.org", "sum.golang.org"}},
		{re: cmdRE(`cargo`, `install|build|fetch|update|add|run|test`), hosts: []string{"index.crates.io", "static.crates.io"}},
		{re: cmdRE(`gem`, `install|update`), hosts: []string{"rubygems.org"}},
		{re: cmdRE(`apt-get|apt`, `install|update|upgrade|download|source|full-upgrade|dist-upgrade`), hostsFn: aptHosts},
		{re: cmdRE(`git`, `pull|fetch|push|remote update|submodule update`), hostsFn: gitRemotes},
	}
})

// cmdRE matches a command (alternatives in cmds) at the start of a simple
// command, followed, when subs is not empty, by one of subs.
func cmdRE(cmds, subs string) *regexp.Regexp {
	re := `(?m)(?:^|[;&|({]|\bthen|\bdo|\bsudo)\s*(?:` + cmds + `)\b`
	if subs != "" {
		re += `(?:\s+-\S+)*\s+(?:` + subs + `)\b`
	}
	return regexp.MustCompile(re)
}

// aptHosts reads the hosts of apt's sources.
func aptHosts(string) []string {
	var files []string
	files = append(files, "/etc/apt/sources.list")
	for _, pat := range []string{"/etc/apt/sources.list.d/*.list", "/etc/apt/sources.list.d/*.sources"} {
		m, _ := filepath.Glob(pat)
		files = append(files, m...)
	}
	var hosts []string
	for _, f := range files {
		for _, u := range urlsIn(f, func(l string) bool {
			return strings.HasPrefix(l, "deb") || strings.HasPrefix(l, "URIs:")
		}) {
			hosts = append(hosts, u)
		}
	}
	return hosts
}

// gitRemotes reads the hosts of the remotes of the repository at or above
// dir.
func gitRemotes(dir string) []string {
	for d := dir; d != "" && d != "/" && d != "."; d = filepath.Dir(d) {
		cfg := filepath.Join(d, ".git", "config")
		if _, err := os.Stat(cfg); err != nil {
			continue
		}
		return urlsIn(cfg, func(l string) bool { return strings.HasPrefix(l, "url") })
	}
	return nil
}

// urlsIn returns host:port of each URL (or host: remote) on the lines of
// file that keep says to look at.
func urlsIn(file string, keep func(line string) bool) []string {
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if !keep(l) {
			continue
		}
		for _, m := range urlRE().FindAllStringSubmatch(l, -1) {
			out = append(out, m[2]+":"+strconv.Itoa(int(urlPort(m[1], m[3]))))
		}
		for _, m := range scpRE().FindAllStringSubmatch(l, -1) {
			out = append(out, m[1]+":22")
		}
	}
	return out
}
