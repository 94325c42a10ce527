package planner

import (
	"context"
	"errors"
	"strings"

	"github.com/tmc/langchaingo/llms"
)

// Responder answers a request in place of a model, with the text a model
// would send. attempt is 0 for the first answer and counts the repairs
// asked for after it. The text goes through the same parsing, validation
// and repair as a model's answer. The evaluation harness replays recorded
// commands with it, and scripted sessions in tests use it, without
// importing langchaingo.
type Responder func(ctx context.Context, req Request, attempt int) (string, error)

// Respond makes the planner answer with f instead of a model; name is what
// Artifact.Model reports.
func Respond(name string, f Responder) Option {
	return LLM(responderModel{f: f}, name)
}

type requestKey struct{}

// responderModel adapts a Responder to llms.Model.
type responderModel struct{ f Responder }

// GenerateContent asks the Responder, passing the request and the attempt.
func (m responderModel) GenerateContent(ctx context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	req, ok := ctx.Value(requestKey{}).(Request)
	attempt := 0
	var lastHuman string
	for _, mc := range msgs {
		switch mc.Role {
		case llms.ChatMessageTypeAI:
			attempt++
		case llms.ChatMessageTypeHuman:
			var b strings.Builder
			for _, p := range mc.Parts {
				if t, ok := p.(llms.TextContent); ok {
					b.WriteString(t.Text)
				}
			}
			lastHuman = b.String()
		}
	}
	if !ok {
		req = Request{Prompt: lastHuman}
	}
	text, err := m.f(ctx, req, attempt)
	if err != nil {
		return nil, err
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: text}}}, nil
}

// Call is not used by the planner.
func (m responderModel) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return "", errors.New("responder: Call is not supported")
}
