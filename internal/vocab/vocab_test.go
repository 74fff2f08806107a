package vocab

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/miekg/dns"
)

func TestDNSSECByName(t *testing.T) {
	cases := map[string]struct {
		reason string
		in     string
		want   string // "" when not found
	}{
		"Mnemonic": {"the rendered mnemonic", "ECDSAP256SHA256", "ecdsap256sha256"},
		"Alias":    {"BIND's alias ecdsa384", "ecdsa384", "ecdsap384sha384"},
		"Number":   {"a number as text", "15", "ed25519"},
		"Default":  {"empty is BIND's default", "", "ecdsap256sha256"},
		"Unknown":  {"not an algorithm", "rot13", ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			a, _ := DNSSECByName(tc.in)
			if diff := cmp.Diff(tc.want, a.Name); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tc.reason, diff)
			}
		})
	}
}

// TestTables: every number and wire name is miekg/dns's, every name once.
func TestTables(t *testing.T) {
	seen := map[string]bool{}
	for _, a := range DNSSEC {
		if seen[a.Name] {
			t.Errorf("%s twice", a.Name)
		}
		seen[a.Name] = true
		if _, ok := dns.AlgorithmToString[a.Number]; !ok {
			t.Errorf("%s: number %d unknown to miekg/dns", a.Name, a.Number)
		}
		if a.Generate && !a.Accepted {
			t.Errorf("%s: generated but not accepted", a.Name)
		}
	}
	for alias, to := range DNSSECAliases {
		if a, ok := DNSSECByName(to); !ok || a.Name != to {
			t.Errorf("alias %s points at %s, not in the table", alias, to)
		}
	}
	for _, a := range TSIG {
		if seen[a.Name] {
			t.Errorf("%s twice", a.Name)
		}
		seen[a.Name] = true
		if a.Wire != dns.Fqdn(a.Name) && a.Name != "hmac-md5" {
			t.Errorf("%s: wire name %s", a.Name, a.Wire)
		}
	}
	if _, ok := TSIGByName(DefaultTSIG); !ok {
		t.Error("DefaultTSIG not in TSIG")
	}
}

func TestPolicyDurationLookups(t *testing.T) {
	cases := map[string]struct {
		reason string
		find   func() (PolicyDuration, bool)
		want   string // the keyword found, "" when none
	}{
		"Keyword":        {"named.conf's keyword", func() (PolicyDuration, bool) { return PolicyDurationByKeyword("signatures-refresh") }, "signatures-refresh"},
		"Field":          {"the API's field", func() (PolicyDuration, bool) { return PolicyDurationByField("parentDSTTL") }, "parent-ds-ttl"},
		"FieldIsNotKw":   {"a keyword is not a field", func() (PolicyDuration, bool) { return PolicyDurationByField("dnskey-ttl") }, ""},
		"UnknownKeyword": {"not a policy duration", func() (PolicyDuration, bool) { return PolicyDurationByKeyword("max-cache-ttl") }, ""},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			d, ok := tc.find()
			if diff := cmp.Diff(tc.want, d.Keyword); diff != "" || ok != (tc.want != "") {
				t.Errorf("%s: found %v (-want +got):\n%s", tc.reason, ok, diff)
			}
		})
	}
}

// TestZoneType: an old name (master, slave; masters for the list) reads as
// the current one, in any case; a type without an old name, or one bind-fn
// does not know, comes back lower-cased for the caller to refuse.
func TestZoneType(t *testing.T) {
	types := map[string]string{
		"primary": "primary", "master": "primary", "SLAVE": "secondary", "secondary": "secondary",
		"Forward": "forward", "Delegation-Only": "delegation-only",
	}
	lists := map[string]bool{"primaries": true, "masters": true, "Masters": true, "also-notify": false}
	gotTypes, gotLists := map[string]string{}, map[string]bool{}
	for in := range types {
		gotTypes[in] = ZoneType(in)
	}
	for in := range lists {
		gotLists[in] = IsPrimariesList(in)
	}
	if diff := cmp.Diff(types, gotTypes); diff != "" {
		t.Errorf("ZoneType (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(lists, gotLists); diff != "" {
		t.Errorf("IsPrimariesList (-want +got):\n%s", diff)
	}
}
