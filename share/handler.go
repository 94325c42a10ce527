package share

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"path/filepath"
	"time"
)

// notFoundBody is the whole body of every 404: the same for a token that
// never existed, one that expired or was revoked, and any malformed path.
const notFoundBody = "404 page not found\n"

// HandlerOption configures Handler.
type HandlerOption func(*handler)

// Logger sets where the handler logs what it served and why it refused
// (default: nowhere). Logs name shares by ID, never by token.
func Logger(l *slog.Logger) HandlerOption { return func(h *handler) { h.log = l } }

type handler struct {
	store *Store
	clock func() time.Time
	log   *slog.Logger
}

// Handler serves the files of store's live shares at /s/TOKEN and
// /s/TOKEN/NAME, where NAME must be the file's base name. clock says what
// time it is (nil means time.Now); a share is live until its expiry by that
// clock. It answers GET and HEAD with http.ServeContent, so Range,
// If-Range, If-Modified-Since and HEAD work; everything else is 404.
func Handler(store *Store, clock func() time.Time, opts ...HandlerOption) http.Handler {
	h := &handler{store: store, clock: clock}
	for _, o := range opts {
		o(h)
	}
	if h.clock == nil {
		h.clock = time.Now
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	return h
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		h.notFound(ctx, w, r, "", errors.New("method "+r.Method))
		return
	}
	token, name, ok := ParsePath(r.URL.EscapedPath())
	if !ok || r.URL.RawQuery != "" {
		h.notFound(ctx, w, r, "", errors.New("malformed path"))
		return
	}
	sh, err := h.store.Lookup(ctx, token, h.clock())
	if err != nil {
		h.notFound(ctx, w, r, sh.ID, err)
		return
	}
	if name != "" && name != sh.Name() {
		h.notFound(ctx, w, r, sh.ID, fmt.Errorf("name %q is not the file's", name))
		return
	}
	f, id, err := openShared(sh)
	if err != nil {
		h.notFound(ctx, w, r, sh.ID, err)
		return
	}
	defer f.Close()

	hd := w.Header()
	hd.Set("Content-Disposition", contentDisposition(sh.Name()))
	if ct := mime.TypeByExtension(filepath.Ext(sh.Name())); ct != "" {
		hd.Set("Content-Type", ct)
	}
	// A shared HTML or SVG file must not run script at this origin, and the
	// link must not leak through a Referer header.
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Content-Security-Policy", "sandbox; default-src 'none'; img-src 'self'; media-src 'self'; style-src 'unsafe-inline'")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cache-Control", "private, no-cache")
	hd.Set("ETag", fmt.Sprintf(`"%x-%x-%x"`, id.ino, id.size, id.mtime.UnixNano()))
	h.log.InfoContext(ctx, "serve", "share", sh.ID, "method", r.Method, "range", r.Header.Get("Range"), "remote", r.RemoteAddr)
	http.ServeContent(w, r, sh.Name(), id.mtime, f)
}

// notFound answers 404 with the generic body and logs why.
func (h *handler) notFound(ctx context.Context, w http.ResponseWriter, r *http.Request, id string, why error) {
	h.log.InfoContext(ctx, "refuse", "share", id, "method", r.Method, "why", why.Error(), "remote", r.RemoteAddr)
	hd := w.Header()
	hd.Set("Content-Type", "text/plain; charset=utf-8")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusNotFound)
	if r.Method != http.MethodHead {
		io.WriteString(w, notFoundBody)
	}
}

// contentDisposition is an inline Content-Disposition naming the file, with
// the name quoted or RFC 2231-encoded as mime.FormatMediaType sees fit.
func contentDisposition(name string) string {
	if v := mime.FormatMediaType("inline", map[string]string{"filename": name}); v != "" {
		return v
	}
	return "inline"
}
