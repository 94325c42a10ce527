package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/share"
)

// defaultShareFor is how long a share lasts unless --for says otherwise.
const defaultShareFor = "24h"

// shareOptions are nash share's flags.
type shareOptions struct {
	forDur string // --for
	list   bool   // --list
	revoke string // --revoke
	json   bool   // --json
	addr   string // --addr
}

func newShareCmd(g *options, io stdio) *cobra.Command {
	var opts shareOptions
	cmd := &cobra.Command{
		Use:   "share (PATH [--for DURATION] | --list [--json] | --revoke ID|TOKEN|URL)",
		Short: "print a link that downloads a file through nash serve, until it expires or is revoked",
		Long: `share makes a link to one regular file, served by nash serve, that works for
--for (default ` + defaultShareFor + `; 36h, 3d, ...) unless revoked first. The link holds
an unguessable token that nash does not keep: only its hash is stored, so a
lost link cannot be printed again; share the file again instead.

A share is of the file, not its name: changing the file in place is fine,
but if it is replaced (for example by an editor that saves a new copy) the
link stops working. Symbolic links are resolved when sharing.

The link's address is --addr, else NASH_SERVE_ADDR, else serve.addr in the
config file, else nash serve's default; NASH_SHARE_URL or serve.url
in the config replace the whole base (for a server behind a proxy).`,
		Args: func(cmd *cobra.Command, args []string) error {
			switch {
			case opts.list && opts.revoke != "":
				return usageError{"share: --list and --revoke do not go together"}
			case (opts.list || opts.revoke != "") && len(args) > 0:
				return usageError{"share: --list and --revoke take no PATH"}
			case (opts.list || opts.revoke != "") && cmd.Flags().Changed("for"):
				return usageError{"share: --for goes with a PATH"}
			case opts.json && !opts.list:
				return usageError{"share: --json goes with --list"}
			case !opts.list && opts.revoke == "" && len(args) != 1:
				return usageError{"share: want one PATH (or --list, or --revoke ID)"}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			store, err := openShareStore(g)
			if err != nil {
				return err
			}
			switch {
			case opts.list:
				return runShareList(cmd.Context(), store, opts, io)
			case opts.revoke != "":
				return runShareRevoke(cmd.Context(), store, opts.revoke, io)
			}
			return runShare(cmd.Context(), g, store, args[0], opts, io)
		},
	}
	cmd.Flags().StringVar(&opts.forDur, "for", defaultShareFor, "how long the link works, like 36h or 3d")
	cmd.Flags().BoolVar(&opts.list, "list", false, "list shares: ID, expiry, path")
	cmd.Flags().StringVar(&opts.revoke, "revoke", "", "end a share now, named by its ID, token or link")
	cmd.Flags().BoolVar(&opts.json, "json", false, "with --list, print JSON")
	cmd.Flags().StringVar(&opts.addr, "addr", "", "the address of nash serve to put in the link (default NASH_SERVE_ADDR or "+defaultServeAddr+")")
	return cmd
}

func runShare(ctx context.Context, g *options, store *share.Store, path string, opts shareOptions, io stdio) error {
	d, err := parseAge(opts.forDur)
	if err != nil || d <= 0 || d > share.MaxTTL {
		return usageError{fmt.Sprintf("share: --for %q: want a duration like 36h or 3d, at most %dd", opts.forDur, int(share.MaxTTL/(24*time.Hour)))}
	}
	base, addr, err := shareBaseURL(g, opts.addr)
	if err != nil {
		return err
	}
	sh, token, err := store.Create(ctx, path, time.Now(), d)
	if err != nil {
		return err
	}
	fmt.Fprintln(io.out, share.URL(base, token, sh.Name()))
	fmt.Fprintf(io.err, "nash: %s is shared until %s (id %s; nash share --revoke %s ends it)\n",
		effects.Quote(sh.Path), sh.Expires.Local().Format("2006-01-02 15:04"), sh.ID, sh.ID)
	if !answers(ctx, addr) {
		fmt.Fprintf(io.err, "nash: nothing answers on %s yet: start the server with nash serve\n", addr)
	}
	return nil
}

// answers reports whether something accepts connections at addr.
func answers(ctx context.Context, addr string) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// shareJSON is one share as nash share --list --json prints it.
type shareJSON struct {
	ID      string    `json:"id"`
	Path    string    `json:"path"`
	Created time.Time `json:"created"`
	Expires time.Time `json:"expires"`
	Expired bool      `json:"expired"`
}

func runShareList(ctx context.Context, store *share.Store, opts shareOptions, io stdio) error {
	shares, err := store.List(ctx)
	if err != nil {
		return err
	}
	now := time.Now()
	if opts.json {
		out := make([]shareJSON, 0, len(shares))
		for _, sh := range shares {
			out = append(out, shareJSON{sh.ID, sh.Path, sh.Created, sh.Expires, sh.Expired(now)})
		}
		return effects.WriteJSON(io.out, out, false)
	}
	tw := tabwriter.NewWriter(io.out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tEXPIRES\tPATH")
	for _, sh := range shares {
		exp := sh.Expires.Local().Format("2006-01-02 15:04")
		if sh.Expired(now) {
			exp += " (expired)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", sh.ID, exp, effects.Quote(sh.Path))
	}
	return tw.Flush()
}

func runShareRevoke(ctx context.Context, store *share.Store, ref string, io stdio) error {
	if strings.Contains(ref, share.URLPrefix) {
		if u, err := url.Parse(ref); err == nil {
			if token, _, ok := share.ParsePath(u.EscapedPath()); ok {
				ref = token
			}
		}
	}
	sh, err := store.Revoke(ctx, ref)
	if errors.Is(err, share.ErrNotFound) {
		shown := "with id " + effects.Quote(ref)
		if share.ValidToken(ref) {
			shown = "with that token" // a token is a secret: not echoed
		}
		return fmt.Errorf("no share %s (nash share --list lists them)", shown)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(io.out, "revoked %s %s\n", sh.ID, effects.Quote(sh.Path))
	return nil
}
