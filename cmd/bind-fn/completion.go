package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/alecthomas/kong"
)

// CompletionCmd is `bind-fn completion bash|zsh`: a completion script
// written from the command line's own model (commands, flags, enum values),
// so it cannot drift from the flags bind-fn takes.
type CompletionCmd struct {
	Shell string `arg:"" enum:"bash,zsh" help:"The shell: bash (source <(bind-fn completion bash), or save it in /etc/bash_completion.d/bind-fn) or zsh (source <(bind-fn completion zsh) after compinit)."`
}

// Run writes the script for the root of the command line.
func (c *CompletionCmd) Run(root *kong.Node, out io.Writer) error {
	script := bashCompletion(root)
	if c.Shell == "zsh" {
		// zsh runs bash completion functions through bashcompinit.
		script = "#compdef bind-fn\n# zsh completion for bind-fn: source <(bind-fn completion zsh), after compinit.\n" +
			"autoload -U +X bashcompinit && bashcompinit\n" + script
	}
	_, err := io.WriteString(out, script)
	return err
}

// bashCompletion is a bash script that completes root's commands, each
// command's flags, and the values of enum flags and arguments; anything
// else completes file names.
func bashCompletion(root *kong.Node) string {
	var b strings.Builder
	name := root.Name
	fn := "_" + strings.ReplaceAll(name, "-", "_")
	fmt.Fprintf(&b, "# bash completion for %s: source <(%s completion bash)\n", name, name)
	fmt.Fprintf(&b, "%s() {\n", fn)
	b.WriteString("\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd= i\n")
	var cmds []string
	for _, c := range root.Children {
		if !c.Hidden {
			cmds = append(cmds, c.Name)
		}
	}
	fmt.Fprintf(&b, "\tfor ((i = 1; i < COMP_CWORD; i++)); do\n\t\tcase ${COMP_WORDS[i]} in\n\t\t%s) cmd=${COMP_WORDS[i]}; break ;;\n\t\tesac\n\tdone\n", strings.Join(cmds, "|"))
	// Values of enum flags, by the command and the flag before the cursor.
	enums := map[string]string{}
	for _, n := range append([]*kong.Node{root}, root.Children...) {
		cmd := ""
		if n != root {
			cmd = n.Name
		}
		for _, group := range n.AllFlags(true) {
			for _, f := range group {
				if f.Enum != "" {
					enums[cmd+":--"+f.Name] = enumWords(f.Enum)
				}
			}
		}
	}
	if len(enums) > 0 {
		b.WriteString("\tcase $cmd:$prev in\n")
		for _, k := range sortedKeys(enums) {
			fmt.Fprintf(&b, "\t%s) COMPREPLY=($(compgen -W %q -- \"$cur\")); return ;;\n", k, enums[k])
		}
		b.WriteString("\tesac\n")
	}
	b.WriteString("\tlocal flags args\n\tcase $cmd in\n")
	fmt.Fprintf(&b, "\t'') flags=%q args=%q ;;\n", strings.Join(flagWords(root), " "), strings.Join(cmds, " "))
	for _, c := range root.Children {
		if c.Hidden {
			continue
		}
		var args []string
		for _, p := range c.Positional {
			if p.Enum != "" {
				args = append(args, strings.Fields(enumWords(p.Enum))...)
			}
		}
		fmt.Fprintf(&b, "\t%s) flags=%q args=%q ;;\n", c.Name, strings.Join(flagWords(c), " "), strings.Join(args, " "))
	}
	b.WriteString("\tesac\n")
	// A word starting with - is a flag; any other is an argument: a
	// command, an enum value, else (complete -o default) a file name.
	b.WriteString("\tif [[ $cur == -* ]]; then\n\t\tCOMPREPLY=($(compgen -W \"$flags\" -- \"$cur\"))\n\telse\n\t\tCOMPREPLY=($(compgen -W \"$args\" -- \"$cur\"))\n\tfi\n")
	b.WriteString("}\n")
	fmt.Fprintf(&b, "complete -o default -F %s %s\n", fn, name)
	return b.String()
}

// flagWords are the flags a node takes, its parents' included, as typed:
// --name, and -x for a short one.
func flagWords(n *kong.Node) []string {
	var out []string
	for _, group := range n.AllFlags(true) {
		for _, f := range group {
			out = append(out, "--"+f.Name)
			if f.Short != 0 {
				out = append(out, "-"+string(f.Short))
			}
		}
	}
	return out
}

// enumWords is kong's "a,b" enum as "a b".
func enumWords(enum string) string {
	var out []string
	for _, w := range strings.Split(enum, ",") {
		if w = strings.TrimSpace(w); w != "" {
			out = append(out, w)
		}
	}
	return strings.Join(out, " ")
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
