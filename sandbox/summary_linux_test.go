package sandbox

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestSetSummary stores a summary with a committed transaction; it
// survives an undo of that transaction and leaves the rest of the record
// as it was; bad ids and bad text are refused.
func TestSetSummary(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	tx := e.commit(e.run("echo hello > greeting.txt"))
	if err := e.sb.SetSummary(ctx, tx.ID, "Created greeting.txt saying hello."); err != nil {
		t.Fatal(err)
	}
	got, _, err := e.sb.Show(tx.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Summary != "Created greeting.txt saying hello." {
		t.Errorf("summary = %q", got.Summary)
	}
	if got.Script != tx.Script || got.Changes != tx.Changes || got.State != StateCommitted || got.Ops != tx.Ops {
		t.Errorf("record changed beyond the summary: %+v, was %+v", got, tx)
	}
	// An undo rewrites the record; the summary stays.
	e.undo(tx.ID)
	got, _, _ = e.sb.Show(tx.ID)
	if got.State != StateUndone || got.Summary != "Created greeting.txt saying hello." {
		t.Errorf("after undo: state %s, summary %q", got.State, got.Summary)
	}

	var nf *NotFoundError
	if err := e.sb.SetSummary(ctx, "999", "x"); !errors.As(err, &nf) {
		t.Errorf("unknown id: %v, want NotFoundError", err)
	}
	if err := e.sb.SetSummary(ctx, tx.ID, strings.Repeat("x", MaxSummaryBytes+1)); err == nil {
		t.Error("a summary over the limit was stored")
	}
	if err := e.sb.SetSummary(ctx, tx.ID, "bad \xff"); err == nil {
		t.Error("a summary that is not UTF-8 was stored")
	}
	if got, _, _ = e.sb.Show(tx.ID); got.Summary != "Created greeting.txt saying hello." {
		t.Errorf("a refused summary changed the record: %q", got.Summary)
	}
}
