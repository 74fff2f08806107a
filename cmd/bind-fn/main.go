// Command bind-fn is the operator's CLI beside the KRM functions:
//
//	bind-fn plan [DIR] [--git REF | --old DIR] [--format markdown|json]
//	bind-fn import named.conf [--zone-dir DIR] [--verify] -o PKG
//	bind-fn render DIR
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
	"os"

	"github.com/alecthomas/kong"

	"git.unkin.net/unkin/bind-fn/internal/agent"
)

// CLI is the command line.
type CLI struct {
	Plan   PlanCmd   `cmd:"" help:"Show what a change to a package does to DNS."`
	Import ImportCmd `cmd:"" help:"Turn a BIND server's named.conf and zone files into a bind-fn package."`
	Render RenderCmd `cmd:"" help:"Render a package in place, as kpt fn render does with its fn-render and fn-validate pipeline (no kpt needed)."`
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == AgentWord { // import --verify's pod
		os.Exit(agent.Main(context.Background(), os.Args[2:], os.Getenv, os.Stderr))
	}
	var cli CLI
	ctx := kong.Parse(&cli, kong.Name("bind-fn"), kong.Description("BIND 9 on Kubernetes, rendered: plan a change, import a server."), kong.UsageOnError())
	code, err := run(ctx)
	if err != nil {
		ctx.Errorf("%v", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(ctx *kong.Context) (int, error) {
	switch c := ctx.Selected().Target.Addr().Interface().(type) {
	case *PlanCmd:
		return c.Run(os.Stdout)
	case *ImportCmd:
		return c.Run(os.Stdout, os.Stderr)
	case *RenderCmd:
		return c.Run(os.Stderr)
	}
	return 1, nil
}
