package corpus

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
)

func ttl(n int32) *int32 { return &n }

// TestConvertZone: the converter reads zone files as BIND's master-file
// lexer does (the corpus self-check then holds it to BIND's own reading).
func TestConvertZone(t *testing.T) {
	cases := map[string]struct {
		reason  string
		data    string
		want    []v1alpha1.Record
		ns      []string
		wantErr error
	}{
		"inherit and parens": {
			reason: "an owner is inherited by lines starting with a blank; '(' ... ')' joins lines; ';' comments; $TTL and units",
			data:   "$TTL 1h\n@ SOA ns hostmaster ( 1 ; serial\n 3600 1200 604800 1200 )\n NS ns\nns A 192.0.2.1\n 2h IN AAAA 2001:db8::1\n",
			ns:     []string{"ns"},
			want: []v1alpha1.Record{
				{Name: "ns", Type: "A", TTL: ttl(3600), Values: []string{"192.0.2.1"}},
				{Name: "ns", Type: "AAAA", TTL: ttl(7200), Values: []string{"2001:db8::1"}},
			},
		},
		"quotes and escapes": {
			reason: "a quoted string keeps its ';' and blanks; escapes stay as written; raw octets become \\DDD",
			data:   "@ 300 SOA ns h 1 2 3 4 5\nt TXT \"a; b\" c\\;d\nu TXT \"\xc3\xa9\"\n",
			want: []v1alpha1.Record{
				{Name: "t", Type: "TXT", TTL: ttl(300), Values: []string{`"a; b" c\;d`}},
				{Name: "u", Type: "TXT", TTL: ttl(300), Values: []string{`"\195\169"`}},
			},
		},
		"soa minimum as default": {
			reason: "with no $TTL and an SOA without a TTL, BIND takes the SOA minimum as the default TTL: a record after an explicit TTL takes the minimum, not the last TTL, until a $TTL (masterfile/ns1/ttl1.db)",
			data:   "@ SOA ns h 1 3600 1800 1814400 3\nb 2 TXT \"b\"\nc TXT \"c\"\n$TTL 1\nd TXT \"d\"\n",
			want: []v1alpha1.Record{
				{Name: "b", Type: "TXT", TTL: ttl(2), Values: []string{`"b"`}},
				{Name: "c", Type: "TXT", TTL: ttl(3), Values: []string{`"c"`}},
				{Name: "d", Type: "TXT", TTL: ttl(1), Values: []string{`"d"`}},
			},
		},
		"origin case": {
			reason:  "an $ORIGIN of the zone in another case completes relative names in that case (case/ns1/dynamic.db): converted from the dump",
			data:    "@ 300 SOA ns h 1 2 3 4 5\n$ORIGIN EXAMPLE.\n NS ns1\n",
			wantErr: ErrInexpressible,
		},
		"rrset order": {
			reason: "one record per name and type, values in the file's order, case-insensitive names",
			data:   "@ 300 SOA ns h 1 2 3 4 5\nA 300 TXT \"1\"\na 600 TXT \"2\"\n",
			want:   []v1alpha1.Record{{Name: "A", Type: "TXT", TTL: ttl(300), Values: []string{`"1"`, `"2"`}}},
		},
		"class": {
			reason:  "a class other than IN has no place in the API",
			data:    "@ 300 SOA ns h 1 2 3 4 5\nx CH TXT \"1\"\n",
			wantErr: ErrInexpressible,
		},
		"generate": {
			reason:  "$GENERATE is expanded by BIND: converted from its dump instead",
			data:    "@ 300 SOA ns h 1 2 3 4 5\n$GENERATE 1-2 h$ A 192.0.2.$\n",
			wantErr: ErrInexpressible,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			z, err := ConvertZone("example", tc.data)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("%s: got %v, want %v", tc.reason, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s: %v", tc.reason, err)
			}
			if d := cmp.Diff(tc.want, z.Zone.Spec.Records); d != "" {
				t.Errorf("%s: records (-want +got):\n%s", tc.reason, d)
			}
			if d := cmp.Diff(tc.ns, z.Zone.Spec.Nameservers); d != "" {
				t.Errorf("%s: nameservers (-want +got):\n%s", tc.reason, d)
			}
		})
	}
}
