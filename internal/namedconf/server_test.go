package namedconf

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var cmpAddr = cmp.Comparer(func(a, b netip.Addr) bool { return a == b })

func TestParseServerEntry(t *testing.T) {
	ip := netip.MustParseAddr
	cases := map[string]struct {
		reason   string
		in       string
		want     ServerEntry
		rendered string
		errSub   string
	}{
		"IPv4":        {reason: "an address", in: "192.0.2.1", want: ServerEntry{Addr: ip("192.0.2.1")}, rendered: "192.0.2.1;"},
		"IPv6Port":    {reason: "an address and port", in: "2001:DB8::1 port 5353", want: ServerEntry{Addr: ip("2001:db8::1"), Port: 5353}, rendered: "2001:db8::1 port 5353;"},
		"Key":         {reason: "an address and key", in: "192.0.2.1 key xfr", want: ServerEntry{Addr: ip("192.0.2.1"), Key: "xfr"}, rendered: `192.0.2.1 key "xfr";`},
		"PortKey":     {reason: "quoted key", in: `192.0.2.1 port 53 key "xfr"`, want: ServerEntry{Addr: ip("192.0.2.1"), Port: 53, Key: "xfr"}, rendered: `192.0.2.1 port 53 key "xfr";`},
		"KeyPort":     {reason: "options in any order, rendered canonically", in: "192.0.2.1 KEY xfr PORT 53", want: ServerEntry{Addr: ip("192.0.2.1"), Port: 53, Key: "xfr"}, rendered: `192.0.2.1 port 53 key "xfr";`},
		"List":        {reason: "a server list name", in: "secondaries", want: ServerEntry{List: "secondaries"}, rendered: `"secondaries";`},
		"ListQuoted":  {reason: "a quoted list name", in: `"bind-secondaries"`, want: ServerEntry{List: "bind-secondaries"}, rendered: `"bind-secondaries";`},
		"ListKey":     {reason: "BIND 9.18 rejects a key after a list name", in: "secs key xfr", errSub: "accepts no port or key after a server list name"},
		"Empty":       {reason: "nothing given", in: " ", errSub: "server entry is empty"},
		"BadAddr":     {reason: "digits and dots are an address", in: "192.0.2.300", errSub: "not a valid IP address (BIND takes addresses or list names here, never host names)"},
		"Scoped":      {reason: "no zones", in: "fe80::1%eth0 port 53", errSub: "scoped addresses"},
		"PortZero":    {reason: "ports are 1-65535", in: "192.0.2.1 port 0", errSub: `port "0" is not a number from 1 to 65535`},
		"PortBig":     {reason: "ports are 1-65535", in: "192.0.2.1 port 65536", errSub: "not a number from 1 to 65535"},
		"PortWord":    {reason: "ports are numbers", in: "192.0.2.1 port http", errSub: "not a number"},
		"PortTwice":   {reason: "one port", in: "192.0.2.1 port 53 port 54", errSub: "port given twice"},
		"KeyTwice":    {reason: "one key", in: "192.0.2.1 key a key b", errSub: "key given twice"},
		"KeyMissing":  {reason: "key needs a name", in: "192.0.2.1 key", errSub: `"key" needs a value`},
		"KeyBad":      {reason: "key names are restricted", in: `192.0.2.1 key "a b"`, errSub: "key name"},
		"TLS":         {reason: "tls is not supported", in: "192.0.2.1 tls x", errSub: `unexpected "tls"`},
		"Injection":   {reason: "statement syntax is refused", in: `192.0.2.1; }; zone "x" {`, errSub: "braces and semicolons are not allowed"},
		"Hostname":    {reason: "a host name is taken as a list name (BIND has no host names here)", in: "ns1.example.com", want: ServerEntry{List: "ns1.example.com"}, rendered: `"ns1.example.com";`},
		"ListBadChar": {reason: "list names are restricted", in: "a*b", errSub: `server list name "a*b"`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := ParseServerEntry(tc.in)
			if tc.errSub != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errSub) {
					t.Fatalf("%s\nParseServerEntry(%q): got (%+v, %v), want error containing %q", tc.reason, tc.in, got, err, tc.errSub)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s\nParseServerEntry(%q): %v", tc.reason, tc.in, err)
			}
			if diff := cmp.Diff(tc.want, got, cmpAddr); diff != "" {
				t.Errorf("%s\nParseServerEntry(%q): -want +got:\n%s", tc.reason, tc.in, diff)
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

func TestServerEntryStmtErrors(t *testing.T) {
	cases := map[string]struct {
		reason string
		entry  ServerEntry
		errSub string
	}{
		"Zero":      {reason: "nothing set", entry: ServerEntry{}, errSub: "neither an address nor a list name"},
		"ListKey":   {reason: "BIND 9.18 takes only the list name", entry: ServerEntry{List: "x", Key: "k"}, errSub: "accepts only the list name"},
		"BadPort":   {reason: "port out of range", entry: ServerEntry{Addr: netip.MustParseAddr("192.0.2.1"), Port: 70000}, errSub: "port 70000"},
		"BadKey":    {reason: "key names go through Str", entry: ServerEntry{Addr: netip.MustParseAddr("192.0.2.1"), Key: "a\nb"}, errSub: "line break"},
		"ScopedIP6": {reason: "no zones", entry: ServerEntry{Addr: netip.MustParseAddr("fe80::1%eth0")}, errSub: "scoped address"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			out, err := Format(tc.entry.Stmt())
			if err == nil || !strings.Contains(err.Error(), tc.errSub) {
				t.Fatalf("%s\nFormat(%+v.Stmt()) = (%q, %v), want error containing %q", tc.reason, tc.entry, out, err, tc.errSub)
			}
		})
	}
}
