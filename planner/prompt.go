package planner

import (
	"context"
	"fmt"
	"strings"
)

// systemPrompt is the fixed instruction sent with every planning request.
const systemPrompt = `You are the planner of nash, a natural-language shell for Linux. You turn the person's request into a short bash script for the machine described below. The person reviews the script before it runs in a sandbox.

Answer with exactly one JSON object and nothing else:
{"script": "...", "explanation": "...", "needs_network": false, "question": ""}

- script: bash that does what was asked, no more. Short and readable; quote file names; use relative paths in the working directory; no sudo unless asked; nothing interactive (no editors, pagers or prompts); prefer standard tools (find, grep, sed, awk, mv, cp, tar).
- If the request is already a shell command, return it unchanged.
- explanation: one or two plain sentences on what the script does.
- needs_network: true only if the script must reach the network.
- question: when the request is ambiguous in a way that changes what would happen (which files, what to delete), leave script empty and ask one short question here instead.
- Never invent file names that the listing or the request does not support.`

// answersPrompt is the instruction sent with every planning request when
// the planner may answer questions (Answers).
const answersPrompt = `You are the planner of nash, a natural-language shell for Linux. You turn the person's request into a short bash script for the machine described below, or, when they ask a question, you answer it. The person reviews a script before it runs in a sandbox.

Answer with exactly one JSON object and nothing else:
{"script": "...", "explanation": "...", "needs_network": false, "question": "", "answer": ""}

- script: bash that does what was asked, no more. Short and readable; quote file names; use relative paths in the working directory; no sudo unless asked; nothing interactive (no editors, pagers or prompts); prefer standard tools (find, grep, sed, awk, mv, cp, tar).
- If the request is already a shell command, return it unchanged.
- explanation: one or two plain sentences on what the script does.
- needs_network: true only if the script must reach the network.
- answer: when the person asks a question rather than for something to be done ("what does tar -xzf do", "how do I find my IP", "why did this fail" about text they piped in), leave script empty and answer here instead, in short Markdown: a few sentences, at most about 15 lines. Put each command they might run in a fenced bash block of its own, complete and runnable as written.
- question: when the request is ambiguous in a way that changes what would happen (which files, what to delete), leave script empty and ask one short question here instead.
- Never invent file names that the listing or the request does not support.`

// explainPrompt is the fixed instruction for Explain.
const explainPrompt = `You explain bash scripts to the person who is about to run them, step by step, in plain words. Base what you say on the script and on the static analysis given; do not guess beyond them.

Answer with exactly one JSON object and nothing else:
{"summary": "one sentence", "steps": [{"code": "a line or part of the script", "explanation": "what it does"}], "warnings": ["anything destructive, irreversible or surprising"]}`

// PromptStats measures a prompt in estimated tokens (see EstimateTokens).
type PromptStats struct {
	// Fixed is the part sent with every request whatever its content: the
	// instructions and the machine description.
	Fixed int
	// Total is the whole prompt as sent on the first attempt.
	Total int
	// Sections gives the size of each variable part by name ("listing",
	// "history", "examples", "commands", "documents", "input", "request").
	Sections map[string]int
	// Input says how much of the piped input was sent; nil without one.
	Input *InputStats
}

// section is one titled part of the user message.
type section struct {
	name, title, body string
}

// budget splits a token budget among the variable sections.
type budget struct {
	listing, history, examples, documents int
}

func splitBudget(total int) budget {
	return budget{
		listing:   total / 10,
		history:   total / 4,
		examples:  total / 4,
		documents: total / 5,
	}
}

// promptParts is what gathering context produced for one request.
type promptParts struct {
	system   string
	sections []section
	examples []Record
	commands []Command
	docs     []Document
	stats    PromptStats
	warnings []string
}

// gather collects the context of a request within the token budget.
func (p *Planner) gather(ctx context.Context, req Request, extra ...section) (promptParts, error) {
	parts := promptParts{system: systemPrompt}
	if p.answers {
		parts.system = answersPrompt
	}
	b := splitBudget(p.budget)
	sys := p.system
	machine := fmt.Sprintf("OS: %s", sys.OS)
	if sys.Distro != "" {
		machine += " (" + sys.Distro + ")"
	}
	machine += fmt.Sprintf("; shell: %s", sys.Shell)
	if sys.User != "" {
		machine += "; user: " + sys.User
	}
	if sys.Home != "" {
		machine += "; home: " + sys.Home
	}
	if req.Cwd != "" {
		machine += "\nWorking directory: " + escapeName(relPath(req.Cwd, sys.Home))
	}
	parts.sections = append(parts.sections, section{name: "machine", title: "Machine", body: machine})

	if req.Cwd != "" && p.listLimit > 0 {
		l, err := listDir(req.Cwd, p.listLimit)
		if err != nil {
			parts.warnings = append(parts.warnings, err.Error())
			l = "(cannot be listed)"
		}
		parts.sections = append(parts.sections, section{name: "listing", title: "Files in the working directory", body: fitTokens(l, b.listing)})
	}

	if h := renderHistory(req.History, p.historyN, b.history); h != "" {
		parts.sections = append(parts.sections, section{name: "history", title: "Recent session (oldest first)", body: h})
	}

	if p.retriever != nil && p.docsK > 0 && wantsRetrieval(req.Prompt) {
		docs, err := p.retriever.Retrieve(ctx, req.Prompt, p.docsK)
		if err != nil {
			if ctx.Err() != nil {
				return parts, fmt.Errorf("retrieve files: %w", err)
			}
			// Retrieval is a help, not a requirement: plan without it.
			parts.warnings = append(parts.warnings, fmt.Sprintf("retrieve files: %v", err))
			docs = nil
		}
		if body, used := renderDocs(docs, sys.Home, b.documents); body != "" {
			parts.docs = used
			parts.sections = append(parts.sections, section{name: "documents", title: "Files whose contents may match (from the index)", body: body})
		}
	}

	if cmds := selectCommands(req.Prompt, p.commands); len(cmds) > 0 {
		var sb strings.Builder
		for _, c := range cmds {
			fmt.Fprintf(&sb, "%s\n    %s\n", c.Usage, c.Description)
		}
		parts.commands = cmds
		parts.sections = append(parts.sections, section{name: "commands", title: "nash commands you may use in the script (it cannot answer their questions: give --yes where a command takes it)", body: strings.TrimRight(sb.String(), "\n")})
	}

	if p.memory != nil && p.examplesK > 0 {
		matches := p.memory.Search(req.Prompt, p.examplesK)
		if body, used := renderExamples(matches, b.examples); body != "" {
			parts.examples = used
			parts.sections = append(parts.sections, section{name: "examples", title: "Similar requests this person accepted before", body: body})
		}
	}

	parts.sections = append(parts.sections, extra...)
	if req.Input != nil {
		sec, st := renderInput(req.Input, p.inputBudget)
		parts.sections = append(parts.sections, sec)
		parts.stats.Input = &st
	}
	parts.sections = append(parts.sections, section{name: "request", title: "Request", body: req.Prompt})

	parts.stats.Fixed = EstimateTokens(parts.system) + EstimateTokens(parts.sections[0].body)
	parts.stats.Sections = map[string]int{}
	parts.stats.Total = EstimateTokens(parts.system) + EstimateTokens(parts.user())
	for _, s := range parts.sections[1:] {
		parts.stats.Sections[s.name] += EstimateTokens(s.body)
	}
	return parts, nil
}

// user renders the user message.
func (pp promptParts) user() string {
	var b strings.Builder
	for i, s := range pp.sections {
		if i > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString("## ")
		b.WriteString(s.title)
		b.WriteString("\n")
		b.WriteString(s.body)
	}
	return b.String()
}

// fitTokens cuts s to about n tokens.
func fitTokens(s string, n int) string {
	if EstimateTokens(s) <= n {
		return s
	}
	return clip(s, n*4)
}

// renderHistory renders the last n entries, newest kept first when the
// budget runs out; outputs are cut to a few lines each.
func renderHistory(h []HistoryEntry, n, tokens int) string {
	if n <= 0 || len(h) == 0 {
		return ""
	}
	if len(h) > n {
		h = h[len(h)-n:]
	}
	var blocks []string
	used := 0
	for i := len(h) - 1; i >= 0; i-- {
		e := h[i]
		var b strings.Builder
		if e.Prompt != "" {
			fmt.Fprintf(&b, "Request: %s\n", oneLine(e.Prompt, 300))
		}
		if e.Script != "" || e.Answer == "" {
			fmt.Fprintf(&b, "Script:\n%s\nExit code: %d", indent(truncateMiddle(e.Script, 600)), e.ExitCode)
		} else {
			fmt.Fprintf(&b, "Answer:\n%s", indent(truncateMiddle(e.Answer, 600)))
		}
		if out := strings.TrimSpace(e.Output); out != "" {
			fmt.Fprintf(&b, "\nOutput:\n%s", indent(truncateMiddle(out, 400)))
		}
		t := EstimateTokens(b.String())
		if used+t > tokens {
			break
		}
		used += t
		blocks = append(blocks, b.String())
	}
	// back to oldest first
	for i, j := 0, len(blocks)-1; i < j; i, j = i+1, j-1 {
		blocks[i], blocks[j] = blocks[j], blocks[i]
	}
	return strings.Join(blocks, "\n---\n")
}

func renderExamples(ms []Match, tokens int) (string, []Record) {
	var b strings.Builder
	var used []Record
	total := 0
	for _, m := range ms {
		s := fmt.Sprintf("Request: %s\nScript:\n%s\n\n", oneLine(m.Prompt, 300), indent(truncateMiddle(m.Script, 800)))
		t := EstimateTokens(s)
		if total+t > tokens {
			break
		}
		total += t
		b.WriteString(s)
		used = append(used, m.Record)
	}
	return strings.TrimRight(b.String(), "\n"), used
}

func renderDocs(docs []Document, home string, tokens int) (string, []Document) {
	var b strings.Builder
	var used []Document
	total := 0
	for _, d := range docs {
		s := fmt.Sprintf("%s\n    %s\n", escapeName(relPath(d.Path, home)), oneLine(d.Snippet, 240))
		t := EstimateTokens(s)
		if total+t > tokens {
			break
		}
		total += t
		b.WriteString(s)
		used = append(used, d)
	}
	return strings.TrimRight(b.String(), "\n"), used
}

// oneLine folds s into one line of at most n bytes, control characters
// escaped.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, s)
	return clip(s, n)
}

func indent(s string) string {
	return "    " + strings.ReplaceAll(strings.TrimRight(s, "\n"), "\n", "\n    ")
}
