package validate

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/model"
)

func ptr[T any](v T) *T { return &v }

// TestCheckObjects: the Kubernetes values of a cluster, checked as the API
// server checks them (docs/design.md#nothing-refused: nothing fn-render emits is refused).
func TestCheckObjects(t *testing.T) {
	lb := corev1.ServiceTypeLoadBalancer
	cls := "x"
	cases := map[string]struct {
		reason string
		spec   v1alpha1.BindClusterSpec
		views  []*model.View
		want   []string // "severity field"
	}{
		"Clean": {reason: "defaults are fine", spec: v1alpha1.BindClusterSpec{}},
		"GoodValues": {reason: "valid labels, selector, classes and IPs", spec: v1alpha1.BindClusterSpec{
			NodeSelector: map[string]string{"kubernetes.io/os": "linux"}, PriorityClassName: "system-cluster-critical",
			Storage: &v1alpha1.StorageSpec{Size: "1Gi", StorageClassName: ptr("fast-ssd")},
			Service: &v1alpha1.ClusterServiceSpec{Type: lb, ClusterIP: "10.96.53.53", LoadBalancerIP: "192.0.2.53", LoadBalancerClass: ptr("example.com/lb"),
				Labels: map[string]string{"team": "dns"}, Annotations: map[string]string{"metallb.universe.tf/address-pool": "dns"}}}},
		"BadNodeSelector": {reason: "a node selector value with a space is refused by the API server", spec: v1alpha1.BindClusterSpec{NodeSelector: map[string]string{"zone": "eu west"}},
			want: []string{"error spec.nodeSelector"}},
		"BadNodeSelectorKey": {reason: "a node selector key with two slashes", spec: v1alpha1.BindClusterSpec{NodeSelector: map[string]string{"a/b/c": "x"}},
			want: []string{"error spec.nodeSelector"}},
		"BadStorageClass": {reason: "a storage class name is a DNS subdomain", spec: v1alpha1.BindClusterSpec{Storage: &v1alpha1.StorageSpec{Size: "1Gi", StorageClassName: ptr("Fast_SSD")}},
			want: []string{"error spec.storage.storageClassName"}},
		"BadPriorityClass": {reason: "a priority class name is a DNS subdomain", spec: v1alpha1.BindClusterSpec{PriorityClassName: "High Priority"},
			want: []string{"error spec.priorityClassName"}},
		"BadClusterIP": {reason: "a clusterIP that is no IP", spec: v1alpha1.BindClusterSpec{Service: &v1alpha1.ClusterServiceSpec{ClusterIP: "10.96.53"}},
			want: []string{"error spec.service.clusterIP"}},
		"LeadingZeroIP": {reason: "the API server refuses 010.96.0.10 (ambiguous octal)", spec: v1alpha1.BindClusterSpec{Service: &v1alpha1.ClusterServiceSpec{ClusterIP: "010.96.0.10"}},
			want: []string{"error spec.service.clusterIP"}},
		"BadLBIP": {reason: "a loadBalancerIP that is no IP", spec: v1alpha1.BindClusterSpec{Service: &v1alpha1.ClusterServiceSpec{Type: lb, LoadBalancerIP: "lb.example.com"}},
			want: []string{"error spec.service.loadBalancerIP"}},
		"BadLBClass": {reason: "a loadBalancerClass is a qualified name", spec: v1alpha1.BindClusterSpec{Service: &v1alpha1.ClusterServiceSpec{Type: lb, LoadBalancerClass: ptr("my lb")}},
			want: []string{"error spec.service.loadBalancerClass"}},
		"BadServiceLabel": {reason: "a Service label value over 63 characters", spec: v1alpha1.BindClusterSpec{Service: &v1alpha1.ClusterServiceSpec{Labels: map[string]string{"team": strings.Repeat("x", 64)}}},
			want: []string{"error spec.service.labels"}},
		"BadServiceAnnotation": {reason: "an annotation key with a space", spec: v1alpha1.BindClusterSpec{PrimaryService: &v1alpha1.ClusterServiceSpec{Annotations: map[string]string{"bad key": "x"}}},
			want: []string{"error spec.primaryService.annotations"}},
		"BadSize":      {reason: "size not a quantity", spec: v1alpha1.BindClusterSpec{Storage: &v1alpha1.StorageSpec{Size: "lots"}}, want: []string{"error spec.storage.size"}},
		"ZeroSize":     {reason: "size zero", spec: v1alpha1.BindClusterSpec{Storage: &v1alpha1.StorageSpec{Size: "0"}}, want: []string{"error spec.storage.size"}},
		"HiddenAlone":  {reason: "hidden primary without a secondary", spec: v1alpha1.BindClusterSpec{HiddenPrimary: true, Replicas: 1}, want: []string{"error spec.hiddenPrimary"}},
		"MetricsOn53":  {reason: "metrics port clashes with DNS", spec: v1alpha1.BindClusterSpec{Agent: &v1alpha1.AgentSpec{MetricsPort: 53}}, want: []string{"error spec.agent.metricsPort"}},
		"MetricsRNDC":  {reason: "metrics port clashes with rndc", spec: v1alpha1.BindClusterSpec{Agent: &v1alpha1.AgentSpec{MetricsPort: 953}}, want: []string{"error spec.agent.metricsPort"}},
		"ETPClusterIP": {reason: "ETP on ClusterIP is refused by the API server", spec: v1alpha1.BindClusterSpec{Service: &v1alpha1.ClusterServiceSpec{ExternalTrafficPolicy: "Local"}}, want: []string{"error spec.service.externalTrafficPolicy"}},
		"ETPClusterWithViews": {reason: "explicit Cluster hides client addresses views need",
			spec:  v1alpha1.BindClusterSpec{Service: &v1alpha1.ClusterServiceSpec{Type: lb, ExternalTrafficPolicy: "Cluster"}},
			views: []*model.View{{Name: "a", MatchClients: []string{"10.0.0.0/8"}}},
			want:  []string{"warning spec.service.externalTrafficPolicy"}},
		"LBFieldsOnClusterIP": {reason: "LB fields ignored on a ClusterIP primary Service",
			spec: v1alpha1.BindClusterSpec{PrimaryService: &v1alpha1.ClusterServiceSpec{LoadBalancerIP: "192.0.2.1", LoadBalancerClass: &cls}},
			want: []string{"warning spec.primaryService.loadBalancerIP", "warning spec.primaryService.loadBalancerClass"}},
		"Headless":    {reason: "clusterIP None on a VIP", spec: v1alpha1.BindClusterSpec{Service: &v1alpha1.ClusterServiceSpec{ClusterIP: "None"}}, want: []string{"error spec.service.clusterIP"}},
		"UnknownType": {reason: "ExternalName is not a DNS VIP", spec: v1alpha1.BindClusterSpec{Service: &v1alpha1.ClusterServiceSpec{Type: "ExternalName"}}, want: []string{"error spec.service.type"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			sp := tc.spec
			if sp.Agent == nil {
				sp.Agent = &v1alpha1.AgentSpec{MetricsPort: 9153}
			}
			if sp.Replicas == 0 {
				sp.Replicas = 1
			}
			c := &model.Cluster{Src: diag.Source{Ref: diag.ObjectRef{Kind: "BindCluster", Namespace: "dns", Name: "dns"}}, Name: "dns", Spec: sp, HasViews: tc.views != nil, Views: tc.views}
			var got []string
			for _, r := range checkObjects(c) {
				if r.Source != c.Src || r.Message == "" {
					t.Errorf("unlocated result %v", r)
				}
				got = append(got, string(r.Severity)+" "+r.Field)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
