package agent

import (
	"context"
	"crypto"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/miekg/dns"
	"sigs.k8s.io/yaml"

	"git.unkin.net/unkin/bind-fn/internal/monitoring"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// TestReadDSZones: the zones whose DS named checks, with their parental
// agents, read from named.conf as named reads it.
func TestReadDSZones(t *testing.T) {
	cases := map[string]struct {
		reason, conf string
		want         []DSZone
	}{
		"Inline": {
			reason: "bind-fn renders parental-agents inline: an address, and a port when it is not 53",
			conf:   `zone "a.test" { type primary; file "a"; dnssec-policy "p"; parental-agents { 192.0.2.53; 2001:db8::53 port 5353; }; };`,
			want:   []DSZone{{Zone: "a.test", Agents: []netip.AddrPort{netip.MustParseAddrPort("192.0.2.53:53"), netip.MustParseAddrPort("[2001:db8::53]:5353")}}},
		},
		"ListPort": {
			reason: "a list-level port applies to entries without their own",
			conf:   `zone "a.test." { type master; file "a"; dnssec-policy default; parental-agents port 5300 { 192.0.2.1; 192.0.2.2 port 54; }; };`,
			want:   []DSZone{{Zone: "a.test", Agents: []netip.AddrPort{netip.MustParseAddrPort("192.0.2.1:5300"), netip.MustParseAddrPort("192.0.2.2:54")}}},
		},
		"NamedList": {
			reason: "a top-level parental-agents list is followed by name",
			conf: `parental-agents "parents" { 198.51.100.1; };
zone "a.test" { type primary; file "a"; dnssec-policy "p"; parental-agents { "parents"; }; };`,
			want: []DSZone{{Zone: "a.test", Agents: []netip.AddrPort{netip.MustParseAddrPort("198.51.100.1:53")}}},
		},
		"Views": {
			reason: "zones in views count once",
			conf: `view "a" { zone "a.test" { type primary; file "a"; dnssec-policy "p"; parental-agents { 192.0.2.53; }; }; };
view "b" { zone "a.test" { type primary; file "b"; dnssec-policy "p"; parental-agents { 192.0.2.53; }; }; };`,
			want: []DSZone{{Zone: "a.test", Agents: []netip.AddrPort{netip.MustParseAddrPort("192.0.2.53:53")}}},
		},
		"NotChecked": {
			reason: "unsigned, policy none, checkds no, a secondary, or no agents: named checks no DS, nor does the agent",
			conf: `zone "u.test" { type primary; file "u"; parental-agents { 192.0.2.53; }; };
zone "n.test" { type primary; file "n"; dnssec-policy none; parental-agents { 192.0.2.53; }; };
zone "c.test" { type primary; file "c"; dnssec-policy "p"; checkds no; parental-agents { 192.0.2.53; }; };
zone "s.test" { type secondary; file "s"; primaries { 192.0.2.1; }; };
zone "x.test" { type primary; file "x"; dnssec-policy "p"; };`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "named.conf")
			if err := os.WriteFile(file, []byte(tc.conf+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := ReadDSZones(file)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b netip.AddrPort) bool { return a == b })); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

// signedKeys is a zone's KSK and ZSK, and the KSK's signature over the
// DNSKEY RRset valid from inception to expiration.
func signedKeys(t *testing.T, zone string, inception, expiration time.Time) (ksk, zsk *dns.DNSKEY, sig *dns.RRSIG) {
	t.Helper()
	mk := func(flags uint16) (*dns.DNSKEY, any) {
		k := &dns.DNSKEY{Hdr: dns.RR_Header{Name: dns.Fqdn(zone), Rrtype: dns.TypeDNSKEY, Class: dns.ClassINET, Ttl: 3600}, Flags: flags, Protocol: 3, Algorithm: dns.ECDSAP256SHA256}
		priv, err := k.Generate(256)
		if err != nil {
			t.Fatal(err)
		}
		return k, priv
	}
	ksk, priv := mk(257)
	zsk, _ = mk(256)
	sig = &dns.RRSIG{Hdr: dns.RR_Header{Name: dns.Fqdn(zone), Rrtype: dns.TypeRRSIG, Class: dns.ClassINET, Ttl: 3600},
		Algorithm: ksk.Algorithm, SignerName: dns.Fqdn(zone), KeyTag: ksk.KeyTag(),
		Inception: uint32(inception.Unix()), Expiration: uint32(expiration.Unix())}
	if err := sig.Sign(priv.(crypto.Signer), []dns.RR{ksk, zsk}); err != nil {
		t.Fatal(err)
	}
	return ksk, zsk, sig
}

// TestValidDS: a DS counts when it leads to a zone key that signs the
// DNSKEY RRset now, as a validator follows it.
func TestValidDS(t *testing.T) {
	now := time.Now()
	ksk, zsk, sig := signedKeys(t, "a.test", now.Add(-time.Hour), now.Add(24*time.Hour))
	other, _, _ := signedKeys(t, "a.test", now.Add(-time.Hour), now.Add(24*time.Hour))
	expired := *sig
	expired.Expiration = uint32(now.Add(-time.Minute).Unix())
	changed := ksk.ToDS(dns.SHA256)
	changed.Digest = strings.Repeat("0", len(changed.Digest))
	sha1 := ksk.ToDS(dns.SHA1)
	keys, sigs := []*dns.DNSKEY{ksk, zsk}, []*dns.RRSIG{sig}
	cases := map[string]struct {
		reason string
		ds     []*dns.DS
		sigs   []*dns.RRSIG
		want   int
	}{
		"KSK":      {reason: "the KSK's digest: the chain holds", ds: []*dns.DS{ksk.ToDS(dns.SHA256)}, want: 1},
		"SHA1":     {reason: "any digest type miekg/dns computes", ds: []*dns.DS{sha1}, want: 1},
		"Two":      {reason: "each DS is counted: the KSK's under two digests", ds: []*dns.DS{ksk.ToDS(dns.SHA256), sha1}, want: 2},
		"Stale":    {reason: "a DS of a key the zone no longer has beside the KSK's: one valid", ds: []*dns.DS{other.ToDS(dns.SHA256), ksk.ToDS(dns.SHA256)}, want: 1},
		"Digest":   {reason: "the key tag and algorithm match but the digest does not", ds: []*dns.DS{changed}, want: 0},
		"OtherKey": {reason: "the DS of a key the zone does not serve", ds: []*dns.DS{other.ToDS(dns.SHA256)}, want: 0},
		"ZSK":      {reason: "the ZSK is in the RRset but does not sign it: a validator cannot use its DS", ds: []*dns.DS{zsk.ToDS(dns.SHA256)}, want: 0},
		"Expired":  {reason: "the KSK's only signature over the RRset has expired", ds: []*dns.DS{ksk.ToDS(dns.SHA256)}, sigs: []*dns.RRSIG{&expired}, want: 0},
		"NoDS":     {reason: "an insecure delegation", want: 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := sigs
			if tc.sigs != nil {
				s = tc.sigs
			}
			if got := ValidDS("a.test", tc.ds, keys, s, now); got != tc.want {
				t.Errorf("%s: %d valid, want %d", tc.reason, got, tc.want)
			}
		})
	}
}

// TestWriteDSMetrics: two series per zone and agent, through client_golang;
// nothing without readings.
func TestWriteDSMetrics(t *testing.T) {
	var w strings.Builder
	WriteDSMetrics(&w, nil)
	if w.Len() != 0 {
		t.Errorf("no readings wrote %q", w.String())
	}
	WriteDSMetrics(&w, []DSReading{{Zone: "a.test", Agent: "192.0.2.53:53", DS: 2, Valid: 0}})
	want := "# HELP bindfn_agent_zone_parent_ds DS records a signed zone's parental agent (named.conf parental-agents) serves for it; no series while the agent gives no authoritative answer.\n" +
		"# TYPE bindfn_agent_zone_parent_ds gauge\n" +
		"bindfn_agent_zone_parent_ds{parental_agent=\"192.0.2.53:53\",zone=\"a.test\"} 2\n" +
		"# HELP bindfn_agent_zone_parent_ds_valid Of those DS records, how many match a DNSKEY named serves for the zone whose RRSIG over the DNSKEY RRset verifies now (0 with DS present: the chain of trust is broken).\n" +
		"# TYPE bindfn_agent_zone_parent_ds_valid gauge\n" +
		"bindfn_agent_zone_parent_ds_valid{parental_agent=\"192.0.2.53:53\",zone=\"a.test\"} 0\n"
	if diff := cmp.Diff(want, w.String()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestRealNamedDS runs named of each release (9.18 and 9.20) serving a
// parent zone, dynamic, and a child signed by dnssec-policy (KSK + ZSK)
// whose parental-agents is that parent (and a port where nothing
// listens, which has no series): the agent's reading follows the
// parent's DS as it is published, replaced by the ZSK's, mistyped,
// removed, and restored.
func TestRealNamedDS(t *testing.T) {
	for _, r := range bindtools.Releases {
		t.Run(r.Name, func(t *testing.T) { testRealNamedDS(t, r) })
	}
}

// parentChild is a real named serving parent.test (dynamic, updates from
// loopback) and child.parent.test signed by dnssec-policy with a KSK and
// a ZSK, whose parental-agents are that named and a port where nothing
// listens.
type parentChild struct {
	addr, conf string
	ksk, zsk   *dns.DNSKEY
	log        *syncBuffer
}

const childZone = "child.parent.test"

func startParentChild(t *testing.T, r bindtools.Release) *parentChild {
	t.Helper()
	dir := t.TempDir()
	port := bindtools.FreePort(t)
	pc := &parentChild{addr: fmt.Sprintf("127.0.0.1:%d", port), conf: filepath.Join(dir, "named.conf"), log: &syncBuffer{}}
	// A second parental agent where nothing listens: no answer, no series.
	silent := bindtools.FreePort(t)
	if err := os.Mkdir(filepath.Join(dir, "keys"), 0o755); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf(`options { directory %[1]q; listen-on port %[2]d { 127.0.0.1; }; listen-on-v6 { none; }; pid-file none; recursion no; };
dnssec-policy "kz" { keys { ksk lifetime unlimited algorithm ecdsap256sha256; zsk lifetime unlimited algorithm ecdsap256sha256; }; };
zone "parent.test" { type primary; file "parent.zone"; allow-update { 127.0.0.1; }; };
zone "child.parent.test" { type primary; file "child.zone"; dnssec-policy "kz"; inline-signing yes; key-directory %[3]q;
	parental-agents { 127.0.0.1 port %[2]d; 127.0.0.1 port %[4]d; }; };
`, dir, port, filepath.Join(dir, "keys"), silent)
	files := map[string]string{
		"named.conf":  conf,
		"parent.zone": "$TTL 60\n@ SOA ns hm 1 3600 600 86400 60\n@ NS ns\nns A 127.0.0.1\nchild NS ns.child\nns.child A 127.0.0.1\n",
		"child.zone":  "$TTL 60\n@ SOA ns hm 1 3600 600 86400 60\n@ NS ns\nns A 127.0.0.1\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := r.Command(t, "named", "-g", "-c", pc.conf, "-u", "root")
	cmd.Stdout, cmd.Stderr = pc.log, pc.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	d := &DSCheck{Addr: pc.addr}
	var keys []*dns.DNSKEY
	waitFor(t, bindtools.Hang, childZone+" signed", func() bool {
		k, _, ok := d.dnskeys(context.Background(), childZone)
		keys = k
		return ok && len(k) == 2
	})
	for _, k := range keys {
		if k.Flags&dns.SEP != 0 {
			pc.ksk = k
		} else {
			pc.zsk = k
		}
	}
	if pc.ksk == nil || pc.zsk == nil {
		t.Fatalf("want a KSK and a ZSK, named serves %v", keys)
	}
	return pc
}

// mistyped is the KSK's DS with the digest's last digit changed.
func (pc *parentChild) mistyped() *dns.DS {
	d := pc.ksk.ToDS(dns.SHA256)
	last := "0"
	if strings.HasSuffix(d.Digest, "0") {
		last = "1"
	}
	d.Digest = d.Digest[:len(d.Digest)-1] + last
	return d
}

func testRealNamedDS(t *testing.T, r bindtools.Release) {
	pc := startParentChild(t, r)
	d := &DSCheck{Addr: pc.addr, Conf: func() string { return pc.conf }}
	ctx := context.Background()
	agent := pc.addr
	steps := []struct {
		name string
		ds   []*dns.DS
		want []DSReading
	}{
		{"published", []*dns.DS{pc.ksk.ToDS(dns.SHA256)}, []DSReading{{Zone: childZone, Agent: agent, DS: 1, Valid: 1}}},
		{"the ZSK's DS instead", []*dns.DS{pc.zsk.ToDS(dns.SHA256)}, []DSReading{{Zone: childZone, Agent: agent, DS: 1, Valid: 0}}},
		{"a digest mistyped", []*dns.DS{pc.mistyped()}, []DSReading{{Zone: childZone, Agent: agent, DS: 1, Valid: 0}}},
		{"removed", nil, []DSReading{{Zone: childZone, Agent: agent, DS: 0, Valid: 0}}},
		{"restored", []*dns.DS{pc.ksk.ToDS(dns.SHA256), pc.zsk.ToDS(dns.SHA256)}, []DSReading{{Zone: childZone, Agent: agent, DS: 2, Valid: 1}}},
	}
	for _, st := range steps {
		setParentDS(t, pc.addr, childZone, st.ds)
		got := d.Check(ctx)
		if diff := cmp.Diff(st.want, got); diff != "" {
			t.Fatalf("%s: DS at the parent %v (-want +got):\n%s\nnamed's log:\n%s", st.name, st.ds, diff, pc.log.String())
		}
		t.Logf("%s: %+v", st.name, got)
	}
	// The scrape path: the first scrape starts a reading in the
	// background, a later one exports it.
	waitFor(t, bindtools.Hang, "the reading on /metrics", func() bool {
		var w strings.Builder
		d.Write(ctx, &w)
		return strings.Contains(w.String(), fmt.Sprintf(`bindfn_agent_zone_parent_ds_valid{parental_agent=%q,zone="child.parent.test"} 1`, agent))
	})
}

// setParentDS replaces the child's DS RRset in the parent zone by UPDATE
// (the parent admits updates from loopback).
func setParentDS(t *testing.T, addr, child string, ds []*dns.DS) {
	t.Helper()
	m := new(dns.Msg)
	m.SetUpdate("parent.test.")
	m.RemoveRRset([]dns.RR{&dns.DS{Hdr: dns.RR_Header{Name: dns.Fqdn(child), Rrtype: dns.TypeDS, Class: dns.ClassINET}}})
	for _, d := range ds {
		d.Hdr.Ttl = 60
		m.Insert([]dns.RR{d})
	}
	r, _, err := (&dns.Client{Net: "tcp", Timeout: 5 * time.Second}).Exchange(m, addr)
	if err != nil || r.Rcode != dns.RcodeSuccess {
		t.Fatalf("UPDATE of %s's DS: %v %v", child, r, err)
	}
}

// TestPrometheusDSAlerts: a real Prometheus (Debian's) scrapes the DS
// readings of a real named (BINDFN_BIND's release) with the rendered rules
// of cluster "lab", the DS alerts' `for` cut to 4 s (promtool's unit tests
// hold the real 10 m and 1 h): with the KSK's DS at the parent no alert;
// a mistyped DS fires BindDSMismatch for the zone and parental agent;
// the DS removed fires BindDSMissing instead; restored, both clear.
func TestPrometheusDSAlerts(t *testing.T) {
	r := bindtools.Current(t)
	promBin := bindtools.Prometheus(t, "prometheus")
	pc := startParentChild(t, r)
	setParentDS(t, pc.addr, childZone, []*dns.DS{pc.ksk.ToDS(dns.SHA256)})
	d := &DSCheck{Addr: pc.addr, Conf: func() string { return pc.conf }, Every: time.Second}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		var b strings.Builder
		d.Write(req.Context(), &b)
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_, _ = io.WriteString(w, b.String())
	}))
	t.Cleanup(srv.Close)

	rules := monitoring.Rules(monitoring.Params{Cluster: "lab", Namespace: "dns", SOARefresh: 5 * time.Minute, SignatureExpiry: 7 * 24 * time.Hour, ServfailRatio: 0.05})
	for i, rl := range rules.Groups[0].Rules {
		if strings.HasPrefix(rl.Alert, "BindDS") {
			rules.Groups[0].Rules[i].For = "4s"
		}
	}
	b, err := yaml.Marshal(rules)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rulesFile := filepath.Join(dir, "rules.yaml")
	if err := os.WriteFile(rulesFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	port := bindtools.FreePort(t)
	prom := bindtools.StartPrometheus(t, promBin, dir, port, fmt.Sprintf(`global: {scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 2s}
rule_files: [%q]
scrape_configs:
- job_name: prometheus
  static_configs: [{targets: ["127.0.0.1:%d"]}]
- job_name: bind-fn
  static_configs:
  - targets: [%q]
    labels: {pod: lab-0, namespace: dns, %s: lab}
`, rulesFile, port, strings.TrimPrefix(srv.URL, "http://"), monitoring.ClusterLabel))
	valid := fmt.Sprintf(`bindfn_agent_zone_parent_ds_valid{zone=%q,parental_agent=%q}`, childZone, pc.addr)
	waitFor(t, bindtools.Hang, "the valid DS scraped", func() bool {
		res, err := prom.Query(valid + " == 1")
		return err == nil && len(res) == 1
	})
	iter := prom.Value(t, `min(prometheus_rule_group_iterations_total)`)
	start := time.Now()
	waitFor(t, bindtools.Hang, "5 rule evaluations", func() bool {
		return prom.Value(t, `min(prometheus_rule_group_iterations_total)`) >= iter+5
	})
	window := time.Since(start).Round(time.Second) + time.Second
	if got := prom.Series(t, fmt.Sprintf(`count_over_time(ALERTS[%ds])`, int(window.Seconds()))); len(got) > 0 {
		t.Errorf("alerts with a valid DS at the parent within %v: %v", window, got)
	}

	steps := []struct {
		name, fires, clears string
		ds                  []*dns.DS
	}{
		{"a digest mistyped", "BindDSMismatch", "", []*dns.DS{pc.mistyped()}},
		{"removed", "BindDSMissing", "BindDSMismatch", nil},
		{"restored", "", "BindDSMissing", []*dns.DS{pc.ksk.ToDS(dns.SHA256)}},
	}
	for _, st := range steps {
		setParentDS(t, pc.addr, childZone, st.ds)
		changed := time.Now()
		if st.fires != "" {
			var firing []map[string]string
			waitFor(t, bindtools.Hang, st.fires+" firing", func() bool {
				firing = prom.Series(t, fmt.Sprintf(`ALERTS{alertname=%q,alertstate="firing"}`, st.fires))
				return len(firing) > 0
			})
			want := map[string]string{"__name__": "ALERTS", "alertname": st.fires, "alertstate": "firing", "severity": firing[0]["severity"],
				"bindfn_cluster": "lab", "namespace": "dns", "pod": "lab-0", "zone": childZone, "parental_agent": pc.addr}
			if diff := cmp.Diff([]map[string]string{want}, firing); diff != "" {
				t.Errorf("%s: %s (-want +got):\n%s", st.name, st.fires, diff)
			}
			t.Logf("%s: %s fired %v after the change", st.name, st.fires, time.Since(changed).Round(time.Second))
		}
		if st.clears != "" {
			waitFor(t, bindtools.Hang, st.clears+" cleared", func() bool {
				return len(prom.Series(t, fmt.Sprintf(`ALERTS{alertname=%q}`, st.clears))) == 0
			})
			t.Logf("%s: %s cleared %v after the change", st.name, st.clears, time.Since(changed).Round(time.Second))
		}
	}
}
