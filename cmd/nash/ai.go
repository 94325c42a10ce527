package main

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/nash-shell/nash/effects"
	"github.com/nash-shell/nash/internal/configedit"
	"github.com/nash-shell/nash/planner"
	"github.com/nash-shell/nash/sandbox"
	"github.com/nash-shell/nash/shell"
)

// prices reads the prices: section: each key a model spec, each price
// per million tokens.
func prices(c map[string]priceConfig) (map[string]planner.Price, error) {
	out := map[string]planner.Price{}
	for spec, p := range c {
		s, err := planner.ParseSpec(spec)
		if err != nil {
			return nil, configError{fmt.Errorf("config: prices: %w", err)}
		}
		if p.Input < 0 || p.Output < 0 || math.IsNaN(p.Input) || math.IsNaN(p.Output) {
			return nil, configError{fmt.Errorf("config: prices: %s: a price is a number of at least 0", effects.Quote(spec))}
		}
		out[s.String()] = planner.Price{Input: p.Input, Output: p.Output, Currency: p.Currency}
	}
	return out, nil
}

// plannerOptions are the options every planner nash builds for model
// gets: the provider settings from the environment, and its price when
// the config gives one.
func (o *options) plannerOptions(model string) []planner.Option {
	opts := []planner.Option{planner.ModelSpec(model), planner.Getenv(o.getenv)}
	if s, err := planner.ParseSpec(model); err == nil {
		if pr, ok := o.prices[s.String()]; ok {
			opts = append(opts, planner.Pricing(pr))
		}
	}
	return opts
}

// requestPlanner is the planner of the shell and nash -c for model: it
// answers questions as well as writing scripts, recalls accepted requests
// from memory, retrieves files from the index and knows nash's commands.
func requestPlanner(g *options, model string) (shell.Planner, error) {
	mem, err := planner.OpenMemory(g.stateDir)
	if err != nil {
		return nil, err
	}
	var commands []planner.Command
	if g.commands != nil {
		commands = g.commands()
	}
	opts := append(g.plannerOptions(model), planner.Answers(true), planner.UseMemory(mem),
		planner.UseRetriever(indexRetriever{g}, 5), planner.Commands(commands))
	return planner.New(opts...)
}

// listModels asks model's provider which models it offers.
func listModels(ctx context.Context, g *options, model string) ([]planner.ModelInfo, error) {
	p, err := planner.New(g.plannerOptions(model)...)
	if err != nil {
		return nil, err
	}
	return p.ListModels(ctx)
}

// saveModel writes model: to the config file, keeping the rest of it as
// it is.
func saveModel(g *options, model string) error {
	path := configPath(g.getenv)
	if path == "" {
		return usageError{"no config file: set HOME or XDG_CONFIG_HOME"}
	}
	if err := configedit.SetString(path, "model", model); err != nil {
		return fmt.Errorf("save the model in %s: %w", effects.Quote(path), err)
	}
	return nil
}

// usageTokens is u as the log keeps it.
func usageTokens(u planner.Usage) sandbox.Tokens {
	t := sandbox.Tokens{Input: u.InputTokens, Output: u.OutputTokens, Estimated: u.Estimated}
	if u.Priced {
		t.Cost, t.Currency = u.Cost, u.Currency
		if t.Currency == "" {
			t.Currency = "USD"
		}
	}
	return t
}

// tokenText says what a model's work cost: "612 tokens in, 58 out,
// $0.0012".
func tokenText(t sandbox.Tokens) string {
	s := fmt.Sprintf("%d tokens in, %d out", t.Input, t.Output)
	if t.Estimated {
		s = "about " + s
	}
	if t.Currency != "" {
		digits := 4
		if t.Cost >= 0.01 {
			digits = 3
		}
		if t.Cost >= 1 || t.Cost == 0 {
			digits = 2
		}
		c := strconv.FormatFloat(t.Cost, 'f', digits, 64)
		if t.Currency == "USD" {
			s += ", $" + c
		} else {
			s += ", " + c + " " + effects.Escape(t.Currency)
		}
	}
	return s
}
