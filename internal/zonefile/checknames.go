package zonefile

import (
	"regexp"
	"strings"

	"github.com/miekg/dns"
)

var ldh = regexp.MustCompile(`^[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?$`)

// IsHostname is BIND's dns_name_ishostname on an absolute name: every
// label letters, digits and inner hyphens; a leading "*" label when
// wildcard. An escaped character (host\@office) is no host name. A label
// with non-ASCII characters (the user's IDN, before the builder writes it
// as punycode) is left to the builder: built names are ASCII. The one
// host-name rule: validate's check-names reads it too.
func IsHostname(abs string, wildcard bool) bool {
	for i, l := range dns.SplitDomainName(abs) {
		if i == 0 && wildcard && l == "*" {
			continue
		}
		if strings.ContainsFunc(l, func(r rune) bool { return r >= 0x80 }) {
			continue
		}
		if !ldh.MatchString(l) {
			return false
		}
	}
	return true
}

// reverseZone reports whether owner is under in-addr.arpa, ip6.arpa or
// ip6.int, where BIND's check-names wants PTR targets to be host names.
func reverseOwner(owner string) bool {
	for _, s := range []string{"in-addr.arpa.", "ip6.arpa.", "ip6.int."} {
		if owner == s || strings.HasSuffix(owner, "."+s) {
			return true
		}
	}
	return false
}

// checkNamesTarget is the name of rr that BIND's check-names (fail, the
// default for primary zones) wants to be a host name, and what it is:
// NS, MX, SRV, RT and AFSDB targets, and PTR targets in reverse zones
// (lib/dns/rdata/generic/*.c checknames).
func checkNamesTarget(rr dns.RR) (name, what string) {
	switch r := rr.(type) {
	case *dns.NS:
		return r.Ns, "an NS target"
	case *dns.MX:
		return r.Mx, "an MX target"
	case *dns.SRV:
		return r.Target, "an SRV target"
	case *dns.RT:
		return r.Host, "an RT target"
	case *dns.AFSDB:
		return r.Hostname, "an AFSDB target"
	case *dns.PTR:
		// DNS-SD browsing names (b._dns-sd._udp and its kin, RFC 6763
		// section 11) are exempt (lib/dns/master.c, dns_name_isdnssd).
		if reverseOwner(r.Hdr.Name) && !isDNSSD(r.Hdr.Name) {
			return r.Ptr, "a PTR target in a reverse zone"
		}
	}
	return "", ""
}

// isDNSSD is BIND's dns_name_isdnssd: the name starts with b, db, r, dr or
// lb, then _dns-sd._udp.
func isDNSSD(abs string) bool {
	l := dns.SplitDomainName(strings.ToLower(abs))
	if len(l) < 3 || l[1] != "_dns-sd" || l[2] != "_udp" {
		return false
	}
	switch l[0] {
	case "b", "db", "r", "dr", "lb":
		return true
	}
	return false
}

// ownerHostOK is BIND's checkowner for address records: a host name (a
// leading "*" label allowed), with the exceptions of
// lib/dns/rdata/in_1/a_1.c and aaaa_28.c: an A or AAAA at gc._msdcs.<host
// name> (Active Directory), and an A at a name with an _spf, _spf_verify or
// _spf_rate label above its last label (RFC 7208 exists macros).
func ownerHostOK(owner string, typ uint16) bool {
	if IsHostname(owner, true) {
		return true
	}
	if typ != dns.TypeA && typ != dns.TypeAAAA {
		return false
	}
	l := dns.SplitDomainName(owner)
	if len(l) > 2 && strings.EqualFold(l[0], "gc") && strings.EqualFold(l[1], "_msdcs") && IsHostname(strings.Join(l[2:], ".")+".", false) {
		return true
	}
	if typ == dns.TypeA {
		for _, x := range l[:max(len(l)-1, 0)] {
			switch strings.ToLower(x) {
			case "_spf", "_spf_verify", "_spf_rate":
				return true
			}
		}
	}
	return false
}

// ownerNeedsHostname: BIND checks the owner of A, AAAA, A6, WKS and MX
// records (their checkowner in lib/dns/rdata: dns_name_ishostname;
// named-checkzone -k fail: "bad owner name (check-names)"). WKS and A6
// come in RFC 3597 form (miekg/dns has no parser for them); the 30-minute
// differential found a WKS at an underscore apex that BIND refused.
func ownerNeedsHostname(typ uint16) bool {
	switch typ {
	case dns.TypeA, dns.TypeAAAA, dns.TypeMX, typeWKS, typeA6:
		return true
	}
	return false
}

// typeWKS is WKS's type code (RFC 1035), which miekg/dns does not name.
const typeWKS = 11

// typeA6 is A6's type code (RFC 2874), which miekg/dns does not name.
const typeA6 = 38

// nameLast are the types whose value ends in one domain name (and has no
// other text): a non-ASCII name there is converted to punycode, as owners are.
var nameLast = map[uint16]bool{
	dns.TypeCNAME: true, dns.TypeDNAME: true, dns.TypeNS: true, dns.TypeMX: true,
	dns.TypeSRV: true, dns.TypePTR: true,
}

// idnValue converts the last word of a value of a nameLast type to its
// ASCII (punycode) form when it holds non-ASCII characters.
func idnValue(typ uint16, v string) (string, error) {
	if !nameLast[typ] || !strings.ContainsFunc(v, func(r rune) bool { return r >= 0x80 }) {
		return v, nil
	}
	f := strings.Fields(v)
	if len(f) == 0 {
		return v, nil
	}
	last, err := toASCII(f[len(f)-1])
	if err != nil {
		return "", err
	}
	f[len(f)-1] = last
	return strings.Join(f, " "), nil
}

// defaultMailbox is the SOA RNAME without spec.soa.email: hostmaster at the
// closest enclosing name that is a host name, so that check-names passes
// in zones with underscore labels (_msdcs.example.com gets
// hostmaster.example.com.).
func defaultMailbox(origin string) string {
	labels := dns.SplitDomainName(origin)
	for i := range labels {
		if d := strings.Join(labels[i:], ".") + "."; IsHostname(d, false) {
			return "hostmaster." + d
		}
	}
	if origin == "." {
		return "hostmaster."
	}
	return "hostmaster." + origin
}

// plainZoneName reports whether origin holds only letters, digits, '-',
// '_', dots, and in reverse zones '/' (RFC 2317): a zone name the builder accepts, so that check-names is
// reported on the records (a name with other characters is reported on
// the zone instead).
func plainZoneName(origin string) bool {
	for i := 0; i < len(origin); i++ {
		c := origin[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '/' && reverseOwner(origin)) {
			return false
		}
	}
	return true
}

// ownerNeedsMailbox: BIND checks the owner of MB and MG records as a
// mailbox: any first label, a host name after it.
func ownerNeedsMailbox(typ uint16) bool {
	return typ == dns.TypeMB || typ == dns.TypeMG
}

// isMailbox is BIND's dns_name_ismailbox on a canonical absolute name.
func isMailbox(abs string) bool {
	labels := dns.SplitDomainName(abs)
	if len(labels) < 2 {
		return true
	}
	return IsHostname(strings.Join(labels[1:], ".")+".", false)
}
