package shell

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/nash-shell/nash/sandbox/egress"
)

// The property of invariant 8, over the REPL's questions: no single key at
// any prompt discards the files a run made. A run that made files is
// dropped only after the abort key at its effect summary and a second,
// deliberate y at the question that follows, each pressed once the
// question was on the screen (the terminal had answered the fence's
// query); keys typed before a question appeared answer nothing; and a run
// dropped with files is kept, never thrown away.

// step is one step of a person's session: a key, or the terminal's
// answer to a fence's query (reply).
type step struct {
	key   string // tea key name, or "" for the reply
	reply bool
}

func (ev step) String() string {
	if ev.reply {
		return "<reply>"
	}
	return ev.key
}

// keyAlphabet is every key a person might press by habit or by accident.
var keyAlphabet = []string{"enter", "esc", "ctrl+c", "ctrl+d", "space", "tab", "up", "down", "backspace",
	"a", "c", "d", "e", "n", "p", "q", "r", "x", "y", "z"}

func steps() []step {
	out := []step{{reply: true}}
	for _, k := range keyAlphabet {
		out = append(out, step{key: k})
	}
	return out
}

func press(m *model, name string) tea.Cmd {
	if len(name) == 1 {
		r := rune(name[0])
		_, cmd := m.Update(tea.KeyPressMsg{Code: r, Text: name})
		return cmd
	}
	_, cmd := m.Update(keyMsg(name))
	return cmd
}

// playKeys takes a request through review and run to its effect summary,
// then plays evs, and checks the property after each; with net, the run
// is first refused a destination, so the "allow and run again?" question
// comes first. It reports what became of the run.
func playKeys(t *testing.T, evs []step, net bool) string {
	t.Helper()
	sb := &fakeSandbox{changes: []string{"/w/essay.txt"}}
	if net {
		sb.network = []egress.Contact{{Host: "example.org", Port: 443, Proto: egress.ProtoTCP}}
	}
	p := &fakePlanner{script: "vi essay.txt", revised: "vi essay.txt"}
	m := newTestModelWith(t, p, sb, func(c *Config) { c.Editor = "true" })
	// The terminal answers only when the sequence says so.
	m.queryTerminal = func() tea.Msg { return nil }
	typeText(m, "please edit my essay")
	drive(t, m, key(m, "enter"))
	drive(t, m, func() tea.Msg { return tea.CursorPositionMsg{} })
	drive(t, m, key(m, "enter")) // run
	if m.state != stSummary && m.state != stNet {
		t.Fatalf("the run did not reach its summary: state %v", m.state)
	}
	var trace []string
	outcome := "pending"
	for _, ev := range evs {
		if m.state == stInput {
			break // the pass is over
		}
		before, armed, kept, pickNet := m.state, m.armed, len(sb.kept), m.pickNet
		if ev.reply {
			drive(t, m, func() tea.Msg { return tea.CursorPositionMsg{} })
		} else {
			drive(t, m, press(m, ev.key))
		}
		trace = append(trace, fmt.Sprintf("%v[%v,%v]", ev, before, armed))
		if m.state == stDiscard && before != stDiscard {
			if before != stSummary || !armed || !(is(ev.key, m.keys.Abort) || ev.key == "ctrl+c") {
				t.Fatalf("reached the abort question from %v (armed %v) by %v; trace %v", before, armed, ev, trace)
			}
		}
		if len(sb.aborts) > 0 {
			t.Fatalf("a run that made files was thrown away, not kept; trace %v", trace)
		}
		switch {
		case len(sb.kept) == kept:
		case before == stNet || before == stPick && pickNet:
			// The first run, set aside (kept) to run again with the
			// network: it was not asked to be dropped.
		case before != stDiscard || !armed || ev.key != "y":
			t.Fatalf("the run was dropped by %v at %v (armed %v), not by y at the abort question; trace %v", ev, before, armed, trace)
		default:
			outcome = "kept"
		}
		if len(sb.commits) > 0 {
			outcome = "committed"
		}
	}
	return outcome
}

// TestNoSingleKeyLosesWork plays every sequence of up to two events, and
// random longer ones, from the effect summary (and from the network
// question before it).
func TestNoSingleKeyLosesWork(t *testing.T) {
	evs := steps()
	outcomes := map[string]int{}
	for _, net := range []bool{false, true} {
		for _, a := range evs {
			if got := playKeys(t, []step{a}, net); got == "kept" {
				t.Fatalf("one step (%v) dropped the run", a)
			}
			// Every pair; not every 3-step sequence, which would take
			// hours of wall time through the fence's real 400 ms timer:
			// random longer sequences follow.
			for _, b := range evs {
				outcomes[playKeys(t, []step{a, b}, net)]++
			}
		}
	}
	rng := rand.New(rand.NewPCG(19, 8))
	n := 3000
	if testing.Short() {
		n = 300
	}
	for i := 0; i < n; i++ {
		seq := make([]step, 4+rng.IntN(10))
		for j := range seq {
			// The terminal's answers a third of the time: a person
			// mostly types at questions already on the screen.
			seq[j] = evs[0]
			if rng.IntN(3) > 0 {
				seq[j] = evs[1+rng.IntN(len(evs)-1)]
			}
		}
		outcomes[playKeys(t, seq, i%2 == 1)]++
	}
	// The property holds vacuously if nothing is ever dropped or
	// committed: the sequences must reach both.
	t.Logf("outcomes %v", outcomes)
	for _, want := range []string{"committed", "kept", "pending"} {
		if outcomes[want] == 0 {
			t.Errorf("no sequence ended %s: the trials do not reach every outcome", want)
		}
	}
}

// TestKeysBeforeTheQuestionAreNoAnswer: keys that arrive before the
// terminal answered the fence's query (typed before the question
// appeared) do nothing; the same keys after it answer.
func TestKeysBeforeTheQuestionAreNoAnswer(t *testing.T) {
	sb := &fakeSandbox{changes: []string{"/w/essay.txt"}}
	m := newTestModelWith(t, &fakePlanner{script: "vi essay.txt"}, sb, nil)
	m.queryTerminal = func() tea.Msg { return nil }
	typeText(m, "please edit my essay")
	drive(t, m, key(m, "enter"))
	drive(t, m, key(m, "enter")) // not armed yet: typed ahead
	if m.state != stReview || len(sb.runs) != 0 {
		t.Fatalf("enter typed before the review appeared ran it: state %v, runs %v", m.state, sb.runs)
	}
	if !strings.Contains(m.view(), "not an answer") {
		t.Errorf("the view does not say the key was no answer: %q", m.view())
	}
	drive(t, m, func() tea.Msg { return tea.CursorPositionMsg{} })
	drive(t, m, key(m, "enter"))
	if m.state != stSummary || len(sb.runs) != 1 {
		t.Fatalf("enter after the question appeared: state %v, runs %v", m.state, sb.runs)
	}
	// The terminal that never answers: the question takes keys after
	// fenceWait.
	drive(t, m, runeKey(m, 'c'))
	if len(sb.commits) != 0 {
		t.Fatal("c typed before the summary appeared committed")
	}
	drive(t, m, func() tea.Msg { return fenceTimeoutMsg{m.fenceGen} })
	drive(t, m, runeKey(m, 'c'))
	if len(sb.commits) != 1 {
		t.Fatalf("c after the fence's timeout: commits %v", sb.commits)
	}
}
