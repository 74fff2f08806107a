package zonefile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// txts are n TXT values of one string of size octets each (size >= 5),
// all different, and, when last > 0, one more of last octets.
func txts(n, size, last int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf(`"%05d%s"`, i, strings.Repeat("a", size-5)))
	}
	if last > 0 {
		out = append(out, `"`+strings.Repeat("z", last)+`"`)
	}
	return out
}

// TestWireLimits: BIND's wire-size limits are located errors here, each
// where named-checkzone 9.18 and 9.20 refuse the same zone with the
// message quoted (bindSays); the cases just inside each limit load in both
// and are accepted. On the old main the 256-octet CNAME target and the
// RRsets over the limit rendered, and every pod failed the zone.
func TestWireLimits(t *testing.T) {
	l63 := strings.Repeat("a", 63)
	long := l63 + "." + l63 + "." + l63 + "." + strings.Repeat("b", 51) // 257 octets with example.com.
	fits := l63 + "." + l63 + "." + l63 + "." + strings.Repeat("b", 49) // 255
	cases := map[string]struct {
		reason     string
		name, typ  string
		values     []string
		bindSays   string // "" when BIND loads it
		field, msg string
	}{
		"RRsetOver":      {"254 TXT records of 256 octets: 65532 octets of RDATA and lengths", "x", "TXT", txts(254, 255, 0), "ran out of space", "spec.records[0].values", "BIND holds at most 65512"},
		"RRsetEdgeOver":  {"8186 records of 6 octets and one of 23: one octet over", "x", "TXT", txts(8186, 5, 22), "ran out of space", "spec.records[0].values", "is 65513 octets"},
		"RRsetEdge":      {"8186 records of 6 octets and one of 22: exactly at the limit", "x", "TXT", txts(8186, 5, 21), "", "", ""},
		"RRset253":       {"253 TXT records of 256 octets", "x", "TXT", txts(253, 255, 0), "", "", ""},
		"OwnerLabel64":   {"an owner label of 64 octets", strings.Repeat("a", 64), "A", []string{"192.0.2.1"}, "label too long", "spec.records[0].name", "label holds at most 63"},
		"TargetLabel64":  {"a CNAME target label of 64 octets", "x", "CNAME", []string{strings.Repeat("a", 64)}, "label too long", "spec.records[0].values[0]", "label holds at most 63"},
		"OwnerName257":   {"a relative owner of 257 octets after qualification", long, "A", []string{"192.0.2.1"}, "ran out of space", "spec.records[0].name", "a name holds at most 255"},
		"TargetName257":  {"a relative CNAME target of 257 octets after qualification: miekg/dns took it", "x", "CNAME", []string{long}, "ran out of space", "spec.records[0].values[0]", "a name holds at most 255"},
		"TargetName255":  {"a relative CNAME target of exactly 255 octets", "x", "CNAME", []string{fits}, "", "", ""},
		"GenericName257": {"a DSYNC target (the RFC 3597 codec) of 257 octets", "x", "DSYNC", []string{"CDS NOTIFY 5359 " + long}, "ran out of space", "spec.records[0].values[0]", "a name holds at most 255"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var raw strings.Builder
			raw.WriteString(genericHead)
			for _, v := range tc.values {
				fmt.Fprintf(&raw, "%s %s %s\n", tc.name, tc.typ, v)
			}
			path := filepath.Join(t.TempDir(), "db.zone")
			if err := os.WriteFile(path, []byte(raw.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, r := range bindtools.Releases {
				bindtools.RequireRelease(t, r)
				out, err := r.Offline(t, "named-checkzone", "example.com", path).CombinedOutput()
				switch {
				case tc.bindSays == "" && err != nil:
					t.Fatalf("%s: %s refuses the zone: %v\n%s", tc.reason, r, err, out)
				case tc.bindSays != "" && (err == nil || !strings.Contains(string(out), tc.bindSays)):
					t.Fatalf("%s: %s should refuse the zone saying %q: %v\n%s", tc.reason, r, tc.bindSays, err, out)
				}
			}
			z, rs := Build(testZone("example.com.", []string{"ns.example.net."}, nil, inline(0, tc.name, tc.typ, tc.values...)))
			if tc.bindSays == "" {
				if rs.HasErrors() {
					t.Fatalf("%s: BIND loads it, but Build refuses: %v", tc.reason, rs)
				}
				checkZone(t, "example.com.", z.Text(1))
				return
			}
			if !rs.HasErrors() {
				t.Fatalf("%s: BIND refuses it (%q), but Build accepts it", tc.reason, tc.bindSays)
			}
			if rs[0].Field != tc.field || !strings.Contains(rs[0].Message, tc.msg) || !strings.Contains(rs[0].Message, tc.bindSays) {
				t.Errorf("%s: got %s: %s; want field %s, a message with %q and BIND's %q", tc.reason, rs[0].Field, rs[0].Message, tc.field, tc.msg, tc.bindSays)
			}
		})
	}
}
