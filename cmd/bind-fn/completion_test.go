package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// completionScript is `bind-fn completion SHELL`, in a file.
func completionScript(t *testing.T, shell string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := Main([]string{"completion", shell}, &out, &errb); code != 0 {
		t.Fatalf("bind-fn completion %s: exit %d: %s", shell, code, errb.String())
	}
	f := filepath.Join(t.TempDir(), "bind-fn."+shell)
	if err := os.WriteFile(f, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestCompletionBash sources the script in bash and completes words as
// bash would, through the function it registered.
func TestCompletionBash(t *testing.T) {
	script := completionScript(t, "bash")
	cases := map[string]struct {
		reason string
		words  string // the command line, the last word being completed
		want   string
	}{
		"Commands":     {reason: "the first word completes to commands", words: "bind-fn ''", want: "plan import render version completion"},
		"Prefix":       {reason: "a prefix completes to its command", words: "bind-fn pl", want: "plan"},
		"RootFlags":    {reason: "a dash completes to the root's flags", words: "bind-fn --", want: "--help --version"},
		"CommandFlags": {reason: "a command's own flags", words: "bind-fn plan --fo", want: "--format"},
		"ParentFlags":  {reason: "a command takes the root's flags too", words: "bind-fn render -", want: "--help -h --version"},
		"SameFlagName": {reason: "import's --format has other values than plan's", words: "bind-fn import --format ''", want: "text json"},
		"EnumFlag":     {reason: "an enum flag's value completes to its values", words: "bind-fn plan --format ''", want: "markdown json"},
		"EnumArg":      {reason: "an enum argument completes to its values", words: "bind-fn completion ''", want: "bash zsh"},
		"Files":        {reason: "any other argument is left to bash's file names (complete -o default)", words: "bind-fn render ''", want: ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			sh := `source "$1"; complete -p bind-fn; COMP_WORDS=(` + tc.words + `); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _bind_fn; echo "${COMPREPLY[*]}"`
			out, err := exec.Command("bash", "-c", sh, "bash", script).CombinedOutput()
			if err != nil {
				t.Fatalf("bash: %v\n%s", err, out)
			}
			lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
			if len(lines) != 2 || lines[0] != "complete -o default -F _bind_fn bind-fn" || lines[1] != tc.want {
				t.Errorf("%s: completing %q: got\n%s\nwant the complete -p line, then %q", tc.reason, tc.words, out, tc.want)
			}
		})
	}
}

// TestCompletionZsh sources the zsh script after compinit: it registers
// bind-fn's completion through bashcompinit, and completes like bash.
// It needs zsh (Debian's zsh package).
func TestCompletionZsh(t *testing.T) {
	zsh, err := exec.LookPath("zsh")
	if err != nil {
		if os.Getenv("BINDFN_SKIP_CLI") == "1" {
			t.Skip("zsh is missing and BINDFN_SKIP_CLI=1")
		}
		t.Fatalf("this test needs zsh (apt-get install zsh), or set BINDFN_SKIP_CLI=1 to skip it: %v", err)
	}
	script := completionScript(t, "zsh")
	// _bash_complete (bashcompinit) calls the function under sh emulation:
	// bash's 0-based arrays.
	sh := `autoload -U compinit && compinit -u -D; source "$1"; print -r -- "$_comps[bind-fn]"
f() { emulate -L sh; setopt kshglob noshglob braceexpand; COMP_WORDS=(bind-fn plan --format ''); COMP_CWORD=3; _bind_fn; print -r -- "${COMPREPLY[*]}"; }; f`
	out, err := exec.Command(zsh, "-f", "-c", sh, "zsh", script).CombinedOutput()
	if err != nil {
		t.Fatalf("zsh: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "_bind_fn") || lines[1] != "markdown json" {
		t.Errorf("zsh: want bind-fn's completion registered (a function calling _bind_fn) and --format completing to its values; got\n%s", out)
	}
}
