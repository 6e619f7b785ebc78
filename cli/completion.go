package cli

import (
	"cmp"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/vaultui/vaultui/app"
)

// Shell completion. The scripts "vaultui completion bash|zsh|fish" prints know nothing of the
// commands: at each Tab they run "vaultui __complete WORD...", which reads the command table
// (and, for vault names, the registry) and prints what may come next. So completion is in
// step with the table by construction, and offers the vaults registered at that moment.
//
// The scripts call "vaultui __complete -- WORD...", so that the words' flags stay unparsed.
// __complete's answer: a first line naming what the shell adds of its own (none, files, dirs
// or programs), then one candidate a line as "WORD<tab>DESCRIPTION".

var completionCommand = &command{
	name:     "completion",
	anyArgs:  true,
	group:    groupOther,
	summary:  "Print the shell completion script for bash, zsh or fish",
	args:     "bash|zsh|fish",
	operands: []string{"bash|zsh|fish"},
	help: `The script completes commands, flags, flag values and vault names (those
registered when Tab is pressed). To install it for your user:

  bash: vaultui completion bash > ~/.local/share/bash-completion/completions/vaultui
  zsh:  vaultui completion zsh > ~/.zfunc/_vaultui (with fpath+=~/.zfunc before compinit in ~/.zshrc)
  fish: vaultui completion fish > ~/.config/fish/completions/vaultui.fish

or load it into the running shell with "source <(vaultui completion bash)".`,
	setup: noFlags(func(e *env, args []string) error {
		if len(args) != 1 {
			return e.usage("expected one of bash, zsh or fish, got %d arguments", len(args))
		}
		script, ok := completionScripts[args[0]]
		if !ok {
			return e.usage("no completion for shell %q: want bash, zsh or fish", args[0])
		}
		_, err := io.WriteString(e.stdout, script)
		return err
	}),
}

var completeCommand = &command{
	name:    "__complete",
	anyArgs: true,
	group:   groupOther,
	summary: "Print what completes the last of the words given (for the completion scripts)",
	args:    "-- WORD...",
	hidden:  true,
	setup: func(fs *flag.FlagSet) runFunc {
		raw := fs.Bool("raw", false, "the words are as typed (bash, zsh): undo their quoting first")
		return func(e *env, args []string) error {
			if *raw {
				for i, w := range args {
					args[i] = unquote(w)
				}
			}
			complete(e, args)
			return nil
		}
	},
}

// unquote undoes a POSIX shell's quoting of a word as typed so far: backslash escapes,
// '...', and "..." (where a backslash escapes only $, `, ", \ and a newline). A quote not
// closed yet runs to the end of the word, as while the user types it. Expansions ($HOME, ~)
// are left as they are: completion matches what was typed.
func unquote(w string) string {
	var b strings.Builder
	var quote rune // 0, '\'' or '"'
	escaped := false
	for _, r := range w {
		switch {
		case escaped:
			if quote == '"' && !strings.ContainsRune("$`\"\\\n", r) {
				b.WriteRune('\\')
			}
			b.WriteRune(r)
			escaped = false
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				b.WriteRune(r)
			}
		case r == '\\':
			escaped = true
		case r == '"' && quote == '"':
			quote = 0
		case (r == '"' || r == '\'') && quote == 0:
			quote = r
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// argShells says what completes an argument, by the name usage lines and flag help give it:
// what the shell adds of its own ("files", "dirs", "programs"). VAULT adds the registered
// names to the directories, NAME is a registered name, COMMAND a vaultui command, "a|b|c"
// one of the words it lists; any other name completes nothing.
var argShells = map[string]string{
	"FILE": "files", "PATH": "files", "EXE": "files", "PROGRAM": "programs",
	"DIR": "dirs", "CIPHERDIR": "dirs", "DESTDIR": "dirs", "MOUNTPOINT": "dirs", "VAULT": "dirs",
}

// complete prints what may replace the last of words, the arguments after "vaultui".
func complete(e *env, words []string) {
	if len(words) == 0 {
		words = []string{""}
	}
	cur := words[len(words)-1]
	out := &completion{prefix: cur}
	if len(words) == 1 {
		out.commands(e.commands)
		out.print(e.stdout)
		return
	}
	c := lookup(e.commands, words[0])
	if c == nil {
		out.print(e.stdout)
		return
	}
	flags := map[string]flagInfo{}
	for _, f := range c.flags() {
		flags[f.spelling()] = f
	}
	// Walk the words before the current one: which take a flag's value, which are operands.
	operands, flagsEnded := 0, false
	var pending *flagInfo // the flag whose value the next word is
	for _, w := range words[1 : len(words)-1] {
		switch f, isFlag := flags[w]; {
		case pending != nil:
			pending = nil
		case flagsEnded || !strings.HasPrefix(w, "-"):
			operands++
		case w == "--":
			flagsEnded = true
		case isFlag && f.placeholder != "":
			pending = &f
		}
	}
	switch {
	case pending != nil:
		out.argument(e, c.valueArg(*pending))
	case !flagsEnded && strings.HasPrefix(cur, "-"):
		for _, f := range c.flags() {
			out.add(f.spelling(), f.usage)
		}
		out.add("--help", "show this help")
	case len(c.operands) > 0:
		i := min(operands, len(c.operands)-1)
		if i == operands || strings.HasSuffix(c.operands[i], "...") {
			out.argument(e, c.operands[i])
		}
	}
	out.print(e.stdout)
}

// completion collects __complete's answer.
type completion struct {
	prefix string
	shell  string // what the shell adds: "none", "files", "dirs" or "programs"
	words  [][2]string
}

func (o *completion) add(word, description string) {
	if strings.HasPrefix(word, o.prefix) {
		o.words = append(o.words, [2]string{word, app.OneLine(description)})
	}
}

func (o *completion) commands(table []*command) {
	for _, c := range visibleCommands(table) {
		o.add(c.name, c.summary)
	}
}

// argument completes an argument named arg (argShells).
func (o *completion) argument(e *env, arg string) {
	arg = strings.TrimSuffix(arg, "...")
	o.shell = argShells[arg]
	switch {
	case arg == "VAULT", arg == "NAME":
		o.vaults(e)
	case arg == "COMMAND":
		o.commands(e.commands)
	case strings.Contains(arg, "|"):
		for _, w := range strings.Split(arg, "|") {
			o.add(w, "")
		}
	}
}

// vaults adds the registered vaults' names; an unreadable registry adds none (completion
// has nowhere to say why: "vaultui list" does).
func (o *completion) vaults(e *env) {
	reg, err := e.app.Registry()
	if err != nil {
		return
	}
	for _, v := range reg.Vaults {
		o.add(v.Name, v.CipherDir)
	}
}

func (o *completion) print(w io.Writer) {
	fmt.Fprintln(w, cmp.Or(o.shell, "none"))
	for _, word := range o.words {
		fmt.Fprintf(w, "%s\t%s\n", word[0], word[1])
	}
}

// completionScripts are the scripts "vaultui completion SHELL" prints. Each runs the program
// as typed (so ./vaultui completes from ./vaultui) with the words up to the cursor.
var completionScripts = map[string]string{
	"bash": `# bash completion for vaultui, from "vaultui completion bash".
_vaultui() {
	local cur=${COMP_WORDS[COMP_CWORD]} line word
	local -a lines
	mapfile -t lines < <("${COMP_WORDS[0]}" __complete --raw -- "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)
	COMPREPLY=()
	case ${lines[0]} in
	files|dirs) compopt -o filenames 2>/dev/null ;; # readline quotes every word offered
	esac
	for line in "${lines[@]:1}"; do
		word=${line%%$'\t'*}
		# A word with a space or quote ("cm vault") must go in as one argument: quoted here
		# unless readline quotes it (filenames) or the word typed opened a quote of its own.
		if [[ ${lines[0]} != files && ${lines[0]} != dirs && $cur != [\"\']* ]]; then
			printf -v word %q "$word"
		fi
		COMPREPLY+=("$word")
	done
	case ${lines[0]} in
	files) mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -f -- "$cur") ;;
	dirs) mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -d -- "$cur") ;;
	programs)
		mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -c -- "$cur") ;;
	esac
}
complete -F _vaultui vaultui
`,
	"zsh": `#compdef vaultui
# zsh completion for vaultui, from "vaultui completion zsh".
_vaultui() {
	local -a lines candidates
	local line
	lines=("${(@f)$("${words[1]}" __complete --raw -- "${(@)words[2,CURRENT]}" 2>/dev/null)}")
	for line in "${(@)lines[2,-1]}"; do
		candidates+=("${${line%%$'\t'*}//:/\\:}:${line#*$'\t'}")
	done
	(( ${#candidates} )) && _describe -t values vaultui candidates
	case ${lines[1]} in
	files) _files ;;
	dirs) _files -/ ;;
	programs) _command_names -e ;;
	esac
}
if [[ $funcstack[1] == _vaultui ]]; then
	_vaultui "$@"
else
	compdef _vaultui vaultui
fi
`,
	"fish": `# fish completion for vaultui, from "vaultui completion fish".
function __vaultui_complete
	# The tokens before the cursor come unquoted; the one being typed is unquoted here, so
	# that "cm\ v" or "'cm v" is the start of the vault name "cm vault".
	set -l tokens (commandline -opc)
	set -l cur (commandline -ct)
	set -l word (string unescape -- "$cur"; or echo "$cur")
	set -l out ($tokens[1] __complete -- $tokens[2..-1] "$word[1]" 2>/dev/null)
	if set -q out[2]
		printf '%s\n' $out[2..-1]
	end
	switch "$out[1]"
		case files
			__fish_complete_path "$cur"
		case dirs
			__fish_complete_directories "$cur"
		case programs
			__fish_complete_command
	end
end
complete -c vaultui -f -a '(__vaultui_complete)'
`,
}
