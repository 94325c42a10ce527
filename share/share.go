package share

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nash-shell/nash/effects"
)

// TokenLen is the length of a token as written in a link.
const TokenLen = 43

// idLen is the number of hex digits of a token's hash that make a share's ID.
const idLen = 12

// URLPrefix is where links live on the server: /s/TOKEN or /s/TOKEN/NAME.
const URLPrefix = "/s/"

// tokenEncoding is base64url without padding, strict so that every token has
// exactly one spelling.
var tokenEncoding = base64.RawURLEncoding.Strict()

// Share is one shared file.
type Share struct {
	ID      string    `json:"id"`   // first 12 hex digits of Hash
	Hash    string    `json:"hash"` // hex SHA-256 of the token's 32 bytes
	Path    string    `json:"path"` // absolute, symbolic links resolved
	Dev     uint64    `json:"dev"`  // device of the file when shared
	Ino     uint64    `json:"ino"`  // inode of the file when shared
	Size    int64     `json:"size"` // size when shared, for listings
	Created time.Time `json:"created"`
	Expires time.Time `json:"expires"`
}

// Name is the file's base name, the NAME of /s/TOKEN/NAME.
func (s Share) Name() string { return filepath.Base(s.Path) }

// Expired reports whether the share has expired at now.
func (s Share) Expired(now time.Time) bool { return !now.Before(s.Expires) }

// URL is the share's link on a server at base (like http://127.0.0.1:7707),
// with the file's name after the token.
func URL(base, token, name string) string {
	return strings.TrimSuffix(base, "/") + URLPrefix + token + "/" + url.PathEscape(name)
}

// ErrNotFound is returned for a token or ID that names no live share:
// never created, revoked, or malformed.
var ErrNotFound = errors.New("no such share")

// ErrExpired is returned by Lookup for a share whose time is up.
var ErrExpired = errors.New("share expired")

// NotRegularError is returned by Create for a path that is not a regular file.
type NotRegularError struct {
	Path string
	Mode os.FileMode
}

func (e *NotRegularError) Error() string {
	what := "not a regular file"
	switch {
	case e.Mode.IsDir():
		what = "a directory"
	case e.Mode&os.ModeNamedPipe != 0:
		what = "a named pipe"
	case e.Mode&os.ModeSocket != 0:
		what = "a socket"
	case e.Mode&os.ModeDevice != 0:
		what = "a device"
	}
	return fmt.Sprintf("%s is %s: only regular files can be shared", effects.Quote(e.Path), what)
}

// ChangedError is returned when a shared path no longer holds the file that
// was shared: it was replaced, removed or turned into a symbolic link.
type ChangedError struct {
	Path string
	Err  error // the open or stat error, if that is how it showed
}

func (e *ChangedError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("shared file %s is gone: %v", effects.Quote(e.Path), e.Err)
	}
	return fmt.Sprintf("shared file %s was replaced after it was shared", effects.Quote(e.Path))
}

func (e *ChangedError) Unwrap() error { return e.Err }

// StoreError is returned when the store file cannot be read or parsed.
type StoreError struct {
	Path string
	Err  error
}

func (e *StoreError) Error() string {
	return fmt.Sprintf("share store %s: %v", effects.Quote(e.Path), e.Err)
}

func (e *StoreError) Unwrap() error { return e.Err }

// newToken returns a fresh token and its hash.
func newToken() (token, hash string, err error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", "", fmt.Errorf("make token: %w", err)
	}
	sum := sha256.Sum256(b[:])
	return tokenEncoding.EncodeToString(b[:]), hex.EncodeToString(sum[:]), nil
}

// hashToken returns the hash of a well-formed token, or ok false.
func hashToken(token string) (sum [sha256.Size]byte, ok bool) {
	if len(token) != TokenLen {
		return sum, false
	}
	b, err := tokenEncoding.DecodeString(token)
	if err != nil || len(b) != 32 {
		return sum, false
	}
	return sha256.Sum256(b), true
}

// ValidToken reports whether s has the form of a token.
func ValidToken(s string) bool {
	_, ok := hashToken(s)
	return ok
}

// ParsePath reads the escaped path of a request (url.URL.EscapedPath) as
// /s/TOKEN or /s/TOKEN/NAME. It accepts nothing else: no empty, dot or
// extra segments, no escapes in the token. NAME is returned unescaped and
// may not contain a slash, even an escaped one.
func ParsePath(escaped string) (token, name string, ok bool) {
	rest, found := strings.CutPrefix(escaped, URLPrefix)
	if !found {
		return "", "", false
	}
	token, enc, hasName := strings.Cut(rest, "/")
	if !ValidToken(token) {
		return "", "", false
	}
	if !hasName {
		return token, "", true
	}
	if enc == "" || strings.Contains(enc, "/") {
		return "", "", false
	}
	name, err := url.PathUnescape(enc)
	if err != nil || name == "" || name == "." || name == ".." ||
		strings.ContainsAny(name, "/\x00") {
		return "", "", false
	}
	return token, name, true
}
