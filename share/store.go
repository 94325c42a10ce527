package share

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nash-shell/nash/effects"
)

// StoreFile and LockFile are the names of the store's files in its
// directory.
const (
	StoreFile = "shares.json"
	LockFile  = "shares.lock"
)

// storeVersion is the version of the store file's format.
const storeVersion = 1

// MaxTTL is the longest a share can last.
const MaxTTL = 10 * 365 * 24 * time.Hour

// Store is the set of shares, kept in StoreFile in one directory.
type Store struct {
	dir string
}

// storeFile is the JSON form of the store.
type storeFile struct {
	Version int     `json:"version"`
	Shares  []Share `json:"shares"`
}

// Open returns the store in dir, creating dir (mode 0700) if needed. It
// reads nothing yet: a bad store file shows as a *StoreError from the first
// call that reads it.
func Open(dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("open share store: no directory")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("open share store %s: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("open share store: %w", err)
	}
	return &Store{dir: abs}, nil
}

// Path is the store file's path.
func (s *Store) Path() string { return filepath.Join(s.dir, StoreFile) }

// Create shares the file at path from now for ttl. It returns the share and
// its token; the token is not stored and cannot be recovered. Shares that
// have expired by now are dropped from the store on the way.
func (s *Store) Create(ctx context.Context, path string, now time.Time, ttl time.Duration) (Share, string, error) {
	if ttl <= 0 || ttl > MaxTTL {
		return Share{}, "", fmt.Errorf("share %s: duration %v is out of range (more than 0, at most %v)", effects.Quote(path), ttl, MaxTTL)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return Share{}, "", fmt.Errorf("share %s: %w", effects.Quote(path), err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return Share{}, "", fmt.Errorf("share %s: %w", effects.Quote(path), err)
	}
	f, id, err := openNoFollow(real)
	if err != nil {
		var nr *NotRegularError
		if errors.As(err, &nr) {
			return Share{}, "", err
		}
		return Share{}, "", fmt.Errorf("share %s: %w", effects.Quote(path), err)
	}
	f.Close()
	token, hash, err := newToken()
	if err != nil {
		return Share{}, "", err
	}
	sh := Share{
		ID: hash[:idLen], Hash: hash, Path: real, Dev: id.dev, Ino: id.ino, Size: id.size,
		Created: now.UTC(), Expires: now.Add(ttl).UTC(),
	}
	err = s.update(ctx, func(shares []Share) ([]Share, error) {
		kept := shares[:0]
		for _, o := range shares {
			if !o.Expired(now) {
				kept = append(kept, o)
			}
		}
		return append(kept, sh), nil
	})
	if err != nil {
		return Share{}, "", err
	}
	return sh, token, nil
}

// List returns every share in the store, expired ones too, oldest first.
func (s *Store) List(ctx context.Context) ([]Share, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	shares, err := s.read()
	if err != nil {
		return nil, err
	}
	sort.SliceStable(shares, func(i, j int) bool { return shares[i].Created.Before(shares[j].Created) })
	return shares, nil
}

// Revoke removes the share named by ref, a token or a share ID, and returns
// it. It returns ErrNotFound if there is none.
func (s *Store) Revoke(ctx context.Context, ref string) (Share, error) {
	var gone Share
	err := s.update(ctx, func(shares []Share) ([]Share, error) {
		i := find(shares, ref)
		if i < 0 {
			return nil, fmt.Errorf("revoke %s: %w", ref, ErrNotFound)
		}
		gone = shares[i]
		return append(shares[:i], shares[i+1:]...), nil
	})
	return gone, err
}

// Lookup returns the live share for token at now: ErrNotFound for a token
// that is malformed or names no share, ErrExpired for one whose time is up.
func (s *Store) Lookup(ctx context.Context, token string, now time.Time) (Share, error) {
	if err := ctx.Err(); err != nil {
		return Share{}, err
	}
	sum, ok := hashToken(token)
	if !ok {
		return Share{}, ErrNotFound
	}
	shares, err := s.read()
	if err != nil {
		return Share{}, err
	}
	i := findHash(shares, sum[:])
	if i < 0 {
		return Share{}, ErrNotFound
	}
	if shares[i].Expired(now) {
		return shares[i], ErrExpired
	}
	return shares[i], nil
}

// find returns the index of the share that ref (a token or an ID) names, or -1.
func find(shares []Share, ref string) int {
	if sum, ok := hashToken(ref); ok {
		return findHash(shares, sum[:])
	}
	ref = strings.ToLower(ref)
	for i, sh := range shares {
		if len(ref) == idLen && sh.ID == ref {
			return i
		}
	}
	return -1
}

// findHash returns the index of the share with hash sum, or -1. It compares
// every stored hash in constant time.
func findHash(shares []Share, sum []byte) int {
	found := -1
	for i, sh := range shares {
		h, err := hex.DecodeString(sh.Hash)
		if err != nil || len(h) != sha256.Size {
			continue
		}
		if subtle.ConstantTimeCompare(h, sum) == 1 && found < 0 {
			found = i
		}
	}
	return found
}

// read reads the store file; a missing file is an empty store.
func (s *Store) read() ([]Share, error) {
	p := s.Path()
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &StoreError{Path: p, Err: err}
	}
	var sf storeFile
	if err := json.Unmarshal(b, &sf); err != nil {
		return nil, &StoreError{Path: p, Err: fmt.Errorf("not a share store (%w); move it away to start afresh", err)}
	}
	if sf.Version != storeVersion {
		return nil, &StoreError{Path: p, Err: fmt.Errorf("version %d, this nash reads version %d", sf.Version, storeVersion)}
	}
	return sf.Shares, nil
}

// update runs fn on the shares under the store's lock and writes what it
// returns.
func (s *Store) update(ctx context.Context, fn func([]Share) ([]Share, error)) error {
	unlock, err := lockFile(ctx, filepath.Join(s.dir, LockFile))
	if err != nil {
		return fmt.Errorf("lock share store: %w", err)
	}
	defer unlock()
	shares, err := s.read()
	if err != nil {
		return err
	}
	shares, err = fn(shares)
	if err != nil {
		return err
	}
	if shares == nil {
		shares = []Share{}
	}
	b, err := json.MarshalIndent(storeFile{Version: storeVersion, Shares: shares}, "", "  ")
	if err != nil {
		return fmt.Errorf("encode share store: %w", err)
	}
	return writeFileDurably(s.Path(), append(b, '\n'))
}

// writeFileDurably replaces path with data: a temporary file in the same
// directory, fsync, rename over path, fsync of the directory.
func writeFileDurably(path string, data []byte) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".shares-*.tmp")
	if err != nil {
		return fmt.Errorf("write share store: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = f.Chmod(0o600); err != nil {
		return fmt.Errorf("write share store: %w", err)
	}
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("write share store: %w", err)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("write share store: %w", err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("write share store: %w", err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write share store: %w", err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("write share store: sync dir: %w", err)
	}
	defer d.Close()
	if err = d.Sync(); err != nil {
		return fmt.Errorf("write share store: sync dir: %w", err)
	}
	return nil
}
