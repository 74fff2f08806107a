package objects

import (
	"testing"
)

// TestIsOutput: only objects a builder here makes are previous output
// (docs/design.md#nothing-refused: user objects that carry the managed-by label were dropped).
func TestIsOutput(t *testing.T) {
	l := func(comp string) map[string]string {
		return map[string]string{LabelManagedBy: ManagedBy, LabelName: AppName, LabelInstance: "dns", LabelComponent: comp, LabelPartOf: PartOf}
	}
	cases := map[string]struct {
		reason                string
		apiVersion, kind, obj string
		labels                map[string]string
		want                  bool
	}{
		"statefulset":    {reason: "the StatefulSet", apiVersion: "apps/v1", kind: "StatefulSet", obj: "dns", labels: l(ComponentServer), want: true},
		"config":         {reason: "the config ConfigMap", apiVersion: "v1", kind: "ConfigMap", obj: "dns-config", labels: l(ComponentConfig), want: true},
		"zones":          {reason: "a zones shard", apiVersion: "v1", kind: "ConfigMap", obj: "dns-zones-12", labels: l(ComponentZones), want: true},
		"primary svc":    {reason: "the primary Service", apiVersion: "v1", kind: "Service", obj: "dns-primary", labels: l(ComponentPrimary), want: true},
		"tsig":           {reason: "a key Secret of any name", apiVersion: "v1", kind: "Secret", obj: "ddns-tsig", labels: l(ComponentTSIG), want: true},
		"pdb":            {reason: "the PDB", apiVersion: "policy/v1", kind: "PodDisruptionBudget", obj: "dns", labels: l(ComponentServer), want: true},
		"dnssec keys":    {reason: "the DNSSEC key Secret", apiVersion: "v1", kind: "Secret", obj: "dns-dnssec", labels: l(ComponentDNSSECKeys), want: true},
		"dnssec ds":      {reason: "the DS ConfigMap", apiVersion: "v1", kind: "ConfigMap", obj: "dns-dnssec-ds", labels: l(ComponentDNSSECDS), want: true},
		"netpol":         {reason: "a NetworkPolicy with labels copied from the StatefulSet", apiVersion: "networking.k8s.io/v1", kind: "NetworkPolicy", obj: "dns", labels: l(ComponentServer)},
		"copied cm":      {reason: "a ConfigMap copied under another name", apiVersion: "v1", kind: "ConfigMap", obj: "my-settings", labels: l(ComponentConfig)},
		"other zones":    {reason: "zones of another instance", apiVersion: "v1", kind: "ConfigMap", obj: "dnsx-zones-0", labels: l(ComponentZones)},
		"no instance":    {reason: "the managed-by label alone", apiVersion: "v1", kind: "ConfigMap", obj: "dns-config", labels: map[string]string{LabelManagedBy: ManagedBy}},
		"podmonitor":     {reason: "the PodMonitor", apiVersion: "monitoring.coreos.com/v1", kind: "PodMonitor", obj: "dns", labels: l(ComponentMonitoring), want: true},
		"rule":           {reason: "the PrometheusRule", apiVersion: "monitoring.coreos.com/v1", kind: "PrometheusRule", obj: "dns", labels: l(ComponentMonitoring), want: true},
		"rules file":     {reason: "the rules file ConfigMap", apiVersion: "v1", kind: "ConfigMap", obj: "dns-prometheus-rules", labels: l(ComponentRules), want: true},
		"dashboard":      {reason: "the dashboard ConfigMap", apiVersion: "v1", kind: "ConfigMap", obj: "dns-dashboard", labels: l(ComponentDashboard), want: true},
		"user rule":      {reason: "a PrometheusRule of the user's with labels copied from ours", apiVersion: "monitoring.coreos.com/v1", kind: "PrometheusRule", obj: "dns-extra", labels: l(ComponentMonitoring)},
		"svc wrong comp": {reason: "a Service whose component does not match its name", apiVersion: "v1", kind: "Service", obj: "dns-extra", labels: l(ComponentServe)},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := IsOutput(tc.apiVersion, tc.kind, tc.obj, tc.labels); got != tc.want {
				t.Errorf("%s: IsOutput = %v, want %v", tc.reason, got, tc.want)
			}
		})
	}
}
