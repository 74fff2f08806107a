package validate

import (
	"fmt"
	"strings"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/zonefile"
)

// zoneNameChars: zone names hold letters, digits, '-', '_', '/' and dots
// (and non-ASCII letters, which become punycode). '/' is RFC 2317's
// classless reverse delegation (0/26.2.0.192.in-addr.arpa), which BIND
// loads; the zone's file name escapes it. Anything else either breaks
// BIND's check-names for the zone's own records or has no place in a file
// name and a named.conf string.
//
// slash allows '/': for zones (not catalog or policy zones) whose name is
// a reverse one (reverseZone).
func zoneNameChars(s string, slash bool) error {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 0x80 || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == '/' && slash) {
			return fmt.Errorf("the zone name %q holds %q: use letters, digits, '-', '_' and dots ('/' only in reverse zones, RFC 2317)", s, rune(c))
		}
	}
	return nil
}

// reverseZone reports whether a zone name (without its trailing dot) is
// under in-addr.arpa or ip6.arpa, where RFC 2317 (and RFC 4183) name
// classless delegations with '/'.
func reverseZone(s string) bool {
	l := strings.ToLower(strings.TrimSuffix(s, "."))
	return strings.HasSuffix(l, ".in-addr.arpa") || strings.HasSuffix(l, ".ip6.arpa")
}

// zonefileRejects reports whether the zone-file builder refuses the name
// itself (so this package need not report it again).
func zonefileRejects(name string) bool {
	return strings.ContainsFunc(name, func(r rune) bool { return r <= ' ' || r == 0x7f || strings.ContainsRune(`;()"$@`, r) }) && name != "@"
}

// qualifyLoose makes a user name absolute for the host-name check.
func qualifyLoose(name, origin string) string {
	switch {
	case name == "" || name == "@":
		return origin
	case strings.HasSuffix(name, "."):
		return name
	case origin == ".":
		// The root zone: "ns.utld" is ns.utld., not ns.utld.. (an empty
		// label, which no host name has).
		return name + "."
	}
	return name + "." + origin
}

// checkNames: BIND loads primary zones with check-names fail, so the
// nameservers, the SOA MNAME and the domain of its RNAME must be host names,
// or the zone does not load. Records are checked where they are parsed
// (zonefile: address owners, NS, MX, SRV and reverse PTR targets).
func checkNames(c *model.Cluster) diag.Results {
	var rs diag.Results
	for _, v := range c.Views {
		if v.Catalog != nil {
			if err := zoneNameChars(strings.TrimSuffix(v.Catalog.ZoneName, "."), false); err != nil && !zonefileRejects(v.Catalog.ZoneName) {
				rs.Errorf(v.Catalog.Src, "spec.zoneName", "cannot use catalog zone name: %v", err)
			}
		}
		for _, p := range v.Policies {
			if err := zoneNameChars(strings.TrimSuffix(p.ZoneName, "."), false); err != nil && !zonefileRejects(p.Spec.ZoneName) {
				rs.Errorf(p.Src, "spec.zoneName", "cannot use policy zone name: %v", err)
			}
		}
		for _, z := range v.Zones {
			if z.Spec.Type != v1alpha1.ZonePrimary {
				continue
			}
			if err := zoneNameChars(strings.TrimSuffix(z.Spec.ZoneName, "."), reverseZone(z.Spec.ZoneName)); err != nil {
				if !zonefileRejects(z.Spec.ZoneName) {
					rs.Errorf(z.Src, "spec.zoneName", "cannot use zone name: %v", err)
				}
				continue
			}
			if zoneName(z.Spec.ZoneName) != nil {
				continue // the zone-file builder reports it
			}
			origin := z.Name
			host := func(src diag.Source, field, name string, wildcard bool, what string) {
				if zonefileRejects(name) {
					return
				}
				if abs := qualifyLoose(name, origin); !zonefile.IsHostname(abs, wildcard) {
					rs.Errorf(src, field, "cannot use %q as %s: BIND loads zones with check-names, which takes only host names here (letters, digits and inner hyphens per label); fix the name", name, what)
				}
			}
			for i, n := range z.Spec.Nameservers {
				host(z.Src, fmt.Sprintf("spec.nameservers[%d]", i), n, false, "a nameserver")
			}
			if soa := z.Spec.SOA; soa != nil {
				if soa.PrimaryNS != "" {
					host(z.Src, "spec.soa.primaryNS", soa.PrimaryNS, false, "the SOA primary nameserver")
				}
				if i := strings.LastIndexByte(soa.Email, '@'); i >= 0 && i+1 < len(soa.Email) {
					d := soa.Email[i+1:]
					if !zonefileRejects(d) && !zonefile.IsHostname(strings.TrimSuffix(d, ".")+".", false) {
						rs.Errorf(z.Src, "spec.soa.email", "cannot use %q as the SOA contact: its domain %q is not a host name; fix it", soa.Email, d)
					}
				}
			}
		}
	}
	return rs
}
