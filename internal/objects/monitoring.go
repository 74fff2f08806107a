package objects

import (
	"encoding/json"
	"maps"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/monitoring"
)

// Components of the monitoring objects (spec.monitoring).
const (
	ComponentMonitoring = "monitoring" // PodMonitor, PrometheusRule
	ComponentRules      = "prometheus-rules"
	ComponentDashboard  = "dashboard"
)

// MonitoringAPIVersion is prometheus-operator's API.
const MonitoringAPIVersion = "monitoring.coreos.com/v1"

// PodMonitor is prometheus-operator's PodMonitor, the fields the render
// sets (monitoring.coreos.com/v1; the operator's Go module is not a
// dependency for two small types).
type PodMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              PodMonitorSpec `json:"spec"`
}

// PodMonitorSpec selects the pods and their endpoints.
type PodMonitorSpec struct {
	Selector            metav1.LabelSelector `json:"selector"`
	PodMetricsEndpoints []PodMetricsEndpoint `json:"podMetricsEndpoints"`
}

// PodMetricsEndpoint is one scraped port.
type PodMetricsEndpoint struct {
	Port        string          `json:"port"`
	Path        string          `json:"path"`
	Relabelings []RelabelConfig `json:"relabelings,omitempty"`
}

// RelabelConfig is one relabeling of the targets.
type RelabelConfig struct {
	SourceLabels []string `json:"sourceLabels,omitempty"`
	TargetLabel  string   `json:"targetLabel,omitempty"`
	Replacement  *string  `json:"replacement,omitempty"`
	Action       string   `json:"action,omitempty"`
}

// PrometheusRule is prometheus-operator's PrometheusRule: its spec is a
// rules file's groups.
type PrometheusRule struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              monitoring.RuleFile `json:"spec"`
}

var (
	_ runtime.Object = (*PodMonitor)(nil)
	_ runtime.Object = (*PrometheusRule)(nil)
)

// DeepCopyObject implements runtime.Object.
func (p *PodMonitor) DeepCopyObject() runtime.Object { return jsonCopy(p) }

// DeepCopyObject implements runtime.Object.
func (p *PrometheusRule) DeepCopyObject() runtime.Object { return jsonCopy(p) }

// jsonCopy deep-copies a value of the two types above through JSON, which
// holds every field they have.
func jsonCopy[T any](v *T) *T {
	b, err := json.Marshal(v)
	if err != nil {
		panic("objects: cannot copy " + err.Error()) // programming error: plain fields only
	}
	out := new(T)
	if err := json.Unmarshal(b, out); err != nil {
		panic("objects: cannot copy " + err.Error())
	}
	return out
}

// MonitoringParams scope the cluster's rules and dashboard to its series.
func MonitoringParams(c *model.Cluster) monitoring.Params {
	m := c.Monitoring()
	return monitoring.Params{
		Cluster:         c.Name,
		Namespace:       c.Namespace,
		SOARefresh:      time.Duration(c.SOARefreshMax()) * time.Second,
		SignatureExpiry: time.Duration(m.SignatureExpiryDays) * 24 * time.Hour,
		ServfailRatio:   float64(m.ServfailPercent) / 100,
	}
}

// PodMonitorFor scrapes every pod of the cluster on the agent's port
// (/metrics) and labels the series bindfn_cluster=<cluster>, which the
// rules and the dashboard select by (the operator adds namespace and pod).
func PodMonitorFor(c *model.Cluster) *PodMonitor {
	name := c.Name
	return &PodMonitor{
		TypeMeta:   metav1.TypeMeta{APIVersion: MonitoringAPIVersion, Kind: "PodMonitor"},
		ObjectMeta: objectMeta(c, layout.PodMonitorName(c.Name), ComponentMonitoring, c.Monitoring().Labels, nil),
		Spec: PodMonitorSpec{
			Selector: metav1.LabelSelector{MatchLabels: SelectorLabels(c)},
			PodMetricsEndpoints: []PodMetricsEndpoint{{
				Port: PortMetrics,
				Path: "/metrics",
				Relabelings: []RelabelConfig{
					{TargetLabel: monitoring.ClusterLabel, Replacement: &name, Action: "replace"},
				},
			}},
		},
	}
}

// PrometheusRuleFor holds the cluster's alert rules.
func PrometheusRuleFor(c *model.Cluster) *PrometheusRule {
	return &PrometheusRule{
		TypeMeta:   metav1.TypeMeta{APIVersion: MonitoringAPIVersion, Kind: "PrometheusRule"},
		ObjectMeta: objectMeta(c, layout.PrometheusRuleName(c.Name), ComponentMonitoring, c.Monitoring().Labels, nil),
		Spec:       monitoring.Rules(MonitoringParams(c)),
	}
}

// RulesConfigMap holds the same rules as a plain Prometheus rules file
// (rules: the file's YAML).
func RulesConfigMap(c *model.Cluster, rules []byte) *corev1.ConfigMap {
	cm := ConfigMap(c, layout.RulesConfigMapName(c.Name), ComponentRules, map[string]string{layout.RulesFile: string(rules)}, nil)
	cm.Labels = withUserLabels(cm.Labels, c.Monitoring().Labels)
	return cm
}

// DashboardConfigMap holds the Grafana dashboard, labelled for Grafana's
// dashboard sidecar.
func DashboardConfigMap(c *model.Cluster, dashboard []byte) *corev1.ConfigMap {
	cm := ConfigMap(c, layout.DashboardConfigMapName(c.Name), ComponentDashboard, map[string]string{layout.DashboardFile(c.Name): string(dashboard)}, nil)
	cm.Labels = withUserLabels(cm.Labels, c.Monitoring().Labels)
	cm.Labels[layout.GrafanaDashboardLabel] = "1"
	return cm
}

// withUserLabels adds user labels under the managed ones (which win).
func withUserLabels(managed, user map[string]string) map[string]string {
	out := maps.Clone(user)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, managed)
	return out
}
