package objects

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
)

// NetworkPolicy is who may reach the cluster's pods, or nil when
// spec.networkPolicy.enabled is false. It selects the cluster's pods and
// admits, on ingress only:
//
//   - DNS, 53/UDP and 53/TCP, from spec.networkPolicy.dnsFrom (default:
//     every source);
//   - DNS from the cluster's own pods and the pods of the BindClusters it
//     replicates with (its primary cluster, its secondary clusters): SOA
//     queries, transfers and NOTIFYs, which the primary Service and the pod
//     addresses carry. A separate rule, so restricting dnsFrom never cuts
//     replication. Linked clusters are in the same namespace (their
//     primaryClusterRef says so), so a podSelector alone names them; when
//     they run in another Kubernetes cluster their traffic arrives from
//     addresses, which dnsFrom must list (docs/security.md);
//   - the agent's port from spec.networkPolicy.metricsFrom; without it no
//     rule: the kubelet's probes come from the node, which NetworkPolicy
//     implementations admit.
//
// Nothing else: named's control channel and statistics listen on loopback
// only. Egress is not restricted (policyTypes Ingress): the pods reach the
// API server, the cluster DNS, primary clusters and forwarders at
// addresses the render does not know.
func NetworkPolicy(c *model.Cluster) *networkingv1.NetworkPolicy {
	np := c.NetworkPolicy
	if np == nil {
		return nil
	}
	udp, tcp := corev1.ProtocolUDP, corev1.ProtocolTCP
	dns := []networkingv1.NetworkPolicyPort{
		{Protocol: &udp, Port: ptr(intstr.FromInt32(layout.DNSPort))},
		{Protocol: &tcp, Port: ptr(intstr.FromInt32(layout.DNSPort))},
	}
	// The DoT and DoH ports (spec.tls) admit the same peers: the
	// secondaries transfer over the DoT port.
	for _, p := range tlsContainerPorts(c) {
		dns = append(dns, networkingv1.NetworkPolicyPort{Protocol: &tcp, Port: ptr(intstr.FromInt32(p.ContainerPort))})
	}
	rules := []networkingv1.NetworkPolicyIngressRule{
		{Ports: dns, From: copyPeers(np.DNSFrom)},
		{Ports: dns, From: replicationPeers(c)},
	}
	if len(np.MetricsFrom) > 0 {
		rules = append(rules, networkingv1.NetworkPolicyIngressRule{
			Ports: []networkingv1.NetworkPolicyPort{{Protocol: &tcp, Port: ptr(intstr.FromInt32(c.MetricsPort()))}},
			From:  copyPeers(np.MetricsFrom),
		})
	}
	return &networkingv1.NetworkPolicy{
		TypeMeta:   metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"},
		ObjectMeta: objectMeta(c, layout.NetworkPolicyName(c.Name), ComponentNetworkPolicy, nil, nil),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: SelectorLabels(c)},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress:     rules,
		},
	}
}

// replicationPeers selects the cluster's own pods, then those of its
// primary and secondary clusters, by name.
func replicationPeers(c *model.Cluster) []networkingv1.NetworkPolicyPeer {
	peers := []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: SelectorLabels(c)}}}
	linked := map[string]*model.Cluster{}
	if c.Upstream != nil {
		linked[c.Upstream.Primary.Name] = c.Upstream.Primary
	}
	for _, d := range c.Downstreams {
		linked[d.Cluster.Name] = d.Cluster
	}
	names := make([]string, 0, len(linked))
	for n := range linked {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		peers = append(peers, networkingv1.NetworkPolicyPeer{PodSelector: &metav1.LabelSelector{MatchLabels: SelectorLabels(linked[n])}})
	}
	return peers
}

func copyPeers(in []networkingv1.NetworkPolicyPeer) []networkingv1.NetworkPolicyPeer {
	if len(in) == 0 {
		return nil
	}
	out := make([]networkingv1.NetworkPolicyPeer, len(in))
	for i := range in {
		in[i].DeepCopyInto(&out[i])
	}
	return out
}
