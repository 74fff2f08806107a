package model_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"git.unkin.net/unkin/bind-fn/internal/model"
)

// got is what a test compares: the rendered quantities and cache size.
type gotResources struct {
	NamedRequests, NamedLimits map[string]string
	InitRequests, InitLimits   map[string]string
	Records                    int64
	RecursiveViews             int
	MaxCacheSizeMi             int64
}

func quantities(l corev1.ResourceList) map[string]string {
	out := map[string]string{}
	for k, v := range l {
		out[string(k)] = v.String()
	}
	return out
}

// zoneWith is a primary zone of n A records in one RRset.
func zoneWith(name, cluster, extra string, n int) string {
	vals := make([]string, n)
	for i := range vals {
		vals[i] = fmt.Sprintf("%q", fmt.Sprintf("192.0.2.%d", i%250+1))
	}
	return `{"clusterRef":"` + cluster + `","zoneName":"` + name + `","nameservers":["ns1.example.net."]` + extra +
		`,"records":[{"name":"www","type":"A","values":[` + strings.Join(vals, ",") + `]}]}`
}

func TestResources(t *testing.T) {
	mi := func(n int64) string { return fmt.Sprintf("%dMi", n) }
	base := model.BaseMemory >> 20
	cases := map[string]struct {
		reason string
		items  []model.Item
		want   gotResources
	}{
		"authoritative defaults": {
			reason: "an authoritative cluster without resources: base + the records, limit twice that, no cache (nothing recurses)",
			items:  []model.Item{item("BindCluster", "auth", `{}`), item("BindZone", "z", zoneWith("example.com", "auth", "", 1000))},
			want: gotResources{
				NamedRequests: map[string]string{"cpu": "100m", "memory": mi(model.MemoryRequest(1002, 0) >> 20)},
				NamedLimits:   map[string]string{"memory": mi(2 * model.MemoryRequest(1002, 0) >> 20)},
				InitRequests:  map[string]string{"cpu": "10m", "memory": "32Mi"},
				InitLimits:    map[string]string{"memory": "64Mi"},
				Records:       1002,
			},
		},
		"request follows records": {
			reason: "100,000 records ask for more memory than 1,000 (the zone-size part of the formula)",
			items:  []model.Item{item("BindCluster", "auth", `{}`), item("BindZone", "z", zoneWith("example.com", "auth", "", 100000))},
			want: gotResources{
				NamedRequests: map[string]string{"cpu": "100m", "memory": mi(model.MemoryRequest(100002, 0) >> 20)},
				NamedLimits:   map[string]string{"memory": mi(2 * model.MemoryRequest(100002, 0) >> 20)},
				InitRequests:  map[string]string{"cpu": "10m", "memory": "32Mi"},
				InitLimits:    map[string]string{"memory": "64Mi"},
				Records:       100002,
			},
		},
		"resolver defaults": {
			reason: "a resolver: a cache allowance in the request, max-cache-size half of what the limit leaves",
			items:  []model.Item{item("BindCluster", "res", `{"mode":"resolver"}`)},
			want: gotResources{
				NamedRequests:  map[string]string{"cpu": "100m", "memory": mi(base + 128)},
				NamedLimits:    map[string]string{"memory": mi(2 * (base + 128))},
				InitRequests:   map[string]string{"cpu": "10m", "memory": "32Mi"},
				InitLimits:     map[string]string{"memory": "64Mi"},
				RecursiveViews: 1,
				MaxCacheSizeMi: (2*(base+128) - base) / 2,
			},
		},
		"user limit": {
			reason: "the user's limit stays, the request defaults below it, and the cache follows the user's limit",
			items:  []model.Item{item("BindCluster", "res", `{"mode":"resolver","resources":{"limits":{"memory":"1Gi","cpu":"2"}}}`)},
			want: gotResources{
				NamedRequests:  map[string]string{"cpu": "100m", "memory": mi(base + 128)},
				NamedLimits:    map[string]string{"cpu": "2", "memory": "1Gi"},
				InitRequests:   map[string]string{"cpu": "10m", "memory": "32Mi"},
				InitLimits:     map[string]string{"memory": "64Mi"},
				RecursiveViews: 1,
				MaxCacheSizeMi: (1024 - base) / 2,
			},
		},
		"user request": {
			reason: "a request alone: the limit is twice it",
			items:  []model.Item{item("BindCluster", "res", `{"mode":"resolver","resources":{"requests":{"memory":"300Mi"}}}`)},
			want: gotResources{
				NamedRequests:  map[string]string{"cpu": "100m", "memory": "300Mi"},
				NamedLimits:    map[string]string{"memory": "600Mi"},
				InitRequests:   map[string]string{"cpu": "10m", "memory": "32Mi"},
				InitLimits:     map[string]string{"memory": "64Mi"},
				RecursiveViews: 1,
				MaxCacheSizeMi: (600 - base) / 2,
			},
		},
		"recursive views share": {
			reason: "each recursive view has a cache of its own: the size is divided among them; a view without recursion takes none",
			items: []model.Item{item("BindCluster", "res", `{"mode":"resolver","resources":{"limits":{"memory":"1Gi"}}}`),
				item("BindView", "a", `{"clusterRef":"res","order":1,"matchClients":["10.0.0.0/8"]}`),
				item("BindView", "b", `{"clusterRef":"res","order":2,"matchClients":["192.0.2.0/24"]}`),
				item("BindView", "c", `{"clusterRef":"res","order":3,"matchClients":["any"],"recursion":false}`)},
			want: gotResources{
				NamedRequests:  map[string]string{"cpu": "100m", "memory": mi(base + 2*128)},
				NamedLimits:    map[string]string{"memory": "1Gi"},
				InitRequests:   map[string]string{"cpu": "10m", "memory": "32Mi"},
				InitLimits:     map[string]string{"memory": "64Mi"},
				RecursiveViews: 2,
				MaxCacheSizeMi: (1024 - base) / 2 / 2,
			},
		},
		"user cache wins": {
			reason: "max-cache-size in extraOptions takes precedence: bind-fn renders none of its own",
			items:  []model.Item{item("BindCluster", "res", `{"mode":"resolver","extraOptions":["max-cache-size 64m"]}`)},
			want: gotResources{
				NamedRequests:  map[string]string{"cpu": "100m", "memory": mi(base + 128)},
				NamedLimits:    map[string]string{"memory": mi(2 * (base + 128))},
				InitRequests:   map[string]string{"cpu": "10m", "memory": "32Mi"},
				InitLimits:     map[string]string{"memory": "64Mi"},
				RecursiveViews: 1,
			},
		},
		"agent resources": {
			reason: "spec.agent.resources over the init container's defaults; a request above the default limit raises it",
			items:  []model.Item{item("BindCluster", "auth", `{"agent":{"resources":{"requests":{"memory":"100Mi"},"limits":{"cpu":"100m"}}}}`)},
			want: gotResources{
				NamedRequests: map[string]string{"cpu": "100m", "memory": mi(base)},
				NamedLimits:   map[string]string{"memory": mi(2 * base)},
				InitRequests:  map[string]string{"cpu": "10m", "memory": "100Mi"},
				InitLimits:    map[string]string{"cpu": "100m", "memory": "100Mi"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			set, rs := model.Decode(tc.items)
			clusters, brs := model.Build(set)
			if rs = append(rs, brs...); rs.HasErrors() {
				t.Fatalf("%s: unexpected results: %v", tc.reason, rs)
			}
			r := clusters[0].Resources
			got := gotResources{
				NamedRequests: quantities(r.Named.Requests), NamedLimits: quantities(r.Named.Limits),
				InitRequests: quantities(r.InstallAgent.Requests), InitLimits: quantities(r.InstallAgent.Limits),
				Records: r.Records, RecursiveViews: r.RecursiveViews, MaxCacheSizeMi: r.MaxCacheSize >> 20,
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

func TestResourcesErrors(t *testing.T) {
	cases := map[string]struct {
		reason string
		items  []model.Item
		want   []loc
		msg    string
	}{
		"cache above limit": {
			reason: "max-cache-size larger than the memory limit: named would be killed before the cache is full",
			items:  []model.Item{item("BindCluster", "res", `{"mode":"resolver","resources":{"limits":{"memory":"256Mi"}},"extraOptions":["minimal-responses yes","max-cache-size 300m"]}`)},
			want:   []loc{{"BindCluster", "res", "spec.extraOptions[1]"}},
			msg:    "hold more than the memory limit 256Mi",
		},
		"cache times views": {
			reason: "each recursive view has the cache: two views of 200m each are more than a 256Mi limit",
			items: []model.Item{item("BindCluster", "res", `{"mode":"resolver","resources":{"limits":{"memory":"256Mi"}},"extraOptions":["max-cache-size 200m"]}`),
				item("BindView", "a", `{"clusterRef":"res","order":1,"matchClients":["10.0.0.0/8"]}`),
				item("BindView", "b", `{"clusterRef":"res","order":2,"matchClients":["any"]}`)},
			want: []loc{{"BindCluster", "res", "spec.extraOptions[0]"}},
			msg:  "2 recursive view(s)",
		},
		"cache percentage": {
			reason: "a percentage is of the node's memory, not the pod's limit",
			items:  []model.Item{item("BindCluster", "res", `{"mode":"resolver","extraOptions":["max-cache-size 50%"]}`)},
			want:   []loc{{"BindCluster", "res", "spec.extraOptions[0]"}},
			msg:    "a percentage is of the memory named sees",
		},
		"cache unlimited": {
			reason: "unlimited lets the cache grow until the kernel kills named",
			items:  []model.Item{item("BindCluster", "res", `{"mode":"resolver","extraOptions":["max-cache-size unlimited"]}`)},
			want:   []loc{{"BindCluster", "res", "spec.extraOptions[0]"}},
			msg:    "unlimited bounds the cache by the node's memory",
		},
		"cache default": {
			reason: "default is BIND's 90% of the node's memory",
			items:  []model.Item{item("BindCluster", "res", `{"mode":"resolver","extraOptions":["max-cache-size default"]}`)},
			want:   []loc{{"BindCluster", "res", "spec.extraOptions[0]"}},
			msg:    "default bounds the cache",
		},
		"cache zero": {
			reason: "0 is no limit to BIND",
			items:  []model.Item{item("BindCluster", "res", `{"mode":"resolver","extraOptions":["max-cache-size 0"]}`)},
			want:   []loc{{"BindCluster", "res", "spec.extraOptions[0]"}},
			msg:    "0 means no limit",
		},
		"limit too small": {
			reason: "a limit that leaves a resolver no cache after named's base",
			items:  []model.Item{item("BindCluster", "res", `{"mode":"resolver","resources":{"limits":{"memory":"64Mi"}}}`)},
			want:   []loc{{"BindCluster", "res", "spec.resources.limits.memory"}},
			msg:    "raise it to at least",
		},
		"request above limit": {
			reason: "Kubernetes refuses a request above the limit",
			items:  []model.Item{item("BindCluster", "auth", `{"resources":{"requests":{"memory":"1Gi"},"limits":{"memory":"512Mi"}}}`)},
			want:   []loc{{"BindCluster", "auth", "spec.resources.requests.memory"}},
			msg:    "request 1Gi is more than the limit 512Mi",
		},
		"agent request above limit": {
			reason: "the init container's request above its limit",
			items:  []model.Item{item("BindCluster", "auth", `{"agent":{"resources":{"requests":{"cpu":"1"},"limits":{"cpu":"500m"}}}}`)},
			want:   []loc{{"BindCluster", "auth", "spec.agent.resources.requests.cpu"}},
			msg:    "request 1 is more than the limit 500m",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			set, rs := model.Decode(tc.items)
			_, brs := model.Build(set)
			rs = append(rs, brs...)
			rs.Sort()
			if diff := cmp.Diff(tc.want, locs(rs)); diff != "" {
				t.Fatalf("%s: located errors (-want +got):\n%s\nall results: %v", tc.reason, diff, rs)
			}
			if !strings.Contains(rs[0].Message, tc.msg) {
				t.Errorf("%s: message %q, want it to say %q", tc.reason, rs[0].Message, tc.msg)
			}
		})
	}
}
