package monitoring

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
	"git.unkin.net/unkin/bind-fn/internal/testutil/golden"
)

// lab are the parameters of the golden files, which the promtool unit
// tests (testdata/rules_test.yaml) and the multipod lab read: cluster
// "lab" in namespace "dns", the default thresholds.
var lab = Params{Cluster: "lab", Namespace: "dns", SOARefresh: 5 * time.Minute, SignatureExpiry: 7 * 24 * time.Hour, ServfailRatio: 0.05}

func TestGolden(t *testing.T) {
	rules, err := yaml.Marshal(Rules(lab))
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "golden", "rules.yaml"), rules)
	dash, err := Dashboard(lab)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, filepath.Join("testdata", "golden", "dashboard.json"), dash)
}

// TestPromtool runs the real promtool (Debian's prometheus package):
// `check rules` on the rendered rules file, and `test rules` on the unit
// tests, which hold at least one test per alert.
func TestPromtool(t *testing.T) {
	promtool := bindtools.Prometheus(t, "promtool")
	for _, args := range [][]string{
		{"check", "rules", filepath.Join("testdata", "golden", "rules.yaml")},
		{"test", "rules", filepath.Join("testdata", "rules_test.yaml")},
	} {
		out, err := exec.Command(promtool, args...).CombinedOutput()
		if err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
			continue
		}
		t.Logf("promtool %s:\n%s", strings.Join(args, " "), out)
	}
}

// TestEveryAlertTested: every alert has a promtool test that expects it to
// fire, and one that expects it silent; and a runbook section in
// docs/monitoring.md (a heading with the alert's name).
func TestEveryAlertTested(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "rules_test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var tf struct {
		Tests []struct {
			AlertRuleTests []struct {
				Alertname string `json:"alertname"`
				ExpAlerts []any  `json:"exp_alerts"`
			} `json:"alert_rule_test"`
		} `json:"tests"`
	}
	if err := yaml.Unmarshal(b, &tf); err != nil {
		t.Fatal(err)
	}
	fires, silent := map[string]bool{}, map[string]bool{}
	for _, tc := range tf.Tests {
		for _, a := range tc.AlertRuleTests {
			if len(a.ExpAlerts) > 0 {
				fires[a.Alertname] = true
			} else {
				silent[a.Alertname] = true
			}
		}
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "monitoring.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range Rules(lab).Groups[0].Rules {
		if !fires[r.Alert] {
			t.Errorf("%s: no promtool test expects it to fire", r.Alert)
		}
		if !silent[r.Alert] {
			t.Errorf("%s: no promtool test expects it silent", r.Alert)
		}
		if !regexp.MustCompile(`(?m)^### ` + r.Alert + `$`).Match(doc) {
			t.Errorf("%s: no runbook section (### %s) in docs/monitoring.md", r.Alert, r.Alert)
		}
	}
}

// TestRulesScoped: every selector in every rule and dashboard query names
// the cluster (and its namespace), so two clusters' alerts and panels
// never mix.
func TestRulesScoped(t *testing.T) {
	metric := regexp.MustCompile(`\b(bind_[a-z_]+|bindfn_[a-z_]+|up)(\{[^}]*\})?`)
	check := func(where, expr string) {
		for _, m := range metric.FindAllStringSubmatch(expr, -1) {
			if m[1] == ClusterLabel {
				continue // the label in a by (...) clause
			}
			if !strings.Contains(m[2], `bindfn_cluster="lab"`) || !strings.Contains(m[2], `namespace="dns"`) {
				t.Errorf("%s: %s%s does not select the cluster", where, m[1], m[2])
			}
		}
	}
	for _, r := range Rules(lab).Groups[0].Rules {
		check(r.Alert, r.Expr)
	}
	for _, e := range DashboardExprs(lab) {
		check("dashboard", e)
	}
}

// TestParams: the thresholds land in the rules.
func TestParams(t *testing.T) {
	p := lab
	p.SOARefresh, p.SignatureExpiry, p.ServfailRatio, p.Namespace = 90*time.Minute+30*time.Second, 3*24*time.Hour, 0.2, ""
	byName := map[string]Rule{}
	for _, r := range Rules(p).Groups[0].Rules {
		byName[r.Alert] = r
	}
	cases := map[string]struct {
		reason, alert, want string
		got                 func(Rule) string
	}{
		"Refresh":   {reason: "the longest SOA refresh is how long a serial may lag", alert: "BindSecondaryBehind", want: "1h30m30s", got: func(r Rule) string { return r.For }},
		"Expiry":    {reason: "signatureExpiryDays in seconds", alert: "BindSignaturesExpiring", want: "< 259200", got: func(r Rule) string { return r.Expr[strings.LastIndex(r.Expr, "<"):] }},
		"Servfail":  {reason: "servfailPercent as a ratio", alert: "BindServfailHigh", want: "> 0.2", got: func(r Rule) string { return regexp.MustCompile(`> 0\.[0-9]+`).FindString(r.Expr) }},
		"Namespace": {reason: "without a namespace the cluster label alone selects", alert: "BindPodNotReady", want: `bindfn_agent_ready{bindfn_cluster="lab"}`, got: func(r Rule) string { return regexp.MustCompile(`bindfn_agent_ready\{[^}]*\}`).FindString(r.Expr) }},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.got(byName[tc.alert])); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
	if got := Rules(p).Groups[0].Name; got != "bind-fn.lab" {
		t.Errorf("group without namespace = %q", got)
	}
}

// TestDashboardShape: the dashboard is JSON Grafana reads: unique panel
// ids, every target with an expression, the two variables.
func TestDashboardShape(t *testing.T) {
	b, err := Dashboard(lab)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		UID    string `json:"uid"`
		Panels []struct {
			ID      int `json:"id"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Name string `json:"name"`
			} `json:"list"`
		} `json:"templating"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	var ids []int
	var exprs []string
	for _, p := range d.Panels {
		if slices.Contains(ids, p.ID) {
			t.Errorf("panel id %d twice", p.ID)
		}
		ids = append(ids, p.ID)
		for _, tg := range p.Targets {
			if tg.Expr == "" {
				t.Errorf("panel %d: a target without expr", p.ID)
			}
			exprs = append(exprs, tg.Expr)
		}
	}
	if diff := cmp.Diff(DashboardExprs(lab), exprs); diff != "" {
		t.Errorf("DashboardExprs is not the dashboard's queries (-want +got):\n%s", diff)
	}
	var vars []string
	for _, v := range d.Templating.List {
		vars = append(vars, v.Name)
	}
	if diff := cmp.Diff([]string{"datasource", "pod"}, vars); diff != "" {
		t.Errorf("variables (-want +got):\n%s", diff)
	}
	if len(d.UID) > 40 || d.UID == "" {
		t.Errorf("uid %q: Grafana takes 1 to 40 characters", d.UID)
	}
	long := lab
	long.Cluster, long.Namespace = strings.Repeat("c", 40), "ns"
	other := long
	other.Cluster = strings.Repeat("c", 39) + "d"
	if uid(long) == uid(other) || len(uid(long)) > 40 {
		t.Errorf("long names: uids %q and %q", uid(long), uid(other))
	}
}

// TestIssueAlerts: every alert issue #40 asks for is one of the rules (and
// so, by TestEveryAlertTested, has promtool tests and a runbook section).
func TestIssueAlerts(t *testing.T) {
	asked := map[string]string{
		"a zone not loaded on a pod":                                   "BindZoneNotLoaded",
		"a secondary's serial behind the primary's beyond SOA refresh": "BindSecondaryBehind",
		"transfers failing":                                            "BindZoneTransfersFailing",
		"the agent unable to apply a config, with file:line":           "BindConfigNotApplied",
		"a signed zone whose signatures expire within N days":          "BindSignaturesExpiring",
		"a signed zone whose DS at the parent no longer matches":       "BindDSMismatch",
		"dynamic updates refused":                                      "BindUpdatesRefused",
		"the SERVFAIL share over a threshold":                          "BindServfailHigh",
		"a pod not Ready":                                              "BindPodNotReady",
		"the agent's convergence pass failing":                         "BindConvergenceFailing",
	}
	have := map[string]bool{}
	for _, r := range Rules(lab).Groups[0].Rules {
		have[r.Alert] = true
	}
	for what, alert := range asked {
		if !have[alert] {
			t.Errorf("%s: no rule %s", what, alert)
		}
	}
}
