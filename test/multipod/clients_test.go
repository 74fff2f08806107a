package multipod

import (
	"encoding/gob"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// The clients people point at a BIND cluster (docs/design.md#clients), run for real
// against the rendered example: external-dns's RFC 2136 provider, nsupdate
// with the rendered key.conf, dig AXFR with a transfer key.

const (
	appsZone = "apps.example.com"
	// edOwner is external-dns's --txt-owner-id in the lab.
	edOwner = "bind-fn-lab"
)

// edEndpoint is external-dns's endpoint.Endpoint as its connector source
// decodes it (encoding/gob matches fields by name): the test serves these
// to the real binary, which cannot be imported (its module needs Go 1.27).
type edEndpoint struct {
	DNSName    string
	Targets    []string
	RecordType string
	RecordTTL  int64
}

// connector is the TCP server external-dns's --source=connector reads:
// each connection gets the current endpoints, gob-encoded.
type connector struct {
	ln  net.Listener
	mu  sync.Mutex
	eps []edEndpoint
}

func startConnector(t *testing.T) *connector {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &connector{ln: ln}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			c.mu.Lock()
			eps := append([]edEndpoint(nil), c.eps...)
			c.mu.Unlock()
			_ = gob.NewEncoder(conn).Encode(eps)
			conn.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return c
}

func (c *connector) set(eps []edEndpoint) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.eps = eps
}

// rr is one RRset a pass expects (values nil: the name must not exist).
type rr struct {
	name  string
	qtype uint16
	want  []string
}

func (r rr) String() string {
	if r.want == nil {
		return fmt.Sprintf("%s %s absent", r.name, dns.TypeToString[r.qtype])
	}
	return fmt.Sprintf("%s %s %v", r.name, dns.TypeToString[r.qtype], r.want)
}

// served reports whether server answers every rr as expected.
func (p *tcpPoller) served(server string, rrs []rr) error {
	for _, r := range rrs {
		m := new(dns.Msg)
		m.SetQuestion(dns.Fqdn(r.name), r.qtype)
		m.RecursionDesired = false
		resp, err := p.exchange(server, m)
		if err != nil {
			return fmt.Errorf("%s: %v", r, err)
		}
		if r.want == nil {
			if resp.Rcode != dns.RcodeNameError {
				return fmt.Errorf("%s: got %s %v", r, dns.RcodeToString[resp.Rcode], resp.Answer)
			}
			continue
		}
		got := answers(resp, r.qtype)
		if resp.Rcode != dns.RcodeSuccess || strings.Join(sorted(got), "|") != strings.Join(sorted(r.want), "|") {
			return fmt.Errorf("%s: got %s %v", r, dns.RcodeToString[resp.Rcode], got)
		}
	}
	return nil
}

// dnsRecordRRsets are what the example's DNSRecords (and the BindZone) put
// in the dynamic zone: external-dns must leave them alone.
func dnsRecordRRsets() []rr {
	return []rr{
		{"shop." + appsZone, dns.TypeA, []string{"198.51.100.120", "198.51.100.121"}},
		{"api." + appsZone, dns.TypeCNAME, []string{"shop.apps.example.com."}},
		{appsZone, dns.TypeTXT, []string{`"managed by external-dns and bind-fn"`}},
		{appsZone, dns.TypeNS, []string{"ns1.example.com."}},
	}
}

// edPass is one external-dns run: the endpoints its source serves, and
// what every pod must serve afterwards.
type edPass struct {
	name   string
	source []edEndpoint
	expect []rr
}

func externalDNSPasses() []edPass {
	web := func(ips ...string) edEndpoint {
		return edEndpoint{DNSName: "web." + appsZone, RecordType: "A", Targets: ips, RecordTTL: 120}
	}
	kept := edEndpoint{DNSName: "kept." + appsZone, RecordType: "A", Targets: []string{"198.51.100.205"}, RecordTTL: 300}
	v6 := edEndpoint{DNSName: "v6." + appsZone, RecordType: "AAAA", Targets: []string{"2001:db8::201"}}
	alias := func(to string) edEndpoint {
		return edEndpoint{DNSName: "alias." + appsZone, RecordType: "CNAME", Targets: []string{to}}
	}
	note := edEndpoint{DNSName: "note." + appsZone, RecordType: "TXT", Targets: []string{"external-dns-lab"}}
	return []edPass{
		{"create", []edEndpoint{web("198.51.100.201", "198.51.100.202"), kept, v6, alias("web." + appsZone), note}, []rr{
			{"web." + appsZone, dns.TypeA, []string{"198.51.100.201", "198.51.100.202"}},
			{"kept." + appsZone, dns.TypeA, []string{"198.51.100.205"}},
			{"v6." + appsZone, dns.TypeAAAA, []string{"2001:db8::201"}},
			{"alias." + appsZone, dns.TypeCNAME, []string{"web.apps.example.com."}},
			{"note." + appsZone, dns.TypeTXT, []string{`"external-dns-lab"`}},
		}},
		{"change", []edEndpoint{web("198.51.100.203"), kept, v6, alias("shop." + appsZone), note}, []rr{
			{"web." + appsZone, dns.TypeA, []string{"198.51.100.203"}},
			{"kept." + appsZone, dns.TypeA, []string{"198.51.100.205"}},
			{"alias." + appsZone, dns.TypeCNAME, []string{"shop.apps.example.com."}},
		}},
		{"delete", []edEndpoint{kept}, []rr{
			{"web." + appsZone, dns.TypeA, nil},
			{"v6." + appsZone, dns.TypeAAAA, nil},
			{"alias." + appsZone, dns.TypeCNAME, nil},
			{"note." + appsZone, dns.TypeTXT, nil},
			{"kept." + appsZone, dns.TypeA, []string{"198.51.100.205"}},
		}},
	}
}

// externalDNSArgs are the flags README.md documents, with the key from the
// rendered Secret and --rfc2136-host the primary Service.
func externalDNSArgs(t testing.TB, c *Cluster, connector string) []string {
	return []string{
		"--once", "--source=connector", "--connector-source-server=" + connector,
		"--provider=rfc2136", "--registry=txt", "--txt-owner-id=" + edOwner, "--policy=sync",
		"--domain-filter=" + appsZone,
		// TXT too (the default is A, AAAA and CNAME).
		"--managed-record-types=A", "--managed-record-types=AAAA", "--managed-record-types=CNAME", "--managed-record-types=TXT",
		"--rfc2136-host=" + c.PrimarySvc, "--rfc2136-port=53", "--rfc2136-zone=" + appsZone,
		"--rfc2136-tsig-keyname=" + c.secretValue(t, "externaldns-key-tsig", "keyName"),
		"--rfc2136-tsig-secret=" + c.secretValue(t, "externaldns-key-tsig", "secret"),
		"--rfc2136-tsig-secret-alg=" + c.secretValue(t, "externaldns-key-tsig", "algorithm"),
		"--rfc2136-tsig-axfr",
		"--metrics-address=127.0.0.1:0", "--log-level=debug",
	}
}

// edRun is one external-dns run and, per pod, how long after its start the
// pod served the pass's expected state.
type edRun struct {
	pass    string
	took    time.Duration // the external-dns process, start to exit
	visible map[string]time.Duration
}

// runExternalDNS runs the real binary once and polls every pod (1 ms) until
// it serves want, from the moment external-dns starts.
func runExternalDNS(t *testing.T, bin string, c *Cluster, conn *connector, pass edPass) edRun {
	t.Helper()
	conn.set(pass.source)
	want := append(append([]rr(nil), pass.expect...), dnsRecordRRsets()...)
	cmd := exec.Command(bin, externalDNSArgs(t, c, conn.ln.Addr().String())...)
	var out syncLog
	cmd.Stdout, cmd.Stderr = &out, &out
	res := edRun{pass: pass.name, visible: map[string]time.Duration{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	stop := make(chan struct{})
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for _, p := range c.Pods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var pl tcpPoller
			defer pl.close()
			for {
				if pl.served(p.Net.IP, want) == nil {
					mu.Lock()
					res.visible[p.Name] = time.Since(t0)
					mu.Unlock()
					return
				}
				select {
				case <-stop:
					return
				case <-time.After(time.Millisecond):
				}
			}
		}()
	}
	err := cmd.Wait()
	res.took = time.Since(t0)
	if err != nil {
		close(stop)
		wg.Wait()
		t.Fatalf("external-dns (%s pass) failed: %v\n%s", pass.name, err, out.tail(40))
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(hang):
		close(stop)
		<-done
	}
	var pl tcpPoller
	defer pl.close()
	for _, p := range c.Pods {
		if _, ok := res.visible[p.Name]; !ok {
			t.Errorf("%s pass: %s does not serve the expected state %s after external-dns exited: %v\nexternal-dns log:\n%s", pass.name, p.Name, hang, pl.served(p.Net.IP, want), out.tail(30))
		}
	}
	if !strings.Contains(out.String(), "rfc2136") {
		t.Errorf("%s pass: external-dns did not log its RFC 2136 provider:\n%s", pass.name, out.tail(20))
	}
	return res
}

// ownershipTXT lists the TXT registry's records in the zone (by AXFR with
// the update key, as external-dns itself reads them).
func ownershipTXT(t *testing.T, c *Cluster) []string {
	t.Helper()
	key := c.tsig(t, "externaldns-key-tsig")
	recs, err := axfr(c.PrimarySvc, appsZone, &key)
	if err != nil {
		t.Fatalf("AXFR %s with the update key: %v", appsZone, err)
	}
	var out []string
	for _, r := range recs {
		if txt, ok := r.(*dns.TXT); ok && strings.Contains(strings.Join(txt.Txt, ""), "heritage=external-dns") {
			out = append(out, r.Header().Name)
		}
	}
	sort.Strings(out)
	return out
}

// axfr transfers zone from server (from the lab client address).
func axfr(server, zone string, key *TSIG) ([]dns.RR, error) {
	m := new(dns.Msg)
	m.SetAxfr(dns.Fqdn(zone))
	tr := &dns.Transfer{Conn: nil, DialTimeout: 2 * time.Second, ReadTimeout: 5 * time.Second}
	if key != nil {
		m.SetTsig(dns.Fqdn(key.Name), dns.HmacSHA256, 300, time.Now().Unix())
		tr.TsigSecret = map[string]string{dns.Fqdn(key.Name): key.Secret}
	}
	ch, err := tr.In(m, net.JoinHostPort(server, "53"))
	if err != nil {
		return nil, err
	}
	var out []dns.RR
	for env := range ch {
		if env.Error != nil {
			return nil, env.Error
		}
		out = append(out, env.RR...)
	}
	return out, nil
}

// zoneSerial is the zone's serial on server.
func zoneSerial(server, zone string) (uint32, error) {
	r, err := query(server, zone, dns.TypeSOA, q{tcp: true})
	if err != nil {
		return 0, err
	}
	for _, a := range r.Answer {
		if s, ok := a.(*dns.SOA); ok {
			return s.Serial, nil
		}
	}
	return 0, fmt.Errorf("no SOA for %s in %v", zone, r.Answer)
}

// scenarioExternalDNS runs the real external-dns against the example as
// rendered: create, change and delete passes, each record served (or gone)
// on every pod, the DNSRecords' records untouched, everything kept across a
// restart of the primary with its data volume. It returns the record it
// leaves (for the DNSRecord scenario to check the agent leaves it alone)
// and the per-pod propagation report.
func scenarioExternalDNS(t *testing.T, c *Cluster, bin string) (kept string, report string) {
	conn := startConnector(t)
	var runs []edRun
	for _, pass := range externalDNSPasses() {
		r := runExternalDNS(t, bin, c, conn, pass)
		runs = append(runs, r)
		txt := ownershipTXT(t, c)
		t.Logf("%s pass: external-dns ran %v; ownership TXT records now: %v", pass.name, r.took.Round(time.Millisecond), txt)
		for _, name := range txt {
			if pass.name == "delete" && !strings.Contains(name, "kept") {
				t.Errorf("delete pass: ownership record %s of a deleted name is left", name)
			}
		}
		if len(txt) == 0 {
			t.Errorf("%s pass: no ownership TXT record (--registry=txt) in the zone", pass.name)
		}
	}

	// A series of change passes (one A record flipped each time) for the
	// per-pod propagation numbers, then the delete pass's state again.
	passes := externalDNSPasses()
	keptEP := passes[2].source[0]
	var series []edRun
	for i := range edSeries {
		ip := fmt.Sprintf("198.51.100.%d", 210+i%2)
		web := edEndpoint{DNSName: "web." + appsZone, RecordType: "A", Targets: []string{ip}, RecordTTL: 120}
		series = append(series, runExternalDNS(t, bin, c, conn, edPass{name: fmt.Sprintf("series-%d", i), source: []edEndpoint{keptEP, web}, expect: []rr{
			{"web." + appsZone, dns.TypeA, []string{ip}},
			{"kept." + appsZone, dns.TypeA, []string{"198.51.100.205"}},
		}}))
	}
	runExternalDNS(t, bin, c, conn, passes[2])

	// The primary restarts on its data volume: every record stays, and a
	// further run finds nothing to change (no UPDATE, the serial stays).
	p0 := c.Pods[0]
	secPIDs := map[string][2]int{}
	for _, p := range c.Secondaries() {
		a, n := p.PIDs()
		secPIDs[p.Name] = [2]int{a, n}
	}
	p0.stop()
	p0.start()
	p0.waitReady(hang)
	final := externalDNSPasses()[2]
	want := append(append([]rr(nil), final.expect...), dnsRecordRRsets()...)
	var pl tcpPoller
	defer pl.close()
	for _, p := range c.Pods {
		if err := eventually(hang, 50*time.Millisecond, func() error { return pl.served(p.Net.IP, want) }); err != nil {
			t.Errorf("after the primary restarted: %s: %v", p.Name, err)
		}
	}
	before, err := zoneSerial(p0.Net.IP, appsZone)
	if err != nil {
		t.Fatal(err)
	}
	r := runExternalDNS(t, bin, c, conn, edPass{name: "after-restart", source: final.source, expect: final.expect})
	runs = append(runs, r)
	after, err := zoneSerial(p0.Net.IP, appsZone)
	if err != nil {
		t.Fatal(err)
	}
	if before != after {
		t.Errorf("external-dns changed the zone after the restart (serial %d → %d): it should have found everything in place", before, after)
	}
	for _, p := range c.Secondaries() {
		a, n := p.PIDs()
		if secPIDs[p.Name] != [2]int{a, n} {
			t.Errorf("%s restarted while the primary did", p.Name)
		}
	}

	var b strings.Builder
	fmt.Fprintf(&b, "%-14s %-12s", "pass", "external-dns")
	for _, p := range c.Pods {
		fmt.Fprintf(&b, " %-10s", p.Name)
	}
	b.WriteString("\n")
	for _, r := range runs {
		fmt.Fprintf(&b, "%-14s %-12v", r.pass, r.took.Round(time.Millisecond))
		for _, p := range c.Pods {
			fmt.Fprintf(&b, " %-10v", r.visible[p.Name].Round(time.Millisecond))
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "%d change passes (external-dns run, then per pod: median / p95 / max):\n", len(series))
	stat := func(ds []time.Duration) string {
		sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
		at := func(f float64) time.Duration { return ds[int(f*float64(len(ds)-1)+0.5)].Round(time.Millisecond) }
		return fmt.Sprintf("%v / %v / %v", at(0.5), at(0.95), at(1))
	}
	var took []time.Duration
	for _, r := range series {
		took = append(took, r.took)
	}
	fmt.Fprintf(&b, "  %-12s %s\n", "external-dns", stat(took))
	for _, p := range c.Pods {
		var ds, lag []time.Duration
		for _, r := range series {
			ds = append(ds, r.visible[p.Name])
			lag = append(lag, r.visible[p.Name]-r.visible[c.Pods[0].Name])
		}
		fmt.Fprintf(&b, "  %-12s %s", p.Name, stat(ds))
		if p != c.Pods[0] {
			fmt.Fprintf(&b, "   (after the primary: %s)", stat(lag))
		}
		b.WriteString("\n")
	}
	return "kept." + appsZone, b.String()
}

// edSeries is the number of change passes timed per pod.
const edSeries = 20

// keyFile writes a rendered Secret's key.conf to a file, as a client would
// mount it.
func keyFile(t *testing.T, c *Cluster, secret string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), secret+".conf")
	if err := os.WriteFile(path, []byte(c.secretValue(t, secret, "key.conf")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// scenarioNsupdate: `nsupdate -k key.conf` (the rendered Secret's file)
// adds and deletes a record through the primary Service; every pod follows.
func scenarioNsupdate(t *testing.T, c *Cluster) {
	nsupdate := mustLook(t, "nsupdate")
	kf := keyFile(t, c, "externaldns-key-tsig")
	run := func(cmds string) {
		t.Helper()
		script := fmt.Sprintf("server %s\nzone %s\n%s\nsend\n", c.PrimarySvc, appsZone, cmds)
		cmd := exec.Command(nsupdate, "-v", "-k", kf)
		cmd.Stdin = strings.NewReader(script)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("nsupdate -k %s: %v\n%s\nscript:\n%s", filepath.Base(kf), err, out, script)
		}
	}
	var pl tcpPoller
	defer pl.close()
	check := func(what string, want []rr) {
		t.Helper()
		for _, p := range c.Pods {
			if err := eventually(hang, 10*time.Millisecond, func() error { return pl.served(p.Net.IP, want) }); err != nil {
				t.Errorf("%s: %s: %v", what, p.Name, err)
			}
		}
	}
	name := "nsupdate." + appsZone
	run(fmt.Sprintf("update add %s 60 A 198.51.100.77\nupdate add %s 60 TXT \"written by nsupdate\"", name, name))
	check("after nsupdate add", []rr{{name, dns.TypeA, []string{"198.51.100.77"}}, {name, dns.TypeTXT, []string{`"written by nsupdate"`}}})
	run("update delete " + name)
	check("after nsupdate delete", append([]rr{{name, dns.TypeA, nil}}, dnsRecordRRsets()...))

	// The same key cannot write to a zone it does not own, nor through a
	// secondary (updates go to the primary Service).
	refused := func(what, server, zone string) {
		t.Helper()
		cmd := exec.Command(nsupdate, "-k", kf)
		cmd.Stdin = strings.NewReader(fmt.Sprintf("server %s\nzone %s\nupdate add x.%s 60 A 198.51.100.1\nsend\n", server, zone, zone))
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "REFUSED") {
			t.Errorf("nsupdate %s was not refused (err %v):\n%s", what, err, out)
		}
	}
	refused("to the static zone example.com", c.PrimarySvc, "example.com")
	for _, p := range c.Secondaries() {
		refused("to secondary "+p.Name, p.Net.IP, appsZone)
	}
}

// scenarioDigAXFR: `dig -k <transfer key.conf> AXFR` transfers each zone of
// the external view from the primary Service; the update key transfers its
// dynamic zone only; without a key the transfer is refused.
func scenarioDigAXFR(t *testing.T, c *Cluster) {
	dig := mustLook(t, "dig")
	xfr := keyFile(t, c, "transfer-key-tsig")
	upd := keyFile(t, c, "externaldns-key-tsig")
	cases := []struct {
		name, server, zone, key string
		ok                      bool
		contains                string
		reason                  string
		src                     string // "" = the lab client (external view by address)
	}{
		{"transfer key, dynamic zone", c.PrimarySvc, appsZone, xfr, true, "shop.apps.example.com.", "the cluster's transfer key transfers every zone of its view", ""},
		{"transfer key, static zone", c.PrimarySvc, "example.com", xfr, true, "mail.example.com.", "the cluster's transfer key transfers every zone of its view", ""},
		{"update key, its dynamic zone", c.PrimarySvc, appsZone, upd, true, "shop.apps.example.com.", "external-dns lists the zone by AXFR with its update key", ""},
		{"update key, a static zone", c.PrimarySvc, "example.com", upd, false, "", "the update key transfers only the zone it updates", ""},
		{"no key", c.PrimarySvc, appsZone, "", false, "", "transfers need a key", ""},
		{"transfer key, from a secondary", c.Pods[1].Net.IP, appsZone, xfr, false, "", "transfers come from the primary Service only", ""},
		{"update key, from an office address", c.PrimarySvc, appsZone, upd, true, "shop.apps.example.com.", "the key selects the external view even where the address selects the internal one", officeClient},
	}
	for _, tc := range cases {
		src := labClient
		if tc.src != "" {
			src = tc.src
		}
		args := []string{"+tcp", "-b", src, "@" + tc.server, tc.zone, "AXFR"}
		if tc.key != "" {
			args = append([]string{"-k", tc.key}, args...)
		}
		out, _ := exec.Command(dig, args...).CombinedOutput()
		s := string(out)
		ok := !strings.Contains(s, "Transfer failed") && strings.Count(s, "\tSOA\t") == 2
		if ok != tc.ok {
			t.Errorf("%s (%s): dig %s: transferred=%v, want %v:\n%s", tc.name, tc.reason, strings.Join(args, " "), ok, tc.ok, s)
			continue
		}
		if tc.ok && !strings.Contains(s, tc.contains) {
			t.Errorf("%s: the transfer lacks %s:\n%s", tc.name, tc.contains, s)
		}
		if tc.ok && tc.key != "" && !strings.Contains(s, "TSIG") {
			t.Errorf("%s: the answer is not TSIG-signed:\n%s", tc.name, s)
		}
	}
}
