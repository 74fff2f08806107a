package layout

// Monitoring objects (spec.monitoring, docs/monitoring.md): names the
// render gives them and the keys of the ConfigMaps Prometheus and Grafana
// mount.
const (
	// RulesFile is the key of the rules ConfigMap: a Prometheus rules file.
	RulesFile = "bind-fn.rules.yaml"
	// GrafanaDashboardLabel marks a ConfigMap Grafana's dashboard sidecar
	// loads (its default LABEL, with any value).
	GrafanaDashboardLabel = "grafana_dashboard"
)

// PodMonitorName is the cluster's PodMonitor; PrometheusRuleName its
// PrometheusRule.
func PodMonitorName(cluster string) string     { return cluster }
func PrometheusRuleName(cluster string) string { return cluster }

// RulesConfigMapName is the ConfigMap of the plain rules file.
func RulesConfigMapName(cluster string) string { return cluster + "-prometheus-rules" }

// DashboardConfigMapName is the ConfigMap of the Grafana dashboard.
func DashboardConfigMapName(cluster string) string { return cluster + "-dashboard" }

// DashboardFile is the dashboard's key in its ConfigMap (the sidecar
// writes each key as a file; one name per cluster keeps them apart).
func DashboardFile(cluster string) string { return "bind-fn-" + cluster + ".json" }
