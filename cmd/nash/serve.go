package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/nash-shell/nash/share"
)

// defaultServeAddr is where nash serve listens unless told otherwise:
// loopback only.
const defaultServeAddr = "127.0.0.1:7707"

// serveOptions are nash serve's flags.
type serveOptions struct {
	addr   string // --addr
	public bool   // --public
}

func newServeCmd(g *options, io stdio) *cobra.Command {
	var opts serveOptions
	cmd := &cobra.Command{
		Use:   "serve [--addr HOST:PORT] [--public]",
		Short: "serve the files shared with nash share, at their links, until stopped",
		Long: `serve runs nash's HTTP server for share links. It serves only files shared
with nash share, only while their shares last, and answers anything else
with 404. The address is --addr, else NASH_SERVE_ADDR, else serve.addr in the
config file, else ` + defaultServeAddr + `. An address that is not loopback
(127.0.0.1, ::1, localhost) is refused unless --public is given: anyone who
can reach it and holds a link can then download the file.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runServe(cmd.Context(), g, opts, io)
		},
	}
	cmd.Flags().StringVar(&opts.addr, "addr", "", "address to listen on, HOST:PORT (default "+defaultServeAddr+")")
	cmd.Flags().BoolVar(&opts.public, "public", false, "allow an address that is not loopback")
	return cmd
}

func runServe(ctx context.Context, g *options, opts serveOptions, io stdio) error {
	addr, err := serveAddr(g, opts.addr)
	if err != nil {
		return err
	}
	loopback, err := isLoopback(addr)
	if err != nil {
		return err
	}
	if !loopback && !opts.public {
		return usageError{fmt.Sprintf("serve: %s is not a loopback address: anyone who can reach it and holds a link could download; pass --public to serve there anyway", addr)}
	}
	store, err := openShareStore(g)
	if err != nil {
		return err
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	// Tests read the bound address from this line.
	fmt.Fprintf(io.err, "nash: serving shared files on http://%s (ctrl+c stops)\n", ln.Addr())
	if !loopback {
		fmt.Fprintln(io.err, "nash: this address is not loopback: anyone who can reach it and holds a link can download")
	}
	log := slog.New(slog.NewTextHandler(io.err, nil))
	return share.Serve(ctx, ln, share.Handler(store, nil, share.Logger(log)))
}

// serveAddr is the server's address: the flag, else what the options
// resolved (NASH_SERVE_ADDR, serve.addr in the config file, the default).
func serveAddr(g *options, flag string) (string, error) {
	addr := flag
	if addr == "" {
		addr = g.serveAddr
	}
	if err := checkServeAddr(addr); err != nil {
		return "", err
	}
	return addr, nil
}

// isLoopback reports whether addr (HOST:PORT) listens on loopback only. An
// empty host means every interface; a host name other than localhost is
// not looked up and counts as not loopback.
func isLoopback(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, usageError{fmt.Sprintf("serve address %q: want HOST:PORT", addr)}
	}
	if strings.EqualFold(host, "localhost") {
		return true, nil
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return false, nil
	}
	return ip.IsLoopback(), nil
}

// shareBaseURL is the base of links: NASH_SHARE_URL, else serve.url in the
// config file, else http:// and the server's address (with this machine's
// name when the address is every interface).
func shareBaseURL(g *options, addrFlag string) (string, string, error) {
	addr, err := serveAddr(g, addrFlag)
	if err != nil {
		return "", "", err
	}
	if g.shareURL != "" {
		return g.shareURL, addr, nil
	}
	host, port, _ := net.SplitHostPort(addr)
	if ip, err := netip.ParseAddr(host); host == "" || (err == nil && ip.IsUnspecified()) {
		if h, err := os.Hostname(); err == nil && h != "" {
			host = h
		} else {
			host = "localhost"
		}
	}
	return "http://" + net.JoinHostPort(host, port), addr, nil
}

// openShareStore opens the share store in the state dir. It does not open
// the sandbox.
func openShareStore(g *options) (*share.Store, error) {
	return share.Open(g.stateDir)
}
