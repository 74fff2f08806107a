package model_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/model"
)

// TestClientDefaults: a primary zone without nameservers gets the serve
// Service's cluster DNS name (and a warning); the update key transfers its
// dynamic zone unless updateKeyTransfer is false.
func TestClientDefaults(t *testing.T) {
	type zone struct {
		Nameservers   []string
		KeyTransfers  bool
		Warning       bool
		ClusterErrors int
	}
	cases := map[string]struct {
		reason  string
		cluster string
		zone    string
		want    zone
	}{
		"no nameservers": {
			reason:  "the old operator's zones had none: the serve Service's name in cluster.local",
			cluster: `{"replicas":2}`,
			zone:    `{"clusterRef":"auth","zoneName":"example.com"}`,
			want:    zone{Nameservers: []string{"auth.dns.svc.cluster.local."}, Warning: true},
		},
		"cluster domain": {
			reason:  "spec.clusterDomain ends the default name",
			cluster: `{"clusterDomain":"K8s.Example.Internal."}`,
			zone:    `{"clusterRef":"auth","zoneName":"example.com"}`,
			want:    zone{Nameservers: []string{"auth.dns.svc.k8s.example.internal."}, Warning: true},
		},
		"bad cluster domain": {
			reason:  "a cluster domain that is no host name is the cluster's error; the zone falls back quietly",
			cluster: `{"clusterDomain":"cluster_local"}`,
			zone:    `{"clusterRef":"auth","zoneName":"example.com"}`,
			want:    zone{Nameservers: []string{"auth.dns.svc.cluster.local."}, Warning: true, ClusterErrors: 1},
		},
		"nameservers given": {
			reason:  "given nameservers are kept, no warning",
			cluster: `{}`,
			zone:    `{"clusterRef":"auth","zoneName":"example.com","nameservers":["ns1.example.net."]}`,
			want:    zone{Nameservers: []string{"ns1.example.net."}},
		},
		"forward zone": {
			reason:  "only primary zones have an apex NS",
			cluster: `{}`,
			zone:    `{"clusterRef":"auth","zoneName":"example.com","type":"forward","forwarders":["192.0.2.1"]}`,
			want:    zone{},
		},
		"dynamic zone": {
			reason:  "a dynamic zone's update key transfers it by default",
			cluster: `{}`,
			zone:    `{"clusterRef":"auth","zoneName":"example.com","nameservers":["ns1.example.net."],"dynamicUpdate":true,"updateKeyRef":"k"}`,
			want:    zone{Nameservers: []string{"ns1.example.net."}, KeyTransfers: true},
		},
		"dynamic zone, transfer off": {
			reason:  "updateKeyTransfer: false turns it off",
			cluster: `{}`,
			zone:    `{"clusterRef":"auth","zoneName":"example.com","nameservers":["ns1.example.net."],"dynamicUpdate":true,"updateKeyRef":"k","updateKeyTransfer":false}`,
			want:    zone{Nameservers: []string{"ns1.example.net."}},
		},
		"static zone with a key": {
			reason:  "an update key without dynamicUpdate transfers nothing",
			cluster: `{}`,
			zone:    `{"clusterRef":"auth","zoneName":"example.com","nameservers":["ns1.example.net."],"updateKeyRef":"k"}`,
			want:    zone{Nameservers: []string{"ns1.example.net."}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			set, rs := model.Decode([]model.Item{
				item("BindCluster", "auth", tc.cluster),
				item("BindTSIGKey", "k", `{"clusterRef":"auth"}`),
				item("BindZone", "z", tc.zone),
			})
			if rs.HasErrors() {
				t.Fatalf("decode: %v", rs)
			}
			clusters, brs := model.Build(set)
			var got zone
			for _, r := range brs {
				switch {
				case r.Severity == diag.Warning && r.Source.Ref.Kind == "BindZone" && r.Field == "spec.nameservers":
					got.Warning = true
				case r.Severity == diag.Error && r.Source.Ref.Kind == "BindCluster" && r.Field == "spec.clusterDomain":
					got.ClusterErrors++
				default:
					t.Errorf("unexpected result %s", r)
				}
			}
			z := clusters[0].Views[0].Zones[0]
			got.Nameservers = z.Spec.Nameservers
			got.KeyTransfers = z.UpdateKeyTransfers()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}
