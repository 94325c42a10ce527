package planner

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestParseAnswer(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    Answer
		wantErr error
		refusal bool
	}{
		{"bare JSON", `{"script":"ls -la","explanation":"Lists files.","needs_network":false,"question":""}`,
			Answer{Script: "ls -la", Explanation: "Lists files."}, nil, false},
		{"BOM and spaces", "\ufeff  \n{\"script\":\"ls\"}\n", Answer{Script: "ls"}, nil, false},
		{"prose around", "Here you go:\n{\"script\": \"du -sh *\", \"explanation\": \"Sizes.\"}\nHope it helps!",
			Answer{Script: "du -sh *", Explanation: "Sizes."}, nil, false},
		{"json fence", "```json\n{\"script\": \"pwd\"}\n```", Answer{Script: "pwd"}, nil, false},
		{"fence without language", "```\n{\"script\": \"pwd\"}\n```", Answer{Script: "pwd"}, nil, false},
		{"braces inside strings", `Note {this}: {"script": "awk '{print $1}' f", "explanation": "first {column}"}`,
			Answer{Script: "awk '{print $1}' f", Explanation: "first {column}"}, nil, false},
		{"needs_network as string", `{"script":"curl -O https://example.com/x","needs_network":"true"}`,
			Answer{Script: "curl -O https://example.com/x", NeedsNetwork: true}, nil, false},
		{"needs_network as bool", `{"script":"curl -O https://example.com/x","needs_network":true}`,
			Answer{Script: "curl -O https://example.com/x", NeedsNetwork: true}, nil, false},
		{"command key", `{"command":"ls"}`, Answer{Script: "ls"}, nil, false},
		{"script as lines", `{"script":["cd src","make"]}`, Answer{Script: "cd src\nmake"}, nil, false},
		{"script fenced inside JSON", "{\"script\":\"```bash\\nls -l\\n```\"}", Answer{Script: "ls -l"}, nil, false},
		{"question", `{"script":"","question":"Which folder?"}`, Answer{Question: "Which folder?"}, nil, false},
		{"script wins over question", `{"script":"ls","question":"Sure?"}`, Answer{Script: "ls"}, nil, false},
		{"bash fence fallback", "Run this:\n```bash\nfind . -name '*.tmp' -delete\n```\nIt deletes temp files.",
			Answer{Script: "find . -name '*.tmp' -delete", Explanation: "Run this: It deletes temp files."}, nil, false},
		{"console fence", "```console\n$ ls\n```", Answer{Script: "ls"}, nil, false},
		{"python fence is not shell", "```python\nprint(1)\n```", Answer{}, ErrMalformedAnswer, false},
		{"unclosed fence", "```bash\nls -la", Answer{Script: "ls -la"}, nil, false},
		{"second object is the answer", `{"note":"x"} then {"script":"ls"}`, Answer{Script: "ls"}, nil, false},
		{"empty", "   \n\t", Answer{}, ErrEmptyAnswer, false},
		{"truncated JSON", `{"script": "ls -la", "explanation": `, Answer{}, ErrMalformedAnswer, false},
		{"single quotes", `{'script': 'ls'}`, Answer{}, ErrMalformedAnswer, false},
		{"plain prose", "You should list the files first.", Answer{}, ErrMalformedAnswer, false},
		{"refusal prose", "I'm sorry, but I cannot help with that request.", Answer{}, nil, true},
		{"refusal in JSON", `{"script":"","explanation":"I will not write a script that wipes the disk.","question":""}`, Answer{}, nil, true},
		{"empty JSON", `{}`, Answer{}, ErrMalformedAnswer, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseAnswer(tt.in)
			var ref *RefusalError
			switch {
			case tt.refusal:
				if !errors.As(err, &ref) {
					t.Fatalf("err = %v, want *RefusalError", err)
				}
				return
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
				return
			case err != nil:
				t.Fatalf("ParseAnswer: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzParseAnswer: the parser never panics, and what it returns is
// consistent: an answer has a script or a question, an error is one of the
// documented kinds, and a script it returns appears in the input (possibly
// JSON-escaped).
func FuzzParseAnswer(f *testing.F) {
	for _, s := range []string{
		`{"script":"ls","explanation":"x"}`,
		"```json\n{\"script\":\"pwd\"}\n```",
		"prose {\"script\":\"a\"} prose",
		"```bash\nls\n```",
		`{"question":"which?"}`,
		"I'm sorry",
		`{"script":["a","b"],"needs_network":"true"}`,
		"{{{{\"",
		"```",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		a, err := ParseAnswer(in)
		if err != nil {
			var ref *RefusalError
			if !errors.Is(err, ErrEmptyAnswer) && !errors.Is(err, ErrMalformedAnswer) && !errors.As(err, &ref) {
				t.Fatalf("undocumented error %T: %v", err, err)
			}
			if a != (Answer{}) {
				t.Fatalf("error %v with non-empty answer %+v", err, a)
			}
			return
		}
		if a.Script == "" && a.Question == "" {
			t.Fatalf("answer with neither script nor question: %+v", a)
		}
		if a.Script != "" && a.Question != "" {
			t.Fatalf("answer with both script and question: %+v", a)
		}
		if utf8.ValidString(in) && a.Script != "" && !strings.Contains(in, firstLine(a.Script)) && !strings.Contains(in, "\\") && !strings.Contains(in, "[") {
			t.Fatalf("script %q not found in input", a.Script)
		}
	})
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(l)
}
