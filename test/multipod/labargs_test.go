package multipod

import (
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// labArgs are the test binary's arguments inside the lab of the top-level
// test name: the same flags, with -test.run narrowed to that test (and the
// subtest part of the original pattern). Every top-level test builds its
// own lab with fixed names (the bridge, the namespaces), so a lab must run
// only the test that made it.
func labArgs(name string, args []string) []string {
	var out []string
	pat := ""
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case (a == "-test.run" || a == "-run") && i+1 < len(args):
			pat = args[i+1]
			i++
			continue
		case strings.HasPrefix(a, "-test.run=") || strings.HasPrefix(a, "-run="):
			_, pat, _ = strings.Cut(a, "=")
			continue
		}
		out = append(out, a)
	}
	run := "^" + regexp.QuoteMeta(name) + "$"
	if _, sub, ok := strings.Cut(pat, "/"); ok {
		run += "/" + sub
	}
	return append(out, "-test.run="+run)
}

func TestLabArgs(t *testing.T) {
	cases := map[string]struct {
		reason string
		args   []string
		want   []string
	}{
		"no run": {
			reason: "go test ./test/multipod runs every test: each lab runs its own",
			args:   []string{"-test.v=true", "-test.timeout=10m0s"},
			want:   []string{"-test.v=true", "-test.timeout=10m0s", "-test.run=^TestDNSSEC$"},
		},
		"subtest": {
			reason: "a subtest pattern carries over",
			args:   []string{"-test.run", "TestDNSSEC/primary", "-test.v=true"},
			want:   []string{"-test.v=true", "-test.run=^TestDNSSEC$/primary"},
		},
		"several tests": {
			reason: "a pattern matching several top-level tests is narrowed",
			args:   []string{"-test.run=TestLab|TestDNSSEC"},
			want:   []string{"-test.run=^TestDNSSEC$"},
		},
	}
	for name, tc := range cases {
		if diff := cmp.Diff(tc.want, labArgs("TestDNSSEC", tc.args)); diff != "" {
			t.Errorf("%s: %s (-want +got):\n%s", name, tc.reason, diff)
		}
	}
}
