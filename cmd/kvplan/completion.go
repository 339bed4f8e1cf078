package main

import (
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"
)

// completionShells lists the shells `kvplan completion` writes scripts for.
var completionShells = []string{"bash", "zsh", "fish"}

func completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script: bash, zsh or fish",
		ArgsUsage: "bash|zsh|fish",
		UsageText: `source <(kvplan completion bash)                      # bash, this shell
   kvplan completion bash > /etc/bash_completion.d/kvplan  # bash, every shell
   kvplan completion zsh > "${fpath[1]}/_kvplan"           # zsh
   kvplan completion fish > ~/.config/fish/completions/kvplan.fish`,
		Description: `bash and zsh complete commands and flags by asking the installed kvplan
(its --generate-bash-completion), so completions follow its version;
fish gets every command and flag written out.`,
		Action: runCompletion,
	}
}

func runCompletion(c *cli.Context) error {
	if c.NArg() != 1 {
		return fmt.Errorf("completion: give one shell: %s", strings.Join(completionShells, ", "))
	}
	shell, err := parseEnumFlag("completion", c.Args().First(), completionShells)
	if err != nil {
		return err
	}
	w := c.App.Writer
	switch shell {
	case "bash":
		_, err = fmt.Fprint(w, bashCompletion)
	case "zsh":
		_, err = fmt.Fprint(w, zshCompletion)
	case "fish":
		var s string
		if s, err = c.App.ToFishCompletion(); err != nil {
			return internalError{err}
		}
		_, err = fmt.Fprint(w, s)
	}
	return err
}

// bashCompletion asks kvplan for the candidates of the word being completed
// (urfave/cli's protocol: the words so far, then --generate-bash-completion).
const bashCompletion = `# bash completion for kvplan (kvplan completion bash)
_kvplan_complete() {
  local cur words
  COMPREPLY=()
  cur="${COMP_WORDS[COMP_CWORD]}"
  words=("${COMP_WORDS[@]:0:$COMP_CWORD}")
  local opts
  if [[ "$cur" == -* ]]; then
    opts=$("${words[@]}" "$cur" --generate-bash-completion 2>/dev/null)
  else
    opts=$("${words[@]}" --generate-bash-completion 2>/dev/null)
  fi
  COMPREPLY=($(compgen -W "${opts}" -- "${cur}"))
  return 0
}
complete -o bashdefault -o default -F _kvplan_complete kvplan
`

// zshCompletion is the same protocol for zsh; candidates carry their usage.
const zshCompletion = `#compdef kvplan
# zsh completion for kvplan (kvplan completion zsh)
_kvplan() {
  local -a opts
  local cur
  cur=${words[-1]}
  if [[ "$cur" == -* ]]; then
    opts=("${(@f)$(${words[@]:0:#words[@]-1} ${cur} --generate-bash-completion 2>/dev/null)}")
  else
    opts=("${(@f)$(${words[@]:0:#words[@]-1} --generate-bash-completion 2>/dev/null)}")
  fi
  if [[ "${opts[1]}" != "" ]]; then
    _describe 'values' opts
  else
    _files
  fi
}
compdef _kvplan kvplan
`
