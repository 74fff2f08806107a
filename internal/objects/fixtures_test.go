package objects

import (
	"bytes"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
)

func src(name string) diag.Source {
	return diag.Source{Ref: diag.ObjectRef{APIVersion: "bind.unkin.net/v1alpha1", Kind: "BindCluster", Namespace: "dns-system", Name: name}, File: "cluster.yaml"}
}

// defaulted returns a spec as the model defaults it.
func defaulted(sp v1alpha1.BindClusterSpec) v1alpha1.BindClusterSpec {
	if sp.Mode == "" {
		sp.Mode = v1alpha1.ModeAuthoritative
	}
	if sp.Replicas == 0 {
		sp.Replicas = 1
	}
	if sp.Image == "" {
		sp.Image = model.DefaultImage
	}
	if sp.Agent == nil {
		sp.Agent = &v1alpha1.AgentSpec{}
	}
	if sp.Agent.Image == "" {
		sp.Agent.Image = model.DefaultAgentImage
	}
	if sp.Agent.ResolveIntervalSeconds == 0 {
		sp.Agent.ResolveIntervalSeconds = model.DefaultResolve
	}
	if sp.Agent.MetricsPort == 0 {
		sp.Agent.MetricsPort = layout.DefaultMetricsPort
	}
	return sp
}

// minimalCluster has no namespace (kustomize sets it later) and defaults only.
func minimalCluster() *model.Cluster {
	return withResources(&model.Cluster{Src: src("dns"), Name: "dns", Spec: defaulted(v1alpha1.BindClusterSpec{}),
		Views: []*model.View{{Name: ""}}})
}

// withResources applies the model's resource defaults, as model.Build does.
func withResources(c *model.Cluster) *model.Cluster {
	var rs diag.Results
	model.ResolveResources(c, &rs)
	if rs.HasErrors() {
		panic(rs)
	}
	return c
}

// fullCluster sets every field the builders read.
func fullCluster() *model.Cluster {
	fast := "fast-ssd"
	lbClass := "metallb"
	c := &model.Cluster{
		Src:       src("ns"),
		Name:      "ns",
		Namespace: "dns-system",
		Spec: defaulted(v1alpha1.BindClusterSpec{
			Replicas:        3,
			Image:           "git.unkin.net/unkin/bind-fn/bind9:9.20.30-1-deb13u1.11",
			ImagePullPolicy: corev1.PullIfNotPresent,
			Agent:           &v1alpha1.AgentSpec{Image: "registry.example/bind-fn-agent:v1.2.3", MetricsPort: 9200},
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("100m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
				Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("512Mi")},
			},
			NodeSelector:      map[string]string{"role": "dns", "kubernetes.io/os": "linux"},
			Tolerations:       []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "dns", Effect: corev1.TaintEffectNoSchedule}},
			PriorityClassName: "system-cluster-critical",
			IPv6:              true,
			Storage:           &v1alpha1.StorageSpec{Size: "5Gi", StorageClassName: &fast},
			Service: &v1alpha1.ClusterServiceSpec{
				Type:              corev1.ServiceTypeLoadBalancer,
				Annotations:       map[string]string{"metallb.universe.tf/allow-shared-ip": "dns"},
				Labels:            map[string]string{"team": "platform", LabelManagedBy: "someone-else"},
				LoadBalancerIP:    "192.0.2.53",
				LoadBalancerClass: &lbClass,
			},
			PrimaryService: &v1alpha1.ClusterServiceSpec{Type: corev1.ServiceTypeNodePort, ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyCluster},
		}),
		HasViews: true,
		Views: []*model.View{
			{Name: "internal", Order: 10, MatchClients: []string{"10.0.0.0/8"}},
			{Name: "external", Order: 20, MatchClients: []string{"any"}},
		},
	}
	return withResources(c)
}

func fullPlan() PodPlan {
	return PodPlan{
		ZoneConfigMaps: []string{layout.ZonesConfigMapName("ns", 0), layout.ZonesConfigMapName("ns", 1)},
		// Unsorted and with a duplicate on purpose.
		KeySecrets: []string{"xfr.internal.tsig", "ddns-tsig", "ns-xfr-tsig", "ddns-tsig"},
		ConfigHash: "must-not-appear",
	}
}

func hiddenCluster() *model.Cluster {
	return withResources(&model.Cluster{Src: src("hidden"), Name: "hidden", Namespace: "dns-system",
		Spec:  defaulted(v1alpha1.BindClusterSpec{Replicas: 3, HiddenPrimary: true}),
		Views: []*model.View{{Name: ""}}})
}

// docs renders objects as one multi-document YAML stream.
func docs(t *testing.T, objs ...any) []byte {
	t.Helper()
	var b bytes.Buffer
	for i, o := range objs {
		y, err := YAML(o)
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		b.Write(y)
	}
	return b.Bytes()
}

// material is deterministic fake key material of n bytes.
func material(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + 1)
	}
	return b
}
