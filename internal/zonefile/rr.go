package zonefile

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"

	"github.com/miekg/dns"
)

// bindOnlyTypes are the types BIND names (lib/dns/rdata) that miekg/dns
// does not: they are written as TYPEnnn with generic RDATA.
var bindOnlyTypes = map[string]int{"A6": 38, "WKS": 11, "NSAP": 22, "SINK": 40, "DSYNC": 66, "HHIT": 67, "BRID": 68, "DOA": 259, "WALLET": 262}

// bindOnlyNoCodec are the types of bindOnlyTypes without a codec
// (bindCodecs): their values are taken in the RFC 3597 form only.
var bindOnlyNoCodec = map[uint16]string{40: "SINK", 67: "HHIT", 68: "BRID"}

// rrType resolves a type mnemonic (any case) or an RFC 3597 TYPEnnn to its
// number and the mnemonic the zone file uses. Types that cannot live in a
// zone file (meta and query types) are refused; the SOA is refused by the
// caller with a better message.
func rrType(s string) (uint16, string, error) {
	u := strings.ToUpper(s)
	t, ok := dns.StringToType[u]
	if !ok && strings.HasPrefix(u, "TYPE") {
		n, err := strconv.ParseUint(u[4:], 10, 16)
		if err == nil {
			t, ok = uint16(n), true
		}
	}
	if n, known := bindOnlyTypes[u]; !ok && known {
		// Written as TYPEnnn: miekg/dns, which reads the rendered
		// files back (plan, the agent), does not know the mnemonic.
		return uint16(n), "TYPE" + strconv.Itoa(n), nil
	}
	if !ok {
		return 0, "", fmt.Errorf("unknown record type %q: use a mnemonic such as A, AAAA, CNAME, MX, TXT, SRV, or TYPEnnn", s)
	}
	switch t {
	case dns.TypeNone, dns.TypeReserved, dns.TypeOPT, dns.TypeTSIG, dns.TypeTKEY, dns.TypeANY,
		dns.TypeAXFR, dns.TypeIXFR, dns.TypeMAILA, dns.TypeMAILB:
		return 0, "", fmt.Errorf("record type %q cannot be stored in a zone", s)
	}
	switch t {
	case dns.TypeMD, dns.TypeMF:
		return 0, "", fmt.Errorf("record type %q is obsolete and BIND refuses it: use MX", s)
	case dns.TypeNULL:
		return 0, "", fmt.Errorf("record type NULL has no zone-file form this renderer writes (miekg/dns prints it as a comment): BIND loads it only as generic RDATA, which cannot be rendered here")
	case dns.TypeUINFO, dns.TypeUID, dns.TypeGID, dns.TypeUNSPEC, dns.TypeNXNAME:
		return 0, "", fmt.Errorf("record type %q has no zone-file form BIND 9.18 reads (named: \"unknown class/type\")", s)
	}
	if name, ok := dns.TypeToString[t]; ok {
		return t, name, nil
	}
	return t, "TYPE" + strconv.Itoa(int(t)), nil
}

// checkValue rejects what could make one value read as more than one RR, or
// as a directive: control characters (newline, NUL, ...), and outside
// quotes ';' (a comment), parentheses (a continued line) and '$'. Any of
// them can still be written escaped (\; or \059) or inside quotes.
func checkValue(v string) error {
	if strings.TrimSpace(v) == "" {
		return fmt.Errorf("the value is empty")
	}
	quoted := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c < 0x20 && c != '\t', c == 0x7f:
			return fmt.Errorf("the value contains a control character (byte %#02x); write it as \\DDD", c)
		case c == '\\':
			if i+1 >= len(v) {
				return fmt.Errorf("the value ends in a lone backslash")
			}
			i++
			if v[i] < 0x20 || v[i] == 0x7f {
				return fmt.Errorf("the value contains a control character (byte %#02x); write it as \\DDD", v[i])
			}
		case c == '"':
			quoted = !quoted
		case quoted:
		case c == ';':
			return fmt.Errorf("';' outside quotes starts a comment; quote the text or escape it as \\;")
		case c == '(' || c == ')':
			return fmt.Errorf("%q outside quotes continues the record over lines; quote the text or escape it as \\%c", c, c)
		case c == '$':
			return fmt.Errorf("'$' outside quotes is not part of a value; quote the text or escape it as \\$")
		}
	}
	if quoted {
		return fmt.Errorf("the value has an unterminated quoted string")
	}
	return nil
}

// parseValue reads value as the RDATA of one RR of type typ at owner, with
// relative names in it relative to origin. It proves that exactly one RR of
// that type came out and that it survives a print and parse round trip. The
// entry it returns is filled (entry.fill) but has no field.
func parseValue(owner string, ttl uint32, typ uint16, typName, value, origin string) (entry, error) {
	// An APL of no items is one RR (RFC 3123 §4: zero or more items); BIND
	// loads it (bin/tests/system/acl/ns2's zones hold one).
	if empty := strings.TrimSpace(value) == ""; !(empty && typ == dns.TypeAPL) {
		if err := checkValue(value); err != nil {
			return entry{}, err
		}
	}
	generic := strings.HasPrefix(strings.TrimSpace(value), `\#`)
	if _, parsed := dns.TypeToRR[typ]; parsed && generic {
		// miekg/dns turns generic RDATA of a known type into that type's
		// text form even when the data is short, and BIND cannot read
		// the result (DS "0 0 0 ", EID with no data).
		return entry{}, fmt.Errorf("write a %s value in its own text form: the RFC 3597 \\# form is accepted only for TYPEnnn types", typName)
	}
	if codec := bindCodecs[typ]; codec != nil && !generic {
		wire, err := codec(fields(value), origin)
		if err != nil {
			return entry{}, err
		}
		return genericEntry(owner, ttl, typ, typName, wire), nil
	}
	if codec := bindOnlyNoCodec[typ]; codec != "" && !generic {
		return entry{}, fmt.Errorf("this renderer reads a %s value only in the RFC 3597 generic form, `\\# <length> <hex>` (dig +unknownformat prints a served record so)", codec)
	}
	switch typ {
	case dns.TypeLOC:
		value = locSeconds(value)
	case dns.TypeCERT:
		// BIND's mnemonic for type 4 is IPKIX (RFC 4398); miekg/dns reads
		// and writes IPIX, which BIND does not read: the value is read by
		// number and the printed IPIX written as IPKIX (parseValue's end).
		if f := strings.Fields(value); len(f) > 0 && strings.EqualFold(f[0], "IPKIX") {
			value = "4" + value[len(f[0]):]
		}
	case dns.TypeNID, dns.TypeL64:
		// BIND reads a locator's groups of 1 to 4 hex digits (0:0:0:1,
		// bin/tests/system/additional/ns1/nid.db); miekg/dns only 4.
		value = padLocator(value)
	case dns.TypeGPOS:
		// BIND reads GPOS coordinates as character-strings, quoted or not
		// (bin/tests/system/tsig/ns1/example.db); miekg/dns only unquoted
		// numbers, which need no quotes.
		value = unquoteNumbers(value)
	case dns.TypeX25:
		// BIND reads the PSDN address as a character-string, quoted or
		// not; miekg/dns only unquoted. Digits need no quotes.
		if u, ok := strings.CutPrefix(value, `"`); ok && strings.HasSuffix(u, `"`) && strings.Trim(u[:len(u)-1], "0123456789") == "" {
			value = u[:len(u)-1]
		}
	}
	if e, ok := fastValue(owner, ttl, typ, typName, value, origin); ok {
		return e, nil
	}
	e, err := parseLine(owner, ttl, typ, typName, value, origin)
	if typ == dns.TypeSVCB || typ == dns.TypeHTTPS {
		return svcbEntry(e, err, owner, ttl, typ, typName, value, origin)
	}
	if err == nil && typ == dns.TypeCERT && e.rr.(*dns.CERT).Type == 4 {
		e.text = strings.Replace(e.text, "\tIPIX ", "\tIPKIX ", 1)
		e.rdata = strings.Replace(e.rdata, "IPIX ", "IPKIX ", 1)
	}
	if err != nil && typ == dns.TypeAPL && strings.Contains(err.Error(), "extra bits") {
		return e, fmt.Errorf("%v: BIND loads an APL prefix with host bits set, but this renderer cannot write one; give the network address (192.0.2.0/24, not 192.0.2.1/24)", err)
	}
	return e, err
}

// svcbEntry is an SVCB or HTTPS value: miekg/dns's reading (e, err) where
// it has one and prints it in a form BIND reads; otherwise the value read
// by BIND's grammar (svcbWire) and written in the generic form. That
// covers keyNNNNN= for registered keys (key7="/dns-query{?dns}"), which
// miekg/dns refuses, and key 8 (ohttp), which miekg/dns prints by a name
// BIND 9.18 and 9.20 do not know.
//
// BIND's grammar decides: a value miekg/dns reads and BIND refuses is
// refused (FuzzGeneric found `00""`, which miekg/dns read as priority 0
// and an empty target), and one the two read differently is written as
// BIND reads it.
func svcbEntry(e entry, err error, owner string, ttl uint32, typ uint16, typName, value, origin string) (entry, error) {
	if err == nil && hasKey(e.rr, dns.SVCB_OHTTP) && strings.Contains(value, "ohttp") {
		return entry{}, fmt.Errorf("the key name ohttp (RFC 9540) is unknown to BIND 9.18 and 9.20, which refuse the record: write it as key8")
	}
	wire, werr := svcbWire(fields(value), origin)
	if werr != nil && !strings.Contains(werr.Error(), "BIND") {
		werr = fmt.Errorf("%v: BIND refuses the record", werr)
	}
	if werr != nil {
		return entry{}, werr
	}
	if err == nil && !hasKey(e.rr, dns.SVCB_OHTTP) && bytes.Equal(rdataWire(e.rr), wire) {
		return e, nil
	}
	g := genericEntry(owner, ttl, typ, typName, wire)
	if _, ok := g.rr.(*dns.RFC3597); ok {
		// BIND 9.18 and 9.20 load it; miekg/dns cannot hold it, and the
		// cluster's own readers of zone files (plan, the agent) use it.
		return entry{}, fmt.Errorf("a v4-mapped address (::ffff:a.b.c.d) in ipv6hint cannot be rendered here, although BIND loads it: give the IPv4 address in ipv4hint instead")
	}
	return g, nil
}

// hasKey reports whether an SVCB or HTTPS RR sets key k.
func hasKey(rr dns.RR, k dns.SVCBKey) bool {
	var kvs []dns.SVCBKeyValue
	switch r := rr.(type) {
	case *dns.SVCB:
		kvs = r.Value
	case *dns.HTTPS:
		kvs = r.Value
	}
	for _, kv := range kvs {
		if kv.Key() == k {
			return true
		}
	}
	return false
}

// parseLine is parseValue's general path: the value is read by the
// miekg/dns zone parser as part of a whole line, and proven by a round trip.
func parseLine(owner string, ttl uint32, typ uint16, typName, value, origin string) (entry, error) {
	line := fmt.Sprintf("%s %d IN %s %s\n", owner, ttl, typName, value)
	rrs, err := parseAll(line, origin)
	if err != nil {
		return entry{}, err
	}
	if len(rrs) != 1 {
		return entry{}, fmt.Errorf("the value reads as %d records, not one", len(rrs))
	}
	rr := rrs[0]
	h := rr.Header()
	if h.Rrtype != typ {
		return entry{}, fmt.Errorf("the value reads as a %s record", dns.Type(h.Rrtype))
	}
	if h.Name != owner || h.Ttl != ttl || h.Class != dns.ClassINET {
		return entry{}, fmt.Errorf("the value changed the record's owner, TTL or class")
	}
	text := rr.String()
	if !originFree(typ) || text != owner+"\t"+strconv.FormatUint(uint64(ttl), 10)+"\tIN\t"+typName+"\t"+value {
		back, err := parseAll(text+"\n", ".")
		if err != nil || len(back) != 1 || back[0].String() != text {
			return entry{}, fmt.Errorf("the record %q does not survive a round trip through the zone-file printer", text)
		}
	}
	return entry{rr: rr, text: text, rdata: strings.TrimPrefix(text, h.String())}, nil
}

// fastValue is parseLine's result, without the zone parser, for the values
// where that result is known in advance: an A or AAAA address in the form
// the printer writes it; a CNAME, NS or PTR target, MX preference and
// exchange, SRV priority, weight, port and target, of plain numbers and a
// plain name (letters, digits, '-' and '_' labels; relative ones with the
// origin appended, as the parser does); a TXT of plain quoted strings; all
// at a plain owner. Anything else (escapes,
// '@', '*', spaces, other address forms, long names) reports false and goes
// through parseLine. The RR is built with the parser's own conversions
// (net.ParseIP, the name as written), and its text is what the printer
// writes for it: TestFastValueMatches and FuzzFastValue hold fastValue to
// parseLine's RR, text and RDATA.
func fastValue(owner string, ttl uint32, typ uint16, typName, value, origin string) (entry, bool) {
	if !plainName(owner) {
		return entry{}, false
	}
	hdr := dns.RR_Header{Name: owner, Rrtype: typ, Class: dns.ClassINET, Ttl: ttl}
	var rr dns.RR
	rdata := value
	switch typ {
	case dns.TypeA, dns.TypeAAAA:
		colon := strings.IndexByte(value, ':') >= 0
		if colon != (typ == dns.TypeAAAA) {
			return entry{}, false
		}
		ip := net.ParseIP(value)
		// A v4-mapped AAAA prints with a "::ffff:" prefix: not fast.
		if ip == nil || (colon && ip.To4() != nil) || ip.String() != value {
			return entry{}, false
		}
		if colon {
			rr = &dns.AAAA{Hdr: hdr, AAAA: ip}
		} else {
			rr = &dns.A{Hdr: hdr, A: ip}
		}
	case dns.TypeCNAME, dns.TypeNS, dns.TypePTR:
		name, ok := plainTarget(value, origin)
		if !ok {
			return entry{}, false
		}
		rdata = name
		switch typ {
		case dns.TypeCNAME:
			rr = &dns.CNAME{Hdr: hdr, Target: name}
		case dns.TypeNS:
			rr = &dns.NS{Hdr: hdr, Ns: name}
		default:
			rr = &dns.PTR{Hdr: hdr, Ptr: name}
		}
	case dns.TypeMX:
		var n [1]uint16
		rest, ok := plainNumbers(value, n[:])
		name, ok2 := plainTarget(rest, origin)
		if !ok || !ok2 {
			return entry{}, false
		}
		rdata = value[:len(value)-len(rest)] + name
		rr = &dns.MX{Hdr: hdr, Preference: n[0], Mx: name}
	case dns.TypeSRV:
		var n [3]uint16
		rest, ok := plainNumbers(value, n[:])
		name, ok2 := plainTarget(rest, origin)
		if !ok || !ok2 {
			return entry{}, false
		}
		rdata = value[:len(value)-len(rest)] + name
		rr = &dns.SRV{Hdr: hdr, Priority: n[0], Weight: n[1], Port: n[2], Target: name}
	case dns.TypeTXT:
		txt, ok := plainTXT(value)
		if !ok {
			return entry{}, false
		}
		rr = &dns.TXT{Hdr: hdr, Txt: txt}
	default:
		return entry{}, false
	}
	text := owner + "\t" + strconv.FormatUint(uint64(ttl), 10) + "\tIN\t" + typName + "\t" + rdata
	return entry{rr: rr, text: text, rdata: rdata}, true
}

// plainTarget is a domain name in a value, made absolute as the parser
// does ("@" aside, which is not plain), if the result is a plainName.
func plainTarget(value, origin string) (string, bool) {
	name := value
	if !strings.HasSuffix(value, ".") {
		if origin == "." {
			name = value + "."
		} else {
			name = value + "." + origin
		}
	}
	return name, plainName(name)
}

// plainNumbers reads len(n) decimal 16-bit numbers, each written as the
// printer writes it (no sign, no leading zero) and followed by one space,
// and returns the rest of value.
func plainNumbers(value string, n []uint16) (string, bool) {
	for i := range n {
		sp := strings.IndexByte(value, ' ')
		if sp < 1 || sp > 5 || (value[0] == '0' && sp > 1) {
			return "", false
		}
		v := 0
		for _, c := range []byte(value[:sp]) {
			if c < '0' || c > '9' {
				return "", false
			}
			v = v*10 + int(c-'0')
		}
		if v > 65535 {
			return "", false
		}
		n[i] = uint16(v)
		value = value[sp+1:]
	}
	return value, true
}

// plainTXT reads a TXT value of one or more quoted strings separated by one
// space, each of 1 to 255 printable ASCII bytes other than '"' and '\':
// what the printer writes back unchanged.
func plainTXT(value string) ([]string, bool) {
	var out []string
	for {
		if len(value) < 3 || value[0] != '"' {
			return nil, false
		}
		end := 1
		for end < len(value) && value[end] != '"' {
			if c := value[end]; c < ' ' || c > '~' || c == '\\' {
				return nil, false
			}
			end++
		}
		if end == len(value) || end == 1 || end > 256 {
			return nil, false
		}
		out = append(out, value[1:end])
		value = value[end+1:]
		if value == "" {
			return out, true
		}
		if value[0] != ' ' {
			return nil, false
		}
		value = value[1:]
	}
}

// plainName reports whether name is an absolute domain name that the
// parser reads and the printer writes exactly as it is: labels of 1 to 63
// letters, digits, '-' and '_', each followed by a dot, 250 bytes at most
// (well under the 255 of the wire form). The root alone is not plain.
func plainName(name string) bool {
	if len(name) < 2 || len(name) > 250 || name[len(name)-1] != '.' {
		return false
	}
	label := 0
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '.':
			if label == 0 || label > 63 {
				return false
			}
			label = 0
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_':
			label++
		default:
			return false
		}
	}
	return true
}

// originFree reports whether a value of type typ that the printer gives
// back exactly as it was written reads the same under any origin: the type
// has no domain names in its RDATA, or miekg/dns stores every one of them
// absolute (and prints it with its trailing dot), so a relative name or "@"
// in the value could not have been printed back unchanged. For these types
// a value printed back as written needs no round trip: the text printed is
// the line just parsed, header included, but for the tabs the printer
// writes where the line has spaces (which the lexer treats alike outside
// quotes and escapes, and no separator of the line is in either), so
// reading it again gives the same RR. Every other type, or any other printed form, is
// proven by parsing the printed text again.
func originFree(typ uint16) bool {
	switch typ {
	case dns.TypeA, dns.TypeAAAA, dns.TypeTXT, dns.TypeCAA,
		dns.TypeCNAME, dns.TypeNS, dns.TypePTR, dns.TypeDNAME, dns.TypeMX, dns.TypeSRV:
		return true
	}
	return false
}

// parseAll reads every RR of a zone-file fragment; $INCLUDE is refused.
func parseAll(text, origin string) ([]dns.RR, error) {
	zp := dns.NewZoneParser(strings.NewReader(text), origin, "")
	zp.SetIncludeAllowed(false)
	var out []dns.RR
	for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
		out = append(out, rr)
	}
	if err := zp.Err(); err != nil {
		return nil, cleanErr(err)
	}
	return out, nil
}

// cleanErr is a miekg/dns parse error for a user: without its "dns: "
// prefix and its "at line: 1:45" (a line of the one-line buffer the value
// was parsed in, which is no line of the user's file), and, for a field
// whose form is known, saying what the value should be:
// `bad A A: "198.51.100.300"` reads "198.51.100.300 is not an IPv4 address".
func cleanErr(err error) error {
	msg := strings.TrimPrefix(err.Error(), "dns: ")
	m := parseErrForm.FindStringSubmatch(msg)
	if m == nil {
		return errors.New(msg)
	}
	what, tok := m[1], m[2]
	if t, ok := strconv.Unquote(tok); ok == nil && plainToken.MatchString(t) {
		tok = t
	}
	if f := strings.Fields(what); len(f) == 3 && f[0] == "bad" {
		if fieldForms[f[2]] == "a domain name" {
			if err := nameLimitErr(dns.Fqdn(tok)); err != nil {
				return fmt.Errorf("%s is not a domain name (the %s field of %s): %v", tok, strings.ToLower(f[2]), f[1], err)
			}
		}
		if want := fieldForms[f[1]+" "+f[2]]; want != "" {
			return fmt.Errorf("%s is not %s", tok, want)
		}
		if want := fieldForms[f[2]]; want != "" {
			return fmt.Errorf("%s is not %s (the %s field of %s)", tok, want, strings.ToLower(f[2]), f[1])
		}
		return fmt.Errorf("%s is not a valid %s field of %s", tok, strings.ToLower(f[2]), f[1])
	}
	return fmt.Errorf("%s: %s", what, tok)
}

// parseErrForm is the text of a miekg/dns ParseError: what, the token
// quoted, and the position in the parser's buffer.
var parseErrForm = regexp.MustCompile(`^(.*): ("(?:[^"\\]|\\.)*") at line: \d+:\d+$`)

// plainToken is a token shown without quotes in a message.
var plainToken = regexp.MustCompile(`^[A-Za-z0-9._:/+-]+$`)

// fieldForms says what a field miekg/dns refuses should be: by "TYPE
// Field", else by its field name alone (the names miekg/dns gives them).
var fieldForms = map[string]string{
	"A A":       "an IPv4 address",
	"AAAA AAAA": "an IPv6 address",
	// Domain names.
	"Mx": "a domain name", "Ns": "a domain name", "Ptr": "a domain name", "Target": "a domain name",
	"Hostname": "a domain name", "Exchanger": "a domain name", "Host": "a domain name", "Fqdn": "a domain name",
	"Mbox": "a domain name", "Replacement": "a domain name",
	// 16-bit numbers.
	"Pref": "a number from 0 to 65535", "Preference": "a number from 0 to 65535",
	"Priority": "a number from 0 to 65535", "Weight": "a number from 0 to 65535",
	"Port": "a number from 0 to 65535", "Order": "a number from 0 to 65535",
	// 8-bit numbers.
	"CAA Flag": "a number from 0 to 255", "TLSA Usage": "a number from 0 to 255",
	"TLSA Selector": "a number from 0 to 255", "TLSA MatchingType": "a number from 0 to 255",
	"SMIMEA Usage": "a number from 0 to 255", "SMIMEA Selector": "a number from 0 to 255",
	"SMIMEA MatchingType": "a number from 0 to 255",
	"SSHFP Algorithm":     "a number from 0 to 255", "SSHFP Type": "a number from 0 to 255",
}

// locSeconds writes the seconds BIND lets a LOC value leave out when it
// gives the minutes ("52 22 N 4 53 E 10m", RFC 1876: each of minutes and
// seconds is optional), which miekg/dns refuses: "52 22 0 N 4 53 0 E 10m",
// the same location.
func locSeconds(v string) string {
	f := strings.Fields(v)
	var out []string
	n := 0 // numbers since the last hemisphere
	for _, w := range f {
		switch strings.ToUpper(w) {
		case "N", "S", "E", "W":
			if n == 2 {
				out = append(out, "0")
			}
			n = -1
		}
		out = append(out, w)
		n++
	}
	return strings.Join(out, " ")
}

// padLocator writes the locator of a NID or L64 value ("pref locator") with
// four hex digits per group, as miekg/dns reads it; any other form is left
// for the parser to refuse.
func padLocator(value string) string {
	f := strings.Fields(value)
	if len(f) != 2 {
		return value
	}
	g := strings.Split(f[1], ":")
	if len(g) != 4 {
		return value
	}
	for i, x := range g {
		if x == "" || len(x) > 4 || strings.Trim(strings.ToLower(x), "0123456789abcdef") != "" {
			return value
		}
		g[i] = strings.Repeat("0", 4-len(x)) + x
	}
	return f[0] + " " + strings.Join(g, ":")
}

// unquoteNumbers drops the quotes of each field of value that is a quoted
// decimal number ("-22.6882"); other fields are left as written.
func unquoteNumbers(value string) string {
	f := strings.Fields(value)
	for i, x := range f {
		if u, ok := strings.CutPrefix(x, `"`); ok && strings.HasSuffix(u, `"`) {
			if n := u[:len(u)-1]; n != "" && strings.Trim(n, "+-.0123456789") == "" {
				f[i] = n
			}
		}
	}
	return strings.Join(f, " ")
}
