package monitoring

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// lintDashboard checks the rules of grafana/dashboard-linter (its
// docs/rules) that apply to a dashboard of this kind, in that linter's
// rule names. The linter itself cannot be built here (every release since
// v0.1.0 imports grafana/loki/v3, which we do not take, and the module
// proxy refused v0.1.1 and the last commit before loki came in); its job/instance rules are for
// mixins that select by job and instance, where these dashboards select
// by cluster and pod (TestRulesScoped), and its PromQL parse is done by a
// real Prometheus, which evaluates every query (internal/agent
// TestPrometheusScrapesAgent, test/multipod TestMonitoringLab).
func lintDashboard(b []byte) []string {
	var d struct {
		Editable   bool `json:"editable"`
		Templating struct {
			List []struct {
				Name, Type, Label, Query string
				Refresh                  int
			} `json:"list"`
		} `json:"templating"`
		Panels []struct {
			Title, Description, Type string
			Datasource               struct{ UID string }
			FieldConfig              struct {
				Defaults struct{ Unit string }
			} `json:"fieldConfig"`
			Targets []struct {
				Expr       string
				Datasource struct{ UID string }
			}
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return []string{err.Error()}
	}
	var out []string
	add := func(rule, f string, a ...any) { out = append(out, rule+": "+fmt.Sprintf(f, a...)) }
	if d.Editable {
		add("uneditable-dashboard", "is editable; a provisioned dashboard should say editable: false")
	}
	ds := ""
	for _, v := range d.Templating.List {
		switch v.Type {
		case "datasource":
			ds = v.Name
			if v.Name != "datasource" || v.Label != "Data source" || v.Query != "prometheus" {
				add("template-datasource-rule", "data source variable %q labeled %q of %q, want datasource, Data source, prometheus", v.Name, v.Label, v.Query)
			}
		case "query":
			if v.Refresh != 2 {
				add("template-on-time-change-reload-rule", "variable %q refreshes %d, want 2 (on time range change)", v.Name, v.Refresh)
			}
		}
	}
	if ds == "" {
		add("template-datasource-rule", "no templated data source")
	}
	counter := regexp.MustCompile(`(?:\b([a-z]+)\()?\b([a-z_:]+_total)\b`)
	for _, p := range d.Panels {
		if p.Title == "" || p.Description == "" {
			add("panel-title-description-rule", "panel %q has no title or no description", p.Title)
		}
		if !validUnit[p.FieldConfig.Defaults.Unit] {
			add("panel-units-rule", "panel %q has unit %q, not one of Grafana's", p.Title, p.FieldConfig.Defaults.Unit)
		}
		for _, uid := range append([]string{p.Datasource.UID}, func() []string {
			var u []string
			for _, t := range p.Targets {
				u = append(u, t.Datasource.UID)
			}
			return u
		}()...) {
			if uid != "$"+ds && uid != "${"+ds+"}" {
				add("panel-datasource-rule", "panel %q uses data source %q, not the templated one", p.Title, uid)
			}
		}
		if len(p.Targets) == 0 {
			add("panel-no-targets-rule", "panel %q has no targets", p.Title)
		}
		for _, t := range p.Targets {
			for _, m := range regexp.MustCompile(`\b(i?rate)\([^\[]*\[([^\]]+)\]`).FindAllStringSubmatch(t.Expr, -1) {
				if m[2] != RateInterval {
					add("target-rate-interval-rule", "panel %q: %s over [%s], want [%s]", p.Title, m[1], m[2], RateInterval)
				}
			}
			for _, m := range counter.FindAllStringSubmatch(t.Expr, -1) {
				if f := m[1]; f != "rate" && f != "irate" && f != "increase" {
					add("target-counter-agg-rule", "panel %q: counter %s not inside rate, irate or increase", p.Title, m[2])
				}
			}
		}
	}
	return out
}

// validUnit are the units of the panels we render that Grafana knows
// (dashboard-linter's panel-units-rule list, from Grafana's
// valueFormats/categories.ts): a unit outside it renders as a bare number.
var validUnit = map[string]bool{"none": true, "short": true, "percent": true, "percentunit": true, "reqps": true, "ops": true, "bool": true, "s": true}

// TestDashboardLint: the rendered dashboard passes those rules, and each
// rule catches the fault it names.
func TestDashboardLint(t *testing.T) {
	b, err := Dashboard(lab)
	if err != nil {
		t.Fatal(err)
	}
	if got := lintDashboard(b); len(got) > 0 {
		t.Errorf("the dashboard fails the linter's rules:\n%s", strings.Join(got, "\n"))
	}
	cases := map[string]struct {
		from, to, want string
	}{
		"Editable":    {`"editable": false`, `"editable": true`, "uneditable-dashboard"},
		"Description": {`"description": "Queries received`, `"description": "", "x": "`, "panel-title-description-rule"},
		"RateRange":   {`[$__rate_interval]`, `[5m]`, "target-rate-interval-rule"},
		"Counter":     {`rate(bind_incoming_queries_total`, `(bind_incoming_queries_total`, "target-counter-agg-rule"},
		"Unit":        {`"unit": "reqps"`, `"unit": "requests"`, "panel-units-rule"},
		"Datasource":  {`"uid": "${datasource}"`, `"uid": "prom-1"`, "panel-datasource-rule"},
		"Refresh":     {`"refresh": 2`, `"refresh": 1`, "template-on-time-change-reload-rule"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if !strings.Contains(string(b), tc.from) {
				t.Fatalf("the dashboard has no %s to break", tc.from)
			}
			bad := strings.Replace(string(b), tc.from, tc.to, 1)
			got := strings.Join(lintDashboard([]byte(bad)), "\n")
			if !strings.Contains(got, tc.want+":") {
				t.Errorf("%s -> %s: want %s, got:\n%s", tc.from, tc.to, tc.want, got)
			}
		})
	}
}
