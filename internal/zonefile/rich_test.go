package zonefile

import (
	"strings"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/model"
)

// richZone has one of every kind of record the zone files must carry.
func richZone() *model.Zone {
	long := strings.Repeat("0123456789abcdef", 20) // 320 octets: two strings
	hex64 := strings.Repeat("a1b2c3d4", 8)
	return testZone("example.com.", []string{"ns1", "ns2.example.com.", "ns.other.net."}, &v1alpha1.SOASpec{Email: "dns.admin@example.com"},
		inline(0, "@", "A", "192.0.2.1"),
		inline(1, "@", "AAAA", "2001:db8::1"),
		inline(2, "ns1", "A", "192.0.2.53"),
		inline(3, "ns2", "AAAA", "2001:db8::53"),
		inline(4, "www", "CNAME", "@"),
		inline(5, "@", "MX", "10 mail", "20 mail.backup.net."),
		inline(6, "mail", "A", "192.0.2.25"),
		inline(7, "@", "TXT", `"v=spf1 mx -all"`, `"text with spaces; and a semicolon"`, `"she said \"hi\""`, `"tab\009 and \\ backslash"`),
		inline(8, "long", "TXT", `"`+long+`"`, `"part one" "part two"`),
		inline(9, "_sip._tcp", "SRV", "10 60 5060 sip"),
		inline(10, "sip", "A", "192.0.2.60"),
		inline(11, "@", "CAA", `0 issue "letsencrypt.org"`, `0 iodef "mailto:security@example.com"`),
		inline(12, "1.2", "PTR", "host.example.com."),
		inline(13, "sub", "NS", "ns1.sub", "ns.other.net."),
		inline(14, "ns1.sub", "A", "192.0.2.100"),
		inline(15, "sub", "DS", "12345 13 2 "+hex64),
		inline(16, "host", "SSHFP", "1 2 "+hex64),
		inline(17, "_443._tcp.www", "TLSA", "3 1 1 "+hex64),
		inline(18, "naptr", "NAPTR", `100 10 "S" "SIP+D2U" "" _sip._udp.example.com.`),
		inline(19, "*", "A", "192.0.2.99"),
		inline(20, "bücher", "A", "192.0.2.80"),
		inline(21, "xn--caf-dma", "AAAA", "2001:db8::80"),
		inline(22, `a\.b`, "TXT", `"escaped dot in owner"`),
		inline(23, `odd\;name`, "TXT", `"escaped semicolon in owner"`),
		withTTL(inline(24, "short", "A", "192.0.2.7"), 30),
		inline(25, "host", "A", "192.0.2.33"),
		record("api", "api", "A", "192.0.2.10", "192.0.2.11", "192.0.2.10"),
		record("api6", "API.example.com.", "AAAA", "2001:db8::10"),
		record("ftp", "FTP", "CNAME", "www"),
		record("sip-udp", "_sip._udp", "srv", "10 60 5060 sip.example.com."),
	)
}
