package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/planner"
	"github.com/nash-shell/nash/sandbox"
)

// summaryTimeout bounds the model call that writes a change summary: the
// commit has happened, so nash waits no longer than this for the words.
const summaryTimeout = 20 * time.Second

// summaryTokens caps what the model may write for a summary: a few
// sentences, with room for models that think aloud first.
const summaryTokens = 512

// summarizeTx asks the configured model for a plain-English summary of what committed
// transaction id changed and records it with the transaction.
func summarizeTx(ctx context.Context, g *options, sb *sandbox.Sandbox, id string, cs *effects.ChangeSet) (string, error) {
	pl, err := planner.New(planner.ModelSpec(g.model), planner.Getenv(g.getenv),
		planner.Timeout(summaryTimeout), planner.MaxOutputTokens(summaryTokens))
	if err != nil {
		return "", err
	}
	sctx, cancel := context.WithTimeout(ctx, summaryTimeout)
	defer cancel()
	text, err := pl.Summarize(sctx, changeText(sb, id, cs))
	if err != nil {
		return "", err
	}
	if err := sb.SetSummary(ctx, id, text); err != nil {
		return "", err
	}
	return text, nil
}

// Bounds of what changeText reads for the model.
const (
	summaryListMax  = 200      // change lines
	summaryFileMax  = 64 << 10 // a larger file is named, not diffed
	summaryDiffLine = 80       // lines of one file's diff
)

// changeText describes what committed transaction id changed, for the
// model: one line per change, then diffs of the text files it modified or
// created, until planner.SummaryInputBytes are written.
func changeText(sb *sandbox.Sandbox, id string, cs *effects.ChangeSet) string {
	var b strings.Builder
	for i, c := range cs.Changes {
		if i == summaryListMax {
			fmt.Fprintf(&b, "(and %d more changes)\n", len(cs.Changes)-i)
			break
		}
		fmt.Fprintf(&b, "%s %s", c.Kind, effects.Quote(c.Path))
		if c.After != nil && c.After.Type == effects.TypeSymlink {
			fmt.Fprintf(&b, " (symlink to %s)", effects.Quote(c.After.Target))
		} else if c.After != nil && c.After.Type == effects.TypeDir {
			b.WriteString(" (directory)")
		}
		b.WriteByte('\n')
	}
	for _, c := range cs.Changes {
		if b.Len() >= planner.SummaryInputBytes {
			break
		}
		if c.Kind != effects.Modified && c.Kind != effects.Created {
			continue
		}
		fi, err := os.Lstat(c.Path)
		if err != nil || !fi.Mode().IsRegular() || fi.Size() > summaryFileMax {
			continue
		}
		var old []byte
		if c.Kind == effects.Modified {
			oldPath, ok := sb.OldVersion(id, c.Path)
			if !ok {
				continue
			}
			if old, err = os.ReadFile(oldPath); err != nil {
				continue
			}
		}
		nb, err := os.ReadFile(c.Path)
		if err != nil {
			continue
		}
		_ = effects.Diff(&b, c.Path, old, nb, effects.DiffOptions{MaxBytes: summaryFileMax, MaxLines: summaryDiffLine})
	}
	return b.String()
}
