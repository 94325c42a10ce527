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
}

// layout names the files of the state directory.
type layout string

func (l layout) lockFile() string          { return filepath.Join(string(l), "lock") }
func (l layout) seqFile() string           { return filepath.Join(string(l), "seq") }
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

// newRun allocates an id for a run and creates its directory; the caller
// holds the lock. The counter need not be durable: an id is taken only if
// neither a run nor a transaction has it.
func (l layout) newRun() (string, error) {
	n := l.lastID()
	for {
		n++
		id := strconv.Itoa(n)
		if _, err := os.Stat(l.txFile(id)); err == nil {
			continue
		}
		if err := os.Mkdir(l.runDir(id), 0o700); err != nil {
			if errors.Is(err, os.ErrExist) {
				continue
			}
			return "", fmt.Errorf("create run dir: %w", err)
		}
		if err := l.writeSeq(id); err != nil {
			return "", fmt.Errorf("write id counter: %w", err)
		}
		return id, nil
	}
}

// writeSeq records id as the last one given, in place: the line is padded
// to a fixed width and written over the last, since truncating a file to
// zero makes ext4 flush it on close (auto_da_alloc).
func (l layout) writeSeq(id string) error {
	f, err := os.OpenFile(l.seqFile(), os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	line := fmt.Sprintf("%-*s\n", seqWidth-1, id)
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

// seqWidth is the width the id counter's line is padded to.
const seqWidth = 24

func (l layout) lastID() int {
	b, err := os.ReadFile(l.seqFile())
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

// nextID allocates the next transaction id; the caller holds the lock.
func (l layout) nextID() (string, error) {
	n := l.lastID()
	for {
		n++
		_, e1 := os.Stat(l.txFile(strconv.Itoa(n)))
		_, e2 := os.Stat(l.runDir(strconv.Itoa(n)))
		if e1 != nil && e2 != nil {
			break
		}
	}
	if err := writeFileAtomic(l.seqFile(), []byte(strconv.Itoa(n)+"\n")); err != nil {
		return "", fmt.Errorf("write id counter: %w", err)
	}
	return strconv.Itoa(n), nil
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
	num := func(id string) int { n, _ := strconv.Atoi(id); return n }
	sort.SliceStable(txs, func(i, j int) bool {
		if !txs[i].Time.Equal(txs[j].Time) {
			return txs[i].Time.Before(txs[j].Time)
		}
		return num(txs[i].ID) < num(txs[j].ID)
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
