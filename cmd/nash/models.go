package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/planner"
	"github.com/nash-shell/nash/shell"
)

// modelsOptions are the flags of nash models.
type modelsOptions struct {
	json bool
	save string
}

func newModelsCmd(g *options, io stdio) *cobra.Command {
	var opts modelsOptions
	cmd := &cobra.Command{
		Use:   "models [PROVIDER] [--json] [--save NAME]",
		Short: "list the models the provider offers (the one in use marked *); --save NAME makes NAME the configured model",
		Long: `models asks the provider of the model in use (or PROVIDER: ollama, openai,
anthropic, googleai) which models it offers: OpenAI's /v1/models (any
compatible server), Ollama's pulled models, Anthropic's and Gemini's lists.
--save NAME writes model: NAME to the config file, after checking that the
provider offers it; NAME is a model of the current provider or provider:model.
In the shell, :model NAME switches for the session.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usageError{fmt.Sprintf("models takes at most one PROVIDER, got %d arguments; usage: %s", len(args), usageLine(cmd))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return runModels(cmd.Context(), g, opts, args, io)
		},
	}
	cmd.Flags().BoolVar(&opts.json, "json", false, "print the models as JSON")
	cmd.Flags().StringVar(&opts.save, "save", "", "write `NAME` (model or provider:model) to the config file as the model")
	return cmd
}

func runModels(ctx context.Context, g *options, opts modelsOptions, args []string, io stdio) error {
	current := g.planModel()
	if opts.save != "" {
		if len(args) > 0 {
			return usageError{"models: --save NAME names the model; give no PROVIDER with it"}
		}
		return saveModelChecked(ctx, g, current, opts.save, io)
	}
	spec := current
	if len(args) == 1 {
		s, err := planner.ParseSpec(args[0])
		if err != nil {
			return usageError{fmt.Sprintf("models: %v", err)}
		}
		spec = s.String()
		if cur, err := planner.ParseSpec(current); err == nil && cur.Provider == s.Provider {
			spec = current
		}
	}
	ms, err := listModels(ctx, g, spec)
	if err != nil {
		return plannerError{err}
	}
	if opts.json {
		if ms == nil {
			ms = []planner.ModelInfo{}
		}
		return effects.WriteJSON(io.out, ms, true)
	}
	shell.WriteModels(io.out, ms, spec)
	return nil
}

// saveModelChecked writes name (resolved against current) to the config
// file once its provider says it has it. A provider that cannot be asked
// leaves nothing saved: nash models --save is how a person picks from
// what is there.
func saveModelChecked(ctx context.Context, g *options, current, name string, io stdio) error {
	target, err := shell.ResolveModel(name, current)
	if err != nil {
		return usageError{"models: " + err.Error()}
	}
	spec, _ := planner.ParseSpec(target)
	ms, err := listModels(ctx, g, target)
	if err != nil {
		return plannerError{fmt.Errorf("models: cannot check that %s offers %s: %w", spec.Provider, effects.Quote(spec.Model), err)}
	}
	if !planner.HasModel(ms, spec.Provider, spec.Model) {
		hint := "nash models " + spec.Provider + " lists what it offers"
		if spec.Provider == planner.ProviderOllama {
			hint = "pull it first: ollama pull " + effects.Quote(spec.Model)
		}
		return plannerError{errors.New("models: " + spec.Provider + " does not offer " + effects.Quote(spec.Model) + "; " + hint)}
	}
	if err := saveModel(g, target); err != nil {
		return err
	}
	fmt.Fprintf(io.out, "model: %s, saved in %s\n", effects.Escape(target), effects.Quote(configPath(g.getenv)))
	return nil
}
