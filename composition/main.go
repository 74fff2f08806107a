// Command function-bind is the bind-fn Crossplane composition function: an
// XBindCluster in, the StatefulSet, Services, ConfigMaps and Secrets of a
// BIND cluster out, through the same pure pipeline as fn-render.
package main

import (
	"fmt"
	"os"

	"github.com/alecthomas/kong"

	"github.com/crossplane/function-sdk-go"
	"github.com/crossplane/function-sdk-go/logging"

	"git.unkin.net/unkin/bind-fn/internal/version"
	"git.unkin.net/unkin/bind-fn/internal/xfn"
)

// CLI of the function.
type CLI struct {
	Version kong.VersionFlag `help:"Print the version and exit."`

	Debug bool `help:"Emit debug logs in addition to info logs." short:"d"`

	Network           string `default:"tcp"   help:"Network on which to listen for gRPC connections."`
	Address           string `default:":9443" help:"Address at which to listen for gRPC connections."`
	TLSServerCertsDir string `env:"TLS_SERVER_CERTS_DIR" help:"Directory containing server certs (tls.key, tls.crt) and the CA used to verify client certificates (ca.crt)."`
	Insecure          bool   `help:"Run without mTLS credentials. If you supply this flag --tls-server-certs-dir will be ignored."`
	MaxRecvMsgSize    int    `default:"16" help:"Maximum size of received messages in MiB. Above Crossplane's 4 MiB so an over-size XR reaches the function and ends in a clear Fatal result rather than a gRPC error."`
	MaxResponseSize   int    `default:"4" help:"Largest response in MiB: Crossplane's gRPC client refuses bigger ones. A bigger desired state ends in a Fatal result."`
}

// Run this function.
func (c *CLI) Run() error {
	log, err := logging.NewLogger(c.Debug)
	if err != nil {
		return err
	}
	return function.Serve(&xfn.Function{Log: log, MaxResponseBytes: c.MaxResponseSize << 20},
		function.Listen(c.Network, c.Address),
		function.MTLSCertificates(c.TLSServerCertsDir),
		function.Insecure(c.Insecure),
		function.MaxRecvMessageSize(c.MaxRecvMsgSize<<20))
}

// exitUsage is every bind-fn binary's exit code for a command line it
// cannot parse.
const exitUsage = 64

func main() {
	parser := kong.Must(&CLI{},
		kong.Name("function-bind"),
		kong.Description("A Crossplane composition function that renders BIND 9 clusters.\n\nExit codes: 0 stopped cleanly, 1 the server failed, 64 a usage error."),
		kong.Vars{"version": version.Line("function-bind")})
	ctx, err := parser.Parse(os.Args[1:])
	if err != nil {
		// One line and a hint, not the whole help.
		fmt.Fprintf(os.Stderr, "function-bind: error: %v\nRun \"function-bind --help\" for usage.\n", err)
		os.Exit(exitUsage)
	}
	ctx.FatalIfErrorf(ctx.Run())
}
