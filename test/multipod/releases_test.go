package multipod

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
)

// TestMixedReleases: one rendered config serves a cluster whose pods run
// different BIND releases, as every cluster does half way through a rolling
// upgrade from 9.18 to 9.20 (a StatefulSet rolls the highest ordinal first,
// so the secondaries run 9.20 while the primary still runs 9.18), and after
// a roll back half way (the reverse). Each way: every pod runs the release
// it was given (named's start line), every zone is answered by every pod,
// TSIG-signed updates on the primary reach every secondary by NOTIFY and
// IXFR across releases, and no pod refuses a NOTIFY of the cluster.
func TestMixedReleases(t *testing.T) {
	agentBin := requirements(t)
	if !inLab() {
		enterLab(t)
		return
	}
	lab := newLab(t, filepath.Dir(agentBin))
	r := renderInputs(t, authInputs(t), nil)
	for i, tc := range []struct {
		name               string
		primary, secondary bindtools.Release
	}{
		{"9.20-primary-9.18-secondaries", bindtools.BIND920, bindtools.BIND918},
		{"9.18-primary-9.20-secondaries", bindtools.BIND918, bindtools.BIND920},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := lab.startCluster(r, "auth", podPlan{
				IP:          func(o int) string { return fmt.Sprintf("198.18.%d.%d", 20+i, 10+o) },
				PrimarySvc:  fmt.Sprintf("198.18.%d.5", 30+i),
				NetnsPrefix: fmt.Sprintf("mx%d-", i),
				Releases:    map[int]bindtools.Release{0: tc.primary, 1: tc.secondary, 2: tc.secondary},
			})
			defer c.stop()
			c.waitReady(3 * time.Minute)
			for _, p := range c.Pods {
				want := tc.secondary
				if p.Ordinal == 0 {
					want = tc.primary
				}
				if line := grep(p.Log.String(), "starting BIND "); !strings.Contains(line, "starting BIND "+want.Name+".") {
					t.Errorf("%s should run %s, its named says: %q", p.Name, want, line)
				}
			}
			scenarioStart(t, c)
			p := measure(t, "mixed "+tc.name, c.PrimarySvc, podIPs(c.Secondaries()), "apps.example.com", c.tsig(t, "externaldns-key-tsig"), 10, 2*time.Minute)
			t.Logf("%s", p.String())
			checkNoRefusedNotify(t, c.Pods)
		})
	}
}
