package corpus

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var confDir = filepath.Join("testdata", "isc", Commit, "checkconf")

// TestPolicyCorpus: for every checkconf file of BIND's system test that
// holds a dnssec-policy, BIND's verdict on its dnssec-policy statements
// (each used by one signed zone, as bind-fn renders it) equals
// fn-validate's verdict on the converted BindDNSSECPolicies, on 9.18 and
// 9.20, or the difference is in docs/validation.md's table (knownDiffs). A policy statement the API
// has no field for is a loss: the file is counted apart (its package is not
// the same policy) and its losses logged.
func TestPolicyCorpus(t *testing.T) {
	vs := versions(t)
	files, err := filepath.Glob(filepath.Join(confDir, "*.conf"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no corpus checkconf files under %s: %v", confDir, err)
	}
	counts := map[string]map[string]int{}
	seen := map[string]bool{}
	for _, path := range files {
		file := filepath.Base(path)
		seen[file] = true
		t.Run(file, func(t *testing.T) {
			p, cerr := ConvertPolicies(file, func(name string) ([]byte, error) {
				return os.ReadFile(filepath.Join(confDir, name))
			})
			if cerr != nil && strings.Contains(cerr.Error(), "no dnssec-policy statement") {
				// The file only names BIND's built-in policies in zones.
				for _, v := range vs {
					if counts[v.name] == nil {
						counts[v.name] = map[string]int{}
					}
					counts[v.name]["built-in policies only, not compared"]++
				}
				return
			}
			known, listed := knownDiffs(t, "policy")[file]
			fnOK := false
			var errs string
			if cerr == nil {
				items, err := p.Items()
				if err != nil {
					t.Fatal(err)
				}
				_, rs := pipelineRun(items)
				fnOK, errs = !rs.HasErrors(), errorsOf(rs)
			}
			for _, v := range vs {
				c := counts[v.name]
				if c == nil {
					c = map[string]int{}
					counts[v.name] = c
				}
				var out string
				var bindOK bool
				if cerr != nil {
					// namedconf cannot read the file: BIND must refuse the original.
					out, bindOK = run(t, v.cmd(t, "named-checkconf", path))
				} else {
					conf := filepath.Join(t.TempDir(), "named.conf")
					if err := os.WriteFile(conf, []byte(p.Conf), 0o644); err != nil {
						t.Fatal(err)
					}
					out, bindOK = run(t, v.cmd(t, "named-checkconf", conf))
				}
				isListed := listed && contains(known.versions, v.name)
				switch {
				case cerr == nil && len(p.Losses) > 0:
					c["not comparable: statements the API has no field for"]++
					t.Logf("%s: losses %s; BIND loads: %v, fn-validate accepts: %v", v.name, strings.Join(p.Losses, "; "), bindOK, fnOK)
				case bindOK == fnOK && isListed:
					t.Errorf("%s: listed as a known difference (%s), but BIND and fn-validate agree: remove it", v.name, known.reason)
				case bindOK == fnOK:
					c["agree"]++
				case isListed:
					c["listed"]++
				case cerr != nil:
					t.Errorf("%s: BIND loads it, namedconf cannot read it: %v", v.name, cerr)
				case bindOK:
					t.Errorf("%s: BIND loads the policies, fn-validate refuses them:\n%sBIND: %s\n%s", v.name, errs, out, p.Conf)
				default:
					t.Errorf("%s: BIND refuses the policies, fn-validate accepts them\nBIND: %s\n%s", v.name, out, p.Conf)
				}
			}
		})
	}
	for f := range knownDiffs(t, "policy") {
		if !seen[f] {
			t.Errorf("docs/validation.md's table lists %s, which is not in the corpus", f)
		}
	}
	t.Logf("%d files; per version: %v", len(files), counts)
}
