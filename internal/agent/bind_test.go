package agent

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/miekg/dns"

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
	l := newLab(t)
	res := &fakeResolver{}
	res.set("lab-1.lab-headless", "127.0.0.2")
	l.writeKey("upd-tsig", l.secret)
	l.writeZones(l.zoneFiles(1, "192.0.2.10"))
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

	time.Sleep(500 * time.Millisecond)
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
