package indexserver

import (
	"fmt"
	"strings"

	"github.com/tmc/langchaingo/embeddings"
	"github.com/tmc/langchaingo/llms/ollama"
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/nash-shell/nash/index"
)

// embedderFromEnv builds the embedder NASH_EMBEDDER names, or returns nil
// when it is unset.
func embedderFromEnv(getenv func(string) string) (index.Embedder, string, error) {
	spec := getenv("NASH_EMBEDDER")
	if spec == "" || spec == "none" {
		return nil, "", nil
	}
	provider, model, ok := strings.Cut(spec, ":")
	if !ok || model == "" {
		return nil, "", fmt.Errorf("NASH_EMBEDDER=%q: want PROVIDER:MODEL, e.g. ollama:nomic-embed-text", spec)
	}
	url := getenv("NASH_EMBED_URL")
	var client embeddings.EmbedderClient
	switch provider {
	case "ollama":
		if url == "" {
			url = getenv("OLLAMA_HOST")
		}
		if url != "" && !strings.Contains(url, "://") {
			url = "http://" + url
		}
		opts := []ollama.Option{ollama.WithModel(model)}
		if url != "" {
			opts = append(opts, ollama.WithServerURL(url))
		}
		llm, err := ollama.New(opts...)
		if err != nil {
			return nil, "", fmt.Errorf("embedder %s: %w", spec, err)
		}
		client = llm
	case "openai":
		opts := []openai.Option{openai.WithEmbeddingModel(model)}
		if url != "" {
			opts = append(opts, openai.WithBaseURL(url))
		}
		if key := getenv("OPENAI_API_KEY"); key != "" {
			opts = append(opts, openai.WithToken(key))
		} else if url != "" {
			opts = append(opts, openai.WithToken("none")) // local servers take any key
		}
		llm, err := openai.New(opts...)
		if err != nil {
			return nil, "", fmt.Errorf("embedder %s: %w", spec, err)
		}
		client = llm
	default:
		return nil, "", fmt.Errorf("NASH_EMBEDDER=%q: unknown provider %q (ollama, openai)", spec, provider)
	}
	e, err := embeddings.NewEmbedder(client)
	if err != nil {
		return nil, "", fmt.Errorf("embedder %s: %w", spec, err)
	}
	return e, spec, nil
}
