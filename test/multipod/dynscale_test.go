package multipod

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/test/gen"
)

// The dynamic-scale cluster: one dynamic zone whose records are all
// DNSRecords, far more than one ConfigMap carries.
const (
	dynScaleCluster = "dynbig"
	dynScaleZone    = "zone0.example.com"
	dynScaleRecords = 50000
	dynScaleAdded   = 1000
	dynScaleSvc     = "198.18.1.40"
)

func dynScaleIP(i int) string { return fmt.Sprintf("198.18.11.%d", 10+i) }

func dynScaleInputs(t testing.TB) Inputs {
	t.Helper()
	items, err := gen.Generate(gen.Options{Zones: 1, Records: dynScaleRecords, Seed: 11, RecordObjects: 1, Cluster: dynScaleCluster}).Items()
	if err != nil {
		t.Fatal(err)
	}
	return Inputs(items).AddFixture(t, "dynscale-key.yaml", map[string]string{"CLUSTER": dynScaleCluster}).Edit(t, "BindZone", "zone0-example-com", func(obj map[string]any) {
		spec(obj)["dynamicUpdate"] = true
		spec(obj)["updateKeyRef"] = "ddns"
	})
}

// scenarioDynamicScale (BENCHMARKS.md, "50,000 DNSRecords on a real
// three-pod cluster (the lab)"): 50,000 DNSRecords in one dynamic zone
// render (its file split over zones ConfigMaps, agent.json without the
// records), the primary seeds the zone whole and its agent finds it
// converged without sending an UPDATE (every generated record type compares
// equal in wire form), and 1,000 DNSRecords added later reach every pod in
// a few UPDATE messages. Times are logged, not asserted.
func scenarioDynamicScale(t *testing.T, lab *Lab) {
	t0 := time.Now()
	in := dynScaleInputs(t)
	r := renderInputs(t, in, nil)
	rc := r.Clusters[dynScaleCluster]
	shards := 0
	for name, cm := range rc.ConfigMaps {
		size := 0
		for k, v := range cm.Data {
			size += len(k) + len(v)
		}
		if size >= 1<<20 {
			t.Errorf("ConfigMap %s holds %d bytes: Kubernetes refuses objects of 1 MiB", name, size)
		}
		if strings.HasPrefix(name, dynScaleCluster+"-zones-") {
			shards++
		}
	}
	agentJSON := len(rc.ConfigMaps[layout.ConfigMapName(dynScaleCluster)].Data[layout.AgentConfig])
	t.Logf("%d DNSRecords rendered in %v over %d zones ConfigMaps; agent.json %d bytes", dynScaleRecords, time.Since(t0).Round(time.Millisecond), shards, agentJSON)
	if shards < 2 {
		t.Errorf("the dynamic zone rendered into %d zones ConfigMaps, want it split", shards)
	}

	t1 := time.Now()
	c := lab.startCluster(r, dynScaleCluster, podPlan{IP: dynScaleIP, PrimarySvc: dynScaleSvc, NetnsPrefix: "dyn-"})
	defer c.stop()
	c.waitReady(120 * time.Second)
	t.Logf("pods ready %v after start", time.Since(t1).Round(time.Millisecond))

	primary := c.Pods[0]
	var conv string
	if err := eventually(120*time.Second, 200*time.Millisecond, func() error {
		st, err := primary.Status()
		if err != nil {
			return err
		}
		lc := st.LastConvergence
		if lc == nil || lc.Error != "" || lc.Unchanged == 0 {
			return fmt.Errorf("last convergence %+v", lc)
		}
		conv = fmt.Sprintf("%+v", *lc)
		if lc.Updated != 0 {
			return fmt.Errorf("the first pass over the seeded zone updated %d RRsets, want none (the seed holds them all): %s", lc.Updated, conv)
		}
		return nil
	}); err != nil {
		t.Fatalf("%s: %v", primary.Name, err)
	}
	t.Logf("%s: first convergence %s, %v after start", primary.Name, conv, time.Since(t1).Round(time.Millisecond))

	var add strings.Builder
	aRecord := fixtureTemplate(t, "a-record.yaml")
	for i := 0; i < dynScaleAdded; i++ {
		add.WriteString("---\n" + aRecord(map[string]string{
			"NAME": fmt.Sprintf("added-%d", i), "ZONE_REF": "zone0-example-com", "ADDRESS": fmt.Sprintf("198.51.%d.%d", i/250, i%250+1)}))
	}
	r2 := renderInputs(t, in.Add(t, add.String()), r)
	t2 := time.Now()
	c.swap(r2)
	var wg sync.WaitGroup
	errs := make([]error, len(c.Pods))
	took := make([]time.Duration, len(c.Pods))
	for i, p := range c.Pods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = eventually(120*time.Second, 100*time.Millisecond, func() error {
				for _, n := range []int{0, dynScaleAdded / 2, dynScaleAdded - 1} {
					want := fmt.Sprintf("198.51.%d.%d", n/250, n%250+1)
					if err := expect(p.Net.IP, fmt.Sprintf("added-%d.%s", n, dynScaleZone), dns.TypeA, q{tcp: true}, dns.RcodeSuccess, []string{want}); err != nil {
						return err
					}
				}
				return nil
			})
			took[i] = time.Since(t2)
		}()
	}
	wg.Wait()
	for i, p := range c.Pods {
		if errs[i] != nil {
			t.Errorf("%s: the added DNSRecords: %v", p.Name, errs[i])
			continue
		}
		t.Logf("%s: %d added DNSRecords served %v after the swap", p.Name, dynScaleAdded, took[i].Round(time.Millisecond))
	}
	// The pass that sent them: a few UPDATE messages, not one per record.
	if err := eventually(hang, 100*time.Millisecond, func() error {
		st, err := primary.Status()
		if err != nil {
			return err
		}
		lc := st.LastConvergence
		if lc == nil || lc.Updated != dynScaleAdded {
			return fmt.Errorf("last convergence %+v, want %d RRsets updated", lc, dynScaleAdded)
		}
		conv = fmt.Sprintf("%+v", *lc)
		if lc.Error != "" || lc.Messages > 10 {
			return fmt.Errorf("the pass sent %d UPDATE messages for %d RRsets (want a few), error %q", lc.Messages, lc.Updated, lc.Error)
		}
		return nil
	}); err != nil {
		t.Errorf("%s: %v", primary.Name, err)
	}
	t.Logf("%s: the pass after the swap %s", primary.Name, conv)
}
