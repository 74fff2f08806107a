package monitoring

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// Panel is one dashboard panel: a title, a unit and its queries (each a
// PromQL expression and its legend).
type Panel struct {
	Title, Unit, Kind string // Kind: "timeseries" or "table"
	Queries           []Query
}

// Query is one panel target.
type Query struct {
	Expr, Legend string
}

// PodVariable is the dashboard's pod filter; the queries select
// pod=~"$pod" (Grafana's "All" is ".*").
const PodVariable = "$pod"

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
		{Title: "Queries by type", Unit: "reqps", Kind: "timeseries", Queries: []Query{
			{fmt.Sprintf("sum by (type) (rate(bind_incoming_queries_total%s[5m]))", s()), "{{type}}"}}},
		{Title: "Answers by rcode", Unit: "reqps", Kind: "timeseries", Queries: []Query{
			{fmt.Sprintf("sum by (rcode) (rate(bind_response_rcodes_total%s[5m]))", s()), "{{rcode}}"}}},
		{Title: "Query results", Unit: "reqps", Kind: "timeseries", Queries: []Query{
			{fmt.Sprintf("sum by (result) (rate(bind_responses_total%s[5m]))", s()), "{{result}}"}}},
		{Title: "SERVFAIL share", Unit: "percentunit", Kind: "timeseries", Queries: []Query{
			{fmt.Sprintf("sum by (pod) (rate(bind_responses_total%s[5m])) / clamp_min(sum by (pod) (rate(bind_responses_total%s[5m])), 1e-9)", s(`result="SERVFAIL"`), s()), "{{pod}}"}}},
		{Title: "Zone serials", Unit: "none", Kind: "table", Queries: []Query{
			{fmt.Sprintf("max by (pod, view, zone_name) (bind_zone_serial%s)", s()), "{{pod}} {{zone_name}}"}}},
		{Title: "Zone transfers in", Unit: "ops", Kind: "timeseries", Queries: []Query{
			{fmt.Sprintf("sum by (pod) (rate(bind_zone_transfer_success_total%s[5m]))", s()), "{{pod}} ok"},
			{fmt.Sprintf("sum by (pod) (rate(bind_zone_transfer_failure_total%s[5m]))", s()), "{{pod}} failed"}}},
		{Title: "Zone transfers served", Unit: "ops", Kind: "timeseries", Queries: []Query{
			{fmt.Sprintf("sum by (pod) (rate(bind_server_zone_transfers_done_total%s[5m]))", s()), "{{pod}} done"},
			{fmt.Sprintf("sum by (pod) (rate(bind_server_zone_transfers_rejected_total%s[5m]))", s()), "{{pod}} rejected"}}},
		{Title: "Config applies", Unit: "short", Kind: "timeseries", Queries: []Query{
			{fmt.Sprintf("sum by (pod, kind) (increase(bindfn_agent_reloads_total%s[1h]))", s()), "{{pod}} {{kind}}"},
			{fmt.Sprintf("sum by (pod, stage) (increase(bindfn_agent_reload_failures_total%s[1h]))", s()), "{{pod}} failed at {{stage}}"}}},
		{Title: "Config rejected", Unit: "bool", Kind: "timeseries", Queries: []Query{
			{fmt.Sprintf("max by (pod) (bindfn_agent_config_error%s)", s()), "{{pod}}"}}},
		{Title: "Dynamic updates", Unit: "ops", Kind: "timeseries", Queries: []Query{
			{fmt.Sprintf("sum by (result) (rate(bind_server_updates_total%s[5m]))", s()), "{{result}}"},
			{fmt.Sprintf("sum by (op) (rate(bindfn_agent_update_rrsets_total%s[5m]))", s()), "RRsets {{op}} by the agent"}}},
		{Title: "Ready pods", Unit: "short", Kind: "timeseries", Queries: []Query{
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
			"id": i + 1, "type": pn.Kind, "title": pn.Title, "datasource": ds, "targets": ts,
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
		"editable":      true,
		"refresh":       "30s",
		"time":          map[string]string{"from": "now-6h", "to": "now"},
		"panels":        panels,
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

// DashboardExprs are the dashboard's queries, in panel order, as Grafana
// sends them (the pod variable at its "All" value, .*).
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
