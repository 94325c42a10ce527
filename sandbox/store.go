package sandbox

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/nash-shell/nash/internal/sandboxinit"
	"github.com/nash-shell/nash/sandbox/egress"
)

// TxState is the state of a transaction.
type TxState string

// Transaction states.
const (
	StateCommitted    TxState = "committed"
	StatePartlyUndone TxState = "partly_undone"
	StateUndone       TxState = "undone"
	StateForgotten    TxState = "forgotten" // its undo layer was released
	// StateRolledBack is a commit or undo that failed and was rolled back
	// with paths kept aside (Kept): nothing of it stands.
	StateRolledBack TxState = "rolled_back"
)

// Tx is one transaction: a committed run or an undo.
type Tx struct {
	ID        string    `json:"id"`
	Time      time.Time `json:"time"`
	Script    string    `json:"script,omitempty"`
	Prompt    string    `json:"prompt,omitempty"`
	Dir       string    `json:"dir,omitempty"`
	State     TxState   `json:"state"`
	Changes   int       `json:"changes"`
	UndoBytes int64     `json:"undo_bytes"`
	ExitCode  int       `json:"exit_code"`
	// Undoes is the transaction this one reverses, for an undo.
	Undoes string `json:"undoes,omitempty"`
	// UndoneOps maps an operation index to the transaction that undid it.
	UndoneOps map[int]string `json:"undone_ops,omitempty"`
	// Ops is how many operations the transaction applied.
	Ops int `json:"ops"`
	// Kept names, for a rolled-back transaction, the paths whose old
	// versions could not be put back and where they are kept.
	Kept []Kept `json:"kept,omitempty"`
	// Summary says in plain English what the transaction changed; a
	// model writes it after the commit (see SetSummary). Empty when no
	// model was configured or it did not answer.
	Summary string `json:"summary,omitempty"`
	// Network lists what the run tried to reach outside the sandbox,
	// allowed or not, with bytes each way.
	Network []egress.Contact `json:"network,omitempty"`
	// Bookkeeping is set when the transaction changed only tools' own
	// files (CommitOptions.Bookkeeping): its id is a minor one, and an
	// undo or redo without an id passes over it.
	Bookkeeping bool `json:"bookkeeping,omitempty"`
	// Tools lists the changed paths that are tools' own files (a
	// history, a cache, an index refreshed), shown apart from the rest.
	Tools []string `json:"tools,omitempty"`
	// Tokens is what the model's work on the script cost, when a model
	// wrote it.
	Tokens *Tokens `json:"tokens,omitempty"`
}

// Tokens is what a model's work toward a transaction cost, as the
// provider counted it (or estimated, when it counted nothing), and at the
// configured prices.
type Tokens struct {
	Input     int     `json:"input"`
	Output    int     `json:"output"`
	Estimated bool    `json:"estimated,omitempty"`
	Cost      float64 `json:"cost,omitempty"`
	Currency  string  `json:"currency,omitempty"`
}

// runState is the state of a sandboxed run that is not yet committed.
type runState string

const (
	runRunning runState = "running"
	runPending runState = "pending"
	// runKept is a run the person aborted, set aside so that it can
	// still be committed (see Keep).
	runKept runState = "kept"
)

// runRecord describes a run while it is running or pending review.
type runRecord struct {
	ID       string              `json:"id"`
	Script   string              `json:"script"`
	Prompt   string              `json:"prompt,omitempty"`
	Dir      string              `json:"dir"`
	Started  time.Time           `json:"started"`
	PID      int                 `json:"pid"`
	PIDStart string              `json:"pid_start"` // start time of PID, to tell pid reuse
	Layers   []sandboxinit.Layer `json:"layers"`
	// Renames are the directories the init moved for the script.
	Renames []sandboxinit.Rename `json:"renames,omitempty"`
	// Planted are the live directories made in the upper dirs before the
	// run (ids_linux.go): their attributes there are nash's, not changes.
	Planted  []string `json:"planted,omitempty"`
	State    runState `json:"state"`
	ExitCode int      `json:"exit_code"`
	Scratch  string   `json:"scratch,omitempty"` // tmpfs dir holding some layers
	// Pre fingerprints, when the run ended, the live paths a commit would
	// replace; Touched names those changed outside nash while it ran.
	Pre     map[string]fingerprint
	Touched []string
	// Network is what the run tried to reach (Pending.Network).
	Network []egress.Contact
	// Kept is when the person aborted the run and it was set aside
	// (runKept).
	Kept time.Time
}

// layout names the files of the state directory.
type layout string

func (l layout) lockFile() string          { return filepath.Join(string(l), "lock") }
func (l layout) seqFile() string           { return filepath.Join(string(l), "seq") }
func (l layout) runSeqFile() string        { return filepath.Join(string(l), "runseq") }
func (l layout) runsDir() string           { return filepath.Join(string(l), "runs") }
func (l layout) runDir(id string) string   { return filepath.Join(string(l), "runs", id) }
func (l layout) txDir() string             { return filepath.Join(string(l), "tx") }
func (l layout) txFile(id string) string   { return filepath.Join(string(l), "tx", id+".json") }
func (l layout) layersDir() string         { return filepath.Join(string(l), "layers") }
func (l layout) layerDir(id string) string { return filepath.Join(string(l), "layers", id) }
func (l layout) journalDir() string        { return filepath.Join(string(l), "journal") }
func (l layout) trashDir() string          { return filepath.Join(string(l), "trash") }
func (l layout) sweptFile() string         { return filepath.Join(string(l), "scratch-swept") }
func (l layout) walFile(id string) string  { return filepath.Join(string(l), "journal", id+".wal") }

func (l layout) ensure() error {
	// Usually all there: one read of the state dir tells.
	if entries, err := os.ReadDir(string(l)); err == nil {
		want := map[string]bool{"runs": true, "tx": true, "layers": true, "journal": true, "trash": true}
		for _, e := range entries {
			if e.IsDir() {
				delete(want, e.Name())
			}
		}
		if len(want) == 0 {
			return nil
		}
	}
	for _, d := range []string{string(l), l.runsDir(), l.txDir(), l.layersDir(), l.journalDir(), l.trashDir()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("create state dir: %w", err)
		}
	}
	return nil
}

// Runs and transactions have ids of their own kinds: a run is "r" and a
// number, given when it starts; a transaction is a number, given when it
// commits, so the transactions a person sees are numbered 1, 2, 3, ...
// whatever ran and was aborted between them. A transaction that changed
// only tools' own files (CommitOptions.Bookkeeping) takes a minor id after
// the last one, N.1, N.2, ..., so it does not take a number either.

// runPrefix starts every run id.
const runPrefix = "r"

// IsRunID reports whether id names a run (one pending, or aborted and
// kept) rather than a transaction.
func IsRunID(id string) bool {
	n, ok := strings.CutPrefix(id, runPrefix)
	return ok && isNumber(n)
}

// IsTxID reports whether id has the form of a transaction id: a number,
// or a number, a dot and a number.
func IsTxID(id string) bool {
	major, minor, dotted := strings.Cut(id, ".")
	return isNumber(major) && (!dotted || isNumber(minor))
}

func isNumber(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// newRun allocates an id for a run and creates its directory; the caller
// holds the lock. The counter need not be durable: an id is taken only if
// no run has it.
func (l layout) newRun() (string, error) {
	n := readCounter(l.runSeqFile())
	for {
		n++
		id := runPrefix + strconv.Itoa(n)
		if err := os.Mkdir(l.runDir(id), 0o700); err != nil {
			if errors.Is(err, os.ErrExist) {
				continue
			}
			return "", fmt.Errorf("create run dir: %w", err)
		}
		if err := writeCounter(l.runSeqFile(), n); err != nil {
			return "", fmt.Errorf("write id counter: %w", err)
		}
		return id, nil
	}
}

// writeCounter records n as the last id given, in place: the line is
// padded to a fixed width and written over the last, since truncating a
// file to zero makes ext4 flush it on close (auto_da_alloc).
func writeCounter(path string, n int) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	line := fmt.Sprintf("%-*d\n", seqWidth-1, n)
	_, err = f.WriteAt([]byte(line), 0)
	if err == nil {
		var fi os.FileInfo
		if fi, err = f.Stat(); err == nil && fi.Size() > int64(len(line)) {
			err = f.Truncate(int64(len(line)))
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// seqWidth is the width the id counters' lines are padded to.
const seqWidth = 24

func readCounter(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

// lastID is the number of the last transaction, as the counter has it.
func (l layout) lastID() int { return readCounter(l.seqFile()) }

// taken reports whether a transaction id is in use: recorded, or with a
// journal or an undo layer on disk.
func (l layout) taken(id string) bool {
	for _, p := range []string{l.txFile(id), l.walFile(id), l.layerDir(id)} {
		if _, err := os.Lstat(p); err == nil {
			return true
		}
	}
	return false
}

// nextID gives the id the next transaction takes, one more than the
// last's; with minor, the next minor id after the last transaction (N.1,
// N.2, ...). The caller holds the lock. Nothing is written: an id is taken
// when its transaction's journal is (see taken), and the counter moves
// when it stands (noteID).
func (l layout) nextID(minor bool) string {
	n := l.lastID()
	for l.taken(strconv.Itoa(n + 1)) {
		n++
	}
	if !minor {
		return strconv.Itoa(n + 1)
	}
	for m := 1; ; m++ {
		if id := fmt.Sprintf("%d.%d", n, m); !l.taken(id) {
			return id
		}
	}
}

// noteID moves the counter to a transaction that stands. The counter
// need not be durable: nextID steps over ids already taken.
func (l layout) noteID(id string) {
	n, err := strconv.Atoi(id)
	if err != nil || n <= l.lastID() {
		return // a minor id, or an older one
	}
	_ = writeCounter(l.seqFile(), n)
}

// Internal state (journal, manifest, run records, the init's config) is
// gob: unlike JSON it keeps file names that are not valid UTF-8 exact.
// Transaction records stay JSON, for people and tools.

func readGob(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(v); err != nil {
		return fmt.Errorf("parse %s: %w", path, err)
	}
	return nil
}

func writeGob(path string, v any) error {
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(v); err != nil {
		return err
	}
	return writeFileAtomic(path, b.Bytes())
}

// writeGobVolatile writes a file that need not survive a crash (a run's
// own record: a run interrupted by a crash is discarded anyway).
func writeGobVolatile(path string, v any) error {
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(v); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b.Bytes(), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("parse %s: %w", path, err)
	}
	return nil
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(path, append(b, '\n'))
}

func (l layout) readTx(id string) (*Tx, error) {
	var t Tx
	if err := readJSON(l.txFile(id), &t); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, &NotFoundError{ID: id}
		}
		return nil, err
	}
	return &t, nil
}

func (l layout) writeTx(t *Tx) error { return writeJSON(l.txFile(t.ID), t) }

// listTx returns every transaction, oldest first.
func (l layout) listTx() ([]*Tx, error) {
	entries, err := os.ReadDir(l.txDir())
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var out []*Tx
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || strings.HasPrefix(id, ".") {
			continue
		}
		t, err := l.readTx(id)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	sortTx(out)
	return out, nil
}

// sortTx orders transactions as they were committed. Ids are given when a
// run starts, so concurrent runs can commit out of id order.
func sortTx(txs []*Tx) {
	num := func(id string) (int, int) {
		major, minor, _ := strings.Cut(id, ".")
		a, _ := strconv.Atoi(major)
		b, _ := strconv.Atoi(minor)
		return a, b
	}
	sort.SliceStable(txs, func(i, j int) bool {
		if !txs[i].Time.Equal(txs[j].Time) {
			return txs[i].Time.Before(txs[j].Time)
		}
		a1, b1 := num(txs[i].ID)
		a2, b2 := num(txs[j].ID)
		return a1 < a2 || a1 == a2 && b1 < b2
	})
}

// Kept is a path whose old version a rolled-back transaction could not
// put back, because a directory on its way was moved, removed or replaced
// by a symlink meanwhile: the old version stays in the undo layer.
type Kept struct {
	Path   string `json:"path"`
	Object string `json:"object,omitempty"` // where the old version is; "" when the path did not exist before
	// New says the new version could not be taken back either: it is
	// wherever that directory went.
	New bool `json:"new,omitempty"`
}
