package corpus

import (
	"os"
	"path/filepath"
	"testing"

	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
)

// TestFalseRefusals: forms BIND loads that fn-validate refused (found by
// the corpus, docs/validation.md "The corpus") are accepted, and the
// rendered pod's named.conf and zones load in named-checkconf -z, BIND 9.18
// and 9.20. Each case is a package under testdata/accept.
func TestFalseRefusals(t *testing.T) {
	vs := versions(t)
	cases := map[string]string{
		"rfc2317":                "a zone name with '/', RFC 2317's own classless reverse delegation (0/26.2.0.192.in-addr.arpa)",
		"check-names-exceptions": "BIND's check-names exceptions: A/AAAA at gc._msdcs (Active Directory), A under _spf and _spf_verify (RFC 7208 macros)",
		"dns-sd-reverse":         "PTR targets at DNS-SD browsing names in a reverse zone are not host names, and BIND does not check them",
		"cname-and-key":          "a KEY beside a CNAME (BIND 9.18 and 9.20 take KEY, SIG, NSEC and RRSIG there)",
		"loc-short":              "LOC without minutes or seconds (RFC 1876; miekg/dns wants the seconds when the minutes are given)",
		"svcb-and-generic":       "SVCB keyNNNNN and mandatory keys that are set; an NSAP in the generic form TYPE22 \\# the refusal of NSAP names",
	}
	for name, reason := range cases {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("testdata", "accept", name+".yaml"))
			if err != nil {
				t.Fatal(err)
			}
			items, err := testutil.DecodeItems(name+".yaml", data)
			if err != nil {
				t.Fatal(err)
			}
			objs, rs := pipelineRun(items)
			if rs.HasErrors() {
				t.Fatalf("%s: fn-validate refuses it:\n%s", reason, errorsOf(rs))
			}
			// The whole pod, as named starts it, on every release.
			for _, c := range testutil.Clusters(t, objs) {
				root := t.TempDir()
				testutil.LayPod(t, root, c)
				for _, v := range vs {
					if out, ok := run(t, v.cmd(t, "named-checkconf", "-t", root, "-z", layout.ConfigFile(layout.NamedConfPrimary))); !ok {
						t.Errorf("%s: BIND %s refuses the render: %s", reason, v.name, out)
					}
				}
			}
		})
	}
}
