package importer_test

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/pipeline"
	"git.unkin.net/unkin/bind-fn/internal/plan"
	"git.unkin.net/unkin/bind-fn/internal/render"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
)

// TestServedSerialIsTheFloor: an imported zone's serial is where bind-fn's
// count starts, not a pin. The package as the import writes it (its
// BindZones, its state) renders with the served serial while the zone is
// unchanged, and the first edit renders with the next serial — which a pin
// (spec.soa.serial, what imports wrote before) refuses: "cannot change zone
// ... without changing its serial".
func TestServedSerialIsTheFloor(t *testing.T) {
	cases := map[string]struct {
		reason string
		conf   string
		// zone is the BindZone object edited, id the zone as plan names
		// it (view/zone).
		zone, id string
		edit     bool
		want     uint32
	}{
		"Unchanged": {
			reason: "A render of the unchanged package serves the served serial: the secondaries that hold it transfer nothing.",
			conf:   "signed", zone: "plain.example", id: "plain.example", want: 10,
		},
		"Edited": {
			reason: "The first edit after the import serves the served serial + 1: every secondary that holds the old serial transfers.",
			conf:   "signed", zone: "plain.example", id: "plain.example", edit: true, want: 11,
		},
		"EditedInAView": {
			reason: "The same in a view, with a date-style serial.",
			conf:   "corpus/view-recursion", zone: "guest-campus.example", id: "guest/campus.example", edit: true, want: 2025010102,
		},
		"SignedUnchanged": {
			reason: "A signed zone's floor is the serial its signed version served (2024080107, above the file's 2024080101).",
			conf:   "corpus/dnssec-catalog", zone: "shop.example", id: "shop.example", want: 2024080107,
		},
		"Catalog": {
			reason: "A catalog is bind-fn's own content (its member labels), so it serves one above the original catalog's serial: its consumers transfer it.",
			conf:   "corpus/dnssec-catalog", id: "catalog.signer.invalid", want: 2024080102,
		},
		"SignedEdited": {
			reason: "A signed zone edited: the next serial above the signed one.",
			conf:   "corpus/dnssec-catalog", zone: "shop.example", id: "shop.example", edit: true, want: 2024080108,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			res := importResult(t, filepath.Join("testdata", tc.conf, "named.conf"))
			for _, o := range res.Objects["zones.yaml"] {
				if z := o.(*v1alpha1.BindZone); z.Spec.SOA != nil && z.Spec.SOA.Serial != nil {
					t.Errorf("BindZone %s pins spec.soa.serial %d: the import's serial must be state, not a pin", z.Name, *z.Spec.SOA.Serial)
				}
			}
			items, err := res.Items()
			if err != nil {
				t.Fatal(err)
			}
			if tc.edit {
				items = testutil.EditItem(t, items, v1alpha1.KindBindZone, tc.zone, func(obj map[string]any) {
					spec := obj["spec"].(map[string]any)
					recs, _ := spec["records"].([]any)
					spec["records"] = append(recs, map[string]any{"name": "added-after-import", "type": "A", "values": []any{"192.0.2.77"}})
				})
			}
			objs, rs := pipeline.Run(pipeline.Input{Items: items, Previous: res.Previous()}, render.Options{Rand: &testutil.DetRand{}})
			if rs.HasErrors() {
				t.Fatalf("%s\nthe package does not render: %v", tc.reason, rs)
			}
			pobjs, err := plan.FromRender(objs)
			if err != nil {
				t.Fatal(err)
			}
			serials, err := plan.ZoneSerials(pobjs)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.want, serials[tc.id]); d != "" {
				t.Errorf("%s\nserial of %s (-want +got):\n%s", tc.reason, tc.id, d)
			}
		})
	}
}
