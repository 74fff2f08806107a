package zonefile

import (
	"github.com/google/go-cmp/cmp"
	"strings"
	"testing"

	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// TestRecordForms: the record forms BIND refuses and miekg/dns reads
// (classes found by BIND's own checkzone corpus, test/corpus) are
// located errors, and BIND 9.18 refuses the hand-written record too, unless
// the refusal is BIND 9.20's (v920: then 9.18 loads it, and the corpus test
// holds the refusal to 9.20); accepted forms load in BIND.
func TestRecordForms(t *testing.T) {
	const key = "257 3 8 AwEAAcFcGsaxxdgiuuGmCkVImy4h99CqT7jwY3pexPGcnUFtR2Fh36BponcwtkZ4cAgtvd4Qs8PkxUdp6p/DlUmObdk="
	cases := map[string]struct {
		reason string
		zone   string
		rrsets []*model.RRset
		raw    string
		field  string // "" when accepted
		v920   bool   // refused by BIND 9.20 only
		// bindLoads: a deliberate refusal of what BIND loads (documented).
		bindLoads bool
	}{
		"ds short digest": {reason: "a SHA-256 DS digest is 64 hex digits", rrsets: recs(inline(0, "sub", "NS", "ns.example.net."), inline(1, "sub", "DS", "60485 8 2 ABCDEF")),
			raw: "sub 300 IN NS ns.example.net.\nsub 300 IN DS 60485 8 2 ABCDEF", field: "spec.records[1].values[0]"},
		"ds sha1 ok": {reason: "a SHA-1 DS digest of 40 hex digits", rrsets: recs(inline(0, "sub", "NS", "ns.example.net."), inline(1, "sub", "DS", "60485 8 1 2BB183AF5F22588179A53B0A98631FAD1A292118")),
			raw: "sub 300 IN NS ns.example.net.\nsub 300 IN DS 60485 8 1 2BB183AF5F22588179A53B0A98631FAD1A292118"},
		"cds short digest": {reason: "a SHA-384 CDS digest is 96 hex digits", rrsets: recs(inline(0, "@", "DNSKEY", key), inline(1, "@", "CDS", "60485 8 4 ABCDEF")),
			raw: "@ 300 IN DNSKEY " + key + "\n@ 300 IN CDS 60485 8 4 ABCDEF", field: "spec.records[1].values[0]"},
		"sshfp sha1 ok": {reason: "a SHA-1 SSHFP fingerprint of 40 hex digits", rrsets: recs(inline(0, "host", "SSHFP", "4 1 2BB183AF5F22588179A53B0A98631FAD1A292118")),
			raw: "host 300 IN SSHFP 4 1 2BB183AF5F22588179A53B0A98631FAD1A292118"},
		"zonemd short": {reason: "a SHA-384 ZONEMD digest is 96 hex digits", rrsets: recs(inline(0, "@", "ZONEMD", "1 1 1 ABCD")),
			raw: "@ 300 IN ZONEMD 1 1 1 ABCD", field: "spec.records[0].values[0]"},
		"zonemd private ok": {reason: "a ZONEMD of a private hash algorithm with 12 octets", rrsets: recs(inline(0, "@", "ZONEMD", "1 1 240 000102030405060708090A0B")),
			raw: "@ 300 IN ZONEMD 1 1 240 000102030405060708090A0B"},
		"caa tag hyphen": {reason: "a CAA tag is letters and digits", rrsets: recs(inline(0, "x", "CAA", `0 is-sue "ca.example.net"`)),
			raw: `x 300 IN CAA 0 is-sue "ca.example.net"`, field: "spec.records[0].values[0]"},
		"uri empty": {reason: "a URI needs a target (9.20)", rrsets: recs(inline(0, "x", "URI", `10 1 ""`)),
			raw: `x 300 IN URI 10 1 ""`, field: "spec.records[0].values[0]", v920: true},
		"hinfo one string": {reason: "an HINFO holds a CPU and an OS string", rrsets: recs(inline(0, "x", "HINFO", `"a"`)),
			raw: `x 300 IN HINFO "a"`, field: "spec.records[0].values[0]"},
		"ipseckey no key": {reason: "an IPSECKEY needs its public key", rrsets: recs(inline(0, "x", "IPSECKEY", "10 1 2 192.0.2.1")),
			raw: "x 300 IN IPSECKEY 10 1 2 192.0.2.1", field: "spec.records[0].values[0]"},
		"nsec3param long salt": {reason: "an NSEC3 salt is at most 255 octets", rrsets: recs(inline(0, "@", "NSEC3PARAM", "1 0 0 "+strings.Repeat("AB", 256))),
			raw: "@ 300 IN NSEC3PARAM 1 0 0 " + strings.Repeat("AB", 256), field: "spec.records[0].values[0]"},
		"isdn three strings": {reason: "an ISDN holds two strings at most", rrsets: recs(inline(0, "x", "ISDN", `"a" "b" "c"`)),
			raw: `x 300 IN ISDN "a" "b" "c"`, field: "spec.records[0].values[0]"},
		"x25 quoted": {reason: "BIND reads a quoted X25 address; written unquoted for miekg/dns", rrsets: recs(inline(0, "x", "X25", `"311061700956"`)),
			raw: `x 300 IN X25 "311061700956"`},
		"apl empty": {reason: "an APL of no items is one RR (RFC 3123 §4), as ISC's acl system test writes it", rrsets: recs(inline(0, "x", "APL", "")),
			raw: "x 300 IN APL"},
		"apl host bits": {reason: "BIND loads an APL prefix with host bits, which miekg/dns cannot hold: refused with the network address as the fix (documented)", rrsets: recs(inline(0, "x", "APL", "1:192.0.2.1/24")),
			raw: "x 300 IN APL 1:192.0.2.1/24", field: "spec.records[0].values[0]", bindLoads: true},
		"naptr bad regexp": {reason: "a NAPTR regexp is delim-regexp-delim-replacement-delim (naptr_35.c)", rrsets: recs(inline(0, "x", "NAPTR", `100 10 "u" "E2U+sip" "x" .`)),
			raw: `x 300 IN NAPTR 100 10 "u" "E2U+sip" "x" .`, field: "spec.records[0].values[0]"},
		"naptr unbalanced": {reason: "the regexp must parse", rrsets: recs(inline(0, "x", "NAPTR", `100 10 "" "" "!^(.*$!x!" .`)),
			raw: `x 300 IN NAPTR 100 10 "" "" "!^(.*$!x!" .`, field: "spec.records[0].values[0]"},
		"naptr backref": {reason: "a back-reference needs its group", rrsets: recs(inline(0, "x", "NAPTR", `100 10 "u" "E2U+sip" "!^.*$!sip:\\1@example.com!" .`)),
			raw: `x 300 IN NAPTR 100 10 "u" "E2U+sip" "!^.*$!sip:\\1@example.com!" .`, field: "spec.records[0].values[0]"},
		"naptr enum ok": {reason: "an ENUM regexp with its group", rrsets: recs(inline(0, "x", "NAPTR", `100 10 "u" "E2U+sip" "!^\\+(.*)$!sip:\\1@example.com!i" .`)),
			raw: `x 300 IN NAPTR 100 10 "u" "E2U+sip" "!^\\+(.*)$!sip:\\1@example.com!i" .`},
		"dhcid bad base64": {reason: "DHCID data is base64", rrsets: recs(inline(0, "x", "DHCID", "AA")),
			raw: "x 300 IN DHCID AA", field: "spec.records[0].values[0]"},
		"rkey flags": {reason: "BIND takes only flags 0 in an RKEY (key_25.c)", rrsets: recs(inline(0, "x", "RKEY", "257 3 13 AwEAAbdxyhNuSutc5EMzxTs9LBPCIkOFH8cIvM4p9+LrV4e19WzK00+CI6zBCQTd")),
			raw: "x 300 IN RKEY 257 3 13 AwEAAbdxyhNuSutc5EMzxTs9LBPCIkOFH8cIvM4p9+LrV4e19WzK00+CI6zBCQTd", field: "spec.records[0].values[0]"},
		"rkey flags 0": {reason: "an RKEY with flags 0 loads", rrsets: recs(inline(0, "x", "RKEY", "0 3 13 AwEAAbdxyhNuSutc5EMzxTs9LBPCIkOFH8cIvM4p9+LrV4e19WzK00+CI6zBCQTd")),
			raw: "x 300 IN RKEY 0 3 13 AwEAAbdxyhNuSutc5EMzxTs9LBPCIkOFH8cIvM4p9+LrV4e19WzK00+CI6zBCQTd"},
		"amtrelay type 4": {reason: "AMTRELAY relay types are 0 to 3", rrsets: recs(inline(0, "x", "AMTRELAY", "0 0 4")),
			raw: "x 300 IN AMTRELAY 0 0 4", field: "spec.records[0].values[0]"},
		"svcb empty alpn": {reason: "an alpn id is not empty", rrsets: recs(inline(0, "x", "HTTPS", `1 . alpn=""`)),
			raw: `x 300 IN HTTPS 1 . alpn=""`, field: "spec.records[0].values[0]"},
		"dohpath without dns": {reason: "a dohpath is a URI template with the dns variable", rrsets: recs(inline(0, "x", "HTTPS", "1 . alpn=h2 dohpath=/x")),
			raw: "x 300 IN HTTPS 1 . alpn=h2 dohpath=/x", field: "spec.records[0].values[0]"},
		"loc altitude": {reason: "a LOC altitude over 42849672.95m (miekg/dns wraps it)", rrsets: recs(inline(0, "x", "LOC", "0 N 0 E 42849673m")),
			raw: "x 300 IN LOC 0 N 0 E 42849673m", field: "spec.records[0].values[0]"},
		"cert ipkix": {reason: "CERT type 4 is BIND's IPKIX, which miekg/dns writes as IPIX: written as IPKIX", rrsets: recs(inline(0, "x", "CERT", "IPKIX 0 0 AA==")),
			raw: "x 300 IN CERT IPKIX 0 0 AA=="},
		"nid short groups": {reason: "BIND reads a NID locator's groups of 1 to 4 hex digits (ISC system test additional/ns1/nid.db); padded for miekg/dns", rrsets: recs(inline(0, "x", "NID", "2 0:0:0:1")),
			raw: "x 300 IN NID 2 0:0:0:1"},
		"l64 short groups": {reason: "as nid short groups, for L64", rrsets: recs(inline(0, "x", "L64", "10 14:4fff:ff20:ee64")),
			raw: "x 300 IN L64 10 14:4fff:ff20:ee64"},
		"gpos quoted": {reason: "BIND reads quoted GPOS coordinates (ISC system test tsig/ns1/example.db); written unquoted for miekg/dns", rrsets: recs(inline(0, "x", "GPOS", `"-22.6882" "116.8652" "250.0"`)),
			raw: `x 300 IN GPOS "-22.6882" "116.8652" "250.0"`},
		"cert 4": {reason: "and by number", rrsets: recs(inline(0, "y", "CERT", "4 0 0 AA==")),
			raw: "y 300 IN CERT 4 0 0 AA=="},
		"rrsig labels": {reason: "an RRSIG's labels field is at least its signer's label count", rrsets: recs(inline(0, "x", "RRSIG", "A 8 1 300 20300101000000 20200101000000 1 example.com. AA==")),
			raw: "x 300 IN RRSIG A 8 1 300 20300101000000 20200101000000 1 example.com. AA==", field: "spec.records[0].values[0]"},
		"sshfp short": {reason: "a SHA-256 SSHFP fingerprint is 64 hex digits", rrsets: recs(inline(0, "host", "SSHFP", "4 2 ABCDEF")),
			raw: "host 300 IN SSHFP 4 2 ABCDEF", field: "spec.records[0].values[0]"},
		"nsec3 padded": {reason: "NSEC3 next hashes are base32hex without padding (corpus bad-nsec3-padded.db)", rrsets: recs(inline(0, "0p9mhaveqvm6t7vbl5lop2u3t2rp3tom", "NSEC3", "1 1 12 AABBCCDD CPNMU=== MX")),
			raw: "0p9mhaveqvm6t7vbl5lop2u3t2rp3tom 300 IN NSEC3 1 1 12 AABBCCDD CPNMU=== MX", field: "spec.records[0].values[0]"},
		"nsec3 sha1 length": {reason: "a SHA-1 next hash is 20 bytes (corpus bad-nsec3-length.db: a ';' cut it)", rrsets: recs(inline(0, "I7A7A184GGMI35K1E3IR650LKO7NOB5R", "NSEC3", "1 0 10 76931F IMQ912BREQP1POLAH3RMONG A")),
			raw: "I7A7A184GGMI35K1E3IR650LKO7NOB5R 300 IN NSEC3 1 0 10 76931F IMQ912BREQP1POLAH3RMONG A", field: "spec.records[0].values[0]"},
		"nsec3 owner padded": {reason: "an NSEC3 owner's first label is base32hex without padding (corpus bad-nsec3owner-padded.db)", rrsets: recs(inline(0, "CPNMU===", "NSEC3", "2 1 12 AABBCCDD CPNMU MX")),
			raw: "CPNMU=== 300 IN NSEC3 2 1 12 AABBCCDD CPNMU MX", field: "spec.records[0].name"},
		"nsec3 unpadded ok": {reason: "an unpadded short hash of another algorithm loads (corpus good-nsec3-nopadhash.db)", rrsets: recs(inline(0, "CPNMU", "NSEC3", "2 1 12 AABBCCDD CPNMU MX")),
			raw: "CPNMU 300 IN NSEC3 2 1 12 AABBCCDD CPNMU MX"},
		"svcb mandatory missing": {reason: "a mandatory key must be set (corpus bad-svcb-mandatory.db)", rrsets: recs(inline(0, "svcb", "SVCB", "1 . mandatory=alpn port=53")),
			raw: "svcb 300 IN SVCB 1 . mandatory=alpn port=53", field: "spec.records[0].values[0]"},
		"svcb mandatory ok": {reason: "a mandatory key that is set", rrsets: recs(inline(0, "svcb", "SVCB", "1 . mandatory=alpn alpn=h2")),
			raw: "svcb 300 IN SVCB 1 . mandatory=alpn alpn=h2"},
		"svcb no-default-alpn": {reason: "no-default-alpn needs alpn", rrsets: recs(inline(0, "svcb", "HTTPS", "1 . no-default-alpn port=443")),
			raw: "svcb 300 IN HTTPS 1 . no-default-alpn port=443", field: "spec.records[0].values[0]"},
		"svcb target check-names": {reason: "a ServiceMode target is a host name (corpus bad-svcb-servername.db)", rrsets: recs(inline(0, "svcb", "SVCB", "1 _underscore.example. port=60")),
			raw: "svcb 300 IN SVCB 1 _underscore.example. port=60", field: "spec.records[0].values[0]"},
		"svcb alias target": {reason: "an AliasMode target is not checked", rrsets: recs(inline(0, "svcb", "HTTPS", "0 _underscore.example.")),
			raw: "svcb 300 IN HTTPS 0 _underscore.example."},
		"svcb keyNNNNN": {reason: "an unregistered key in keyNNNNN form loads", rrsets: recs(inline(0, "svcb", "SVCB", `1 . key65000="x"`)),
			raw: `svcb 300 IN SVCB 1 . key65000="x"`},
		"svcb v4-mapped hint": {reason: "a v4-mapped ipv6hint: BIND loads it, miekg/dns cannot hold it; refused with the fix (ipv4hint), documented in docs/validation.md", rrsets: recs(inline(0, "svcb", "SVCB", "1 . ipv6hint=::ffff:192.0.2.1")),
			raw: "svcb 300 IN SVCB 1 . ipv6hint=::ffff:192.0.2.1", field: "spec.records[0].values[0]", bindLoads: true},
		"svcb ohttp": {reason: "BIND knows no ohttp key, and miekg/dns writes key 8 only by that name", rrsets: recs(inline(0, "svcb", "SVCB", "1 . ohttp")),
			raw: "svcb 300 IN SVCB 1 . ohttp", field: "spec.records[0].values[0]"},
		"svcb dohpath": {reason: "dohpath (key 7) loads in 9.18 and 9.20", rrsets: recs(inline(0, "svcb", "SVCB", `1 . alpn=h2 dohpath="/q{?dns}"`)),
			raw: `svcb 300 IN SVCB 1 . alpn=h2 dohpath="/q{?dns}"`},
		"_dns no alpn": {reason: "a _dns SVCB needs alpn (RFC 9461; corpus bad-_dns-svcb1.db)", rrsets: recs(inline(0, "_dns", "SVCB", "1 ns.example.net. dohpath=/{?dns}")),
			raw: "_dns 300 IN SVCB 1 ns.example.net. dohpath=/{?dns}", field: "spec.records[0].values[0]", v920: true},
		"_dns h2 no dohpath": {reason: "a _dns SVCB with an HTTP alpn needs a dohpath (corpus bad-_dns-svcb3.db)", rrsets: recs(inline(0, "_dns", "SVCB", "1 ns.example.net. alpn=h2")),
			raw: "_dns 300 IN SVCB 1 ns.example.net. alpn=h2", field: "spec.records[0].values[0]", v920: true},
		"_dns escaped comma": {reason: "BIND splits alpn ids at escaped commas too (corpus bad-_dns-svcb6.db)", rrsets: recs(inline(0, "_443._dns", "SVCB", `1 ns.example.net. alpn=x1\\,h2`)),
			raw: `_443._dns 300 IN SVCB 1 ns.example.net. alpn=x1\\,h2`, field: "spec.records[0].values[0]", v920: true},
		"_dns dot ok": {reason: "DoT needs no dohpath", rrsets: recs(inline(0, "_dns", "SVCB", "1 ns.example.net. alpn=dot")),
			raw: "_dns 300 IN SVCB 1 ns.example.net. alpn=dot"},
		"cds without dnskey": {reason: "a CDS needs a DNSKEY of its algorithm at the apex (corpus bad-cds.db)", rrsets: recs(inline(0, "@", "CDS", "60485 8 2 D4B7D520E7BB5F0F67674A0CCEB1E3E0614B93C4F9E99B8383F6A1E4469DA50A")),
			raw: "@ 300 IN CDS 60485 8 2 D4B7D520E7BB5F0F67674A0CCEB1E3E0614B93C4F9E99B8383F6A1E4469DA50A", field: "spec.records[0].values[0]"},
		"cdnskey other algorithm": {reason: "a CDNSKEY needs a DNSKEY of its algorithm (corpus bad-cdnskey.db)", rrsets: recs(inline(0, "@", "DNSKEY", key), inline(1, "@", "CDNSKEY", "257 3 13 mdsswUyr3DPW132mOi8V9xESWE8jTo0dxCjjnopKl+GqJxpVXckHAeF+KkxLbxILfDLUT0rAK9iUzy1L53eKGQ==")),
			raw: "@ 300 IN DNSKEY " + key + "\n@ 300 IN CDNSKEY 257 3 13 mdsswUyr3DPW132mOi8V9xESWE8jTo0dxCjjnopKl+GqJxpVXckHAeF+KkxLbxILfDLUT0rAK9iUzy1L53eKGQ==", field: "spec.records[1].values[0]"},
		"cdnskey matching": {reason: "a CDNSKEY of the DNSKEY's algorithm", rrsets: recs(inline(0, "@", "DNSKEY", key), inline(1, "@", "CDNSKEY", key)),
			raw: "@ 300 IN DNSKEY " + key + "\n@ 300 IN CDNSKEY " + key},
		"cds delete alone": {reason: "the CDS deletion record loads without a DNSKEY (corpus good-cds-unsigned.db)", rrsets: recs(inline(0, "@", "CDS", "0 0 0 00")),
			raw: "@ 300 IN CDS 0 0 0 00"},
		"ns below dname": {reason: "an apex nameserver below a DNAME is occluded (corpus ns-address-below-dname.db)", rrsets: recs(inline(0, "sub", "DNAME", "example.net."), inline(1, "ns.sub", "A", "192.0.2.1")),
			raw: "@ 300 IN NS ns.sub\nsub 300 IN DNAME example.net.\nns.sub 300 IN A 192.0.2.1", field: "spec.nameservers[1]"},
		"wildcard ns": {reason: "BIND refuses an NS at a wildcard", rrsets: recs(inline(0, "*", "NS", "ns.example.net.")),
			raw: "* 300 IN NS ns.example.net.", field: "spec.records[0].name"},
		"ds not at delegation": {reason: "a DS only at a delegation (BIND 9.20; corpus bad-ds-2.db)", rrsets: recs(inline(0, "foo", "DS", "60485 8 2 D4B7D520E7BB5F0F67674A0CCEB1E3E0614B93C4F9E99B8383F6A1E4469DA50A")),
			raw: "foo 300 IN DS 60485 8 2 D4B7D520E7BB5F0F67674A0CCEB1E3E0614B93C4F9E99B8383F6A1E4469DA50A", field: "spec.records[0].name", v920: true},
		"cname and key": {reason: "BIND takes a KEY beside a CNAME (corpus bad-cname-and-key.db, loaded by 9.18 and 9.20)", rrsets: recs(inline(0, "good", "KEY", key), inline(1, "good", "CNAME", "@")),
			raw: "good 300 IN KEY " + key + "\ngood 300 IN CNAME @"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			zone := tc.zone
			if zone == "" {
				zone = "example.com."
			}
			ns := []string{"ns1.example.net."}
			if name == "ns below dname" {
				ns = append(ns, "ns.sub")
			}
			built, rs := Build(testZone(zone, ns, nil, tc.rrsets...))
			err := bindZone(t, zone, tc.raw)
			// BIND 9.20, the version bind-fn ships, refuses exactly what
			// is refused here, except the deliberate refusals.
			if out, loads := bindZone920(t, zone, tc.raw); loads != (tc.field == "" || tc.bindLoads) {
				t.Errorf("%s: named-checkzone 9.20 loads it: %v, want %v\n%s", tc.reason, loads, tc.field == "" || tc.bindLoads, out)
			}
			if tc.field == "" {
				if rs.HasErrors() {
					t.Fatalf("%s: %v", tc.reason, rs)
				}
				checkZone(t, zone, built.Text(1))
				if err != nil {
					t.Errorf("%s: named-checkzone refuses the hand-written form: %v", tc.reason, err)
				}
				return
			}
			found := false
			for _, r := range rs {
				found = found || r.Field == tc.field && strings.Contains(r.Message, "BIND")
			}
			if !found {
				t.Errorf("%s: got %v, want an error at %s", tc.reason, rs, tc.field)
			}
			if tc.v920 && err != nil {
				t.Errorf("%s: marked as BIND 9.20's refusal, but 9.18 refuses it too: %v", tc.reason, err)
			}
			if tc.bindLoads {
				if err != nil {
					t.Errorf("%s: listed as a refusal of what BIND loads, but 9.18 refuses it: %v", tc.reason, err)
				}
				return
			}
			if !tc.v920 && err == nil {
				t.Errorf("%s: named-checkzone 9.18 loads %q: the refusal is not needed", tc.reason, tc.raw)
			}
		})
	}
}

// TestBINDOnlyTypes: a type BIND reads and miekg/dns does not renders, in
// its own text form or in the RFC 3597 form, as the same generic RDATA
// under TYPEnnn, and both forms load in BIND (corpus good-nsap.db).
func TestBINDOnlyTypes(t *testing.T) {
	text, rs := Build(testZone("example.com.", []string{"ns1.example.net."}, nil, inline(0, "x", "NSAP", "0x47.0005.80.005a00.0000.0001.e133.aaaaaa000151.00")))
	if rs.HasErrors() {
		t.Fatalf("the NSAP text form: %v", rs)
	}
	generic := `\# 20 47000580005a0000000001e133aaaaaa00015100`
	built, rs := Build(testZone("example.com.", []string{"ns1.example.net."}, nil, inline(0, "x", "TYPE22", generic)))
	if rs.HasErrors() {
		t.Fatalf("the generic form: %v", rs)
	}
	if diff := cmp.Diff(string(built.Text(1)), string(text.Text(1))); diff != "" {
		t.Errorf("the NSAP text form renders other than its generic form: -generic +text\n%s", diff)
	}
	checkZone(t, "example.com.", built.Text(1))
	if err := bindZone(t, "example.com.", "x 300 IN NSAP 0x47.0005.80.005a00.0000.0001.e133.aaaaaa000151.00\ny 300 IN TYPE22 "+generic); err != nil {
		t.Errorf("BIND refuses the NSAP forms: %v", err)
	}
}

// bindZone920 is bindZone on BIND 9.20 (bindtools.BIND920).
func bindZone920(t *testing.T, origin, raw string) (string, bool) {
	t.Helper()
	return bindZoneOn(t, bindtools.BIND920, origin, raw)
}
