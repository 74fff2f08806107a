package pkggen

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/miekg/dns"
)

// recordValue writes one presentation-format value of type t for a record
// in zone, meant to be valid for both miekg/dns and BIND. ok is false for
// types with no hand-written generator (the caller falls back to RFC 3597).
func (g *gen) recordValue(t, zone string) (string, bool) {
	r := g.r
	host := func() string { return g.pick("mail", "sip", "svc", "ns1", "relay", "host") + ".example.net." }
	hexs := func(n int) string { b := make([]byte, n); g.read(b); return strings.ToUpper(hex.EncodeToString(b)) }
	b64 := func(n int) string { b := make([]byte, n); g.read(b); return base64.StdEncoding.EncodeToString(b) }
	switch t {
	case "A":
		return fmt.Sprintf("%s.%d", g.pick("198.51.100", "203.0.113", "192.0.2"), 1+r.IntN(254)), true
	case "AAAA":
		return fmt.Sprintf("2001:db8:%x::%x", r.IntN(0xffff), 1+r.IntN(0xfffe)), true
	case "CNAME", "DNAME", "PTR", "NS", "MB", "MG", "MR", "NSAP-PTR":
		return host(), true
	case "MX", "KX", "RT", "AFSDB", "LP":
		return fmt.Sprintf("%d %s", r.IntN(100), host()), true
	case "TXT", "SPF", "AVC", "NINFO", "RESINFO":
		return g.txtValue(), true
	case "SRV":
		return fmt.Sprintf("%d %d %d %s", r.IntN(100), r.IntN(100), 1+r.IntN(65534), host()), true
	case "CAA":
		return g.pick(`0 issue "letsencrypt.org"`, `0 issuewild ";"`, `128 tbs "unknown"`, `0 iodef "mailto:security@example.com"`), true
	case "NAPTR":
		return `100 10 "U" "E2U+sip" "!^.*$!sip:info@example.com!" .`, true
	case "SSHFP":
		if r.IntN(2) == 0 {
			return "1 1 " + hexs(20), true
		}
		return "4 2 " + hexs(32), true
	case "TLSA", "SMIMEA":
		return "3 1 1 " + hexs(32), true
	case "HINFO":
		return `"PC" "Linux"`, true
	case "LOC":
		return "52 22 23.000 N 4 53 32.000 E -2.00m 1m 10000m 10m", true
	case "RP", "MINFO", "TALINK":
		return "admin.example.net. info.example.net.", true
	case "URI":
		return `10 1 "https://example.com/path"`, true
	case "SVCB": // generic keys (key7=, key8, key1 as octets) go by the codec
		return g.pick("1 svc.example.net. alpn=h2,h3 port=8443", "0 svc.example.net.", "1 . ipv4hint=192.0.2.1",
			`1 . key7="/dns-query{?dns}"`, `2 . key1="\002h2\005h3-29" key65000=abc`), true
	case "HTTPS":
		return g.pick("1 . alpn=h2", "0 www.example.net.", "1 . alpn=h3 ipv6hint=2001:db8::1", "1 svc.example.net. alpn=h2,h3 key8"), true
	case "OPENPGPKEY", "DHCID":
		return b64(48), true
	case "DS", "CDS", "DLV", "TA":
		return fmt.Sprintf("%d 13 2 %s", r.IntN(65536), hexs(32)), true
	case "DNSKEY", "CDNSKEY", "KEY":
		return "257 3 13 " + b64(64), true
	case "RKEY": // flags 0 only (BIND's key_25.c)
		return "0 3 13 " + b64(64), true
	case "EUI48":
		return "00-00-5e-00-53-2a", true
	case "EUI64":
		return "00-00-5e-ef-10-00-00-2a", true
	case "NID", "L64":
		return "10 0014:4fff:ff20:ee64", true
	case "L32":
		return "10 10.1.2.0", true
	case "IPSECKEY":
		return "10 1 2 192.0.2.38 " + b64(32), true
	case "CERT":
		return fmt.Sprintf("1 %d 8 %s", r.IntN(65536), b64(48)), true
	case "CSYNC":
		return "66 3 A NS AAAA", true
	case "ZONEMD":
		return "2018031500 1 1 " + hexs(48), true
	case "HIP":
		return "2 200100107B1A74DF365639CC39F1D578 AwEAAbdxyhNuSutc5EMzxTs9LBPCIkOFH8cIvM4p9+LrV4e19WzK00+CI6zBCQTdtWsuxKbWIy87UOoJTwkUs7lBu+Upr1gsNrut79ryra+bSRGQb1slImA8YVJyuIDsj7kwzG7jnERNqnWxZ48AWkskmdHaVDP4BcelrTI3rMXdXF5D rvs.example.com.", true
	case "GPOS":
		return "-32.6882 116.8652 10.0", true
	case "X25":
		return `"311061700956"`, true
	case "ISDN":
		return `"150862028003217" "004"`, true
	case "PX":
		return "10 net2.example.net. prmd.example.net.", true
	case "NSAP":
		return "0x47000580005a0000000001e133ffffff00016100", true
	case "AMTRELAY":
		return "0 0 3 relay.example.net.", true
	case "APL":
		return "1:192.168.32.0/21 !1:192.168.38.0/28", true
	case "ATMA": // no miekg/dns RR struct: BIND's grammar (zonefile's codec), or RFC 3597
		return g.pick(`\# 2 0130`, "+358.400.1234567", "39246f00e7c9e0b5f9c0e7c9e000000000000000ed"), true
	// Types miekg/dns cannot parse, read by BIND's grammar and rendered in
	// the RFC 3597 form (internal/zonefile/generic.go).
	case "DSYNC":
		return g.pick("CDS NOTIFY 5359 "+host(), "CSYNC 1 53 scanner", "TYPE62 NOTIFY 0 "+host()), true
	case "WALLET":
		return g.pick(`"BTC" "bc1qxyz"`, `"ETH" "0x`+hexs(20)+`"`), true
	case "DOA":
		return g.pick(`0 1 2 "" `+b64(12), `4294967295 4294967295 255 "image/gif" -`), true
	case "A6":
		return g.pick("0 2001:db8::1", "64 ::1:2:3:4 "+host(), "128 "+host(), "65 ffff:ffff:ffff:ffff:ffff:: p"), true
	case "WKS":
		return g.pick("192.0.2.1 tcp 25 80 443", "192.0.2.2 17 53", "192.0.2.3 6"), true
	case "UNSPEC":
		return `\# 4 deadbeef`, true
	case "EID", "NIMLOC", "NULL":
		return "", false
	}
	return "", false
}

// txtValue is one TXT value: plain, with escapes, a string at the 255-byte
// limit, or several strings.
func (g *gen) txtValue() string {
	switch g.r.IntN(6) {
	case 0:
		return `"v=spf1 -all"`
	case 1:
		return `"say \"hi\" \\ back; {braces}"`
	case 2:
		return `"` + strings.Repeat("x", 255) + `"`
	case 3:
		return `"first" "second" "third"`
	case 4:
		return `"k=v" ""`
	default:
		return fmt.Sprintf(`"token-%d"`, g.r.IntN(1e6))
	}
}

// zoneTypes are the RR types a zone file may hold: every type miekg/dns
// knows except meta types, types with no presentation format and the
// DNSSEC records BIND maintains itself.
func zoneTypes() []string {
	skip := map[uint16]bool{
		dns.TypeOPT: true, dns.TypeTSIG: true, dns.TypeTKEY: true, dns.TypeIXFR: true, dns.TypeAXFR: true,
		dns.TypeMAILA: true, dns.TypeMAILB: true, dns.TypeANY: true, dns.TypeNone: true, dns.TypeReserved: true,
		dns.TypeNXNAME: true, dns.TypeSOA: true,
		dns.TypeRRSIG: true, dns.TypeNSEC: true, dns.TypeNSEC3: true, dns.TypeNSEC3PARAM: true, dns.TypeSIG: true, dns.TypeNXT: true,
	}
	// BIND's types miekg/dns does not name: zonefile's codec reads them.
	out := []string{"DSYNC", "WALLET", "DOA", "A6", "WKS"}
	for t, s := range dns.TypeToString {
		if skip[t] {
			continue
		}
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

// generic is the RFC 3597 form ("\# len hex") of a value of type t, from a
// hand-written value or, without one, the zero value miekg/dns packs.
func generic(t, value string) (string, bool) {
	code, ok := dns.StringToType[t]
	if !ok {
		return "", false
	}
	var rr dns.RR
	if value != "" {
		var err error
		rr, err = dns.NewRR("x.example. 300 IN " + t + " " + value)
		if err != nil || rr == nil {
			return "", false
		}
	} else {
		mk, ok := dns.TypeToRR[code]
		if !ok {
			return "", false
		}
		rr = mk()
		*rr.Header() = dns.RR_Header{Name: "x.example.", Rrtype: code, Class: dns.ClassINET, Ttl: 300}
		// domain names in the zero value are empty: make them the root
		rv := reflect.ValueOf(rr).Elem()
		for i := 0; i < rv.NumField(); i++ {
			f := rv.Type().Field(i)
			if strings.Contains(string(f.Tag), "domain-name") && f.Type.Kind() == reflect.String {
				rv.Field(i).SetString(".")
			}
		}
	}
	buf := make([]byte, 65535)
	off, err := dns.PackRR(rr, buf, 0, nil, false)
	if err != nil {
		return "", false
	}
	// Skip the header: name (x.example. = 11 bytes), type, class, ttl, rdlength.
	hdr := 11 + 10
	rd := buf[hdr:off]
	if len(rd) == 0 {
		return `\# 0`, true
	}
	return fmt.Sprintf(`\# %d %s`, len(rd), hex.EncodeToString(rd)), true
}
