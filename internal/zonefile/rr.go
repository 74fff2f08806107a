package zonefile

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/miekg/dns"
)

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
	if !ok {
		return 0, "", fmt.Errorf("unknown record type %q: use a mnemonic such as A, AAAA, CNAME, MX, TXT, SRV, or TYPEnnn", s)
	}
	switch t {
	case dns.TypeNone, dns.TypeReserved, dns.TypeOPT, dns.TypeTSIG, dns.TypeTKEY, dns.TypeANY,
		dns.TypeAXFR, dns.TypeIXFR, dns.TypeMAILA, dns.TypeMAILB:
		return 0, "", fmt.Errorf("record type %q cannot be stored in a zone", s)
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
	if err := checkValue(value); err != nil {
		return entry{}, err
	}
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

// cleanErr drops the "dns: " prefix of miekg/dns parse errors.
func cleanErr(err error) error {
	return fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "dns: "))
}
