package importer

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"git.unkin.net/unkin/bind-fn/internal/namedconf"
)

// TestReadConfig: the first phase sorts every statement by kind and reads
// each zone's name, class, type (old names made current) and options,
// before anything is mapped.
func TestReadConfig(t *testing.T) {
	src := `key "k" { algorithm hmac-sha256; secret "c2VjcmV0"; };
acl "a" { 192.0.2.0/24; };
masters "old" { 192.0.2.1; };
primaries "new" { 192.0.2.2; };
dnssec-policy "p" { };
logging { };
server 192.0.2.9 { };
view "inside" {
	match-clients { a; };
	zone "Example.TEST." { type master; file "example.zone"; allow-update { none; }; };
	zone "sec.test" IN { type slave; masters { old; }; };
};
zone "outside.test" CH { type hint; };
`
	conf, err := namedconf.ReadConf("/c/named.conf", "/c", func(string) ([]byte, error) { return []byte(src), nil })
	if err != nil {
		t.Fatal(err)
	}
	c := readConfig(conf)
	type zone struct{ Name, Class, Type, View, Primaries string }
	zones := func(zs []zoneStmt) []zone {
		var out []zone
		for _, z := range zs {
			out = append(out, zone{z.name, z.class, z.typ, z.view, z.primaries().Name()})
		}
		return out
	}
	names := func(ss []namedconf.Located) []string {
		var out []string
		for _, s := range ss {
			out = append(out, s.Name()+" "+s.Arg(1))
		}
		return out
	}
	type view struct {
		Name  string
		Body  []string
		Zones []zone
	}
	got := map[string]any{
		"options":  c.options != nil,
		"keys":     names(c.keys),
		"acls":     names(c.acls),
		"lists":    names(c.lists),
		"policies": names(c.policies),
		"replaced": names(c.replaced),
		"unknown":  names(c.unknown),
		"views":    []view{{c.views[0].name, names(c.views[0].body), zones(c.views[0].zones)}},
		"zones":    zones(c.zones),
	}
	want := map[string]any{
		"options":  false,
		"keys":     []string{"key k"},
		"acls":     []string{"acl a"},
		"lists":    []string{"masters old", "primaries new"},
		"policies": []string{"dnssec-policy p"},
		"replaced": []string{"logging "},
		"unknown":  []string{"server 192.0.2.9"},
		"views": []view{{Name: "inside", Body: []string{"match-clients "}, Zones: []zone{
			{Name: "example.test", Type: "primary", View: "inside"},
			{Name: "sec.test", Class: "IN", Type: "secondary", View: "inside", Primaries: "masters"},
		}}},
		"zones": []zone{{Name: "outside.test", Class: "CH", Type: "hint"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("readConfig (-want +got):\n%s", diff)
	}
}
