package render

import (
	"sigs.k8s.io/yaml"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/monitoring"
	"git.unkin.net/unkin/bind-fn/internal/objects"
)

// monitoringObjects adds what spec.monitoring asks for: the PodMonitor,
// the PrometheusRule, the rules file ConfigMap (the PrometheusRule's
// groups as a Prometheus rules file: the same rules, byte for byte the
// same expressions), the dashboard ConfigMap (docs/monitoring.md).
func monitoringObjects(c *model.Cluster, out *objectList) diag.Results {
	var rs diag.Results
	m := c.Monitoring()
	if m.PodMonitor {
		pm := objects.PodMonitorFor(c)
		out.add("podmonitor", pm.Name, pm)
	}
	if m.PrometheusRule {
		pr := objects.PrometheusRuleFor(c)
		out.add("prometheusrule", pr.Name, pr)
	}
	if m.RulesFile {
		b, err := yaml.Marshal(monitoring.Rules(objects.MonitoringParams(c)))
		if err != nil {
			rs.Errorf(c.Src, "spec.monitoring.rulesFile", "cannot encode the rules file: %v", err)
		} else {
			cm := objects.RulesConfigMap(c, b)
			out.add("configmap", cm.Name, cm)
		}
	}
	if m.Dashboard {
		b, err := monitoring.Dashboard(objects.MonitoringParams(c))
		if err != nil {
			rs.Errorf(c.Src, "spec.monitoring.dashboard", "%v", err)
		} else {
			cm := objects.DashboardConfigMap(c, b)
			out.add("configmap", cm.Name, cm)
		}
	}
	return rs
}
