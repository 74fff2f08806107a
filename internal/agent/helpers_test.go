package agent

import (
	"github.com/prometheus/client_golang/prometheus"
	promtest "github.com/prometheus/client_golang/prometheus/testutil"

	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/agent/kubeletdir"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// syncBuffer collects logs from goroutines; dumped when a test fails.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// fakeResolver answers from a map, changeable while the agent runs.
type fakeResolver struct {
	mu    sync.Mutex
	hosts map[string][]string
	asked map[string]int // lookups per host, answered or not
}

// lookups is how often host has been looked up.
func (f *fakeResolver) lookups(host string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.asked[host]
}

func (f *fakeResolver) set(host string, ips ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.hosts == nil {
		f.hosts = map[string][]string{}
	}
	f.hosts[host] = ips
}

func (f *fakeResolver) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.asked == nil {
		f.asked = map[string]int{}
	}
	f.asked[host]++
	ips, ok := f.hosts[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	var out []net.IPAddr
	for _, s := range ips {
		out = append(out, net.IPAddr{IP: net.ParseIP(s)})
	}
	return out, nil
}

// lab is one pod's file system in temporary directories, laid out like the
// pod's mounts (kubelet-style ConfigMap and Secret volumes).
type lab struct {
	t                                                   *testing.T
	root, configDir, zonesDir, keysDir, runDir, dataDir string
	port, rndcPort, statsPort                           int
	secret                                              string
	logs                                                *syncBuffer
}

func newLab(t *testing.T) *lab {
	t.Helper()
	root := t.TempDir()
	l := &lab{
		t: t, root: root,
		configDir: filepath.Join(root, "config"),
		zonesDir:  filepath.Join(root, "zones"),
		keysDir:   filepath.Join(root, "keys"),
		runDir:    filepath.Join(root, "run"),
		dataDir:   filepath.Join(root, "data"),
		port:      bindtools.FreePort(t),
		rndcPort:  bindtools.FreePort(t),
		statsPort: bindtools.FreePort(t),
		secret:    base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef")),
		logs:      &syncBuffer{},
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("agent and named output:\n%s", l.logs.String())
		}
	})
	return l
}

func (l *lab) addr() string { return fmt.Sprintf("127.0.0.1:%d", l.port) }

// fixture reads testdata/bind/<name> and fills its placeholders.
func (l *lab) fixture(name string, vars map[string]string) []byte {
	l.t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "bind", name))
	if err != nil {
		l.t.Fatal(err)
	}
	all := map[string]string{
		"@DATA@": l.dataDir, "@RUN@": l.runDir, "@ZONES@": l.zonesDir, "@KEYS@": l.keysDir,
		"@PORT@": strconv.Itoa(l.port), "@RNDCPORT@": strconv.Itoa(l.rndcPort), "@EXTRA@": "",
		"@STATSPORT@": strconv.Itoa(l.statsPort),
	}
	for k, v := range vars {
		all[k] = v
	}
	s := string(b)
	for k, v := range all {
		s = strings.ReplaceAll(s, k, v)
	}
	return []byte(s)
}

// writeConfig swaps the config volume the kubelet way.
func (l *lab) writeConfig(primary, secondary []byte, doc layout.AgentConfigDoc) {
	l.t.Helper()
	js, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		l.t.Fatal(err)
	}
	if err := kubeletdir.Write(l.configDir, map[string][]byte{
		layout.NamedConfPrimary: primary, layout.NamedConfSecondary: secondary, layout.AgentConfig: js,
	}); err != nil {
		l.t.Fatal(err)
	}
}

func (l *lab) writeZones(files map[string][]byte) {
	l.t.Helper()
	if err := kubeletdir.Write(filepath.Join(l.zonesDir, "0"), files); err != nil {
		l.t.Fatal(err)
	}
}

func (l *lab) writeKey(secret, value string) { l.writeKeyAlg(secret, value, "hmac-sha256") }

func (l *lab) writeKeyAlg(secret, value, alg string) {
	l.t.Helper()
	if err := kubeletdir.Write(filepath.Join(l.keysDir, secret), map[string][]byte{"secret": []byte(value), "algorithm": []byte(alg)}); err != nil {
		l.t.Fatal(err)
	}
}

// options returns agent options pointing at the lab.
func (l *lab) options(ordinal int, r Resolver) Options {
	o := DefaultOptions()
	o.ConfigFile = filepath.Join(l.configDir, layout.AgentConfig)
	o.Ordinal = ordinal
	o.RunDir, o.DataDir, o.ZonesDir, o.KeysDir = l.runDir, l.dataDir, l.zonesDir, l.keysDir
	o.RNDCDir = filepath.Join(l.root, "no-rndc-secret")
	o.Listen = "127.0.0.1:0"
	o.DNSAddr = l.addr()
	o.RNDCPort = l.rndcPort
	o.BindStats = fmt.Sprintf("127.0.0.1:%d", l.statsPort)
	o.ResolveInterval = 200 * time.Millisecond
	o.PollInterval = 100 * time.Millisecond
	o.ConvergeInterval = 5 * time.Second
	o.ReadyInterval = 100 * time.Millisecond
	o.ReadyRecheck = 300 * time.Millisecond
	o.PrimaryWait = 20 * time.Second
	o.Resolver = r
	// named, named-checkconf and rndc of the release under test
	// (bindtools.Current: 9.20 unless BINDFN_BIND=9.18).
	rel := bindtools.Current(l.t)
	o.Named = rel.Script(l.t, l.root, "named")
	o.NamedCheckconf = rel.Script(l.t, l.root, "named-checkconf")
	o.RNDC = rel.Script(l.t, l.root, "rndc")
	o.Log = slog.New(slog.NewTextHandler(l.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	o.Output = l.logs
	return o
}

// run starts the agent; the returned function stops it and returns Run's error.
func (l *lab) run(o Options) (*Agent, func() error) {
	l.t.Helper()
	a, err := New(o)
	if err != nil {
		l.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	var once sync.Once
	var runErr error
	stop := func() error {
		once.Do(func() {
			cancel()
			select {
			case runErr = <-done:
			case <-time.After(bindtools.Hang):
				runErr = errors.New("agent did not stop")
			}
		})
		return runErr
	}
	l.t.Cleanup(func() { _ = stop() })
	return a, stop
}

// waitFor polls cond until it holds or timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for time.Since(start) < timeout {
		if cond() {
			return time.Since(start)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("timed out after %s waiting for %s", timeout, what)
	return 0
}

// query asks addr for name/type without recursion.
func query(addr, name string, typ uint16) (*dns.Msg, error) {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(name), typ)
	m.RecursionDesired = false
	c := &dns.Client{Net: "udp", Timeout: time.Second}
	r, _, err := c.Exchange(m, addr)
	return r, err
}

// answers returns the rdata of name/type at addr as strings, sorted by the server.
func answers(addr, name string, typ uint16) []string {
	r, err := query(addr, name, typ)
	if err != nil || r.Rcode != dns.RcodeSuccess {
		return nil
	}
	var out []string
	for _, rr := range r.Answer {
		if rr.Header().Rrtype == typ {
			out = append(out, strings.TrimPrefix(rr.String(), rr.Header().String()))
		}
	}
	return out
}

// value is a metric's current value.
func value(c prometheus.Collector) float64 { return promtest.ToFloat64(c) }

// axfrZone transfers zone from addr signed with k and returns its records
// as text, the SOA left out, sorted.
func axfrZone(t *testing.T, addr, zone string, k Key) []string {
	t.Helper()
	p, err := newTSIG(k)
	if err != nil {
		t.Fatal(err)
	}
	m := new(dns.Msg)
	m.SetAxfr(dns.Fqdn(zone))
	p.sign(m)
	tr := &dns.Transfer{TsigProvider: p}
	ch, err := tr.In(m, addr)
	if err != nil {
		t.Fatalf("AXFR %s: %v", zone, err)
	}
	var out []string
	for env := range ch {
		if env.Error != nil {
			t.Fatalf("AXFR %s: %v", zone, env.Error)
		}
		for _, rr := range env.RR {
			if rr.Header().Rrtype != dns.TypeSOA {
				out = append(out, strings.ReplaceAll(rr.String(), "\t", " "))
			}
		}
	}
	slices.Sort(out)
	return out
}

// pod0Lab is the set-up of the real-named tests of pod 0: a lab whose
// peer (pod 1) resolves, with the update key and pod 1's zone files
// written. The test writes its configuration and starts the agent.
func pod0Lab(t *testing.T) (*lab, *fakeResolver) {
	t.Helper()
	l := newLab(t)
	res := &fakeResolver{}
	res.set("lab-1.lab-headless", "127.0.0.2")
	l.writeKey("upd-tsig", l.secret)
	l.writeZones(l.zoneFiles(1, "192.0.2.10"))
	return l, res
}

// startConverging starts pod 0's agent converging its dynamic zones every
// 100 ms and waits until it is ready.
func (l *lab) startConverging(res Resolver) (*Agent, func() error) {
	l.t.Helper()
	o := l.options(0, res)
	o.ConvergeInterval = 100 * time.Millisecond
	a, stop := l.run(o)
	waitFor(l.t, bindtools.Hang, "primary ready", func() bool { return a.State().Snapshot().Ready })
	return a, stop
}
