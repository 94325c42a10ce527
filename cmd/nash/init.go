package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// nash init prints key bindings for bash, zsh and fish. Two actions, one
// key each:
//
//   - run: the line typed so far goes to nash -c (review, sandboxed run,
//     commit), and the script that ran is added to the shell's own
//     history, so up-arrow finds what really ran;
//   - insert: nash plans a script for the line (nash -c --print, the
//     model's text shown as it arrives) and puts it on the command line
//     in its place, to edit and run there, as shell_gpt's Ctrl+L and
//     Atuin's Tab do. An answer or a question from the model is shown and
//     the line is left as it was.
//
// Alt+N does the default action (init.action in the config, run unless
// it says insert; --action overrides it), Alt+M the other.

// The functions of each shell; the bindings are added after them.
var initFuncs = map[string]string{
	"bash": `__nash_run() {
  local line=$READLINE_LINE f
  [ -n "$line" ] || return 0
  f=$(mktemp "${TMPDIR:-/tmp}/nash.XXXXXX") || return 1
  local tty; tty=$(stty -g </dev/tty)
  stty sane </dev/tty # readline left the terminal raw; nash reads lines
  nash -c --save-script "$f" -- "$line" </dev/tty
  stty "$tty" </dev/tty
  if [ -s "$f" ]; then history -s -- "$(cat -- "$f")"; fi
  rm -f -- "$f"
  READLINE_LINE= READLINE_POINT=0
}
__nash_insert() {
  local line=$READLINE_LINE script st
  [ -n "$line" ] || return 0
  local tty; tty=$(stty -g </dev/tty)
  stty sane </dev/tty # so that ctrl+c stops nash
  script=$(nash -c --print -- "$line" </dev/tty)
  st=$?
  stty "$tty" </dev/tty
  if [ "$st" = 0 ] && [ -n "$script" ]; then
    READLINE_LINE=$script
    READLINE_POINT=${#READLINE_LINE}
  fi
}
`,
	"zsh": `__nash_run() {
  local line=$BUFFER f
  [[ -n $line ]] || return 0
  f=$(mktemp "${TMPDIR:-/tmp}/nash.XXXXXX") || return 1
  zle -I
  local tty; tty=$(stty -g </dev/tty)
  stty sane </dev/tty # zle left the terminal raw; nash reads lines
  nash -c --save-script "$f" -- "$line" </dev/tty
  stty "$tty" </dev/tty
  if [[ -s $f ]]; then print -s -- "$(<$f)"; fi
  rm -f -- "$f"
  BUFFER= CURSOR=0
  zle reset-prompt
}
__nash_insert() {
  local line=$BUFFER script st
  [[ -n $line ]] || return 0
  zle -I
  local tty; tty=$(stty -g </dev/tty)
  stty sane </dev/tty # so that ctrl+c stops nash
  script=$(nash -c --print -- "$line" </dev/tty)
  st=$?
  stty "$tty" </dev/tty
  if (( st == 0 )) && [[ -n $script ]]; then
    BUFFER=$script
    CURSOR=${#BUFFER}
  fi
  zle reset-prompt
}
zle -N __nash_run
zle -N __nash_insert
`,
	"fish": `function __nash_history --argument-names f
    # fish 4 has history append; before it, the entry goes to the
    # history file and is merged in.
    if not string match -qr '^[0-3]\.' -- $version
        builtin history append -- (string collect < $f)
        return
    end
    set -q fish_history; or set -l fish_history fish
    test -n "$fish_history"; or return
    set -l data ~/.local/share
    set -q XDG_DATA_HOME; and set data $XDG_DATA_HOME
    set -l cmd (string replace -a '\\' '\\\\' < $f | string join '\n')
    printf '- cmd: %s\n  when: %s\n' "$cmd" (date +%s) >> $data/fish/$fish_history"_history"
    builtin history merge
end
function __nash_run
    set -l line (commandline)
    test -n "$line"; or return 0
    set -l f (mktemp)
    set -l tty (stty -g </dev/tty)
    stty sane </dev/tty # fish left the terminal raw; nash reads lines
    nash -c --save-script $f -- "$line" </dev/tty
    stty $tty </dev/tty
    test -s $f; and __nash_history $f
    rm -f -- $f
    commandline -r ''
    commandline -f repaint
end
function __nash_insert
    set -l line (commandline)
    test -n "$line"; or return 0
    set -l f (mktemp)
    set -l tty (stty -g </dev/tty)
    stty sane </dev/tty # so that ctrl+c stops nash
    nash -c --print -- "$line" </dev/tty >$f
    set -l st $status
    stty $tty </dev/tty
    if test $st -eq 0; and test -s $f
        set -l script (string collect < $f)
        commandline -r -- $script
        commandline -C (string length -- $script)
    end
    rm -f -- $f
    commandline -f repaint
end
`,
}

// initBind binds key (an Alt+letter, as "\en") to fn in shell.
func initBind(shell, key, fn string) string {
	switch shell {
	case "bash":
		return fmt.Sprintf("bind -x '\"%s\": %s'\n", key, fn)
	case "zsh":
		return fmt.Sprintf("bindkey '%s' %s\n", key, fn)
	}
	return fmt.Sprintf("bind %s %s\n", key, fn)
}

// initSnippet is what nash init prints for shell, with Alt+N doing action
// (run or insert) and Alt+M the other.
func initSnippet(shell, action string) string {
	other := map[string]string{"run": "insert", "insert": "run"}[action]
	what := map[string]string{
		"run":    "sends the line to nash (review, sandboxed run, commit; the script that ran lands in history)",
		"insert": "puts nash's script for the line on the line, to edit and run yourself",
	}
	add := map[string]string{
		"bash": `eval "$(nash init bash)"  in ~/.bashrc`,
		"zsh":  `eval "$(nash init zsh)"  in ~/.zshrc`,
		"fish": `nash init fish | source  in ~/.config/fish/config.fish`,
	}[shell]
	var b strings.Builder
	fmt.Fprintf(&b, "# nash: Alt+N %s;\n#       Alt+M %s.\n", what[action], what[other])
	fmt.Fprintf(&b, "# Add: %s (init.action: insert in nash's config swaps the keys)\n", add)
	b.WriteString(initFuncs[shell])
	b.WriteString(initBind(shell, `\en`, "__nash_"+action))
	b.WriteString(initBind(shell, `\em`, "__nash_"+other))
	return b.String()
}

func newInitCmd(g *options, io stdio) *cobra.Command {
	var action string
	cmd := &cobra.Command{
		Use:       "init [--action run|insert] bash|zsh|fish",
		Short:     "print key bindings for your shell: Alt+N sends the line to nash, Alt+M puts nash's script on the line",
		Args:      exactArgs(1),
		ValidArgs: []string{"bash", "zsh", "fish"},
		RunE: func(_ *cobra.Command, args []string) error {
			if _, ok := initFuncs[args[0]]; !ok {
				return usageError{fmt.Sprintf("init: unknown shell %q (want bash, zsh or fish)", args[0])}
			}
			if action == "" {
				action = g.initAction
			}
			if action != "run" && action != "insert" {
				return usageError{fmt.Sprintf("init: --action %q: want run or insert", action)}
			}
			_, err := fmt.Fprint(io.out, initSnippet(args[0], action))
			return err
		},
	}
	cmd.Flags().StringVar(&action, "action", "", "what Alt+N does: run (the default) or insert; Alt+M does the other")
	return cmd
}
