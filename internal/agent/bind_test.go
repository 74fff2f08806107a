package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/agent/kubeletdir"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// primaryDoc is the agent.json of the lab's primary.
func (l *lab) primaryDoc(records []string) layout.AgentConfigDoc {
	include := filepath.Join(l.runDir, "keys", "upd-tsig.conf")
	return layout.AgentConfigDoc{
		Cluster:       "lab",
		Namespace:     "test",
		PrimaryConf:   filepath.Join(l.configDir, layout.NamedConfPrimary),
		SecondaryConf: filepath.Join(l.configDir, layout.NamedConfSecondary),
		ServerLists: []layout.ServerList{
			{Name: layout.SecondariesListName(""), Role: "primary", Hosts: []string{"lab-1.lab-headless"}, Key: "upd"},
			{Name: layout.PrimaryListName(""), Role: "secondary", Hosts: []string{"lab-primary"}, Key: "upd", Port: l.port},
		},
		ImportedKeys:   []layout.ImportedKey{{KeyName: "upd", Algorithm: "hmac-sha256", Secret: "upd-tsig", Include: include}},
		SeedZones:      []layout.SeedZone{{Zone: "dyn.test", Source: filepath.Join(l.zonesDir, "0", "dyn.test.zone"), Dest: filepath.Join(l.dataDir, "dyn.test.zone")}},
		DynamicZones:   []layout.DynamicZone{{Zone: "dyn.test", KeyName: "upd", KeyFile: include, Records: records}},
		PrimaryZones:   []layout.ZoneRef{{Zone: "dyn.test"}, {Zone: "static.test"}},
		SecondaryZones: []layout.ZoneRef{{Zone: "dyn.test"}, {Zone: "static.test"}},
	}
}

func (l *lab) zoneFiles(serial int, www string) map[string][]byte {
	return map[string][]byte{
		"static.test.zone": l.fixture("static.test.zone", map[string]string{"@SERIAL@": strconv.Itoa(serial), "@WWW@": www}),
		"dyn.test.zone":    l.fixture("dyn.test.zone", nil),
		"added.test.zone":  l.fixture("added.test.zone", nil),
	}
}

func namedPID(t *testing.T, runDir string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(runDir, "named.pid"))
	if err != nil {
		t.Fatalf("cannot read named's pid file: %v", err)
	}
	return strings.TrimSpace(string(b))
}

// TestRealNamedPrimary runs a real named under the agent and shows that
// kubelet-style swaps are applied through rndc without restarting named, a
// config BIND rejects is refused with its file:line while the old config
// keeps serving, and dynamic RRsets converge by UPDATE.
func TestRealNamedPrimary(t *testing.T) {
	bindtools.RequireBIND(t)
	l, res := pod0Lab(t)
	records := []string{
		"www 300 IN A 192.0.2.1",
		`txt 300 IN TXT "hello"`,
	}
	secondary := l.fixture(layout.NamedConfSecondary, nil)
	l.writeConfig(l.fixture(layout.NamedConfPrimary, nil), secondary, l.primaryDoc(records))

	a, stop := l.run(l.options(0, res))
	waitFor(t, bindtools.Hang, "primary ready", func() bool { return a.State().Snapshot().Ready })
	pid := namedPID(t, l.runDir)
	if got := a.State().Snapshot().NamedPID; strconv.Itoa(got) != pid {
		t.Errorf("status namedPID = %d, pid file says %s", got, pid)
	}
	servers, _ := os.ReadFile(filepath.Join(l.runDir, layout.ServersInclude))
	if !strings.Contains(string(servers), `primaries "bind-fn-secondaries" {`+"\n\t127.0.0.2 key \"upd\";\n};") ||
		!strings.Contains(string(servers), `primaries "bind-fn-primary" { };`) {
		t.Errorf("servers.conf:\n%s", servers)
	}

	t.Run("DynamicRecordsConverge", func(t *testing.T) {
		waitFor(t, bindtools.Hang, "initial records", func() bool {
			return cmp.Equal(answers(l.addr(), "www.dyn.test", dns.TypeA), []string{"192.0.2.1"}) &&
				cmp.Equal(answers(l.addr(), "txt.dyn.test", dns.TypeTXT), []string{`"hello"`})
		})
		// Change www, remove txt, add mx, in one agent.json swap.
		l.writeConfig(l.fixture(layout.NamedConfPrimary, nil), secondary, l.primaryDoc([]string{
			"www 300 IN A 192.0.2.2",
			"www 300 IN A 192.0.2.3",
			"@ 300 IN MX 10 ns.dyn.test.",
		}))
		waitFor(t, bindtools.Hang, "changed records", func() bool {
			return cmp.Equal(answers(l.addr(), "www.dyn.test", dns.TypeA), []string{"192.0.2.2", "192.0.2.3"}) &&
				answers(l.addr(), "txt.dyn.test", dns.TypeTXT) == nil &&
				cmp.Equal(answers(l.addr(), "dyn.test", dns.TypeMX), []string{"10 ns.dyn.test."})
		})
		if diff := cmp.Diff([]string{"ns.dyn.test."}, answers(l.addr(), "dyn.test", dns.TypeNS)); diff != "" {
			t.Errorf("apex NS changed (-want +got):\n%s", diff)
		}
		if got := value(a.State().Metrics().UpdatedRRsets.WithLabelValues(opDelete)); got < 1 {
			t.Errorf("update_rrsets_total{op=delete} = %v, want >= 1", got)
		}
	})

	t.Run("SwapAppliedWithoutRestart", func(t *testing.T) {
		before := value(a.State().Metrics().Reloads.WithLabelValues(kindReload))
		extra := "zone \"added.test\" {\n\ttype primary;\n\tfile \"" + filepath.Join(l.zonesDir, "0", "added.test.zone") + "\";\n};"
		l.writeZones(l.zoneFiles(2, "192.0.2.20"))
		l.writeConfig(l.fixture(layout.NamedConfPrimary, map[string]string{"@EXTRA@": extra}), secondary, l.primaryDoc([]string{
			"www 300 IN A 192.0.2.2", "www 300 IN A 192.0.2.3", "@ 300 IN MX 10 ns.dyn.test.",
		}))
		took := waitFor(t, bindtools.Hang, "added zone and changed record served", func() bool {
			return cmp.Equal(answers(l.addr(), "ns.added.test", dns.TypeA), []string{"192.0.2.54"}) &&
				cmp.Equal(answers(l.addr(), "www.static.test", dns.TypeA), []string{"192.0.2.20"})
		})
		// About 1 s idle (poll + named-checkconf + rndc): reported, not
		// asserted; BENCHMARKS.md holds the budget.
		t.Logf("swap served after %s", took)
		if got := namedPID(t, l.runDir); got != pid {
			t.Errorf("named restarted: pid %s, was %s", got, pid)
		}
		waitFor(t, bindtools.Hang, "reloads_total{kind=reload} counted", func() bool {
			return value(a.State().Metrics().Reloads.WithLabelValues(kindReload)) > before
		})
	})

	t.Run("PeerChangeReconfigures", func(t *testing.T) {
		before := value(a.State().Metrics().PeerChanges)
		res.set("lab-1.lab-headless", "127.0.0.3")
		waitFor(t, bindtools.Hang, "servers.conf rewritten", func() bool {
			b, _ := os.ReadFile(filepath.Join(l.runDir, layout.ServersInclude))
			return strings.Contains(string(b), "127.0.0.3 key") && value(a.State().Metrics().PeerChanges) > before
		})
		// The main loop writes, then applies: an apply ending after now includes the new list.
		seen := time.Now()
		waitFor(t, bindtools.Hang, "new peers applied by rndc reconfig", func() bool {
			st := a.State().Snapshot()
			return st.LastApply != nil && st.LastApply.After(seen)
		})
		if got := namedPID(t, l.runDir); got != pid {
			t.Errorf("named restarted: pid %s, was %s", got, pid)
		}
	})

	t.Run("BrokenSwapRefused", func(t *testing.T) {
		broken := l.fixture(layout.NamedConfPrimary, map[string]string{"@EXTRA@": "zone \"broken.test\" { type primary; bogus-option yes; };"})
		l.writeConfig(broken, secondary, l.primaryDoc([]string{"www 300 IN A 192.0.2.2", "www 300 IN A 192.0.2.3", "@ 300 IN MX 10 ns.dyn.test."}))
		waitFor(t, bindtools.Hang, "error in status", func() bool { return a.State().Snapshot().LastError != nil })
		e := a.State().Snapshot().LastError
		if !strings.HasSuffix(e.File, layout.NamedConfPrimary) || e.Line == 0 || !strings.Contains(e.Message, "bogus-option") {
			t.Errorf("lastError = %+v, want checkconf's file:line about bogus-option", e)
		}
		if got := value(a.State().Metrics().ReloadFailures.WithLabelValues(stageCheckconf)); got < 1 {
			t.Errorf("reload_failures_total{stage=checkconf} = %v, want >= 1", got)
		}
		if !strings.Contains(l.logs.String(), "bogus-option") {
			t.Error("no log line names the rejected option")
		}
		// Still serving the old config.
		if diff := cmp.Diff([]string{"192.0.2.20"}, answers(l.addr(), "www.static.test", dns.TypeA)); diff != "" {
			t.Errorf("old zone not served (-want +got):\n%s", diff)
		}
		if got := namedPID(t, l.runDir); got != pid {
			t.Errorf("named restarted: pid %s, was %s", got, pid)
		}
		// Fixing it applies again and clears the error.
		l.writeConfig(l.fixture(layout.NamedConfPrimary, nil), secondary, l.primaryDoc([]string{"www 300 IN A 192.0.2.2"}))
		waitFor(t, bindtools.Hang, "fixed config applied", func() bool {
			return a.State().Snapshot().LastError == nil && answers(l.addr(), "ns.added.test", dns.TypeA) == nil
		})
	})

	if err := stop(); err != nil {
		t.Errorf("agent stopped with %v", err)
	}
	if value(a.State().Metrics().NamedUp) != 0 {
		t.Error("named_up still 1 after stop")
	}
}

// TestRealNamedSecondary runs a primary and a secondary agent: the
// secondary waits for its primaries list to resolve before starting named,
// transfers by key, and follows a dynamic change by keyed NOTIFY.
func TestRealNamedSecondary(t *testing.T) {
	bindtools.RequireBIND(t)
	p, s := newLab(t), newLab(t)
	pres, sres := &fakeResolver{}, &fakeResolver{}
	pres.set("lab-1.lab-headless", "127.0.0.1")

	p.writeKey("upd-tsig", p.secret)
	p.writeZones(p.zoneFiles(1, "192.0.2.10"))
	pdoc := p.primaryDoc([]string{"www 300 IN A 192.0.2.1"})
	pdoc.ServerLists[0].Port = s.port // NOTIFY the secondary on its test port
	p.writeConfig(p.fixture(layout.NamedConfPrimary, nil), p.fixture(layout.NamedConfSecondary, nil), pdoc)
	pa, _ := p.run(p.options(0, pres))

	s.writeKey("upd-tsig", p.secret)
	s.writeZones(s.zoneFiles(1, "192.0.2.10"))
	sdoc := s.primaryDoc(nil)
	sdoc.ServerLists[1].Port = p.port
	s.writeConfig(s.fixture(layout.NamedConfPrimary, nil), s.fixture(layout.NamedConfSecondary, nil), sdoc)
	sa, _ := s.run(s.options(1, sres))

	// Three lookups of the primary that found nothing: the secondary has
	// gone round its wait twice, and named may not have started (a named
	// started ends the wait too, and fails the check below).
	waitFor(t, bindtools.Hang, "the secondary looks its primary up three times", func() bool {
		return sres.lookups("lab-primary") >= 3 || sa.State().Snapshot().NamedPID != 0
	})
	if pid := sa.State().Snapshot().NamedPID; pid != 0 {
		t.Fatalf("secondary started named (pid %d) before its primary resolved", pid)
	}
	if !strings.Contains(s.logs.String(), "waiting for the primary") {
		t.Error("no log line says the secondary waits for its primary")
	}
	sres.set("lab-primary", "127.0.0.1")
	waitFor(t, bindtools.Hang, "primary ready", func() bool { return pa.State().Snapshot().Ready })
	t.Logf("secondary ready after %s", waitFor(t, bindtools.Hang, "secondary ready", func() bool { return sa.State().Snapshot().Ready }))
	waitFor(t, bindtools.Hang, "secondary serves the dynamic record", func() bool {
		return cmp.Equal(answers(s.addr(), "www.dyn.test", dns.TypeA), []string{"192.0.2.1"})
	})
	if sa.Role() != RoleSecondary || sa.State().Snapshot().Role != RoleSecondary {
		t.Errorf("role = %s", sa.Role())
	}
	link, _ := os.Readlink(filepath.Join(s.runDir, layout.ActiveConf))
	if want := filepath.Join(s.configDir, layout.NamedConfSecondary); link != want {
		t.Errorf("active config links to %s, want %s", link, want)
	}

	pdoc.DynamicZones[0].Records = []string{"www 300 IN A 192.0.2.99"}
	p.writeConfig(p.fixture(layout.NamedConfPrimary, nil), p.fixture(layout.NamedConfSecondary, nil), pdoc)
	waitFor(t, bindtools.Hang, "secondary follows the update", func() bool {
		return cmp.Equal(answers(s.addr(), "www.dyn.test", dns.TypeA), []string{"192.0.2.99"})
	})
	if strings.Contains(s.logs.String(), "refused notify") {
		t.Error("the secondary refused a NOTIFY")
	}
}

// TestRealNamedConvergeClasses runs the agent on real named with dynamic
// records of the classes that once never converged, signed with
// an hmac-md5 key, and shows every one converges: after the pass that
// sends them, a pass reads the zone (one AXFR) and sends nothing, and the
// passes after it are one SOA query each.
//   - hmac-md5: readiness, the AXFR and the UPDATEs sign with it;
//   - a delegation with glue: read from the AXFR, not a referral;
//   - rdata BIND prints differently from the input (hex case, a name's
//     case, generic rdata, two TTLs in one RRset): compared in wire form.
func TestRealNamedConvergeClasses(t *testing.T) {
	bindtools.RequireBIND(t)
	l := newLab(t)
	res := &fakeResolver{}
	res.set("lab-1.lab-headless", "127.0.0.2")
	l.writeKeyAlg("upd-tsig", l.secret, "hmac-md5")
	l.writeZones(l.zoneFiles(1, "192.0.2.10"))
	records := []string{
		"sub 300 IN NS ns.sub.dyn.test.",
		"ns.sub 300 IN A 192.0.2.77",
		"host 300 IN SSHFP 1 1 ABCDEF0123456789ABCDEF0123456789ABCDEF01",
		`gen 300 IN TYPE65280 \# 3 ABCDEF`,
		"alias 300 IN CNAME Target.DYN.Test.",
		"mix 300 IN A 192.0.2.1",
		"mix 600 IN A 192.0.2.2",
		"v6 300 IN AAAA 2001:DB8:0:0::1",
	}
	doc := l.primaryDoc(records)
	doc.ImportedKeys[0].Algorithm = "hmac-md5"
	l.writeConfig(l.fixture(layout.NamedConfPrimary, nil), l.fixture(layout.NamedConfSecondary, nil), doc)
	o := l.options(0, res)
	o.ConvergeInterval = 100 * time.Millisecond
	a, stop := l.run(o)
	waitFor(t, bindtools.Hang, "primary ready (its readiness query signed with hmac-md5)", func() bool { return a.State().Snapshot().Ready })

	m := a.State().Metrics()
	waitFor(t, bindtools.Hang, "a pass that finds the zone converged by its SOA serial alone", func() bool {
		c := a.State().Snapshot().LastConvergence
		return c != nil && c.Error == "" && c.Transfers == 0 && c.Messages == 0 && c.Unchanged == 7
	})
	if got := value(m.UpdatedRRsets.WithLabelValues(opReplace)); got != 7 {
		t.Errorf("update_rrsets_total{op=replace} = %v, want 7 (each RRset sent once)", got)
	}
	key := Key{Name: "upd", Algorithm: "hmac-md5", Secret: l.secret}
	want := []string{
		"alias.dyn.test. 300 IN CNAME Target.DYN.Test.",
		"dyn.test. 300 IN NS ns.dyn.test.",
		"gen.dyn.test. 300 CLASS1 TYPE65280 \\# 3 abcdef",
		"host.dyn.test. 300 IN SSHFP 1 1 ABCDEF0123456789ABCDEF0123456789ABCDEF01",
		"ns.dyn.test. 300 IN A 192.0.2.53",
		"ns.sub.dyn.test. 300 IN A 192.0.2.77",
		"sub.dyn.test. 300 IN NS ns.sub.dyn.test.",
		"v6.dyn.test. 300 IN AAAA 2001:db8::1",
	}
	got := axfrZone(t, l.addr(), "dyn.test", key)
	var noMix []string
	mix := 0
	for _, s := range got {
		if strings.HasPrefix(s, "mix.dyn.test. ") {
			mix++
			continue
		}
		noMix = append(noMix, s)
	}
	if diff := cmp.Diff(want, noMix); diff != "" || mix != 2 {
		t.Errorf("zone by AXFR (-want +got):\n%s\nmix.dyn.test. A: %d records, want 2", diff, mix)
	}

	// Three more passes: nothing sent, nothing transferred.
	before := value(m.Convergences.WithLabelValues(resultOK))
	waitFor(t, bindtools.Hang, "three more passes", func() bool {
		return value(m.Convergences.WithLabelValues(resultOK)) >= before+3
	})
	if got := value(m.UpdatedRRsets.WithLabelValues(opReplace)); got != 7 {
		t.Errorf("update_rrsets_total{op=replace} = %v after converging, want 7: the agent sends converged RRsets again", got)
	}
	if c := a.State().Snapshot().LastConvergence; c.Transfers != 0 || c.Messages != 0 {
		t.Errorf("a no-change pass transferred %d zones and sent %d UPDATEs, want none", c.Transfers, c.Messages)
	}
	if err := stop(); err != nil {
		t.Errorf("agent stopped with %v", err)
	}
}

// TestRealNamedConvergeBatches shows on real named that many RRset changes
// travel in few UPDATE messages, and that an RRset BIND refuses (here one
// over its max-records-per-type of 100) is located and reported by name
// while every other RRset of its message is applied.
func TestRealNamedConvergeBatches(t *testing.T) {
	bindtools.RequireBIND(t)
	l, res := pod0Lab(t)
	const n = 2000
	var records []string
	for i := 0; i < n; i++ {
		records = append(records, fmt.Sprintf("h%d 300 IN A 198.51.%d.%d", i, i/250, i%250+1))
	}
	good := slices.Clone(records)
	for i := 0; i < 101; i++ {
		records = append(records, fmt.Sprintf("big 300 IN A 203.0.113.%d", i+1))
	}
	doc := l.primaryDoc(records)
	l.writeConfig(l.fixture(layout.NamedConfPrimary, nil), l.fixture(layout.NamedConfSecondary, nil), doc)
	a, stop := l.startConverging(res)

	var first *Convergence
	waitFor(t, bindtools.Hang, "a pass that updated the zone", func() bool {
		first = a.State().Snapshot().LastConvergence
		return first != nil && first.Updated > 0
	})
	t.Logf("first pass: %d RRsets updated in %d UPDATE messages; error: %s", first.Updated, first.Messages, first.Error)
	if first.Updated != n || !strings.Contains(first.Error, "big.dyn.test. A") {
		t.Errorf("first pass: updated %d RRsets, error %q; want %d updated and the error to name big.dyn.test. A", first.Updated, first.Error, n)
	}
	// n RRsets of ~40 bytes in 64,000-byte messages, plus the halvings that
	// isolate the refused one: a handful of messages, not n.
	if first.Messages > 30 {
		t.Errorf("first pass sent %d UPDATE messages for %d RRsets, want few (batched)", first.Messages, n)
	}
	key := Key{Name: "upd", Algorithm: "hmac-sha256", Secret: l.secret}
	if got := len(axfrZone(t, l.addr(), "dyn.test", key)); got != n+2 {
		t.Errorf("zone holds %d records, want %d (the DNSRecords, apex NS and ns A)", got, n+2)
	}

	doc.DynamicZones[0].Records = good
	l.writeConfig(l.fixture(layout.NamedConfPrimary, nil), l.fixture(layout.NamedConfSecondary, nil), doc)
	waitFor(t, bindtools.Hang, "a converged pass without the refused RRset", func() bool {
		c := a.State().Snapshot().LastConvergence
		return c != nil && c.Error == "" && c.Messages == 0 && c.Unchanged == n
	})
	if err := stop(); err != nil {
		t.Errorf("agent stopped with %v", err)
	}
}

// TestRealNamedConvergeWithoutTransfer: when the update key may not
// transfer the zone (spec.updateKeyTransfer: false renders no allow-transfer
// for it), the agent reads RRset by RRset, takes a referral's NS and glue
// as the zone's data at a delegation, and converges all the same.
func TestRealNamedConvergeWithoutTransfer(t *testing.T) {
	bindtools.RequireBIND(t)
	l, res := pod0Lab(t)
	if err := os.MkdirAll(l.dataDir, 0o755); err != nil {
		t.Fatal(err)
	}
	seed := strings.ReplaceAll(string(l.fixture("dyn.test.zone", nil)), "dyn.test.", "notx.test.")
	if err := os.WriteFile(filepath.Join(l.dataDir, "notx.test.zone"), []byte(seed), 0o644); err != nil {
		t.Fatal(err)
	}
	extra := "zone \"notx.test\" {\n\ttype primary;\n\tfile \"" + filepath.Join(l.dataDir, "notx.test.zone") + "\";\n\tallow-update { key \"upd\"; };\n\tallow-transfer { none; };\n};"
	doc := l.primaryDoc(nil)
	doc.DynamicZones = []layout.DynamicZone{{Zone: "notx.test", KeyName: "upd", KeyFile: doc.DynamicZones[0].KeyFile, Records: []string{
		"www 300 IN A 192.0.2.1",
		"sub 300 IN NS ns.sub.notx.test.",
		"ns.sub 300 IN A 192.0.2.77",
	}}}
	doc.PrimaryZones = append(doc.PrimaryZones, layout.ZoneRef{Zone: "notx.test"})
	l.writeConfig(l.fixture(layout.NamedConfPrimary, map[string]string{"@EXTRA@": extra}), l.fixture(layout.NamedConfSecondary, nil), doc)
	a, stop := l.startConverging(res)
	m := a.State().Metrics()
	waitFor(t, bindtools.Hang, "a pass that reads every RRset by query and sends nothing", func() bool {
		c := a.State().Snapshot().LastConvergence
		return c != nil && c.Error == "" && c.Messages == 0 && c.Transfers == 0 && c.Unchanged == 3
	})
	before := value(m.Convergences.WithLabelValues(resultOK))
	waitFor(t, bindtools.Hang, "three more passes", func() bool {
		return value(m.Convergences.WithLabelValues(resultOK)) >= before+3
	})
	if got := value(m.UpdatedRRsets.WithLabelValues(opReplace)); got != 3 {
		t.Errorf("update_rrsets_total{op=replace} = %v, want 3 (each RRset sent once)", got)
	}
	if diff := cmp.Diff([]string{"192.0.2.1"}, answers(l.addr(), "www.notx.test", dns.TypeA)); diff != "" {
		t.Errorf("www.notx.test A (-want +got):\n%s", diff)
	}
	if err := stop(); err != nil {
		t.Errorf("agent stopped with %v", err)
	}
}

// TestRealNamedDynamicZoneFromSplitFile: a dynamic zone whose rendered file
// is split over two zones ConfigMaps ($INCLUDE of a part) is seeded as one
// file with the part inlined, and its desired RRsets are read from that
// rendered file (agent.json carries no records): named loads the seed, the
// agent finds it converged without an UPDATE, then follows a change of the
// part by UPDATE.
func TestRealNamedDynamicZoneFromSplitFile(t *testing.T) {
	bindtools.RequireBIND(t)
	l := newLab(t)
	res := &fakeResolver{}
	res.set("lab-1.lab-headless", "127.0.0.2")
	l.writeKey("upd-tsig", l.secret)
	part := filepath.Join(l.zonesDir, "1", "dyn.test.zone.part-000")
	files := l.zoneFiles(1, "192.0.2.10")
	files["dyn.test.zone"] = []byte("$ORIGIN dyn.test.\n$TTL 300\n@ IN SOA ns.dyn.test. hostmaster.dyn.test. 1 300 60 1209600 60\n$INCLUDE " + part + "\n")
	writePart := func(www string) {
		if err := kubeletdir.Write(filepath.Join(l.zonesDir, "1"), map[string][]byte{
			"dyn.test.zone.part-000": []byte("@ IN NS ns.dyn.test.\nns IN A 192.0.2.53\nwww IN A " + www + "\ntxt IN TXT \"hello\"\n"),
		}); err != nil {
			t.Fatal(err)
		}
	}
	writePart("192.0.2.1")
	l.writeZones(files)
	doc := l.primaryDoc(nil)
	doc.DynamicZones[0].Records = nil
	doc.DynamicZones[0].Source = filepath.Join(l.zonesDir, "0", "dyn.test.zone")
	l.writeConfig(l.fixture(layout.NamedConfPrimary, nil), l.fixture(layout.NamedConfSecondary, nil), doc)
	a, stop := l.startConverging(res)

	seeded, err := os.ReadFile(filepath.Join(l.dataDir, "dyn.test.zone"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(seeded), "$INCLUDE") || !strings.Contains(string(seeded), "www IN A 192.0.2.1") {
		t.Errorf("seeded zone file does not inline its part:\n%s", seeded)
	}
	if diff := cmp.Diff([]string{"192.0.2.1"}, answers(l.addr(), "www.dyn.test", dns.TypeA)); diff != "" {
		t.Errorf("www.dyn.test A from the seed (-want +got):\n%s", diff)
	}
	m := a.State().Metrics()
	waitFor(t, bindtools.Hang, "a converged pass", func() bool {
		c := a.State().Snapshot().LastConvergence
		return c != nil && c.Error == "" && c.Unchanged == 3
	})
	if got := value(m.UpdatedRRsets.WithLabelValues(opReplace)); got != 0 {
		t.Errorf("update_rrsets_total{op=replace} = %v, want 0: the seed held every record", got)
	}
	writePart("192.0.2.2")
	waitFor(t, bindtools.Hang, "the changed part served, by UPDATE", func() bool {
		return cmp.Equal(answers(l.addr(), "www.dyn.test", dns.TypeA), []string{"192.0.2.2"})
	})
	// named serves the UPDATE before the agent's pass returns and counts it.
	waitFor(t, bindtools.Hang, "the pass that sent the UPDATE to end", func() bool {
		c := a.State().Snapshot().LastConvergence
		return c != nil && c.Updated > 0
	})
	if got := value(m.UpdatedRRsets.WithLabelValues(opReplace)); got != 1 {
		t.Errorf("update_rrsets_total{op=replace} = %v, want 1", got)
	}
	if err := stop(); err != nil {
		t.Errorf("agent stopped with %v", err)
	}
}
