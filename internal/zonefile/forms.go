package zonefile

import (
	"encoding/base32"
	"fmt"
	"strings"

	"github.com/miekg/dns"
)

// The record forms BIND refuses and miekg/dns reads (ISC's checkzone
// corpus, test/corpus): each check names the BIND source it follows.

// dsDigestHex and sshfpDigestHex are the digest length, in hex digits, of each DS (and CDS) and
// SSHFP digest type BIND knows (lib/dns/rdata/generic/ds_43.c,
// sshfp_44.c): a digest of another length is refused.
var (
	dsDigestHex    = map[uint8]int{dns.SHA1: 40, dns.SHA256: 64, dns.GOST94: 64, dns.SHA384: 96}
	sshfpDigestHex = map[uint8]int{1: 40, 2: 64}
)

// base32hexNP is BIND's isc_base32hexnp: base32hex without padding, any
// case, the unused bits zero (decodeBase32hexNP re-encodes to check them).
var base32hexNP = base32.HexEncoding.WithPadding(base32.NoPadding)

func decodeBase32hexNP(s string) ([]byte, error) {
	if strings.ContainsRune(s, '=') {
		return nil, fmt.Errorf("%q is padded with '=': NSEC3 hashes are base32hex without padding", s)
	}
	u := strings.ToUpper(s)
	b, err := base32hexNP.DecodeString(u)
	if err != nil || base32hexNP.EncodeToString(b) != u {
		return nil, fmt.Errorf("%q is not base32hex (0-9, A-V) without padding", s)
	}
	return b, nil
}

// svcbHTTP are the ALPN ids a _dns SVCB must pair with a dohpath
// (lib/dns/rdata.c, svcb_hashttp).
var svcbHTTP = map[string]bool{"http/1.1": true, "h2": true, "h3": true}

// isDNSSVCB is BIND 9.20's dns_name_isdnssvcb: the owner is _dns, or
// _<port>._dns, at the start of the name.
func isDNSSVCB(owner string) bool {
	l := dns.SplitDomainName(strings.ToLower(owner))
	if len(l) > 0 && l[0] == "_dns" {
		return true
	}
	return len(l) > 1 && len(l[0]) > 1 && l[0][0] == '_' && l[0][1] >= '0' && l[0][1] <= '9' && l[1] == "_dns"
}

// checkForm checks one parsed record the way BIND's text parser and
// check-names do; the error says what to write instead.
func checkForm(rr dns.RR) error {
	switch r := rr.(type) {
	case *dns.DS:
		return checkDigest("DS", r.DigestType, r.Digest)
	case *dns.CDS:
		if r.DigestType == 0 && r.Algorithm == 0 && r.KeyTag == 0 {
			return nil // the deletion record "0 0 0 00" (RFC 8078)
		}
		return checkDigest("CDS", r.DigestType, r.Digest)
	case *dns.SSHFP:
		if n, ok := sshfpDigestHex[r.Type]; ok && len(r.FingerPrint) != n {
			return fmt.Errorf("an SSHFP fingerprint of type %d is %d hex digits, not %d: BIND refuses the record (\"bad fingerprint length\"); fix the fingerprint or its type", r.Type, n, len(r.FingerPrint))
		}
	case *dns.ZONEMD:
		// zonemd_63.c: SHA-384 48 octets, SHA-512 64, any other at least 12.
		want := map[uint8]int{1: 96, 2: 128}[r.Hash]
		switch {
		case want > 0 && len(r.Digest) != want:
			return fmt.Errorf("a ZONEMD digest of hash algorithm %d is %d hex digits, not %d: BIND refuses the record; fix the digest or its algorithm", r.Hash, want, len(r.Digest))
		case want == 0 && len(r.Digest) < 24:
			return fmt.Errorf("a ZONEMD digest is at least 12 octets (24 hex digits), not %d digits: BIND refuses the record", len(r.Digest))
		}
	case *dns.CAA:
		// caa_257.c: the tag is letters and digits (RFC 8659).
		for _, c := range []byte(r.Tag) {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
				return fmt.Errorf("the CAA tag %q holds %q: BIND takes only letters and digits (RFC 8659), and refuses the record", r.Tag, rune(c))
			}
		}
	case *dns.URI:
		if r.Target == "" {
			return fmt.Errorf("a URI record needs a target: BIND 9.20 refuses an empty one")
		}
	case *dns.IPSECKEY:
		if r.PublicKey == "" {
			return fmt.Errorf("an IPSECKEY record needs its public key (base64): BIND refuses the record without it")
		}
	case *dns.NSEC3PARAM:
		if len(r.Salt) > 255*2 {
			return fmt.Errorf("an NSEC3 salt is at most 255 octets (510 hex digits), not %d digits: BIND refuses the record", len(r.Salt))
		}
	case *dns.NSEC3:
		next, err := decodeBase32hexNP(r.NextDomain)
		if err != nil {
			return fmt.Errorf("cannot use the next hashed owner: %v (BIND: \"bad base32 encoding\")", err)
		}
		if r.Hash == dns.SHA1 && len(next) != 20 {
			return fmt.Errorf("the next hashed owner %q is %d bytes, and a SHA-1 hash is 20 (32 base32hex digits): BIND refuses it (\"out of range\"); a ';' in it starts a comment", r.NextDomain, len(next))
		}
		if len(next) > 155 {
			return fmt.Errorf("the next hashed owner is %d bytes: BIND takes at most 155", len(next))
		}
	case *dns.SVCB:
		return checkSVCB("SVCB", r.Hdr.Name, r.Priority, r.Target, r.Value)
	case *dns.HTTPS:
		return checkSVCB("HTTPS", r.Hdr.Name, r.Priority, r.Target, r.Value)
	}
	return nil
}

// checkValueForm checks what the parsed record no longer shows: an ISDN
// of more than two character-strings ("extra input text"), an HINFO of
// other than two (miekg/dns fills in the missing one), both refused by BIND.
func checkValueForm(typ uint16, v string) error {
	if typ == dns.TypeISDN {
		if n, _ := unquotedWords(v); n > 2 {
			return fmt.Errorf("an ISDN record holds an address and at most a subaddress, not %d strings: BIND refuses the record", n)
		}
	}
	if typ == dns.TypeHINFO {
		if n, _ := unquotedWords(v); n != 2 {
			return fmt.Errorf("an HINFO record holds two strings, a CPU and an OS, not %d: BIND refuses the record", n)
		}
	}
	return nil
}

// checkOwnerForm is BIND's checkowner for types with an owner form
// (check-names fail, the default for primary zones): an NSEC3 owner's
// first label is base32hex without padding (nsec3_50.c).
func checkOwnerForm(owner string, typ uint16) error {
	if typ != dns.TypeNSEC3 {
		return nil
	}
	l := dns.SplitDomainName(owner)
	if len(l) == 0 {
		return fmt.Errorf("an NSEC3 record cannot be at the root")
	}
	if _, err := decodeBase32hexNP(l[0]); err != nil {
		return fmt.Errorf("an NSEC3 owner's first label is a hash: %v; BIND's check-names refuses the owner", err)
	}
	return nil
}

func checkDigest(typ string, dt uint8, digest string) error {
	if n, ok := dsDigestHex[dt]; ok && len(digest) != n {
		return fmt.Errorf("a %s digest of type %d is %d hex digits, not %d: BIND refuses the record; fix the digest or its type", typ, dt, n, len(digest))
	}
	return nil
}

// checkSVCB: lib/dns/rdata/in_1/svcb_64.c and (9.20) dns_rdata_checksvcb.
func checkSVCB(typ, owner string, prio uint16, target string, kvs []dns.SVCBKeyValue) error {
	have := map[dns.SVCBKey]bool{}
	var mandatory []dns.SVCBKey
	alpn := []string(nil)
	for _, kv := range kvs {
		if have[kv.Key()] {
			return fmt.Errorf("the key %s is given twice: BIND refuses the record; give each key once", kv.Key())
		}
		have[kv.Key()] = true
		switch v := kv.(type) {
		case *dns.SVCBMandatory:
			mandatory = v.Code
		case *dns.SVCBAlpn:
			alpn = v.Alpn
		}
	}
	if have[dns.SVCB_OHTTP] {
		// miekg/dns writes key 8 only by its name, which BIND 9.18 and
		// 9.20 do not know ("unknown key").
		return fmt.Errorf("the ohttp key (RFC 9540) is unknown to BIND 9.18 and 9.20, which refuse the record, and this renderer cannot write it as key8: leave it out")
	}
	seen := map[dns.SVCBKey]bool{}
	for _, k := range mandatory {
		switch {
		case k == dns.SVCB_MANDATORY:
			return fmt.Errorf("mandatory cannot list itself: BIND refuses the record")
		case seen[k]:
			return fmt.Errorf("mandatory lists %s twice: BIND refuses the record; list each key once", k)
		case !have[k]:
			return fmt.Errorf("mandatory lists %s, which the record does not set: BIND refuses the record; set %s or drop it from mandatory", k, k)
		}
		seen[k] = true
	}
	if have[dns.SVCB_MANDATORY] && len(mandatory) == 0 {
		return fmt.Errorf("mandatory lists no key: BIND refuses the record")
	}
	if have[dns.SVCB_NO_DEFAULT_ALPN] && !have[dns.SVCB_ALPN] {
		return fmt.Errorf("no-default-alpn needs alpn: BIND refuses the record; add alpn")
	}
	if prio > 0 && !isHostname(dns.CanonicalName(target), false) && target != "." {
		return fmt.Errorf("cannot use %q as the %s target: BIND loads zones with check-names, which takes only host names as the target of a ServiceMode record (letters, digits and inner hyphens per label); fix the name", target, typ)
	}
	if typ != "SVCB" {
		return nil
	}
	// BIND 9.20 (the version bind-fn ships), dns_rdata_checksvcb.
	if prio == 0 && len(kvs) > 0 {
		return fmt.Errorf("an AliasMode SVCB (priority 0) takes no parameters: BIND 9.20 refuses it; drop them or use a priority above 0")
	}
	if prio > 0 && isDNSSVCB(owner) {
		if !have[dns.SVCB_ALPN] {
			return fmt.Errorf("a _dns SVCB (RFC 9461) needs alpn: BIND 9.20 refuses it (\"no ALPN\"); add alpn=dot, alpn=doq or alpn=h2 with a dohpath")
		}
		http := false
		for _, a := range alpn {
			// BIND splits ids at commas, escaped ones included.
			for _, id := range strings.Split(strings.ReplaceAll(a, `\`, ""), ",") {
				http = http || svcbHTTP[id]
			}
		}
		if http && !have[dns.SVCB_DOHPATH] {
			return fmt.Errorf("a _dns SVCB with an HTTP alpn (%s) needs a dohpath: BIND 9.20 refuses it (\"no DOHPATH\"); add dohpath=/dns-query{?dns}", strings.Join(alpn, ","))
		}
	}
	return nil
}

// checkZoneForms checks what only the whole zone shows (BIND's zone
// loading, lib/dns/zone.c): the apex CDS and CDNSKEY RRsets against the
// DNSKEY RRset (dns_zone_cdscheck); an NS below a DNAME, occluded
// (check-integrity); a DS anywhere but at a delegation (9.20); an NS at a
// wildcard.
func (b *builder) checkZoneForms() {
	apexSet := func(t uint16) *rrset { return b.sets[setKey{b.origin, t}] }
	keyAlgs := map[uint8]bool{}
	if k := apexSet(dns.TypeDNSKEY); k != nil {
		for _, e := range k.entries {
			keyAlgs[e.rr.(*dns.DNSKEY).Algorithm] = true
		}
	}
	for _, t := range []uint16{dns.TypeCDS, dns.TypeCDNSKEY} {
		s := apexSet(t)
		if s == nil {
			continue
		}
		var del *entry
		for i := range s.entries {
			e := &s.entries[i]
			var alg uint8
			isDel := false
			switch r := e.rr.(type) {
			case *dns.CDS:
				alg, isDel = r.Algorithm, r.KeyTag == 0 && r.Algorithm == 0 && r.DigestType == 0
			case *dns.CDNSKEY:
				alg, isDel = r.Algorithm, r.Flags == 0 && r.Protocol == 3 && r.Algorithm == 0
			}
			if isDel {
				del = e
				continue
			}
			if !keyAlgs[alg] {
				b.rs.Errorf(s.src, e.field, "the zone has no DNSKEY of algorithm %d at its apex, so BIND refuses this %s (\"CDS/CDNSKEY consistency checks failed\"); publish the DNSKEY, or remove the record", alg, dns.Type(t))
			}
		}
		if del != nil && len(s.entries) > 1 {
			b.rs.Errorf(s.src, del.field, "the %s deletion record must be the only one in its RRset: BIND refuses the zone (\"CDS/CDNSKEY consistency checks failed\"); keep it alone, or remove it", dns.Type(t))
		}
	}
	var dnames []string
	cuts := map[string]bool{}
	for _, s := range b.order {
		switch {
		case s.typ == dns.TypeDNAME:
			dnames = append(dnames, s.owner)
		case s.typ == dns.TypeNS && s.owner != b.origin:
			cuts[s.owner] = true
		}
	}
	for _, s := range b.order {
		if s.typ == dns.TypeNS && strings.HasPrefix(s.owner, "*.") {
			b.rs.Errorf(s.src, s.ownerField(), "cannot delegate the wildcard %s: BIND refuses an NS at a wildcard name; delegate a named child instead", s.owner)
		}
		if s.typ == dns.TypeDS && s.owner != b.origin && !cuts[s.owner] {
			b.rs.Errorf(s.src, s.ownerField(), "a DS belongs at a delegation, and %s has no NS here: BIND 9.20 refuses the zone (\"DS not at delegation point\"); add the delegation's NS, or remove the DS", s.owner)
		}
		if s.typ != dns.TypeNS || s.owner != b.origin {
			continue // BIND loads a delegation whose glue a DNAME occludes
		}
		for _, e := range s.entries {
			target := dns.CanonicalName(e.rr.(*dns.NS).Ns)
			for _, d := range dnames {
				if target != d && inZone(target, d) && b.hasAddress(target) {
					b.rs.Errorf(s.src, e.field, "nameserver %s is below the DNAME at %s, so its address records in this zone are occluded and BIND refuses the zone (check-integrity); use a nameserver outside %s", target, d, d)
				}
			}
		}
	}
}

func (b *builder) hasAddress(name string) bool {
	return b.sets[setKey{name, dns.TypeA}] != nil || b.sets[setKey{name, dns.TypeAAAA}] != nil
}
