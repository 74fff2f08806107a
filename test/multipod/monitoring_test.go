package multipod

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/agent/kubeletdir"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/monitoring"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// The monitored cluster (testdata/monitoring.yaml), and its control: the
// same package named ctl, which runs beside it, changed the same way but
// with no fault.
const (
	monCluster = "mon"
	monSvc     = "198.18.20.100"
	ctlCluster = "ctl"
	ctlSvc     = "198.18.21.100"
)

func monIP(i int) string { return fmt.Sprintf("198.18.20.%d", 10+i) }
func ctlIP(i int) string { return fmt.Sprintf("198.18.21.%d", 10+i) }

// monInputs is testdata/monitoring.yaml for the cluster name (mon or ctl).
func monInputs(t *testing.T, name string) Inputs {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "monitoring.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.NewReplacer("{name: mon,", "{name: "+name+",", "clusterRef: mon\n", "clusterRef: "+name+"\n").Replace(string(b))
	return Inputs(nil).add(t, filepath.Join("testdata", "monitoring.yaml"), []byte(text))
}

// alertHang bounds each wait for Prometheus: an alert's `for` (up to 5
// minutes here) plus a window of 5 minutes to clear. A hang guard, not a
// target: the test logs how long each took.
const alertHang = 15 * time.Minute

// TestMonitoringLab (docs/monitoring.md): a real Prometheus (Debian's
// package), started on loopback inside the lab, scrapes the agents of a
// three-pod cluster with the rules file the render made. On the healthy
// cluster no alert is even pending over two minutes of evaluations, and
// every query of the rendered dashboard returns series. Then, on real
// BIND, at once: transfers to mon-2 blocked (TCP 53 rejected in its
// namespace) while a zone changes and a new zone is added; a config named
// rejects on mon-1; the signed zone's policy cut to 3-day signatures; an
// unsigned UPDATE. Each alert the faults mean fires, on the pod (and
// zone, file) it is about; when the faults are removed each clears. A
// control cluster runs beside it all along, given the same zone changes
// without the faults: no alert of its is ever pending.
func TestMonitoringLab(t *testing.T) {
	// On the shipped release only (a quarter of an hour of alerts' `for`s):
	// the rules read the agent's metrics, the same on both releases, and the
	// 9.18 pass (make go-test-9.18) runs TestPrometheusScrapesAgent, a real
	// Prometheus over the agent and a real named 9.18.
	// BINDFN_MONITORING_ALL=1 runs it on 9.18 too.
	if bindtools.Current(t).Name != bindtools.BIND920.Name && os.Getenv("BINDFN_MONITORING_ALL") != "1" {
		t.Skipf("%s: TestMonitoringLab runs on BIND %s (BINDFN_MONITORING_ALL=1 runs it here too)", bindtools.Current(t), bindtools.BIND920.Name)
	}
	agentBin := requirements(t)
	promBin := bindtools.Prometheus(t, "prometheus")
	if !ownLab(t) {
		return
	}
	lab := newLab(t, filepath.Dir(agentBin))
	in, ctlIn := monInputs(t, monCluster), monInputs(t, ctlCluster)
	good, ctlGood := renderInputs(t, in, nil), renderInputs(t, ctlIn, nil)
	c := lab.startCluster(good, monCluster, podPlan{IP: monIP, PrimarySvc: monSvc})
	ctl := lab.startCluster(ctlGood, ctlCluster, podPlan{IP: ctlIP, PrimarySvc: ctlSvc})
	c.waitReady(hang)
	ctl.waitReady(hang)
	rc := good.Clusters[monCluster]
	if rc.ConfigMaps[layout.RulesConfigMapName(monCluster)] == nil || rc.ConfigMaps[layout.DashboardConfigMapName(monCluster)] == nil {
		t.Fatalf("the render made no rules file or dashboard ConfigMap")
	}
	begin := time.Now()
	prom := startPrometheus(t, promBin, []*Cluster{c, ctl}, []*Rendered{good, ctlGood})

	t.Run("healthy", func(t *testing.T) {
		// Traffic for the dashboard's query panels.
		for _, p := range append(slices.Clone(c.Pods), ctl.Pods...) {
			for _, name := range []string{"www.a.example", "nope.a.example"} {
				if _, err := query(p.Net.IP, name, dns.TypeA, q{}); err != nil {
					t.Fatal(err)
				}
			}
		}
		start := time.Now()
		iter := prom.Value(t, `min(prometheus_rule_group_iterations_total)`)
		// Two minutes of rule evaluations (every 2 s), counted, not slept.
		if err := eventually(alertHang, time.Second, func() error {
			if n := prom.Value(t, `min(prometheus_rule_group_iterations_total)`); n < iter+60 {
				return fmt.Errorf("%v rule evaluations since the start, want 60", n-iter)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		window := time.Since(start).Round(time.Second) + time.Second
		if got := prom.Series(t, fmt.Sprintf(`count_over_time(ALERTS[%ds])`, int(window.Seconds()))); len(got) > 0 {
			t.Errorf("alerts on the healthy cluster within %v (pending or firing): %v", window, got)
		} else {
			t.Logf("no alert pending or firing over %v of evaluations on the healthy cluster", window)
		}
		for _, e := range dashboardExprs(t, rc.ConfigMaps[layout.DashboardConfigMapName(monCluster)].Data[layout.DashboardFile(monCluster)]) {
			e = monitoring.Expand(e) // Grafana's "All", its $__rate_interval
			if got := prom.Series(t, e); len(got) == 0 {
				t.Errorf("dashboard query returns no series: %s", e)
			}
		}
	})
	if t.Failed() {
		return
	}

	// The faults.
	faulted := time.Now()
	block := blockTransfers(t, c.Pods[2])
	broken := in.
		Edit(t, "BindZone", "a-example", addRecord("changed", `"1"`)).
		Edit(t, "BindZone", "s-example", addRecord("changed", `"1"`)).
		Edit(t, "BindDNSSECPolicy", "sigpol", func(obj map[string]any) {
			spec(obj)["signaturesValidity"] = "P3D"
			spec(obj)["signaturesRefresh"] = "P1D"
		}).
		Add(t, newZone)
	r1 := renderInputs(t, broken, good)
	c.swap(r1)
	ctlR1 := renderInputs(t, ctlIn.Edit(t, "BindZone", "a-example", addRecord("changed", `"1"`)).Add(t, strings.Replace(newZone, "clusterRef: mon", "clusterRef: ctl", 1)), ctlGood)
	ctl.swap(ctlR1)
	if err := eventually(hang, 200*time.Millisecond, func() error {
		return expect(c.Pods[1].Net.IP, "ns1.new.example", dns.TypeA, q{}, dns.RcodeSuccess, []string{"198.18.20.10"})
	}); err != nil {
		t.Fatalf("mon-1 does not serve the new zone: %v", err)
	}
	badConfig(t, c.Pods[1], r1)
	refused := new(dns.Msg)
	refused.SetUpdate("a.example.")
	refused.Insert([]dns.RR{mustRR("evil.a.example. 60 IN A 192.0.2.66")})
	if r, _, err := client(q{tcp: true}).Exchange(refused, c.Pods[0].Net.IP+":53"); err != nil || r.Rcode != dns.RcodeRefused {
		t.Fatalf("an unsigned UPDATE: %v %v, want REFUSED", r, err)
	}
	want := []alertKey{
		{"BindZoneTransfersFailing", "mon-2", ""},
		{"BindSecondaryBehind", "mon-2", "a.example"},
		{"BindZoneNotLoaded", "mon-2", "new.example"},
		{"BindConfigNotApplied", "mon-1", ""},
		{"BindSignaturesExpiring", "mon-0", "s.example"},
		{"BindUpdatesRefused", "mon-0", ""},
	}
	t.Run("fire", func(t *testing.T) {
		// Every alert is watched at once: each fires after its own `for`,
		// and one about a single event (an UPDATE refused) clears again
		// 5 minutes later, before the slower ones fire.
		seen := map[alertKey]map[string]string{}
		err := eventually(alertHang, 2*time.Second, func() error {
			var missing []string
			for _, w := range want {
				if seen[w] != nil {
					continue
				}
				if got := prom.firing(t, w); len(got) > 0 {
					seen[w] = got[0]
					t.Logf("%s firing %v after the faults: %v", w, time.Since(faulted).Round(time.Second), got[0])
					continue
				}
				missing = append(missing, w.String())
			}
			if len(missing) > 0 {
				return fmt.Errorf("not fired: %s; firing: %v", strings.Join(missing, ", "), prom.Series(t, `ALERTS{alertstate="firing"}`))
			}
			return nil
		})
		if err != nil {
			t.Error(err)
		}
		if got := seen[alertKey{"BindConfigNotApplied", "mon-1", ""}]; got != nil && (got["file"] == "" || got["line"] == "") {
			t.Errorf("BindConfigNotApplied carries no file:line: %v", got)
		}
	})

	// The faults removed: transfers open, the good config, signatures of
	// the default lifetimes, and one more change of each zone so the
	// NOTIFYs send mon-2 after them at once.
	cleared := time.Now()
	block()
	fixedZone := strings.Replace(newZone, `"198.18.20.10"]}`, `"198.18.20.10"]}`+"\n    - {name: changed, type: TXT, values: [\"2\"]}", 1)
	fixed := in.
		Edit(t, "BindZone", "a-example", addRecord("changed", `"2"`)).
		Edit(t, "BindZone", "s-example", addRecord("changed", `"2"`)).
		Add(t, fixedZone)
	c.swap(renderInputs(t, fixed, r1))
	ctl.swap(renderInputs(t, ctlIn.Edit(t, "BindZone", "a-example", addRecord("changed", `"2"`)).Add(t, strings.Replace(fixedZone, "clusterRef: mon", "clusterRef: ctl", 1)), ctlR1))
	t.Run("clear", func(t *testing.T) {
		for _, w := range want {
			err := eventually(alertHang, 2*time.Second, func() error {
				if got := prom.active(t, w); len(got) > 0 {
					return fmt.Errorf("%s still active: %v", w, got)
				}
				return nil
			})
			if err != nil {
				t.Error(err)
				continue
			}
			t.Logf("%s cleared %v after the faults were removed", w, time.Since(cleared).Round(time.Second))
		}
	})
	t.Run("control", func(t *testing.T) {
		window := time.Since(begin).Round(time.Second) + time.Second
		alerts := func(matchers string) []map[string]string {
			return prom.Series(t, fmt.Sprintf(`count_over_time(ALERTS{%s=%q%s}[%ds])`, monitoring.ClusterLabel, ctlCluster, matchers, int(window.Seconds())))
		}
		// No alert fires: that is the promise of a healthy cluster. An
		// alert may go pending for a scrape or two while a change is
		// applied (BindSecondaryBehind compares samples of two pods
		// scraped at different moments; on a loaded machine a pod is
		// briefly unready while it applies a change): each alert's `for`
		// is what absorbs that, so pending ones are logged, not failed.
		if got := alerts(`,alertstate="firing"`); len(got) > 0 {
			t.Errorf("alerts fired on the control cluster (same changes, no fault) within %v: %v", window, got)
		}
		if !t.Failed() {
			t.Logf("no alert fired on the control cluster over %v, the faults' whole course; pending while a change was applied: %v", window, alerts(""))
		}
		if got := prom.Series(t, fmt.Sprintf(`up{%s=%q} == 1`, monitoring.ClusterLabel, ctlCluster)); len(got) != len(ctl.Pods) {
			t.Errorf("the control's pods up at the end: %v", got)
		}
	})
}

// newZone is added while mon-2 cannot transfer: it never loads there.
const newZone = `apiVersion: bind.unkin.net/v1alpha1
kind: BindZone
metadata: {name: new-example, namespace: dns}
spec:
  clusterRef: mon
  zoneName: new.example
  nameservers: [ns1.new.example.]
  soa: {refresh: 120, retry: 60}
  records:
    - {name: ns1, type: A, values: ["198.18.20.10"]}
`

// addRecord returns an edit that adds a TXT record to a BindZone.
func addRecord(name, value string) func(map[string]any) {
	return func(obj map[string]any) {
		recs, _ := spec(obj)["records"].([]any)
		spec(obj)["records"] = append(recs, map[string]any{"name": name, "type": "TXT", "values": []any{value}})
	}
}

// blockTransfers rejects every TCP connection to port 53 the pod opens to
// another address
// (its SOA queries, over UDP, still pass: it sees each new serial and
// fails to transfer it). It returns the function that lifts the block.
func blockTransfers(t *testing.T, p *Pod) func() {
	t.Helper()
	// eth0 only: the agent's own TCP queries to named over loopback pass.
	rule := []string{"OUTPUT", "-o", "eth0", "-p", "tcp", "--dport", "53", "-j", "REJECT", "--reject-with", "tcp-reset"}
	ipt := func(op string) {
		if out, err := exec.Command("ip", append([]string{"netns", "exec", p.Net.Name, "iptables", op}, rule...)...).CombinedOutput(); err != nil {
			t.Fatalf("iptables %s: %v: %s", op, err, out)
		}
	}
	ipt("-I")
	lifted := false
	t.Cleanup(func() {
		if !lifted {
			ipt("-D")
		}
	})
	return func() { ipt("-D"); lifted = true }
}

// badConfig swaps a config named-checkconf rejects into one pod's mount
// and waits until its agent reports the located error.
func badConfig(t *testing.T, p *Pod, r *Rendered) {
	t.Helper()
	files := map[string][]byte{}
	for k, v := range r.Clusters[monCluster].ConfigMaps[layout.ConfigMapName(monCluster)].Data {
		if strings.HasPrefix(k, "named.conf") {
			v = strings.Replace(v, "options {\n", "options {\n\tbogus-option yes;\n", 1)
		}
		files[k] = []byte(v)
	}
	if err := kubeletdir.Write(filepath.Join(p.Root, layout.MountedConfigDir), files); err != nil {
		t.Fatal(err)
	}
	if err := eventually(hang, 100*time.Millisecond, func() error {
		st, err := p.Status()
		if err != nil {
			return err
		}
		if st.LastError == nil || st.LastError.Line == 0 {
			return fmt.Errorf("%s: /status lastError = %+v, want a file:line", p.Name, st.LastError)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// alertKey names an alert on a pod, and the zone it is about ("" for a
// pod-wide alert): BindSecondaryBehind's zone label is zone_name.
type alertKey struct{ alert, pod, zone string }

func (k alertKey) String() string {
	if k.zone == "" {
		return k.alert + "{pod=" + k.pod + "}"
	}
	return k.alert + "{pod=" + k.pod + ",zone=" + k.zone + "}"
}

func (k alertKey) selector(state string) string {
	m := []string{`alertname="` + k.alert + `"`, `pod="` + k.pod + `"`}
	if state != "" {
		m = append(m, `alertstate="`+state+`"`)
	}
	switch {
	case k.zone != "" && k.alert == "BindSecondaryBehind":
		m = append(m, `zone_name="`+k.zone+`"`)
	case k.zone != "":
		m = append(m, `zone="`+k.zone+`"`)
	}
	return "ALERTS{" + strings.Join(m, ",") + "}"
}

// promLab is the lab's Prometheus, on loopback of the lab's namespace.
type promLab struct{ *bindtools.Prom }

// startPrometheus runs Debian's prometheus with each cluster's rendered
// rules file, scraping every pod's agent every 2 s with the labels the
// PodMonitor gives (pod, namespace, bindfn_cluster), and waits until every
// target is up.
func startPrometheus(t *testing.T, bin string, clusters []*Cluster, renders []*Rendered) *promLab {
	t.Helper()
	dir := t.TempDir()
	port := bindtools.FreePort(t)
	var targets, ruleFiles []string
	files := map[string]string{}
	npods := 0
	for i, c := range clusters {
		for _, p := range c.Pods {
			targets = append(targets, fmt.Sprintf(`  - targets: ["%s:%d"]
    labels: {pod: %s, namespace: %s, %s: %s}`, p.Net.IP, layout.DefaultMetricsPort, p.Name, c.Namespace, monitoring.ClusterLabel, c.Name))
			npods++
		}
		cm := renders[i].Clusters[c.Name].ConfigMaps[layout.RulesConfigMapName(c.Name)]
		if cm == nil {
			t.Fatalf("no rules file rendered for %s", c.Name)
		}
		name := c.Name + "-" + layout.RulesFile
		files[name] = cm.Data[layout.RulesFile]
		ruleFiles = append(ruleFiles, strconv.Quote(filepath.Join(dir, name)))
	}
	files["prometheus.yml"] = fmt.Sprintf(`global: {scrape_interval: 2s, scrape_timeout: 2s, evaluation_interval: 2s}
rule_files: [%s]
scrape_configs:
- job_name: prometheus # its own rule evaluations, counted by the healthy check
  static_configs:
  - targets: [%q]
- job_name: bind-fn
  static_configs:
%s
`, strings.Join(ruleFiles, ", "), fmt.Sprintf("127.0.0.1:%d", port), strings.Join(targets, "\n"))
	for name, body := range files {
		if name == "prometheus.yml" {
			continue // StartPrometheus writes it
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p := &promLab{bindtools.StartPrometheus(t, bin, dir, port, files["prometheus.yml"])}
	if err := eventually(hang, time.Second, func() error {
		up, err := p.Query(`up{job="bind-fn"} == 1`)
		if err != nil {
			return err
		}
		if len(up) != npods {
			return fmt.Errorf("%d of %d targets up", len(up), npods)
		}
		return nil
	}); err != nil {
		t.Fatalf("prometheus: %v", err)
	}
	t.Logf("prometheus %s scrapes %d pods", p.Base, npods)
	return p
}

// firing are the firing alerts k names; active, the firing or pending.
func (p *promLab) firing(t *testing.T, k alertKey) []map[string]string {
	return p.Series(t, k.selector("firing"))
}

func (p *promLab) active(t *testing.T, k alertKey) []map[string]string {
	return p.Series(t, k.selector(""))
}

// dashboardExprs are the queries of a rendered dashboard's panels.
func dashboardExprs(t *testing.T, dashboard string) []string {
	t.Helper()
	var d struct {
		Panels []struct {
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal([]byte(dashboard), &d); err != nil {
		t.Fatalf("the rendered dashboard: %v", err)
	}
	var out []string
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			out = append(out, tg.Expr)
		}
	}
	if len(out) == 0 {
		t.Fatal("the rendered dashboard has no queries")
	}
	return out
}
