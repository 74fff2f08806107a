package agent

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
)

const usageText = `bind-fn-agent: runs named in a bind-fn pod.

Usage:
  bind-fn-agent run [flags]        prepare files, run named -g, apply config changes
  bind-fn-agent copy-self DEST     copy this binary to DEST (a file, or a directory
                                   to hold bind-fn-agent); the init container runs it
  bind-fn-agent drain [--control-socket PATH]
                                   the pod's preStop hook: ask the running agent, over
                                   its control socket (default /run/bind-fn/agent.sock),
                                   to turn /readyz off while named keeps answering, and
                                   return when the drain time (run --drain) has passed

Exit status: named's, 1 on a runtime failure, 2 on a bad flag or a missing or
invalid file at start.

Flags of run:
`

type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, " ") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// ParseFlags parses `run` flags into Options. getenv supplies $HOSTNAME.
func ParseFlags(args []string, getenv func(string) string, out io.Writer) (Options, error) {
	o := DefaultOptions()
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		fmt.Fprint(out, usageText)
		fs.PrintDefaults()
	}
	var namedArgs, mirrors stringList
	var debug bool
	fs.StringVar(&o.ConfigFile, "config", o.ConfigFile, "agent.json; its directory is watched as the config mount")
	fs.StringVar(&o.Hostname, "hostname", getenv("HOSTNAME"), "pod hostname; the ordinal after the last '-' picks the role (0 = primary)")
	fs.IntVar(&o.Ordinal, "ordinal", o.Ordinal, "StatefulSet ordinal, overriding --hostname when >= 0")
	fs.StringVar(&o.Named, "named", o.Named, "named binary")
	fs.StringVar(&o.NamedCheckconf, "named-checkconf", o.NamedCheckconf, "named-checkconf binary")
	fs.StringVar(&o.RNDC, "rndc", o.RNDC, "rndc binary")
	fs.Var(&namedArgs, "named-arg", "extra argument for named (repeatable)")
	fs.StringVar(&o.User, "user", o.User, "when running as root: run named -u USER and give USER the run and data directories")
	fs.StringVar(&o.RunDir, "run-dir", o.RunDir, "writable runtime directory (named.conf link, servers.conf, key includes, rndc key)")
	fs.StringVar(&o.DataDir, "data-dir", o.DataDir, "named's writable data directory")
	fs.StringVar(&o.ZonesDir, "zones-dir", o.ZonesDir, "zones ConfigMap mounts, watched")
	fs.StringVar(&o.KeysDir, "keys-dir", o.KeysDir, "TSIG key Secret mounts, watched")
	fs.StringVar(&o.RNDCDir, "rndc-dir", o.RNDCDir, "rndc Secret mount (optional: without it the agent generates a key)")
	fs.StringVar(&o.StateFile, "state-file", o.StateFile, "RRsets the agent owns in dynamic zones (default DATA-DIR/bind-fn-agent-state.json)")
	fs.StringVar(&o.Listen, "listen", o.Listen, `HTTP address for GET /metrics /status /readyz /healthz, which change nothing (default ":<metricsPort>"; "off" disables)`)
	fs.StringVar(&o.ControlSocket, "control-socket", o.ControlSocket, `unix socket for POST /drain, which bind-fn-agent drain (the preStop hook) asks (default RUN-DIR/agent.sock; "off" disables)`)
	fs.StringVar(&o.BindStats, "bind-stats", o.BindStats, `BIND's statistics channel (host:port), read on each /metrics scrape into bind_* metrics; "off" disables`)
	fs.StringVar(&o.DNSAddr, "dns-addr", o.DNSAddr, "local named address for readiness queries and UPDATEs")
	fs.StringVar(&o.RNDCServer, "rndc-server", o.RNDCServer, "named control channel address")
	fs.IntVar(&o.RNDCPort, "rndc-port", o.RNDCPort, "named control channel port")
	fs.DurationVar(&o.ResolveInterval, "resolve-interval", o.ResolveInterval, "peer re-resolution interval (default agent.json resolveIntervalSeconds, else 10s)")
	fs.DurationVar(&o.PollInterval, "poll-interval", o.PollInterval, "how often mounted files are checked for changes")
	fs.DurationVar(&o.ConvergeInterval, "converge-interval", o.ConvergeInterval, "dynamic zone re-convergence interval")
	fs.DurationVar(&o.ReadyInterval, "ready-interval", o.ReadyInterval, "re-check interval of the zones not loaded yet")
	fs.DurationVar(&o.ReadyRecheck, "ready-recheck", o.ReadyRecheck, "re-check interval of every zone once all are loaded")
	fs.DurationVar(&o.WaitBound, "wait-bound", o.WaitBound, "how long a change waits for a file of a ConfigMap or Secret that has not arrived before it fails")
	fs.DurationVar(&o.PrimaryWait, "primary-wait", o.PrimaryWait, "how long a secondary waits for its primaries to resolve before giving up")
	fs.BoolVar(&o.HiddenPrimary, "hidden-primary", false, "on ordinal 0, /readyz always answers 503 so the serve Service selects only secondaries")
	fs.DurationVar(&o.Drain, "drain", o.Drain, "how long a drain (bind-fn-agent drain, the preStop hook) keeps the pod unready while named still answers, before it returns")
	fs.BoolVar(&o.Once, "once", false, "prepare files and check the config, then exit without starting named")
	fs.Var(&mirrors, "configmap", "NAME=LIVE:MOUNT: read ConfigMap NAME from the API server into LIVE, the kubelet's mount MOUNT the fallback (repeatable)")
	fs.StringVar(&o.Namespace, "namespace", getenv("POD_NAMESPACE"), "the pod's namespace, where --configmap objects are read")
	fs.DurationVar(&o.WatchFallback, "watch-fallback", DefaultWatchFallback, "how long the API server may be unreachable before --configmap follows the mounts again")
	fs.BoolVar(&debug, "debug", false, "debug logging")
	if err := fs.Parse(args); err != nil {
		return o, &UsageError{err}
	}
	if fs.NArg() > 0 {
		return o, &UsageError{fmt.Errorf("unexpected arguments: %q", fs.Args())}
	}
	if o.RNDCPort <= 0 || o.RNDCPort > 65535 {
		return o, &UsageError{fmt.Errorf("--rndc-port: %d is not a port", o.RNDCPort)}
	}
	o.NamedArgs = namedArgs
	for _, v := range mirrors {
		m, err := ParseMirror(v)
		if err != nil {
			return o, &UsageError{err}
		}
		o.Mirrors = append(o.Mirrors, m)
	}
	if len(o.Mirrors) > 0 {
		o.API = InClusterAPI(getenv)
	}
	level := slog.LevelInfo
	if debug {
		level = slog.LevelDebug
	}
	o.Log = slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: level}))
	o.Output = out
	return o, nil
}

// Main is the whole CLI; it returns the exit status.
func Main(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usageText)
		return 2
	}
	switch args[0] {
	case "run":
		o, err := ParseFlags(args[1:], getenv, stderr)
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		if err != nil {
			fmt.Fprintf(stderr, "bind-fn-agent: %v\n", err)
			return 2
		}
		a, err := New(o)
		if err != nil {
			fmt.Fprintf(stderr, "bind-fn-agent: %v\n", err)
			return 2
		}
		return exitCode(stderr, a.Run(ctx))
	case "copy-self":
		if len(args) != 2 {
			fmt.Fprintln(stderr, "bind-fn-agent: usage: bind-fn-agent copy-self DEST")
			return 2
		}
		self, err := os.Executable()
		if err == nil {
			err = CopySelf(self, args[1])
		}
		if err != nil {
			fmt.Fprintf(stderr, "bind-fn-agent: %v\n", err)
			return 1
		}
		return 0
	case "drain":
		return drainMain(ctx, args[1:], stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stderr, usageText)
		_, _ = ParseFlags([]string{"-h"}, getenv, stderr)
		return 0
	default:
		// One line and a hint, not the whole usage (the answer when
		// there is no command at all).
		fmt.Fprintf(stderr, "bind-fn-agent: error: unknown command %q\nRun \"bind-fn-agent --help\" for usage.\n", args[0])
		return 2
	}
}

// drainMain is `bind-fn-agent drain`: 0 once the agent has drained, 1 when
// it cannot be reached or refuses, 2 on a bad flag.
func drainMain(ctx context.Context, args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet("drain", flag.ContinueOnError)
	fs.SetOutput(stderr)
	socket := fs.String("control-socket", DefaultControlSocket(), "the agent's control socket (run --control-socket)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "bind-fn-agent: drain: unexpected arguments: %q\n", fs.Args())
		return 2
	}
	if err := Drain(ctx, *socket, stderr); err != nil {
		fmt.Fprintf(stderr, "bind-fn-agent: %v\n", err)
		return 1
	}
	return 0
}

func exitCode(stderr io.Writer, err error) int {
	if err == nil {
		return 0
	}
	fmt.Fprintf(stderr, "bind-fn-agent: %v\n", err)
	var ue *UsageError
	var ne *NamedExitError
	switch {
	case errors.As(err, &ue):
		return 2
	case errors.As(err, &ne):
		return ne.Code
	}
	return 1
}

// CopySelf copies the binary src to dest (or dest/bind-fn-agent when dest is
// a directory), executable, replacing any previous copy atomically.
func CopySelf(src, dest string) error {
	if fi, err := os.Stat(dest); err == nil && fi.IsDir() {
		dest = filepath.Join(dest, "bind-fn-agent")
	}
	b, err := os.ReadFile(src)
	if err != nil {
		return fmt.Errorf("cannot copy the agent: %w", err)
	}
	if _, err := WriteFileAtomic(dest, b, 0o755); err != nil {
		return fmt.Errorf("cannot copy the agent: %w", err)
	}
	return nil
}
