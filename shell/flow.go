package shell

import (
	"context"
	"errors"
	"io"
	"net/netip"
	"time"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/planner"
	"github.com/nash-shell/nash/sandbox"
	"github.com/nash-shell/nash/sandbox/egress"
)

// The run flow: every script nash runs goes through run, whichever face
// (the REPL, the line mode) and whichever command (the shell, nash -c,
// nash run, nash group, nash join) brought it:
//
//	request or script ─► plan (a request only) ─► analysis ─► review
//	    ─► network consent ─► sandbox run ─► effect summary
//	    ─► (allow what was refused and run again) ─► commit all / pick paths / abort
//
// The flow decides; the face asks and shows. A face answers the questions
// of the flow (review, confirm, decide, ...) and renders its events, each
// in its own way: the line mode reads answers from a reader and writes
// plain text, the REPL turns each question into a screen and each event
// into lines of the transcript. A new stage is added here, once, with the
// question or event it needs.

// job is one pass through the flow.
type job struct {
	input string // the line or script as given, for the record
	route Kind   // Command: a script in hand; English: a request to plan
	text  string // the request (English) or the script (Command)
	title string // for a script nash wrote: the request kept in the log
	show  bool   // show a script in hand before it runs, without asking
	// stage, when set, prepares the change instead of a script run
	// (nash rollback): there is nothing to plan, analyse or run.
	stage func(ctx context.Context) (Sandbox, *sandbox.Pending, error)
	// typed says the person typed the line at the shell's prompt (the
	// REPL or the line mode): what it changes is committed when it ends,
	// unless Config.Typed says ask, or the line needed the second
	// confirmation (careful), or it deleted outside the directory.
	typed   bool
	careful bool
	dir     string
	env     []string
	history []planner.HistoryEntry
	stdin   *planner.Input // piped to nash -c: context for the model
	opts    flowOptions
	// keep is the directory where a typed line's bash leaves the
	// session's state (OpenSpec.Keep); "" for the rest.
	keep string
	// shadowed names the session's aliases and functions: a line that
	// calls one of them is no look at the host (hostrun.go).
	shadowed map[string]bool
}

// flowOptions are what the command line says about a pass.
type flowOptions struct {
	yes         bool          // approve and commit without asking; never the second confirmation
	dryRun      bool          // show the review; run nothing
	print       bool          // print the script; run nothing
	network     bool          // give the script the host's network, all of it (nash run --net)
	allow       []egress.Rule // destinations allowed beyond the configuration's (--net=HOST,...)
	unprotected bool          // run where the sandbox cannot hold changes back, saying so
}

// action is an answer at review.
type action int

const (
	actRun action = iota
	actEdit
	actRevise
	actExplain
	actAbort
	actTest    // try the script on other starting states (trial.go)
	actExample // try it on an example the person gives (trial.go)
)

// decision is an answer at the effect summary: commit every change, or
// only paths, or abort.
type decision struct {
	abort bool
	paths []string // nil: every change
}

// netQuestion offers destinations a run may not reach: those the script
// names, before it runs, or those a run was refused (again), to run it
// again with them allowed.
type netQuestion struct {
	rules []egress.Rule
	again bool
}

// runFunc runs the script with the streams the face hands it.
type runFunc func(stdin io.Reader, stdout, stderr io.Writer) (*outcome, error)

// face is what the flow needs of the program a person uses: questions,
// which block until answered (or ctx ends), and events, which it shows.
type face interface {
	// busy says the model is at work (planning, revising, explaining) and
	// returns the context for that work, which the person may cancel
	// (ctrl+c) without ending the pass, and the func to call when done.
	busy(ctx context.Context, what string) (context.Context, context.CancelFunc)
	// review asks what to do with a planned script: run, edit, revise,
	// explain or abort. The review itself was shown as an evReview.
	review(a *planner.Artifact, reason string) (action, error)
	// confirm asks for the second confirmation of reason. back reports
	// that the person wants the review again instead.
	confirm(reason string) (ok, back bool, err error)
	// feedback asks what a revision should change; "" goes back to review.
	feedback() (string, error)
	// edit lets the person edit the script and returns the result.
	edit(script string) (string, error)
	// example asks for an example in ParseExample's short form; "" goes
	// back to review.
	example() (string, error)
	// run hands the script its streams (the terminal) and runs it.
	run(f runFunc) (*outcome, error)
	// decide asks what to do with a run's changes (showing diffs and
	// letting the person pick paths as asked).
	decide(o *outcome) (decision, error)
	// allowNet asks which of q's destinations the run may reach: all,
	// some or none (nil).
	allowNet(q netQuestion) ([]egress.Rule, error)
	// progress shows the model's answer as it arrives, while busy.
	progress(p planner.Progress)
	// pick offers the commands of an answer: the number of the one to
	// review and run (1-based), or 0 for none.
	pick(snips []planner.Snippet) (int, error)
	// say shows an event.
	say(ev event)
}

// event is something the flow tells the person. Each face renders each
// kind in its own style.
type event interface{ isEvent() }

type (
	evQuestion struct{ text string } // the model asks instead of writing a script
	evReview   struct {
		a      *planner.Artifact
		reason string
	} // the script, what it will do, and the second confirmation's reason
	evExplanation struct{ x *planner.Explanation } // the model's step-by-step explanation
	evFailed      struct{ err error }              // a step failed (edit, revise, explain); the flow goes on
	evPrint       struct{ script string }          // --print: the script alone
	evDryRun      struct{ a *planner.Artifact }    // --dry-run: the review, on stdout
	evAborted     struct {
		ran  bool
		kept string // the run kept (Sandbox.Keep), to commit later; "" when nothing was lost
	} // aborted, before or after the run
	evExit         struct{ code int }            // the script's exit status, when not 0
	evUnsandboxed  struct{}                      // ran without a sandbox (--unprotected): nothing to show or undo
	evHostLook     struct{ h *effects.HostLook } // runs on the host: it only looks (or signals, confirmed)
	evNoChanges    struct{ typed bool }          // the run changed nothing; typed: a command as typed, which says nothing of it
	evOutcome      struct{ o *outcome }          // the effect summary and what was not predicted
	evNotCommitted struct{ err error }           // the commit was refused (locked paths); the person may pick others
	evCommitted    struct {
		tx    *sandbox.Tx
		paths []string
	} // committed as transaction tx
	evAnswer        struct{ a *planner.Artifact }    // the model answered (Markdown) instead of writing a script
	evStdin         struct{ in *planner.InputStats } // how much of the piped input the model was sent
	evAutoCommitted struct {
		o  *outcome
		tx *sandbox.Tx
	} // a typed line's changes, committed when it ended
	evToolsKept struct {
		o  *outcome
		tx *sandbox.Tx
	} // only tools' own files changed: kept as bookkeeping
	evNetAgain struct {
		rules []egress.Rule
		kept  string // the first run, kept
	} // running the script again with these allowed
	evNetKept struct{ tx *sandbox.Tx } // no file changes, but what the run reached is kept as tx
)

func (evQuestion) isEvent()      {}
func (evReview) isEvent()        {}
func (evExplanation) isEvent()   {}
func (evFailed) isEvent()        {}
func (evPrint) isEvent()         {}
func (evDryRun) isEvent()        {}
func (evAborted) isEvent()       {}
func (evExit) isEvent()          {}
func (evUnsandboxed) isEvent()   {}
func (evHostLook) isEvent()      {}
func (evNoChanges) isEvent()     {}
func (evOutcome) isEvent()       {}
func (evNotCommitted) isEvent()  {}
func (evCommitted) isEvent()     {}
func (evNetAgain) isEvent()      {}
func (evAutoCommitted) isEvent() {}
func (evToolsKept) isEvent()     {}
func (evNetKept) isEvent()       {}
func (evAnswer) isEvent()        {}
func (evStdin) isEvent()         {}

// Record is the JSON object that describes one pass through the flow: nash
// -c --json, nash run --json, nash group --json and nash join --json all
// print it, the same for the same run. Fields that do not apply are left
// out.
type Record struct {
	// Input is what was given: the line (nash -c), the script (nash run),
	// or nash's own command line for a script it wrote (group, join).
	Input string `json:"input"`
	// Route is how it was taken: "command" (run as given), "english"
	// (planned first), "builtin" or "session" (nash -c ':log', 'cd x').
	Route       string `json:"route"`
	Script      string `json:"script,omitempty"`
	Explanation string `json:"explanation,omitempty"`
	Question    string `json:"question,omitempty"` // the model asked instead of planning
	// Answer is the model's answer in Markdown to a question, instead of
	// a script; Snippets the commands in it that can be run, and Snippet
	// the number (from 1) of the one picked to run as Script.
	Answer   string            `json:"answer,omitempty"`
	Snippets []planner.Snippet `json:"snippets,omitempty"`
	Snippet  int               `json:"snippet,omitempty"`
	// Model is the model that planned; Usage the tokens (and the cost,
	// where prices are configured) of every call to it in this pass.
	Model string         `json:"model,omitempty"`
	Usage *planner.Usage `json:"usage,omitempty"`
	// Stdin says how much of what was piped to nash -c the model was
	// sent, and whether it was cut.
	Stdin  *planner.InputStats `json:"stdin,omitempty"`
	Report *effects.Report     `json:"report,omitempty"` // the static analysis of Script
	// Refused says why --yes did not cover the script: nothing ran.
	Refused string     `json:"refused,omitempty"`
	Run     *RunRecord `json:"run,omitempty"`
	// Aborted is set when the person aborted, before or after the run.
	Aborted bool   `json:"aborted,omitempty"`
	Error   string `json:"error,omitempty"`
}

// RunRecord describes a run in the sandbox and what became of it.
type RunRecord struct {
	ID       string           `json:"id"`
	ExitCode int              `json:"exit_code"`
	Changes  []effects.Change `json:"changes"`
	// Surprises compares Changes with the static report.
	Surprises   *effects.Surprises `json:"surprises,omitempty"`
	Unprotected []string           `json:"unprotected,omitempty"` // changed live (--unprotected)
	Unsandboxed bool               `json:"unsandboxed,omitempty"` // ran with no sandbox at all (--unprotected)
	Host        bool               `json:"host,omitempty"`        // only looked at the host's processes (or signalled them), there
	// Network lists what the run tried to reach, allowed or not;
	// NetworkError says why that could not be watched.
	Network      []egress.Contact `json:"network,omitempty"`
	NetworkError string           `json:"network_error,omitempty"`
	// ScratchFull is the size of the scratch space the script filled:
	// its writes outside the working directory beyond it failed.
	// Unlimited names the limits this system could not apply.
	ScratchFull int64              `json:"scratch_full,omitempty"`
	Unlimited   []string           `json:"unlimited,omitempty"`
	Committed   bool               `json:"committed"`
	Transaction string             `json:"transaction,omitempty"`
	Paths       []string           `json:"committed_paths,omitempty"` // the paths picked, when not all
	Conflicts   []sandbox.Conflict `json:"conflicts,omitempty"`       // paths changed since: nothing committed
	Locked      []string           `json:"locked,omitempty"`          // locked paths: nothing committed
	Summary     string             `json:"summary,omitempty"`         // the model's summary of the commit
	// Kept is set when the run was aborted but kept, to commit later
	// (nash commit ID): it created or modified files.
	Kept string `json:"kept,omitempty"`
	// Tools lists the changes that are tools' own files (Config.ToolFiles).
	Tools []string `json:"tools,omitempty"`
}

// flowResult is what a pass leaves for the session: the record, the
// planner's history of it, the committed step and the script to save.
type flowResult struct {
	rec       *Record
	history   []planner.HistoryEntry
	committed *Step
	cs        *effects.ChangeSet // what the commit changed, for its summary
	ran       bool               // a script ran: what is on PATH may have changed
	saved     string             // the script that ran and was committed (or changed nothing)
	kept      map[string][]byte  // what the last run left in job.keep
}

// outcome is a finished run waiting for commit or abort.
type outcome struct {
	sb      Sandbox
	pending *sandbox.Pending
	report  *effects.Report
	prompt  string // "" for a typed command
	script  string
	dir     string
	// own and tools part the run's changes: the person's, and tools'
	// own files (Config.ToolFiles).
	own, tools *effects.ChangeSet
	toolNames  []string // whose files tools holds: "git", "vim"
	// host is set for a script that ran on the host (hostrun.go).
	host *effects.HostLook
}

// changed reports whether the run left anything to commit.
func (o *outcome) changed() bool { return o.pending.Changes != nil && o.pending.Changes.Len() > 0 }

// flow takes j through the flow, asking f. It returns the result, and
// the error that ends the pass: ErrAborted, *ConfirmError, *PlanError, an
// ExitStatus for a script that failed, or what went wrong. ctx bounds the
// pass: the model's work, which the face may also cancel alone (ctrl+c
// while it thinks), and the run; a commit under way is not cancelled.
func (e *engine) flow(ctx context.Context, f face, j job) (*flowResult, error) {
	r := &flowResult{rec: &Record{Input: j.input, Route: j.route.String()}}
	planned := j.route == English
	req := request{prompt: j.text, dir: j.dir, history: j.history, input: j.stdin, stream: f.progress}
	if j.stage != nil {
		sb, p, err := j.stage(ctx)
		if err != nil {
			return r, err
		}
		return e.finish(ctx, f, j, r, e.outcome(&outcome{sb: sb, pending: p, prompt: j.title}), entryOf(j, ""), false)
	}
	var a *planner.Artifact
	if planned {
		mctx, done := f.busy(ctx, "planning")
		var err error
		a, err = e.plan(mctx, req)
		done()
		if err != nil {
			return r, err
		}
		r.used(a.Model, a.Usage)
		if in := a.Prompt.Input; in != nil {
			r.rec.Stdin = in
			f.say(evStdin{in})
		}
		if a.Kind() == planner.KindAnswer {
			if a, err = e.answered(f, j, r, a); a == nil || err != nil {
				return r, err
			}
		}
	} else {
		a = &planner.Artifact{Script: j.text}
	}
	prompt := j.title
	if planned {
		prompt = j.text
	}

	// Analysis and review, until the script is to run. fresh says the
	// review of a has not been shown yet; tr holds what the person tried
	// of it (t, examples).
	fresh := true
	tr := &trial{}
	confirmed := false // the person confirmed what cannot be undone
review:
	for {
		if a.Question != "" {
			r.rec.Question = a.Question
			r.history = append(r.history, planner.HistoryEntry{Prompt: j.text, Output: "the model asked: " + a.Question})
			f.say(evQuestion{a.Question})
			return r, &PlanError{errors.New("the model asked a question instead of writing a script; say more and ask again")}
		}
		if a.Report == nil {
			a.Report = e.analyze(a.Script, j.dir)
		}
		r.rec.Script, r.rec.Explanation, r.rec.Report = a.Script, a.Explanation, a.Report
		switch {
		case j.opts.print:
			f.say(evPrint{a.Script})
			return r, nil
		case j.opts.dryRun:
			f.say(evDryRun{a})
			return r, nil
		}
		reason := confirmReason(a.Report, j.dir)
		switch {
		case j.opts.yes && reason != "":
			r.rec.Refused = reason
			f.say(evReview{a, ""})
			return r, &ConfirmError{reason}
		case j.opts.yes, !planned && reason == "":
			if j.show || planned {
				f.say(evReview{a, ""})
			}
			break review
		case !planned:
			// A script in hand needs only the second confirmation.
			j.careful = true
			f.say(evReview{a, reason})
			ok, _, err := f.confirm(reason)
			if err != nil {
				return r, e.aborted(f, r, false, "", err)
			}
			if !ok {
				return r, e.aborted(f, r, false, "", ErrAborted)
			}
			confirmed = true
			break review
		}
		if fresh {
			f.say(evReview{a, reason})
			fresh = false
			e.recheck(ctx, f, j, a.Script, tr)
		}
		act, err := f.review(a, reason)
		if err != nil {
			return r, e.aborted(f, r, false, "", err)
		}
		switch act {
		case actAbort:
			return r, e.aborted(f, r, false, "", ErrAborted)
		case actRun:
			if reason == "" {
				break review
			}
			ok, back, err := f.confirm(reason)
			switch {
			case err != nil:
				return r, e.aborted(f, r, false, "", err)
			case back:
				fresh = true
				continue
			case !ok:
				return r, e.aborted(f, r, false, "", ErrAborted)
			}
			confirmed = true
			break review
		case actEdit:
			edited, err := f.edit(a.Script)
			if err != nil {
				f.say(evFailed{err})
				continue
			}
			a, fresh = editedArtifact(a, edited, e.analyze(edited, j.dir)), true
		case actTest, actExample:
			if err := e.tryOut(ctx, f, j, a.Script, act, tr); err != nil {
				return r, e.aborted(f, r, false, "", err)
			}
		case actRevise:
			tr.announce(f, a.Script)
			fb, err := f.feedback()
			if err != nil {
				return r, e.aborted(f, r, false, "", err)
			}
			if fb == "" {
				continue
			}
			fb = tr.feedback(fb, a.Script)
			mctx, done := f.busy(ctx, "revising")
			na, err := e.revise(mctx, req, a.Script, fb)
			done()
			if err != nil {
				f.say(evFailed{err})
				continue
			}
			r.used(na.Model, na.Usage)
			if na.Kind() == planner.KindAnswer {
				// An answer instead of a revision: shown, and the
				// script stays as it was.
				f.say(evAnswer{na})
				fresh = true
				continue
			}
			a, fresh = na, true
		case actExplain:
			mctx, done := f.busy(ctx, "explaining")
			x, err := e.explain(mctx, req, a.Script)
			done()
			if err != nil {
				f.say(evFailed{err})
				continue
			}
			r.used("", x.Usage)
			f.say(evExplanation{x})
		}
	}

	// The network: a run reaches what the configuration and --net allow.
	// What the script names beyond that is offered before it runs, in
	// one question; what a run was refused, after it, to run it again.
	// --yes allows nothing more.
	script, rep := a.Script, a.Report
	allowed := append([]egress.Rule(nil), j.opts.allow...)
	asked := map[string]bool{}
	if !j.opts.network && !j.opts.yes {
		offer, err := e.netOffer(egress.Predict(script, j.dir), j.dir, allowed, asked)
		if err != nil {
			return r, err
		}
		if len(offer) > 0 {
			chosen, err := f.allowNet(netQuestion{rules: offer})
			if err != nil {
				return r, e.aborted(f, r, false, "", err)
			}
			allowed = append(allowed, chosen...)
		}
	}

	// A look at the host runs there (hostrun.go); one that signals its
	// processes only once the person confirmed it.
	if h := e.hostLook(j, script); h != nil && (len(h.Acts) == 0 || confirmed) {
		f.say(evHostLook{h})
		o, err := f.run(func(stdin io.Reader, stdout, stderr io.Writer) (*outcome, error) {
			return e.runHost(ctx, h, j.dir, j.env, stdin, stdout, stderr)
		})
		if err != nil {
			return r, err
		}
		r.ran = true
		return e.finish(ctx, f, j, r, o, entryOf(j, script), true)
	}

	// The run in the sandbox, on the streams the face hands over.
	var o *outcome
	shown := false // the effect summary of o has been shown
	for {
		spec := OpenSpec{Dir: j.dir, Env: j.env, Network: j.opts.network, Allow: allowed, Unprotected: j.opts.unprotected, Keep: j.keep}
		var err error
		o, err = f.run(func(stdin io.Reader, stdout, stderr io.Writer) (*outcome, error) {
			spec.Stdin, spec.Stdout, spec.Stderr = stdin, stdout, stderr
			return e.run(ctx, spec, prompt, script, rep)
		})
		if err != nil {
			return r, err
		}
		r.ran = true
		p := o.pending
		r.kept = p.Kept
		if p.Unsandboxed || j.opts.yes {
			break
		}
		var offer []egress.Rule
		for _, rule := range deniedRules(p.Network) {
			if !asked[rule.String()] {
				asked[rule.String()] = true
				offer = append(offer, rule)
			}
		}
		if len(offer) == 0 {
			break
		}
		// What the run did, then the question about what it was refused.
		f.say(evOutcome{o})
		shown = true
		chosen, err := f.allowNet(netQuestion{rules: offer, again: true})
		if err != nil {
			kept := e.drop(ctx, o)
			return r, e.aborted(f, r, true, kept, err)
		}
		if len(chosen) == 0 {
			break
		}
		kept := e.drop(ctx, o)
		allowed = append(allowed, chosen...)
		f.say(evNetAgain{chosen, kept})
		shown = false
	}
	res, err := e.finish(ctx, f, j, r, o, entryOf(j, script), shown)
	tr.keep(res)
	return res, err
}

// netOffer is what of rules (the script's destinations) runs in dir may
// not reach, beyond the configuration's policy and allowed, and has not
// been asked about; it marks them asked.
func (e *engine) netOffer(rules []egress.Rule, dir string, allowed []egress.Rule, asked map[string]bool) ([]egress.Rule, error) {
	var policy egress.Policy
	if e.cfg.Net != nil {
		var err error
		if policy, err = e.cfg.Net(dir); err != nil {
			return nil, err
		}
	}
	policy.Allow = append(append([]egress.Rule(nil), policy.Allow...), allowed...)
	var out []egress.Rule
	for _, r := range rules {
		var a netip.Addr
		if r.Host == "" {
			a = r.Prefix.Addr()
		}
		if asked[r.String()] || policy.Allows(r.Host, a, r.Port) {
			continue
		}
		asked[r.String()] = true
		out = append(out, r)
	}
	return out, nil
}

// deniedRules lists, once each, the rules that would allow the denied
// destinations a run tried.
func deniedRules(cs []egress.Contact) []egress.Rule {
	var out []egress.Rule
	seen := map[string]bool{}
	for _, c := range cs {
		if c.Allowed {
			continue
		}
		r, ok := c.Rule()
		if !ok || seen[r.String()] {
			continue
		}
		seen[r.String()] = true
		out = append(out, r)
	}
	return out
}

// reachedNetwork reports whether a run reached some destination.
func reachedNetwork(p *sandbox.Pending) bool {
	for _, c := range p.Network {
		if c.Allowed && c.Proto == egress.ProtoTCP && c.Error == "" {
			return true
		}
	}
	return false
}

// hasOutcome reports whether a run has an effect summary to show: files
// changed, paths changed live, the network tried, or a limit hit (or not
// applied).
func hasOutcome(o *outcome) bool {
	p := o.pending
	return o.changed() || len(p.Unprotected) > 0 || len(p.Network) > 0 || p.NetworkError != "" ||
		p.ScratchFull > 0 || len(p.Unlimited) > 0
}

// entryOf is what the planner's history keeps of j's script.
func entryOf(j job, script string) planner.HistoryEntry {
	if j.route == English {
		return planner.HistoryEntry{Prompt: j.text, Script: script}
	}
	return planner.HistoryEntry{Script: script}
}

// finish takes a run (or a staged change) from its effect summary to the
// commit, the abort, or the commit of some paths.
// shown says the effect summary has been shown already.
func (e *engine) finish(ctx context.Context, f face, j job, r *flowResult, o *outcome, entry planner.HistoryEntry, shown bool) (*flowResult, error) {
	planned := j.route == English
	p := o.pending
	run := &RunRecord{ID: p.ID, ExitCode: p.ExitCode, Unprotected: p.Unprotected, Unsandboxed: p.Unsandboxed, Changes: []effects.Change{},
		Network: p.Network, NetworkError: p.NetworkError, ScratchFull: p.ScratchFull, Unlimited: p.Unlimited}
	if p.Changes != nil && p.Changes.Changes != nil {
		run.Changes = p.Changes.Changes
		run.Tools = o.tools.Paths()
		if o.report != nil {
			s := effects.Compare(o.report, o.own)
			run.Surprises = &s
		}
	}
	r.rec.Run = run
	entry.ExitCode = p.ExitCode
	script := o.script
	status := func() error {
		if p.ExitCode != 0 {
			return ExitStatus(p.ExitCode)
		}
		return nil
	}
	if p.ExitCode != 0 {
		f.say(evExit{p.ExitCode})
	}
	switch {
	case o.host != nil:
		run.Host = true
		r.history = append(r.history, entry)
		r.saved = script
		return r, status()
	case p.Unsandboxed:
		r.history = append(r.history, entry)
		f.say(evUnsandboxed{})
		r.saved = script
		return r, status()
	case !o.changed() && len(p.Unprotected) == 0:
		r.history = append(r.history, entry)
		r.saved = script
		if !shown && hasOutcome(o) {
			f.say(evOutcome{o})
		}
		if !reachedNetwork(p) {
			_ = o.sb.Abort(p.ID)
			f.say(evNoChanges{typed: !planned && j.title == ""})
			return r, status()
		}
		// Nothing changed here, but the run reached the network: that
		// is kept in the history, as a transaction with no file changes.
		tx, err := o.sb.Commit(context.WithoutCancel(ctx), p.ID, sandbox.CommitOptions{Prompt: o.prompt, Tokens: tokensOf(r.rec.Usage)})
		if err != nil {
			_ = o.sb.Abort(p.ID)
			return r, err
		}
		run.Committed, run.Transaction = true, tx.ID
		f.say(evNetKept{tx})
		return r, status()
	}

	// Tools' own files alone (git status, less, vim without a write)
	// are committed as bookkeeping, never asked about.
	if o.own.Len() == 0 && len(p.Unprotected) == 0 {
		tx, err := o.sb.Commit(context.WithoutCancel(ctx), p.ID, sandbox.CommitOptions{Prompt: o.prompt, Tokens: tokensOf(r.rec.Usage), Bookkeeping: true, Tools: o.tools.Paths()})
		if err != nil {
			e.drop(ctx, o)
			return r, err
		}
		run.Committed, run.Transaction = true, tx.ID
		r.history = append(r.history, entry)
		r.saved = script
		f.say(evToolsKept{o, tx})
		return r, status()
	}

	// A line the person typed is committed when it ends, as bash would
	// have changed the files, and stays undoable; unless the person asked
	// to be asked, or the line did what --yes never covers.
	if e.autoCommit(j, o) {
		if !shown && (len(p.Network) > 0 || p.NetworkError != "") {
			f.say(evOutcome{o}) // what it tried to reach is worth the lines
			shown = true
		}
		tx, step, err := e.commit(context.WithoutCancel(ctx), o, nil, false, tokensOf(r.rec.Usage))
		if err == nil {
			run.Committed, run.Transaction = true, tx.ID
			r.history = append(r.history, entry)
			r.committed, r.cs, r.saved = &step, p.Changes, script
			f.say(evAutoCommitted{o, tx})
			return r, status()
		}
		// A conflict or a lock: the summary and the question, as for a
		// planned script, say what and let the person pick.
		f.say(evNotCommitted{err})
		shown = false
	}

	// The effect summary, then commit all, some paths, or nothing.
	if !shown {
		f.say(evOutcome{o})
	}
	var tx *sandbox.Tx
	var paths []string
	for {
		if !j.opts.yes {
			d, err := f.decide(o)
			if err == nil && d.abort {
				err = ErrAborted
			}
			if err != nil {
				kept := e.drop(ctx, o)
				entry.Output = "(aborted)"
				r.history = append(r.history, entry)
				return r, e.aborted(f, r, true, kept, err)
			}
			paths = d.paths
		}
		var step Step
		var err error
		tx, step, err = e.commit(context.WithoutCancel(ctx), o, paths, planned, tokensOf(r.rec.Usage))
		var le *sandbox.LockedError
		var ce *sandbox.ConflictError
		switch {
		case err == nil:
			r.committed = &step
		case errors.As(err, &le) && !j.opts.yes:
			// The other changes may still be committed alone.
			run.Locked = le.Paths
			f.say(evNotCommitted{err})
			continue
		default:
			e.drop(ctx, o)
			if errors.As(err, &le) {
				run.Locked = le.Paths
			}
			if errors.As(err, &ce) {
				run.Conflicts = ce.Conflicts
			}
			r.history = append(r.history, entry)
			return r, err
		}
		break
	}
	run.Locked = nil
	run.Committed, run.Transaction, run.Paths = true, tx.ID, paths
	r.history = append(r.history, entry)
	r.cs = p.Changes
	r.saved = script
	f.say(evCommitted{tx, paths})
	if err := status(); err != nil {
		return r, err
	}
	return r, nil
}

// autoCommit reports whether a run's changes are committed without a
// question: a typed line, with Config.Typed not ask, that needed no second
// confirmation, and that deleted nothing outside its directory (a deletion
// there is what --yes never covers; the summary shows it first).
func (e *engine) autoCommit(j job, o *outcome) bool {
	if !j.typed || j.careful || j.opts.yes || e.cfg.Typed == TypedAsk || len(o.pending.Unprotected) > 0 {
		return false
	}
	for _, c := range o.own.Changes {
		if c.Kind == effects.Deleted && !under(c.Path, j.dir) {
			return false
		}
	}
	return true
}

// outcome fills in o's parts: the person's changes and tools' own.
func (e *engine) outcome(o *outcome) *outcome {
	o.own, o.tools = e.tools.Split(o.pending.Changes)
	o.toolNames = e.tools.Tools(o.tools)
	return o
}

// drop discards a run that will not be committed. A run that created or
// modified files is kept instead (Sandbox.Keep), so that nothing the
// person made is lost by an answer: drop returns its id. The person's
// context may have ended (the terminal closed): keeping goes on.
func (e *engine) drop(ctx context.Context, o *outcome) string {
	p := o.pending
	if p.Unsandboxed {
		return ""
	}
	if madeSomething(o.own) {
		if err := o.sb.Keep(context.WithoutCancel(ctx), p.ID, o.prompt); err == nil {
			return p.ID
		}
	}
	_ = o.sb.Abort(p.ID)
	return ""
}

// madeSomething reports whether cs creates or modifies a file: what an
// abort would throw away. Deletions, new directories and metadata lose
// nothing when they are not made.
func madeSomething(cs *effects.ChangeSet) bool {
	if cs == nil {
		return false
	}
	for _, c := range cs.Changes {
		switch c.Kind {
		case effects.Created, effects.Modified, effects.TypeChanged:
			if c.After != nil && c.After.Type != effects.TypeDir {
				return true
			}
		}
	}
	return false
}

// aborted notes an abort in the record and tells the face, unless err is
// not an abort (the face's input failed, or ctx ended).
func (e *engine) aborted(f face, r *flowResult, ran bool, kept string, err error) error {
	if kept != "" && r.rec.Run != nil {
		r.rec.Run.Kept = kept
	}
	if errors.Is(err, ErrAborted) {
		r.rec.Aborted = true
		f.say(evAborted{ran, kept})
	}
	return err
}

// run runs script in a new sandbox with dir, env and the given streams.
func (e *engine) run(ctx context.Context, spec OpenSpec, prompt, script string, rep *effects.Report) (*outcome, error) {
	if e.cfg.Open == nil {
		return nil, errors.New("no sandbox configured")
	}
	sb, err := e.cfg.Open(ctx, spec)
	if err != nil {
		return nil, err
	}
	p, err := sb.Run(ctx, script)
	if err != nil {
		return nil, err
	}
	return e.outcome(&outcome{sb: sb, pending: p, report: rep, prompt: prompt, script: script, dir: spec.Dir}), nil
}

// commit commits the outcome (only paths, when given). A planned request
// that is committed is remembered, so the planner can recall it as an
// example. The returned Step is for the session's :export.
func (e *engine) commit(ctx context.Context, o *outcome, paths []string, planned bool, tokens *sandbox.Tokens) (*sandbox.Tx, Step, error) {
	tx, err := o.sb.Commit(ctx, o.pending.ID, sandbox.CommitOptions{Paths: paths, Prompt: o.prompt, Tokens: tokens, Tools: o.tools.Paths()})
	if err != nil {
		return nil, Step{}, err
	}
	step := Step{Prompt: o.prompt, Script: o.script, Dir: o.dir, TxID: tx.ID, Time: time.Now()}
	if planned && o.prompt != "" {
		if p, perr := e.getPlanner(); perr == nil {
			_ = p.Remember(planner.Record{Time: step.Time, Prompt: o.prompt, Script: o.script, Cwd: o.dir, Outcome: "committed"})
		}
	}
	return tx, step, nil
}

// editedArtifact is a copy of a with the person's edit as its script.
func editedArtifact(a *planner.Artifact, script string, rep *effects.Report) *planner.Artifact {
	na := *a
	na.Previous, na.Script, na.Report = a.Script, script, rep
	na.Diff = planner.UnifiedDiff("a/script", "b/script (edited)", a.Script, script)
	if a.Script == script {
		na.Diff = ""
	}
	return &na
}
