package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/agent/kubeletdir"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// TestRealNamedZoneByZone: with allow-new-zones and the zone statements in
// a file named.conf includes (a zones ConfigMap, as the sharded render lays
// them), adding, changing and removing one zone runs rndc addzone, modzone
// and delzone for that zone, never a reconfig; a bad zone is refused
// located in its own file while the others are served; and a reconfig, and
// a restart, after zones were added that way still load (named refuses a
// zone both in its NZD and in named.conf: the agent empties the NZD first).
func TestRealNamedZoneByZone(t *testing.T) {
	bindtools.RequireBIND(t)
	l := newLab(t)
	res := &fakeResolver{}
	res.set("lab-1.lab-headless", "127.0.0.2")
	l.writeKey("upd-tsig", l.secret)
	// The statements are in a zones ConfigMap of their own, as the
	// sharded render lays them (docs/state.md#shards).
	stmtsDir := filepath.Join(l.zonesDir, "2")
	include := "include \"" + filepath.Join(stmtsDir, "zones.primary.conf") + "\";"
	primary := func(extra string) []byte {
		return l.fixture(layout.NamedConfPrimary, map[string]string{"@EXTRA@": include + "\n" + extra})
	}
	// allow-new-zones goes into the options: the fixture has one options
	// block, so it is added there.
	withNewZones := func(b []byte) []byte {
		return []byte(strings.Replace(string(b), "recursion no;", "recursion no;\n\tallow-new-zones yes;", 1))
	}
	conf := func(extra string) []byte { return withNewZones(primary(extra)) }
	zoneStmt := func(name, extra string) string {
		return "zone \"" + name + "\" {\n\ttype primary;\n\tfile \"" + filepath.Join(l.zonesDir, "1", name+".zone") + "\";\n" + extra + "};\n"
	}
	modified := false
	doc := l.primaryDoc(nil)
	base := doc.PrimaryZones
	secondary := l.fixture(layout.NamedConfSecondary, nil)
	// writeStmts lays the zone statements, and the agent's list of zones
	// for readiness (agent.json here, a shard's agent-zones.json in a
	// render): the agent's lists are not named's.
	writeStmts := func(names ...string) {
		t.Helper()
		text := ""
		doc.PrimaryZones = base
		for _, n := range names {
			extra := ""
			if n == "two.test" && modified {
				extra = "\tnotify no;\n"
			}
			text += zoneStmt(n, extra)
			doc.PrimaryZones = append(doc.PrimaryZones, layout.ZoneRef{Zone: n})
		}
		if err := kubeletdir.Write(stmtsDir, map[string][]byte{"zones.primary.conf": []byte(text)}); err != nil {
			t.Fatal(err)
		}
		l.writeConfig(conf(""), secondary, doc)
	}
	zoneFile := func(ns string) []byte {
		return []byte("$TTL 300\n@ IN SOA ns hostmaster 1 300 60 1209600 60\n@ IN NS ns\nns IN A " + ns + "\n")
	}
	writeZoneFiles := func(files map[string][]byte) {
		t.Helper()
		if err := kubeletdir.Write(filepath.Join(l.zonesDir, "1"), files); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string][]byte{"one.test.zone": zoneFile("192.0.2.1"), "two.test.zone": zoneFile("192.0.2.2")}
	writeZoneFiles(files)
	l.writeZones(l.zoneFiles(1, "192.0.2.10"))
	writeStmts("one.test", "two.test")

	o := l.options(0, res)
	a, stop := l.run(o)
	waitFor(t, bindtools.Hang, "primary ready", func() bool { return a.State().Snapshot().Ready })
	pid := namedPID(t, l.runDir)
	m := a.State().Metrics()
	reconfigs := func() float64 { return value(m.Reloads.WithLabelValues(kindReconfig)) }
	zoneCmds := func() float64 { return value(m.Reloads.WithLabelValues(kindZone)) }
	applied := func(what string) {
		t.Helper()
		waitFor(t, bindtools.Hang, what, func() bool { return strings.Contains(l.logs.String(), what) })
	}
	noReconfig := func(before float64) {
		t.Helper()
		if got := reconfigs(); got != before {
			t.Errorf("reloads_total{kind=reconfig} = %v, was %v: a one-zone change reconfigured named", got, before)
		}
		if got := namedPID(t, l.runDir); got != pid {
			t.Errorf("named restarted: pid %s, was %s", got, pid)
		}
	}

	t.Run("Add", func(t *testing.T) {
		rc, zc := reconfigs(), zoneCmds()
		files["three.test.zone"] = zoneFile("192.0.2.3")
		writeZoneFiles(files)
		writeStmts("one.test", "two.test", "three.test")
		waitFor(t, bindtools.Hang, "added zone served", func() bool {
			return cmp.Equal(answers(l.addr(), "ns.three.test", dns.TypeA), []string{"192.0.2.3"})
		})
		applied(`rndc="addzone three.test`)
		noReconfig(rc)
		if got := zoneCmds(); got <= zc {
			t.Errorf("reloads_total{kind=zone} = %v, was %v", got, zc)
		}
	})

	t.Run("Modify", func(t *testing.T) {
		rc := reconfigs()
		files["two.test.zone"] = zoneFile("192.0.2.22")
		writeZoneFiles(files)
		modified = true
		writeStmts("one.test", "two.test", "three.test")
		waitFor(t, bindtools.Hang, "changed zone served", func() bool {
			return cmp.Equal(answers(l.addr(), "ns.two.test", dns.TypeA), []string{"192.0.2.22"})
		})
		applied(`rndc="modzone two.test`)
		noReconfig(rc)
	})

	t.Run("Remove", func(t *testing.T) {
		rc := reconfigs()
		writeStmts("two.test", "three.test")
		waitFor(t, bindtools.Hang, "removed zone gone", func() bool {
			r, err := query(l.addr(), "one.test", dns.TypeSOA)
			return err == nil && r.Rcode == dns.RcodeRefused
		})
		applied(`rndc="delzone one.test`)
		noReconfig(rc)
	})

	t.Run("BadZoneRefusedAlone", func(t *testing.T) {
		files["bad.test.zone"] = []byte("$TTL 300\n@ IN SOA ns hostmaster 1 300 60 1209600 60\n@ IN NS ns\nns IN A not-an-address\n")
		writeZoneFiles(files)
		writeStmts("two.test", "three.test", "bad.test")
		waitFor(t, bindtools.Hang, "error in status", func() bool { return a.State().Snapshot().LastError != nil })
		e := a.State().Snapshot().LastError
		if !strings.HasSuffix(e.File, "bad.test.zone") || e.Line != 4 {
			t.Errorf("lastError = %+v, want bad.test.zone:4", e)
		}
		for name, want := range map[string]string{"ns.two.test": "192.0.2.22", "ns.three.test": "192.0.2.3"} {
			if diff := cmp.Diff([]string{want}, answers(l.addr(), name, dns.TypeA)); diff != "" {
				t.Errorf("%s (-want +got):\n%s", name, diff)
			}
		}
		// Fixed: the zone is added.
		files["bad.test.zone"] = zoneFile("192.0.2.4")
		writeZoneFiles(files)
		waitFor(t, bindtools.Hang, "fixed zone served", func() bool {
			return a.State().Snapshot().LastError == nil && cmp.Equal(answers(l.addr(), "ns.bad.test", dns.TypeA), []string{"192.0.2.4"})
		})
	})

	t.Run("ReconfigAfterAddedZones", func(t *testing.T) {
		rc := reconfigs()
		l.writeConfig(withNewZones([]byte(strings.Replace(string(primary("")), "notify-rate 1000;", "notify-rate 900;", 1))), secondary, doc)
		waitFor(t, bindtools.Hang, "reconfig", func() bool { return reconfigs() > rc })
		if e := a.State().Snapshot().LastError; e != nil {
			t.Fatalf("reconfig after addzone failed: %+v", e)
		}
		for _, name := range []string{"ns.three.test", "ns.bad.test"} {
			if answers(l.addr(), name, dns.TypeA) == nil {
				t.Errorf("%s not served after the reconfig", name)
			}
		}
	})

	t.Run("RestartAfterAddedZones", func(t *testing.T) {
		files["four.test.zone"] = zoneFile("192.0.2.5")
		writeZoneFiles(files)
		writeStmts("two.test", "three.test", "bad.test", "four.test")
		waitFor(t, bindtools.Hang, "four.test served", func() bool { return answers(l.addr(), "ns.four.test", dns.TypeA) != nil })
		if err := stop(); err != nil {
			t.Fatalf("agent stopped with %v", err)
		}
		nzd, _ := filepath.Glob(filepath.Join(l.dataDir, "*.nz*"))
		if len(nzd) == 0 {
			t.Fatalf("no NZD in %s after addzone: the test would not show the restart", l.dataDir)
		}
		a2, stop2 := l.run(o)
		defer func() { _ = stop2() }()
		waitFor(t, bindtools.Hang, "restarted primary ready", func() bool { return a2.State().Snapshot().Ready })
		if answers(l.addr(), "ns.four.test", dns.TypeA) == nil {
			t.Error("four.test not served after the restart")
		}
	})
	if _, err := os.Stat(filepath.Join(l.runDir, zoneCheckFile)); err != nil {
		t.Errorf("no zone check config was written: %v", err)
	}
}
