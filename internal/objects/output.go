package objects

import (
	"regexp"
	"strings"

	"git.unkin.net/unkin/bind-fn/internal/layout"
)

var zonesShard = regexp.MustCompile(`-zones-[0-9]+$`)

// IsOutput reports whether an object is one bind-fn rendered: the kind and
// API version of a builder here, the managed labels, and the name its
// component gives the instance (the BindCluster). The adapters replace such
// objects with this render's output; every other object passes through,
// even one that carries app.kubernetes.io/managed-by: bind-fn (a
// NetworkPolicy whose labels were copied from the StatefulSet, a ConfigMap
// copied under another name).
func IsOutput(apiVersion, kind, name string, labels map[string]string) bool {
	if labels[LabelManagedBy] != ManagedBy || labels[LabelName] != AppName {
		return false
	}
	inst := labels[LabelInstance]
	if inst == "" {
		return false
	}
	comp := labels[LabelComponent]
	switch apiVersion + " " + kind {
	case "apps/v1 StatefulSet":
		return comp == ComponentServer && name == inst
	case "v1 ServiceAccount", "rbac.authorization.k8s.io/v1 Role", "rbac.authorization.k8s.io/v1 RoleBinding":
		return comp == ComponentServer && name == layout.AgentServiceAccountName(inst)
	case "policy/v1 PodDisruptionBudget":
		return comp == ComponentServer && name == layout.PDBName(inst)
	case "networking.k8s.io/v1 NetworkPolicy":
		return comp == ComponentNetworkPolicy && name == layout.NetworkPolicyName(inst)
	case MonitoringAPIVersion + " PodMonitor":
		return comp == ComponentMonitoring && name == layout.PodMonitorName(inst)
	case MonitoringAPIVersion + " PrometheusRule":
		return comp == ComponentMonitoring && name == layout.PrometheusRuleName(inst)
	case "v1 Service":
		switch comp {
		case ComponentServer:
			return name == layout.HeadlessServiceName(inst)
		case ComponentPrimary:
			return name == layout.PrimaryServiceName(inst)
		case ComponentServe:
			return name == layout.ServeServiceName(inst)
		}
	case CertManagerAPIVersion + " Certificate":
		return comp == ComponentTLS && name == layout.CertificateName(inst)
	case "v1 ConfigMap":
		switch comp {
		case ComponentConfig:
			return name == layout.ConfigMapName(inst)
		case ComponentZones:
			return strings.HasPrefix(name, inst) && zonesShard.MatchString(name) && len(zonesShard.ReplaceAllString(name, "")) == len(inst)
		case ComponentDNSSECDS:
			return name == layout.DSConfigMapName(inst)
		case ComponentRules:
			return name == layout.RulesConfigMapName(inst)
		case ComponentDashboard:
			return name == layout.DashboardConfigMapName(inst)
		}
	case "v1 Secret":
		switch comp {
		case ComponentRNDC:
			return name == layout.RNDCSecretName(inst)
		case ComponentKeys:
			return name == layout.KeysSecretName(inst)
		case ComponentDNSSECKeys:
			return name == layout.DNSSECSecretName(inst)
		case ComponentTSIG:
			return true // a BindTSIGKey's Secret takes any name the key gives it
		}
	}
	return false
}
