package zonefile

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/miekg/dns"
)

// The types BIND reads and miekg/dns cannot parse (it has no parser for
// them, or only for part of their grammar) are read here, by BIND's own
// grammar (lib/dns/rdata/*/<type>_<n>.c, fromtext_*), into their wire
// RDATA, and written to the zone file in the RFC 3597 generic form
// ("TYPE66 \# 9 00...", for SVCB and HTTPS "SVCB \# ..."), which BIND 9.18
// and 9.20 and miekg/dns all read. named-checkzone -D prints such a record
// in its own text form, the same as for the text the user wrote
// (TestGenericAgainstBIND holds the two equal, FuzzGeneric fuzzes the
// generic form against BIND's reading).
//
// miekg/dns was checked first: v1.1.73 is the newest v1 the module proxy
// serves and parses none of these; codeberg.org/miekg/dns (v2, v0.6.0, no
// approved release) parses DSYNC and WALLET only, under another API.

// bindCodecs read the presentation form of a type BIND reads and
// miekg/dns does not, as tokens, to wire RDATA.
var bindCodecs = map[uint16]func(f []string, origin string) ([]byte, error){
	11:  wksWire,
	22:  nsapWire,
	34:  atmaWire,
	38:  a6Wire,
	66:  dsyncWire,
	259: doaWire,
	262: walletWire,
}

// genericEntry is the entry of wire RDATA of type typ written in the RFC
// 3597 form: as miekg/dns prints it for a type it cannot hold ("CLASS1
// TYPE66 \# ..."), under typName for one it can. Where miekg/dns can hold the RDATA in its own
// struct (an SVCB with key8), the entry's RR is that struct, which is what
// reading the zone file back gives.
func genericEntry(owner string, ttl uint32, typ uint16, typName string, wire []byte) entry {
	h := dns.RR_Header{Name: owner, Rrtype: typ, Class: dns.ClassINET, Ttl: ttl, Rdlength: uint16(len(wire))}
	var rr dns.RR = &dns.RFC3597{Hdr: h, Rdata: hex.EncodeToString(wire)}
	if _, known := dns.TypeToRR[typ]; known {
		if u, _, err := dns.UnpackRRWithHeader(h, wire, 0); err == nil {
			rr = u
		}
	}
	if _, ok := rr.(*dns.RFC3597); ok {
		// As parseLine writes a TYPEnnn value given in this form.
		e := entry{rr: rr}
		e.fill()
		return e
	}
	rdata := `\# ` + strconv.Itoa(len(wire))
	if len(wire) > 0 {
		rdata += " " + hex.EncodeToString(wire)
	}
	text := owner + "\t" + strconv.FormatUint(uint64(ttl), 10) + "\tIN\t" + typName + "\t" + rdata
	return entry{rr: rr, text: text, rdata: rdata}
}

// fields splits a value into BIND's master-file tokens: separated by
// blanks outside double quotes, a token keeping its quotes and escapes.
func fields(v string) []string {
	var out []string
	var cur strings.Builder
	quoted, in := false, false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '\\' && i+1 < len(v):
			cur.WriteByte(c)
			cur.WriteByte(v[i+1])
			i++
			in = true
			continue
		case c == '"':
			quoted = !quoted
		case !quoted && (c == ' ' || c == '\t'):
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
			continue
		}
		cur.WriteByte(c)
		in = true
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// want checks the number of tokens of a value.
func want(f []string, n int, form string) error {
	if len(f) != n {
		return fmt.Errorf("want %s (%d fields), not %d fields", form, n, len(f))
	}
	return nil
}

// number reads a decimal token of at most bits bits, as BIND's lexer reads
// a number.
func number(tok, what string, bits int) (uint64, error) {
	if tok == "" || strings.Trim(tok, "0123456789") != "" {
		return 0, fmt.Errorf("%s %q is not a decimal number", what, tok)
	}
	n, err := strconv.ParseUint(tok, 10, bits)
	if err != nil {
		return 0, fmt.Errorf("%s %s is out of range (at most %d)", what, tok, uint64(1)<<bits-1)
	}
	return n, nil
}

// nameWire is a domain name as written (relative to origin, "@" the
// origin) in wire form, uncompressed, its case kept as BIND keeps it. BIND
// loads zones with check-names, so the name must be a host name.
func nameWire(tok, origin, what string) ([]byte, error) {
	abs := tok
	switch {
	case tok == "@":
		abs = origin
	case !dns.IsFqdn(tok):
		if origin == "." {
			abs = tok + "."
		} else {
			abs = tok + "." + origin
		}
	}
	if err := checkNameChars(abs); err != nil {
		return nil, fmt.Errorf("cannot use %q as %s: %v", tok, what, err)
	}
	if err := nameLimitErr(abs); err != nil {
		return nil, err
	}
	if !IsHostname(dns.CanonicalName(abs), false) || !isASCII(abs) {
		return nil, fmt.Errorf("cannot use %q as %s: BIND loads zones with check-names, which takes only host names here (letters, digits and inner hyphens per label); fix the name", tok, what)
	}
	buf := make([]byte, 256)
	n, err := dns.PackDomainName(abs, buf, 0, nil, false)
	if err != nil {
		return nil, fmt.Errorf("%q is not a valid domain name: %v", abs, err)
	}
	return buf[:n], nil
}

// unquoted is a token without its quotes; a token of several quoted
// pieces is refused.
func unquoted(tok string) (string, error) {
	if !strings.HasPrefix(tok, `"`) {
		if strings.Contains(tok, `"`) {
			return "", fmt.Errorf("%s: a quote inside a word; quote the whole value", tok)
		}
		return tok, nil
	}
	if len(tok) < 2 || !strings.HasSuffix(tok, `"`) || strings.Contains(unescapedQuotes(tok[1:len(tok)-1]), `"`) {
		return "", fmt.Errorf("%s: quote the whole value, once", tok)
	}
	return tok[1 : len(tok)-1], nil
}

// unescapedQuotes is s with its escaped characters removed.
func unescapedQuotes(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' {
			i++
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// charBytes decodes the escapes of a character-string's text (\DDD, \X) to
// its octets, as BIND's txt_fromtext does.
func charBytes(s string) ([]byte, error) {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			out = append(out, c)
			continue
		}
		i++
		switch {
		case i >= len(s):
			return nil, fmt.Errorf("the value ends in a lone backslash")
		case isDigit(s[i]):
			if i+2 >= len(s) || !isDigit(s[i+1]) || !isDigit(s[i+2]) {
				return nil, fmt.Errorf("a \\DDD escape needs three digits")
			}
			d := int(s[i]-'0')*100 + int(s[i+1]-'0')*10 + int(s[i+2]-'0')
			if d > 255 {
				return nil, fmt.Errorf("\\%s is above \\255", s[i:i+3])
			}
			out = append(out, byte(d))
			i += 2
		default:
			out = append(out, s[i])
		}
	}
	return out, nil
}

// wksWire: "address protocol service...", lib/dns/rdata/in_1/wks_11.c.
// Protocols are numbers, tcp or udp; services are port numbers. BIND also
// reads names from the server's /etc/protocols and /etc/services, which
// differ from server to server (a pod's image may have none): a deliberate
// difference (docs/validation.md).
func wksWire(f []string, _ string) ([]byte, error) {
	if len(f) < 2 {
		return nil, fmt.Errorf("want an IPv4 address, a protocol and port numbers (10.0.0.1 tcp 25 80)")
	}
	ip := net.ParseIP(f[0])
	if ip == nil || ip.To4() == nil || strings.Contains(f[0], ":") {
		return nil, fmt.Errorf("%s is not an IPv4 address", f[0])
	}
	out := append([]byte{}, ip.To4()...)
	var proto uint64
	switch f[1] {
	case "tcp", "TCP":
		proto = 6
	case "udp", "UDP":
		proto = 17
	default:
		p, err := number(f[1], "the protocol", 8)
		if err != nil {
			return nil, fmt.Errorf("%v: write tcp, udp or the protocol's number (BIND reads other names from the server's /etc/protocols)", err)
		}
		proto = p
	}
	out = append(out, byte(proto))
	var bm [8192]byte
	maxPort := -1
	for _, s := range f[2:] {
		p, err := number(s, "the service", 16)
		if err != nil {
			return nil, fmt.Errorf("%v: write the port number (BIND reads service names from the server's /etc/services, which a pod may not have)", err)
		}
		bm[p/8] |= 0x80 >> (p % 8)
		maxPort = max(maxPort, int(p))
	}
	return append(out, bm[:(maxPort+8)/8]...), nil
}

// hexDots reads hex digits with '.' anywhere between them, an even number
// of digits, at least two; periodsInside refuses a leading, trailing or
// doubled '.' (ATMA).
func hexDots(s string, periodsInside bool) ([]byte, error) {
	var digits []byte
	last := byte('.')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '.' {
			if periodsInside && last == '.' {
				return nil, fmt.Errorf("%q has a '.' at its start or two in a row", s)
			}
			last = c
			continue
		}
		if strings.IndexByte("0123456789abcdefABCDEF", c) < 0 {
			return nil, fmt.Errorf("%q holds %q, which is not a hex digit", s, c)
		}
		digits = append(digits, c)
		last = c
	}
	if len(digits) == 0 || len(digits)%2 != 0 || (periodsInside && last == '.') {
		return nil, fmt.Errorf("%q is not an even number of hex digits (at least two)", s)
	}
	return hex.DecodeString(string(digits))
}

// nsapWire: "0x<hex.with.dots>", lib/dns/rdata/in_1/nsap_22.c.
func nsapWire(f []string, _ string) ([]byte, error) {
	if err := want(f, 1, "one NSAP address, 0x<hex digits>"); err != nil {
		return nil, err
	}
	h, ok := strings.CutPrefix(f[0], "0x")
	if !ok {
		h, ok = strings.CutPrefix(f[0], "0X")
	}
	if !ok {
		return nil, fmt.Errorf("an NSAP address starts with 0x: %q", f[0])
	}
	return hexDots(h, false)
}

// atmaWire: an AESA in hex, or +E.164 digits, lib/dns/rdata/in_1/atma_34.c.
func atmaWire(f []string, _ string) ([]byte, error) {
	if err := want(f, 1, "one ATM address, hex digits or +E.164 digits"); err != nil {
		return nil, err
	}
	s := f[0]
	if e164, ok := strings.CutPrefix(s, "+"); ok {
		out := []byte{1}
		last := byte('.')
		for i := 0; i < len(e164); i++ {
			c := e164[i]
			switch {
			case c == '.' && last != '.':
			case isDigit(c):
				out = append(out, c)
			default:
				return nil, fmt.Errorf("%q is not an E.164 number (digits, single dots between them)", s)
			}
			last = c
		}
		if last == '.' {
			return nil, fmt.Errorf("%q is not an E.164 number (digits, single dots between them)", s)
		}
		return out, nil
	}
	b, err := hexDots(s, true)
	if err != nil {
		return nil, err
	}
	return append([]byte{0}, b...), nil
}

// a6Wire: "prefixlen [suffix] [prefix-name]", lib/dns/rdata/in_1/a6_38.c:
// the suffix's first octet is masked to the bits below the prefix.
func a6Wire(f []string, origin string) ([]byte, error) {
	if len(f) == 0 {
		return nil, fmt.Errorf("want a prefix length, an address suffix and a prefix name")
	}
	pl, err := number(f[0], "the prefix length", 8)
	if err != nil || pl > 128 {
		return nil, fmt.Errorf("the prefix length %q is not 0 to 128", f[0])
	}
	n := 1
	if pl != 128 {
		n++
	}
	if pl != 0 {
		n++
	}
	if err := want(f, n, "a prefix length, an address suffix unless the length is 128, and a prefix name unless it is 0"); err != nil {
		return nil, err
	}
	out := []byte{byte(pl)}
	i := 1
	if pl != 128 {
		ip := net.ParseIP(f[1])
		if ip == nil || !strings.Contains(f[1], ":") {
			return nil, fmt.Errorf("%s is not an IPv6 address", f[1])
		}
		oct := pl / 8
		suffix := append([]byte{}, ip.To16()[oct:]...)
		suffix[0] &= 0xff >> (pl % 8)
		out = append(out, suffix...)
		i++
	}
	if pl != 0 {
		nw, err := nameWire(f[i], origin, "the A6 prefix name")
		if err != nil {
			return nil, err
		}
		out = append(out, nw...)
	}
	return out, nil
}

// dsyncWire: "rrtype scheme port target", lib/dns/rdata/generic/dsync_66.c;
// the scheme is NOTIFY or a number.
func dsyncWire(f []string, origin string) ([]byte, error) {
	if err := want(f, 4, "an RR type, a scheme, a port and a target (CDS NOTIFY 5359 scanner.example.net.)"); err != nil {
		return nil, err
	}
	var t uint16
	if n, err := number(f[0], "the RR type", 16); err == nil {
		t = uint16(n)
	} else if n, ok := bindOnlyTypes[strings.ToUpper(f[0])]; ok {
		t = uint16(n)
	} else if n, _, err := rrType(f[0]); err == nil {
		t = n
	} else {
		return nil, fmt.Errorf("the RR type %q is not a type mnemonic, TYPEnnn or a number", f[0])
	}
	var scheme uint64
	if strings.EqualFold(f[1], "NOTIFY") {
		scheme = 1
	} else {
		s, err := number(f[1], "the scheme", 8)
		if err != nil {
			return nil, fmt.Errorf("%v: write NOTIFY or a number", err)
		}
		scheme = s
	}
	port, err := number(f[2], "the port", 16)
	if err != nil {
		return nil, err
	}
	out := binary.BigEndian.AppendUint16(nil, t)
	out = append(out, byte(scheme))
	out = binary.BigEndian.AppendUint16(out, uint16(port))
	nw, err := nameWire(f[3], origin, "the DSYNC target")
	if err != nil {
		return nil, err
	}
	return append(out, nw...), nil
}

// doaWire: "enterprise type location media-type data", data base64 or "-",
// lib/dns/rdata/generic/doa_259.c.
func doaWire(f []string, _ string) ([]byte, error) {
	if len(f) < 5 {
		return nil, fmt.Errorf("want an enterprise, a type, a location, a media type and the data in base64 or -")
	}
	ent, err := number(f[0], "the enterprise", 32)
	if err != nil {
		return nil, err
	}
	typ, err := number(f[1], "the type", 32)
	if err != nil {
		return nil, err
	}
	loc, err := number(f[2], "the location", 8)
	if err != nil {
		return nil, err
	}
	out := binary.BigEndian.AppendUint32(nil, uint32(ent))
	out = binary.BigEndian.AppendUint32(out, uint32(typ))
	out = append(out, byte(loc))
	mt, err := unquoted(f[3])
	if err != nil {
		return nil, err
	}
	b, err := charBytes(mt)
	if err != nil {
		return nil, err
	}
	if len(b) > 255 {
		return nil, fmt.Errorf("the media type is %d octets, and a character-string holds at most 255", len(b))
	}
	out = append(out, byte(len(b)))
	out = append(out, b...)
	if len(f) == 5 && f[4] == "-" {
		return out, nil
	}
	data, err := base64.StdEncoding.Strict().DecodeString(strings.Join(f[4:], ""))
	if err != nil {
		return nil, fmt.Errorf("the DOA data is not base64 (or - for none): %v", err)
	}
	return append(out, data...), nil
}

// walletWire: one or more character-strings, as TXT
// (lib/dns/rdata/generic/wallet_262.c).
func walletWire(f []string, _ string) ([]byte, error) {
	var out []byte
	for _, tok := range f {
		s, err := unquoted(tok)
		if err != nil {
			return nil, err
		}
		b, err := charBytes(s)
		if err != nil {
			return nil, err
		}
		for len(b) > 255 { // BIND splits a long string as TXT does
			out = append(append(out, 255), b[:255]...)
			b = b[255:]
		}
		out = append(append(out, byte(len(b))), b...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("a WALLET record holds at least one string")
	}
	return out, nil
}

// svcbKeys are BIND's SvcParamKey names (svcb_64.c, sbpr) with their
// numbers.
var svcbKeys = map[string]uint16{"mandatory": 0, "alpn": 1, "no-default-alpn": 2, "port": 3, "ipv4hint": 4, "ech": 5, "ipv6hint": 6, "dohpath": 7}

// svcbKey reads a key name as BIND does: a name of svcbKeys, or keyNNNNN
// (no leading zero, at most 65535).
func svcbKey(s string) (uint16, error) {
	if k, ok := svcbKeys[s]; ok {
		return k, nil
	}
	n, ok := strings.CutPrefix(s, "key")
	if !ok || n == "" || (n[0] == '0' && len(n) > 1) {
		return 0, fmt.Errorf("unknown SVCB key %q: use a key name BIND knows (%s) or keyNNNNN", s, "mandatory, alpn, no-default-alpn, port, ipv4hint, ech, ipv6hint, dohpath")
	}
	k, err := number(n, "the key number", 16)
	if err != nil {
		return 0, err
	}
	return uint16(k), nil
}

// svcbWire reads an SVCB or HTTPS value by BIND's grammar
// (lib/dns/rdata/in_1/svcb_64.c): priority, target, then key=value
// parameters, each by its key's encoding, or, as keyNNNNN=, a
// character-string of the value's wire octets checked against the key's
// encoding. The parameters are sorted by key; a key twice is refused.
func svcbWire(f []string, origin string) ([]byte, error) {
	if len(f) < 2 {
		return nil, fmt.Errorf("want a priority, a target and parameters")
	}
	// BIND's lexer ends a word at a quote (FuzzGeneric: `0 0000000""`).
	if strings.Contains(unescapedQuotes(f[0]+f[1]), `"`) {
		return nil, fmt.Errorf("a quote in the priority or the target")
	}
	prio, err := number(f[0], "the priority", 16)
	if err != nil {
		return nil, err
	}
	out := binary.BigEndian.AppendUint16(nil, uint16(prio))
	if f[1] == "." {
		out = append(out, 0)
	} else {
		abs := f[1]
		if f[1] == "@" {
			abs = origin
		} else if !dns.IsFqdn(abs) {
			abs += "." + strings.TrimPrefix(origin, ".")
		}
		if err := nameLimitErr(abs); err != nil {
			return nil, err
		}
		buf := make([]byte, 256)
		n, err := dns.PackDomainName(abs, buf, 0, nil, false)
		if err != nil {
			return nil, fmt.Errorf("%q is not a valid domain name: %v", f[1], err)
		}
		out = append(out, buf[:n]...)
	}
	type param struct {
		key uint16
		val []byte
	}
	var ps []param
	for _, tok := range f[2:] {
		k, v, hasValue := strings.Cut(tok, "=")
		key, err := svcbKey(k)
		if err != nil {
			return nil, err
		}
		raw, err := unquoted(v)
		if err != nil {
			return nil, err
		}
		var val []byte
		if _, named := svcbKeys[k]; named {
			val, err = svcbValue(key, raw)
		} else if hasValue {
			val, err = charBytes(raw)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %v", k, err)
		}
		if err := svcbValid(key, val); err != nil {
			return nil, fmt.Errorf("%s: %v", k, err)
		}
		ps = append(ps, param{key, val})
	}
	slices.SortStableFunc(ps, func(a, b param) int { return int(a.key) - int(b.key) })
	for i, p := range ps {
		if i > 0 && ps[i-1].key == p.key {
			return nil, fmt.Errorf("the key %d is given twice: BIND refuses the record; give each key once", p.key)
		}
		if len(p.val) > 65535 {
			return nil, fmt.Errorf("the value of key %d is over 65535 octets", p.key)
		}
		out = binary.BigEndian.AppendUint16(out, p.key)
		out = binary.BigEndian.AppendUint16(out, uint16(len(p.val)))
		out = append(out, p.val...)
	}
	return out, nil
}

// svcbValue encodes the value of a key written by its name.
func svcbValue(key uint16, raw string) ([]byte, error) {
	switch key {
	case 0: // mandatory: key names, sorted
		var ks []uint16
		for _, n := range strings.Split(raw, ",") {
			k, err := svcbKey(n)
			if err != nil {
				return nil, err
			}
			ks = append(ks, k)
		}
		slices.Sort(ks)
		var out []byte
		for i, k := range ks {
			if i > 0 && ks[i-1] == k {
				return nil, fmt.Errorf("lists key %d twice", k)
			}
			out = binary.BigEndian.AppendUint16(out, k)
		}
		return out, nil
	case 1: // alpn: comma-separated ids, two levels of escapes
		return alpnWire(raw)
	case 2:
		if raw != "" {
			return nil, fmt.Errorf("takes no value")
		}
		return nil, nil
	case 3:
		p, err := number(raw, "the port", 16)
		if err != nil {
			return nil, err
		}
		return binary.BigEndian.AppendUint16(nil, uint16(p)), nil
	case 4, 6:
		var out []byte
		for _, a := range strings.Split(raw, ",") {
			ip := net.ParseIP(a)
			if ip == nil || (key == 4) == strings.Contains(a, ":") {
				return nil, fmt.Errorf("%q is not an IPv%d address", a, map[uint16]int{4: 4, 6: 6}[key])
			}
			if key == 4 {
				out = append(out, ip.To4()...)
			} else {
				out = append(out, ip.To16()...)
			}
		}
		return out, nil
	case 5:
		return base64.StdEncoding.Strict().DecodeString(raw)
	default: // dohpath
		return charBytes(raw)
	}
}

// alpnWire is BIND's commatxt_fromtext over a whole value: the
// character-string escapes first, then "\," and "\\" within the result.
func alpnWire(raw string) ([]byte, error) {
	b, err := charBytes(raw)
	if err != nil {
		return nil, err
	}
	var out, id []byte
	esc := false
	flush := func() error {
		if len(id) == 0 || len(id) > 255 {
			return fmt.Errorf("an alpn id is 1 to 255 octets")
		}
		out = append(append(out, byte(len(id))), id...)
		id = id[:0]
		return nil
	}
	for _, c := range b {
		switch {
		case esc:
			id, esc = append(id, c), false
		case c == '\\':
			esc = true
		case c == ',':
			if err := flush(); err != nil {
				return nil, err
			}
		default:
			id = append(id, c)
		}
	}
	if esc {
		return nil, fmt.Errorf("the value ends in an escape")
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return out, nil
}

// svcbValid is BIND's svcb_validate: the wire value of a known key has
// its key's form, however it was written.
func svcbValid(key uint16, v []byte) error {
	switch key {
	case 0:
		if len(v) == 0 || len(v)%2 != 0 {
			return fmt.Errorf("a mandatory list is one or more 2-octet keys")
		}
		for i := 2; i < len(v); i += 2 {
			if binary.BigEndian.Uint16(v[i-2:]) >= binary.BigEndian.Uint16(v[i:]) {
				return fmt.Errorf("a mandatory list holds keys in ascending order, each once")
			}
		}
	case 1:
		if len(v) == 0 {
			return fmt.Errorf("alpn holds no protocol id")
		}
		for r := v; len(r) > 0; {
			l := int(r[0]) + 1
			if l == 1 || l > len(r) {
				return fmt.Errorf("alpn holds an empty or cut protocol id")
			}
			r = r[l:]
		}
	case 2:
		if len(v) != 0 {
			return fmt.Errorf("no-default-alpn takes no value")
		}
	case 3:
		if len(v) != 2 {
			return fmt.Errorf("a port is 2 octets")
		}
	case 4:
		if len(v) == 0 || len(v)%4 != 0 {
			return fmt.Errorf("ipv4hint is one or more 4-octet addresses")
		}
	case 6:
		if len(v) == 0 || len(v)%16 != 0 {
			return fmt.Errorf("ipv6hint is one or more 16-octet addresses")
		}
	case 7:
		if !dohPathOK(string(v)) {
			return fmt.Errorf("dohpath %q is not a relative URI template with the dns variable (RFC 9461: \"/dns-query{?dns}\"): BIND refuses the record", v)
		}
	}
	return nil
}
