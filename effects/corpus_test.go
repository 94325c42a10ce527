package effects

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nash-shell/nash/internal/datasets"
)

// corpusHang is how long one command may take before the corpus test
// calls it a hang. It is a hang detector, far above any real run time
// (microseconds), not a timing assertion.
const corpusHang = 20 * time.Second

// analyzeGuarded runs Analyze on script in its own goroutine, turning a
// panic into an error and giving up after corpusHang.
func analyzeGuarded(script string, opts ...Option) (rep *Report, err error, hung bool) {
	type result struct {
		rep *Report
		err error
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				done <- result{err: fmt.Errorf("panic: %v\n%s", v, debug.Stack())}
			}
		}()
		r, err := Analyze(script, opts...)
		done <- result{r, err}
	}()
	select {
	case r := <-done:
		return r.rep, r.err, false
	case <-time.After(corpusHang):
		return nil, nil, true
	}
}

var digits = regexp.MustCompile(`[0-9]+`)

// TestCorpusNL2Bash analyses every command of the NL2Bash corpus: none may
// panic or hang. It logs the parse rate, the classes of parse failures,
// and the commands nash does not know, most frequent first.
func TestCorpusNL2Bash(t *testing.T) {
	file := filepath.Join(datasets.Must(t, datasets.NL2Bash), "all.cm")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("the NL2Bash corpus is needed for this test: %v ", err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) < 10000 {
		t.Fatalf("%s holds %d commands, want the full corpus of 12,607", file, len(lines))
	}
	parsed := 0
	classes := map[string]int{}
	examples := map[string]string{}
	unknown := map[string]int{}
	risks := map[Risk]int{}
	withPaths := 0
	for i, line := range lines {
		rep, err, hung := analyzeGuarded(line, Dir("/home/user"), Home("/home/user"))
		if hung {
			t.Fatalf("line %d: Analyze did not return within %v: %q", i+1, corpusHang, line)
		}
		var pe *ParseError
		switch {
		case err == nil:
			parsed++
			risks[rep.Risk]++
			if len(rep.Paths) > 0 {
				withPaths++
			}
			for _, f := range rep.Findings {
				if f.Kind == "unknown-command" && strings.HasSuffix(f.Reason, "the sandbox will show what it changes") {
					unknown[strings.Fields(f.Reason)[0]]++
				}
			}
		case errors.As(err, &pe):
			class := digits.ReplaceAllString(pe.Msg, "N")
			classes[class]++
			if _, ok := examples[class]; !ok {
				examples[class] = line
			}
		default:
			t.Errorf("line %d: %q: %v", i+1, line, err)
		}
	}
	t.Logf("parsed %d of %d commands (%.2f%%); %d with at least one path", parsed, len(lines), 100*float64(parsed)/float64(len(lines)), withPaths)
	for r := ReadOnly; r <= CannotUndo; r++ {
		t.Logf("  risk %-18s %5d", r, risks[r])
	}
	t.Logf("parse failures by class:")
	for _, kv := range byCount(classes) {
		t.Logf("  %5d  %s   e.g. %q", kv.n, kv.k, examples[kv.k])
	}
	t.Logf("most frequent commands nash does not know:")
	for i, kv := range byCount(unknown) {
		if i == 25 {
			break
		}
		t.Logf("  %5d  %s", kv.n, kv.k)
	}
	if parsed < len(lines)*9/10 {
		t.Errorf("only %d of %d commands parse; the parser or its options regressed", parsed, len(lines))
	}
}

type keyCount struct {
	k string
	n int
}

func byCount(m map[string]int) []keyCount {
	out := make([]keyCount, 0, len(m))
	for k, n := range m {
		out = append(out, keyCount{k, n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].n != out[j].n {
			return out[i].n > out[j].n
		}
		return out[i].k < out[j].k
	})
	return out
}

// TestCorpusInterCode analyses the gold commands of InterCode-ALFA (both
// variants of each task), without running them: none may fail to parse,
// panic or hang. It logs the risk levels and how many predict deletes; the
// sandbox tests compare these predictions with observed runs.
func TestCorpusInterCode(t *testing.T) {
	data := datasets.Must(t, datasets.InterCode)
	files, err := filepath.Glob(filepath.Join(data, "nl2bash_fs_*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("the InterCode-ALFA tasks are needed for this test: none in %s", data)
	}
	total, deletes := 0, 0
	risks := map[Risk]int{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var tasks []struct{ Query, Gold, Gold2 string }
		if err := json.Unmarshal(b, &tasks); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, task := range tasks {
			for _, cmd := range []string{task.Gold, task.Gold2} {
				if cmd == "" {
					continue
				}
				total++
				rep, err, hung := analyzeGuarded(cmd, Dir("/testbed"), Home("/root"))
				if hung {
					t.Fatalf("%s: Analyze did not return within %v: %q", filepath.Base(f), corpusHang, cmd)
				}
				if err != nil {
					t.Errorf("%s: %q: %v", filepath.Base(f), cmd, err)
					continue
				}
				risks[rep.Risk]++
				if len(rep.PathsWith(Delete)) > 0 {
					deletes++
				}
			}
		}
	}
	t.Logf("analysed %d gold commands from %d files; %d predict deletes", total, len(files), deletes)
	for r := ReadOnly; r <= CannotUndo; r++ {
		t.Logf("  risk %-18s %4d", r, risks[r])
	}
}
