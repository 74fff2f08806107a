// Package agent is bind-fn's in-pod agent: it prepares what a pure render
// cannot know (role by ordinal, resolved peer addresses, imported key
// includes, seeded zone files, an rndc key), runs `named -g`, applies mounted
// config changes without restarting named (named-checkconf, then rndc
// reconfig/reload), converges dynamic zones by TSIG-signed UPDATE and serves
// /readyz, /status and /metrics.
package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"git.unkin.net/unkin/bind-fn/internal/layout"
)

// Agent is one running agent.
type Agent struct {
	opt     Options
	log     *slog.Logger
	role    Role
	ordinal int
	state   *State
	rndc    RNDC
	// rollCheck asks startRollovers to list the rollovers to start again
	// (set at start and when the mounted files change); rollPending are
	// those not started yet, rollTried the last attempt (roll.go).
	rollCheck   bool
	rollPending []KeyRoll
	rollTried   time.Time
	conv        Converger
	peers       PeerResolver
	chown       func(string) error
	watch       *watcher // nil without --configmap

	mu  sync.Mutex // guards cfg for the readiness goroutine
	cfg *layout.AgentConfigDoc
	// tlsErr is the last TLS check's failure (tls.go), guarded by mu.
	tlsErr string

	readyKick chan struct{} // an applied change: re-check every zone now

	catchUpTimer *time.Timer // guarded by mu
	catchUpMu    sync.Mutex  // one catchUp at a time

	appliedCfg, appliedZones string   // hashes named runs with
	appliedSnap              Snapshot // what named read, per file (plan.go)
	zonesDirty               bool     // zone commands failed part way: reconfigure next
	hashMu                   sync.Mutex
	hashCache                map[string]*dirSums // zone file hashes by directory (plan.go)
	seenCfg, seenZones       string              // hashes last acted upon
	serversText              string
	// written are the server lists last written to servers.conf; they are
	// published in /status only once named has loaded that file (start,
	// or a successful rndc reconfig/reload), so /status never claims
	// NOTIFYs go somewhere named does not send them yet. peersPending is
	// set while the file holds lists named has not loaded.
	written      []Peers
	peersPending bool
	// applied are the lists named runs with (the last published); guarded by mu.
	applied []Peers
	// waiting is the input the last change waits for (arrival.go); nil
	// when none. Waits are reported as such only once named runs.
	waiting *waitState
	running bool
}

// New validates opt, loads agent.json and returns an agent ready to Run.
// Every problem here is a *UsageError.
func New(opt Options) (*Agent, error) {
	if opt.Log == nil {
		opt.Log = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if opt.Output == nil {
		opt.Output = os.Stderr
	}
	if opt.Resolver == nil {
		opt.Resolver = net.DefaultResolver
	}
	if opt.StateFile == "" {
		opt.StateFile = filepath.Join(opt.DataDir, filepath.Base(layout.AgentStateFile()))
	}
	for name, d := range map[string]time.Duration{"poll-interval": opt.PollInterval, "converge-interval": opt.ConvergeInterval, "ready-interval": opt.ReadyInterval, "ready-recheck": opt.ReadyRecheck, "catch-up-delay": opt.CatchUpDelay} {
		if d <= 0 {
			return nil, &UsageError{fmt.Errorf("--%s must be positive, got %s", name, d)}
		}
	}
	for name, d := range map[string]string{"run-dir": opt.RunDir, "data-dir": opt.DataDir, "config": opt.ConfigFile} {
		if d == "" {
			return nil, &UsageError{fmt.Errorf("--%s must be set", name)}
		}
	}
	ordinal := opt.Ordinal
	if ordinal < 0 {
		if opt.Hostname == "" {
			return nil, &UsageError{errors.New("no hostname: set --hostname or $HOSTNAME (or --ordinal)")}
		}
		n, err := Ordinal(opt.Hostname)
		if err != nil {
			return nil, &UsageError{err}
		}
		ordinal = n
	}
	var w *watcher
	if len(opt.Mirrors) > 0 { // before agent.json is read: it may live in one
		var err error
		if w, err = newWatcher(opt); err != nil {
			return nil, &UsageError{err}
		}
	}
	cfg, err := LoadConfig(opt.ConfigFile)
	if err != nil {
		return nil, &UsageError{err}
	}
	if opt.ResolveInterval == 0 {
		opt.ResolveInterval = time.Duration(cfg.ResolveIntervalSeconds) * time.Second
		if opt.ResolveInterval == 0 {
			opt.ResolveInterval = 10 * time.Second
		}
	}
	if opt.Listen == "" {
		port := cfg.MetricsPort
		if port == 0 {
			port = layout.DefaultMetricsPort
		}
		opt.Listen = ":" + strconv.Itoa(port)
	}
	for _, b := range []*string{&opt.Named, &opt.NamedCheckconf, &opt.RNDC} {
		p, err := exec.LookPath(*b)
		if err != nil {
			return nil, &UsageError{fmt.Errorf("cannot find %s: %w", *b, err)}
		}
		*b = p
	}
	a := &Agent{opt: opt, log: opt.Log, ordinal: ordinal, role: RoleOf(ordinal), cfg: cfg, readyKick: make(chan struct{}, 1), watch: w}
	a.state = NewState(a.role, ordinal)
	a.state.SetDrain(opt.Drain)
	if opt.HiddenPrimary && a.role == RolePrimary {
		a.state.Update(func(s *Status) { s.HiddenPrimary = true })
	}
	// After the agent's own metrics: BIND's statistics, then the
	// signatures of the signed zones and their DS at the parent (metrics
	// of named that the statistics channel does not give).
	var extra []func(context.Context, *strings.Builder)
	if opt.BindStats != "" {
		addr, err := ParseBindStatsAddr(opt.BindStats)
		if err != nil {
			return nil, &UsageError{err}
		}
		if addr != "" {
			extra = append(extra, (&BindStats{Addr: addr, Log: opt.Log}).Write)
		}
	}
	sig := &SignatureExpiry{Addr: opt.DNSAddr, Zones: func() []string {
		if c := a.config(); c != nil {
			return c.DNSSECZones
		}
		return nil
	}}
	extra = append(extra, sig.Write)
	// The DS at the parent of zones with parental-agents (dscheck.go).
	extra = append(extra, (&DSCheck{Addr: opt.DNSAddr, Conf: a.checkTarget}).Write)
	a.state.SetExtraMetrics(func(ctx context.Context, w *strings.Builder) {
		for _, f := range extra {
			f(ctx, w)
		}
	})
	a.rndc = RNDC{Bin: opt.RNDC, Conf: filepath.Join(opt.RunDir, "rndc.conf")}
	a.conv = Converger{Addr: opt.DNSAddr, StateFile: opt.StateFile}
	a.peers = PeerResolver{Resolver: opt.Resolver}
	if opt.User != "" && os.Geteuid() == 0 {
		u, err := user.Lookup(opt.User)
		if err != nil {
			return nil, &UsageError{fmt.Errorf("--user: %w", err)}
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		a.chown = func(p string) error { return os.Lchown(p, uid, gid) }
	}
	return a, nil
}

// State returns the agent's status and metrics.
func (a *Agent) State() *State { return a.state }

// Role returns the agent's role.
func (a *Agent) Role() Role { return a.role }

func (a *Agent) activeConf() string { return filepath.Join(a.opt.RunDir, layout.ActiveConf) }

// checkTarget is the file named-checkconf reads: the target of the active
// link (the mounted named.conf.<role>), so errors name the file users know.
func (a *Agent) checkTarget() string {
	if t, err := os.Readlink(a.activeConf()); err == nil {
		return t
	}
	return a.activeConf()
}

func (a *Agent) config() *layout.AgentConfigDoc {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.cfg
}

// hashes tell whether the mounted files changed (TreeVersion: a laid
// ConfigMap by its version, not its content).
func (a *Agent) hashes() (cfg, zones string, err error) {
	cfg, err = TreeVersion(filepath.Dir(a.opt.ConfigFile), a.opt.KeysDir, a.opt.RNDCDir, a.dnssecDir(), a.tlsDir())
	if err != nil {
		return "", "", err
	}
	zones, err = TreeVersion(a.opt.ZonesDir)
	return cfg, zones, err
}
