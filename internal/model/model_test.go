package model_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/model"
)

func item(kind, name, js string) model.Item {
	return model.Item{
		Source: diag.Source{Ref: diag.ObjectRef{APIVersion: "bind.unkin.net/v1alpha1", Kind: kind, Namespace: "dns", Name: name}, File: kind + ".yaml"},
		JSON:   []byte(`{"apiVersion":"bind.unkin.net/v1alpha1","kind":"` + kind + `","metadata":{"name":"` + name + `","namespace":"dns"},"spec":` + js + `}`),
	}
}

type loc struct{ Kind, Name, Field string }

func locs(rs diag.Results) []loc {
	var out []loc
	for _, r := range rs {
		if r.Severity == diag.Error {
			out = append(out, loc{r.Source.Ref.Kind, r.Source.Ref.Name, r.Field})
		}
	}
	return out
}

func TestDecodeAndBuild(t *testing.T) {
	cluster := item("BindCluster", "auth", `{"replicas":2}`)
	cases := map[string]struct {
		reason string
		items  []model.Item
		want   []loc
	}{
		"clean": {
			reason: "a cluster with a zone and a record resolves without results",
			items: []model.Item{cluster,
				item("BindZone", "z", `{"clusterRef":"auth","zoneName":"example.com"}`),
				item("DNSRecord", "r", `{"zoneRef":"z","name":"www","type":"A","values":["192.0.2.1"]}`)},
		},
		"unknown field": {
			reason: "an unknown field is located at its full path",
			items:  []model.Item{cluster, item("BindZone", "z", `{"clusterRef":"auth","zoneName":"example.com","records":[{"name":"a","type":"A","values":["192.0.2.1"],"tll":5}]}`)},
			want:   []loc{{"BindZone", "z", "spec.records[0].tll"}},
		},
		"wrong type": {
			reason: "a value of the wrong JSON type names its field",
			items:  []model.Item{item("BindCluster", "auth", `{"replicas":"two"}`)},
			want:   []loc{{"BindCluster", "auth", "spec.replicas"}},
		},
		"unknown kind": {
			reason: "a kind the group does not have is an error, not silently dropped",
			items:  []model.Item{cluster, item("BindZoneSet", "x", `{}`)},
			want:   []loc{{"BindZoneSet", "x", "kind"}},
		},
		"dangling refs": {
			reason: "clusterRef, zoneRef and updateKeyRef that resolve to nothing",
			items: []model.Item{cluster,
				item("BindZone", "z", `{"clusterRef":"nope","zoneName":"example.com"}`),
				item("BindZone", "d", `{"clusterRef":"auth","zoneName":"d.example.com","dynamicUpdate":true,"updateKeyRef":"k"}`),
				item("DNSRecord", "r", `{"zoneRef":"missing","name":"www","type":"A","values":["192.0.2.1"]}`)},
			want: []loc{{"BindZone", "d", "spec.updateKeyRef"}, {"BindZone", "z", "spec.clusterRef"}, {"DNSRecord", "r", "spec.zoneRef"}},
		},
		"views need viewRef": {
			reason: "once a cluster has views every zone names one",
			items: []model.Item{cluster,
				item("BindView", "internal", `{"clusterRef":"auth","matchClients":["any"]}`),
				item("BindZone", "z", `{"clusterRef":"auth","zoneName":"example.com"}`)},
			want: []loc{{"BindZone", "z", "spec.viewRef"}},
		},
		"duplicate zone": {
			reason: "one zone name twice in a view, whatever its case or trailing dot",
			items: []model.Item{cluster,
				item("BindZone", "a", `{"clusterRef":"auth","zoneName":"Example.COM"}`),
				item("BindZone", "b", `{"clusterRef":"auth","zoneName":"example.com."}`)},
			want: []loc{{"BindZone", "b", "spec.zoneName"}},
		},
		"second catalog": {
			reason: "one catalog per cluster and view",
			items: []model.Item{cluster,
				item("BindCatalogZone", "c1", `{"clusterRef":"auth","zoneName":"cat1.internal"}`),
				item("BindCatalogZone", "c2", `{"clusterRef":"auth","zoneName":"cat2.internal"}`)},
			want: []loc{{"BindCatalogZone", "c2", "metadata.name"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			set, rs := model.Decode(tc.items)
			_, brs := model.Build(set)
			rs = append(rs, brs...)
			rs.Sort()
			if diff := cmp.Diff(tc.want, locs(rs)); diff != "" {
				t.Errorf("%s: located errors (-want +got):\n%s\nall results: %v", tc.reason, diff, rs)
			}
		})
	}
}

func TestResolvedCluster(t *testing.T) {
	set, rs := model.Decode([]model.Item{
		item("BindCluster", "auth", `{}`),
		item("BindTSIGKey", "shared", `{}`),
		item("BindTSIGKey", "own", `{"clusterRef":"auth","keyName":"own-key.","algorithm":"hmac-sha512"}`),
		item("BindCatalogZone", "cat", `{"clusterRef":"auth","zoneName":"Cat.Internal","transferKeyRef":"own"}`),
		item("BindZone", "z", `{"clusterRef":"auth","zoneName":"bücher.example","nameservers":["ns1.example.net."]}`),
		item("BindZone", "off", `{"clusterRef":"auth","zoneName":"off.example","catalog":false,"nameservers":["ns1.example.net."]}`),
	})
	clusters, brs := model.Build(set)
	if rs = append(rs, brs...); len(rs) != 0 {
		t.Fatalf("unexpected results: %v", rs)
	}
	c := clusters[0]
	type key struct{ Name, Alg, Secret string }
	var keys []key
	for _, k := range c.Keys {
		keys = append(keys, key{k.KeyName, k.Algorithm, k.SecretName})
	}
	want := []key{{"own-key", "hmac-sha512", "own-tsig"}, {"shared", "hmac-sha256", "shared-tsig"}}
	if diff := cmp.Diff(want, keys); diff != "" {
		t.Errorf("keys in scope, defaulted and sorted (-want +got):\n%s", diff)
	}
	v := c.Views[0]
	if v.Catalog == nil || v.Catalog.ZoneName != "cat.internal." || v.TransferKey.KeyName != "own-key" {
		t.Errorf("catalog %+v with transfer key %+v, want cat.internal. signed by own-key", v.Catalog, v.TransferKey)
	}
	type zone struct {
		Name   string
		Member bool
	}
	var zones []zone
	for _, z := range v.Zones {
		zones = append(zones, zone{z.Name, z.CatalogMember})
	}
	if diff := cmp.Diff([]zone{{"off.example.", false}, {"xn--bcher-kva.example.", true}}, zones); diff != "" {
		t.Errorf("zones: canonical, punycode, catalog membership (-want +got):\n%s", diff)
	}
	if c.Spec.Mode != "authoritative" || c.Spec.Replicas != 1 || c.Spec.Image != model.DefaultImage {
		t.Errorf("defaults not applied: %+v", c.Spec)
	}
}
