package planner_test

import (
	"context"
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

func ExampleRespond() {
	// A replay provider, as the evaluation harness uses: each request is
	// answered with a recorded command instead of a model's answer, and
	// goes through the same parsing and checks.
	recorded := map[string]string{"count the text files": "find . -name '*.txt' | wc -l"}
	p, err := planner.New(planner.Respond("replay", func(_ context.Context, req planner.Request, _ int) (string, error) {
		return "```bash\n" + recorded[req.Prompt] + "\n```", nil
	}))
	if err != nil {
		fmt.Println(err)
		return
	}
	a, err := p.Plan(context.Background(), planner.Request{Prompt: "count the text files"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(a.Script)
	fmt.Println(a.Report.CommandNames())
	// Output:
	// find . -name '*.txt' | wc -l
	// [find wc]
}

func ExamplePartialAnswer() {
	// What a display shows while the model's JSON is still arriving.
	soFar := `{"script": "find . -name '*.log' -mtime +7 -del`
	fmt.Println(planner.PartialAnswer(soFar).Script)
	// Output:
	// find . -name '*.log' -mtime +7 -del
}

func ExampleSnippets() {
	answer := "`tar -xzf a.tgz` extracts the archive. To look inside first:\n\n```bash\ntar -tzf a.tgz\n```\n"
	for _, s := range planner.Snippets(answer) {
		fmt.Println(s.Code)
	}
	// Output:
	// tar -tzf a.tgz
}
