package planner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// ModelInfo is one model a provider offers.
type ModelInfo struct {
	// ID is what goes after "provider:" in a spec.
	ID string `json:"id"`
	// Name is the provider's display name, when it gives one.
	Name string `json:"name,omitempty"`
	// Created is when the model was made or, for Ollama, last pulled.
	Created time.Time `json:"created,omitzero"`
	// Size is the model's size on disk in bytes (Ollama).
	Size int64 `json:"size,omitempty"`
	// Details says more where the provider does: parameters and
	// quantization (Ollama), the input token limit (Gemini).
	Details string `json:"details,omitempty"`
}

// ErrNoListing is matched by errors.Is when the planner's model was given
// with LLM or Respond, so there is no provider to ask for its models.
var ErrNoListing = errors.New("no provider to list models from")

// ListModels asks the planner's provider which models it offers, through
// its API: OpenAI's GET /v1/models (and any OpenAI-compatible server's),
// Ollama's GET /api/tags, Anthropic's GET /v1/models, Google AI's
// models.list (GET /v1beta/models, the models that generate content). It
// costs no tokens. Models come sorted by ID.
func (p *Planner) ListModels(ctx context.Context) ([]ModelInfo, error) {
	if p.client == nil {
		return nil, ErrNoListing
	}
	var (
		ms  []ModelInfo
		err error
	)
	switch p.spec.Provider {
	case ProviderOllama:
		ms, err = p.ollamaModels(ctx)
	case ProviderOpenAI:
		ms, err = p.openAIModels(ctx)
	case ProviderAnthropic:
		ms, err = p.anthropicModels(ctx)
	case ProviderGoogleAI:
		ms, err = p.googleModels(ctx)
	default:
		return nil, ErrNoListing
	}
	if err != nil {
		return nil, p.listError(ctx, err)
	}
	slices.SortFunc(ms, func(a, b ModelInfo) int { return strings.Compare(a.ID, b.ID) })
	return ms, nil
}

// HasModel reports whether ms lists id. For Ollama a name without a tag
// means its "latest" tag, as ollama run reads it.
func HasModel(ms []ModelInfo, provider, id string) bool {
	for _, m := range ms {
		if m.ID == id {
			return true
		}
		if provider == ProviderOllama && !strings.Contains(id, ":") && m.ID == id+":latest" {
			return true
		}
	}
	return false
}

// listError turns a failed listing into the errors Plan gives: a
// *ProviderError when nothing answers, a *StatusError for an HTTP error.
func (p *Planner) listError(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("list models of %s: %w", p.spec.Provider, cerr)
	}
	if isUnreachable(err) {
		return &ProviderError{Spec: p.spec.String(), URL: p.url, Err: fmt.Errorf("nothing answers: %w", err)}
	}
	return fmt.Errorf("list models of %s: %w", p.spec.Provider, err)
}

// getJSON sends GET u with the headers and decodes the answer into v. An
// HTTP error comes back as the transport's *StatusError.
func (p *Planner) getJSON(ctx context.Context, u string, header http.Header, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	req.Header.Set("Accept", "application/json")
	resp, err := p.client.Do(req)
	if err != nil {
		var uerr *url.Error
		if errors.As(err, &uerr) {
			err = uerr.Err // the URL holds the key for Google: do not repeat it
		}
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		// The retrying transport turns errors into *StatusError; a client
		// without it gets the same.
		return &StatusError{StatusCode: resp.StatusCode, Body: readSnippet(resp.Body, 300), Attempts: 1}
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("read the list: %w", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return nil
}

func (p *Planner) ollamaModels(ctx context.Context) ([]ModelInfo, error) {
	var v struct {
		Models []struct {
			Name       string    `json:"name"`
			Model      string    `json:"model"`
			ModifiedAt time.Time `json:"modified_at"`
			Size       int64     `json:"size"`
			Details    struct {
				Family            string `json:"family"`
				ParameterSize     string `json:"parameter_size"`
				QuantizationLevel string `json:"quantization_level"`
			} `json:"details"`
		} `json:"models"`
	}
	if err := p.getJSON(ctx, p.url+"/api/tags", nil, &v); err != nil {
		return nil, err
	}
	out := make([]ModelInfo, 0, len(v.Models))
	for _, m := range v.Models {
		id := m.Name
		if id == "" {
			id = m.Model
		}
		d := strings.TrimSpace(strings.Join([]string{m.Details.Family, m.Details.ParameterSize, m.Details.QuantizationLevel}, " "))
		out = append(out, ModelInfo{ID: id, Created: m.ModifiedAt, Size: m.Size, Details: strings.Join(strings.Fields(d), " ")})
	}
	return out, nil
}

func (p *Planner) openAIModels(ctx context.Context) ([]ModelInfo, error) {
	h := http.Header{}
	key := p.getenv("OPENAI_API_KEY")
	if key != "" {
		h.Set("Authorization", "Bearer "+key)
	}
	if org := p.getenv("OPENAI_ORGANIZATION"); org != "" {
		h.Set("OpenAI-Organization", org)
	}
	var v struct {
		Data []struct {
			ID      string `json:"id"`
			Created int64  `json:"created"`
			OwnedBy string `json:"owned_by"`
		} `json:"data"`
	}
	if err := p.getJSON(ctx, p.url+"/models", h, &v); err != nil {
		return nil, err
	}
	out := make([]ModelInfo, 0, len(v.Data))
	for _, m := range v.Data {
		mi := ModelInfo{ID: m.ID}
		if m.Created > 0 {
			mi.Created = time.Unix(m.Created, 0).UTC()
		}
		if m.OwnedBy != "" {
			mi.Details = "owned by " + m.OwnedBy
		}
		out = append(out, mi)
	}
	return out, nil
}

// anthropicVersion is the API version the listing asks for, as
// langchaingo's client sends it.
const anthropicVersion = "2023-06-01"

func (p *Planner) anthropicModels(ctx context.Context) ([]ModelInfo, error) {
	h := http.Header{}
	h.Set("x-api-key", p.getenv("ANTHROPIC_API_KEY"))
	h.Set("anthropic-version", anthropicVersion)
	var out []ModelInfo
	after := ""
	for page := 0; page < 50; page++ {
		q := url.Values{"limit": {"1000"}}
		if after != "" {
			q.Set("after_id", after)
		}
		var v struct {
			Data []struct {
				ID          string    `json:"id"`
				DisplayName string    `json:"display_name"`
				CreatedAt   time.Time `json:"created_at"`
			} `json:"data"`
			HasMore bool   `json:"has_more"`
			LastID  string `json:"last_id"`
		}
		if err := p.getJSON(ctx, p.url+"/models?"+q.Encode(), h, &v); err != nil {
			return nil, err
		}
		for _, m := range v.Data {
			out = append(out, ModelInfo{ID: m.ID, Name: m.DisplayName, Created: m.CreatedAt})
		}
		if !v.HasMore || v.LastID == "" || v.LastID == after {
			return out, nil
		}
		after = v.LastID
	}
	return out, nil
}

// googleModels lists through Google AI's own models.list: the planner talks
// to its OpenAI-compatible endpoint (…/v1beta/openai), whose parent is the
// native API.
func (p *Planner) googleModels(ctx context.Context) ([]ModelInfo, error) {
	base := strings.TrimSuffix(strings.TrimRight(p.url, "/"), "/openai")
	h := http.Header{}
	h.Set("x-goog-api-key", p.getenv("GOOGLE_API_KEY"))
	var out []ModelInfo
	token := ""
	for page := 0; page < 50; page++ {
		q := url.Values{"pageSize": {"1000"}}
		if token != "" {
			q.Set("pageToken", token)
		}
		var v struct {
			Models []struct {
				Name                       string   `json:"name"`
				BaseModelID                string   `json:"baseModelId"`
				DisplayName                string   `json:"displayName"`
				InputTokenLimit            int      `json:"inputTokenLimit"`
				SupportedGenerationMethods []string `json:"supportedGenerationMethods"`
			} `json:"models"`
			NextPageToken string `json:"nextPageToken"`
		}
		if err := p.getJSON(ctx, base+"/models?"+q.Encode(), h, &v); err != nil {
			return nil, err
		}
		for _, m := range v.Models {
			if !slices.Contains(m.SupportedGenerationMethods, "generateContent") {
				continue // embedding and other models cannot plan
			}
			mi := ModelInfo{ID: strings.TrimPrefix(m.Name, "models/"), Name: m.DisplayName}
			if m.InputTokenLimit > 0 {
				mi.Details = fmt.Sprintf("input up to %d tokens", m.InputTokenLimit)
			}
			out = append(out, mi)
		}
		if v.NextPageToken == "" || v.NextPageToken == token {
			return out, nil
		}
		token = v.NextPageToken
	}
	return out, nil
}
