package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"path/filepath"
	"strings"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/sandbox"
	"github.com/nash-shell/nash/sandbox/egress"
	"github.com/nash-shell/nash/shell"
)

// netConfig is the net: section of the config file: destinations allowed
// or denied to every run, or to runs in a directory (and below), and names
// nash's resolver answers itself.
type netConfig struct {
	Allow []string            `yaml:"allow"`
	Deny  []string            `yaml:"deny"`
	Dirs  map[string]netLists `yaml:"dirs"`
	Hosts map[string]string   `yaml:"hosts"`
	// Relay keeps allowed connections on nash's relay, which reads their
	// first bytes, instead of handing them to the script directly.
	Relay bool     `yaml:"relay"`
	_     struct{} `yaml:"-"`
}

type netLists struct {
	Allow []string `yaml:"allow"`
	Deny  []string `yaml:"deny"`
}

// netAllFlag is what --net alone stands for: the host's network, all of it.
const netAllFlag = "*"

// netPlan is how a run reaches the network through nash: the policy and
// the names nash's resolver answers itself. (With --net alone a run has
// the host's network instead, unwatched: shell.OpenSpec.Network.)
type netPlan struct {
	policy   egress.Policy
	resolver egress.Resolver
	relay    bool
}

// options are the sandbox options for the plan.
func (n netPlan) options() []sandbox.Option {
	opts := []sandbox.Option{sandbox.NetPolicy(n.policy)}
	if n.resolver != nil {
		opts = append(opts, sandbox.NetResolver(n.resolver))
	}
	if n.relay {
		opts = append(opts, sandbox.NetRelay(true))
	}
	return opts
}

// allow returns the plan with more destinations allowed.
func (n netPlan) allow(rules []egress.Rule) netPlan {
	n.policy.Allow = append(append([]egress.Rule(nil), n.policy.Allow...), rules...)
	return n
}

// resolveNet builds the network plan of runs in dir from the config's
// lists. Deny lists hold whatever allows.
func resolveNet(c netConfig, dir string) (netPlan, error) {
	n := netPlan{relay: c.Relay}
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
		fmt.Fprintf(w, "  %2d %s  %s\n", i+1, shell.NetworkLine(c), c.First.Local().Format("15:04:05"))
	}
}

// netRules reads the HOST[:PORT],... of --net.
func netRules(flag string) ([]egress.Rule, error) {
	var rules []egress.Rule
	for _, s := range strings.Split(flag, ",") {
		r, err := egress.ParseRule(s)
		if err != nil {
			return nil, usageError{fmt.Sprintf("--net: %v", err)}
		}
		rules = append(rules, r)
	}
	return rules, nil
}
