// Package monitoring builds what Prometheus and Grafana read about one
// BindCluster: the alert rules (one group, every expression scoped to the
// cluster's series) and the Grafana dashboard. It is pure and a leaf: the
// metric names are the agent's (internal/agent: bindfn_agent_*, and BIND's
// statistics in bind_exporter's names, bind_*); internal/objects wraps the
// results in a PrometheusRule and ConfigMaps. docs/monitoring.md has a
// runbook section per alert; testdata/rules_test.yaml a promtool unit test
// per alert.
package monitoring

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ClusterLabel is the label every scraped series of a cluster carries,
// the BindCluster's name: the PodMonitor sets it, a plain scrape config
// copies it from the pods' app.kubernetes.io/instance label.
const ClusterLabel = "bindfn_cluster"

// Params scope and tune one cluster's rules and dashboard.
type Params struct {
	// Cluster and Namespace select the cluster's series (Namespace may be
	// empty: kustomize sets it later, and the series are then selected by
	// the cluster label alone).
	Cluster, Namespace string
	// SOARefresh is the longest SOA refresh of the cluster's zones: a
	// secondary polls its primary at least that often, so a serial behind
	// for longer is a fault, not a transfer on its way.
	SOARefresh time.Duration
	// SignatureExpiry: a signed zone whose earliest signature expires
	// sooner is an alert.
	SignatureExpiry time.Duration
	// ServfailRatio: the share of a pod's answers that may be SERVFAIL.
	ServfailRatio float64
}

// RuleFile is a Prometheus rules file (rule_files), and the spec of a
// PrometheusRule: the same groups.
type RuleFile struct {
	Groups []RuleGroup `json:"groups"`
}

// RuleGroup is one group of rules.
type RuleGroup struct {
	Name  string `json:"name"`
	Rules []Rule `json:"rules"`
}

// Rule is one alerting rule.
type Rule struct {
	Alert       string            `json:"alert"`
	Expr        string            `json:"expr"`
	For         string            `json:"for,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

// RunbookURL is where each alert's runbook_url points: the alert's section
// of docs/monitoring.md (the anchor is the lower-cased alert name).
const RunbookURL = "https://git.unkin.net/unkin/bind-fn/src/branch/main/docs/monitoring.md#"

// selector is the cluster's matchers, and extra ones, inside braces.
func (p Params) selector(extra ...string) string {
	m := []string{ClusterLabel + "=" + strconv.Quote(p.Cluster)}
	if p.Namespace != "" {
		m = append(m, "namespace="+strconv.Quote(p.Namespace))
	}
	return "{" + strings.Join(append(m, extra...), ",") + "}"
}

// promDuration writes d the way Prometheus does (1h30m, 5m, 45s).
func promDuration(d time.Duration) string {
	if d <= 0 {
		return "0s"
	}
	var b strings.Builder
	for _, u := range []struct {
		d time.Duration
		s string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}} {
		if n := d / u.d; n > 0 {
			fmt.Fprintf(&b, "%d%s", n, u.s)
			d -= n * u.d
		}
	}
	return b.String()
}

// by is the grouping every alert keeps: which cluster and pod.
const by = "namespace, " + ClusterLabel + ", pod"

// Rules returns the cluster's alert rules, one group named
// bind-fn.<namespace>.<cluster>. Each alert names the pod (and the zone or
// file) it is about, carries severity warning or critical, and links its
// runbook.
func Rules(p Params) RuleFile {
	s := p.selector
	days := p.SignatureExpiry.Hours() / 24
	rules := []Rule{
		{
			Alert: "BindZoneNotLoaded",
			Expr:  fmt.Sprintf("max by (%s, zone) (bindfn_agent_zone_unready%s) == 1", by, s()),
			For:   "5m", Labels: sev("critical"),
			Annotations: ann("Zone {{ $labels.zone }} is not loaded on {{ $labels.pod }}.",
				"named on {{ $labels.pod }} does not answer authoritatively for {{ $labels.zone }} (the agent's readiness check, also in /status unready): the zone file does not load, or a secondary has no copy yet."),
		},
		{
			Alert: "BindSecondaryBehind",
			Expr: fmt.Sprintf("(bind_zone_serial%[1]s * on (%[2]s) group_left () bindfn_agent_info%[3]s)\n"+
				"  != on (namespace, %[4]s, view, zone_name) group_left ()\n"+
				"max by (namespace, %[4]s, view, zone_name) (bind_zone_serial%[1]s * on (%[2]s) group_left () bindfn_agent_info%[5]s)",
				s(), by, s(`role="secondary"`), ClusterLabel, s(`role="primary"`)),
			For: promDuration(p.SOARefresh), Labels: sev("warning"),
			Annotations: ann("{{ $labels.pod }} serves {{ $labels.zone_name }} at serial {{ $value }}, not the primary's.",
				"The secondary's serial of {{ $labels.zone_name }} (view {{ $labels.view }}) has differed from the primary's for longer than the zones' SOA refresh ("+promDuration(p.SOARefresh)+"): NOTIFYs and refresh polls did not bring it up to date."),
		},
		{
			// Failures with no success: the pod cannot transfer. A failure
			// followed by a success is the ConfigMaps' arrival order (a
			// secondary that has a new zone before the primary does asks
			// for it, gets NOTAUTH, and transfers it on the primary's
			// NOTIFY); a zone that stays behind is BindSecondaryBehind's
			// and BindZoneNotLoaded's.
			Alert: "BindZoneTransfersFailing",
			Expr: fmt.Sprintf("sum by (%[1]s) (increase(bind_zone_transfer_failure_total%[2]s[5m])) > 0\n"+
				"unless sum by (%[1]s) (increase(bind_zone_transfer_success_total%[2]s[5m])) > 0", by, s()),
			For: "1m", Labels: sev("warning"),
			Annotations: ann("Zone transfers into {{ $labels.pod }} fail.",
				"Incoming zone transfers into {{ $labels.pod }} failed in the last 5 minutes and none succeeded (BIND's XfrFail and XfrSuccess): its primary refuses or cannot be reached on 53/TCP, or the transfer key differs."),
		},
		{
			Alert: "BindConfigNotApplied",
			Expr:  fmt.Sprintf("max by (%s, file, line) (bindfn_agent_config_error_info%s) == 1", by, s()),
			For:   "1m", Labels: sev("critical"),
			Annotations: ann("{{ $labels.pod }} did not apply its config{{ if $labels.file }} ({{ $labels.file }}:{{ $labels.line }}){{ end }}.",
				"The agent on {{ $labels.pod }} could not apply the mounted config (named-checkconf or rndc failed{{ if $labels.file }} at {{ $labels.file }}:{{ $labels.line }}{{ end }}); named keeps serving the last config it accepted. The message is in the pod's /status (lastError) and log."),
		},
		{
			Alert: "BindSignaturesExpiring",
			Expr: fmt.Sprintf("min by (%s, zone) (bindfn_agent_zone_signature_expiry_timestamp_seconds%s) - time() < %d",
				by, s(), int64(p.SignatureExpiry.Seconds())),
			For: "5m", Labels: sev("critical"),
			Annotations: ann("Signatures of {{ $labels.zone }} on {{ $labels.pod }} expire in {{ $value | humanizeDuration }}.",
				fmt.Sprintf("The earliest RRSIG (over the SOA and the DNSKEY RRset) of {{ $labels.zone }} that {{ $labels.pod }} serves expires within %g days: named is not re-signing it (keys missing, policy lifetimes too short, or a secondary with a stale copy). Validating resolvers fail the zone when it expires.", days)),
		},
		{
			// The agent's reading of the parental agents (internal/agent
			// dscheck.go): DS records there, none of which leads to a key
			// that signs the zone's DNSKEY RRset. A DS set with one valid
			// record among stale ones (a rollover under way) is fine.
			Alert: "BindDSMismatch",
			Expr: fmt.Sprintf("max by (%[1]s, zone, parental_agent) (bindfn_agent_zone_parent_ds%[2]s) > 0\n"+
				"unless max by (%[1]s, zone, parental_agent) (bindfn_agent_zone_parent_ds_valid%[2]s) > 0", by, s()),
			For: "10m", Labels: sev("critical"),
			Annotations: ann("The DS of {{ $labels.zone }} at {{ $labels.parental_agent }} matches none of its keys.",
				"The parental agent {{ $labels.parental_agent }} serves {{ $value }} DS record(s) for {{ $labels.zone }} and none of them leads to a DNSKEY that signs the zone's DNSKEY RRset as {{ $labels.pod }} serves it: the chain of trust is broken and validating resolvers answer SERVFAIL for the whole zone. The DS at the parent was changed or mistyped, or the zone's KSK was replaced without its DS."),
		},
		{
			Alert: "BindDSMissing",
			Expr:  fmt.Sprintf("max by (%s, zone, parental_agent) (bindfn_agent_zone_parent_ds%s) == 0", by, s()),
			For:   "1h", Labels: sev("warning"),
			Annotations: ann("{{ $labels.parental_agent }} serves no DS for {{ $labels.zone }}.",
				"The parental agent {{ $labels.parental_agent }} has served no DS for the signed zone {{ $labels.zone }} for an hour: the delegation is insecure (resolvers do not validate the zone) and a KSK rollover waits for the DS. Give the parent's operator the DS of the zone's KSK."),
		},
		{
			Alert: "BindUpdatesRefused",
			Expr:  fmt.Sprintf(`sum by (%s) (increase(bind_server_updates_total%s[5m])) > 0`, by, s(`result="rejected"`)),
			For:   "1m", Labels: sev("warning"),
			Annotations: ann("{{ $labels.pod }} refused dynamic updates.",
				"named on {{ $labels.pod }} refused UPDATE messages in the last 5 minutes (BIND's UpdateRej): a client without the zone's update key, or an update sent to a zone that takes none."),
		},
		{
			Alert: "BindServfailHigh",
			Expr: fmt.Sprintf("sum by (%[1]s) (rate(bind_responses_total%[2]s[10m]))\n  / sum by (%[1]s) (rate(bind_responses_total%[3]s[10m])) > %[4]g\n"+
				"and sum by (%[1]s) (rate(bind_responses_total%[3]s[10m])) > 0.05",
				by, s(`result="SERVFAIL"`), s(), p.ServfailRatio),
			For: "10m", Labels: sev("warning"),
			Annotations: ann("{{ $value | humanizePercentage }} of {{ $labels.pod }}'s answers are SERVFAIL.",
				fmt.Sprintf("More than %g%% of the answers of {{ $labels.pod }} over 10 minutes were SERVFAIL: a zone that does not load (or expired on a secondary), broken signatures, or failing forwarders.", p.ServfailRatio*100)),
		},
		{
			Alert: "BindPodNotReady",
			Expr:  fmt.Sprintf("max by (%s) (bindfn_agent_ready%s) == 0", by, s()),
			For:   "10m", Labels: sev("warning"),
			Annotations: ann("{{ $labels.pod }} is not Ready.",
				"Not every zone of {{ $labels.pod }}'s role is loaded, so its readiness probe fails and the serve Service does not send it queries."),
		},
		{
			Alert: "BindNamedDown",
			Expr:  fmt.Sprintf("max by (%s) (bindfn_agent_named_up%s) == 0", by, s()),
			For:   "5m", Labels: sev("critical"),
			Annotations: ann("named is not running on {{ $labels.pod }}.",
				"The agent on {{ $labels.pod }} reports named stopped (it restarts named; a crash loop stays here)."),
		},
		{
			Alert: "BindScrapeFailing",
			Expr:  fmt.Sprintf("max by (%s) (up%s) == 0", by, s()),
			For:   "5m", Labels: sev("warning"),
			Annotations: ann("Prometheus cannot scrape {{ $labels.pod }}.",
				"The agent's /metrics on {{ $labels.pod }} does not answer: the pod is gone or stuck, or a NetworkPolicy (spec.networkPolicy.metricsFrom) does not admit Prometheus."),
		},
		{
			Alert: "BindConvergenceFailing",
			Expr: fmt.Sprintf("sum by (%[1]s) (increase(bindfn_agent_update_convergence_total%[2]s[10m])) > 0\n"+
				"unless sum by (%[1]s) (increase(bindfn_agent_update_convergence_total%[3]s[10m])) > 0",
				by, s(`result="error"`), s(`result="ok"`)),
			For: "5m", Labels: sev("warning"),
			Annotations: ann("Dynamic zone convergence fails on {{ $labels.pod }}.",
				"The agent's passes that write the dynamic zones' records by UPDATE have failed for 10 minutes with no pass succeeding: the records named serves are not the rendered ones. The error is in /status (lastConvergence)."),
		},
	}
	for i := range rules {
		rules[i].Annotations["runbook_url"] = RunbookURL + strings.ToLower(rules[i].Alert)
	}
	name := "bind-fn." + p.Cluster
	if p.Namespace != "" {
		name = "bind-fn." + p.Namespace + "." + p.Cluster
	}
	return RuleFile{Groups: []RuleGroup{{Name: name, Rules: rules}}}
}

func sev(s string) map[string]string { return map[string]string{"severity": s} }

func ann(summary, description string) map[string]string {
	return map[string]string{"summary": summary, "description": description}
}
