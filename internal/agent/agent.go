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
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
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
	// Listen is the HTTP address for /metrics, /status, /readyz; "" uses
	// agent.json's metricsPort (default layout.DefaultMetricsPort); "off" disables.
	Listen string
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
	// HiddenPrimary: on the primary, /readyz always answers 503 (the serve
	// Service then selects only secondaries); zone readiness is still tracked.
	HiddenPrimary bool
	// Once prepares every file (link, includes, seeds, server lists), checks
	// the config and returns without starting named.
	Once bool
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

// Agent is one running agent.
type Agent struct {
	opt     Options
	log     *slog.Logger
	role    Role
	ordinal int
	state   *State
	rndc    RNDC
	conv    Converger
	peers   PeerResolver
	chown   func(string) error

	mu  sync.Mutex // guards cfg for the readiness goroutine
	cfg *layout.AgentConfigDoc

	readyKick chan struct{} // an applied change: re-check every zone now

	catchUpTimer *time.Timer // guarded by mu
	catchUpMu    sync.Mutex  // one catchUp at a time

	appliedCfg, appliedZones string // hashes named runs with
	seenCfg, seenZones       string // hashes last acted upon
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
	a := &Agent{opt: opt, log: opt.Log, ordinal: ordinal, role: RoleOf(ordinal), cfg: cfg, readyKick: make(chan struct{}, 1)}
	a.state = NewState(a.role, ordinal)
	if opt.HiddenPrimary && a.role == RolePrimary {
		a.state.Update(func(s *Status) { s.HiddenPrimary = true })
	}
	if opt.BindStats != "" {
		addr, err := ParseBindStatsAddr(opt.BindStats)
		if err != nil {
			return nil, &UsageError{err}
		}
		if addr != "" {
			bs := &BindStats{Addr: addr, Log: opt.Log}
			a.state.SetExtraMetrics(bs.Write)
		}
	}
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

func (a *Agent) hashes() (cfg, zones string, err error) {
	cfg, err = TreeHash(filepath.Dir(a.opt.ConfigFile), a.opt.KeysDir, a.opt.RNDCDir, a.dnssecDir())
	if err != nil {
		return "", "", err
	}
	zones, err = TreeHash(a.opt.ZonesDir)
	return cfg, zones, err
}

// prepare writes every file named needs from cfg: the rndc key, imported
// key includes, seeded zones and the active config link.
// At start the rndc client key is (re)written from named's key; later it
// follows only after named has accepted a change (see apply).
func (a *Agent) prepare(cfg *layout.AgentConfigDoc, start bool) error {
	for _, d := range []string{a.opt.RunDir, a.opt.DataDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("cannot create %s: %w", d, err)
		}
		if a.chown != nil {
			if err := a.chown(d); err != nil {
				return err
			}
		}
	}
	for i, d := range cfg.DataDirs {
		dir := filepath.Join(a.opt.DataDir, filepath.Clean("/"+d))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("dataDirs[%d]: cannot create %s: %w", i, dir, err)
		}
		if a.chown != nil {
			if err := a.chown(dir); err != nil {
				return err
			}
		}
	}
	namedKey := filepath.Join(a.opt.RunDir, layout.RNDCKeyFile)
	if _, err := EnsureRNDCKey(filepath.Join(a.opt.RNDCDir, layout.RNDCKeyFile), namedKey, layout.RNDCKeyName); err != nil {
		return err
	}
	if _, err := os.Stat(a.rndc.Conf); err != nil || start {
		if err := WriteRNDCClientConf(a.rndc.Conf, namedKey, a.opt.RNDCServer, a.opt.RNDCPort); err != nil {
			return err
		}
	}
	for i, k := range cfg.ImportedKeys {
		if err := a.writeImportedKey(k); err != nil {
			return fmt.Errorf("importedKeys[%d]: %w", i, err)
		}
	}
	for i, s := range cfg.SeedZones {
		copied, err := seedZone(s, a.chown)
		if err != nil {
			return fmt.Errorf("seedZones[%d]: %w", i, err)
		}
		if copied {
			a.log.Info("seeded zone file", "zone", s.Zone, "view", s.View, "dest", s.Dest)
		}
	}
	if err := a.installDNSSECKeys(cfg); err != nil {
		return err
	}
	target := cfg.SecondaryConf
	if a.role == RolePrimary {
		target = cfg.PrimaryConf
	}
	return LinkAtomic(target, a.activeConf())
}

func (a *Agent) writeImportedKey(k layout.ImportedKey) error {
	dir := filepath.Join(a.opt.KeysDir, k.Secret)
	secret, err := os.ReadFile(filepath.Join(dir, "secret"))
	if err != nil {
		return fmt.Errorf("cannot read key %q from Secret %q: %w", k.KeyName, k.Secret, err)
	}
	alg := k.Algorithm
	if b, err := os.ReadFile(filepath.Join(dir, "algorithm")); err == nil && len(trimSpace(b)) > 0 {
		alg = string(trimSpace(b))
	}
	text, err := KeyStatement(Key{Name: k.KeyName, Algorithm: alg, Secret: string(trimSpace(secret))})
	if err != nil {
		return fmt.Errorf("Secret %q: %w", k.Secret, err)
	}
	include := k.Include
	if include == "" {
		include = filepath.Join(a.opt.RunDir, "keys", k.Secret+".conf")
	}
	if _, err := WriteFileAtomic(include, []byte(text), 0o640); err != nil {
		return err
	}
	if a.chown != nil {
		return a.chown(include)
	}
	return nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\n' || b[0] == '\r' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\n' || b[len(b)-1] == '\r' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

// resolvePeers resolves the server lists and writes servers.conf when it
// changed; it reports whether it did.
func (a *Agent) resolvePeers(ctx context.Context, cfg *layout.AgentConfigDoc) (bool, error) {
	peers := a.peers.Resolve(ctx, a.role, cfg.ServerLists)
	for host, err := range a.peers.Errors {
		a.log.Debug("cannot resolve peer", "host", host, "err", err)
	}
	text, err := ServersConf(peers)
	if err != nil {
		return false, err
	}
	changed, err := WriteFileAtomic(filepath.Join(a.opt.RunDir, layout.ServersInclude), []byte(text), 0o644)
	if err != nil {
		return false, err
	}
	a.serversText = text
	a.written = peers
	if changed {
		a.peersPending = true
	}
	return changed, nil
}

// publishPeers records that named has loaded the server lists last
// written: /status shows them from now on.
func (a *Agent) publishPeers() {
	a.peersPending = false
	a.mu.Lock()
	a.applied = a.written
	a.mu.Unlock()
	ps := make([]PeerStatus, 0, len(a.written))
	for _, p := range a.written {
		st := PeerStatus{List: p.Name, IPs: []string{}}
		for _, ip := range p.IPs {
			st.IPs = append(st.IPs, ip.String())
		}
		ps = append(ps, st)
	}
	a.state.Update(func(s *Status) { s.Peers = ps })
}

// waitForPrimaries resolves until every list of the secondary role has an
// address: BIND rejects a secondary zone whose primaries list is empty.
func (a *Agent) waitForPrimaries(ctx context.Context, cfg *layout.AgentConfigDoc) error {
	deadline := time.Now().Add(a.opt.PrimaryWait)
	step := min(a.opt.ResolveInterval, time.Second)
	logged := false
	for {
		if _, err := a.resolvePeers(ctx, cfg); err != nil {
			return err
		}
		missing := MissingPeers(a.role, cfg.ServerLists, a.written)
		if len(missing) == 0 || a.role == RolePrimary {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("gave up after %s waiting for server lists %v to resolve (errors: %v); a secondary cannot start with an empty primaries list", a.opt.PrimaryWait, missing, a.peers.Errors)
		}
		if !logged {
			a.log.Info("waiting for the primary to resolve before starting named", "lists", missing, "timeout", a.opt.PrimaryWait)
			logged = true
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(step):
		}
	}
}

// fail records an error in status, metrics and the log.
func (a *Agent) fail(stage string, err error) {
	es := &ErrorStatus{Message: err.Error(), Time: time.Now().UTC()}
	var ce *CheckError
	if errors.As(err, &ce) {
		es.File, es.Line = ce.File, ce.Line
	}
	a.state.Update(func(s *Status) { s.LastError = es })
	a.state.Inc(fmt.Sprintf("bindfn_agent_reload_failures_total{stage=%q}", stage), 1)
	a.state.Set("bindfn_agent_config_error", 1)
	a.log.Error("change not applied; named keeps serving its current config", "stage", stage, "err", err, "file", es.File, "line", es.Line)
}

// apply checks the active config and makes named load it: `rndc reconfig`
// for config changes, `rndc reload` when zone files changed too.
func (a *Agent) apply(ctx context.Context, reload bool, cfgHash, zonesHash string) bool {
	if err := CheckConf(ctx, a.opt.NamedCheckconf, a.checkTarget()); err != nil {
		a.fail("checkconf", err)
		return false
	}
	cmd, kind := "reconfig", "reconfig"
	if reload {
		cmd, kind = "reload", "reload"
	}
	start := time.Now()
	if _, err := a.rndc.Run(ctx, cmd); err != nil {
		// named refuses a config it cannot load and keeps the old one; the
		// files may have changed since the check, so locate the problem again.
		if cerr := CheckConf(ctx, a.opt.NamedCheckconf, a.checkTarget()); cerr != nil {
			a.fail("checkconf", cerr)
		} else {
			a.fail("rndc", err)
		}
		return false
	}
	// named took the (possibly new) rndc key in: the client follows.
	if err := WriteRNDCClientConf(a.rndc.Conf, filepath.Join(a.opt.RunDir, layout.RNDCKeyFile), a.opt.RNDCServer, a.opt.RNDCPort); err != nil {
		a.log.Warn("cannot refresh rndc client key", "err", err)
	}
	// named read servers.conf as written: its NOTIFYs follow these lists.
	a.publishPeers()
	a.kickReadiness()
	if a.role != RolePrimary {
		a.scheduleCatchUp(ctx)
	}
	now := time.Now().UTC()
	a.appliedCfg, a.appliedZones = cfgHash, zonesHash
	a.state.Inc(fmt.Sprintf("bindfn_agent_reloads_total{kind=%q}", kind), 1)
	a.state.Set("bindfn_agent_config_error", 0)
	a.state.Set("bindfn_agent_last_apply_timestamp_seconds", float64(now.Unix()))
	a.state.Update(func(s *Status) {
		s.AppliedConfigHash = cfgHash[:16] + "/" + zonesHash[:16]
		s.LastApply = &now
		s.LastError = nil
	})
	a.log.Info("applied change", "rndc", cmd, "took", time.Since(start).Round(time.Millisecond))
	return true
}

// onChange handles a new hash of the mounted files.
func (a *Agent) onChange(ctx context.Context, cfgHash, zonesHash string) bool {
	a.seenCfg, a.seenZones = cfgHash, zonesHash
	cfgChanged := cfgHash != a.appliedCfg
	if cfgChanged {
		cfg, err := LoadConfig(a.opt.ConfigFile)
		if err != nil {
			a.fail("prepare", err)
			return false
		}
		if err := a.prepare(cfg, false); err != nil {
			a.fail("prepare", err)
			return false
		}
		if _, err := a.resolvePeers(ctx, cfg); err != nil {
			a.fail("prepare", err)
			return false
		}
		a.mu.Lock()
		a.cfg = cfg
		a.mu.Unlock()
	} else if err := a.refreshSeeds(a.config()); err != nil {
		a.fail("prepare", err)
		return false
	}
	a.log.Info("mounted files changed", "config", cfgChanged, "zones", zonesHash != a.appliedZones)
	return a.apply(ctx, zonesHash != a.appliedZones, cfgHash, zonesHash)
}

// Run prepares, starts named and supervises it until ctx ends or named
// exits. With Options.Once it returns after preparing.
func (a *Agent) Run(ctx context.Context) error {
	cfg := a.config()
	cfgHash, zonesHash, err := a.hashes()
	if err != nil {
		return &UsageError{err}
	}
	if err := a.prepare(cfg, true); err != nil {
		return &UsageError{err}
	}
	if err := a.waitForPrimaries(ctx, cfg); err != nil {
		return err
	}
	if err := CheckConf(ctx, a.opt.NamedCheckconf, a.checkTarget()); err != nil {
		a.fail("checkconf", err)
		return err
	}
	a.appliedCfg, a.appliedZones = cfgHash, zonesHash
	a.seenCfg, a.seenZones = cfgHash, zonesHash
	a.publishPeers() // named starts with the lists just written
	a.state.Update(func(s *Status) { s.AppliedConfigHash = cfgHash[:16] + "/" + zonesHash[:16] })
	a.log.Info("prepared", "role", a.role, "ordinal", a.ordinal, "conf", a.activeConf())
	if a.opt.Once {
		return nil
	}

	sigs := a.opt.Signals
	if sigs == nil {
		ch := make(chan os.Signal, 4)
		signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
		defer signal.Stop(ch)
		sigs = ch
	}

	args := []string{"-g", "-c", a.activeConf()}
	if a.chown != nil {
		args = append(args, "-u", a.opt.User)
	}
	args = append(args, a.opt.NamedArgs...)
	named := exec.Command(a.opt.Named, args...)
	named.Stdout, named.Stderr = a.opt.Output, a.opt.Output
	if err := named.Start(); err != nil {
		return fmt.Errorf("cannot start named: %w", err)
	}
	a.log.Info("started named", "pid", named.Process.Pid, "args", args)
	a.state.Set("bindfn_agent_named_up", 1)
	a.state.Update(func(s *Status) { s.NamedPID = named.Process.Pid })
	exited := make(chan error, 1)
	go func() { exited <- named.Wait() }()

	var srv *http.Server
	if a.opt.Listen != "off" {
		ln, err := net.Listen("tcp", a.opt.Listen)
		if err != nil {
			_ = named.Process.Signal(syscall.SIGTERM)
			<-exited
			return &UsageError{fmt.Errorf("--listen: %w", err)}
		}
		srv = &http.Server{Handler: a.state.Handler(), ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
		a.log.Info("serving /metrics /status /readyz", "addr", ln.Addr().String())
		if a.opt.Started != nil {
			a.opt.Started(ln.Addr().String())
		}
	} else if a.opt.Started != nil {
		a.opt.Started("")
	}

	readyCtx, stopReady := context.WithCancel(ctx)
	defer stopReady()
	go a.readiness(readyCtx)

	poll := time.NewTicker(a.opt.PollInterval)
	defer poll.Stop()
	resolve := time.NewTicker(a.opt.ResolveInterval)
	defer resolve.Stop()
	convergeDue := time.Now()
	started := time.Now()
	stopping := false
	stop := func(sig os.Signal) {
		stopping = true
		a.log.Info("stopping named", "signal", sig)
		_ = named.Process.Signal(sig)
	}
	done := ctx.Done()
	for {
		select {
		case <-done:
			done = nil
			stop(syscall.SIGTERM)
			go func() { // named ignoring SIGTERM is killed after a grace period
				time.Sleep(20 * time.Second)
				_ = named.Process.Kill()
			}()
		case sig := <-sigs:
			if sig == syscall.SIGHUP {
				_ = named.Process.Signal(sig)
				continue
			}
			stop(sig)
		case err := <-exited:
			a.state.Set("bindfn_agent_named_up", 0)
			stopReady()
			code := named.ProcessState.ExitCode()
			if stopping {
				a.log.Info("named stopped", "status", named.ProcessState.String())
				if ctx.Err() != nil || code == 0 {
					return nil
				}
				return &NamedExitError{Code: code, Err: err}
			}
			if code <= 0 {
				code = 1
			}
			a.log.Error("named exited unexpectedly", "status", named.ProcessState.String())
			return &NamedExitError{Code: code, Err: fmt.Errorf("unexpected exit: %s", named.ProcessState)}
		case <-poll.C:
			if stopping {
				continue
			}
			c, z, err := a.hashes()
			if err != nil {
				a.log.Warn("cannot hash mounted files", "err", err)
				continue
			}
			if c != a.seenCfg || z != a.seenZones {
				if a.onChange(ctx, c, z) {
					convergeDue = time.Now()
				}
			}
			if a.role == RolePrimary && !time.Now().Before(convergeDue) &&
				(a.state.Snapshot().Ready || time.Since(started) > 30*time.Second) {
				if a.converge(ctx) {
					convergeDue = time.Now().Add(a.opt.ConvergeInterval)
				} else {
					convergeDue = time.Now().Add(min(2*time.Second, a.opt.ConvergeInterval))
				}
			}
		case <-resolve.C:
			if stopping {
				continue
			}
			changed, err := a.resolvePeers(ctx, a.config())
			if err != nil {
				a.log.Warn("cannot write server lists", "err", err)
				continue
			}
			if changed {
				a.state.Inc("bindfn_agent_peer_changes_total", 1)
				a.log.Info("peer addresses changed", "servers", a.serversText)
			}
			// A change named has not loaded yet (this one, or one whose
			// apply failed) is applied now; it is retried every interval.
			if a.peersPending {
				before := a.applied
				if a.apply(ctx, a.seenZones != a.appliedZones, a.seenCfg, a.seenZones) {
					a.notifyNewPeers(ctx, before)
				}
			}
		}
	}
}

// converge runs one dynamic-zone pass; it reports success.
func (a *Agent) converge(ctx context.Context) bool {
	zones := a.config().DynamicZones
	if len(zones) == 0 {
		return true
	}
	start := time.Now()
	res, err := a.conv.Converge(ctx, zones)
	d := time.Since(start)
	c := &Convergence{Updated: res.Updated, Removed: res.Removed, Unchanged: res.Unchanged, Seconds: d.Seconds(), Time: time.Now().UTC()}
	result := "ok"
	if err != nil {
		result = "error"
		c.Error = err.Error()
		a.log.Warn("dynamic zones not converged", "err", err)
	} else if res.Updated+res.Removed > 0 {
		a.log.Info("dynamic zones converged", "updated", res.Updated, "removed", res.Removed, "took", d.Round(time.Millisecond))
	}
	a.state.Inc(fmt.Sprintf("bindfn_agent_update_convergence_total{result=%q}", result), 1)
	a.state.Inc(`bindfn_agent_update_rrsets_total{op="replace"}`, float64(res.Updated))
	a.state.Inc(`bindfn_agent_update_rrsets_total{op="delete"}`, float64(res.Removed))
	a.state.Set("bindfn_agent_update_convergence_last_seconds", d.Seconds())
	a.state.Update(func(s *Status) { s.LastConvergence = c })
	return err == nil
}

// readiness tracks whether every zone of the role is loaded. Until all are,
// it re-checks the zones not yet loaded every ReadyInterval; then it sweeps
// every zone every ReadyRecheck. An applied change (new zones, a reload)
// starts a new sweep at once.
func (a *Agent) readiness(ctx context.Context) {
	var pending []layout.ZoneRef // zones to check on the fast cadence
	full := true
	var keyErr string
	for {
		cfg := a.config()
		zones := cfg.SecondaryZones
		if a.role == RolePrimary {
			zones = cfg.PrimaryZones
		}
		keys, err := LoadViewKeys(cfg.Views)
		if msg := fmt.Sprint(err); err != nil && msg != keyErr {
			a.log.Warn("cannot load view keys for readiness; those views are checked with rndc", "err", err)
			keyErr = msg
		} else if err == nil {
			keyErr = ""
		}
		chk := ZoneChecker{Addr: a.opt.DNSAddr, RNDC: a.rndc, Keys: keys}
		if full {
			pending = zones
		}
		var still []layout.ZoneRef
		var unready []string
		for _, ref := range pending {
			if err := chk.Check(ctx, ref); err != nil {
				still = append(still, ref)
				unready = append(unready, zoneID(ref))
			}
		}
		if ctx.Err() != nil {
			return
		}
		pending, full = still, false
		ready := len(unready) == 0
		a.state.Update(func(s *Status) { s.Ready, s.Unready = ready, unready })
		v := 0.0
		if ready {
			v = 1
		}
		a.state.Set("bindfn_agent_ready", v)
		wait := a.opt.ReadyInterval
		if ready {
			wait = a.opt.ReadyRecheck
			full = true
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-a.readyKick:
			full = true
		case <-t.C:
		}
		t.Stop()
	}
}

// catchUp runs on a secondary right after an applied change: every zone
// whose serial is behind the primary's gets `rndc refresh`. Every pod
// applies the same swap at about the same time; when the primary's NOTIFY
// for the changed zone arrives just before the secondary's own reload, the
// reload cancels the refresh it started ("refresh: failure trying primary
// ...: operation canceled") and nothing retries it before the retry/refresh
// timers (60/300 s). In that case the primary already serves the new
// serial, so comparing serials right after the reload finds the zone.
// Only zones found behind touch the control channel.
func (a *Agent) catchUp(ctx context.Context) {
	if a.role == RolePrimary {
		return
	}
	cfg := a.config()
	keys, _ := LoadViewKeys(cfg.Views)
	a.mu.Lock()
	applied := a.applied
	a.mu.Unlock()
	primaries := map[string]string{} // view -> primary address
	for _, v := range cfg.Views {
		for _, p := range applied {
			if p.Name == layout.PrimaryListName(v.View) && len(p.IPs) > 0 {
				port := p.Port
				if port == 0 {
					port = 53
				}
				primaries[v.View] = net.JoinHostPort(p.IPs[0].String(), strconv.Itoa(port))
			}
		}
	}
	for _, z := range cfg.SecondaryZones {
		k, ok := keys[z.View]
		paddr, pok := primaries[z.View]
		if !ok || !pok {
			continue
		}
		var lk *Key
		if z.View != "" {
			lk = &k
		}
		local, err := SOASerial(ctx, a.opt.DNSAddr, z.Zone, lk, 2*time.Second)
		if err != nil {
			continue // not loaded (readiness reports it) or not ours
		}
		remote, err := SOASerial(ctx, paddr, z.Zone, &k, 2*time.Second)
		if err != nil || !serialBehind(local, remote) {
			continue
		}
		args := []string{"refresh", z.Zone}
		if z.View != "" {
			args = append(args, "IN", z.View)
		}
		a.log.Info("zone behind the primary after a change; refreshing", "zone", zoneID(z), "serial", local, "primary", remote)
		if _, err := a.rndc.Run(ctx, args...); err != nil {
			a.log.Warn("cannot refresh zone", "zone", zoneID(z), "err", err)
		}
	}
}

// scheduleCatchUp runs catchUp once, CatchUpDelay after the latest change.
func (a *Agent) scheduleCatchUp(ctx context.Context) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.catchUpTimer != nil {
		a.catchUpTimer.Stop()
	}
	a.catchUpTimer = time.AfterFunc(a.opt.CatchUpDelay, func() {
		a.catchUpMu.Lock()
		defer a.catchUpMu.Unlock()
		if ctx.Err() == nil {
			a.catchUp(ctx)
		}
	})
}

// kickReadiness makes the readiness loop sweep every zone now.
func (a *Agent) kickReadiness() {
	select {
	case a.readyKick <- struct{}{}:
	default:
	}
}

// notifyNewPeers sends a signed NOTIFY for every zone of the primary to each
// secondary address the applied lists gained over before. BIND re-points
// also-notify on reconfig but does not re-send NOTIFYs: without this, a
// secondary that came back on a new address would miss every update made
// between its own start-up refresh and the primary's reconfig until the
// next update of that zone or its refresh timer (300 s).
func (a *Agent) notifyNewPeers(ctx context.Context, before []Peers) {
	if a.role != RolePrimary {
		return
	}
	cfg := a.config()
	old := map[string]bool{}
	for _, p := range before {
		for _, ip := range p.IPs {
			old[p.Name+"/"+ip.String()] = true
		}
	}
	keys, err := LoadViewKeys(cfg.Views)
	if err != nil {
		a.log.Warn("cannot load view keys to notify moved secondaries", "err", err)
	}
	lists := map[string]string{} // secondaries list name -> view
	for _, v := range cfg.Views {
		lists[layout.SecondariesListName(v.View)] = v.View
	}
	sent, failed := 0, 0
	for _, p := range a.applied {
		view, ok := lists[p.Name]
		if !ok {
			continue
		}
		k, ok := keys[view]
		if !ok {
			continue
		}
		for _, ip := range p.IPs {
			if old[p.Name+"/"+ip.String()] {
				continue
			}
			port := p.Port
			if port == 0 {
				port = 53
			}
			addr := net.JoinHostPort(ip.String(), strconv.Itoa(port))
			for _, z := range cfg.PrimaryZones {
				if z.View != view {
					continue
				}
				if err := SendNotify(ctx, addr, z.Zone, k, 2*time.Second); err != nil {
					failed++
					a.log.Debug("notify to a new secondary failed", "addr", addr, "zone", zoneID(z), "err", err)
					continue
				}
				sent++
			}
		}
	}
	if sent+failed > 0 {
		a.log.Info("notified new secondaries", "sent", sent, "failed", failed)
	}
}
