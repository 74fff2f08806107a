package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"sigs.k8s.io/yaml"

	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/monitoring"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// TestPrometheusScrapesAgent: a real Prometheus (Debian's) scrapes a real
// agent over a real named, with the alert rules of cluster "lab" in
// namespace "dns" (the labels the PodMonitor gives). No alert is pending
// over 30 rule evaluations of the healthy pod; every dashboard query
// returns series; a config named-checkconf rejects fires
// BindConfigNotApplied with its file and line, and the fixed config clears
// it. test/multipod TestMonitoringLab does the same on a cluster, with
// more faults.
func TestPrometheusScrapesAgent(t *testing.T) {
	bindtools.RequireBIND(t)
	promBin := bindtools.Prometheus(t, "prometheus")
	l, res := pod0Lab(t)
	secondary := l.fixture(layout.NamedConfSecondary, nil)
	l.writeConfig(l.fixture(layout.NamedConfPrimary, nil), secondary, l.primaryDoc(nil))
	o := l.options(0, res)
	httpAddr := make(chan string, 1)
	o.Started = func(a string) { httpAddr <- a }
	a, _ := l.run(o)
	agentAddr := <-httpAddr
	waitFor(t, bindtools.Hang, "primary ready", func() bool { return a.State().Snapshot().Ready })
	for _, name := range []string{"www.static.test", "nope.static.test"} {
		if _, err := query(l.addr(), name, dns.TypeA); err != nil {
			t.Fatal(err)
		}
	}

	params := monitoring.Params{Cluster: "lab", Namespace: "dns", SOARefresh: 5 * time.Minute, SignatureExpiry: 7 * 24 * time.Hour, ServfailRatio: 0.05}
	rules, err := yaml.Marshal(monitoring.Rules(params))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rulesFile := filepath.Join(dir, layout.RulesFile)
	if err := os.WriteFile(rulesFile, rules, 0o644); err != nil {
		t.Fatal(err)
	}
	port := bindtools.FreePort(t)
	prom := bindtools.StartPrometheus(t, promBin, dir, port, fmt.Sprintf(`global: {scrape_interval: 2s, scrape_timeout: 2s, evaluation_interval: 2s}
rule_files: [%q]
scrape_configs:
- job_name: prometheus
  static_configs: [{targets: ["127.0.0.1:%d"]}]
- job_name: bind-fn
  static_configs:
  - targets: [%q]
    labels: {pod: lab-0, namespace: dns, %s: lab}
`, rulesFile, port, agentAddr, monitoring.ClusterLabel))
	waitFor(t, bindtools.Hang, "the agent scraped", func() bool {
		res, err := prom.Query(`up{job="bind-fn"} == 1`)
		return err == nil && len(res) == 1
	})

	iter := prom.Value(t, `min(prometheus_rule_group_iterations_total)`)
	start := time.Now()
	waitFor(t, bindtools.Hang, "30 rule evaluations", func() bool {
		return prom.Value(t, `min(prometheus_rule_group_iterations_total)`) >= iter+30
	})
	window := time.Since(start).Round(time.Second) + time.Second
	if got := prom.Series(t, fmt.Sprintf(`count_over_time(ALERTS[%ds])`, int(window.Seconds()))); len(got) > 0 {
		t.Errorf("alerts on the healthy pod within %v: %v", window, got)
	}
	for _, e := range monitoring.DashboardExprs(params) {
		e = monitoring.Expand(e)
		if got := prom.Series(t, e); len(got) == 0 {
			t.Errorf("dashboard query returns no series: %s", e)
		}
	}

	broken := l.fixture(layout.NamedConfPrimary, map[string]string{"@EXTRA@": "zone \"broken.test\" { type primary; bogus-option yes; };"})
	l.writeConfig(broken, secondary, l.primaryDoc(nil))
	faulted := time.Now()
	var firing []map[string]string
	waitFor(t, 3*bindtools.Hang, "BindConfigNotApplied firing", func() bool {
		firing = prom.Series(t, `ALERTS{alertname="BindConfigNotApplied",alertstate="firing",pod="lab-0"}`)
		return len(firing) > 0
	})
	t.Logf("BindConfigNotApplied fired %v after the bad config: %v", time.Since(faulted).Round(time.Second), firing[0])
	if !strings.HasSuffix(firing[0]["file"], layout.NamedConfPrimary) || firing[0]["line"] == "" {
		t.Errorf("the alert does not carry named-checkconf's file:line: %v", firing[0])
	}
	l.writeConfig(l.fixture(layout.NamedConfPrimary, nil), secondary, l.primaryDoc(nil))
	fixed := time.Now()
	waitFor(t, bindtools.Hang, "BindConfigNotApplied cleared", func() bool {
		return len(prom.Series(t, `ALERTS{alertname="BindConfigNotApplied"}`)) == 0
	})
	t.Logf("BindConfigNotApplied cleared %v after the fixed config", time.Since(fixed).Round(time.Second))
}
