package planner

import (
	"github.com/tmc/langchaingo/llms"
)

// Usage is what a request cost: the tokens the provider counted, summed
// over every model call the request made (repairs included), and the cost
// when prices are known (see Pricing).
type Usage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
	// Calls is the number of model calls counted.
	Calls int `json:"calls"`
	// Estimated is set when at least one call's counts are estimates
	// (EstimateTokens of what was sent and received) because the provider
	// reported none.
	Estimated bool `json:"estimated,omitempty"`
	// Cost is InputTokens and OutputTokens at the configured prices, in
	// Currency; zero and Priced false when no prices are configured.
	Cost     float64 `json:"cost,omitempty"`
	Currency string  `json:"currency,omitempty"`
	Priced   bool    `json:"priced,omitempty"`
}

// Total is the input and output tokens together.
func (u Usage) Total() int { return u.InputTokens + u.OutputTokens }

// Add adds v's counts and cost to u.
func (u *Usage) Add(v Usage) {
	u.InputTokens += v.InputTokens
	u.OutputTokens += v.OutputTokens
	u.Calls += v.Calls
	u.Estimated = u.Estimated || v.Estimated
	u.Cost += v.Cost
	u.Priced = u.Priced || v.Priced
	if u.Currency == "" {
		u.Currency = v.Currency
	}
}

// Price is what a model costs per million tokens, as the config gives it
// (providers do not report prices in their answers).
type Price struct {
	Input    float64 // per million input (prompt) tokens
	Output   float64 // per million output (completion) tokens
	Currency string  // "USD" when empty
}

// Pricing sets the model's prices, so that Usage carries a cost.
func Pricing(pr Price) Option {
	return func(p *Planner) {
		if pr.Currency == "" {
			pr.Currency = "USD"
		}
		p.price = &pr
	}
}

// priced returns u with its cost at price pr; nil leaves it unpriced.
func (u Usage) priced(pr *Price) Usage {
	if pr == nil {
		return u
	}
	u.Cost = (float64(u.InputTokens)*pr.Input + float64(u.OutputTokens)*pr.Output) / 1e6
	u.Currency, u.Priced = pr.Currency, true
	return u
}

// usageOf reads the token counts langchaingo copies from the provider's
// usage fields into GenerationInfo: PromptTokens and CompletionTokens
// (OpenAI, Ollama's prompt_eval_count and eval_count, Google's
// OpenAI-compatible endpoint), InputTokens and OutputTokens (Anthropic).
// Every choice of one answer carries the same counts, so the first choice
// that has any is used. ok is false when the provider reported none.
func usageOf(resp *llms.ContentResponse) (in, out int, ok bool) {
	if resp == nil {
		return 0, 0, false
	}
	for _, c := range resp.Choices {
		if c == nil {
			continue
		}
		gi := c.GenerationInfo
		in = firstInt(gi, "PromptTokens", "InputTokens")
		out = firstInt(gi, "CompletionTokens", "OutputTokens")
		if in > 0 || out > 0 {
			return in, out, true
		}
	}
	return 0, 0, false
}

// firstInt returns the first of keys that holds a positive number.
func firstInt(m map[string]any, keys ...string) int {
	for _, k := range keys {
		var n int
		switch v := m[k].(type) {
		case int:
			n = v
		case int32:
			n = int(v)
		case int64:
			n = int(v)
		case float64:
			n = int(v)
		}
		if n > 0 {
			return n
		}
	}
	return 0
}

// messagesTokens estimates the input tokens of msgs, for providers that
// report no usage.
func messagesTokens(msgs []llms.MessageContent) int {
	n := 0
	for _, m := range msgs {
		for _, p := range m.Parts {
			if t, ok := p.(llms.TextContent); ok {
				n += EstimateTokens(t.Text)
			}
		}
	}
	return n
}
