package importer

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"git.unkin.net/unkin/bind-fn/internal/plan"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// TestParseZoneAgainstBIND: the miekg/dns path (ParseZone, used when BIND's
// tools are absent) reads files without $TTL as named-checkzone -D does;
// where it cannot ($GENERATE without a TTL), the import flags the line.
func TestParseZoneAgainstBIND(t *testing.T) {
	named := NamedZoneReader(bindtools.BINDPath(t, "named-checkzone"))
	const head = "@ IN SOA ns1 host 5 3600 600 86400 120\n@ NS ns1\nns1 A 192.0.2.1\n"
	cases := map[string]struct {
		reason  string
		text    string
		differs bool
	}{
		"NoTTLSOAFirst":    {"No $TTL, an SOA without a TTL first: BIND gives every record without a TTL the SOA minimum, even after an explicit TTL.", head + "www 300 A 192.0.2.2\nmail A 192.0.2.3\n", false},
		"NoTTLSOAExplicit": {"No $TTL, an SOA with a TTL: RFC 1035, the last explicit TTL.", "@ 7200 IN SOA ns1 host 5 3600 600 86400 120\n@ NS ns1\nns1 A 192.0.2.1\nwww 300 A 192.0.2.2\nmail A 192.0.2.3\n", false},
		"NoTTLRecordFirst": {"No $TTL, a record with a TTL before the SOA: it holds for the SOA too.", "www 300 A 192.0.2.2\n" + head, false},
		"WithTTL":          {"$TTL: both read it.", "$TTL 900\n" + head + "www 60 A 192.0.2.2\nmail A 192.0.2.3\n", false},
		"Generate":         {"$GENERATE without a TTL: miekg/dns gives 3600, BIND $TTL; the import must flag it.", "$TTL 900\n" + head + "$GENERATE 1-2 h$ A 10.0.0.$\n", true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, "ex.db")
			if err := os.WriteFile(file, []byte(tc.text), 0o644); err != nil {
				t.Fatal(err)
			}
			bind, err := named("ex", file, "", dir)
			if err != nil {
				t.Fatal(err)
			}
			ours, err := ParseZone("ex", file, []byte(tc.text), dir)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := plan.ZoneDataOf(bind)
			got, _ := plan.ZoneDataOf(ours)
			d := cmp.Diff(want, got)
			flagged := len(bindOnly(file, []byte(tc.text))) > 0
			switch {
			case !tc.differs && d != "":
				t.Errorf("%s\nParseZone reads otherwise than BIND (-bind +ours):\n%s", tc.reason, d)
			case tc.differs && !flagged:
				t.Errorf("%s\nthe difference is not flagged", tc.reason)
			case tc.differs && d == "":
				t.Errorf("%s\nParseZone now reads it as BIND does: drop the case from bindOnly", tc.reason)
			}
		})
	}
}
