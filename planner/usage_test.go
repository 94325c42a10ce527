package planner

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestWireUsage: the token counts each provider reports in its usage
// fields reach Artifact.Usage, priced when prices are set; a provider that
// reports none gives estimated counts, marked as such.
func TestWireUsage(t *testing.T) {
	good := answerJSON(goodScript, "ok")
	for _, w := range wires() {
		t.Run(w.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			f := newFakeProvider(t, w, reply{content: good}, reply{body: withoutUsage(t, w, good)})
			p := newWirePlanner(t, f, &fakeSleeper{}, Pricing(Price{Input: 3, Output: 15}))
			a, err := p.Plan(ctx, Request{Prompt: "put the 2025 invoices in one folder"})
			if err != nil {
				t.Fatal(err)
			}
			want := Usage{InputTokens: 612, OutputTokens: 58, Calls: 1, Cost: (612*3 + 58*15) / 1e6, Currency: "USD", Priced: true}
			if diff := cmp.Diff(want, a.Usage); diff != "" {
				t.Errorf("reported usage (-want +got):\n%s", diff)
			}
			b, err := p.Plan(ctx, Request{Prompt: "put the 2025 invoices in one folder"})
			if err != nil {
				t.Fatal(err)
			}
			if u := b.Usage; !u.Estimated || u.InputTokens != b.Prompt.Total || u.OutputTokens != EstimateTokens(good) || u.Calls != 1 {
				t.Errorf("usage without provider counts %+v, want estimates (%d in, %d out)", u, b.Prompt.Total, EstimateTokens(good))
			}
			j, _ := json.Marshal(a.Usage)
			if !strings.Contains(string(j), `"input_tokens":612`) || !strings.Contains(string(j), `"output_tokens":58`) {
				t.Errorf("usage JSON %s", j)
			}
		})
	}
}

// withoutUsage returns w's envelope with content and no usage counts.
func withoutUsage(t *testing.T, w wire, content string) string {
	t.Helper()
	f := newFakeProvider(t, w)
	c, _ := json.Marshal(content)
	var env map[string]any
	if err := json.Unmarshal([]byte(strings.Replace(f.envelope, "{{CONTENT}}", string(c), 1)), &env); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"usage", "prompt_eval_count", "eval_count"} {
		delete(env, k)
	}
	b, _ := json.Marshal(env)
	return string(b)
}

func TestUsageAdd(t *testing.T) {
	var u Usage
	u.Add(Usage{InputTokens: 10, OutputTokens: 2, Calls: 1, Cost: 0.5, Currency: "EUR", Priced: true})
	u.Add(Usage{InputTokens: 5, OutputTokens: 1, Calls: 1, Estimated: true})
	want := Usage{InputTokens: 15, OutputTokens: 3, Calls: 2, Estimated: true, Cost: 0.5, Currency: "EUR", Priced: true}
	if diff := cmp.Diff(want, u); diff != "" || u.Total() != 18 {
		t.Errorf("(-want +got):\n%s total %d", diff, u.Total())
	}
}
