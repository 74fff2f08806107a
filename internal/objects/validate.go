package objects

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
)

// Validate reports what in a cluster's spec these builders cannot turn into
// objects the API server accepts, or would silently ignore. The builders
// never fail: run Validate first and render nothing on an error.
func Validate(c *model.Cluster) diag.Results {
	var rs diag.Results
	sp := c.Spec
	if sp.Storage != nil && sp.Storage.Size != "" {
		if q, err := resource.ParseQuantity(sp.Storage.Size); err != nil {
			rs.Errorf(c.Src, "spec.storage.size", "cannot use %q as a volume size: want a quantity such as \"1Gi\"", sp.Storage.Size)
		} else if q.Sign() <= 0 {
			rs.Errorf(c.Src, "spec.storage.size", "cannot use %q as a volume size: it must be positive", sp.Storage.Size)
		}
	}
	if sp.HiddenPrimary && sp.Replicas < 2 {
		rs.Errorf(c.Src, "spec.hiddenPrimary", "a hidden primary needs a secondary to answer queries: set spec.replicas to 2 or more, or drop spec.hiddenPrimary")
	}
	if mp := metricsPort(c); mp < 1 || mp > 65535 || mp == DNSPort || mp == layout.RNDCPort || mp == layout.StatisticsPort {
		rs.Errorf(c.Src, "spec.agent.metricsPort", "cannot use port %d for the agent: it must be 1-65535 and not %d (DNS), %d (rndc) or %d (statistics)", mp, DNSPort, layout.RNDCPort, layout.StatisticsPort)
	}
	checkService(&rs, c, "spec.service", sp.Service)
	checkService(&rs, c, "spec.primaryService", sp.PrimaryService)
	return rs
}

func checkService(rs *diag.Results, c *model.Cluster, field string, s *v1alpha1.ClusterServiceSpec) {
	if s == nil {
		return
	}
	typ := s.Type
	if typ == "" {
		typ = corev1.ServiceTypeClusterIP
	}
	external := typ == corev1.ServiceTypeLoadBalancer || typ == corev1.ServiceTypeNodePort
	switch typ {
	case corev1.ServiceTypeClusterIP, corev1.ServiceTypeNodePort, corev1.ServiceTypeLoadBalancer:
	default:
		rs.Errorf(c.Src, field+".type", "unknown Service type %q: want ClusterIP, NodePort or LoadBalancer", s.Type)
		return
	}
	if s.ClusterIP == corev1.ClusterIPNone {
		rs.Errorf(c.Src, field+".clusterIP", "cannot make this Service headless: it is a virtual IP (the headless Service is %q)", layout.HeadlessServiceName(c.Name))
	}
	switch s.ExternalTrafficPolicy {
	case "":
	case corev1.ServiceExternalTrafficPolicyLocal, corev1.ServiceExternalTrafficPolicyCluster:
		if !external {
			rs.Errorf(c.Src, field+".externalTrafficPolicy", "externalTrafficPolicy applies only to a LoadBalancer or NodePort Service, not %s: set %s.type or drop it", typ, field)
		} else if s.ExternalTrafficPolicy == corev1.ServiceExternalTrafficPolicyCluster && ClientAddressesMatter(c) {
			rs.Warnf(c.Src, field+".externalTrafficPolicy", "externalTrafficPolicy Cluster hides client addresses behind node addresses, but this cluster matches clients by address (views, ACLs, allow-query, allow-recursion or rate-limit): use Local")
		}
	default:
		rs.Errorf(c.Src, field+".externalTrafficPolicy", "unknown externalTrafficPolicy %q: want Local or Cluster", s.ExternalTrafficPolicy)
	}
	if typ != corev1.ServiceTypeLoadBalancer {
		if s.LoadBalancerIP != "" {
			rs.Warnf(c.Src, field+".loadBalancerIP", "%s", ignored("loadBalancerIP", typ))
		}
		if s.LoadBalancerClass != nil {
			rs.Warnf(c.Src, field+".loadBalancerClass", "%s", ignored("loadBalancerClass", typ))
		}
	}
}

func ignored(what string, typ corev1.ServiceType) string {
	return fmt.Sprintf("%s is ignored on a %s Service: set the type to LoadBalancer or drop it", what, typ)
}
