package shell

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/internal/size"
	"github.com/nash-shell/nash/planner"
)

// listTimeout bounds the listing of a provider's models: a provider that
// does not answer in that time is not worth waiting for at a prompt.
const listTimeout = 15 * time.Second

// ResolveModel reads name as :model and nash models --save take it: a
// whole spec ("openai:gpt-4o", "ollama"), or a model of current's
// provider ("gpt-4o-mini", "llama3.2:3b").
func ResolveModel(name, current string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return "", errors.New("no model named")
	}
	if s, err := planner.ParseSpec(name); err == nil {
		return s.String(), nil
	}
	cur, err := planner.ParseSpec(current)
	if err != nil {
		return "", err
	}
	return planner.Spec{Provider: cur.Provider, Model: name}.String(), nil
}

// modelBuiltin is :model: with no argument the model in use and the
// models its provider offers; :model NAME switches this session to NAME
// (a model of the same provider, or provider:model); --save also makes it
// the configured model.
func (e *engine) modelBuiltin(ctx context.Context, args []string, w io.Writer) error {
	save := false
	var names []string
	for _, a := range args {
		if a == "--save" {
			save = true
			continue
		}
		names = append(names, a)
	}
	current := e.currentModel()
	if current == "" {
		current = planner.DefaultSpec
	}
	switch {
	case len(names) > 1:
		return errors.New("usage: :model [NAME] [--save]")
	case len(names) == 0 && !save:
		fmt.Fprintf(w, "model: %s\n", effects.Escape(current))
		if e.cfg.Models == nil {
			fmt.Fprintln(w, "change it with :model NAME, --model, NASH_MODEL or model: in the config file")
			return nil
		}
		lctx, cancel := context.WithTimeout(ctx, listTimeout)
		defer cancel()
		ms, err := e.cfg.Models(lctx, current)
		if err != nil {
			fmt.Fprintf(w, "its provider lists no models: %s\n", effects.EscapeLine(firstLineOf(err.Error())))
			return nil
		}
		WriteModels(w, ms, current)
		fmt.Fprintln(w, "switch with :model NAME; :model NAME --save keeps it for later sessions")
		return nil
	}
	target := current
	if len(names) == 1 {
		var err error
		if target, err = ResolveModel(names[0], current); err != nil {
			return fmt.Errorf("model: %w", err)
		}
	}
	if target != current && e.cfg.Models != nil {
		// Refuse a model the provider says it does not have; when it
		// cannot be asked, switch and say so.
		lctx, cancel := context.WithTimeout(ctx, listTimeout)
		ms, err := e.cfg.Models(lctx, target)
		cancel()
		spec, _ := planner.ParseSpec(target)
		switch {
		case err != nil:
			fmt.Fprintf(w, "could not check that %s has it: %s\n", spec.Provider, effects.EscapeLine(firstLineOf(err.Error())))
		case !planner.HasModel(ms, spec.Provider, spec.Model):
			hint := ":model lists the ones it has"
			if spec.Provider == planner.ProviderOllama {
				hint = "pull it with: ollama pull " + effects.Quote(spec.Model)
			}
			return fmt.Errorf("%s has no model %s; %s", spec.Provider, effects.Quote(spec.Model), hint)
		}
	}
	if target != current {
		e.useModel(target)
	}
	if !save {
		fmt.Fprintf(w, "model: %s for this session (:model %s --save keeps it)\n", effects.Escape(target), effects.Escape(names[0]))
		return nil
	}
	if e.cfg.SaveModel == nil {
		return errors.New("model: nowhere to save it (no config file)")
	}
	if err := e.cfg.SaveModel(target); err != nil {
		return fmt.Errorf("model: save: %w", err)
	}
	fmt.Fprintf(w, "model: %s, saved in the config file\n", effects.Escape(target))
	return nil
}

// WriteModels lists a provider's models, the one in use (the spec
// current) marked with *.
func WriteModels(w io.Writer, ms []planner.ModelInfo, current string) {
	spec, _ := planner.ParseSpec(current)
	if len(ms) == 0 {
		fmt.Fprintf(w, "%s offers no models\n", spec.Provider)
		return
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, m := range ms {
		mark := " "
		if planner.HasModel([]planner.ModelInfo{m}, spec.Provider, spec.Model) {
			mark = "*"
		}
		var about []string
		if m.Name != "" && m.Name != m.ID {
			about = append(about, m.Name)
		}
		if m.Size > 0 {
			about = append(about, size.Format(m.Size))
		}
		if m.Details != "" {
			about = append(about, m.Details)
		}
		line := mark + " " + effects.Escape(m.ID)
		if len(about) > 0 {
			line += "\t" + effects.EscapeLine(strings.Join(about, ", "))
		}
		fmt.Fprintln(tw, line)
	}
	_ = tw.Flush()
}

// firstLineOf is the first line of s.
func firstLineOf(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}
