package evalharness

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/tmc/langchaingo/llms/openai"
)

func TestLineTokens(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"", ""},
		{"  --- ", ""},
		{"Hello, World!", "hello world"},
		{"'/testbed//hello.php' -> '/testbed/hello-COPY.php'", "/testbed/hello-copy.php /testbed/hello.php"},
		{"/testbed/dir1/", "/testbed/dir1"},
		{"testbed/dir1/a.txt", "a.txt dir1 testbed"}, // relative: words
		{"uid=0(root) gid=0(root)", "0 gid root uid"},
		{"/testbed/a.txt:3:foo", "/testbed/a.txt 3 foo"},
		{"adduser/oldstable,now 3.134 all", "3.134 adduser all now oldstable"},
		{"-rw-r--r-- 1 root", "1 root rw-r--r"},
		{"tar: Removing leading `/' from member names", "from leading member names removing tar"},
		{"15:08:42 3.4 ...", "08 15 3.4 42"},
	}
	for _, tt := range tests {
		if got := strings.Join(lineTokens(tt.in), " "); got != tt.want {
			t.Errorf("lineTokens(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// lsL is ls -l of the files a.txt and b.txt.
const lsL = `total 8
-rw-r--r-- 1 root root 5 Nov 21 15:08 a.txt
-rw-r--r-- 1 root root 7 Nov 21 15:08 b.txt`

// file20 is a file of twenty distinct lines.
var file20 = func() string {
	var b strings.Builder
	for _, w := range strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango") {
		b.WriteString("line about " + w + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}()

func TestSimilarOutputs(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want bool
	}{
		// The same answer.
		{"equal", "a\nb", "a\nb", true},
		{"both empty", "", "", true},
		{"blank lines state nothing", "a\n\n\nb", "a\n \nb", true},
		{"ls and ls -l", "a.txt\nb.txt", lsL, true},
		{"another order", "a.txt\nb.txt\nc.txt", "c.txt\na.txt\nb.txt", true},
		{"absolute, relative and base names", "/testbed/a.txt\n/testbed/dir/b.txt", "testbed/a.txt\nb.txt", true},
		{"md5sum with and without names", "f32a3a97638afeb2ee2a15cfe335ab72  /testbed/a.java\n0cc175b9c0f1b6a831c399e269772661  /testbed/b.java",
			"f32a3a97638afeb2ee2a15cfe335ab72\n0cc175b9c0f1b6a831c399e269772661", true},
		{"grep -l and grep -H", "/testbed/a.php\n/testbed/b.php", "/testbed/a.php:<?php echo \"Hello\"; ?>\n/testbed/b.php:<?php echo \"Hi\"; ?>", true},
		{"one failure, two messages", "rm: cannot remove 'x.txt': No such file or directory", "unlink: cannot unlink 'x.txt': No such file or directory", true},
		{"date and date -R", "Sat Nov 21 15:08:42 UTC 2026", "Sat, 21 Nov 2026 15:08:42 +0000", true},
		{"a field of the line", "Linux vm 6.18.44-fc #1 SMP x86_64 GNU/Linux", "6.18.44-fc", true},
		{"a count with and without its name", "441 setup.sh", "441", true},
		{"which and type", "/usr/bin/bash", "bash is /usr/bin/bash", true},

		// Another answer.
		{"one empty", "", "a.txt", false},
		{"other file", "a.txt", "b.txt", false},
		{"other number", "5", "6", false},
		{"ls -l of another file", "-r-------- 1 root root 0 Nov 21 15:09 /workspace/dir1/readonly.txt",
			"-rwxrwxrwx 1 root root 0 Nov 21 15:09 /workspace/dir1/all.txt", false},
		{"same column, other files", "4 /testbed/a.txt\n4 /testbed/b.txt", "4 /testbed/c.txt\n4 /testbed/d.txt", false},
		{"head of the file", file20, strings.Join(strings.Split(file20, "\n")[:5], "\n"), false},
		{"more of the same line", strings.Repeat("y\n", 9) + "y", "y\ny\ny", false},
		{"half the lines", strings.Repeat("y\n", 9) + "y", "y\ny\ny\ny\ny", false},
		{"count and numbered list", "3", "     1\tthe\n     2\tthe\n     3\tthe", false},
		{"a listing and its header", "Filesystem 1K-blocks Used Available\n/dev/vda 100 50 50", "Size Used Avail Use% Mounted on", false},
		{"no words, different", "\x00\x00", " \x00", false},
	}
	for _, tt := range tests {
		for _, swap := range []bool{false, true} {
			a, b := tt.a, tt.b
			if swap {
				a, b = b, a
			}
			if got := similarOutputs(a, b); got != tt.want {
				ca, cb := outputSimilarity(a, b)
				t.Errorf("%s (swapped %v): similar = %v, want %v (coverage %.2f, %.2f)\n%q\n%q", tt.name, swap, got, tt.want, ca, cb, a, b)
			}
		}
	}
}

func TestReportLine(t *testing.T) {
	changed := map[string]bool{"/testbed/hello-COPY.php": true, "/backup/workspace/dir2/foo.txt": true, "/testbed/test_dir": true}
	exists := func(p string) bool { return p == "/testbed/hello.php" || p == "/testbed" }
	tests := []struct {
		line string
		want bool
	}{
		{"'/testbed/hello.php' -> '/testbed/hello-COPY.php'", true},
		{"mkdir: created directory '/testbed/test_dir'", true},
		{"/testbed/hello.php", true},       // tar -v: a member that exists
		{"workspace/dir2/foo.txt", true},   // tar -xv: relative to -C /backup
		{"removed '/testbed/gone'", false}, // neither changed nor there before
		{"0+1 records in", false},          // no path
		{"tar: Removing leading `/' from member names", false},
		{"/testbed/hello.php: 3 lines", true},
		{"/testbed/hello.php and /etc/nonexistent-nash-test", false},
	}
	for _, tt := range tests {
		if got := reportLine(tt.line, changed, exists); got != tt.want {
			t.Errorf("reportLine(%q) = %v, want %v", tt.line, got, tt.want)
		}
	}
}

func TestJudges(t *testing.T) {
	exists := func(p string) bool { return p == "/testbed/hello.php" }
	cp := Outputs{
		GoldOutput:      "",
		PredictedOutput: "'/testbed/hello.php' -> '/testbed/hello-COPY.php'",
		Changed:         []string{"/testbed/hello-COPY.php"},
		Exists:          exists,
	}
	noChange := cp
	noChange.Changed = nil
	lsl := Outputs{GoldOutput: "a.txt\nb.txt", PredictedOutput: lsL, Exists: exists}
	tests := []struct {
		j    Judge
		o    Outputs
		same bool
	}{
		{Exact(), cp, false},
		{Similar(), cp, true},        // cp -v reports the change both made
		{Similar(), noChange, false}, // with no change, it is output like any
		{Exact(), lsl, false},
		{Similar(), lsl, true},
		{Exact(), Outputs{GoldOutput: "x", PredictedOutput: "x"}, true},
	}
	for _, tt := range tests {
		why, err := tt.j.Same(context.Background(), tt.o)
		if err != nil {
			t.Fatal(err)
		}
		if (why == "") != tt.same {
			t.Errorf("%s judge on %q / %q (changed %v): %q, want same %v", tt.j.Name(), tt.o.GoldOutput, tt.o.PredictedOutput, tt.o.Changed, why, tt.same)
		}
	}
}

func TestParseVerdict(t *testing.T) {
	tests := []struct {
		in      string
		same    bool
		reason  string
		wantErr bool
	}{
		{`{"equivalent": true, "reason": "same files"}`, true, "same files", false},
		{"```json\n{\"equivalent\": false, \"reason\": \"other files\"}\n```", false, "other files", false},
		{"Here is my verdict: {\"equivalent\": false}", false, "", false},
		{"Yes. Both list the files.", true, "", false},
		{"no, the counts differ", false, "no, the counts differ", false},
		{"I cannot tell.", false, "", true},
		{`{"verdict": "same"}`, false, "", true},
	}
	for _, tt := range tests {
		same, reason, err := parseVerdict(tt.in)
		if (err != nil) != tt.wantErr || same != tt.same || reason != tt.reason {
			t.Errorf("parseVerdict(%q) = %v, %q, %v; want %v, %q, error %v", tt.in, same, reason, err, tt.same, tt.reason, tt.wantErr)
		}
	}
}

// fakeOpenAI serves the OpenAI chat-completions protocol, answering each
// request with the next of replies, and records the requests' bodies.
func fakeOpenAI(t *testing.T, replies ...string) (*httptest.Server, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		n := len(bodies)
		bodies = append(bodies, string(b))
		mu.Unlock()
		if n >= len(replies) {
			http.Error(w, `{"error": {"message": "no more replies"}}`, http.StatusInternalServerError)
			return
		}
		content, _ := json.Marshal(replies[n])
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1763633551,"model":"judge",`+
			`"choices":[{"index":0,"message":{"role":"assistant","content":`+string(content)+`},"finish_reason":"stop"}],`+
			`"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), bodies...) }
}

func TestModelJudge(t *testing.T) {
	srv, requests := fakeOpenAI(t,
		`{"equivalent": true, "reason": "both list the two files"}`,
		"```json\n{\"equivalent\": false, \"reason\": \"it lists other files\"}\n```",
		"I am not sure.",
	)
	m, err := openai.New(openai.WithBaseURL(srv.URL+"/v1"), openai.WithToken("sk-test"), openai.WithModel("judge"))
	if err != nil {
		t.Fatal(err)
	}
	j := Model(m, "openai:judge")
	if j.Name() != "model openai:judge" {
		t.Errorf("name %q", j.Name())
	}
	o := Outputs{Query: "list the files", Gold: "ls", Predicted: "ls -l", GoldOutput: "a.txt\nb.txt", PredictedOutput: lsL}
	ctx := context.Background()

	if why, err := j.Same(ctx, o); err != nil || why != "" {
		t.Errorf("first verdict: %q, %v; want equivalent", why, err)
	}
	if why, err := j.Same(ctx, o); err != nil || !strings.Contains(why, "it lists other files") {
		t.Errorf("second verdict: %q, %v; want not equivalent with the model's reason", why, err)
	}
	if _, err := j.Same(ctx, o); err == nil || !strings.Contains(err.Error(), "no verdict") {
		t.Errorf("third verdict: error %v, want no verdict", err)
	}
	if _, err := j.Same(ctx, o); err == nil {
		t.Error("a failing server gave no error")
	}
	// Equal outputs need no call.
	if why, err := j.Same(ctx, Outputs{GoldOutput: "x", PredictedOutput: "x"}); err != nil || why != "" {
		t.Errorf("equal outputs: %q, %v", why, err)
	}
	reqs := requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	for _, want := range []string{"list the files", "Reference command: ls", "a.txt\\nb.txt", "Predicted command: ls -l", "-rw-r--r-- 1 root root 5"} {
		if !strings.Contains(reqs[0], want) {
			t.Errorf("the request lacks %q:\n%s", want, reqs[0])
		}
	}
}

// FuzzOutputSimilarity: any two outputs compare without panicking, the
// coverages are fractions, and an output is similar to itself.
func FuzzOutputSimilarity(f *testing.F) {
	f.Add("a.txt\nb.txt", lsL)
	f.Add("/testbed//x/../y: 3", "testbed/y 3")
	f.Add("", "\x00 /")
	f.Add(strings.Repeat("y\n", 100), "y")
	f.Fuzz(func(t *testing.T, a, b string) {
		a, b = normalize([]byte(a)), normalize([]byte(b))
		ca, cb := outputSimilarity(a, b)
		if ca < 0 || ca > 1.000001 || cb < 0 || cb > 1.000001 || ca != ca || cb != cb {
			t.Fatalf("coverage %v, %v of %q, %q", ca, cb, a, b)
		}
		if !similarOutputs(a, a) {
			t.Fatalf("%q is not similar to itself", a)
		}
		_ = reportLine(a, map[string]bool{"/x": true}, func(string) bool { return true })
	})
}

// BenchmarkOutputSimilarity compares two listings of 20,000 paths, one
// with a size column and in another order, as find and du -a print them.
func BenchmarkOutputSimilarity(b *testing.B) {
	var x, y strings.Builder
	for i := range 20000 {
		p := fmt.Sprintf("/usr/share/dir%d/sub%d/file%d.txt", i%50, i%7, i)
		x.WriteString(p + "\n")
		fmt.Fprintf(&y, "%d\t%s\n", 4*(i%13), fmt.Sprintf("/usr/share/dir%d/sub%d/file%d.txt", (19999-i)%50, (19999-i)%7, 19999-i))
	}
	a, c := normalize([]byte(x.String())), normalize([]byte(y.String()))
	b.ResetTimer()
	for range b.N {
		if !similarOutputs(a, c) {
			b.Fatal("not similar")
		}
	}
}
