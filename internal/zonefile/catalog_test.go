package zonefile

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/testutil/golden"
)

var catalogSrc = diag.Source{Ref: diag.ObjectRef{APIVersion: "bind.unkin.net/v1alpha1", Kind: "BindCatalogZone", Namespace: "dns", Name: "catalog"}, File: "catalog.yaml"}

func members(zones ...string) []CatalogMember {
	var out []CatalogMember
	for _, z := range zones {
		out = append(out, CatalogMember{Zone: z, Src: diag.Source{Ref: diag.ObjectRef{Kind: "BindZone", Namespace: "dns", Name: strings.TrimSuffix(z, ".")}}})
	}
	return out
}

func TestCatalogGolden(t *testing.T) {
	cases := map[string]struct {
		reason  string
		catalog *model.Catalog
		members []CatalogMember
	}{
		"catalog": {
			reason:  "Members are sorted canonically and listed once each; ids are stable hashes of the names.",
			catalog: &model.Catalog{Src: catalogSrc, ZoneName: "catalog.internal."},
			members: members("example.com.", "b.example.com.", "2.0.192.in-addr.arpa.", "EXAMPLE.com.", "xn--bcher-kva.example."),
		},
		"catalog-empty": {
			reason:  "A catalog without members is still a valid zone.",
			catalog: &model.Catalog{Src: catalogSrc, ZoneName: "catalog.internal."},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			z, rs := Catalog(tc.catalog, tc.members)
			if len(rs) > 0 {
				t.Fatalf("%s\nCatalog: unexpected results: %v", tc.reason, rs)
			}
			text := z.Text(NextSerial(nil, z.Hash, nil))
			golden.Check(t, filepath.Join("testdata", name, "db.zone"), text)
			checkZone(t, z.Origin, text)
			roundTrip(t, z, 3)
		})
	}
}

// TestCatalogStable proves a member's record does not depend on the others.
func TestCatalogStable(t *testing.T) {
	c := &model.Catalog{Src: catalogSrc, ZoneName: "catalog.internal."}
	one, _ := Catalog(c, members("example.com."))
	two, _ := Catalog(c, members("zzz.example.", "example.com."))
	var a, b []string
	for _, rr := range one.RRs {
		a = append(a, rr.String())
	}
	for _, rr := range two.RRs {
		if !strings.Contains(rr.String(), "zzz") {
			b = append(b, rr.String())
		}
	}
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("adding a member changed another member's records: -want +got\n%s", diff)
	}
	if got, want := MemberID("Example.COM."), MemberID("example.com"); got != want || len(got) != 16 {
		t.Errorf("MemberID is not case-insensitive 16 hex digits: %q vs %q", got, want)
	}
}

func TestCatalogErrors(t *testing.T) {
	cases := map[string]struct {
		reason  string
		catalog *model.Catalog
		members []CatalogMember
		want    []located
	}{
		"BadZoneName": {
			reason:  "The catalog's own name is checked.",
			catalog: &model.Catalog{Src: catalogSrc, ZoneName: "cat alog."},
			want:    []located{{diag.Error, "BindCatalogZone dns/catalog", "spec.zoneName", "cannot use zone name"}},
		},
		"BadMember": {
			reason:  "A bad member is reported on its BindZone.",
			catalog: &model.Catalog{Src: catalogSrc, ZoneName: "catalog.internal."},
			members: members("good.example.", "bad..example."),
			want:    []located{{diag.Error, "BindZone dns/bad..example", "spec.zoneName", "cannot list member zone"}},
		},
		"MemberWithoutSource": {
			reason:  "Without a source the result is on the catalog.",
			catalog: &model.Catalog{Src: catalogSrc, ZoneName: "catalog.internal."},
			members: []CatalogMember{{Zone: "a b."}},
			want:    []located{{diag.Error, "BindCatalogZone dns/catalog", "spec", "cannot list member zone 0"}},
		},
		"Itself": {
			reason:  "A catalog does not list itself.",
			catalog: &model.Catalog{Src: catalogSrc, ZoneName: "catalog.internal."},
			members: members("catalog.internal."),
			want:    []located{{diag.Error, "BindZone dns/catalog.internal", "spec.zoneName", "cannot list itself"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, rs := Catalog(tc.catalog, tc.members)
			says := make([]string, len(tc.want))
			for i, w := range tc.want {
				says[i] = w.Says
			}
			if diff := cmp.Diff(tc.want, locate(rs, says)); diff != "" {
				t.Errorf("%s\nCatalog results: -want +got\n%s", tc.reason, diff)
			}
		})
	}
}
