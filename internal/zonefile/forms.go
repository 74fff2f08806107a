package zonefile

import (
	"encoding/base32"
	"encoding/base64"
	"fmt"
	"regexp/syntax"
	"strconv"
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
	case *dns.NAPTR:
		if err := naptrRegexp(r.Regexp); err != nil {
			return fmt.Errorf("the NAPTR regexp %q: %v; BIND refuses the record (naptr_35.c)", r.Regexp, err)
		}
	case *dns.RRSIG:
		if n := dns.CountLabel(r.SignerName); int(r.Labels) < n {
			return fmt.Errorf("an RRSIG's labels field (%d) is below the %d labels of its signer %s: BIND refuses the record (\"out of range\")", r.Labels, n, r.SignerName)
		}
	case *dns.DHCID:
		if _, err := base64.StdEncoding.Strict().DecodeString(r.Digest); err != nil || r.Digest == "" {
			return fmt.Errorf("the DHCID data %q is not base64: BIND refuses the record", r.Digest)
		}
	case *dns.RKEY:
		// key_25.c: an RKEY's flags are 0 (found by the agent
		// differential's generator: "257 3 13 ..." is FORMERR).
		if r.Flags != 0 {
			return fmt.Errorf("an RKEY's flags field is 0, not %d: BIND refuses the record (\"FORMERR\"); write %q", r.Flags, fmt.Sprintf("0 %d %d %s", r.Protocol, r.Algorithm, r.PublicKey))
		}
	case *dns.AMTRELAY:
		if t := r.GatewayType &^ 0x80; t > 3 {
			return fmt.Errorf("AMTRELAY relay type %d is not one of 0 (none), 1 (IPv4), 2 (IPv6), 3 (name): BIND refuses the record", t)
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
	if typ == dns.TypeLOC {
		// The altitude follows the longitude's hemisphere: -100000.00 to
		// 42849672.95 metres (loc_29.c); miekg/dns wraps it silently.
		f := strings.Fields(v)
		for i, w := range f {
			if u := strings.ToUpper(w); (u == "E" || u == "W") && i+1 < len(f) {
				alt, err := strconv.ParseFloat(strings.TrimSuffix(strings.ToLower(f[i+1]), "m"), 64)
				if err == nil && (alt < -100000 || alt > 42849672.95) {
					return fmt.Errorf("a LOC altitude is -100000m to 42849672.95m, not %s: BIND refuses the record", f[i+1])
				}
				break
			}
		}
	}
	if typ == dns.TypeHINFO {
		if n, _ := unquotedWords(v); n != 2 {
			return fmt.Errorf("an HINFO record holds two strings, a CPU and an OS, not %d: BIND refuses the record", n)
		}
	}
	return nil
}

// dohPathOK is BIND's validate_dohpath in short: a path starting with '/'
// whose URI template expressions ({...}, RFC 6570) close and one of which
// names the variable dns.
func dohPathOK(t string) bool {
	if !strings.HasPrefix(t, "/") {
		return false
	}
	dnsVar := false
	for rest := t; ; {
		i := strings.IndexByte(rest, '{')
		if i < 0 {
			return dnsVar && !strings.Contains(rest, "}")
		}
		j := strings.IndexByte(rest[i:], '}')
		if j < 0 || strings.Contains(rest[:i], "}") {
			return false
		}
		expr := strings.TrimLeft(rest[i+1:i+j], "+#./;?&")
		for _, v := range strings.Split(expr, ",") {
			if k := strings.IndexAny(v, ":*"); k >= 0 {
				v = v[:k]
			}
			dnsVar = dnsVar || v == "dns"
		}
		rest = rest[i+j+1:]
	}
}

// naptrRegexp is BIND's txt_valid_regex: empty, or delim regexp delim
// replacement delim [i], the delimiter no digit, backslash or 'i', the
// regexp a POSIX extended one with at least as many groups as the
// replacement's highest \N (\0 refused).
func naptrRegexp(presentation string) error {
	txt, err := unescape(presentation)
	if err != nil {
		return err
	}
	if txt == "" {
		return nil
	}
	delim := txt[0]
	if delim >= '0' && delim <= '9' || delim == '\\' || delim == 'i' || delim == 0 {
		return fmt.Errorf("%q cannot be the delimiter", delim)
	}
	var re strings.Builder
	replace, flags, nsub := false, false, 0
	for i := 1; i < len(txt); i++ {
		c := txt[i]
		switch {
		case c == delim && !replace:
			replace = true
			continue
		case c == delim && !flags:
			flags = true
			continue
		case c == delim:
			return fmt.Errorf("the delimiter %q occurs more than three times", delim)
		case flags:
			if c != 'i' {
				return fmt.Errorf("flag %q: only i is a flag", c)
			}
			continue
		}
		if !replace {
			re.WriteByte(c)
		}
		if c == '\\' {
			if i+1 >= len(txt) {
				return fmt.Errorf("it ends in a backslash")
			}
			i++
			c = txt[i]
			if replace && c == '0' {
				return fmt.Errorf("\\0 is no back-reference")
			}
			if replace && c >= '1' && c <= '9' {
				nsub = max(nsub, int(c-'0'))
			}
			if !replace {
				re.WriteByte(c)
			}
		}
	}
	if !flags {
		return fmt.Errorf("it needs three delimiters (%cregexp%creplacement%c)", delim, delim, delim)
	}
	parsed, err := syntax.Parse(re.String(), syntax.POSIX)
	if err != nil {
		return fmt.Errorf("the regular expression does not parse: %v", err)
	}
	if n := parsed.MaxCap(); nsub > n {
		return fmt.Errorf("the replacement uses \\%d, but the expression has %d groups", nsub, n)
	}
	return nil
}

// unescape is a character-string in presentation form as its octets
// (\X is X, \DDD the octet DDD).
func unescape(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		if i+3 < len(s) && isDigit(s[i+1]) && isDigit(s[i+2]) && isDigit(s[i+3]) {
			n, _ := strconv.Atoi(s[i+1 : i+4])
			if n > 255 {
				return "", fmt.Errorf("\\%s is no octet", s[i+1:i+4])
			}
			b.WriteByte(byte(n))
			i += 3
			continue
		}
		if i+1 < len(s) {
			b.WriteByte(s[i+1])
			i++
		}
	}
	return b.String(), nil
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
	for _, kv := range kvs {
		switch v := kv.(type) {
		case *dns.SVCBAlpn:
			if len(v.Alpn) == 0 {
				return fmt.Errorf("alpn holds no protocol id: BIND refuses the record")
			}
			for _, id := range v.Alpn {
				if id == "" {
					return fmt.Errorf("alpn holds an empty protocol id: BIND refuses the record")
				}
			}
		case *dns.SVCBDoHPath:
			if !dohPathOK(v.Template) {
				return fmt.Errorf("dohpath %q is not a relative URI template with the dns variable (RFC 9461: \"/dns-query{?dns}\"): BIND refuses the record", v.Template)
			}
		}
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
	// A raw octet above 127 is no host name either (IsHostname leaves
	// such labels to IDN conversion, which RDATA names do not get here;
	// FuzzGeneric found a target of \128).
	if prio > 0 && (!IsHostname(dns.CanonicalName(target), false) || !isASCII(target)) && target != "." {
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

// isASCII reports whether s holds no octet above 127.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
