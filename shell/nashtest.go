package shell

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/scripttest"
)

// TestOptions shape nash test.
type TestOptions struct {
	JSON bool // print one TestRecord instead of text
	// Timeout and ManyFiles go to the Tester (TestSpec).
	Timeout   time.Duration
	ManyFiles int
}

// TestRecord is what nash test --json prints: the fields of the
// starting states' report (scripttest.Report: script, dir, variants,
// failed, elapsed_ns), and the result of each example.
type TestRecord struct {
	*scripttest.Report
	Examples []*scripttest.ExampleResult `json:"examples,omitempty"`
	// FailedExamples counts the examples that failed.
	FailedExamples int `json:"failed_examples"`
}

// TestFailedError says that a script failed in some starting state or on
// some example: nash test's exit status 1. What failed has been shown.
type TestFailedError struct {
	States, Examples int
}

func (e *TestFailedError) Error() string {
	var parts []string
	if e.States > 0 {
		parts = append(parts, fmt.Sprintf("%d starting %s", e.States, pluralWord(e.States, "state", "states")))
	}
	if e.Examples > 0 {
		parts = append(parts, fmt.Sprintf("%d %s", e.Examples, pluralWord(e.Examples, "example", "examples")))
	}
	return "the script failed in " + strings.Join(parts, " and ")
}

// TestScript tests script as nash test does: in each starting state its
// analysis calls for, then on each example, in throwaway sandboxes over
// cfg.Dir with cfg.Env; nothing reaches the live files. It writes what
// happened to out, as text or (opts.JSON) one TestRecord, and returns a
// *TestFailedError when a starting state or an example failed.
func TestScript(ctx context.Context, cfg Config, script string, examples []scripttest.Example, out io.Writer, opts TestOptions) error {
	if cfg.Tester == nil {
		return errNoTester
	}
	t := cfg.Tester(TestSpec{Dir: cfg.Dir, Env: cfg.Env, Timeout: opts.Timeout, ManyFiles: opts.ManyFiles})
	rep, err := t.Test(ctx, script)
	if err != nil {
		return fmt.Errorf("test: %w", err)
	}
	rec := &TestRecord{Report: rep}
	for _, ex := range examples {
		res, err := t.RunExample(ctx, script, ex)
		if err != nil {
			return fmt.Errorf("test: example %d: %w", len(rec.Examples)+1, err)
		}
		rec.Examples = append(rec.Examples, res)
		if !res.Pass {
			rec.FailedExamples++
		}
	}
	if opts.JSON {
		if err := effects.WriteJSON(out, rec, true); err != nil {
			return err
		}
	} else {
		var b bytes.Buffer
		st := newStyles(false)
		writeTestReport(&b, st, rep)
		for i, res := range rec.Examples {
			writeExampleResult(&b, st, i+1, res, false)
		}
		if _, err := out.Write(b.Bytes()); err != nil {
			return err
		}
	}
	if rep.Failed > 0 || rec.FailedExamples > 0 {
		return &TestFailedError{States: rep.Failed, Examples: rec.FailedExamples}
	}
	return nil
}
