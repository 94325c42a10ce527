package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Version is one version of a file that nash knows.
type Version struct {
	N      int       `json:"n"`     // 1 is the oldest
	Until  time.Time `json:"until"` // when it stopped being the file's content; zero for the current one
	Size   int64     `json:"size"`
	Source string    `json:"source"` // "transaction ID", "recorded", "current"
	TxID   string    `json:"tx,omitempty"`
	// Content is where its bytes are: in an undo layer, in the version
	// recorder, or the live file.
	Content string `json:"-"`
}

// History lists the versions of path that nash knows, oldest first: those
// its transactions displaced (still in their undo layers), those the
// version recorder kept of changes made outside nash, and the current one.
func (s *Sandbox) History(path string) ([]Version, error) {
	l := s.layout()
	txs, err := l.listTx()
	if err != nil {
		return nil, err
	}
	var out []Version
	for _, t := range txs {
		if t.State == StateForgotten {
			continue
		}
		recs, err := readManifest(filepath.Join(l.layerDir(t.ID), manifestFile))
		if err != nil {
			continue
		}
		for _, r := range recs {
			if r.Stash == "" || !under(path, r.Path) {
				continue
			}
			q := filepath.Join(l.layerDir(t.ID), "objects", r.Stash)
			if path != r.Path {
				q = filepath.Join(q, strings.TrimPrefix(path, r.Path+"/"))
			}
			fi, err := os.Lstat(q)
			if err != nil || !fi.Mode().IsRegular() {
				continue // undone (moved back), or not a file
			}
			out = append(out, Version{Until: t.Time, Size: fi.Size(), Source: "transaction " + t.ID, TxID: t.ID, Content: q})
		}
	}
	rec, err := s.recorded(path)
	if err != nil {
		return nil, err
	}
	out = append(out, rec...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Until.Before(out[j].Until) })
	if fi, err := os.Lstat(path); err == nil && fi.Mode().IsRegular() {
		out = append(out, Version{Size: fi.Size(), Source: "current", Content: path})
	}
	for i := range out {
		out[i].N = i + 1
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("nash knows no version of %s", strconvQuote(path))
	}
	return out, nil
}

// PickVersion chooses a version: by number (1 is the oldest), by date
// (the version that was the file's content then), or by going back n
// versions from the current one. Exactly one of them must be set.
func PickVersion(vs []Version, number int, date time.Time, back int) (Version, error) {
	switch {
	case number > 0:
		if number > len(vs) {
			return Version{}, fmt.Errorf("there are %d versions; no version %d", len(vs), number)
		}
		return vs[number-1], nil
	case !date.IsZero():
		for _, v := range vs {
			if v.Until.IsZero() || v.Until.After(date) {
				return v, nil
			}
		}
		return vs[len(vs)-1], nil
	case back > 0:
		if back >= len(vs) {
			return Version{}, fmt.Errorf("there are only %d older versions", len(vs)-1)
		}
		return vs[len(vs)-1-back], nil
	}
	return Version{}, errors.New("say which version: a number, a date or how many back")
}

// Rollback makes v the content of path again, as a transaction: the
// current content goes to its undo layer, so the rollback can be undone.
func (s *Sandbox) Rollback(ctx context.Context, path string, v Version) (*Tx, error) {
	if v.Source == "current" {
		return nil, errors.New("that version is the current one: nothing to roll back")
	}
	l := s.layout()
	lk, err := l.lock(ctx)
	if err != nil {
		return nil, err
	}
	defer lk.unlock()
	id := l.nextID(false)
	// The version is copied in beside the undo layer, then moved into
	// place like any commit.
	incoming := filepath.Join(l.layerDir(id), "incoming")
	if err := os.MkdirAll(incoming, 0o700); err != nil {
		return nil, err
	}
	src := filepath.Join(incoming, "0")
	if err := copyTree(v.Content, src); err != nil {
		_ = removeAll(l.layerDir(id))
		return nil, fmt.Errorf("copy version %d of %s: %w", v.N, strconvQuote(path), err)
	}
	w := &wal{Tx: id, Kind: "commit", Ops: []walOp{{Path: path, Src: src, UndoOf: -1}}}
	records, err := s.execute(w)
	if err != nil {
		return nil, err
	}
	tx := &Tx{
		ID: id, Time: time.Now().UTC(), Script: fmt.Sprintf("nash rollback %s (to version %d, %s)", path, v.N, v.Source),
		State: StateCommitted, Changes: 1, Ops: len(records),
		UndoBytes: duSize(filepath.Join(l.layerDir(id), "objects")),
	}
	if err := s.stand(w, tx, nil); err != nil {
		return nil, err
	}
	_ = removeAll(incoming)
	return tx, nil
}

// versionsDir holds the recorder's copies, one dir per file.
func (l layout) versionsDir() string { return filepath.Join(string(l), "versions") }

func versionKey(path string) string {
	h := sha256.Sum256([]byte(path))
	return hex.EncodeToString(h[:12])
}

// RecordVersion keeps a copy of path's current content, for files changed
// outside nash (the index watcher calls it). Identical content is kept
// once; past budget bytes the oldest copies of any file go first.
func (s *Sandbox) RecordVersion(path string, budget int64) error {
	fi, err := os.Lstat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > budget {
		return nil
	}
	dir := filepath.Join(s.layout().versionsDir(), versionKey(path))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "path"), []byte(path), 0o600); err != nil {
		return err
	}
	if last := newestCopy(dir); last != "" && sameFile(last, path) {
		return nil
	}
	name := filepath.Join(dir, strconv.FormatInt(time.Now().UnixNano(), 10))
	if err := copyFile(path, name+".tmp"); err != nil {
		return err
	}
	if err := os.Rename(name+".tmp", name); err != nil {
		return err
	}
	return s.trimVersions(budget)
}

// newestCopy is the most recent copy in a recorder dir, or "".
func newestCopy(dir string) string {
	names, _ := readDirNames(dir)
	var best int64 = -1
	for _, n := range names {
		if v, err := strconv.ParseInt(n, 10, 64); err == nil && v > best {
			best = v
		}
	}
	if best < 0 {
		return ""
	}
	return filepath.Join(dir, strconv.FormatInt(best, 10))
}

// recorded lists the recorder's copies of path. A copy is the content the
// file had from when it was recorded until the next record.
func (s *Sandbox) recorded(path string) ([]Version, error) {
	dir := filepath.Join(s.layout().versionsDir(), versionKey(path))
	names, err := readDirNames(dir)
	if err != nil {
		return nil, nil
	}
	var stamps []int64
	for _, n := range names {
		if v, err := strconv.ParseInt(n, 10, 64); err == nil {
			stamps = append(stamps, v)
		}
	}
	sort.Slice(stamps, func(i, j int) bool { return stamps[i] < stamps[j] })
	var out []Version
	for i, st := range stamps {
		q := filepath.Join(dir, strconv.FormatInt(st, 10))
		fi, err := os.Lstat(q)
		if err != nil {
			continue
		}
		until := time.Now().UTC()
		if i+1 < len(stamps) {
			until = time.Unix(0, stamps[i+1]).UTC()
		} else if sameFile(q, path) {
			continue // the latest copy is the current content
		}
		out = append(out, Version{Until: until, Size: fi.Size(), Source: "recorded", Content: q})
	}
	return out, nil
}

// trimVersions deletes the oldest recorded copies until at most budget
// bytes are held.
func (s *Sandbox) trimVersions(budget int64) error {
	type copyInfo struct {
		path  string
		stamp int64
		size  int64
	}
	var all []copyInfo
	var total int64
	dirs, _ := os.ReadDir(s.layout().versionsDir())
	for _, d := range dirs {
		dir := filepath.Join(s.layout().versionsDir(), d.Name())
		names, _ := readDirNames(dir)
		for _, n := range names {
			st, err := strconv.ParseInt(n, 10, 64)
			if err != nil {
				continue
			}
			fi, err := os.Lstat(filepath.Join(dir, n))
			if err != nil {
				continue
			}
			all = append(all, copyInfo{filepath.Join(dir, n), st, fi.Size()})
			total += fi.Size()
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].stamp < all[j].stamp })
	for _, c := range all {
		if total <= budget {
			break
		}
		if err := os.Remove(c.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		total -= c.size
	}
	return nil
}

// sameFile reports whether two files have the same bytes.
func sameFile(a, b string) bool {
	fa, err := os.Open(a)
	if err != nil {
		return false
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		return false
	}
	defer fb.Close()
	ha, hb := sha256.New(), sha256.New()
	if _, err := io.Copy(ha, fa); err != nil {
		return false
	}
	if _, err := io.Copy(hb, fb); err != nil {
		return false
	}
	return string(ha.Sum(nil)) == string(hb.Sum(nil))
}
