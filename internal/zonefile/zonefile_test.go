package zonefile

import (
	"fmt"
	"math/rand"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/testutil/golden"
)

func TestBuildGolden(t *testing.T) {
	cases := map[string]struct {
		reason string
		zone   *model.Zone
	}{
		"rich": {
			reason: "Every common record type, quoting, long TXT, delegation with glue, DS, wildcard, IDN and escaped owners render, pass named-checkzone and round-trip.",
			zone:   richZone(),
		},
		"minimal": {
			reason: "A zone without nameservers gets MNAME ns1.<zone> as its NS and the default SOA.",
			zone:   testZone("minimal.test.", nil, nil, inline(0, "ns1", "A", "192.0.2.1")),
		},
		"overrides": {
			reason: "spec.soa, defaultTTL and record TTLs override the defaults; a domain-form email stays relative to the zone.",
			zone: func() *model.Zone {
				z := testZone("Overrides.Test", []string{"ns.elsewhere.net."}, &v1alpha1.SOASpec{
					PrimaryNS: "primary.elsewhere.net.", Email: "dnsadmin", Serial: u32(7),
					Refresh: i32(3600), Retry: i32(600), Expire: i32(604800), Minimum: i32(0),
				}, withTTL(inline(0, "www", "A", "192.0.2.1"), 0), inline(1, "www", "AAAA", "2001:db8::1"))
				z.Spec.DefaultTTL = i32(300)
				return z
			}(),
		},
		"modern": {
			reason: "Newer and generic types print in a form BIND 9.18 reads back: SVCB, HTTPS, URI, LOC, RFC 3597 unknown types (a known type in the \\# form is refused: TestBINDTypes).",
			zone: testZone("example.net.", []string{"ns.example.com."}, nil,
				inline(0, "_dns", "SVCB", "1 dns alpn=h2,h3 port=443 dohpath=/dns-query{?dns}"),
				inline(1, "dns", "A", "192.0.2.53"),
				inline(2, "www", "HTTPS", `1 . alpn="h2,h3" ipv4hint=192.0.2.1 ipv6hint=2001:db8::1`),
				inline(3, "_http._tcp", "URI", `10 1 "https://www.example.net/"`),
				inline(4, "here", "LOC", "52 22 23.000 N 4 53 32.000 E -2.00m 0.00m 10000m 10m"),
				inline(5, "private", "TYPE65280", `\# 3 abcdef`, `\# 0`),
				inline(7, "_25._tcp.mail", "TLSA", "3 1 1 "+strings.Repeat("0f", 32)),
				inline(8, "key", "OPENPGPKEY", "mQENBFLd0aQBCADnz0kS"),
				inline(9, "@", "HINFO", `"PC" "Linux"`),
				inline(10, "rp", "RP", "admin.example.net. txt.example.net."),
				inline(11, "txt", "TXT", `"responsible person"`),
			),
		},
		"reverse": {
			reason: "A reverse zone with relative PTR owners.",
			zone: testZone("2.0.192.in-addr.arpa.", []string{"ns1.example.com."}, &v1alpha1.SOASpec{Email: "hostmaster@example.com."},
				inline(0, "1", "PTR", "host1.example.com."),
				inline(1, "2", "PTR", "host2.example.com."),
				record("three", "3.2.0.192.in-addr.arpa.", "PTR", "host3.example.com.")),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			z, rs := Build(tc.zone)
			if rs.HasErrors() || len(rs) > 0 {
				t.Fatalf("%s\nBuild: unexpected results: %v", tc.reason, rs)
			}
			text := z.Text(NextSerial(nil, z.Hash, explicitSerial(tc.zone)))
			golden.Check(t, filepath.Join("testdata", name, "db.zone"), text)
			checkZone(t, z.Origin, text)
			roundTrip(t, z, 1)
			roundTrip(t, z, 0xFFFFFFFF)
		})
	}
}

func explicitSerial(z *model.Zone) *uint32 {
	if z.Spec.SOA == nil {
		return nil
	}
	return z.Spec.SOA.Serial
}

// TestBuildShuffled proves that input order never reaches the output.
func TestBuildShuffled(t *testing.T) {
	base, rs := Build(richZone())
	if rs.HasErrors() {
		t.Fatal(rs)
	}
	want := string(base.Text(42))
	for seed := int64(1); seed <= 20; seed++ {
		z := richZone()
		r := rand.New(rand.NewSource(seed))
		r.Shuffle(len(z.RRsets), func(i, j int) { z.RRsets[i], z.RRsets[j] = z.RRsets[j], z.RRsets[i] })
		for _, s := range z.RRsets {
			r.Shuffle(len(s.Values), func(i, j int) { s.Values[i], s.Values[j] = s.Values[j], s.Values[i] })
		}
		got, rs := Build(z)
		if rs.HasErrors() {
			t.Fatalf("seed %d: %v", seed, rs)
		}
		if diff := cmp.Diff(want, string(got.Text(42))); diff != "" {
			t.Errorf("seed %d: shuffled input changed the output: -want +got\n%s", seed, diff)
		}
		if got.Hash != base.Hash {
			t.Errorf("seed %d: hash %s, want %s", seed, got.Hash, base.Hash)
		}
	}
}

func TestHash(t *testing.T) {
	base := func() *model.Zone {
		return testZone("example.com.", []string{"ns.example.net."}, nil, inline(0, "www", "A", "192.0.2.1"))
	}
	hash := func(z *model.Zone) string {
		t.Helper()
		b, rs := Build(z)
		if rs.HasErrors() {
			t.Fatal(rs)
		}
		return b.Hash
	}
	h0 := hash(base())
	cases := map[string]struct {
		reason string
		zone   func() *model.Zone
		same   bool
	}{
		"SerialOnly": {
			reason: "An explicit serial is not content: the hash ignores it.",
			zone:   func() *model.Zone { z := base(); z.Spec.SOA = &v1alpha1.SOASpec{Serial: u32(99)}; return z },
			same:   true,
		},
		"DuplicateValue": {
			reason: "A repeated value collapses, so the content is the same.",
			zone: func() *model.Zone {
				z := base()
				z.RRsets[0].Values = []string{"192.0.2.1", "192.0.2.1"}
				return z
			},
			same: true,
		},
		"OwnerCase": {
			reason: "Owner names are case-insensitive.",
			zone:   func() *model.Zone { z := base(); z.RRsets[0].Name = "WWW"; return z },
			same:   true,
		},
		"Value": {
			reason: "A changed value is new content.",
			zone:   func() *model.Zone { z := base(); z.RRsets[0].Values = []string{"192.0.2.2"}; return z },
		},
		"TTL": {
			reason: "A changed TTL is new content.",
			zone:   func() *model.Zone { z := base(); z.RRsets[0].TTL = i32(5); return z },
		},
		"SOATimer": {
			reason: "SOA fields other than the serial are content.",
			zone:   func() *model.Zone { z := base(); z.Spec.SOA = &v1alpha1.SOASpec{Retry: i32(61)}; return z },
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := hash(tc.zone()) == h0; got != tc.same {
				t.Errorf("%s\nsame hash = %v, want %v", tc.reason, got, tc.same)
			}
		})
	}
}

func TestNextSerial(t *testing.T) {
	cases := map[string]struct {
		reason   string
		prev     *State
		hash     string
		explicit *uint32
		want     uint32
	}{
		"First":          {reason: "Without a previous render the serial is 1.", hash: "h", want: 1},
		"Unchanged":      {reason: "The same content keeps the serial.", prev: &State{Serial: 17, Hash: "h"}, hash: "h", want: 17},
		"Changed":        {reason: "New content moves the serial by one.", prev: &State{Serial: 17, Hash: "h"}, hash: "g", want: 18},
		"Wrap":           {reason: "RFC 1982: 0xFFFFFFFF + 1 wraps, and skips 0.", prev: &State{Serial: 0xFFFFFFFF, Hash: "h"}, hash: "g", want: 1},
		"Explicit":       {reason: "spec.soa.serial wins.", prev: &State{Serial: 17, Hash: "h"}, hash: "g", explicit: u32(2024010101), want: 2024010101},
		"ExplicitFirst":  {reason: "spec.soa.serial wins without a previous render too.", hash: "g", explicit: u32(5), want: 5},
		"ZeroPrevSame":   {reason: "A previous serial of 0 is never kept.", prev: &State{Serial: 0, Hash: "h"}, hash: "h", want: 1},
		"ZeroPrevChange": {reason: "A previous serial of 0 moves to 1.", prev: &State{Serial: 0, Hash: "h"}, hash: "g", want: 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, NextSerial(tc.prev, tc.hash, tc.explicit)); diff != "" {
				t.Errorf("%s\nNextSerial: -want +got\n%s", tc.reason, diff)
			}
		})
	}
}

func TestParseAllRefusesInclude(t *testing.T) {
	_, err := parseAll("$ORIGIN example.com.\n$INCLUDE /etc/passwd\n", "example.com.")
	if err == nil {
		t.Fatal("parseAll accepted $INCLUDE")
	}
}

// located is what the tests compare of a result: where it points, and a
// piece of its message.
type located struct {
	Severity diag.Severity
	Object   string
	Field    string
	Says     string
}

func locate(rs diag.Results, says []string) []located {
	var out []located
	for i, r := range rs {
		l := located{Severity: r.Severity, Object: r.Source.Ref.String(), Field: r.Field}
		if i < len(says) && strings.Contains(r.Message, says[i]) {
			l.Says = says[i]
		} else {
			l.Says = r.Message
		}
		out = append(out, l)
	}
	return out
}

const (
	theZone = "BindZone dns/example"
)

func rec(name string) string { return "DNSRecord dns/" + name }

func TestBuildErrors(t *testing.T) {
	z := func(rrsets ...*model.RRset) *model.Zone {
		return testZone("example.com.", []string{"ns.example.net."}, nil, rrsets...)
	}
	cases := map[string]struct {
		reason string
		zone   *model.Zone
		want   []located
	}{
		"ValueNewline": {
			reason: "A newline could smuggle a second record into the zone.",
			zone:   z(inline(0, "www", "A", "192.0.2.1\nevil 60 IN A 192.0.2.66")),
			want:   []located{{diag.Error, theZone, "spec.records[0].values[0]", "cannot parse value for type A: the value contains a control character"}},
		},
		"ValueNUL": {
			reason: "NUL is a control character.",
			zone:   z(inline(0, "www", "TXT", "\"a\x00b\"")),
			want:   []located{{diag.Error, theZone, "spec.records[0].values[0]", "control character"}},
		},
		"ValueComment": {
			reason: "';' outside quotes would turn the rest into a comment.",
			zone:   z(inline(0, "www", "TXT", `"a" ; b`)),
			want:   []located{{diag.Error, theZone, "spec.records[0].values[0]", "';' outside quotes"}},
		},
		"ValueParentheses": {
			reason: "Parentheses open a multi-line record.",
			zone:   z(inline(0, "www", "MX", `( 10 mail )`)),
			want:   []located{{diag.Error, theZone, "spec.records[0].values[0]", "outside quotes continues"}},
		},
		"ValueDirective": {
			reason: "'$' is a directive, not a value.",
			zone:   z(inline(0, "www", "A", `$INCLUDE /etc/passwd`)),
			want:   []located{{diag.Error, theZone, "spec.records[0].values[0]", "'$' outside quotes"}},
		},
		"ValueUnterminatedQuote": {
			reason: "An open quote would swallow what follows.",
			zone:   z(inline(0, "www", "TXT", `"abc`)),
			want:   []located{{diag.Error, theZone, "spec.records[0].values[0]", "unterminated quoted string"}},
		},
		"ValueTwoAddresses": {
			reason: "One value is one record: extra tokens are an error.",
			zone:   z(inline(0, "www", "A", "192.0.2.1 192.0.2.2")),
			want:   []located{{diag.Error, theZone, "spec.records[0].values[0]", "cannot parse value for type A"}},
		},
		"ValueBad": {
			reason: "The parser's message reaches the user, located at the value.",
			zone:   z(record("web", "www", "A", "192.0.2.1", "300.1.1.1")),
			want:   []located{{diag.Error, rec("web"), "spec.values[1]", "cannot parse value for type A: 300.1.1.1 is not an IPv4 address"}},
		},
		"ValueBadNoParserLine": {
			reason: "The parser's position is in its one-line buffer, no line of the user's file: it is not shown.",
			zone:   z(record("web", "www", "A", "198.51.100.300")),
			want:   []located{{diag.Error, rec("web"), "spec.values[0]", "cannot parse value for type A: 198.51.100.300 is not an IPv4 address"}},
		},
		"ValueBadAAAA": {
			reason: "An IPv6 value says it should be an IPv6 address.",
			zone:   z(record("web", "www", "AAAA", "2001:db8::g")),
			want:   []located{{diag.Error, rec("web"), "spec.values[0]", "cannot parse value for type AAAA: 2001:db8::g is not an IPv6 address"}},
		},
		"ValueBadMXPreference": {
			reason: "A field of a multi-field value names the field and its form.",
			zone:   z(record("mx", "@", "MX", "ten mail.example.com.")),
			want:   []located{{diag.Error, rec("mx"), "spec.values[0]", "cannot parse value for type MX: ten is not a number from 0 to 65535 (the pref field of MX)"}},
		},
		"ValueBadQuotedToken": {
			reason: "A token of other characters than letters, digits and . _ : / + - is shown quoted.",
			zone:   z(record("web", "www", "A", "192.0.2.1%eth0")),
			want:   []located{{diag.Error, rec("web"), "spec.values[0]", `cannot parse value for type A: "192.0.2.1%eth0" is not an IPv4 address`}},
		},
		"ValueEmpty": {
			reason: "An empty value is not a record.",
			zone:   z(inline(0, "www", "TXT", "  ")),
			want:   []located{{diag.Error, theZone, "spec.records[0].values[0]", "the value is empty"}},
		},
		"NoValues": {
			reason: "An RRset needs a value.",
			zone:   z(inline(0, "www", "A")),
			want:   []located{{diag.Error, theZone, "spec.records[0].values", "at least one value"}},
		},
		"OwnerOutside": {
			reason: "An absolute owner must be inside the zone.",
			zone:   z(inline(0, "www.example.org.", "A", "192.0.2.1")),
			want:   []located{{diag.Error, theZone, "spec.records[0].name", "outside zone"}},
		},
		"OwnerLabelTooLong": {
			reason: "Labels are at most 63 octets.",
			zone:   z(inline(0, strings.Repeat("a", 64), "A", "192.0.2.1")),
			want:   []located{{diag.Error, theZone, "spec.records[0].name", "a label holds at most 63"}},
		},
		"OwnerTooLong": {
			reason: "Names are at most 255 octets.",
			zone:   z(inline(0, strings.Repeat("abcdefghi.", 25)+"x", "A", "192.0.2.1")),
			want:   []located{{diag.Error, theZone, "spec.records[0].name", "at most 255"}},
		},
		"OwnerBlank": {
			reason: "A blank in an owner would shift the fields of the line.",
			zone:   z(inline(0, "www 60", "A", "192.0.2.1")),
			want:   []located{{diag.Error, theZone, "spec.records[0].name", "contains a blank"}},
		},
		"OwnerEmptyLabel": {
			reason: "Two dots in a row are an empty label.",
			zone:   z(inline(0, "a..b", "A", "192.0.2.1")),
			want:   []located{{diag.Error, theZone, "spec.records[0].name", "not a valid domain name"}},
		},
		"UnknownType": {
			reason: "Unknown types are refused at the type field.",
			zone:   z(inline(0, "www", "BOGUS", "x")),
			want:   []located{{diag.Error, theZone, "spec.records[0].type", "unknown record type"}},
		},
		"MetaType": {
			reason: "Query types are not records.",
			zone:   z(inline(0, "www", "ANY", "x")),
			want:   []located{{diag.Error, theZone, "spec.records[0].type", "cannot be stored in a zone"}},
		},
		"SOARecord": {
			reason: "The SOA is generated from spec.soa.",
			zone:   z(inline(0, "@", "SOA", "ns1 hostmaster 1 2 3 4 5")),
			want:   []located{{diag.Error, theZone, "spec.records[0].type", "spec.soa"}},
		},
		"ApexNSInline": {
			reason: "The apex NS belongs to spec.nameservers.",
			zone:   z(inline(0, "@", "NS", "ns.example.net.")),
			want:   []located{{diag.Error, theZone, "spec.records[0].name", "BindZone.spec.nameservers"}},
		},
		"ApexNSRecordEmptyName": {
			reason: "A DNSRecord without a name is at the apex.",
			zone:   z(record("ns", "", "ns", "ns.example.net.")),
			want:   []located{{diag.Error, rec("ns"), "spec.name", "BindZone.spec.nameservers"}},
		},
		"ApexNSRecordFQDN": {
			reason: "The zone's FQDN with a trailing dot is the apex, in any case.",
			zone:   z(record("ns", "EXAMPLE.com.", "NS", "ns.example.net.")),
			want:   []located{{diag.Error, rec("ns"), "spec.name", "BindZone.spec.nameservers"}},
		},
		"DuplicateRRsetInlineAndRecord": {
			reason: "The same RRset twice is an error at the second, naming the first.",
			zone:   z(inline(0, "www", "A", "192.0.2.1"), record("web", "www.example.com.", "A", "192.0.2.2")),
			want:   []located{{diag.Error, rec("web"), "spec", "already defined by BindZone dns/example spec.records[0]"}},
		},
		"DuplicateRRsetTwoRecords": {
			reason: "Two DNSRecords cannot own one RRset.",
			zone:   z(record("a", "www", "A", "192.0.2.1"), record("b", "WWW", "a", "192.0.2.1")),
			want:   []located{{diag.Error, rec("b"), "spec", "already defined by DNSRecord dns/a spec"}},
		},
		"CNAMEAtApex": {
			reason: "A CNAME at the apex would hide SOA and NS.",
			zone:   z(inline(0, "@", "CNAME", "www.example.net.")),
			want:   []located{{diag.Error, theZone, "spec.records[0].type", "zone apex"}},
		},
		"CNAMEAndOtherData": {
			reason: "A CNAME cannot share its owner.",
			zone:   z(record("alias", "www", "CNAME", "web"), inline(0, "www", "TXT", `"x"`)),
			want:   []located{{diag.Error, rec("alias"), "spec.name", "BindZone dns/example spec.records[0] defines TXT"}},
		},
		"CNAMETwoValues": {
			reason: "A CNAME RRset is a singleton.",
			zone:   z(inline(0, "www", "CNAME", "a", "b")),
			want:   []located{{diag.Error, theZone, "spec.records[0].values[1]", "exactly one value"}},
		},
		"DSAtApex": {
			reason: "BIND refuses a DS at the top of a zone.",
			zone:   z(inline(0, "@", "DS", "12345 13 2 "+strings.Repeat("ab", 32))),
			want:   []located{{diag.Error, theZone, "spec.records[0].type", "parent zone"}},
		},
		"NegativeTTL": {
			reason: "TTLs are not negative.",
			zone:   z(withTTL(inline(0, "www", "A", "192.0.2.1"), -1)),
			want:   []located{{diag.Error, theZone, "spec.records[0].ttl", "negative"}},
		},
		"BadNameserver": {
			reason: "Nameservers are names.",
			zone:   testZone("example.com.", []string{"ns.example.net.", "ns (x)"}, nil),
			want:   []located{{diag.Error, theZone, "spec.nameservers[1]", "cannot use nameserver"}},
		},
		"NameserverWithoutAddress": {
			reason: "BIND refuses a zone whose in-zone NS has no address.",
			zone:   testZone("example.com.", []string{"ns.example.net.", "ns1"}, nil),
			want:   []located{{diag.Error, theZone, "spec.nameservers[1]", "ns1.example.com. is inside zone"}},
		},
		"NoNameserversNoAddress": {
			reason: "Without nameservers the NS is ns1.<zone>, which then needs an address.",
			zone:   testZone("example.com.", nil, nil),
			want:   []located{{diag.Error, theZone, "spec.nameservers", "the zone has no nameservers"}},
		},
		"BadEmail": {
			reason: "The SOA email must be a mailbox or a name.",
			zone:   testZone("example.com.", []string{"ns.example.net."}, &v1alpha1.SOASpec{Email: "host master@example.com"}),
			want:   []located{{diag.Error, theZone, "spec.soa.email", "local part"}},
		},
		"BadPrimaryNS": {
			reason: "The MNAME must be a name.",
			zone:   testZone("example.com.", []string{"ns.example.net."}, &v1alpha1.SOASpec{PrimaryNS: "ns;1"}),
			want:   []located{{diag.Error, theZone, "spec.soa.primaryNS", "cannot use primaryNS"}},
		},
		"BadTimer": {
			reason: "Timers are at least 1.",
			zone:   testZone("example.com.", []string{"ns.example.net."}, &v1alpha1.SOASpec{Refresh: i32(0)}),
			want:   []located{{diag.Error, theZone, "spec.soa.refresh", "below the minimum"}},
		},
		"DelegationWithoutGlue": {
			reason: "BIND loads a delegation whose in-zone NS has no glue, but warns; so do we.",
			zone:   z(inline(0, "sub", "NS", "ns.sub")),
			want:   []located{{diag.Warning, theZone, "spec.records[0].values[0]", "glue"}},
		},
		"RelativeLooksAbsolute": {
			reason: "A name written absolute but without its trailing dot would repeat the zone's name: an error that names both fixes (TestNameSlips has the rest).",
			zone:   z(inline(0, "www", "CNAME", "web.Example.com"), inline(1, "web", "A", "192.0.2.1")),
			want:   []located{{diag.Error, theZone, "spec.records[0].values[0]", `write "web.Example.com." for the absolute name, or "web" relative to the zone`}},
		},
		"SeveralErrors": {
			reason: "Every broken value is reported, in input order.",
			zone:   z(inline(0, "www", "A", "1", "192.0.2.1", "x"), record("mx", "@", "MX", "mail")),
			want: []located{
				{diag.Error, theZone, "spec.records[0].values[0]", "cannot parse value for type A"},
				{diag.Error, theZone, "spec.records[0].values[2]", "cannot parse value for type A"},
				{diag.Error, rec("mx"), "spec.values[0]", "cannot parse value for type MX"},
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, rs := Build(tc.zone)
			says := make([]string, len(tc.want))
			for i, w := range tc.want {
				says[i] = w.Says
			}
			if diff := cmp.Diff(tc.want, locate(rs, says)); diff != "" {
				t.Errorf("%s\nBuild results: -want +got\n%s", tc.reason, diff)
			}
			if rs.HasErrors() != (got == nil) {
				t.Errorf("%s\nBuild returned a zone %v with errors %v", tc.reason, got != nil, rs.HasErrors())
			}
			if got != nil {
				checkZone(t, got.Origin, got.Text(1))
			}
		})
	}
}

func TestDedup(t *testing.T) {
	const hip = "2 200100107B1A74DF365639CC39F1D578 AwEAAbdxyhNuSutc5EMzxTs9LBPCIkOFH8cIvM4p9+LrV4e19WzK00+CI6zBCQTdtWsuxKbWIy87UOoJTwkUs7lBu+Upr1gsNrut79ryra+bSRGQb1slImA8YVJyuIDsj7kwzG7jnERNqnWxZ48AWkskmdHaVDP4BcelrTI3rMXdXF5D "
	cases := map[string]struct {
		reason string
		rrset  *model.RRset
		want   []string
	}{
		"Identical": {
			reason: "Repeated values collapse silently.",
			rrset:  inline(0, "www", "A", "192.0.2.1", "192.0.2.1"),
			want:   []string{"www.example.com.\t3600\tIN\tA\t192.0.2.1"},
		},
		"SameAddressOtherSpelling": {
			reason: "Two spellings of one IPv6 address are one record.",
			rrset:  inline(0, "www", "AAAA", "2001:db8::1", "2001:DB8:0::1"),
			want:   []string{"www.example.com.\t3600\tIN\tAAAA\t2001:db8::1"},
		},
		"NameCase": {
			reason: "Names in an MX (a type BIND compares with names case-folded) compare case-insensitively; the kept spelling does not depend on input order.",
			rrset:  inline(0, "@", "MX", "10 mail", "10 MAIL", "10 Mail"),
			want:   []string{"example.com.\t3600\tIN\tMX\t10 MAIL.example.com."},
		},
		"HIPRendezvousCase": {
			reason: "BIND compares a HIP's RDATA as octets, so rendezvous servers that differ only in case are two records, both served (ISC system test checkconf/check-dup-records.db)",
			rrset:  inline(0, "h", "HIP", hip+"rvs.example.com.", hip+"RVS.example.com."),
			want:   []string{"h.example.com.\t3600\tIN\tHIP\t" + hip + "RVS.example.com.", "h.example.com.\t3600\tIN\tHIP\t" + hip + "rvs.example.com."},
		},
		"SVCBTargetCase": {
			reason: "as HIPRendezvousCase, for an SVCB target (BIND's compare_svcb is on octets)",
			rrset:  inline(0, "s", "SVCB", "1 svc.example.net.", "1 SVC.example.net."),
			want:   []string{"s.example.com.\t3600\tIN\tSVCB\t1 SVC.example.net.", "s.example.com.\t3600\tIN\tSVCB\t1 svc.example.net."},
		},
		"TextCase": {
			reason: "TXT strings are case-sensitive: both stay.",
			rrset:  inline(0, "t", "TXT", `"a"`, `"A"`),
			want:   []string{"t.example.com.\t3600\tIN\tTXT\t\"A\"", "t.example.com.\t3600\tIN\tTXT\t\"a\""},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			z, rs := Build(testZone("example.com.", []string{"ns.example.net."}, nil, tc.rrset))
			if rs.HasErrors() {
				t.Fatal(rs)
			}
			var got []string
			for _, rr := range z.RRs[1:] {
				got = append(got, rr.String())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s\nRRs: -want +got\n%s", tc.reason, diff)
			}
		})
	}
}

// TestLargeRRset keeps dedup and sorting linear-ish: 10000 values build
// fast (60000 octets of A RDATA and lengths, within what BIND holds in one
// RRset: maxRRsetWire).
func TestLargeRRset(t *testing.T) {
	var values []string
	for i := 0; i < 10000; i++ {
		values = append(values, fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255))
	}
	z, rs := Build(testZone("example.com.", []string{"ns.example.net."}, nil, inline(0, "big", "A", values...)))
	if rs.HasErrors() {
		t.Fatal(rs)
	}
	if got, want := len(z.RRs), 10001; got != want {
		t.Errorf("len(RRs) = %d, want %d", got, want)
	}
}

func TestUnquotedWords(t *testing.T) {
	cases := map[string]struct {
		reason   string
		value    string
		n        int
		unquoted bool
	}{
		"spf bare":      {"an SPF policy written as plain words is three strings", "v=spf1 mx -all", 3, true},
		"spf quoted":    {"quoted, it is one string", `"v=spf1 mx -all"`, 1, false},
		"two quoted":    {"strings split on purpose are fine", `"part one" "part two"`, 2, false},
		"one word":      {"a single bare word is one string", "token", 1, true},
		"mixed":         {"a quoted string followed by a bare word", `"v=spf1" mx`, 2, true},
		"escaped quote": {"an escaped quote does not open a string", `a\"b c`, 2, true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			n, unquoted := unquotedWords(tc.value)
			if diff := cmp.Diff([2]any{tc.n, tc.unquoted}, [2]any{n, unquoted}); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}
