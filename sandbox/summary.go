package sandbox

import (
	"context"
	"fmt"
	"unicode/utf8"
)

// MaxSummaryBytes bounds a transaction's summary, so a record stays small.
const MaxSummaryBytes = 4096

// SetSummary records text as the plain-English summary of the committed
// transaction id, replacing any earlier one. It changes nothing else in the
// record and holds the state lock while it writes, so it is safe next to
// commits and undos of other nash processes. Text longer than
// MaxSummaryBytes or not valid UTF-8 is refused.
func (s *Sandbox) SetSummary(ctx context.Context, id, text string) error {
	if len(text) > MaxSummaryBytes {
		return fmt.Errorf("summary of transaction %s: %d bytes, limit %d", id, len(text), MaxSummaryBytes)
	}
	if !utf8.ValidString(text) {
		return fmt.Errorf("summary of transaction %s: not valid UTF-8", id)
	}
	l := s.layout()
	lk, err := l.lock(ctx)
	if err != nil {
		return err
	}
	defer lk.unlock()
	t, err := l.readTx(id)
	if err != nil {
		return err
	}
	t.Summary = text
	if err := l.writeTx(t); err != nil {
		return fmt.Errorf("record summary of transaction %s: %w", id, err)
	}
	return nil
}
