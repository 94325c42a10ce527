package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// Each snippet binds Alt+N: the command line typed so far goes to nash -c
// (review, sandboxed run, commit), and the script that ran is added to the
// shell's own history, so up-arrow finds what really ran.
var initSnippets = map[string]string{
	"bash": `# nash: Alt+N sends the current line to nash; the script that ran lands in history.
# Add to ~/.bashrc:  eval "$(nash init bash)"
__nash_send() {
  local line=$READLINE_LINE f
  [ -n "$line" ] || return 0
  f=$(mktemp "${TMPDIR:-/tmp}/nash.XXXXXX") || return 1
  local tty; tty=$(stty -g </dev/tty)
  stty sane </dev/tty # readline left the terminal raw; nash reads lines
  nash -c "$line" --save-script "$f" </dev/tty
  stty "$tty" </dev/tty
  if [ -s "$f" ]; then history -s -- "$(cat -- "$f")"; fi
  rm -f -- "$f"
  READLINE_LINE= READLINE_POINT=0
}
bind -x '"\en": __nash_send'
`,
	"zsh": `# nash: Alt+N sends the current line to nash; the script that ran lands in history.
# Add to ~/.zshrc:  eval "$(nash init zsh)"
__nash_send() {
  local line=$BUFFER f
  [[ -n $line ]] || return 0
  f=$(mktemp "${TMPDIR:-/tmp}/nash.XXXXXX") || return 1
  zle -I
  local tty; tty=$(stty -g </dev/tty)
  stty sane </dev/tty # zle left the terminal raw; nash reads lines
  nash -c "$line" --save-script "$f" </dev/tty
  stty "$tty" </dev/tty
  if [[ -s $f ]]; then print -s -- "$(<$f)"; fi
  rm -f -- "$f"
  BUFFER= CURSOR=0
  zle reset-prompt
}
zle -N __nash_send
bindkey '\en' __nash_send
`,
	"fish": `# nash: Alt+N sends the current line to nash; the script that ran lands in history.
# Add to ~/.config/fish/config.fish:  nash init fish | source
function __nash_send
    set -l line (commandline)
    test -n "$line"; or return 0
    set -l f (mktemp)
    set -l tty (stty -g </dev/tty)
    stty sane </dev/tty
    nash -c "$line" --save-script $f </dev/tty
    stty $tty </dev/tty
    if test -s $f
        builtin history append -- (string collect < $f)
    end
    rm -f -- $f
    commandline -r ''
    commandline -f repaint
end
bind \en __nash_send
`,
}

func newInitCmd(io stdio) *cobra.Command {
	return &cobra.Command{
		Use:       "init bash|zsh|fish",
		Short:     "print a snippet for your shell: Alt+N sends the line to nash, the script lands in history",
		Args:      exactArgs(1),
		ValidArgs: []string{"bash", "zsh", "fish"},
		RunE: func(_ *cobra.Command, args []string) error {
			s, ok := initSnippets[args[0]]
			if !ok {
				return usageError{fmt.Sprintf("init: unknown shell %q (want bash, zsh or fish)", args[0])}
			}
			_, err := fmt.Fprint(io.out, s)
			return err
		},
	}
}
