package planner

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/tmc/langchaingo/llms"
)

// scriptedLLM is an in-process llms.Model that answers from a list and
// records the messages it was sent. After the list runs out it repeats the
// last answer.
type scriptedLLM struct {
	mu      sync.Mutex
	answers []string
	calls   [][]llms.MessageContent
}

func (s *scriptedLLM) GenerateContent(ctx context.Context, msgs []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.answers) == 0 {
		return nil, errors.New("scriptedLLM: no answers")
	}
	a := s.answers[0]
	if len(s.answers) > 1 {
		s.answers = s.answers[1:]
	}
	s.calls = append(s.calls, msgs)
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: a}}}, nil
}

func (s *scriptedLLM) Call(ctx context.Context, prompt string, opts ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, s, prompt, opts...)
}

// lastUser returns the text of the last human message of the last call.
func (s *scriptedLLM) lastUser() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.calls) == 0 {
		return ""
	}
	msgs := s.calls[len(s.calls)-1]
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llms.ChatMessageTypeHuman {
			var b strings.Builder
			for _, p := range msgs[i].Parts {
				if t, ok := p.(llms.TextContent); ok {
					b.WriteString(t.Text)
				}
			}
			return b.String()
		}
	}
	return ""
}
