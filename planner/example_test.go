package planner_test

import (
	"fmt"

	"github.com/nash-shell/nash/planner"
)

func ExampleParseAnswer() {
	raw := "Sure, here it is:\n```json\n{\"script\": \"du -sh -- *\", \"explanation\": \"Shows the size of each entry.\"}\n```"
	a, err := planner.ParseAnswer(raw)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(a.Script)
	fmt.Println(a.Explanation)
	// Output:
	// du -sh -- *
	// Shows the size of each entry.
}

func ExampleParseSpec() {
	for _, s := range []string{"", "ollama:qwen2.5-coder:7b", "openai", "anthropic:claude-3-5-haiku-latest"} {
		spec, err := planner.ParseSpec(s)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("%s -> provider %s, model %s\n", s, spec.Provider, spec.Model)
	}
	// Output:
	//  -> provider ollama, model qwen2.5-coder:7b
	// ollama:qwen2.5-coder:7b -> provider ollama, model qwen2.5-coder:7b
	// openai -> provider openai, model gpt-4o-mini
	// anthropic:claude-3-5-haiku-latest -> provider anthropic, model claude-3-5-haiku-latest
}

func ExampleUnifiedDiff() {
	fmt.Print(planner.UnifiedDiff("a/script", "b/script", "mkdir out\nmv *.jpeg out/\n", "mkdir out\nmv *.jpeg *.jpg out/\n"))
	// Output:
	// --- a/script
	// +++ b/script
	// @@ -1,2 +1,2 @@
	//  mkdir out
	// -mv *.jpeg out/
	// +mv *.jpeg *.jpg out/
}

func ExampleMemory() {
	m := planner.NewMemory()
	m.Add(planner.Record{Prompt: "rename all .jpeg files to .jpg", Script: `for f in *.jpeg; do mv -- "$f" "${f%.jpeg}.jpg"; done`})
	m.Add(planner.Record{Prompt: "delete log files older than 30 days", Script: "find . -name '*.log' -mtime +30 -delete"})
	for _, match := range m.Search("remove old logs", 3) {
		fmt.Println(match.Script)
	}
	// Output:
	// find . -name '*.log' -mtime +30 -delete
}

func ExampleNew() {
	// What cmd/nash does: the spec comes from --model, NASH_MODEL or the
	// config file, the environment is passed in explicitly.
	env := map[string]string{"OPENAI_API_KEY": "sk-...", "USER": "alice"}
	p, err := planner.New(
		planner.ModelSpec("openai:gpt-4o-mini"),
		planner.Getenv(func(k string) string { return env[k] }),
		planner.UseMemory(planner.NewMemory()),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(p.Model())
	// Output: openai:gpt-4o-mini
}
