package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/sandbox"
	"github.com/nash-shell/nash/sandbox/egress"
)

// netConfig is the net: section of the config file: destinations allowed
// or denied to every run, or to runs in a directory (and below), and names
// nash's resolver answers itself.
type netConfig struct {
	Allow []string            `yaml:"allow"`
	Deny  []string            `yaml:"deny"`
	Dirs  map[string]netLists `yaml:"dirs"`
	Hosts map[string]string   `yaml:"hosts"`
	_     struct{}            `yaml:"-"`
}

type netLists struct {
	Allow []string `yaml:"allow"`
	Deny  []string `yaml:"deny"`
}

// netAllFlag is what --net alone stands for: the host's network, all of it.
const netAllFlag = "*"

// netPlan is how a run reaches the network: the host's, unwatched, or
// through nash with a policy.
type netPlan struct {
	host     bool
	policy   egress.Policy
	resolver egress.Resolver
}

// options are the sandbox options for the plan.
func (n netPlan) options() []sandbox.Option {
	if n.host {
		return []sandbox.Option{sandbox.Network(true)}
	}
	opts := []sandbox.Option{sandbox.NetPolicy(n.policy)}
	if n.resolver != nil {
		opts = append(opts, sandbox.NetResolver(n.resolver))
	}
	return opts
}

// allow returns the plan with more destinations allowed.
func (n netPlan) allow(rules []egress.Rule) netPlan {
	n.policy.Allow = append(append([]egress.Rule(nil), n.policy.Allow...), rules...)
	return n
}

// covers reports whether the plan allows every destination r names (for
// a name rule, the name itself; for an address rule, its first address).
func (n netPlan) covers(r egress.Rule) bool {
	if n.host {
		return true
	}
	var a netip.Addr
	if r.Host == "" {
		a = r.Prefix.Addr()
	}
	return n.policy.Allows(r.Host, a, r.Port)
}

// resolveNet builds a run's network plan from --net (its value: "" for
// none, "*" for the host's network, else HOST[:PORT] rules) and the
// config's lists for dir. Deny lists hold whatever allows.
func resolveNet(flag string, c netConfig, dir string) (netPlan, error) {
	var n netPlan
	if flag == netAllFlag {
		n.host = true
		return n, nil
	}
	add := func(dst *[]egress.Rule, list []string, where string) error {
		for _, s := range list {
			r, err := egress.ParseRule(s)
			if err != nil {
				return usageError{fmt.Sprintf("%s: %v", where, err)}
			}
			*dst = append(*dst, r)
		}
		return nil
	}
	if err := add(&n.policy.Allow, strings.Split(flag, ","), "--net"); err != nil && flag != "" {
		return n, err
	}
	if err := add(&n.policy.Allow, c.Allow, "config net.allow"); err != nil {
		return n, err
	}
	if err := add(&n.policy.Deny, c.Deny, "config net.deny"); err != nil {
		return n, err
	}
	for d, l := range c.Dirs {
		if !filepath.IsAbs(d) || !under(dir, filepath.Clean(d)) {
			continue
		}
		if err := add(&n.policy.Allow, l.Allow, "config net.dirs"); err != nil {
			return n, err
		}
		if err := add(&n.policy.Deny, l.Deny, "config net.dirs"); err != nil {
			return n, err
		}
	}
	if len(c.Hosts) > 0 {
		hosts := hostsResolver{}
		for name, a := range c.Hosts {
			addr, err := netip.ParseAddr(a)
			if err != nil {
				return n, usageError{fmt.Sprintf("config net.hosts: %s: not an address", effects.Quote(name))}
			}
			hosts[strings.ToLower(strings.TrimSuffix(name, "."))] = addr
		}
		n.resolver = hosts
	}
	return n, nil
}

// under reports whether p is dir or below it.
func under(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// hostsResolver answers the names of config net.hosts, and asks the
// system's resolver for the rest.
type hostsResolver map[string]netip.Addr

func (h hostsResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if a, ok := h[host]; ok {
		return []netip.Addr{a}, nil
	}
	return net.DefaultResolver.LookupNetIP(ctx, network, host)
}

// writeNetSummary shows what a run tried to reach, after the effect
// summary. It writes nothing for a run that tried nothing.
func writeNetSummary(w io.Writer, p *sandbox.Pending) {
	if p.NetworkError != "" {
		fmt.Fprintf(w, "network: NOT watched (%s): the run had its own loopback only\n", effects.EscapeLine(p.NetworkError))
	}
	if len(p.Network) == 0 {
		return
	}
	denied := 0
	for _, c := range p.Network {
		if !c.Allowed {
			denied++
		}
	}
	fmt.Fprintf(w, "network: %d destination(s) tried, %d denied\n", len(p.Network), denied)
	for i, c := range p.Network {
		fmt.Fprintf(w, "  %2d %s\n", i+1, contactLine(c))
	}
}

// contactLine is one destination as the summary shows it.
func contactLine(c egress.Contact) string {
	verdict := "denied "
	if c.Allowed {
		verdict = "allowed"
	}
	var what []string
	switch {
	case c.Proto == egress.ProtoDNS:
		what = append(what, "name looked up only")
	case c.Proto == egress.ProtoUDP:
		what = append(what, "udp")
	case c.TLS:
		what = append(what, "tls")
	case c.HTTPHost != "":
		what = append(what, "http")
	}
	if c.ViaProxy {
		what = append(what, "as a proxy request")
	}
	if c.Host != "" && c.Addr != "" {
		what = append(what, "at "+c.Addr)
	}
	if c.SNI != "" && c.SNI != c.Host {
		what = append(what, "server name "+effects.Quote(c.SNI))
	}
	if h := c.HTTPHost; h != "" && h != c.Host && h != c.Destination() && (c.Host == "" || !strings.HasPrefix(h, c.Host+":")) {
		what = append(what, "Host "+effects.Quote(c.HTTPHost))
	}
	switch {
	case c.Attempts > 1 && c.Proto == egress.ProtoDNS:
		what = append(what, strconv.Itoa(c.Attempts)+" lookups")
	case c.Attempts > 1:
		what = append(what, strconv.Itoa(c.Attempts)+" attempts")
	}
	if c.Allowed && c.Proto == egress.ProtoTCP {
		what = append(what, fmt.Sprintf("sent %s, received %s", humanBytes(c.Sent), humanBytes(c.Received)))
		if c.TLS {
			what = append(what, "encrypted: headers not visible")
		}
	}
	if len(c.Credentials) > 0 {
		sent := "credential sent: "
		if !c.Allowed {
			sent = "credential held back: "
		}
		what = append(what, sent+strings.Join(c.Credentials, ", "))
	}
	if c.Error != "" {
		what = append(what, "failed: "+c.Error)
	}
	line := verdict + "  " + effects.Quote(c.Destination())
	if len(what) > 0 {
		line += "  (" + strings.Join(what, "; ") + ")"
	}
	return effects.EscapeLine(line)
}

// deniedRules lists, once each, the rules that would allow the denied
// destinations a run tried.
func deniedRules(cs []egress.Contact) []egress.Rule {
	var out []egress.Rule
	seen := map[string]bool{}
	for _, c := range cs {
		if c.Allowed {
			continue
		}
		r, ok := c.Rule()
		if !ok || seen[r.String()] {
			continue
		}
		seen[r.String()] = true
		out = append(out, r)
	}
	return out
}

// askNetwork asks question once about destinations: all, some (by number,
// from the list it shows) or none. End of input is none.
func askNetwork(in *bufio.Reader, w io.Writer, question string, rules []egress.Rule) []egress.Rule {
	if len(rules) == 0 {
		return nil
	}
	for {
		fmt.Fprintf(w, "%s [a]ll %d, [p]ick, [n]one: ", question, len(rules))
		line, err := in.ReadString('\n')
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "a", "all", "y", "yes":
			return rules
		case "n", "none", "no":
			return nil
		case "p", "pick":
			for i, r := range rules {
				fmt.Fprintf(w, "  %2d %s\n", i+1, effects.Quote(r.String()))
			}
			fmt.Fprint(w, "numbers to allow (e.g. 1 3), empty for none: ")
			line, _ := in.ReadString('\n')
			var picked []egress.Rule
			ok := true
			for _, f := range strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\t' || r == '\r' }) {
				n, err := strconv.Atoi(f)
				if err != nil || n < 1 || n > len(rules) {
					fmt.Fprintf(w, "nash: %s is not a number from the list\n", effects.Quote(f))
					ok = false
					break
				}
				picked = append(picked, rules[n-1])
			}
			if ok {
				return picked
			}
			continue
		}
		if err != nil {
			fmt.Fprintln(w)
			return nil
		}
	}
}

// netBrief is a transaction's network in one line, for nash log.
func netBrief(cs []egress.Contact) string {
	var parts []string
	for i, c := range cs {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("and %d more", len(cs)-3))
			break
		}
		v := "denied"
		if c.Allowed {
			v = fmt.Sprintf("%s out, %s in", humanBytes(c.Sent), humanBytes(c.Received))
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", effects.Quote(c.Destination()), v))
	}
	return effects.EscapeLine("network: " + strings.Join(parts, ", "))
}

// writeTxNetwork lists a transaction's network for nash show.
func writeTxNetwork(w io.Writer, cs []egress.Contact) {
	if len(cs) == 0 {
		return
	}
	fmt.Fprintf(w, "network: %d destination(s)\n", len(cs))
	for i, c := range cs {
		fmt.Fprintf(w, "  %2d %s  %s\n", i+1, contactLine(c), c.First.Local().Format("15:04:05"))
	}
}
