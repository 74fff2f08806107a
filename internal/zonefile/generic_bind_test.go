package zonefile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// genericHead is the zone every generic-form case is loaded in, by BIND
// as the user wrote it and as rendered.
const genericHead = "$ORIGIN example.com.\n$TTL 3600\n@ SOA ns.example.net. hostmaster.example.com. 1 3600 600 86400 300\n@ NS ns.example.net.\n"

// bindReads is what named-checkzone -D prints for the records at
// x.example.com. of a zone file, each line's fields joined by one space;
// err when the release refuses the zone.
func bindReads(t *testing.T, r bindtools.Release, text string) ([]string, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "db.zone")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := r.Offline(t, "named-checkzone", "-D", "-o", "-", "-i", "local", "-k", "fail", "example.com", path).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%v: %s", err, out)
	}
	var got []string
	for _, l := range strings.Split(string(out), "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == "x.example.com." {
			got = append(got, strings.Join(f, " "))
		}
	}
	return got, nil
}

// renderOne renders the RRset x <typ> values, or returns the first error.
func renderOne(typ string, values ...string) (string, error) {
	z, rs := Build(testZone("example.com.", []string{"ns.example.net."}, nil, record("r", "x", typ, values...)))
	if rs.HasErrors() {
		return "", fmt.Errorf("%s", rs[0].Message)
	}
	return string(z.Text(1)), nil
}

// TestGenericAgainstBIND renders each type and parameter BIND reads and
// miekg/dns cannot parse (RFC 3597 form for types, generic keys for SVCB)
// and holds what BIND 9.18 and 9.20 read from the rendered zone
// (named-checkzone -D) equal to what they read from the value as the user
// wrote it. Before the codec each of these was refused ("unknown record
// type", "cannot parse").
func TestGenericAgainstBIND(t *testing.T) {
	cases := map[string]struct {
		reason string
		typ    string
		values []string
	}{
		"DSYNC":           {"RFC 9859 notify endpoints; mnemonic and number schemes, relative target", "DSYNC", []string{"CDS NOTIFY 5359 cds-scanner.example.net.", "CSYNC 1 5360 scanner", "TYPE62 NOTIFY 53 s.example.net."}},
		"WALLET":          {"TXT-shaped; quoted, unquoted and escaped strings", "WALLET", []string{`"BTC" "bc1qxyz"`, `"a\"b" c`}},
		"DOA":             {"numbers, a media-type string and base64 data, or - for none", "DOA", []string{`0 1 2 "" aHR0cHM6Ly93d3cuaXNjLm9yZy8=`, `4294967295 4294967295 255 "image/gif" -`}},
		"NSAP":            {"0x hex with dots anywhere", "NSAP", []string{"0x47.0005.80.005a00.0000.0001.e133.ffffff000162.00", "0X0a0B"}},
		"A6":              {"prefix 0 (no name), 128 (no suffix), a masked middle prefix", "A6", []string{"0 2001:db8::1", "64 ::1:2:3:4 prefix.example.net.", "128 prefix.example.net.", "65 ffff:ffff:ffff:ffff:ffff:: p"}},
		"WKS":             {"protocol by name and number, ports as numbers, no ports", "WKS", []string{"192.0.2.1 tcp 25 80 443", "192.0.2.2 17 53", "192.0.2.3 6"}},
		"ATMA":            {"AESA hex and E.164", "ATMA", []string{"39246f00e7c9e0b5f9c0e7c9e000000000000000ed", "+358.400.1234567"}},
		"SVCB key7":       {"the generic form of a registered key (dohpath), which miekg/dns refuses", "SVCB", []string{`1 . key7="/dns-query{?dns}"`}},
		"HTTPS key8":      {"key 8 (ohttp), which miekg/dns would print by a name BIND does not know", "HTTPS", []string{`1 svc.example.net. alpn=h2,h3 key8`}},
		"SVCB key1 bytes": {"a registered key as generic wire octets, with escapes", "SVCB", []string{`2 . key1="\002h2\005h3-29" key65000=abc`}},
		"TYPE65432":       {"an unknown type in the RFC 3597 form, as before", "TYPE65432", []string{`\# 4 0a000001`, `\# 0`}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rendered, err := renderOne(tc.typ, tc.values...)
			if err != nil {
				t.Fatalf("%s: cannot render: %v", tc.reason, err)
			}
			// plan and the agent read rendered zones with miekg/dns.
			if rrs, err := parseAll(rendered, "example.com."); err != nil || len(rrs) != 2+len(tc.values) {
				t.Errorf("%s: miekg/dns reads %d records of the rendered zone, want %d: %v", tc.reason, len(rrs), 2+len(tc.values), err)
			}
			var user strings.Builder
			user.WriteString(genericHead)
			for _, v := range tc.values {
				fmt.Fprintf(&user, "x %s %s\n", tc.typ, v)
			}
			for _, r := range bindtools.Releases {
				bindtools.RequireRelease(t, r)
				want, err := bindReads(t, r, user.String())
				if err != nil {
					t.Fatalf("%s refuses the value as written: %v", r, err)
				}
				got, err := bindReads(t, r, rendered)
				if err != nil {
					t.Fatalf("%s refuses the rendered zone: %v\n%s", r, err, rendered)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s: %s: %s reads the rendered zone differently from the value as written: -written +rendered\n%s\n%s", name, tc.reason, r, diff, rendered)
				}
			}
		})
	}
}

// FuzzGeneric fuzzes the generic path against BIND's reading: a value of
// a type this renderer writes in the RFC 3597 form (the types of
// bindCodecs, SVCB and HTTPS, TYPEnnn) that Build accepts must load in
// BIND 9.18 and 9.20 as rendered, BIND must read the value as written too
// (the codec is no looser than BIND's grammar), and where the value was
// rendered generic both readings must be equal. Seeds live in
// testdata/fuzz/FuzzGeneric; `go test -fuzz FuzzGeneric` runs it further.
func FuzzGeneric(f *testing.F) {
	f.Fuzz(func(t *testing.T, typ, value string) {
		n, _, err := rrType(typ)
		_, known := dns.TypeToRR[n]
		if err != nil || !(bindCodecs[n] != nil || n == dns.TypeSVCB || n == dns.TypeHTTPS || !known) {
			return
		}
		rendered, err := renderOne(typ, value)
		if err != nil {
			return
		}
		for _, r := range bindtools.Releases {
			bindtools.RequireRelease(t, r)
			got, err := bindReads(t, r, rendered)
			if err != nil {
				t.Fatalf("%s %q is accepted, but %s refuses the rendered zone: %v\n%s", typ, value, r, err, rendered)
			}
			want, err := bindReads(t, r, genericHead+"x "+typ+" "+value+"\n")
			if err != nil {
				t.Fatalf("%s %q is accepted, but %s refuses it as written: %v", typ, value, r, err)
			}
			if strings.Contains(rendered, `\# `) {
				if diff := cmp.Diff(want, got); diff != "" {
					t.Fatalf("%s %q: %s reads the rendered zone differently: -written +rendered\n%s", typ, value, r, diff)
				}
			}
		}
	})
}
