package model_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"git.unkin.net/unkin/bind-fn/internal/model"
)

// TestRollovers: spec.dnssecRollover is read once, here: each entry of a
// signed primary zone whose policy has exactly one key of the role becomes
// a model.Rollover; anything else is an error on its field.
func TestRollovers(t *testing.T) {
	cluster := item("BindCluster", "auth", `{}`)
	kskZsk := item("BindDNSSECPolicy", "kz", `{"keys":[{"role":"ksk"},{"role":"zsk"}]}`)
	twoKSK := item("BindDNSSECPolicy", "two", `{"keys":[{"role":"ksk"},{"role":"ksk","algorithm":"ed25519"},{"role":"zsk"}]}`)
	zone := func(extra string) model.Item {
		return item("BindZone", "z", `{"clusterRef":"auth","zoneName":"example.com",`+extra+`}`)
	}
	cases := map[string]struct {
		reason string
		items  []model.Item
		want   []model.Rollover
		errs   []loc
	}{
		"ksk and zsk": {
			reason: "each role of the policy, in role order",
			items:  []model.Item{cluster, kskZsk, zone(`"dnssecPolicyRef":"kz","dnssecRollover":{"zsk":{"label":"z1","done":true},"ksk":{"label":"2027-01"}}`)},
			want: []model.Rollover{
				{Field: "spec.dnssecRollover.ksk", Role: "ksk", Label: "2027-01"},
				{Field: "spec.dnssecRollover.zsk", Role: "zsk", Label: "z1", Done: true},
			},
		},
		"unsigned": {
			reason: "only a signed primary zone has keys to roll",
			items:  []model.Item{cluster, zone(`"dnssecRollover":{"ksk":{"label":"a"}}`)},
			errs:   []loc{{"BindZone", "z", "spec.dnssecRollover"}},
		},
		"role not in policy": {
			reason: "a KSK+ZSK policy has no CSK",
			items:  []model.Item{cluster, kskZsk, zone(`"dnssecPolicyRef":"kz","dnssecRollover":{"csk":{"label":"a"}}`)},
			errs:   []loc{{"BindZone", "z", "spec.dnssecRollover.csk"}},
		},
		"role twice in policy": {
			reason: "two KSKs (two algorithms): which one rolls is not said",
			items:  []model.Item{cluster, twoKSK, zone(`"dnssecPolicyRef":"two","dnssecRollover":{"ksk":{"label":"a"}}`)},
			errs:   []loc{{"BindZone", "z", "spec.dnssecRollover.ksk"}},
		},
		"bad label": {
			reason: "a label is a name: no spaces, not empty",
			items:  []model.Item{cluster, kskZsk, zone(`"dnssecPolicyRef":"kz","dnssecRollover":{"ksk":{"label":""},"zsk":{"label":"a b"}}`)},
			errs:   []loc{{"BindZone", "z", "spec.dnssecRollover.ksk.label"}, {"BindZone", "z", "spec.dnssecRollover.zsk.label"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			set, rs := model.Decode(tc.items)
			m, brs := model.Build(set)
			rs = append(rs, brs...)
			rs.Sort()
			if diff := cmp.Diff(tc.errs, locs(rs)); diff != "" {
				t.Errorf("%s: located errors (-want +got):\n%s\nall results: %v", tc.reason, diff, rs)
			}
			var got []model.Rollover
			for _, c := range m {
				for _, v := range c.Views {
					for _, z := range v.Zones {
						got = append(got, z.Rollovers...)
					}
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s: rollovers (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}
