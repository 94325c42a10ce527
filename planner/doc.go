// Package planner turns a request in natural language into an Artifact: a
// short script and its explanation, for a person to review. It never runs
// anything. It is the only package that imports langchaingo.
//
// # Providers
//
// A Planner talks to one model, named by a spec "provider:model"
// (ParseSpec): ollama (OLLAMA_HOST, default http://127.0.0.1:11434),
// openai (OPENAI_API_KEY; OPENAI_BASE_URL for any OpenAI-compatible server
// such as llama.cpp, vLLM, LM Studio or OpenRouter, where the key may be
// empty), anthropic (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL) and googleai
// (GOOGLE_API_KEY, GOOGLEAI_BASE_URL). googleai goes through Google's
// OpenAI-compatible endpoint with langchaingo's openai client, which keeps
// the genai and gRPC modules out of the build. With no spec the planner
// uses DefaultSpec, Ollama on localhost. Settings come from the Getenv
// option, never from the process environment directly. A missing key, an
// unknown provider or a server that does not answer gives a
// *ProviderError, which matches ErrNoProvider and carries SetupHelp.
//
// Every request goes through an HTTP transport that retries 429 and 5xx
// answers with exponential backoff, honours Retry-After (seconds or a
// date) up to RetryPolicy.MaxDelay, and caps the answer's size. Each model
// call is bounded by Timeout and by the caller's context.
//
// # Context
//
// Each request carries, within a token budget estimated at four bytes per
// token: the machine (OS, distribution, shell, user), the working directory
// and a bounded listing of it (names escaped), the recent session history
// with outputs cut, files found by a Retriever when the request names
// files by what they contain, descriptions of nash's own commands when the
// request calls for them, and the most similar remembered requests as
// examples.
//
// # Output
//
// The model is asked for one JSON object {script, explanation,
// needs_network, question}, in the provider's JSON mode where it has one.
// ParseAnswer accepts it bare, fenced or wrapped in prose, and falls back
// to a fenced shell block. The script must parse as bash
// (mvdan.cc/sh/v3/syntax); otherwise the model is asked again with the
// exact parse error, at most MaxRepairs times, and Plan fails with an error
// matching ErrNoScript. A refusal gives a *RefusalError; a clarifying
// question gives an Artifact with Question set and no script.
//
// With Answers on, the object has a fifth member, answer: a question
// ("what does tar -xzf do") gets a short Markdown answer instead of a
// script (Artifact.Answer, Kind KindAnswer), and the shell commands quoted
// in it that parse are its Snippets, for the person to pick and run
// through the normal review.
//
// # Streaming, input and usage
//
// A Request with Stream set gets the answer as it arrives (Progress: each
// piece of text, the text so far, the elapsed time; PartialAnswer reads
// the script or answer out of a JSON object still arriving). Cancelling
// the request's context stops the stream and the request at once. The
// final answer is parsed and checked as without streaming.
//
// Request.Input carries text piped to nash. ReadInput reads it whole but
// keeps only its start and its end within a bound; the planner cuts it
// again to InputBudget, says in the prompt how much was cut, and reports
// it in PromptStats.Input. Binary input is not sent, only its size.
//
// Artifact.Usage and Explanation.Usage hold the tokens the provider
// reported in its usage fields over every call of a request (estimated
// and marked Estimated when it reported none), priced with Pricing.
//
// # Summaries
//
// Summarize asks the model, in plain text, for one to three sentences on
// what a committed change did, from a list of changes and unified diffs
// cut to SummaryInputBytes. The answer comes back as one line of at most
// SummaryMaxBytes with control and invisible characters escaped.
//
// # Memory
//
// Memory keeps committed requests (prompt, script, cwd, outcome) in a
// JSONL file in the state directory, appended and fsynced one line at a
// time, and indexes the prompts with BM25 in memory. Search returns the
// most similar past requests; a match must share enough of the request's
// weight of words, so one common word is not enough to become an example.
package planner
