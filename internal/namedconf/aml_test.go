package namedconf

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseElement(t *testing.T) {
	pfx := netip.MustParsePrefix
	cases := map[string]struct {
		reason   string
		in       string
		want     AMLElement
		rendered string
		errSub   string
	}{
		"Any":          {reason: "builtin", in: "any", want: AMLElement{Builtin: "any"}, rendered: "any;"},
		"NoneUpper":    {reason: "builtins are case-insensitive and rendered lowercase", in: " NONE ", want: AMLElement{Builtin: "none"}, rendered: "none;"},
		"Localhost":    {reason: "builtin", in: "localhost", want: AMLElement{Builtin: "localhost"}, rendered: "localhost;"},
		"Localnets":    {reason: "builtin", in: "localnets", want: AMLElement{Builtin: "localnets"}, rendered: "localnets;"},
		"QuotedAny":    {reason: "a quoted builtin is the builtin", in: `"any"`, want: AMLElement{Builtin: "any"}, rendered: "any;"},
		"IPv4":         {reason: "an address", in: "192.0.2.1", want: AMLElement{Prefix: pfx("192.0.2.1/32")}, rendered: "192.0.2.1;"},
		"QuotedIPv4":   {reason: "a quoted address is an address, not an ACL name", in: `"192.0.2.1"`, want: AMLElement{Prefix: pfx("192.0.2.1/32")}, rendered: "192.0.2.1;"},
		"IPv4Host32":   {reason: "a /32 is an address", in: "192.0.2.1/32", want: AMLElement{Prefix: pfx("192.0.2.1/32")}, rendered: "192.0.2.1;"},
		"IPv6":         {reason: "IPv6 is normalised to lowercase, compressed", in: "2001:DB8:0::1", want: AMLElement{Prefix: pfx("2001:db8::1/128")}, rendered: "2001:db8::1;"},
		"IPv4CIDR":     {reason: "a network", in: "10.0.0.0/8", want: AMLElement{Prefix: pfx("10.0.0.0/8")}, rendered: "10.0.0.0/8;"},
		"IPv6CIDR":     {reason: "an IPv6 network", in: "2001:db8::/32", want: AMLElement{Prefix: pfx("2001:db8::/32")}, rendered: "2001:db8::/32;"},
		"Negated":      {reason: "negation glues to the element", in: "!10.1.0.0/16", want: AMLElement{Negated: true, Prefix: pfx("10.1.0.0/16")}, rendered: "!10.1.0.0/16;"},
		"NegatedSpace": {reason: "a space after ! is allowed", in: "! localnets", want: AMLElement{Negated: true, Builtin: "localnets"}, rendered: "!localnets;"},
		"Key":          {reason: "a TSIG key", in: "key xfr", want: AMLElement{Key: "xfr"}, rendered: `key "xfr";`},
		"KeyQuoted":    {reason: "the key name may be quoted", in: `KEY "xfr.example."`, want: AMLElement{Key: "xfr.example."}, rendered: `key "xfr.example.";`},
		"NegatedKey":   {reason: "a negated key", in: "!key xfr", want: AMLElement{Negated: true, Key: "xfr"}, rendered: `!key "xfr";`},
		"ACL":          {reason: "an ACL name is rendered quoted", in: "internal-nets_1", want: AMLElement{ACL: "internal-nets_1"}, rendered: `"internal-nets_1";`},
		"ACLQuoted":    {reason: "a quoted ACL name", in: `!"internal"`, want: AMLElement{Negated: true, ACL: "internal"}, rendered: `!"internal";`},
		"HostBits":     {reason: "BIND rejects host bits; say which network was meant", in: "10.1.2.3/8", errSub: "host bits set in \"10.1.2.3/8\" (BIND rejects it); did you mean 10.0.0.0/8?"},
		"HostBitsV6":   {reason: "same for IPv6", in: "2001:db8::1/32", errSub: "did you mean 2001:db8::/32?"},
		"BadPrefixLen": {reason: "prefix length out of range", in: "10.0.0.0/33", errSub: "not a network in CIDR form"},
		"ShortPrefix":  {reason: "BIND's 10/8 shorthand is not accepted", in: "10/8", errSub: "not a network in CIDR form"},
		"BadIPv4":      {reason: "digits and dots are an address, not an ACL name", in: "10.0.0.256", errSub: `"10.0.0.256" is not a valid IP address`},
		"BadIPv6":      {reason: "a colon means an address", in: "2001:db8:::1", errSub: "not a valid IP address"},
		"Scoped":       {reason: "zones are not supported", in: "fe80::1%eth0", errSub: "scoped addresses"},
		"Empty":        {reason: "nothing given", in: "  ", errSub: "it is empty; accepted: any, none"},
		"BareNegation": {reason: "! alone", in: "!", errSub: "it is empty"},
		"DoubleNeg":    {reason: "one ! only", in: "!!any", errSub: `only one leading "!"`},
		"KeyNoName":    {reason: "key needs a name", in: "key", errSub: `write "key <name>" with exactly one key name`},
		"KeyTwoNames":  {reason: "key takes one name", in: "key a b", errSub: "exactly one key name"},
		"KeyBadName":   {reason: "key names are restricted", in: `key "a;b"`, errSub: "braces and semicolons are not allowed"},
		"KeyBadChar":   {reason: "key names are restricted", in: `key a"b`, errSub: `character '"' is not allowed`},
		"QuotedKey":    {reason: `"key" alone is not an ACL`, in: `"key"`, errSub: `write "key <name>"`},
		"TwoElements":  {reason: "one element per entry", in: "10.0.0.0/8 192.0.2.1", errSub: `unexpected "192.0.2.1"; give one element per list entry`},
		"Injection":    {reason: "list syntax is refused", in: `any; }; zone "x" {`, errSub: "braces and semicolons are not allowed"},
		"NestedList":   {reason: "nested lists are not accepted from strings", in: "{ any; }", errSub: "braces and semicolons"},
		"BadACLChar":   {reason: "ACL names are restricted", in: "acl/x", errSub: "not a network in CIDR form"},
		"BadACLName":   {reason: "ACL names are restricted", in: "a*b", errSub: `ACL name "a*b": character '*' is not allowed`},
		"Hostname":     {reason: "a host name looks like an ACL name; BIND takes no host names", in: "ns1.example.com", want: AMLElement{ACL: "ns1.example.com"}, rendered: `"ns1.example.com";`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseElement(tc.in)
			if tc.errSub != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errSub) {
					t.Fatalf("%s\nParseElement(%q): got (%+v, %v), want error containing %q", tc.reason, tc.in, got, err, tc.errSub)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\nParseElement(%q): %v", tc.reason, tc.in, err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b netip.Prefix) bool { return a == b })); diff != "" {
				t.Errorf("%s\nParseElement(%q): -want +got:\n%s", tc.reason, tc.in, diff)
			}
			out, err := Format(got.Stmt())
			if err != nil {
				t.Fatalf("Format: %v", err)
			}
			if diff := cmp.Diff(tc.rendered+"\n", string(out)); diff != "" {
				t.Errorf("%s\nrendered: -want +got:\n%s", tc.reason, diff)
			}
		})
	}
}
