package monitoring

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
)

// Panel is one dashboard panel: a title, what it shows (the panel's
// description, Grafana's (i) tooltip), a unit and its queries (each a
// PromQL expression and its legend).
type Panel struct {
	Title, Description, Unit, Kind string // Kind: "timeseries" or "table"
	Queries                        []Query
}

// Query is one panel target.
type Query struct {
	Expr, Legend string
}

// PodVariable is the dashboard's pod filter; the queries select
// pod=~"$pod" (Grafana's "All" is ".*").
const PodVariable = "$pod"

// RateInterval is the range of every rate(): Grafana's $__rate_interval,
// at least four scrape intervals, so a rate never sees fewer than two
// samples whatever the panel's resolution.
const RateInterval = "$__rate_interval"

// Expand is a dashboard query as Grafana sends it to Prometheus with the
// pod variable at "All" and the data source's default scrape interval
// (15 s, so $__rate_interval is 1m): what a test runs through the HTTP API.
func Expand(expr string) string {
	return strings.NewReplacer(PodVariable, ".*", RateInterval, "1m").Replace(expr)
}

// Panels returns the dashboard's panels: queries, answers by rcode and by
// result, per-zone serials, transfers in and out, config applies and their
// failures, dynamic updates, readiness. Every query is over series the
// agent always exports (counters start at zero), so each returns series on
// a running cluster.
func Panels(p Params) []Panel {
	s := func(extra ...string) string {
		return p.selector(append([]string{`pod=~"` + PodVariable + `"`}, extra...)...)
	}
	return []Panel{
		{Title: "Queries by type", Description: "Queries received per second, by query type (BIND's QTYPE counters, bind_incoming_queries_total).", Unit: "reqps", Kind: "timeseries", Queries: []Query{
			{fmt.Sprintf("sum by (type) (rate(bind_incoming_queries_total%s[$__rate_interval]))", s()), "{{type}}"}}},
		{Title: "Answers by rcode", Description: "Answers sent per second, by response code (bind_response_rcodes_total).", Unit: "reqps", Kind: "timeseries", Queries: []Query{
			{fmt.Sprintf("sum by (rcode) (rate(bind_response_rcodes_total%s[$__rate_interval]))", s()), "{{rcode}}"}}},
		{Title: "Query results", Description: "Answers per second by BIND's result class: Success, Referral, NXDOMAIN, SERVFAIL, ... (bind_responses_total).", Unit: "reqps", Kind: "timeseries", Queries: []Query{
			{fmt.Sprintf("sum by (result) (rate(bind_responses_total%s[$__rate_interval]))", s()), "{{result}}"}}},
		{Title: "SERVFAIL share", Description: "The share of each pod's answers that are SERVFAIL; BindServfailHigh fires above spec.monitoring.servfailPercent.", Unit: "percentunit", Kind: "timeseries", Queries: []Query{
			{fmt.Sprintf("sum by (pod) (rate(bind_responses_total%s[$__rate_interval])) / clamp_min(sum by (pod) (rate(bind_responses_total%s[$__rate_interval])), 1e-9)", s(`result="SERVFAIL"`), s()), "{{pod}}"}}},
		{Title: "Zone serials", Description: "Each pod's serial of each zone (bind_zone_serial): a secondary's row that differs from the primary's for long is BindSecondaryBehind.", Unit: "none", Kind: "table", Queries: []Query{
			{fmt.Sprintf("max by (pod, view, zone_name) (bind_zone_serial%s)", s()), "{{pod}} {{zone_name}}"}}},
		{Title: "Zone transfers in", Description: "Incoming zone transfers per second, succeeded and failed (BIND's XfrSuccess, XfrFail).", Unit: "ops", Kind: "timeseries", Queries: []Query{
			{fmt.Sprintf("sum by (pod) (rate(bind_zone_transfer_success_total%s[$__rate_interval]))", s()), "{{pod}} ok"},
			{fmt.Sprintf("sum by (pod) (rate(bind_zone_transfer_failure_total%s[$__rate_interval]))", s()), "{{pod}} failed"}}},
		{Title: "Zone transfers served", Description: "Outgoing zone transfers per second, done and refused (AXFR and IXFR to secondaries).", Unit: "ops", Kind: "timeseries", Queries: []Query{
			{fmt.Sprintf("sum by (pod) (rate(bind_server_zone_transfers_done_total%s[$__rate_interval]))", s()), "{{pod}} done"},
			{fmt.Sprintf("sum by (pod) (rate(bind_server_zone_transfers_rejected_total%s[$__rate_interval]))", s()), "{{pod}} rejected"}}},
		{Title: "Config applies", Description: "Config and zone changes the agent applied in the last hour, by rndc command, and the changes it could not apply, by stage.", Unit: "short", Kind: "timeseries", Queries: []Query{
			{fmt.Sprintf("sum by (pod, kind) (increase(bindfn_agent_reloads_total%s[1h]))", s()), "{{pod}} {{kind}}"},
			{fmt.Sprintf("sum by (pod, stage) (increase(bindfn_agent_reload_failures_total%s[1h]))", s()), "{{pod}} failed at {{stage}}"}}},
		{Title: "Config rejected", Description: "1 while a pod's mounted config is rejected (named-checkconf or rndc failed) and named serves the last one it accepted: BindConfigNotApplied.", Unit: "bool", Kind: "timeseries", Queries: []Query{
			{fmt.Sprintf("max by (pod) (bindfn_agent_config_error%s)", s()), "{{pod}}"}}},
		{Title: "Dynamic updates", Description: "UPDATE messages per second by BIND's result, and RRsets the agent writes by UPDATE for dynamic zones.", Unit: "ops", Kind: "timeseries", Queries: []Query{
			{fmt.Sprintf("sum by (result) (rate(bind_server_updates_total%s[$__rate_interval]))", s()), "{{result}}"},
			{fmt.Sprintf("sum by (op) (rate(bindfn_agent_update_rrsets_total%s[$__rate_interval]))", s()), "RRsets {{op}} by the agent"}}},
		{Title: "Ready pods", Description: "Pods whose every zone is loaded (the readiness probe), by role.", Unit: "short", Kind: "timeseries", Queries: []Query{
			{fmt.Sprintf("sum by (role) (bindfn_agent_ready%s * on (namespace, %s, pod) group_left (role) bindfn_agent_info%s)", s(), ClusterLabel, s()), "{{role}}"}}},
	}
}

// Dashboard returns the Grafana dashboard JSON (schemaVersion 39): a
// Prometheus datasource variable, a pod variable, and Panels in a grid of
// two columns. The uid is derived from the cluster, so each cluster's
// dashboard is its own.
func Dashboard(p Params) ([]byte, error) {
	type target struct {
		RefID        string `json:"refId"`
		Expr         string `json:"expr"`
		LegendFormat string `json:"legendFormat"`
		Datasource   any    `json:"datasource"`
	}
	ds := map[string]string{"type": "prometheus", "uid": "${datasource}"}
	var panels []any
	for i, pn := range Panels(p) {
		var ts []target
		for j, q := range pn.Queries {
			ts = append(ts, target{RefID: string(rune('A' + j)), Expr: q.Expr, LegendFormat: q.Legend, Datasource: ds})
		}
		panel := map[string]any{
			"id": i + 1, "type": pn.Kind, "title": pn.Title, "description": pn.Description, "datasource": ds, "targets": ts,
			"gridPos":     map[string]int{"h": 8, "w": 12, "x": (i % 2) * 12, "y": (i / 2) * 8},
			"fieldConfig": map[string]any{"defaults": map[string]any{"unit": pn.Unit}, "overrides": []any{}},
		}
		if pn.Kind == "table" {
			for k := range ts {
				ts[k].LegendFormat = ""
			}
			panel["targets"] = []any{map[string]any{"refId": "A", "expr": ts[0].Expr, "format": "table", "instant": true, "datasource": ds}}
		}
		panels = append(panels, panel)
	}
	title := "BIND " + p.Cluster
	if p.Namespace != "" {
		title += " (" + p.Namespace + ")"
	}
	d := map[string]any{
		"uid":           uid(p),
		"title":         title,
		"tags":          []string{"bind-fn", "dns"},
		"timezone":      "browser",
		"schemaVersion": 39,
		"editable":      false, // provisioned by the sidecar: an edit in the UI would not survive
		"refresh":       "30s",
		"time":          map[string]string{"from": "now-6h", "to": "now"},
		"panels":        panels,
		"annotations":   map[string]any{"list": []any{}},
		"templating": map[string]any{"list": []any{
			map[string]any{"name": "datasource", "type": "datasource", "query": "prometheus", "label": "Data source"},
			map[string]any{
				"name": "pod", "type": "query", "label": "Pod", "datasource": ds,
				"query":      fmt.Sprintf("label_values(bindfn_agent_info%s, pod)", p.selector()),
				"includeAll": true, "multi": true, "allValue": ".*", "refresh": 2,
				"current": map[string]any{"text": "All", "value": "$__all"},
			},
		}},
	}
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("cannot encode the dashboard: %w", err)
	}
	return append(b, '\n'), nil
}

// DashboardExprs are the dashboard's queries, in panel order, as written
// (with the $pod and $__rate_interval variables; Expand fills them).
func DashboardExprs(p Params) []string {
	var out []string
	for _, pn := range Panels(p) {
		for _, q := range pn.Queries {
			out = append(out, q.Expr)
		}
	}
	return out
}

// uid is a Grafana uid (at most 40 characters) for the cluster: a long
// name is cut and a hash of the whole added, so two clusters never share
// one.
func uid(p Params) string {
	u := "bind-fn-" + p.Namespace + "-" + p.Cluster
	if p.Namespace == "" {
		u = "bind-fn-" + p.Cluster
	}
	if len(u) > 40 {
		sum := sha256.Sum256([]byte(u))
		u = u[:31] + "-" + hex.EncodeToString(sum[:4])
	}
	return u
}
