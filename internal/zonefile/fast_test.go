package zonefile

import (
	"cmp"
	"math/rand/v2"
	"net"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// fastCase checks that whenever fastValue takes a value, parseLine gives
// the same RR, text and RDATA for it.
func fastCase(t *testing.T, owner string, ttl uint32, typName, value, origin string) bool {
	t.Helper()
	typ, name, err := rrType(typName)
	if err != nil || checkValue(value) != nil {
		return false
	}
	fast, ok := fastValue(owner, ttl, typ, name, value, origin)
	if !ok {
		return false
	}
	slow, err := parseLine(owner, ttl, typ, name, value, origin)
	if err != nil {
		t.Fatalf("fastValue took %s %d %s %q (origin %s), parseLine refuses it: %v", owner, ttl, name, value, origin, err)
	}
	if fast.text != slow.text || fast.rdata != slow.rdata || !reflect.DeepEqual(fast.rr, slow.rr) {
		t.Fatalf("%s %d %s %q (origin %s):\nfast %q %q %#v\nslow %q %q %#v", owner, ttl, name, value, origin, fast.text, fast.rdata, fast.rr, slow.text, slow.rdata, slow.rr)
	}
	if fast.rr.String() != fast.text {
		t.Fatalf("fast text %q, printed %q", fast.text, fast.rr.String())
	}
	return true
}

func TestFastValueMatches(t *testing.T) {
	origins := []string{"example.com.", "Example.COM.", "2.0.192.in-addr.arpa.", "a_b-c.d.", "."}
	owners := []string{"example.com.", "www.example.com.", "_sip._tcp.Example.com.", "in.example.com.", "a.", "1.2.3.4.", "txt.example.com.",
		strings.Repeat("a", 63) + ".example.com.", strings.Repeat("a", 64) + ".example.com.", "*.example.com.", `a\.b.example.com.`, "é.example.com.", "."}
	ttls := []uint32{0, 1, 300, 86400, 2147483647}
	values := map[string][]string{
		"A": {"192.0.2.1", "0.0.0.0", "255.255.255.255", "192.0.2.01", "192.000.2.1", "192.0.2", "192.0.2.256", "::1", "::ffff:192.0.2.1",
			" 192.0.2.1", "192.0.2.1 ", "192.0.2.1 192.0.2.2", "1.2.3.4.", "a.b.c.d", "", "\\049.2.3.4"},
		"AAAA": {"2001:db8::1", "::", "::1", "2001:DB8::1", "2001:db8:0:0:0:0:0:1", "::ffff:192.0.2.1", "::192.0.2.1", "::102:304", "fe80::1%eth0",
			"2001:db8::1 ", "192.0.2.1", "2001:0db8::1", "1:2:3:4:5:6:7:8", "1::2:3:4:5:6:7"},
		"CNAME": {"host-24", "host-24.", "www.example.com.", "www.example.com", "@", "a..b", ".", "a.", strings.Repeat("a", 63), strings.Repeat("a", 64),
			strings.Repeat("abcdefghi.", 24), strings.Repeat("abcdefghi.", 25) + "x.", "in", "A", "TXT", "1234", "*.x", "a\\.b", "_x.y", "-", "a b", "ÿ", "x.in-addr.arpa."},
	}
	for _, n := range values["CNAME"] {
		values["MX"] = append(values["MX"], "10 "+n, "0 "+n, "010 "+n, "65535 "+n, "65536 "+n, "-1 "+n, "+1 "+n, "1  "+n, "1\t"+n)
		values["SRV"] = append(values["SRV"], "0 5 5060 "+n, "10 0 0 "+n, "1 2 "+n, "1 2 3 4 "+n, "01 2 3 "+n, "1 2 65535 "+n, "1 2 99999 "+n)
	}
	values["MX"] = append(values["MX"], "10", "10 ", " 10 a.", "a b.")
	values["SRV"] = append(values["SRV"], "1 2 3", "1 2 3 ", "1 2 3 a. b.")
	values["TXT"] = []string{`"hello"`, `"hello world"`, `"v=DKIM1; k=rsa; p=MIGf" "MA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQC"`, `""`, `"a" ""`, `"a"  "b"`,
		`"a""b"`, `"a" "b" "c"`, `hello`, `"a\"b"`, `"a\\b"`, `"a\059b"`, `"(x)"`, `"$x"`, `"@ ;"`, `"é"`, "\"a\tb\"", `"` + strings.Repeat("x", 255) + `"`,
		`"` + strings.Repeat("x", 256) + `"`, `"` + strings.Repeat("y", 600) + `"`, `"a" b`, `"a`, `a"`, `"~ !#%&'*+,-./:<=>?[]^_{|}"`}
	values["NS"] = values["CNAME"]
	values["PTR"] = values["CNAME"]
	taken := 0
	for _, origin := range origins {
		for _, owner := range owners {
			for _, ttl := range ttls {
				for typ, vs := range values {
					for _, v := range vs {
						if fastCase(t, owner, ttl, typ, v, origin) {
							taken++
						}
					}
				}
			}
		}
	}
	if taken < 1000 {
		t.Fatalf("fastValue took only %d values: the test no longer tests it", taken)
	}
	// What a generated package holds must take the fast path.
	for _, c := range []struct{ typ, value string }{{"A", "10.0.0.1"}, {"AAAA", "2001:db8::a"}, {"CNAME", "host-5"}, {"PTR", "host-1.example.com."}, {"NS", "ns1.sub.example.com."},
		{"MX", "10 mail"}, {"SRV", "0 5 5060 sip.example.net."}, {"TXT", `"v=DKIM1; k=rsa" "p=MIG"`}} {
		if !fastCase(t, "www.example.com.", 300, c.typ, c.value, "example.com.") {
			t.Errorf("%s %q does not take the fast path", c.typ, c.value)
		}
	}
}

// FuzzFastValue holds fastValue to parseLine on random owners and values.
func FuzzFastValue(f *testing.F) {
	f.Add("www", uint32(300), uint8(0), "192.0.2.1")
	f.Add("www", uint32(300), uint8(1), "2001:db8::1")
	f.Add("x", uint32(0), uint8(2), "host-1")
	f.Add("_a.b", uint32(1), uint8(3), "ns.example.net.")
	f.Add("c", uint32(86400), uint8(4), "1.2.0.192.in-addr.arpa.")
	f.Add("mx", uint32(300), uint8(5), "10 mail")
	f.Add("_sip._tcp", uint32(300), uint8(6), "0 5 5060 sip.example.net.")
	f.Add("t", uint32(300), uint8(7), `"v=spf1 -all" "x"`)
	types := []string{"A", "AAAA", "CNAME", "NS", "PTR", "MX", "SRV", "TXT"}
	f.Fuzz(func(t *testing.T, label string, ttl uint32, typ uint8, value string) {
		owner := dns.Fqdn(label + ".example.com")
		fastCase(t, owner, ttl&0x7fffffff, types[int(typ)%len(types)], value, "example.com.")
	})
}

// TestSortCanonicalStable holds sortCanonical (owner ranks, unstable sort
// with the input index last) to a plain stable sort with the comparator.
func TestSortCanonicalStable(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	labels := []string{"a", "A", "b", "B", "_x", "z", `\200`, `\201`, `\.`, "aa", "0"}
	var es []*entry
	for i := range 3000 {
		n := r.IntN(3) + 1
		var name strings.Builder
		for range n {
			name.WriteString(labels[r.IntN(len(labels))] + ".")
		}
		name.WriteString("example.com.")
		var rr dns.RR
		if r.IntN(2) == 0 {
			rr = &dns.TXT{Hdr: dns.RR_Header{Name: name.String(), Rrtype: dns.TypeTXT, Class: dns.ClassINET}, Txt: []string{labels[r.IntN(3)]}}
		} else {
			rr = &dns.A{Hdr: dns.RR_Header{Name: name.String(), Rrtype: dns.TypeA, Class: dns.ClassINET}, A: net.IPv4(10, 0, 0, byte(r.IntN(3)))}
		}
		rr.Header().Ttl = uint32(i) // tells equal RRs apart
		e := &entry{rr: rr}
		e.fill()
		es = append(es, e)
	}
	want := slices.Clone(es)
	slices.SortStableFunc(want, func(a, b *entry) int {
		if c := compareNameKeys(newNameKey(a.rr.Header().Name), newNameKey(b.rr.Header().Name)); c != 0 {
			return c
		}
		if c := cmp.Compare(a.rr.Header().Rrtype, b.rr.Header().Rrtype); c != 0 {
			return c
		}
		return strings.Compare(a.rdata, b.rdata)
	})
	_, lines := sortCanonical(es)
	for i := range want {
		if lines[i] != want[i].text {
			t.Fatalf("line %d: got %q, want %q", i, lines[i], want[i].text)
		}
	}
}

// TestPlainNames holds the plain-name shortcuts of canonical and inZone to
// the general path.
func TestPlainNames(t *testing.T) {
	names := []string{"example.com.", "Example.COM.", "www.example.com.", "WWW.Example.Com.", "xexample.com.", "a.b.example.com.", "com.", "_sip._tcp.example.com.",
		"a-b.example.com.", strings.Repeat("a", 63) + ".example.com.", strings.Repeat("abcdefghi.", 24) + "com.", "1.2.3.4.in-addr.arpa.", "in-addr.arpa.", "example.com.example.com."}
	for _, n := range names {
		if !plainName(n) {
			t.Fatalf("%q is not plain", n)
		}
		s, _, err := func() (string, int, error) {
			buf := make([]byte, 256)
			off, err := dns.PackDomainName(n, buf, 0, nil, false)
			if err != nil {
				return "", 0, err
			}
			return dns.UnpackDomainName(buf[:off], 0)
		}()
		if err != nil {
			t.Fatal(err)
		}
		got, err := canonical(n)
		if err != nil || got != dns.CanonicalName(s) {
			t.Errorf("canonical(%q) = %q, %v; want %q", n, got, err, dns.CanonicalName(s))
		}
		for _, o := range names {
			n, o := asciiLower(n), asciiLower(o)
			if got, want := inZone(n, o), dns.IsSubDomain(o, n); got != want {
				t.Errorf("inZone(%q, %q) = %v, want %v", n, o, got, want)
			}
		}
	}
}
