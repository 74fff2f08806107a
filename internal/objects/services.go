package objects

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
)

// Port names of the named container; Services target them by name.
const (
	PortDNS     = "dns"
	PortDNSTCP  = "dns-tcp"
	PortMetrics = "metrics"
)

// PodName is the name of the cluster's pod with ordinal i.
func PodName(c *model.Cluster, i int) string {
	return c.Name + "-" + strconv.Itoa(i)
}

func dnsServicePorts(c *model.Cluster) []corev1.ServicePort {
	return append([]corev1.ServicePort{
		{Name: PortDNS, Protocol: corev1.ProtocolUDP, Port: layout.DNSPort, TargetPort: intstr.FromString(PortDNS)},
		{Name: PortDNSTCP, Protocol: corev1.ProtocolTCP, Port: layout.DNSPort, TargetPort: intstr.FromString(PortDNSTCP)},
	}, tlsServicePorts(c)...)
}

// ipFamilyPolicy is PreferDualStack with spec.ipv6, else unset (the
// cluster's default, single stack).
func ipFamilyPolicy(c *model.Cluster) *corev1.IPFamilyPolicy {
	if c.Spec.IPv6 {
		return ptr(corev1.IPFamilyPolicyPreferDualStack)
	}
	return nil
}

// HeadlessService gives every pod its stable DNS name
// (<cluster>-<i>.<cluster>-headless), which the agents resolve to find their
// peers. publishNotReadyAddresses: the names must resolve before named is
// ready, or a secondary could never find the primary it must transfer from.
// It also carries the metrics port, for a ServiceMonitor/PodMonitor.
func HeadlessService(c *model.Cluster) *corev1.Service {
	ports := append(dnsServicePorts(c), corev1.ServicePort{
		Name: PortMetrics, Protocol: corev1.ProtocolTCP, Port: c.MetricsPort(), TargetPort: intstr.FromString(PortMetrics),
	})
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: objectMeta(c, layout.HeadlessServiceName(c.Name), ComponentServer, nil, nil),
		Spec: corev1.ServiceSpec{
			Type:                     corev1.ServiceTypeClusterIP,
			ClusterIP:                corev1.ClusterIPNone,
			Selector:                 SelectorLabels(c),
			PublishNotReadyAddresses: true,
			IPFamilyPolicy:           ipFamilyPolicy(c),
			Ports:                    ports,
		},
	}
}

// PrimaryService is the stable address of pod 0 (transfers, NOTIFY
// responses, dynamic updates). It selects pod 0 by the pod-name label the
// StatefulSet controller sets. It publishes pod 0 even when it is not ready:
// readiness means "may take serve-VIP queries" (see ServeService), and a
// hidden primary is never ready in that sense, yet must take transfers.
func PrimaryService(c *model.Cluster) *corev1.Service {
	sel := SelectorLabels(c)
	sel[LabelPodName] = PodName(c, 0)
	return service(c, layout.PrimaryServiceName(c.Name), ComponentPrimary, c.Spec.PrimaryService, sel, true)
}

// ServeService is the query VIP (53/UDP and 53/TCP) over every ready pod.
//
// Hidden primary (spec.hiddenPrimary): Service selectors are equality-only
// and every pod of a StatefulSet carries the same template labels, so no
// selector can say "every pod but 0" (the pod-index and pod-name labels can
// only pick one pod), and an Endpoints/EndpointSlice list would need pod IPs,
// which a render must never contain. The choice is readiness: the agent runs
// with --hidden-primary, and on ordinal 0 it answers /readyz with 503, so
// pod 0 never becomes an endpoint of this Service (which does not publish
// not-ready addresses), while the headless and primary Services publish it
// regardless. The costs are handled where they fall:
//   - the PodDisruptionBudget leaves pod 0 out (PodDisruptionBudget);
//   - the StatefulSet's rolling update allows two unavailable pods, pod 0
//     being one of them permanently, so secondaries still roll one at a time
//     (StatefulSet);
//   - the StatefulSet reports replicas-1 ready pods, so `kubectl rollout
//     status` and GitOps health checks that wait for every replica never
//     finish: say so in the docs (Flux: exclude the StatefulSet from
//     healthChecks, Argo CD: a health override).
//
// The clean alternative — a second StatefulSet for the secondaries with
// .spec.ordinals.start 1 — changes the pod names the agents resolve, so it
// belongs with the renderer and the agent, not here.
func ServeService(c *model.Cluster) *corev1.Service {
	return service(c, layout.ServeServiceName(c.Name), ComponentServe, c.Spec.Service, SelectorLabels(c), false)
}

// service builds a DNS Service tuned by a ClusterServiceSpec.
func service(c *model.Cluster, name, component string, s *v1alpha1.ClusterServiceSpec, selector map[string]string, publishNotReady bool) *corev1.Service {
	if s == nil {
		s = &v1alpha1.ClusterServiceSpec{}
	}
	typ := s.Type
	if typ == "" {
		typ = corev1.ServiceTypeClusterIP
	}
	svc := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: objectMeta(c, name, component, s.Labels, s.Annotations),
		Spec: corev1.ServiceSpec{
			Type:                     typ,
			ClusterIP:                s.ClusterIP,
			Selector:                 selector,
			PublishNotReadyAddresses: publishNotReady,
			IPFamilyPolicy:           ipFamilyPolicy(c),
			ExternalTrafficPolicy:    ExternalTrafficPolicy(c, s),
			Ports:                    dnsServicePorts(c),
		},
	}
	if typ == corev1.ServiceTypeLoadBalancer {
		svc.Spec.LoadBalancerIP = s.LoadBalancerIP
		if s.LoadBalancerClass != nil {
			svc.Spec.LoadBalancerClass = ptr(*s.LoadBalancerClass)
		}
	}
	return svc
}

// ExternalTrafficPolicy returns the policy of a Service tuned by s: the
// explicit one, else Local when the Service is reachable from outside
// (LoadBalancer or NodePort) and the cluster tells clients apart by address
// (ClientAddressesMatter), else unset (Kubernetes' Cluster). It is never set
// on a ClusterIP Service, where the API server refuses it.
func ExternalTrafficPolicy(c *model.Cluster, s *v1alpha1.ClusterServiceSpec) corev1.ServiceExternalTrafficPolicy {
	if s == nil || (s.Type != corev1.ServiceTypeLoadBalancer && s.Type != corev1.ServiceTypeNodePort) {
		return ""
	}
	if s.ExternalTrafficPolicy != "" {
		return s.ExternalTrafficPolicy
	}
	if c.ClientAddressesMatter() {
		return corev1.ServiceExternalTrafficPolicyLocal
	}
	return ""
}
