package objects

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/model"
)

// TestNetworkPolicy: who each ingress rule admits, on which ports.
func TestNetworkPolicy(t *testing.T) {
	pods := func(name string) networkingv1.NetworkPolicyPeer {
		return networkingv1.NetworkPolicyPeer{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{LabelName: AppName, LabelInstance: name}}}
	}
	monitoring := networkingv1.NetworkPolicyPeer{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "monitoring"}}}
	block := networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: "192.0.2.0/24"}}
	// rule is one ingress rule, as ports and peers.
	type rule struct {
		Ports []string
		From  []networkingv1.NetworkPolicyPeer
	}
	dns := []string{"UDP/53", "TCP/53"}
	cases := map[string]struct {
		reason string
		c      *model.Cluster
		want   []rule // nil: no policy
	}{
		"disabled": {
			reason: "spec.networkPolicy.enabled: false renders none",
			c:      &model.Cluster{Name: "dns"},
		},
		"default": {
			reason: "DNS from every source, replication from the cluster's pods, no metrics rule",
			c:      &model.Cluster{Name: "dns", NetworkPolicy: &model.NetworkPolicy{}},
			want:   []rule{{Ports: dns}, {Ports: dns, From: []networkingv1.NetworkPolicyPeer{pods("dns")}}},
		},
		"knobs": {
			reason: "dnsFrom and metricsFrom as given, metrics on the cluster's own port",
			c: &model.Cluster{Name: "dns", Spec: v1alpha1.BindClusterSpec{Agent: &v1alpha1.AgentSpec{MetricsPort: 9200}},
				NetworkPolicy: &model.NetworkPolicy{DNSFrom: []networkingv1.NetworkPolicyPeer{block}, MetricsFrom: []networkingv1.NetworkPolicyPeer{monitoring}}},
			want: []rule{
				{Ports: dns, From: []networkingv1.NetworkPolicyPeer{block}},
				{Ports: dns, From: []networkingv1.NetworkPolicyPeer{pods("dns")}},
				{Ports: []string{"TCP/9200"}, From: []networkingv1.NetworkPolicyPeer{monitoring}},
			},
		},
		"linked": {
			reason: "a relay admits its primary cluster's pods and its secondary clusters' pods, own pods first, then by name",
			c: &model.Cluster{Name: "eu", NetworkPolicy: &model.NetworkPolicy{},
				Upstream:    &model.Upstream{Primary: &model.Cluster{Name: "corp"}},
				Downstreams: []*model.Downstream{{Cluster: &model.Cluster{Name: "eu-west"}}, {Cluster: &model.Cluster{Name: "eu-north"}}}},
			want: []rule{{Ports: dns}, {Ports: dns, From: []networkingv1.NetworkPolicyPeer{pods("eu"), pods("corp"), pods("eu-north"), pods("eu-west")}}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			np := NetworkPolicy(tc.c)
			if tc.want == nil {
				if np != nil {
					t.Fatalf("%s: got a NetworkPolicy, want none", tc.reason)
				}
				return
			}
			if np == nil {
				t.Fatalf("%s: got no NetworkPolicy", tc.reason)
			}
			var got []rule
			for _, r := range np.Spec.Ingress {
				g := rule{From: r.From}
				for _, p := range r.Ports {
					g.Ports = append(g.Ports, string(*p.Protocol)+"/"+p.Port.String())
				}
				got = append(got, g)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s: ingress rules (-want +got):\n%s", tc.reason, diff)
			}
			if diff := cmp.Diff([]networkingv1.PolicyType{networkingv1.PolicyTypeIngress}, np.Spec.PolicyTypes); diff != "" {
				t.Errorf("%s: policyTypes (-want +got):\n%s", tc.reason, diff)
			}
			if !IsOutput(np.APIVersion, np.Kind, np.Name, np.Labels) {
				t.Errorf("%s: the rendered NetworkPolicy is not recognised as output (IsOutput)", tc.reason)
			}
		})
	}
}
