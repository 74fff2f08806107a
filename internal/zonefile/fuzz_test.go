package zonefile

import (
	"testing"
)

// FuzzBuild feeds random owners, types and values through Build: it must
// never panic, and whatever it accepts must print as a zone that parses
// back to exactly the records it built (nothing smuggled in, nothing lost).
// Seeds live in testdata/fuzz/FuzzBuild.
func FuzzBuild(f *testing.F) {
	f.Fuzz(func(t *testing.T, name, typ, value, other string) {
		z := testZone("example.com.", []string{"ns.example.net."}, nil,
			inline(0, name, typ, value, other),
			record("fuzz", "fuzz", typ, value))
		got, rs := Build(z)
		if rs.HasErrors() {
			if got != nil {
				t.Fatalf("Build returned a zone with errors %v", rs)
			}
			for _, r := range rs {
				if r.Field == "" || r.Message == "" {
					t.Fatalf("unlocated result %v", r)
				}
			}
			return
		}
		roundTrip(t, got, 1)
	})
}
