package agent

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"time"

	"git.unkin.net/unkin/bind-fn/internal/layout"
)

// Options is every knob of the agent; the CLI fills it from flags.
type Options struct {
	// ConfigFile is agent.json; its directory is watched as the config mount.
	ConfigFile string
	// Hostname gives the ordinal (suffix after the last '-'); Ordinal >= 0 overrides it.
	Hostname string
	Ordinal  int
	// Binaries.
	Named, NamedCheckconf, RNDC string
	// NamedArgs are extra arguments for named (after -g -c <conf>).
	NamedArgs []string
	// User, when set and the agent runs as root, is passed as `named -u`
	// and owns the data directory, the run directory and seeded files.
	User string
	// Directories (pod defaults in layout).
	RunDir, DataDir, ZonesDir, KeysDir, RNDCDir string
	// Listen is the HTTP address for GET /metrics, /status, /readyz and
	// /healthz (read-only); "" uses agent.json's metricsPort (default
	// layout.DefaultMetricsPort); "off" disables.
	Listen string
	// ControlSocket is the unix socket for POST /drain, the requests that
	// change the pod's state; "" is RunDir/agent.sock, "off" disables.
	ControlSocket string
	// BindStats is BIND's statistics channel (host:port), fetched on each
	// /metrics scrape and appended as bind_* metrics; "off" or "" disables.
	BindStats string
	// DNSAddr is the local named for readiness and UPDATEs.
	DNSAddr string
	// RNDCServer and RNDCPort locate named's control channel.
	RNDCServer string
	RNDCPort   int
	// StateFile records the RRsets the agent owns in dynamic zones.
	StateFile string
	// Intervals. ResolveInterval 0 uses agent.json (default 10s).
	// ReadyInterval re-checks the zones not loaded yet; once all are,
	// ReadyRecheck re-checks every zone.
	ResolveInterval, PollInterval, ConvergeInterval, ReadyInterval, ReadyRecheck time.Duration
	// CatchUpDelay is how long after an applied change a secondary compares
	// its zones' serials with the primary's.
	CatchUpDelay time.Duration
	// PrimaryWait bounds how long a secondary waits for its primaries list.
	PrimaryWait time.Duration
	// WaitBound is how long a change waits for a file it needs that has
	// not arrived (arrival.go) before it fails; 0 is DefaultWaitBound.
	WaitBound time.Duration
	// HiddenPrimary: on the primary, /readyz always answers 503 (the serve
	// Service then selects only secondaries); zone readiness is still tracked.
	HiddenPrimary bool
	// Drain is how long a drain (the pod's preStop hook, `bind-fn-agent
	// drain`) holds the pod unready while named keeps answering, before it
	// returns and the kubelet sends SIGTERM.
	Drain time.Duration
	// Once prepares every file (link, includes, seeds, server lists), checks
	// the config and returns without starting named.
	Once bool
	// Mirrors are the ConfigMaps read from the API server (watch.go);
	// without API.URL the agent follows their mounts only.
	Mirrors       []Mirror
	Namespace     string
	API           APIServer
	WatchFallback time.Duration
	// Resolver resolves peers; nil uses net.DefaultResolver (honours /etc/hosts).
	Resolver Resolver
	Log      *slog.Logger
	// Output receives named's stdout and stderr; nil is os.Stderr.
	Output io.Writer
	// Signals, when set, replaces the process signal subscription (tests).
	Signals <-chan os.Signal
	// Started, when set, is called with the HTTP listener's address once serving.
	Started func(httpAddr string)
}

// DefaultOptions returns the pod defaults.
func DefaultOptions() Options {
	return Options{
		ConfigFile:       layout.ConfigFile(layout.AgentConfig),
		Ordinal:          -1,
		Named:            "named",
		NamedCheckconf:   "named-checkconf",
		RNDC:             "rndc",
		RunDir:           layout.RunDir,
		DataDir:          layout.DataDir,
		ZonesDir:         layout.ZonesDir,
		KeysDir:          layout.KeysDir,
		RNDCDir:          layout.RNDCDir,
		DNSAddr:          "127.0.0.1:53",
		BindStats:        net.JoinHostPort("127.0.0.1", strconv.Itoa(layout.StatisticsPort)),
		RNDCServer:       "127.0.0.1",
		RNDCPort:         layout.RNDCPort,
		PollInterval:     200 * time.Millisecond,
		ConvergeInterval: 60 * time.Second,
		ReadyInterval:    time.Second,
		ReadyRecheck:     10 * time.Second,
		CatchUpDelay:     100 * time.Millisecond,
		PrimaryWait:      5 * time.Minute,
		WaitBound:        DefaultWaitBound,
		Drain:            15 * time.Second,
	}
}

// UsageError is a bad flag, a missing or invalid file given at start: the
// CLI exits 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// NamedExitError is named ending on its own (or after a forwarded signal).
type NamedExitError struct {
	Code int
	Err  error
}

func (e *NamedExitError) Error() string { return fmt.Sprintf("named exited: %v", e.Err) }
