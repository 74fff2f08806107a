package multipod

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/testutil"
)

// TestSecondaryZoneLab: a type: secondary BindZone carries what BIND
// allows on a secondary zone, on real named. Two independent clusters on
// networks of their own (behind the multi-cluster lab's router): corp is
// the primary of apps.example.org and NOTIFYs edge's pods by the shared
// key; edge's pods hold the zone as a secondary of corp's primary Service
// address (198.19.40.200), while the NOTIFYs leave corp from its pod
// address. With allow-notify by key each edge pod takes them, so a TSIG
// UPDATE on corp is served on every edge pod (the zone's SOA refresh is an
// hour, longer than the test's bound: only a NOTIFY brings it), and no
// edge pod logs "refused notify". edge in turn feeds a downstream BIND
// (not bind-fn) by its keyed allowTransfer and NOTIFYs it (alsoNotify):
// the downstream transfers the zone with the key, an unsigned AXFR is
// refused, and the UPDATE reaches the downstream too. On the old main
// the allowTransfer and alsoNotify were dropped with a warning and edge's
// pods refused corp's NOTIFYs ("refused notify from non-primary").
func TestSecondaryZoneLab(t *testing.T) {
	agentBin := requirements(t)
	if !ownLab(t) {
		return
	}
	lab := newLab(t, path.Dir(agentBin))
	s0, s1 := lab.addSite(0), lab.addSite(1)
	lab.addRouter([]*site{s0, s1})
	in := Inputs(testutil.ReadItems(t, filepath.Join("testdata", "secondaryzone")))
	r := renderInputs(t, in, nil)
	corp := lab.startCluster(r, "corp", podPlan{IP: s0.ip, PrimarySvc: s0.primarySvc(), Net: s0.addNetns})
	corp.waitReady(hang)
	edge := lab.startCluster(r, "edge", podPlan{IP: s1.ip, PrimarySvc: s1.primarySvc(), Net: s1.addNetns})
	edge.waitReady(hang)
	for _, p := range edge.Pods {
		if err := eventually(hang, 100*time.Millisecond, func() error {
			return expect(p.Net.IP, "www.apps.example.org", dns.TypeA, q{}, dns.RcodeSuccess, []string{"192.0.2.80"})
		}); err != nil {
			t.Fatalf("%s: the secondary zone never loaded: %v", p.Name, err)
		}
	}
	down := startDownstream(t, lab, s1, edge)

	upd := corp.tsig(t, "apps-update-tsig")
	dk := edge.tsig(t, "downstream-tsig")
	t.Run("keyed-allow-transfer", func(t *testing.T) {
		for _, p := range edge.Pods {
			if _, err := axfrFrom(s1.host(), p.Net.IP, "apps.example.org", dk); err != nil {
				t.Errorf("%s: AXFR with the downstream key: %v", p.Name, err)
			}
			if rrs, err := axfr(p.Net.IP, "apps.example.org", nil); err == nil && len(rrs) > 0 {
				t.Errorf("%s: an unsigned AXFR succeeded", p.Name)
			}
		}
	})

	t.Run("notify-by-key-across-clusters", func(t *testing.T) {
		name := fmt.Sprintf("n-%x.apps.example.org.", time.Now().UnixNano()&0xffffff)
		if err := update(corp.PrimarySvc, "apps.example.org", upd, func(m *dns.Msg) { m.Insert([]dns.RR{mustRR(name + " 60 IN A 198.51.100.7")}) }); err != nil {
			t.Fatal(err)
		}
		for _, srv := range append(podIPs(edge.Pods), down.ip) {
			if err := eventually(hang, 100*time.Millisecond, func() error {
				return expect(srv, name, dns.TypeA, q{}, dns.RcodeSuccess, []string{"198.51.100.7"})
			}); err != nil {
				t.Errorf("%s never served the update made on corp: %v", srv, err)
			}
		}
		checkNoRefusedNotify(t, edge.Pods)
		if strings.Contains(down.log.String(), "refused notify") {
			t.Errorf("the downstream refused a NOTIFY of edge:\n%s", grep(down.log.String(), "refused notify"))
		}
		if !strings.Contains(grep(edge.Pods[0].Log.String(), "notify"), "198.19.40.10") {
			t.Logf("edge-0's NOTIFY lines:\n%s", grep(edge.Pods[0].Log.String(), "notify"))
		}
	})
}

// downstream is a plain BIND secondary outside bind-fn.
type downstream struct {
	ip  string
	log *syncLog
}

// startDownstream runs the host's named as a secondary of apps.example.org
// fed by edge's pods with the downstream key, and waits until it serves
// the zone.
func startDownstream(t *testing.T, lab *Lab, s *site, edge *Cluster) downstream {
	t.Helper()
	k := edge.tsig(t, "downstream-tsig")
	d := downstream{ip: sitePrefix(s.n) + ".150", log: &syncLog{}}
	dir := filepath.Join(lab.dir, "downstream")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var prim []string
	for _, p := range edge.Pods {
		prim = append(prim, fmt.Sprintf("%s key %q;", p.Net.IP, k.Name))
	}
	conf := fmt.Sprintf(`key %q { algorithm hmac-sha256; secret %q; };
options {
	directory %q; pid-file "named.pid"; session-keyfile "session.key";
	listen-on { %s; }; listen-on-v6 { none; }; recursion no; allow-transfer { none; }; notify no;
};
zone "apps.example.org" { type secondary; file "apps.db"; primaries { %s }; };
`, k.Name, k.Secret, dir, d.ip, strings.Join(prim, " "))
	if err := os.WriteFile(filepath.Join(dir, "named.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	n := s.addNetns("downstream", d.ip)
	named := mustLook(t, "named")
	lab.startProc(n, "", []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}, []string{"/bin/sh", "-c", "exec " + named + " -g -c " + filepath.Join(dir, "named.conf")}, d.log)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("--- log of the downstream ---\n%s", d.log.tail(40))
		}
	})
	if err := eventually(hang, 100*time.Millisecond, func() error {
		return expect(d.ip, "www.apps.example.org", dns.TypeA, q{}, dns.RcodeSuccess, []string{"192.0.2.80"})
	}); err != nil {
		t.Fatalf("the downstream never transferred the zone from edge: %v", err)
	}
	return d
}
