package zonefile

import (
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/model"
)

const hipPrefix = "2 200100107B1A74DF365639CC39F1D578 AwEAAbdxyhNuSutc5EMzxTs9LBPCIkOFH8cIvM4p9+LrV4e19WzK00+CI6zBCQTdtWsuxKbWIy87UOoJTwkUs7lBu+Upr1gsNrut79ryra+bSRGQb1slImA8YVJyuIDsj7kwzG7jnERNqnWxZ48AWkskmdHaVDP4BcelrTI3rMXdXF5D "

// The three slips, as the results say them.
const (
	twice   = "the zone's name twice"                                // (a), an error
	tld     = "although it ends in the top-level"                    // (b), a warning
	address = "it is an IP address, and a domain name belongs there" // (c), an error
)

type slipCase struct {
	reason string
	zone   *model.Zone
	want   []located
}

// slipCases are the cases of TestNameSlips, by name: for every record type
// miekg/dns gives a domain-name field (TestNameSlipsCoverEveryType holds
// them to that list), a name written relative that repeats the zone,
// one that ends in a TLD, and an address where the name belongs; then
// the owner, the nameservers, the SOA names, the types whose data holds no
// name, and the exemptions.
func slipCases() map[string]slipCase {
	z := func(rrsets ...*model.RRset) *model.Zone {
		return testZone("example.com.", []string{"ns.example.net."}, nil, rrsets...)
	}
	one := func(typ, value string) *model.Zone { return z(inline(0, "x", typ, value)) }
	v0 := "spec.records[0].values[0]"
	e := func(says string) []located { return []located{{diag.Error, theZone, v0, says}} }
	w := func(says string) []located { return []located{{diag.Warning, theZone, v0, says}} }
	return map[string]slipCase{
		// Values: every type with a name in its RDATA.
		"CNAME zone twice":   {"the example of the brief: an absolute name missing its dot", one("CNAME", "www.example.com"), e("means www.example.com.example.com., " + twice)},
		"CNAME TLD":          {"cdn.example.net without its dot becomes cdn.example.net.example.com.", one("CNAME", "cdn.example.net"), w(`means cdn.example.net.example.com., ` + tld + ` domain "net"; write "cdn.example.net." if you meant the absolute name`)},
		"CNAME address":      {"an address is no alias target", one("CNAME", "192.0.2.80"), e(`cannot use "192.0.2.80" as a name in this CNAME value: ` + address + " (it would mean the name 192.0.2.80.example.com.")},
		"CNAME IPv6 address": {"IPv6 too", one("CNAME", "2001:db8::80"), e(`cannot use "2001:db8::80" as a name in this CNAME value: ` + address)},
		"CNAME absolute":     {"written with its dot, a name means itself: nothing to say", one("CNAME", "cdn.example.net."), nil},
		"CNAME relative":     {"a plain relative name is what relative names are for", one("CNAME", "www"), nil},
		"CNAME one label TLD": {"one label named like a TLD (com.example.com.) can be meant: a zone may have a label com",
			one("CNAME", "com"), nil},
		"CNAME upper case": {"names compare case-insensitively", one("CNAME", "WWW.Example.COM"), e(`write "WWW.Example.COM." for the absolute name, or "WWW" relative to the zone`)},
		"one-label zone": {"in a one-label zone, a one-label name equal to the zone (lan.lan.) may be meant, as in ISC's check-srv-cname test zone",
			testZone("lan.", []string{"ns.example.net."}, nil, inline(0, "lan", "A", "192.0.2.1"), inline(1, "www", "CNAME", "lan")), nil},
		"one-label zone twice": {"two labels ending in the one-label zone's name are the slip", testZone("lan.", []string{"ns.example.net."}, nil, inline(0, "host.lan", "A", "192.0.2.1")),
			[]located{{diag.Error, theZone, "spec.records[0].name", "means host.lan.lan., " + twice}}},
		"CNAME zone itself":   {"the zone's own name without its dot; relative, that is @", one("CNAME", "example.com"), e(`write "example.com." for the absolute name, or "@" relative to the zone`)},
		"DNAME zone twice":    {"DNAME target", one("DNAME", "other.example.com"), e(twice)},
		"NS zone twice":       {"a delegation's nameserver", z(inline(0, "sub", "NS", "ns1.example.com")), e(twice)},
		"NS address":          {"a nameserver is a name; glue gives its address", z(inline(0, "sub", "NS", "192.0.2.53")), e(address)},
		"MX zone twice":       {"the slip the old check warned about: now an error", one("MX", "10 mail.example.com"), e(`cannot use "mail.example.com" as a name in this MX value`)},
		"MX TLD":              {"an MX at another domain, dot forgotten", one("MX", "10 mx.example.net"), w(tld)},
		"MX address":          {"BIND warns \"MX is an address\"; octoDNS refuses it", one("MX", "10 192.0.2.25"), e(address)},
		"MX absolute address": {"with a dot it is still an address (BIND's check_mx drops the dot too)", one("MX", "10 192.0.2.25."), e(`it would mean the name 192.0.2.25., not the address`)},
		"MX IPv6 address":     {"an IPv6 address is reported as one, not as a name check-names refuses", one("MX", "10 2001:db8::25"), e(address)},
		"SRV zone twice":      {"SRV target", z(inline(0, "_sip._udp", "SRV", "0 5 5060 sip.example.com")), e(twice)},
		"SRV address":         {"SRV target", z(inline(0, "_sip._udp", "SRV", "0 5 5060 192.0.2.5")), e(address)},
		"PTR TLD":             {"PTR target", one("PTR", "host.example.org"), w(tld)},
		"SVCB zone twice":     {"SVCB TargetName", one("SVCB", "1 svc.example.com alpn=h2"), e(twice)},
		"HTTPS TLD":           {"HTTPS TargetName (miekg/dns embeds SVCB)", one("HTTPS", "1 www.example.net alpn=h2"), w(tld)},
		"HTTPS address":       {"an AliasMode target that is an address", one("HTTPS", "0 192.0.2.1"), e(address)},
		"NAPTR replacement":   {"NAPTR replacement", one("NAPTR", `100 10 "S" "SIP+D2U" "" _sip._udp.example.com`), e(twice)},
		"KX zone twice":       {"KX exchanger", one("KX", "10 kx.example.com"), e(twice)},
		"RP zone twice":       {"RP mailbox and TXT name: only the one without a dot", one("RP", "admin.example.com txt.example.com."), e(`"admin.example.com"`)},
		"AFSDB TLD":           {"AFSDB hostname", one("AFSDB", "1 afs.example.net"), w(tld)},
		"RT zone twice":       {"RT host", one("RT", "10 relay.example.com"), e(twice)},
		"PX zone twice": {"PX MAP822 and MAPX400: each name is checked", one("PX", "10 net2.example.com prmd.example.com"),
			[]located{{diag.Error, theZone, v0, `"net2.example.com"`}, {diag.Error, theZone, v0, `"prmd.example.com"`}}},
		"LP TLD":              {"LP FQDN", one("LP", "10 l64.example.net"), w(tld)},
		"NSEC zone twice":     {"NSEC next domain name", one("NSEC", "y.example.com A RRSIG NSEC"), e(twice)},
		"TALINK zone twice":   {"TALINK previous and next names", one("TALINK", "prev.example.com next.example.com."), e(`"prev.example.com"`)},
		"HIP TLD":             {"HIP rendezvous servers, a list of names", one("HIP", hipPrefix+"rvs.example.net"), w(tld)},
		"MB zone twice":       {"MB mailbox host", z(inline(0, "user", "MB", "mailhost.example.com")), e(twice)},
		"MG zone twice":       {"MG mail group member", z(inline(0, "group", "MG", "user.example.com")), e(twice)},
		"MR zone twice":       {"MR new name", one("MR", "user.example.com"), e(twice)},
		"MINFO zone twice":    {"MINFO RMAILBX and EMAILBX", one("MINFO", "admin.example.com errors.example.net."), e(twice)},
		"NSAP-PTR zone twice": {"NSAP-PTR owner name", one("NSAP-PTR", "host.example.com"), e(twice)},
		"RRSIG signer":        {"an RRSIG's signer name written without its dot", one("RRSIG", "A 13 3 3600 20300101000000 20200101000000 12345 example.com AA=="), e(`"example.com"`)},
		"SIG signer":          {"SIG embeds RRSIG's fields", one("SIG", "A 13 3 3600 20300101000000 20200101000000 12345 example.com AA=="), e(`"example.com"`)},
		"NXT next":            {"NXT embeds NSEC's fields", one("NXT", "y.example.com A NXT"), e(twice)},
		"IPSECKEY gateway":    {"an IPSECKEY gateway of type 3 is a name", one("IPSECKEY", "10 3 2 gw.example.com AQNRU3mG7TVTO2BkR47usntb102uFJtugbo6BSGvgqt4AQ=="), e(twice)},
		"IPSECKEY address":    {"a gateway of type 1 is an address, as it should be", one("IPSECKEY", "10 1 2 192.0.2.38 AQNRU3mG7TVTO2BkR47usntb102uFJtugbo6BSGvgqt4AQ=="), nil},
		"AMTRELAY relay":      {"an AMTRELAY relay of type 3 is a name", one("AMTRELAY", "0 0 3 relay.example.com"), e(twice)},
		"AMTRELAY address":    {"a relay of type 1 is an address", one("AMTRELAY", "0 0 1 192.0.2.1"), nil},

		// Opaque data: no name, so nothing to say.
		"TXT SPF include": {"the false positive of the old check: a TXT is opaque text, include:example.com is SPF's business",
			one("TXT", `"v=spf1 include:_spf.example.com include:example.com -all"`), nil},
		"TXT unquoted": {"an unquoted TXT word is a string, not a name", one("TXT", "example.com"), nil},
		"SPF":          {"SPF is TXT by another number", one("SPF", `"v=spf1 a:mail.example.com -all"`), nil},
		"CAA":          {"a CAA value names a CA in a string", one("CAA", `0 issue "example.com"`), nil},
		"NAPTR regexp": {"only the replacement of a NAPTR is a name", one("NAPTR", `100 10 "U" "E2U+sip" "!^.*$!sip:info@example.com!" .`), nil},
		"URI":          {"a URI target is a string", one("URI", `10 1 "https://www.example.com/"`), nil},

		// Owners.
		"owner zone twice": {"an owner written absolute without its dot", z(inline(0, "mail.example.com", "A", "192.0.2.25")),
			[]located{{diag.Error, theZone, "spec.records[0].name", `cannot use "mail.example.com" as the owner name: without a trailing dot it is relative to the zone and means mail.example.com.example.com., ` + twice + `; write "mail.example.com." for the absolute name, or "mail" relative to the zone`}}},
		"owner TLD": {"an owner ending in a TLD: perhaps meant, so a warning", z(inline(0, "www.example.net", "A", "192.0.2.25")),
			[]located{{diag.Warning, theZone, "spec.records[0].name", `"www.example.net" (the owner name) has no trailing dot`}}},
		"owner and value": {"an owner slip and a value slip are both reported", z(record("mx", "www.example.com", "MX", "10 mail.example.com")),
			[]located{{diag.Error, rec("mx"), "spec.name", twice}, {diag.Error, rec("mx"), "spec.values[0]", twice}}},
		"owner address": {"owners are exempt from the address rule: DNSBL and reverse zones name records by reversed addresses",
			z(inline(0, "2.0.0.127", "A", "127.0.0.2")), nil},
		"owner absolute": {"the owner written absolute is what it says", z(inline(0, "mail.example.com.", "A", "192.0.2.25")), nil},
		"owner wildcard TLD": {"a wildcard owner ending in a TLD", z(inline(0, "*.example.org", "TXT", `"x"`)),
			[]located{{diag.Warning, theZone, "spec.records[0].name", tld}}},

		// The zone's own names.
		"nameserver zone twice": {"spec.nameservers are names too", testZone("example.com.", []string{"ns1.example.com"}, nil, inline(0, "ns1", "A", "192.0.2.53")),
			[]located{{diag.Error, theZone, "spec.nameservers[0]", `cannot use "ns1.example.com" as a nameserver`}}},
		"nameserver TLD": {"an outside nameserver without its dot", testZone("example.com.", []string{"ns1.example.net"}, nil),
			[]located{{diag.Warning, theZone, "spec.nameservers[0]", tld}, {diag.Error, theZone, "spec.nameservers[0]", "nameserver ns1.example.net.example.com. is inside zone example.com. but has no A or AAAA record"}}},
		"nameserver address": {"a nameserver given as an address", testZone("example.com.", []string{"192.0.2.53"}, nil),
			[]located{{diag.Error, theZone, "spec.nameservers[0]", address}}},
		"SOA primaryNS": {"the SOA MNAME", testZone("example.com.", []string{"ns.example.net."}, &v1alpha1.SOASpec{PrimaryNS: "ns.example.com"}),
			[]located{{diag.Error, theZone, "spec.soa.primaryNS", twice}}},
		"SOA email domain form": {"a domain-form RNAME is a name relative to the zone", testZone("example.com.", []string{"ns.example.net."}, &v1alpha1.SOASpec{Email: "hostmaster.example.com"}),
			[]located{{diag.Error, theZone, "spec.soa.email", twice}}},
		"SOA email address form": {"local@domain is always absolute", testZone("example.com.", []string{"ns.example.net."}, &v1alpha1.SOASpec{Email: "hostmaster@example.com"}), nil},

		// Zones where relative means something else.
		"root zone": {"in the root zone a relative name is absolute", testZone(".", []string{"a.root-servers.net"}, nil, inline(0, "a.root-servers.net", "A", "198.41.0.4"), inline(1, "www.example", "CNAME", "cdn.example.net")), nil},
		"reverse zone PTR": {"a relative PTR target in a reverse zone ending in a TLD: the user meant host.example.com.",
			&model.Zone{Src: zoneSrc, Name: "2.0.192.in-addr.arpa.", Spec: v1alpha1.BindZoneSpec{ZoneName: "2.0.192.in-addr.arpa.", Type: v1alpha1.ZonePrimary, Nameservers: []string{"ns.example.net."}},
				RRsets: recs(inline(0, "1", "PTR", "host.example.com"))}, w(`means host.example.com.2.0.192.in-addr.arpa.`)},
		"DNSBL NSEC next": {"the next name of an NSEC chain in a DNSBL zone is a reversed address, meant",
			&model.Zone{Src: zoneSrc, Name: "bl.example.com.", Spec: v1alpha1.BindZoneSpec{ZoneName: "bl.example.com.", Type: v1alpha1.ZonePrimary, Nameservers: []string{"ns.example.net."}},
				RRsets: recs(inline(0, "2.0.0.127", "NSEC", "3.0.0.127 A RRSIG NSEC"))}, nil},
	}
}

// TestNameSlips: names written relative that repeat the zone, or end in a
// TLD, and addresses where a name belongs, are reported at the field that
// holds them, in every type's domain-name fields; opaque data is not.
func TestNameSlips(t *testing.T) {
	for name, tc := range slipCases() {
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
		})
	}
}

// TestNameSlipsCoverEveryType: every record type whose miekg/dns struct has
// a domain-name field (the library's own tags, so a type added to it is
// caught) has a case in TestNameSlips, or is one the builder refuses.
func TestNameSlipsCoverEveryType(t *testing.T) {
	refused := map[uint16]bool{dns.TypeSOA: true, dns.TypeMD: true, dns.TypeMF: true, dns.TypeTKEY: true, dns.TypeTSIG: true}
	tested := map[string]bool{}
	for _, c := range slipCases() {
		for _, s := range c.zone.RRsets {
			tested[strings.ToUpper(s.Type)] = true
		}
	}
	var missing []string
	for typ, mk := range dns.TypeToRR {
		rr := mk()
		named := len(nameFieldsOf(reflect.TypeOf(rr).Elem())) > 0 || typ == dns.TypeIPSECKEY || typ == dns.TypeAMTRELAY
		if !named || refused[typ] {
			continue
		}
		if !tested[dns.TypeToString[typ]] {
			missing = append(missing, dns.TypeToString[typ])
		}
	}
	sort.Strings(missing)
	if diff := cmp.Diff([]string(nil), missing); diff != "" {
		t.Errorf("types with domain names and no case in slipCases (-want +got):\n%s", diff)
	}
}

// TestRdataNames: the fast paths of rdataNames give what the reflective
// path gives for the same types.
func TestRdataNames(t *testing.T) {
	for _, v := range []string{"x CNAME a.", "x MX 10 b.", "x NS c.", "x PTR d.", "x SRV 0 0 1 e.", "x IPSECKEY 10 3 2 gw. AQ==", "x AMTRELAY 0 0 3 relay."} {
		rr, err := dns.NewRR(v)
		if err != nil {
			t.Fatal(err)
		}
		var reflective []string
		el := reflect.ValueOf(rr).Elem()
		for _, f := range nameFieldsOf(el.Type()) {
			reflective = append(reflective, el.FieldByIndex(f.index).String())
		}
		if _, ok := rr.(*dns.IPSECKEY); ok {
			reflective = []string{rr.(*dns.IPSECKEY).GatewayHost}
		}
		if _, ok := rr.(*dns.AMTRELAY); ok {
			reflective = []string{rr.(*dns.AMTRELAY).GatewayHost}
		}
		var fast []string
		for _, n := range rdataNames(rr, nil) {
			fast = append(fast, n.name)
		}
		if diff := cmp.Diff(reflective, fast); diff != "" {
			t.Errorf("%s: rdataNames differs from the struct tags (-tags +rdataNames):\n%s", v, diff)
		}
	}
}
