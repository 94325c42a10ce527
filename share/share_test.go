//go:build unix

package share_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nash-shell/nash/share"
)

// clock is a settable clock for the handler.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }

func (c *clock) Set(t time.Time) { c.mu.Lock(); c.now = t; c.mu.Unlock() }

var t0 = time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)

// fixture is a store, a server on it and a directory of files.
type fixture struct {
	t     *testing.T
	dir   string // files to share live here
	store *share.Store
	clock *clock
	srv   *httptest.Server
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	store, err := share.Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, dir: t.TempDir(), store: store, clock: &clock{now: t0}}
	f.srv = httptest.NewServer(share.Handler(store, f.clock.Now))
	t.Cleanup(f.srv.Close)
	return f
}

// file writes a file of n random bytes (or data, if given) and returns its path.
func (f *fixture) file(name string, data []byte) string {
	f.t.Helper()
	p := filepath.Join(f.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		f.t.Fatal(err)
	}
	return p
}

// share shares path for a day from t0 and returns the token.
func (f *fixture) share(path string) (share.Share, string) {
	f.t.Helper()
	sh, token, err := f.store.Create(context.Background(), path, t0, 24*time.Hour)
	if err != nil {
		f.t.Fatal(err)
	}
	return sh, token
}

// get sends method to the raw request-target path (sent exactly as given)
// with extra headers, and returns the response with its body read.
func (f *fixture) get(method, path string, hdr ...string) (*http.Response, []byte) {
	f.t.Helper()
	req, err := http.NewRequest(method, f.srv.URL, nil)
	if err != nil {
		f.t.Fatal(err)
	}
	req.URL.Opaque = path // the request line carries path verbatim
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		f.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		f.t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return resp, body
}

// want404 checks that path gets the generic 404.
func (f *fixture) want404(path string) {
	f.t.Helper()
	resp, body := f.get("GET", path)
	if resp.StatusCode != http.StatusNotFound || string(body) != "404 page not found\n" {
		f.t.Errorf("GET %s: %d %q, want the generic 404", path, resp.StatusCode, trim(body))
	}
	if cd := resp.Header.Get("Content-Disposition"); cd != "" {
		f.t.Errorf("GET %s: 404 with Content-Disposition %q", path, cd)
	}
}

func trim(b []byte) string {
	if len(b) > 60 {
		return string(b[:60]) + "..."
	}
	return string(b)
}

func randomBytes(t *testing.T, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDownload(t *testing.T) {
	f := newFixture(t)
	data := randomBytes(t, 100_000)
	p := f.file("report.pdf", data)
	sh, token := f.share(p)
	if len(token) != share.TokenLen || !share.ValidToken(token) {
		t.Fatalf("token %q: want %d base64url characters", token, share.TokenLen)
	}
	if sh.Path != p || sh.Name() != "report.pdf" || !sh.Expires.Equal(t0.Add(24*time.Hour)) {
		t.Errorf("share = %+v", sh)
	}
	for _, path := range []string{"/s/" + token, "/s/" + token + "/report.pdf"} {
		resp, body := f.get("GET", path)
		if resp.StatusCode != http.StatusOK || !bytes.Equal(body, data) {
			t.Fatalf("GET %s: %d, %d bytes; want 200 and the file's %d bytes", path, resp.StatusCode, len(body), len(data))
		}
		if got := resp.Header.Get("Content-Type"); got != "application/pdf" {
			t.Errorf("Content-Type = %q", got)
		}
		_, params, err := mime.ParseMediaType(resp.Header.Get("Content-Disposition"))
		if err != nil || params["filename"] != "report.pdf" {
			t.Errorf("Content-Disposition = %q (%v)", resp.Header.Get("Content-Disposition"), err)
		}
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("Accept-Ranges") != "bytes" {
			t.Errorf("headers = %v", resp.Header)
		}
	}
	// HEAD: the length, no body.
	resp, body := f.get("HEAD", "/s/"+token)
	if resp.StatusCode != http.StatusOK || len(body) != 0 || resp.ContentLength != int64(len(data)) {
		t.Errorf("HEAD: %d, Content-Length %d, %d body bytes", resp.StatusCode, resp.ContentLength, len(body))
	}
	// If-Modified-Since with the file's time: 304.
	resp, _ = f.get("GET", "/s/"+token, "If-Modified-Since", resp.Header.Get("Last-Modified"))
	if resp.StatusCode != http.StatusNotModified {
		t.Errorf("If-Modified-Since: %d, want 304", resp.StatusCode)
	}
	// A changed file (in place: same inode) is served as it is now.
	data2 := []byte("short now")
	if err := os.WriteFile(p, data2, 0o644); err != nil {
		t.Fatal(err)
	}
	if resp, body := f.get("GET", "/s/"+token); resp.StatusCode != 200 || !bytes.Equal(body, data2) {
		t.Errorf("after an in-place write: %d %q", resp.StatusCode, trim(body))
	}
}

func TestRange(t *testing.T) {
	f := newFixture(t)
	data := randomBytes(t, 10_000)
	_, token := f.share(f.file("data.bin", data))
	url := "/s/" + token + "/data.bin"
	for _, tc := range []struct {
		rng          string
		from, to     int // inclusive
		contentRange string
	}{
		{"bytes=0-9", 0, 9, "bytes 0-9/10000"},
		{"bytes=9990-", 9990, 9999, "bytes 9990-9999/10000"},
		{"bytes=-5", 9995, 9999, "bytes 9995-9999/10000"},
		{"bytes=100-199", 100, 199, "bytes 100-199/10000"},
		{"bytes=9000-20000", 9000, 9999, "bytes 9000-9999/10000"},
	} {
		resp, body := f.get("GET", url, "Range", tc.rng)
		if resp.StatusCode != http.StatusPartialContent {
			t.Errorf("Range %s: status %d, want 206", tc.rng, resp.StatusCode)
			continue
		}
		if got := resp.Header.Get("Content-Range"); got != tc.contentRange {
			t.Errorf("Range %s: Content-Range %q, want %q", tc.rng, got, tc.contentRange)
		}
		if !bytes.Equal(body, data[tc.from:tc.to+1]) {
			t.Errorf("Range %s: %d bytes that are not bytes %d-%d of the file", tc.rng, len(body), tc.from, tc.to)
		}
	}

	// Several ranges: multipart/byteranges, each part its bytes.
	resp, body := f.get("GET", url, "Range", "bytes=0-4,5000-5009,-3")
	mt, params, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode != http.StatusPartialContent || err != nil || mt != "multipart/byteranges" {
		t.Fatalf("multiple ranges: %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	wantParts := []struct {
		from, to int
		cr       string
	}{{0, 4, "bytes 0-4/10000"}, {5000, 5009, "bytes 5000-5009/10000"}, {9997, 9999, "bytes 9997-9999/10000"}}
	for i, w := range wantParts {
		p, err := mr.NextPart()
		if err != nil {
			t.Fatalf("part %d: %v", i, err)
		}
		got, _ := io.ReadAll(p)
		if p.Header.Get("Content-Range") != w.cr || !bytes.Equal(got, data[w.from:w.to+1]) {
			t.Errorf("part %d: Content-Range %q, %d bytes; want %q", i, p.Header.Get("Content-Range"), len(got), w.cr)
		}
	}
	if _, err := mr.NextPart(); err != io.EOF {
		t.Errorf("after %d parts: %v, want EOF", len(wantParts), err)
	}

	// A range past the end: 416.
	if resp, _ := f.get("GET", url, "Range", "bytes=10000-"); resp.StatusCode != http.StatusRequestedRangeNotSatisfiable {
		t.Errorf("range past the end: %d, want 416", resp.StatusCode)
	}
	// If-Range with the current ETag: the range; with another: the whole file.
	resp, _ = f.get("HEAD", url)
	etag := resp.Header.Get("ETag")
	if etag == "" {
		t.Fatal("no ETag")
	}
	if resp, body := f.get("GET", url, "Range", "bytes=0-9", "If-Range", etag); resp.StatusCode != 206 || len(body) != 10 {
		t.Errorf("If-Range current: %d, %d bytes; want 206, 10", resp.StatusCode, len(body))
	}
	if resp, body := f.get("GET", url, "Range", "bytes=0-9", "If-Range", `"stale"`); resp.StatusCode != 200 || len(body) != len(data) {
		t.Errorf("If-Range stale: %d, %d bytes; want 200, whole file", resp.StatusCode, len(body))
	}
}

func TestExpiry(t *testing.T) {
	f := newFixture(t)
	p := f.file("a.txt", []byte("hello"))
	ctx := context.Background()
	sh, token, err := f.store.Create(ctx, p, t0, 3*24*time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if !sh.Expires.Equal(t0.Add(72 * time.Hour)) {
		t.Fatalf("expires %v", sh.Expires)
	}
	for _, tc := range []struct {
		at   time.Time
		want int
	}{
		{t0, 200},
		{t0.Add(72*time.Hour - time.Nanosecond), 200},
		{t0.Add(72 * time.Hour), 404},
		{t0.Add(100 * time.Hour), 404},
		{t0.Add(time.Hour), 200}, // the clock is the handler's, nothing is deleted by looking
	} {
		f.clock.Set(tc.at)
		if tc.want == 404 {
			f.want404("/s/" + token)
			if _, err := f.store.Lookup(ctx, token, tc.at); !errors.Is(err, share.ErrExpired) {
				t.Errorf("Lookup at %v: %v, want ErrExpired", tc.at, err)
			}
			continue
		}
		if resp, body := f.get("GET", "/s/"+token); resp.StatusCode != 200 || string(body) != "hello" {
			t.Errorf("at %v: %d %q, want 200", tc.at, resp.StatusCode, body)
		}
	}
	// A new share drops the expired ones from the store.
	p2 := f.file("b.txt", []byte("b"))
	if _, _, err := f.store.Create(ctx, p2, t0.Add(80*time.Hour), time.Hour); err != nil {
		t.Fatal(err)
	}
	list, err := f.store.List(ctx)
	if err != nil || len(list) != 1 || list[0].Path != p2 {
		t.Errorf("list after expiry = %+v, %v; want only b.txt", list, err)
	}
	// Durations out of range are refused.
	for _, d := range []time.Duration{0, -time.Hour, share.MaxTTL + time.Hour} {
		if _, _, err := f.store.Create(ctx, p, t0, d); err == nil {
			t.Errorf("Create for %v: no error", d)
		}
	}
}

func TestRevoke(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	shA, tokA := f.share(f.file("a.txt", []byte("aaa")))
	_, tokB := f.share(f.file("b.txt", []byte("bbb")))
	shC, tokC := f.share(f.file("c.txt", []byte("ccc")))
	for _, tok := range []string{tokA, tokB, tokC} {
		if resp, _ := f.get("GET", "/s/"+tok); resp.StatusCode != 200 {
			t.Fatalf("before revoke: %d", resp.StatusCode)
		}
	}
	// By ID, and by token.
	if got, err := f.store.Revoke(ctx, shA.ID); err != nil || got.Path != shA.Path {
		t.Fatalf("revoke by ID: %+v, %v", got, err)
	}
	if got, err := f.store.Revoke(ctx, tokC); err != nil || got.ID != shC.ID {
		t.Fatalf("revoke by token: %+v, %v", got, err)
	}
	f.want404("/s/" + tokA)
	f.want404("/s/" + tokC + "/c.txt")
	if resp, body := f.get("GET", "/s/"+tokB); resp.StatusCode != 200 || string(body) != "bbb" {
		t.Errorf("the share left: %d %q", resp.StatusCode, body)
	}
	for _, ref := range []string{shA.ID, tokA, "nonsense", "", shA.ID[:6]} {
		if _, err := f.store.Revoke(ctx, ref); !errors.Is(err, share.ErrNotFound) {
			t.Errorf("revoke %q: %v, want ErrNotFound", ref, err)
		}
	}
	list, err := f.store.List(ctx)
	if err != nil || len(list) != 1 {
		t.Errorf("list = %+v, %v; want one share", list, err)
	}
}

// TestNotFoundSays nothing: an unknown, an expired and a revoked token get
// byte-identical responses.
func TestNotFoundSaysNothing(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	_, expired, err := f.store.Create(ctx, f.file("e.txt", []byte("e")), t0.Add(-2*time.Hour), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	_, revoked := f.share(f.file("r.txt", []byte("r")))
	if _, err := f.store.Revoke(ctx, revoked); err != nil {
		t.Fatal(err)
	}
	unknown := strings.Repeat("A", share.TokenLen-1) + "A"
	dump := func(tok string) string {
		resp, body := f.get("GET", "/s/"+tok)
		resp.Header.Del("Date")
		return fmt.Sprint(resp.StatusCode, resp.Header, string(body))
	}
	want := dump(unknown)
	if !strings.HasPrefix(want, "404") {
		t.Fatalf("unknown token: %s", want)
	}
	for name, tok := range map[string]string{"expired": expired, "revoked": revoked} {
		if got := dump(tok); got != want {
			t.Errorf("%s token: %s\nunknown token: %s", name, got, want)
		}
	}
	// Other methods, and HEAD on an unknown token.
	for _, m := range []string{"POST", "PUT", "DELETE", "OPTIONS"} {
		if resp, _ := f.get(m, "/s/"+unknown); resp.StatusCode != 404 {
			t.Errorf("%s: %d", m, resp.StatusCode)
		}
	}
	_, live := f.share(f.file("l.txt", []byte("live")))
	if resp, body := f.get("POST", "/s/"+live); resp.StatusCode != 404 || string(body) == "live" {
		t.Errorf("POST to a live share: %d %q", resp.StatusCode, body)
	}
	if resp, body := f.get("HEAD", "/s/"+unknown); resp.StatusCode != 404 || len(body) != 0 {
		t.Errorf("HEAD unknown: %d, %d bytes", resp.StatusCode, len(body))
	}
}

func TestTraversal(t *testing.T) {
	f := newFixture(t)
	secret := "SECRET-NOT-SHARED"
	f.file("secret.txt", []byte(secret))
	f.file("sub/other.txt", []byte(secret))
	_, token := f.share(f.file("sub/shared.txt", []byte("shared")))
	_, token2 := f.share(f.file("two.txt", []byte("two")))
	// The path that works, so the table below is known to reach the handler.
	if resp, body := f.get("GET", "/s/"+token+"/shared.txt"); resp.StatusCode != 200 || string(body) != "shared" {
		t.Fatalf("the real link: %d %q", resp.StatusCode, body)
	}
	for _, path := range []string{
		"/s/../secret.txt",
		"/s/../../../../etc/passwd",
		"/s/%2e%2e/secret.txt",
		"/s/%2E%2E%2Fsecret.txt",
		"/s/" + token + "/..",
		"/s/" + token + "/../secret.txt",
		"/s/" + token + "/%2e%2e",
		"/s/" + token + "/%2e%2e%2fsecret.txt",
		"/s/" + token + "/%2E%2E%2F%2E%2E%2Fsecret.txt",
		"/s/" + token + "/..%2fother.txt",
		"/s/" + token + "/shared.txt%2f..%2fother.txt",
		"/s/" + token + "/%252e%252e%252fsecret.txt", // double-encoded
		"/s/" + token + "/%252Fetc%252Fpasswd",
		"/s/" + token + "%2fshared.txt",
		"/s/" + token + "%2Fshared.txt",
		"/s/" + token + "/shared.txt/",
		"/s/" + token + "/shared.txt/extra",
		"/s/" + token + "/shared.txt/../other.txt",
		"/s/" + token + "/",
		"/s/" + token + "/.",
		"/s/" + token + "//shared.txt",
		"/s/" + token + "/shared.txt%00",
		"/s/" + token + "/shared.txt%00.png",
		"/s/" + token + "/other.txt", // a name that is not the file's
		"/s/" + token + "/two.txt",   // another share's name
		"/s/" + token + "/" + token2,
		"/s/" + token + "/" + "shared%2etxt%2f", // escaped dot is fine, escaped slash is not
		"/s/" + token + "?file=../secret.txt",
		"/s/" + token + "x",
		"/s/" + token[:len(token)-1],
		"/s/" + token + "=",
		"/s/" + strings.ReplaceAll(token, token[:1], "%"+fmt.Sprintf("%02X", token[0])),
		"/s//" + token,
		"/s/./" + token,
		"/s/x/../" + token,
		"/x/../s/" + token,
		"//s/" + token,
		"/S/" + token,
		"/s",
		"/s/",
		"/",
		"/etc/passwd",
		"/secret.txt",
		"/s/%00",
	} {
		resp, body := f.get("GET", path)
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d %q, want 404", path, resp.StatusCode, trim(body))
		}
		if bytes.Contains(body, []byte(secret)) || bytes.Contains(body, []byte("root:")) {
			t.Errorf("GET %s leaked a file that is not shared", path)
		}
	}
	// An escaped character in the name is decoded and then must be the name.
	if resp, body := f.get("GET", "/s/"+token+"/shared%2etxt"); resp.StatusCode != 200 || string(body) != "shared" {
		t.Errorf("escaped dot in the name: %d %q", resp.StatusCode, body)
	}
}

// TestReplaced: after sharing, the path is made into a symbolic link to
// /etc/passwd, another file, or its directory into a link to another
// directory; none is served.
func TestReplaced(t *testing.T) {
	for _, tc := range []struct {
		name    string
		replace func(t *testing.T, f *fixture, p string)
	}{
		{"symlink to /etc/passwd", func(t *testing.T, f *fixture, p string) {
			must(t, os.Remove(p))
			must(t, os.Symlink("/etc/passwd", p))
		}},
		{"symlink to another file", func(t *testing.T, f *fixture, p string) {
			other := f.file("other.txt", []byte("SECRET"))
			must(t, os.Remove(p))
			must(t, os.Symlink(other, p))
		}},
		{"file renamed over it", func(t *testing.T, f *fixture, p string) {
			other := f.file("new.txt", []byte("SECRET"))
			must(t, os.Rename(other, p))
		}},
		{"removed", func(t *testing.T, f *fixture, p string) {
			must(t, os.Remove(p))
		}},
		{"directory", func(t *testing.T, f *fixture, p string) {
			must(t, os.Remove(p))
			must(t, os.Mkdir(p, 0o755))
		}},
		{"fifo", func(t *testing.T, f *fixture, p string) {
			must(t, os.Remove(p))
			must(t, syscall.Mkfifo(p, 0o644))
		}},
		{"parent directory made a symlink", func(t *testing.T, f *fixture, p string) {
			f.file("elsewhere/doc.txt", []byte("SECRET"))
			must(t, os.Rename(filepath.Dir(p), filepath.Join(f.dir, "old")))
			must(t, os.Symlink(filepath.Join(f.dir, "elsewhere"), filepath.Dir(p)))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			p := f.file("d/doc.txt", []byte("the doc"))
			_, token := f.share(p)
			if resp, body := f.get("GET", "/s/"+token); resp.StatusCode != 200 || string(body) != "the doc" {
				t.Fatalf("before: %d %q", resp.StatusCode, body)
			}
			tc.replace(t, f, p)
			resp, body := f.get("GET", "/s/"+token+"/doc.txt")
			if resp.StatusCode != 404 || bytes.Contains(body, []byte("SECRET")) || bytes.Contains(body, []byte("root:")) {
				t.Errorf("after: %d %q, want 404", resp.StatusCode, trim(body))
			}
		})
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestCreateRefuses(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	fifo := filepath.Join(f.dir, "fifo")
	must(t, syscall.Mkfifo(fifo, 0o644))
	for _, tc := range []struct {
		path  string
		isDir bool
	}{
		{f.dir, true},
		{"/", true},
		{fifo, false},
		{"/dev/null", false},
	} {
		_, _, err := f.store.Create(ctx, tc.path, t0, time.Hour)
		var nr *share.NotRegularError
		if !errors.As(err, &nr) || nr.Mode.IsDir() != tc.isDir {
			t.Errorf("share %s: %v, want a NotRegularError", tc.path, err)
		}
	}
	if _, _, err := f.store.Create(ctx, filepath.Join(f.dir, "missing"), t0, time.Hour); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("share a missing file: %v", err)
	}
	if list, err := f.store.List(ctx); err != nil || len(list) != 0 {
		t.Errorf("refused shares were stored: %+v, %v", list, err)
	}
	// A symbolic link is resolved: the share is of the file it points to.
	real := f.file("real.txt", []byte("real"))
	link := filepath.Join(f.dir, "link.txt")
	must(t, os.Symlink(real, link))
	sh, token := f.share(link)
	if sh.Path != real {
		t.Errorf("share of a link: path %s, want %s", sh.Path, real)
	}
	if resp, body := f.get("GET", "/s/"+token+"/real.txt"); resp.StatusCode != 200 || string(body) != "real" {
		t.Errorf("share of a link: %d %q", resp.StatusCode, body)
	}
}

func TestConcurrentDownloads(t *testing.T) {
	f := newFixture(t)
	const n = 20
	files := make([][]byte, 4)
	tokens := make([]string, len(files))
	for i := range files {
		files[i] = randomBytes(t, 200_000+i)
		_, tokens[i] = f.share(f.file(fmt.Sprintf("f%d.bin", i), files[i]))
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*n)
	client := f.srv.Client()
	for g := range n {
		wg.Go(func() {
			i := g % len(files)
			from := g * 1000
			for _, rng := range []string{"", fmt.Sprintf("bytes=%d-%d", from, from+4999)} {
				req, _ := http.NewRequest("GET", f.srv.URL+"/s/"+tokens[i], nil)
				if rng != "" {
					req.Header.Set("Range", rng)
				}
				resp, err := client.Do(req)
				if err != nil {
					errs <- err
					return
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				want := files[i]
				if rng != "" {
					want = want[from : from+5000]
				}
				if err != nil || !bytes.Equal(body, want) {
					errs <- fmt.Errorf("goroutine %d range %q: %d, %d bytes, %v", g, rng, resp.StatusCode, len(body), err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestConcurrentCreate: shares made at once by many goroutines (each its own
// lock file descriptor, as separate processes would be) are all kept.
func TestConcurrentCreate(t *testing.T) {
	f := newFixture(t)
	const n = 16
	p := f.file("x.txt", []byte("x"))
	tokens := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			_, tok, err := f.store.Create(context.Background(), p, t0, time.Hour)
			if err != nil {
				t.Error(err)
			}
			tokens[i] = tok
		})
	}
	wg.Wait()
	list, err := f.store.List(context.Background())
	if err != nil || len(list) != n {
		t.Fatalf("%d shares stored, %v; want %d", len(list), err, n)
	}
	for _, tok := range tokens {
		if resp, _ := f.get("GET", "/s/"+tok); resp.StatusCode != 200 {
			t.Errorf("token from a concurrent share: %d", resp.StatusCode)
		}
	}
}

func TestStoreKeepsNoToken(t *testing.T) {
	f := newFixture(t)
	sh, token := f.share(f.file("a.txt", []byte("a")))
	b, err := os.ReadFile(f.store.Path())
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(token)) || !bytes.Contains(b, []byte(sh.Hash)) {
		t.Errorf("store file holds the token, or not its hash:\n%s", b)
	}
	fi, err := os.Stat(f.store.Path())
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("store file mode %v, %v; want 0600", fi.Mode(), err)
	}
}

func TestBadStore(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, path string)
		want  string
	}{
		{"garbage", func(t *testing.T, p string) { must(t, os.WriteFile(p, []byte("{not json"), 0o600)) }, "not a share store"},
		{"wrong version", func(t *testing.T, p string) {
			must(t, os.WriteFile(p, []byte(`{"version": 99, "shares": []}`), 0o600))
		}, "version 99"},
		{"a directory", func(t *testing.T, p string) { must(t, os.Mkdir(p, 0o700)) }, "is a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			p := f.file("a.txt", []byte("a"))
			tc.setup(t, f.store.Path())
			check := func(what string, err error) {
				t.Helper()
				var se *share.StoreError
				if !errors.As(err, &se) || se.Path != f.store.Path() ||
					!strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), f.store.Path()) {
					t.Errorf("%s: %v, want a StoreError naming %s and saying %q", what, err, f.store.Path(), tc.want)
				}
			}
			_, _, err := f.store.Create(ctx, p, t0, time.Hour)
			check("Create", err)
			_, err = f.store.List(ctx)
			check("List", err)
			_, err = f.store.Revoke(ctx, "0123456789ab")
			check("Revoke", err)
			_, err = f.store.Lookup(ctx, strings.Repeat("A", share.TokenLen), t0)
			check("Lookup", err)
			f.want404("/s/" + strings.Repeat("A", share.TokenLen))
		})
	}
}

func TestContentDisposition(t *testing.T) {
	f := newFixture(t)
	for _, name := range []string{`quote"and\back.txt`, "new\nline\r.txt", "naïve café.txt", "semi;colon=x.txt", "tab\there"} {
		_, token := f.share(f.file(name, []byte("x")))
		resp, body := f.get("GET", share.URL("", token, name))
		if resp.StatusCode != 200 || string(body) != "x" {
			t.Errorf("%q: %d %q", name, resp.StatusCode, body)
			continue
		}
		cd := resp.Header.Get("Content-Disposition")
		_, params, err := mime.ParseMediaType(cd)
		if strings.ContainsAny(cd, "\r\n") || err != nil || params["filename"] != name {
			t.Errorf("%q: Content-Disposition %q reads as %q (%v)", name, cd, params["filename"], err)
		}
	}
}

func TestServe(t *testing.T) {
	store, err := share.Open(t.TempDir())
	must(t, err)
	p := filepath.Join(t.TempDir(), "f.txt")
	must(t, os.WriteFile(p, []byte("served"), 0o644))
	_, token, err := store.Create(context.Background(), p, time.Now(), time.Hour)
	must(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- share.Serve(ctx, ln, share.Handler(store, nil)) }()
	resp, err := http.Get(share.URL("http://"+ln.Addr().String(), token, "f.txt"))
	must(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "served" {
		t.Errorf("GET: %d %q", resp.StatusCode, body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve after cancel: %v", err)
	}
	if _, err := http.Get("http://" + ln.Addr().String() + "/"); err == nil {
		t.Error("the server still answers after Serve returned")
	}
}

func TestURLParsesBack(t *testing.T) {
	tok := strings.Repeat("a", share.TokenLen-1) + "A"
	for _, name := range []string{"a.txt", "a b.txt", "ä/ö", "%2f", "..x", "new\nline"} {
		u := share.URL("http://h:1", tok, name)
		path := strings.TrimPrefix(u, "http://h:1")
		gotTok, gotName, ok := share.ParsePath(path)
		wantOK := !strings.Contains(name, "/")
		if ok != wantOK || (ok && (gotTok != tok || gotName != name)) {
			t.Errorf("URL(%q) = %s parses as %q %q %v", name, u, gotTok, gotName, ok)
		}
	}
}

func FuzzParsePath(f *testing.F) {
	tok := strings.Repeat("A", share.TokenLen)
	for _, s := range []string{"/s/" + tok, "/s/" + tok + "/a.txt", "/s/../x", "/s/" + tok + "/%2e%2e", "/s/" + tok + "%2f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		token, name, ok := share.ParsePath(path)
		if !ok {
			if token != "" || name != "" {
				t.Errorf("%q: not ok but %q %q", path, token, name)
			}
			return
		}
		if !share.ValidToken(token) || !strings.HasPrefix(path, "/s/"+token) {
			t.Errorf("%q: token %q", path, token)
		}
		if strings.ContainsAny(name, "/\x00") || name == "." || name == ".." {
			t.Errorf("%q: name %q", path, name)
		}
		if name != "" {
			t2, n2, ok2 := share.ParsePath(strings.TrimPrefix(share.URL("", token, name), ""))
			if !ok2 || t2 != token || n2 != name {
				t.Errorf("%q: URL of %q %q does not parse back", path, token, name)
			}
		}
	})
}
