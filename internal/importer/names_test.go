package importer_test

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/importer"
	"git.unkin.net/unkin/bind-fn/internal/namedconf"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
)

// TestImportedNamesMeanThemselves: an import writes every name so that it
// reads back as itself and draws no name result. Values are printed
// absolute (with their dots); owners are written relative to the zone,
// except those whose relative form would repeat the zone's name or end in
// a top-level domain, which are written absolute.
func TestImportedNamesMeanThemselves(t *testing.T) {
	files := map[string]string{
		"/c/named.conf": `zone "example.com" { type primary; file "db.example.com"; };`,
		"/c/db.example.com": `$ORIGIN example.com.
$TTL 300
@ SOA ns1.example.net. hostmaster.example.com. 1 300 60 1209600 60
@ NS ns1.example.net.
@ MX 10 mail.example.com.example.com.
@ TXT "v=spf1 include:_spf.example.com -all"
www A 192.0.2.80
mail.example.com.example.com. A 192.0.2.25
example.com.example.com. A 192.0.2.26
foo.com.example.com. A 192.0.2.27
cdn CNAME cdn.example.net.
`,
	}
	read := func(p string) ([]byte, error) {
		if s, ok := files[p]; ok {
			return []byte(s), nil
		}
		return nil, os.ErrNotExist
	}
	conf, err := namedconf.ReadConf("/c/named.conf", "/c", read)
	if err != nil {
		t.Fatal(err)
	}
	res, err := importer.Import(conf, importer.Options{ZoneDir: "/c", Read: read})
	if err != nil {
		t.Fatal(err)
	}
	rs, err := res.Check(&testutil.DetRand{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Severity != diag.Info {
			t.Errorf("the import draws a result: %s", r)
		}
	}
	for _, l := range res.Losses {
		t.Errorf("not carried: %s", l)
	}
	got := map[string][]string{}
	for _, o := range res.Objects["zones.yaml"] {
		for _, r := range o.(*v1alpha1.BindZone).Spec.Records {
			got[r.Name] = append(got[r.Name], r.Type+" "+r.Values[0])
		}
	}
	want := map[string][]string{
		"@":                             {"MX 10 mail.example.com.example.com.", `TXT "v=spf1 include:_spf.example.com -all"`},
		"www":                           {"A 192.0.2.80"},
		"mail.example.com.example.com.": {"A 192.0.2.25"},
		"example.com.example.com.":      {"A 192.0.2.26"},
		"foo.com.example.com.":          {"A 192.0.2.27"},
		"cdn":                           {"CNAME cdn.example.net."},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("imported records (-want +got):\n%s", diff)
	}
}
