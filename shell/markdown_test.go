package shell

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/google/go-cmp/cmp"

	"github.com/nash-shell/nash/planner"
)

// TestMarkdownPlain: the layout of an answer without colour, as NO_COLOR
// shows it on a terminal: no escape code, the structure kept.
func TestMarkdownPlain(t *testing.T) {
	st := newStyles(false)
	tests := []struct {
		name, md, want string
		snippets       []planner.Snippet
	}{
		{
			name:     "answer with a snippet",
			md:       "`tar -xzf a.tgz` **extracts** the archive *a.tgz*:\n\n- `-x` extracts\n- `-z` gunzips\n- `-f` names the file\n\nTo look inside first:\n\n```bash\ntar -tzf a.tgz\n```\n",
			want:     "`tar -xzf a.tgz` extracts the archive a.tgz:\n\n• `-x` extracts\n• `-z` gunzips\n• `-f` names the file\n\nTo look inside first:\n\n[1] tar -tzf a.tgz\n",
			snippets: []planner.Snippet{{Code: "tar -tzf a.tgz", Lang: "bash"}},
		},
		{
			name:     "heading, numbered list, other code, rule",
			md:       "## Finding your IP\n\n1. Local: run\n2. Public: ask a server\n\n```python\nprint(1)\n```\n\n---\n\n```sh\nip -4 addr\n```\n\n```console\n$ curl -s ifconfig.me\n203.0.113.7\n```",
			want:     "Finding your IP\n\n1. Local: run\n2. Public: ask a server\n\n    print(1)\n\n────────────────────────────────────────\n\n[1] ip -4 addr\n\n[2] $ curl -s ifconfig.me\n    203.0.113.7\n",
			snippets: []planner.Snippet{{Code: "ip -4 addr", Lang: "sh"}, {Code: "curl -s ifconfig.me", Lang: "console"}},
		},
		{
			name: "wrapping with a hanging indent",
			md:   "- " + strings.Repeat("word ", 20) + "\n  continued\n  - nested item",
			want: "• word word word word word word word word word word word word word word word\n  word word word word word continued\n  • nested item\n",
		},
		{
			name: "quote and link",
			md:   "> The *man page* says so.\n\nSee [the manual](https://www.gnu.org/software/tar/manual/) or <https://example.org>.",
			want: "│ The man page says so.\n\nSee the manual (https://www.gnu.org/software/tar/manual/) or\nhttps://example.org.\n",
		},
		{
			name: "underscores in names are not emphasis",
			md:   "Set `max_user_namespaces` in /etc/sysctl.d/ or edit my_file_name, _really_.",
			want: "Set `max_user_namespaces` in /etc/sysctl.d/ or edit my_file_name, really.\n",
		},
		{
			name: "a placeholder is shown but not numbered",
			md:   "```bash\nping -c1 <host>\n```",
			want: "    ping -c1 <host>\n",
		},
		{
			name: "table kept as written",
			md:   "Flags:\n\n| flag | means |\n|---|---|\n| -x | extract |\n\nDone.",
			want: "Flags:\n\n| flag | means |\n|---|---|\n| -x | extract |\n\nDone.\n",
		},
		{
			name:     "unclosed fence",
			md:       "Run:\n```bash\ndf -h",
			want:     "Run:\n\n[1] df -h\n",
			snippets: []planner.Snippet{{Code: "df -h", Lang: "bash"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, snips := st.markdown(tt.md, 80)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("render (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.snippets, snips); diff != "" {
				t.Errorf("snippets (-want +got):\n%s", diff)
			}
			if strings.Contains(got, "\x1b") {
				t.Errorf("escape code without colour: %q", got)
			}
		})
	}
}

// TestMarkdownHostile: what the model writes cannot reach the terminal as
// a control sequence, in prose, code spans or code blocks, with or without
// colour; the escaped text is what a picked snippet runs.
func TestMarkdownHostile(t *testing.T) {
	md := "Fine \x1b[2J\x1b]0;owned\x07 text `a\x1b[31mb`\n\n```bash\necho hi\x1b[8m; rm -rf ~\n```\n\u202etxt.exe"
	for _, color := range []bool{false, true} {
		st := newStyles(color)
		got, snips := st.markdown(md, 80)
		plain := ansi.Strip(got)
		for _, bad := range []string{"\x1b[2J", "\x1b]0;", "\x07", "\x1b[31mb", "\x1b[8m", "\u202e"} {
			if strings.Contains(got, bad) {
				t.Errorf("color %v: %q reaches the terminal:\n%q", color, bad, got)
			}
		}
		for _, want := range []string{`\x1b[2J`, `\x1b]0;owned\x07`, `echo hi\x1b[8m; rm -rf ~`} {
			if !strings.Contains(plain, want) {
				t.Errorf("color %v: %q not shown escaped:\n%s", color, want, plain)
			}
		}
		if len(snips) != 1 || snips[0].Code != `echo hi\x1b[8m; rm -rf ~` {
			t.Errorf("snippets %q: the code run must be the code shown", snips)
		}
	}
}

// TestMarkdownColor: with colour the same text is styled, and stripped of
// its styling reads as the plain rendering (code spans aside, which lose
// their backticks).
func TestMarkdownColor(t *testing.T) {
	md := "# Title\n\nUse **bold** and `ls -la`:\n\n```bash\nls -la | head\n```\n"
	color, _ := newStyles(true).markdown(md, 60)
	plain, _ := newStyles(false).markdown(md, 60)
	if !strings.Contains(color, "\x1b[") {
		t.Fatalf("no styling with colour: %q", color)
	}
	if got, want := ansi.Strip(color), strings.ReplaceAll(plain, "`", ""); got != want {
		t.Errorf("styled text reads differently:\n%s\nwant\n%s", got, want)
	}
}

func TestMarkdownWidth(t *testing.T) {
	st := newStyles(true)
	md := strings.Repeat("averyveryverylongwordwithoutspaces ", 6) + "\n\n- " + strings.Repeat("item text ", 12) + "\n\n> " + strings.Repeat("quoted ", 12)
	for _, w := range []int{30, 50, 100} {
		got, _ := st.markdown(md, w)
		for _, l := range strings.Split(got, "\n") {
			if n := ansi.StringWidth(l); n > w {
				t.Errorf("width %d: line of %d columns: %q", w, n, ansi.Strip(l))
			}
		}
	}
}

func FuzzMarkdown(f *testing.F) {
	f.Add("# h\n\n- a\n  - b\n\n```bash\nls\n```\n> q\n\n| t |\n")
	f.Add("**x** _y_ `z` [l](u) <https://a> *\\* ``` ~~~")
	st := newStyles(true)
	f.Fuzz(func(t *testing.T, md string) {
		got, snips := st.markdown(md, 40)
		if strings.ContainsAny(ansi.Strip(got), "\x1b\x07\u009b") {
			t.Fatalf("control character reaches the terminal: %q", got)
		}
		for _, s := range snips {
			if !strings.Contains(ansi.Strip(got), strings.SplitN(s.Code, "\n", 2)[0]) {
				t.Fatalf("snippet %q is not shown", s.Code)
			}
		}
	})
}
