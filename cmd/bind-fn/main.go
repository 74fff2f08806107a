// Command bind-fn is the operator's CLI beside the KRM functions:
//
//	bind-fn plan [DIR] [--git REF | --old DIR] [--format markdown|json]
//	bind-fn import named.conf [--zone-dir DIR] [--verify] -o PKG
//	bind-fn render DIR
//	bind-fn version | completion bash|zsh
//
// plan says what a change does to DNS; import turns an existing BIND
// server's configuration into a bind-fn package (--verify checks it with
// real BIND; its pod runs `bind-fn verify-agent`, the agent, in place of
// bind-fn-agent); render does what kpt fn render does with the package's
// bind-fn pipeline, without kpt. The work is done in internal/plan,
// internal/importer and internal/krm.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/alecthomas/kong"

	"git.unkin.net/unkin/bind-fn/internal/agent"
	"git.unkin.net/unkin/bind-fn/internal/krm"
	"git.unkin.net/unkin/bind-fn/internal/version"
)

// CLI is the command line.
type CLI struct {
	Version kong.VersionFlag `help:"Print the version and exit."`

	Plan       PlanCmd       `cmd:"" help:"Show what a change to a package does to DNS."`
	Import     ImportCmd     `cmd:"" help:"Turn a BIND server's named.conf and zone files into a bind-fn package."`
	Render     RenderCmd     `cmd:"" help:"Render a package in place, as kpt fn render does with its fn-render and fn-validate pipeline (no kpt needed)."`
	VersionCmd VersionCmd    `cmd:"" name:"version" help:"Print the version and exit."`
	Completion CompletionCmd `cmd:"" help:"Print a shell completion script: source <(bind-fn completion bash)."`
}

// exitUsage is every bind-fn binary's exit code for a command line it
// cannot parse (krm.ExitUsage).
const exitUsage = krm.ExitUsage

func main() {
	os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
}

// exited is how kong's exit (after --help, --version) leaves Parse.
type exited struct{ code int }

// Main runs the command line args and returns the exit code: a command's
// own (plan: 0/2/3, import: 0/2), 1 for an error, 2 for a usage error.
func Main(args []string, stdout, stderr io.Writer) (code int) {
	if len(args) > 0 && args[0] == AgentWord { // import --verify's pod
		return agent.Main(context.Background(), args[1:], os.Getenv, stderr)
	}
	var cli CLI
	parser, err := newParser(&cli, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "bind-fn: %v\n", err)
		return 1
	}
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(exited)
			if !ok {
				panic(r)
			}
			code = e.code
		}
	}()
	ctx, err := parser.Parse(args)
	if err != nil {
		usageError(stderr, err)
		return exitUsage
	}
	code, err = run(ctx, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "bind-fn: error: %v\n", err)
		return 1
	}
	return code
}

func newParser(cli *CLI, stdout, stderr io.Writer) (*kong.Kong, error) {
	return kong.New(cli,
		kong.Name("bind-fn"),
		kong.Description("BIND 9 on Kubernetes, rendered: plan a change, import a server, render a package.\n\nExit codes: 0 success (plan: no change), 1 an error, 2 plan: a DNS change\n(import: something not carried), 3 plan: objects change, DNS does not, 64 a usage error."),
		kong.Vars{"version": version.Line("bind-fn")},
		kong.Writers(stdout, stderr),
		kong.Exit(func(c int) { panic(exited{c}) }))
}

// usageError is one line saying what is wrong and one naming the help of
// the command the user was typing, not the whole help.
func usageError(stderr io.Writer, err error) {
	help := "bind-fn --help"
	var pe *kong.ParseError
	if errors.As(err, &pe) && pe.Context != nil {
		if n := pe.Context.Selected(); n != nil {
			help = n.FullPath() + " --help"
		}
	}
	fmt.Fprintf(stderr, "bind-fn: error: %v\nRun %q for usage.\n", err, help)
}

func run(ctx *kong.Context, stdout, stderr io.Writer) (int, error) {
	switch c := ctx.Selected().Target.Addr().Interface().(type) {
	case *PlanCmd:
		return c.Run(stdout)
	case *ImportCmd:
		return c.Run(stdout, stderr)
	case *RenderCmd:
		return c.Run(stderr)
	case *VersionCmd:
		_, err := fmt.Fprintln(stdout, version.Line("bind-fn"))
		return 0, err
	case *CompletionCmd:
		return 0, c.Run(ctx.Model.Node, stdout)
	}
	return 1, nil
}

// VersionCmd is `bind-fn version`, the same line as --version.
type VersionCmd struct{}
