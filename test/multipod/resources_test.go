package multipod

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"git.unkin.net/unkin/bind-fn/internal/objects"
	"git.unkin.net/unkin/bind-fn/test/gen"
)

// rssBytes is a process's resident set (VmRSS of /proc/<pid>/status).
func rssBytes(t testing.TB, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			f := strings.Fields(rest) // "12345 kB"
			n, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil || len(f) != 2 || f[1] != "kB" {
				t.Fatalf("pid %d: VmRSS line %q", pid, l)
			}
			return n << 10
		}
	}
	t.Fatalf("pid %d has no VmRSS", pid)
	return 0
}

// namedMemoryRequest is the rendered named container's memory request.
func namedMemoryRequest(t testing.TB, r *Rendered, cluster string) int64 {
	t.Helper()
	for _, ctr := range r.Clusters[cluster].StatefulSet.Spec.Template.Spec.Containers {
		if ctr.Name == objects.ContainerNamed {
			q, ok := ctr.Resources.Requests[corev1.ResourceMemory]
			if !ok {
				t.Fatalf("cluster %s: the named container has no memory request", cluster)
			}
			return q.Value()
		}
	}
	t.Fatalf("cluster %s has no named container", cluster)
	return 0
}

// bigZoneInputs is one static zone of 50,000 records (inline BindZone
// records), as test/gen writes them.
func bigZoneInputs(t testing.TB) Inputs {
	t.Helper()
	items, err := gen.Generate(gen.Options{Zones: 1, Records: 50000, Seed: 7, RecordObjects: -1, Cluster: "big"}).Items()
	if err != nil {
		t.Fatal(err)
	}
	return Inputs(items)
}

// TestMemoryRequestCoversRSS: the memory request bind-fn renders when
// spec.resources is unset (model.MemoryRequest: a base, a cost per record
// and a cache allowance per recursive view) covers what named and the
// agent of every pod hold once all of it is ready (resident set, from
// /proc), for examples/authoritative, examples/resolver (neither sets
// resources) and a 50,000-record zone.
// BENCHMARKS.md ("Memory of named and the agent") records the sizes this
// logs.
func TestMemoryRequestCoversRSS(t *testing.T) {
	agentBin := requirements(t)
	if !ownLab(t) {
		return
	}
	lab := newLab(t, filepath.Dir(agentBin))
	cases := []struct {
		name, cluster string
		in            Inputs
		plan          podPlan
	}{
		{"example authoritative", "auth", authInputs(t),
			podPlan{IP: authIP, PrimarySvc: authPrimarySvc, Extra: map[int][]string{1: {authServeVIP}}}},
		{"example resolver", "resolver", resolverInputs(t),
			podPlan{IP: func(i int) string { return fmt.Sprintf("198.18.2.%d", 10+i) }, PrimarySvc: resPrimarySvc}},
		{"50,000 records", "big", bigZoneInputs(t),
			podPlan{IP: func(i int) string { return fmt.Sprintf("198.18.30.%d", 10+i) }, PrimarySvc: "198.18.1.60"}},
	}
	for _, tc := range cases {
		r := renderInputs(t, tc.in, nil)
		request := namedMemoryRequest(t, r, tc.cluster)
		c := lab.startCluster(r, tc.cluster, tc.plan)
		c.waitReady(hang)
		for _, p := range c.Pods {
			agent, named := p.PIDs()
			a, n := rssBytes(t, agent), rssBytes(t, named)
			t.Logf("%s: %s: named %.1f MiB + agent %.1f MiB = %.1f MiB resident; memory request %d MiB",
				tc.name, p.Name, float64(n)/(1<<20), float64(a)/(1<<20), float64(a+n)/(1<<20), request>>20)
			if a+n > request {
				t.Errorf("%s: %s holds %.1f MiB (named %.1f, agent %.1f), more than the rendered memory request %d MiB: raise model.BaseMemory or model.RecordMemory",
					tc.name, p.Name, float64(a+n)/(1<<20), float64(n)/(1<<20), float64(a)/(1<<20), request>>20)
			}
		}
		c.stop()
	}
}
