package planner

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/anthropic"
	"github.com/tmc/langchaingo/llms/ollama"
	"github.com/tmc/langchaingo/llms/openai"
)

// Provider names accepted in a model spec.
const (
	ProviderOllama    = "ollama"
	ProviderOpenAI    = "openai"
	ProviderAnthropic = "anthropic"
	ProviderGoogleAI  = "googleai"
)

// DefaultSpec is the model used when nothing is configured: Ollama on
// localhost (or OLLAMA_HOST) with a 7B coder model that fits a laptop.
const DefaultSpec = "ollama:qwen2.5-coder:7b"

// defaultModel returns the model used when a spec names only the provider,
// and whether the provider is known.
func defaultModel(provider string) (string, bool) {
	switch provider {
	case ProviderOllama:
		return "qwen2.5-coder:7b", true
	case ProviderOpenAI:
		return "gpt-4o-mini", true
	case ProviderAnthropic:
		return "claude-3-5-haiku-latest", true
	case ProviderGoogleAI:
		return "gemini-2.0-flash", true
	}
	return "", false
}

// Default endpoints.
const (
	defaultOllamaURL = "http://127.0.0.1:11434"
	defaultOpenAIURL = "https://api.openai.com/v1"
	// Google AI's OpenAI-compatible endpoint; see provider docs in doc.go.
	defaultGoogleAIURL = "https://generativelanguage.googleapis.com/v1beta/openai"
)

// SetupHelp is a short text on how to configure a model provider. Errors
// that mean "no provider is usable" include it; the shell may print it.
const SetupHelp = `set up a model provider, one of:
  ollama:    install Ollama, run "ollama serve" and "ollama pull qwen2.5-coder:7b" (OLLAMA_HOST if not on localhost)
  openai:    --model openai:gpt-4o-mini with OPENAI_API_KEY (OPENAI_BASE_URL for llama.cpp, vLLM, LM Studio, OpenRouter)
  anthropic: --model anthropic:claude-3-5-haiku-latest with ANTHROPIC_API_KEY
  googleai:  --model googleai:gemini-2.0-flash with GOOGLE_API_KEY`

// ErrNoProvider is matched (errors.Is) by every error that means no model
// provider could be reached or used: unknown provider, missing key,
// connection refused.
var ErrNoProvider = errors.New("no model provider")

// ProviderError says why a provider cannot be used, with setup help.
type ProviderError struct {
	Spec string // the model spec, like "ollama:qwen2.5-coder:7b"
	URL  string // the endpoint tried, if any
	Err  error
}

// Error names the spec and endpoint, the cause, and SetupHelp.
func (e *ProviderError) Error() string {
	where := e.Spec
	if e.URL != "" {
		where += " at " + e.URL
	}
	return fmt.Sprintf("model %s: %v\n%s", where, e.Err, SetupHelp)
}

// Unwrap returns the cause.
func (e *ProviderError) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrNoProvider) true.
func (e *ProviderError) Is(target error) bool { return target == ErrNoProvider }

// Spec names a provider and a model, as written "provider:model". The model
// may itself contain colons ("ollama:qwen2.5-coder:7b").
type Spec struct {
	Provider string
	Model    string
}

// String returns the spec as "provider:model", or only the model's name
// for a model given with LLM or Respond.
func (s Spec) String() string {
	if s.Provider == "" {
		return s.Model
	}
	return s.Provider + ":" + s.Model
}

// ParseSpec parses "provider:model". An empty string gives DefaultSpec; a
// bare provider ("openai") gets that provider's default model.
func ParseSpec(s string) (Spec, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		s = DefaultSpec
	}
	p, m, _ := strings.Cut(s, ":")
	p = strings.ToLower(strings.TrimSpace(p))
	m = strings.TrimSpace(m)
	def, ok := defaultModel(p)
	if !ok {
		return Spec{}, &ProviderError{Spec: s, Err: fmt.Errorf("unknown provider %q (want ollama, openai, anthropic or googleai)", p)}
	}
	if m == "" {
		m = def
	}
	return Spec{Provider: p, Model: m}, nil
}

// NewModel returns a langchaingo model for spec. getenv supplies the
// provider settings (OLLAMA_HOST, OPENAI_API_KEY, OPENAI_BASE_URL,
// ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, GOOGLE_API_KEY, GOOGLEAI_BASE_URL);
// nothing is read from the process environment. client carries every
// request; nil means http.DefaultClient (no retries: a Planner passes its
// own client with retries).
func NewModel(spec Spec, getenv func(string) string, client *http.Client) (llms.Model, string, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if client == nil {
		client = http.DefaultClient
	}
	fail := func(u string, err error) (llms.Model, string, error) {
		return nil, u, &ProviderError{Spec: spec.String(), URL: u, Err: err}
	}
	switch spec.Provider {
	case ProviderOllama:
		u, err := ollamaURL(getenv("OLLAMA_HOST"))
		if err != nil {
			return fail("", err)
		}
		m, err := ollama.New(ollama.WithServerURL(u), ollama.WithModel(spec.Model), ollama.WithHTTPClient(client))
		if err != nil {
			return fail(u, err)
		}
		return m, u, nil
	case ProviderOpenAI:
		base := strings.TrimRight(getenv("OPENAI_BASE_URL"), "/")
		key := getenv("OPENAI_API_KEY")
		if base == "" {
			base = defaultOpenAIURL
			if key == "" {
				return fail(base, errors.New("OPENAI_API_KEY is not set"))
			}
		}
		if key == "" {
			key = "unused" // local OpenAI-compatible servers need no key
		}
		m, err := openai.New(openai.WithBaseURL(base), openai.WithToken(key), openai.WithModel(spec.Model),
			openai.WithOrganization(getenv("OPENAI_ORGANIZATION")), openai.WithHTTPClient(client))
		if err != nil {
			return fail(base, err)
		}
		return m, base, nil
	case ProviderAnthropic:
		base := strings.TrimRight(getenv("ANTHROPIC_BASE_URL"), "/")
		if base == "" {
			base = "https://api.anthropic.com/v1"
		}
		key := getenv("ANTHROPIC_API_KEY")
		if key == "" {
			return fail(base, errors.New("ANTHROPIC_API_KEY is not set"))
		}
		m, err := anthropic.New(anthropic.WithBaseURL(base), anthropic.WithToken(key), anthropic.WithModel(spec.Model), anthropic.WithHTTPClient(client))
		if err != nil {
			return fail(base, err)
		}
		return m, base, nil
	case ProviderGoogleAI:
		base := strings.TrimRight(getenv("GOOGLEAI_BASE_URL"), "/")
		if base == "" {
			base = defaultGoogleAIURL
		}
		key := getenv("GOOGLE_API_KEY")
		if key == "" {
			return fail(base, errors.New("GOOGLE_API_KEY is not set"))
		}
		// WithOrganization("") keeps an OPENAI_ORGANIZATION in the process
		// environment from being sent to Google.
		m, err := openai.New(openai.WithBaseURL(base), openai.WithToken(key), openai.WithModel(spec.Model),
			openai.WithOrganization(""), openai.WithHTTPClient(client))
		if err != nil {
			return fail(base, err)
		}
		return m, base, nil
	}
	return fail("", fmt.Errorf("unknown provider %q", spec.Provider))
}

// ollamaURL turns OLLAMA_HOST ("", "host", "host:port", "http://host:port")
// into a server URL.
func ollamaURL(host string) (string, error) {
	host = strings.TrimSpace(host)
	if host == "" {
		return defaultOllamaURL, nil
	}
	scheme := "http"
	if s, rest, ok := strings.Cut(host, "://"); ok {
		scheme, host = s, rest
	}
	host = strings.TrimRight(host, "/")
	if _, _, err := net.SplitHostPort(host); err != nil {
		host = net.JoinHostPort(strings.Trim(host, "[]"), "11434")
	}
	u := &url.URL{Scheme: scheme, Host: host}
	if _, err := url.Parse(u.String()); err != nil {
		return "", fmt.Errorf("parse OLLAMA_HOST %q: %w", host, err)
	}
	return u.String(), nil
}

// supportsJSONMode reports whether the provider has a JSON output mode that
// langchaingo maps from llms.WithJSONMode.
func supportsJSONMode(provider string) bool {
	switch provider {
	case ProviderOllama, ProviderOpenAI, ProviderGoogleAI:
		return true
	}
	return false
}
