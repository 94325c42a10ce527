package planner

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/nash-shell/nash/effects"
	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/anthropic"
	"github.com/tmc/langchaingo/llms/ollama"
	"github.com/tmc/langchaingo/llms/openai"
)

// Artifact is what the planner returns for review: a script with its
// explanation, or a question, or (with Answers) an answer. Kind says
// which. Nothing in it has been run.
type Artifact struct {
	Request      string // the prompt it answers
	Script       string // bash; parses; empty when Question or Answer is set
	Explanation  string
	NeedsNetwork bool
	Question     string // a clarifying question instead of a script

	// Answer is a short answer in Markdown to a question, instead of a
	// script (only with Answers). Snippets are the shell commands quoted
	// in it that parse, which the person may pick and run through review.
	Answer   string
	Snippets []Snippet

	// Previous and Diff are set by Revise: the script revised and a
	// unified diff from it to Script.
	Previous string
	Diff     string

	// Report is the static analysis of Script (effects.Analyze): the
	// commands, paths, network use and risk the shell shows for review.
	// Nil when Question is set.
	Report *effects.Report

	Model    string // the provider spec, like "ollama:qwen2.5-coder:7b"
	Attempts int    // model calls made, repairs included
	Raw      string // the model's answer as sent, for the log

	Examples  []Record   // remembered requests shown to the model
	Commands  []Command  // nash commands described to the model
	Documents []Document // retrieved files shown to the model
	Prompt    PromptStats

	// Usage is what the request cost in tokens over every model call,
	// repairs included, as the provider reported it.
	Usage Usage

	// Warnings lists context that could not be gathered (the listing, the
	// retrieval); the plan went ahead without it. For the log.
	Warnings []string
}

// Explanation is a script explained step by step.
type Explanation struct {
	Summary  string
	Steps    []Step
	Warnings []string
	// Report is the static analysis the explanation was grounded in.
	Report *effects.Report
	// Usage is what the explanation cost in tokens.
	Usage Usage
}

// Step is one part of a script and what it does.
type Step struct {
	Code        string `json:"code"`
	Explanation string `json:"explanation"`
}

// ErrNoScript is matched by errors.Is when the model gave no usable script
// after every repair attempt (empty, malformed, or not parsing as bash).
var ErrNoScript = errors.New("model gave no usable script")

// ErrRequestTooLong is matched by errors.Is when a request is larger than
// twice the token budget (see TokenBudget).
var ErrRequestTooLong = errors.New("request too long")

// ErrTimeout is matched by errors.Is when the model did not answer in time.
var ErrTimeout = errors.New("model did not answer in time")

// Planner turns requests into Artifacts. It is safe for concurrent use.
type Planner struct {
	model    llms.Model
	spec     Spec
	url      string
	jsonMode bool
	answers  bool
	price    *Price

	// client carries requests to the provider (with retries); nil for a
	// model given with LLM or Respond.
	client *http.Client
	now    func() time.Time

	getenv     func(string) string
	httpClient *http.Client
	retry      RetryPolicy
	sleep      SleepFunc
	timeout    time.Duration
	maxRepairs int
	maxAnswer  int
	maxTokens  int

	budget      int
	inputBudget int
	listLimit   int
	historyN    int
	examplesK   int
	docsK       int

	// noJSON is set once the provider has rejected JSON mode.
	noJSON atomic.Bool

	memory    *Memory
	retriever Retriever
	commands  []Command
	system    System
	systemSet bool
}

// Option configures a Planner.
type Option func(*Planner)

// ModelSpec chooses the provider and model, as "provider:model" (see
// ParseSpec). Empty means DefaultSpec.
func ModelSpec(spec string) Option {
	return func(p *Planner) { p.spec.Provider, p.spec.Model = "", spec }
}

// LLM makes the planner use m, a langchaingo model, instead of building one
// from the spec; name is what Artifact.Model reports. For tests and for
// callers that build their own client.
func LLM(m llms.Model, name string) Option {
	return func(p *Planner) { p.model, p.spec = m, Spec{Model: name} }
}

// JSONMode turns the provider's JSON output mode on or off. It is on by
// default for providers that have one (ollama, openai, googleai); turn it
// off for OpenAI-compatible servers that reject response_format.
func JSONMode(on bool) Option { return func(p *Planner) { p.jsonMode = on } }

// Getenv supplies the environment the provider settings are read from
// (OLLAMA_HOST, OPENAI_API_KEY, ...), and USER and HOME for the machine
// description. The default is an empty environment; cmd/nash passes
// os.Getenv.
func Getenv(f func(string) string) Option { return func(p *Planner) { p.getenv = f } }

// HTTPClient sets the client whose transport carries requests to the
// provider; the planner adds retries on top of its transport.
func HTTPClient(c *http.Client) Option { return func(p *Planner) { p.httpClient = c } }

// Retry sets the retry policy for 429 and 5xx answers.
func Retry(r RetryPolicy) Option { return func(p *Planner) { p.retry = r } }

// Sleeper sets how the planner waits between retries (tests pass a fake).
func Sleeper(f SleepFunc) Option { return func(p *Planner) { p.sleep = f } }

// Timeout bounds each model call, retries included. Default 2 minutes; 0
// leaves only the caller's context.
func Timeout(d time.Duration) Option { return func(p *Planner) { p.timeout = d } }

// MaxRepairs sets how many times the model is asked again after an answer
// that is empty, malformed or does not parse as bash. Default 2.
func MaxRepairs(n int) Option { return func(p *Planner) { p.maxRepairs = n } }

// MaxAnswerBytes caps the size of one answer; larger answers fail with
// ErrAnswerTooLarge. Default 256 KiB.
func MaxAnswerBytes(n int) Option { return func(p *Planner) { p.maxAnswer = n } }

// MaxOutputTokens caps the tokens the model may generate per answer.
// Default 2,048; raise it for models that think aloud before answering.
func MaxOutputTokens(n int) Option { return func(p *Planner) { p.maxTokens = n } }

// TokenBudget sets the estimated tokens the variable parts of a prompt may
// use (listing, history, examples, retrieved files). Default 3,000.
func TokenBudget(n int) Option { return func(p *Planner) { p.budget = n } }

// ListingLimit sets how many entries of the working directory are listed.
// Default 60; 0 turns the listing off.
func ListingLimit(n int) Option { return func(p *Planner) { p.listLimit = n } }

// HistoryLimit sets how many recent session entries are sent. Default 5.
func HistoryLimit(n int) Option { return func(p *Planner) { p.historyN = n } }

// ExampleLimit sets how many remembered requests are shown as examples.
// Default 3.
func ExampleLimit(n int) Option { return func(p *Planner) { p.examplesK = n } }

// UseMemory sets the memory of past requests used for examples.
func UseMemory(m *Memory) Option { return func(p *Planner) { p.memory = m } }

// UseRetriever sets the index that finds files by content; k is how many
// files to ask for (default 5 when k <= 0).
func UseRetriever(r Retriever, k int) Option {
	return func(p *Planner) {
		p.retriever = r
		if k <= 0 {
			k = 5
		}
		p.docsK = k
	}
}

// Commands sets the descriptions of nash's own commands that a prompt may
// include (see Command); by default there are none.
func Commands(c []Command) Option { return func(p *Planner) { p.commands = c } }

// SystemInfo sets the machine description instead of detecting it.
func SystemInfo(s System) Option { return func(p *Planner) { p.system, p.systemSet = s, true } }

// New returns a Planner. Without ModelSpec or LLM it uses DefaultSpec.
// Building the client contacts nothing; a missing key or unknown provider
// fails here with a *ProviderError.
func New(opts ...Option) (*Planner, error) {
	p := &Planner{
		retry:       DefaultRetryPolicy(),
		sleep:       Sleep,
		timeout:     2 * time.Minute,
		maxRepairs:  2,
		maxAnswer:   256 << 10,
		maxTokens:   2048,
		budget:      3000,
		inputBudget: 2000,
		now:         time.Now,
		listLimit:   60,
		historyN:    5,
		examplesK:   3,
		jsonMode:    true,
	}
	for _, o := range opts {
		o(p)
	}
	if p.getenv == nil {
		p.getenv = func(string) string { return "" }
	}
	if !p.systemSet {
		p.system = DetectSystem(p.getenv)
	}
	if p.model == nil {
		// ModelSpec left the unparsed spec in p.spec.Model.
		spec, err := ParseSpec(p.spec.Model)
		if err != nil {
			return nil, err
		}
		p.spec = spec
		base := p.httpClient
		if base == nil {
			base = &http.Client{}
		}
		rt := base.Transport
		if rt == nil {
			rt = http.DefaultTransport
		}
		client := *base
		// The body limit leaves room for the JSON envelope and escaping,
		// and stays below the Ollama client's 512 kB line limit, past
		// which it silently drops the answer.
		client.Transport = &transport{base: rt, policy: p.retry, sleep: p.sleep, now: time.Now, maxBody: int64(p.maxAnswer)*3/2 + 4096}
		m, u, err := NewModel(spec, p.getenv, &client)
		if err != nil {
			return nil, err
		}
		p.model, p.url, p.client = m, u, &client
		p.jsonMode = p.jsonMode && supportsJSONMode(spec.Provider)
	}
	return p, nil
}

// Model returns the provider spec in use, like "ollama:qwen2.5-coder:7b".
func (p *Planner) Model() string { return p.spec.String() }

// Memory returns the planner's memory, or nil.
func (p *Planner) Memory() *Memory { return p.memory }

// Remember stores a committed request in memory; without a memory it does
// nothing.
func (p *Planner) Remember(r Record) error {
	if p.memory == nil {
		return nil
	}
	return p.memory.Add(r)
}

// Plan turns req into an Artifact. It asks the model for the JSON answer,
// parses it tolerantly and checks that the script parses as bash; after an
// unusable answer it asks again with the exact problem, at most MaxRepairs
// times. It runs nothing.
func (p *Planner) Plan(ctx context.Context, req Request) (*Artifact, error) {
	if err := p.checkRequest(req); err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	parts, err := p.gather(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("plan: %w", err)
	}
	return p.ask(ctx, req, parts)
}

// checkRequest refuses empty requests and requests larger than twice the
// token budget, which would crowd out the context.
func (p *Planner) checkRequest(req Request) error {
	if strings.TrimSpace(req.Prompt) == "" {
		return errors.New("empty request")
	}
	if n, limit := EstimateTokens(req.Prompt), 2*p.budget; n > limit {
		return fmt.Errorf("%w: about %d tokens, limit %d", ErrRequestTooLong, n, limit)
	}
	return nil
}

// Revise returns a script that does what previous did, changed as little
// as needed to follow feedback, with a diff from previous.
func (p *Planner) Revise(ctx context.Context, req Request, previous, feedback string) (*Artifact, error) {
	if strings.TrimSpace(feedback) == "" {
		return nil, errors.New("revise: empty feedback")
	}
	if err := p.checkRequest(Request{Prompt: req.Prompt + " " + feedback + " " + previous}); err != nil {
		return nil, fmt.Errorf("revise: %w", err)
	}
	prev := section{name: "previous", title: "Script proposed before", body: "```bash\n" + strings.TrimRight(previous, "\n") + "\n```"}
	fb := section{name: "feedback", title: "The person's feedback on it", body: feedback + "\n\nRevise the script to follow the feedback, changing as little as needed; keep every other line as it is."}
	parts, err := p.gather(ctx, req, prev, fb)
	if err != nil {
		return nil, fmt.Errorf("revise: %w", err)
	}
	a, err := p.ask(ctx, req, parts)
	if err != nil {
		return nil, fmt.Errorf("revise: %w", err)
	}
	a.Previous = previous
	if a.Script != "" {
		a.Diff = UnifiedDiff("a/script", "b/script", previous, a.Script)
	}
	return a, nil
}

// Explain explains script step by step, grounded in its static analysis
// (effects.Analyze with req.Cwd as the working directory): the commands,
// the paths each touches, and the risks found.
func (p *Planner) Explain(ctx context.Context, req Request, script string) (*Explanation, error) {
	rep, err := check(script, req.Cwd, p.system.Home)
	if err != nil {
		return nil, fmt.Errorf("explain: %w", err)
	}
	var user strings.Builder
	fmt.Fprintf(&user, "## Script\n```bash\n%s\n```\n\n## Static analysis\n%s", strings.TrimRight(script, "\n"), reportSummary(rep))
	msgs := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, explainPrompt),
		llms.TextParts(llms.ChatMessageTypeHuman, user.String()),
	}
	r, err := p.call(ctx, msgs, newStreamer(req.Stream, p.now), 0)
	if err != nil {
		return nil, fmt.Errorf("explain: %w", err)
	}
	e, err := parseExplanation(r.text)
	if err != nil {
		return nil, err
	}
	e.Report = rep
	e.Usage = r.usage
	return e, nil
}

// ask runs the answer-and-repair loop.
func (p *Planner) ask(ctx context.Context, req Request, parts promptParts) (*Artifact, error) {
	ctx = context.WithValue(ctx, requestKey{}, req)
	msgs := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, parts.system),
		llms.TextParts(llms.ChatMessageTypeHuman, parts.user()),
	}
	st := newStreamer(req.Stream, p.now)
	var lastErr error
	var usage Usage
	calls := 0
	repairs := max(p.maxRepairs, 0)
	for attempt := 0; attempt <= repairs; attempt++ {
		r, err := p.call(ctx, msgs, st, attempt)
		calls += r.calls
		usage.Add(r.usage)
		raw := r.text
		var feedback string
		switch {
		case errors.Is(err, ErrEmptyAnswer):
			feedback = "Your answer was empty. Answer with the JSON object described in the instructions."
		case err != nil:
			return nil, err
		}
		if err == nil {
			ans, perr := ParseAnswer(raw)
			var refusal *RefusalError
			switch {
			case errors.As(perr, &refusal):
				return nil, perr
			case perr != nil:
				err = perr
				feedback = fmt.Sprintf("Your answer could not be used (%v). Answer again with only the JSON object described in the instructions.", perr)
			case ans.Markdown != "" && !p.answers:
				err = fmt.Errorf("%w: an answer in prose where a script was asked for", ErrMalformedAnswer)
				feedback = "A script was asked for, not an answer in prose. Answer again with the JSON object described in the instructions, with the script in \"script\"."
			case ans.Question != "" || ans.Markdown != "":
				return p.artifact(req.Prompt, raw, ans, nil, calls, usage, parts), nil
			default:
				rep, serr := check(ans.Script, req.Cwd, p.system.Home)
				if serr != nil {
					err = serr
					feedback = fmt.Sprintf("The script does not parse as bash: %v\nFix it and answer again with the whole JSON object.", errors.Unwrap(serr))
				} else {
					return p.artifact(req.Prompt, raw, ans, rep, calls, usage, parts), nil
				}
			}
		}
		lastErr = err
		if raw == "" {
			raw = "(empty)"
		}
		msgs = append(msgs,
			llms.TextParts(llms.ChatMessageTypeAI, raw),
			llms.TextParts(llms.ChatMessageTypeHuman, feedback))
	}
	return nil, fmt.Errorf("%w after %d attempts: %w", ErrNoScript, repairs+1, lastErr)
}

func (p *Planner) artifact(prompt, raw string, a Answer, rep *effects.Report, calls int, usage Usage, parts promptParts) *Artifact {
	art := &Artifact{
		Raw:          raw,
		Report:       rep,
		Request:      prompt,
		Script:       a.Script,
		Explanation:  a.Explanation,
		NeedsNetwork: a.NeedsNetwork,
		Question:     a.Question,
		Answer:       a.Markdown,
		Model:        p.spec.String(),
		Attempts:     calls,
		Examples:     parts.examples,
		Commands:     parts.commands,
		Documents:    parts.docs,
		Prompt:       parts.stats,
		Usage:        usage,
		Warnings:     parts.warnings,
	}
	if art.Answer != "" {
		art.Snippets = Snippets(art.Answer)
	}
	return art
}

// callResult is the outcome of one call: the answer's text, how many
// model calls it took (2 when JSON mode was refused and the call was
// made again without it), and what they used.
type callResult struct {
	text  string
	calls int
	usage Usage
}

// call makes one model call within the timeout, streaming to st when it is
// set. An empty answer gives ErrEmptyAnswer.
func (p *Planner) call(ctx context.Context, msgs []llms.MessageContent, st *streamer, attempt int) (callResult, error) {
	useJSON := p.jsonMode && !p.noJSON.Load()
	text, u, err := p.callOnce(ctx, msgs, useJSON, st, attempt)
	var serr *StatusError
	if useJSON && errors.As(err, &serr) && serr.StatusCode == http.StatusBadRequest {
		// Some OpenAI-compatible servers reject response_format. Ask once
		// more without it, and stop asking for it if that works.
		text2, u2, err2 := p.callOnce(ctx, msgs, false, st, attempt)
		if err2 == nil {
			p.noJSON.Store(true)
		}
		u.Add(u2)
		return callResult{text: text2, calls: 2, usage: u}, err2
	}
	return callResult{text: text, calls: 1, usage: u}, err
}

// callOnce makes one model call within the timeout, and returns its text
// and usage. The usage is counted even when the call fails after the
// model answered (an empty or oversized answer).
func (p *Planner) callOnce(ctx context.Context, msgs []llms.MessageContent, useJSON bool, st *streamer, attempt int) (string, Usage, error) {
	if err := ctx.Err(); err != nil {
		return "", Usage{}, fmt.Errorf("model %s: %w", p.spec, err)
	}
	cctx, cancel := ctx, context.CancelFunc(func() {})
	if p.timeout > 0 {
		cctx, cancel = context.WithTimeout(ctx, p.timeout)
	}
	defer cancel()
	cctx, rec := withCallRecord(cctx)
	opts := []llms.CallOption{llms.WithTemperature(0), llms.WithMaxTokens(p.maxTokens)}
	if useJSON {
		opts = append(opts, llms.WithJSONMode())
	}
	if st != nil {
		opts = append(opts, llms.WithStreamingFunc(st.chunk))
	}
	st.begin(attempt)
	resp, err := p.model.GenerateContent(cctx, msgs, opts...)
	if err == nil && cctx.Err() != nil {
		// Some clients end a stream cut by the context without an error,
		// with the text so far: it is not an answer.
		err = cctx.Err()
	}
	if err != nil {
		st.end("", Usage{})
		return "", Usage{}, p.callError(ctx, cctx, rec, err)
	}
	var b strings.Builder
	for _, c := range resp.Choices {
		if c != nil {
			b.WriteString(c.Content)
		}
	}
	text := b.String()
	u := Usage{Calls: 1}
	if in, out, ok := usageOf(resp); ok {
		u.InputTokens, u.OutputTokens = in, out
	} else {
		u.InputTokens, u.OutputTokens, u.Estimated = messagesTokens(msgs), EstimateTokens(text), true
	}
	u = u.priced(p.price)
	// A client may stop reading at our size limit and still report success
	// (the Ollama client ignores scanner errors): trust the transport.
	if terr, _ := rec.last(); errors.Is(terr, ErrAnswerTooLarge) {
		st.end("", u)
		return "", u, fmt.Errorf("model %s: %w (limit %d bytes)", p.spec, ErrAnswerTooLarge, p.maxAnswer)
	}
	if len(text) > p.maxAnswer {
		st.end("", u)
		return "", u, fmt.Errorf("model %s: %w (%d bytes, limit %d)", p.spec, ErrAnswerTooLarge, len(text), p.maxAnswer)
	}
	st.end(text, u)
	if strings.TrimSpace(text) == "" {
		return "", u, fmt.Errorf("model %s: %w", p.spec, ErrEmptyAnswer)
	}
	return text, u, nil
}

// callError turns what went wrong in a model call into a clear, typed
// error. The transport's record is consulted because some clients replace
// transport errors with plain text.
func (p *Planner) callError(parent, cctx context.Context, rec *callRecord, err error) error {
	if perr := parent.Err(); perr != nil {
		return fmt.Errorf("model %s: %w", p.spec, perr)
	}
	if errors.Is(cctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("model %s: %w within %s: %w", p.spec, ErrTimeout, p.timeout, context.DeadlineExceeded)
	}
	terr, _ := rec.last()
	if terr == nil {
		terr = err
	}
	var serr *StatusError
	switch {
	case errors.As(terr, &serr) && serr.StatusCode == http.StatusNotFound && p.spec.Provider == ProviderOllama:
		return &ProviderError{Spec: p.spec.String(), URL: p.url, Err: fmt.Errorf("model %q is not available (run: ollama pull %s): %w", p.spec.Model, p.spec.Model, serr)}
	case errors.As(terr, &serr):
		return fmt.Errorf("model %s: %w", p.spec, serr)
	case errors.Is(terr, ErrAnswerTooLarge):
		return fmt.Errorf("model %s: %w", p.spec, ErrAnswerTooLarge)
	case isUnreachable(terr):
		return &ProviderError{Spec: p.spec.String(), URL: p.url, Err: fmt.Errorf("nothing answers: %w", terr)}
	case isEmptyResponse(err):
		return fmt.Errorf("model %s: %w", p.spec, ErrEmptyAnswer)
	}
	return fmt.Errorf("model %s: %w", p.spec, err)
}

// isUnreachable reports whether err means no server listens: refused,
// unknown host, no route.
func isUnreachable(err error) bool {
	if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) || errors.Is(err, syscall.ENETUNREACH) {
		return true
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return true
	}
	var opErr *net.OpError
	return errors.As(err, &opErr) && opErr.Op == "dial"
}

// isEmptyResponse matches the "no response" errors of langchaingo clients.
func isEmptyResponse(err error) bool {
	return errors.Is(err, openai.ErrEmptyResponse) || errors.Is(err, anthropic.ErrEmptyResponse) || errors.Is(err, ollama.ErrEmptyResponse)
}
