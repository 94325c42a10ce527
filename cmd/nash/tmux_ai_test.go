package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Terminal tests of what people expect from an AI shell: nash init's
// insert-instead-of-run in bash, zsh and fish, the model's text shown as
// it arrives and cancelled with ctrl+c, answers rendered and their
// commands run, piped input with questions on the terminal, and the first
// start without a model. zsh and fish are needed (.ci/run installs them);
// without them these tests fail rather than skip.

// shellPrompts are the prompts the tests give each shell, to wait for.
var shellPrompts = map[string]string{"bash": `bash\$ `, "zsh": `zsh\$ `, "fish": `fish\$ `}

// startBoundShell starts shell (bash, zsh or fish) without its rc files in a
// 100x30 tmux pane, in a fresh directory, with nash (this binary) on PATH
// and the fake model answering from answers, and loads nash init's
// bindings with initArgs (e.g. "--action", "insert").
func startBoundShell(t *testing.T, shell, answers string, initArgs ...string) *tmuxNash {
	t.Helper()
	for _, p := range []string{"tmux", shell} {
		if _, err := exec.LookPath(p); err != nil {
			t.Fatalf("%s is needed for this terminal test (.ci/run installs it): %v", p, err)
		}
	}
	self := testBin(t, "nash")
	root := t.TempDir()
	bin := filepath.Join(root, "bin")
	home := filepath.Join(root, "home")
	dir := filepath.Join(root, "work")
	for _, d := range []string{bin, home, dir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(self, filepath.Join(bin, "nash")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "answers"), []byte(answers), 0o644); err != nil {
		t.Fatal(err)
	}
	m := newFakeModel(root)
	t.Cleanup(m.srv.Close)
	vars := []string{
		"HOME=" + home, "PATH=" + bin + ":" + os.Getenv("PATH"), "TERM=xterm-256color", "LANG=C.UTF-8",
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"), "XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"OPENAI_BASE_URL=" + m.srv.URL + "/v1", "OPENAI_API_KEY=sk-test", "NASH_MODEL=openai:test-model",
		"GORACE=log_path=" + filepath.Join(root, "race"), "HISTFILE=",
	}
	if tmp := os.Getenv("TMPDIR"); tmp != "" {
		vars = append(vars, "TMPDIR="+tmp)
	}
	var cmd string
	switch shell {
	case "bash":
		vars = append(vars, "PS1=bash$ ")
		cmd = "bash --norc --noprofile -i"
	case "zsh":
		vars = append(vars, "PS1=zsh$ ")
		cmd = "zsh -f -i"
	case "fish":
		// Not --no-config: it also keeps history off the disk, where
		// nash's binding writes before fish 4. XDG_CONFIG_HOME is empty.
		cmd = `fish -i -C 'set -g fish_greeting ""; function fish_prompt; echo -n "fish\$ "; end'`
	}
	var launch strings.Builder
	launch.WriteString("#!/bin/sh\nexec env -i")
	for _, v := range vars {
		fmt.Fprintf(&launch, " %s", shQuote(v))
	}
	fmt.Fprintf(&launch, " %s\n", cmd)
	script := filepath.Join(root, "launch.sh")
	if err := os.WriteFile(script, []byte(launch.String()), 0o755); err != nil {
		t.Fatal(err)
	}
	tn := &tmuxNash{t: t, sock: filepath.Join(root, "tmux.sock"), dir: dir, home: home, target: shell}
	tn.tmux("new-session", "-d", "-s", shell, "-x", "100", "-y", "30", "-c", dir, script)
	t.Cleanup(func() {
		killTmux(tn.sock, root)
		logs, _ := filepath.Glob(filepath.Join(root, "race.*"))
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			t.Errorf("nash had a data race:\n%s", b)
		}
	})
	prompt := shellPrompts[shell]
	tn.waitFor(prompt)
	load := fmt.Sprintf(`eval "$(nash init %s %s)"`, strings.Join(initArgs, " "), shell)
	if shell == "fish" {
		load = fmt.Sprintf(`nash init %s fish | source`, strings.Join(initArgs, " "))
	}
	tn.typeLine(load)
	tn.waitCount(prompt, 2)
	return tn
}

// requestsLog is what the fake model of tn was asked.
func (tn *tmuxNash) requestsLog() string {
	b, _ := os.ReadFile(filepath.Join(filepath.Dir(tn.dir), "requests.log"))
	return string(b)
}

// TestTmuxInsert: in bash, zsh and fish, Alt+M puts nash's script for the
// line typed on the command line in its place, where the person edits and
// runs it as any command; nothing ran before that. --action insert gives
// Alt+N that action.
func TestTmuxInsert(t *testing.T) {
	for _, tc := range []struct {
		shell    string
		initArgs []string
		key      string
	}{
		{"bash", nil, "M-m"},
		{"zsh", nil, "M-m"},
		{"fish", nil, "M-m"},
		{"bash", []string{"--action", "insert"}, "M-n"},
	} {
		t.Run(tc.shell+" "+tc.key, func(t *testing.T) {
			tn := startBoundShell(t, tc.shell, `{"script": "echo hello > hello.txt", "explanation": "Writes hello."}`, tc.initArgs...)
			prompt := shellPrompts[tc.shell]
			tn.tmux("send-keys", "-t", tn.target, "-l", "a greeting file please")
			tn.waitFor(prompt + `a greeting file please`)
			tn.send(tc.key)
			tn.waitFor(prompt + `echo hello > hello\.txt\s*$`)
			if strings.Contains(tn.screen(false), "a greeting file please") {
				tn.fatalf("the request is still on the line")
			}
			if _, err := os.Stat(filepath.Join(tn.dir, "hello.txt")); err == nil {
				tn.fatalf("hello.txt exists before the person ran the line")
			}
			// The person edits the line, then runs it in their shell.
			tn.tmux("send-keys", "-t", tn.target, "-l", " ; echo edited >> hello.txt")
			tn.send("Enter")
			tn.waitCount(prompt, 3) // the init line, the inserted line, the next
			if got := tn.file("hello.txt"); got != "hello\nedited\n" {
				tn.fatalf("hello.txt = %q after running the inserted, edited line", got)
			}
			if !strings.Contains(tn.requestsLog(), "a greeting file please") {
				tn.fatalf("the request never reached the model")
			}
		})
	}
}

// TestTmuxInsertLeavesLineOnAnswer: when the model answers instead of
// writing a script, the answer is shown and the line stays as typed.
func TestTmuxInsertLeavesLineOnAnswer(t *testing.T) {
	tn := startBoundShell(t, "zsh", `{"answer": "tar -xzf extracts a **gzip** archive."}`)
	tn.tmux("send-keys", "-t", tn.target, "-l", "what does tar xzf do")
	tn.waitFor(`zsh\$ what does tar xzf do`)
	tn.send("M-m")
	tn.waitFor(`extracts a gzip archive`)
	tn.waitFor(`zsh\$ what does tar xzf do\s*$`)
}

// TestTmuxRunHistory: Alt+N runs the line through nash, and the script
// that ran lands in the shell's own history (zsh's print -s, fish's
// history file before fish 4).
func TestTmuxRunHistory(t *testing.T) {
	for _, shell := range []string{"zsh", "fish"} {
		t.Run(shell, func(t *testing.T) {
			tn := startBoundShell(t, shell, "")
			tn.tmux("send-keys", "-t", tn.target, "-l", "echo from-alt-n > f.txt")
			tn.waitFor(`echo from-alt-n > f.txt`)
			tn.send("M-n")
			tn.waitFor(`\[c\]ommit, \[a\]bort`)
			tn.typeLine("c")
			tn.waitFor(`committed as transaction[^\n]*\n(.*\n)*` + shellPrompts[shell] + `\s*$`)
			if got := tn.file("f.txt"); got != "from-alt-n\n" {
				tn.fatalf("f.txt = %q", got)
			}
			if shell == "zsh" {
				tn.typeLine("fc -l -1")
			} else {
				tn.typeLine("history search --max 2")
			}
			tn.waitFor(`(?m)^(\s*\d+\s+)?echo from-alt-n > f\.txt\s*$`)
		})
	}
}

// TestTmuxStreamCancel: while the model writes, the shell shows the script
// so far and the time taken; ctrl+c cancels the request (the connection
// to the model is closed), and the prompt comes back.
func TestTmuxStreamCancel(t *testing.T) {
	tn := startNash(t, `{"script": "echo first step\necho second step`+holdMark+`\necho never"}`)
	tn.typeLine("three steps please")
	tn.waitFor(`echo first step\s*\n\s*echo second step`)
	s := tn.waitFor(`planning… \d+\.\ds.*\(ctrl\+c cancels\)`)
	if strings.Contains(s, "review:") {
		tn.fatalf("a review while the model was still writing")
	}
	tn.send("C-c")
	tn.waitFor(`cancelled`)
	tn.waitFor(`\[   \] \s*$`)
	if strings.Contains(tn.screen(false), "planning…") {
		tn.fatalf("the model's text stayed after ctrl+c")
	}
	tn.waitForLog(`the client went away during the stream`)
	tn.typeLine("echo still-here")
	tn.waitFor(`(?m)^still-here`)
}

// waitForLog waits until the fake model's log matches pattern.
func (tn *tmuxNash) waitForLog(pattern string) {
	tn.t.Helper()
	tn.waitUntil("the model's log to show "+pattern, func() bool { return regexpMatch(pattern, tn.requestsLog()) })
}

// TestTmuxOneShotStream: nash -c on a terminal shows the model's text as it
// arrives on stderr and erases it for the review; ctrl+c ends nash with 130.
func TestTmuxOneShotStream(t *testing.T) {
	tn := startBoundShell(t, "bash", `{"script": "echo streamed one\necho streamed two`+holdMark+`"}`)
	tn.typeLine("nash -c 'two lines please'; echo exit=$?")
	tn.waitFor(`echo streamed one\s*\n\s*echo streamed two`)
	tn.waitFor(`planning… \d+\.\ds`)
	tn.send("C-c")
	tn.waitFor(`nash: interrupted\s*\nexit=130`)
	if strings.Contains(tn.screen(false), "planning…") {
		tn.fatalf("the live region was left on the screen")
	}
	tn.waitForLog(`the client went away during the stream`)
}

// TestTmuxAnswer: a question in the shell gets an answer rendered as
// Markdown with its commands numbered; 1 takes the first through the
// review, and its run is committed.
func TestTmuxAnswer(t *testing.T) {
	tn := startNash(t, "{\"answer\": \"Make a **backup** first:\\n\\n```sh\\ncp notes.txt notes.bak\\n```\\n\\nthen edit.\"}")
	if err := os.WriteFile(filepath.Join(tn.dir, "notes.txt"), []byte("n\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tn.typeLine("how do I keep a copy of my notes")
	tn.waitFor(`Make a backup first:`)
	tn.waitFor(`\[1\] +cp notes\.txt notes\.bak`)
	tn.waitFor(`answer: 1 review and run that command`)
	if strings.Contains(tn.screen(false), "```") {
		tn.fatalf("the Markdown was not rendered")
	}
	if !colourSGR.MatchString(tn.screen(true)) {
		tn.fatalf("no colour in the rendered answer")
	}
	tn.send("1")
	tn.waitFor(`review: enter run`)
	tn.send("Enter")
	tn.waitFor(`changes: c commit`)
	tn.send("c")
	tn.waitFor(`committed as transaction`)
	if got := tn.file("notes.bak"); got != "n\n" {
		tn.fatalf("notes.bak = %q", got)
	}
}

// TestTmuxPipedStdin: journalctl | nash -c "why did it fail": the piped
// text goes to the model, nash says how much, and its questions come from
// the terminal though stdin is the data.
func TestTmuxPipedStdin(t *testing.T) {
	tn := startBoundShell(t, "bash", "{\"answer\": \"The disk is full. Free space with:\\n\\n```sh\\necho freed > freed.txt\\n```\"}")
	tn.typeLine("printf 'Nov 20 app[42]: write failed: No space left on device\\n' | nash -c 'why did it fail'; echo exit=$?")
	tn.waitFor(`stdin: sent the model all \d+ B`)
	tn.waitFor(`The disk is full`)
	tn.waitFor(`review and run \[1\]\? y or enter for no: `)
	tn.typeLine("y")
	tn.waitFor(`run it\? \[y\]es`)
	tn.typeLine("y")
	tn.waitFor(`\[c\]ommit, \[a\]bort`)
	tn.typeLine("c")
	tn.waitFor(`committed as transaction \d+[^\n]*\n(.*\n)*exit=0`)
	if got := tn.file("freed.txt"); got != "freed\n" {
		tn.fatalf("freed.txt = %q", got)
	}
	if !strings.Contains(tn.requestsLog(), "No space left on device") {
		tn.fatalf("the piped text never reached the model")
	}
}

// TestTmuxFirstStart: the first interactive start without a model that
// answers says in a few lines how to set one up, once.
func TestTmuxFirstStart(t *testing.T) {
	tn := startNash(t, "", "NASH_MODEL=ollama:qwen2.5-coder:7b", "OLLAMA_HOST=http://127.0.0.1:9")
	s := tn.waitFor(`no model to plan requests: .*nothing answers`)
	for _, want := range []string{"ollama pull qwen2.5-coder:7b", "OPENAI_API_KEY", "nash doctor checks the rest"} {
		if !strings.Contains(s, want) {
			tn.fatalf("the guidance lacks %q", want)
		}
	}
	lines := 0
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			lines++
		}
	}
	if lines > 8 {
		tn.fatalf("the guidance takes %d lines, want a few", lines)
	}
	// The prompt works meanwhile, and the next start says nothing.
	tn.typeLine("echo typed-ok")
	// What is typed while a command runs goes to the command: wait for
	// the prompt after it (a typed line that changes nothing says
	// nothing).
	tn.waitFor(`(?m)^typed-ok\s*\n.*\(ollama:qwen2\.5-coder:7b\) \[   \] \s*$`)
	tn.typeLine("exit")
	// nash is gone once its terminal is closed. (tmux's "Pane is dead"
	// is not waited for: after a typed line tmux is at times never sent
	// SIGCHLD for nash, which stays a zombie tmux has not reaped, though
	// the pane is dead.)
	tn.waitUntil("nash to exit", func() bool {
		return strings.TrimSpace(tn.tmux("display-message", "-p", "-t", tn.target, "#{pane_dead}")) == "1"
	})
	if c := strings.Count(tn.screen(false), "no model to plan requests"); c != 1 {
		tn.fatalf("the guidance was shown %d times at the first start, want once", c)
	}
	tn.tmux("respawn-pane", "-t", tn.target)
	tn.waitFor(`\(ollama:qwen2\.5-coder:7b\)`)
	tn.typeLine("echo second-start")
	tn.waitFor(`(?m)^second-start`)
	// The first start's check runs 200 ms after the prompt; give a second
	// one time to show what it would. tmux may or may not keep the first
	// start's lines on the screen: the second's come after the exit.
	time.Sleep(time.Second)
	second := tn.screen(false)
	if i := strings.LastIndex(second, ") exit"); i >= 0 {
		second = second[i:]
	}
	if strings.Contains(second, "no model to plan requests") {
		tn.fatalf("the guidance was shown again at the second start")
	}
}

// waitUntil waits until ok holds, within waitLimit.
func (tn *tmuxNash) waitUntil(what string, ok func() bool) {
	tn.t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !ok() {
		if time.Now().After(deadline) {
			tn.fatalf("waited in vain for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func regexpMatch(pattern, s string) bool { return regexp.MustCompile(pattern).MatchString(s) }
