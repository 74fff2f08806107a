package multipod

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/test/gen"
)

// A hoster's cluster (issue 35): many small generated zones on the lab's
// three pods. BINDFN_MANYZONES sets how many (2,000 in make test; the
// 100,000 benchmark in BENCHMARKS.md), BINDFN_MANYZONES_CHANGES how many
// one-zone changes (each an add, a record change or a removal).
const (
	manyCluster = "many"
	manySvc     = "198.18.1.140"
)

func manyIP(i int) string { return fmt.Sprintf("198.18.40.%d", 10+i) }

func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}

// renderedZones are the zones a render's agent configuration lists for the
// primary (agent.json with each shard's agent-zones.json, as the agent
// reads it), sorted.
func renderedZones(t *testing.T, r *Rendered, cluster string) []string {
	t.Helper()
	var out []string
	for _, z := range testutil.AgentConfig(t, r.Clusters[cluster]).PrimaryZones {
		out = append(out, z.Zone)
	}
	sort.Strings(out)
	return out
}

// startSOALoop asks every pod for the SOA of each sample zone, over and
// over, and keeps every answer that is not an authoritative NOERROR with
// the SOA.
func startSOALoop(pods []*Pod, zones []string) *queryLoop {
	return startLoop(pods, 2*time.Millisecond, func(p *Pod, i int) string {
		z := zones[i%len(zones)]
		r, err := query(p.Net.IP, z, dns.TypeSOA, q{})
		switch {
		case err != nil:
			return z + " " + err.Error()
		case r.Rcode != dns.RcodeSuccess || !r.Authoritative || len(r.Answer) == 0:
			return fmt.Sprintf("%s rcode %s aa=%v answers=%d", z, dns.RcodeToString[r.Rcode], r.Authoritative, len(r.Answer))
		}
		return ""
	})
}

// namedRSS is named's resident memory on a pod, in MiB.
func namedRSS(t *testing.T, pid int) float64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("named's memory: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			return float64(kb) / 1024
		}
	}
	return 0
}

// TestManyZones (docs/kubelet-sync.md, "One zone, one command"; issue 35):
// a rendered cluster of many small zones on three pods. Each one-zone change
// (a zone added, a record of a zone changed, a zone removed), rendered and
// laid on every pod, is served (or gone) on every pod, and named is asked
// for that zone alone: addzone, reload or delzone, never a reconfig. A
// query loop on other zones runs throughout on every pod and must see no
// failure. The times (Ready of the primary, of the secondaries, of a new
// and of a restarted secondary; change → served on every pod; named's
// memory) are logged for BENCHMARKS.md, not asserted. With
// BINDFN_MANYZONES_BENCH=1 the same zones then run on hand-written
// named.conf files (manyReference) for the comparison.
func TestManyZones(t *testing.T) {
	agentBin := requirements(t)
	if !ownLab(t) {
		return
	}
	n := envInt(t, "BINDFN_MANYZONES", 2000)
	changes := envInt(t, "BINDFN_MANYZONES_CHANGES", 12)
	items, err := gen.Generate(gen.Options{Zones: n, Records: 5 * n, Seed: 35, RecordObjects: -1, Cluster: manyCluster}).Items()
	if err != nil {
		t.Fatal(err)
	}
	in := Inputs(items)
	lab := newLab(t, filepath.Dir(agentBin))
	t0 := time.Now()
	r := renderInputs(t, in, nil)
	t.Logf("%d zones rendered in %v", n, time.Since(t0).Round(time.Millisecond))
	zones := renderedZones(t, r, manyCluster)
	if len(zones) != n {
		t.Fatalf("the render lists %d zones, want %d", len(zones), n)
	}
	t0 = time.Now()
	c := lab.startCluster(r, manyCluster, podPlan{IP: manyIP, PrimarySvc: manySvc})
	readyTimes(t, c.Pods, t0, "started together")
	logRSS(t, c)

	var forward []string // zones with objects named after them (no reverse zone)
	for _, z := range zones {
		if strings.HasPrefix(z, "zone") {
			forward = append(forward, z)
		}
	}
	// The changes, under a query loop on zones no change touches.
	sample := zones[len(zones)/2:]
	sample = sample[:min(len(sample), 200)]
	loop := startSOALoop(c.Pods, sample)
	marks := logMarks(c.Pods)
	var res propagation
	res.label, res.secs = "one-zone change → served on every pod", len(c.Pods)-1
	var added []string
	for i := range changes {
		var check func(p *Pod) error
		switch i % 3 {
		case 0: // add a zone
			name := fmt.Sprintf("added%d.many.example", i)
			in = in.Add(t, fmt.Sprintf(`apiVersion: bind.unkin.net/v1alpha1
kind: BindZone
metadata: {name: added%d-many-example, namespace: dns}
spec:
  clusterRef: %s
  zoneName: %s
  nameservers: ["ns1.example.net.", "ns2.example.net."]
  soa: {email: "hostmaster@%s"}
  records:
    - {name: www, type: A, values: ["192.0.2.%d"]}
`, i, manyCluster, name, name, 1+i))
			added = append(added, fmt.Sprintf("added%d-many-example", i))
			check = func(p *Pod) error {
				return expect(p.Net.IP, "www."+name, dns.TypeA, q{}, dns.RcodeSuccess, []string{fmt.Sprintf("192.0.2.%d", 1+i)})
			}
		case 1: // change a record of an existing zone
			z := forward[i]
			obj := strings.ReplaceAll(strings.TrimSuffix(z, "."), ".", "-")
			ip := fmt.Sprintf("198.51.100.%d", 1+i)
			in = in.Edit(t, "BindZone", obj, func(o map[string]any) {
				recs, _ := spec(o)["records"].([]any)
				spec(o)["records"] = append(recs, map[string]any{"name": fmt.Sprintf("changed%d", i), "type": "A", "values": []any{ip}})
			})
			check = func(p *Pod) error {
				return expect(p.Net.IP, fmt.Sprintf("changed%d.%s", i, z), dns.TypeA, q{}, dns.RcodeSuccess, []string{ip})
			}
		case 2: // remove the zone added last
			obj := added[len(added)-1]
			added = added[:len(added)-1]
			name := strings.ReplaceAll(strings.TrimSuffix(obj, "-many-example"), "-", ".") + ".many.example"
			in = in.Remove(t, "BindZone", obj)
			check = func(p *Pod) error { return expect(p.Net.IP, name, dns.TypeSOA, q{}, dns.RcodeRefused, nil) }
		}
		next := renderInputs(t, in, r)
		start := time.Now()
		c.swap(next)
		for _, p := range c.Pods {
			if err := eventually(hang, 5*time.Millisecond, func() error { return check(p) }); err != nil {
				t.Fatalf("change %d: %s: %v", i, p.Name, err)
			}
		}
		res.times = append(res.times, time.Since(start))
		r = next
	}
	time.Sleep(time.Second) // the last change's aftermath, still under the loop
	total, failures := loop.finish()
	t.Logf("%s (%d zones, %s):\n%s", res.label, n, lab.release, res)
	t.Logf("query loop on %d other zones: %d queries, %d failed", len(sample), total, len(failures))
	if len(failures) > 0 {
		t.Errorf("%d of %d queries for zones no change touched failed:\n%s", len(failures), total, strings.Join(failures[:min(40, len(failures))], "\n"))
	}
	for i, p := range c.Pods {
		cmds := rndcCommands(p.Log.String()[marks[i]:])
		for _, cmd := range cmds {
			if cmd == "reconfig" || cmd == "reload" || strings.HasPrefix(cmd, "reconfig") {
				t.Errorf("%s: a one-zone change made named %q (every zone)", p.Name, cmd)
			}
		}
		t.Logf("%s: %s", p.Name, applyCounts(p.Log.String()[marks[i]:]))
	}

	if os.Getenv("BINDFN_MANYZONES_BENCH") == "1" {
		reconfigCost(t, c, sample)
	}

	// A restarted secondary (its volume kept), then a new one (empty volume).
	for _, tc := range []struct {
		pod   *Pod
		what  string
		empty bool
	}{{c.Pods[1], "restarted secondary (volume kept)", false}, {c.Pods[2], "new secondary (empty volume)", true}} {
		tc.pod.stop()
		if tc.empty {
			data := filepath.Join(tc.pod.Root, layout.DataDir)
			if err := os.RemoveAll(data); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(data, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		t0 := time.Now()
		tc.pod.start()
		readyTimes(t, []*Pod{tc.pod}, t0, tc.what)
	}
	logRSS(t, c)
	if os.Getenv("BINDFN_MANYZONES_BENCH") == "1" {
		c.stop()
		manyReference(t, lab, r)
	}
}

// readyTimes waits for each pod's /readyz at once and logs how long after
// t0 each became ready.
func readyTimes(t *testing.T, pods []*Pod, t0 time.Time, what string) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, len(pods))
	took := make([]time.Duration, len(pods))
	for i, p := range pods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = p.readyErr(30 * time.Minute)
			took[i] = time.Since(t0)
		}()
	}
	wg.Wait()
	for i, p := range pods {
		if errs[i] != nil {
			t.Fatalf("%s (%s) not ready: %v\n%s", p.Name, what, errs[i], p.Log.tail(40))
		}
		t.Logf("ready: %s (%s) after %v", p.Name, what, took[i].Round(100*time.Millisecond))
	}
}

func logRSS(t *testing.T, c *Cluster) {
	t.Helper()
	var parts []string
	for _, p := range c.Pods {
		_, pid := p.PIDs()
		parts = append(parts, fmt.Sprintf("%s %.0f MiB", p.Name, namedRSS(t, pid)))
	}
	t.Logf("named RSS: %s", strings.Join(parts, ", "))
}

// sweepUnloaded asks server for every zone's SOA (16 at a time) and returns
// how many gave no authoritative answer.
func sweepUnloaded(server string, zones []string) int {
	var missing atomic.Int64
	work := make(chan string)
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for z := range work {
				r, err := query(server, z, dns.TypeSOA, q{wait: time.Second})
				if err != nil || r.Rcode != dns.RcodeSuccess || !r.Authoritative {
					missing.Add(1)
				}
			}
		}()
	}
	for _, z := range zones {
		work <- z
	}
	close(work)
	wg.Wait()
	return int(missing.Load())
}

// loadedAfter sweeps server until every zone answers and returns the time
// since t0 (logged).
func loadedAfter(t *testing.T, server string, zones []string, t0 time.Time, what string) (time.Duration, error) {
	err := eventually(30*time.Minute, 200*time.Millisecond, func() error {
		if m := sweepUnloaded(server, zones); m > 0 {
			return fmt.Errorf("%s: %d of %d zones not loaded", what, m, len(zones))
		}
		return nil
	})
	d := time.Since(t0)
	if err == nil {
		t.Logf("reference loaded: %s after %v", what, d.Round(100*time.Millisecond))
	}
	return d, err
}

// manyReference runs, in the same lab and BIND, what an operator would
// write by hand for the same zones: a primary holding every zone file and
// two secondaries listing every zone, transfers and NOTIFYs keyed, transfer
// concurrency and NOTIFY rates tuned as bind-fn tunes them, no agent. It
// logs the same times and memory as the rendered cluster's.
func manyReference(t *testing.T, lab *Lab, r *Rendered) {
	t.Helper()
	files := map[string]string{} // zone → file text
	for _, cm := range r.Clusters[manyCluster].ConfigMaps {
		for k, v := range cm.Data {
			if !strings.HasPrefix(k, "db.") {
				continue
			}
			origin, _, _ := strings.Cut(strings.TrimPrefix(v, "$ORIGIN "), "\n")
			files[strings.TrimSuffix(origin, ".")] = v
		}
	}
	var zones []string
	for z := range files {
		zones = append(zones, z)
	}
	sort.Strings(zones)
	secret := "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI="
	ip := func(i int) string { return fmt.Sprintf("198.18.41.%d", 10+i) }
	opts := func(dir, addr string) string {
		return fmt.Sprintf(`key "ref-xfr" { algorithm hmac-sha256; secret %q; };
options {
	directory %q; pid-file "named.pid"; session-keyfile "session.key";
	listen-on { %s; }; listen-on-v6 { none; }; recursion no; allow-transfer { none; };
	notify-rate 1000; startup-notify-rate 1000; serial-query-rate 1000; notify-delay 0;
	transfers-in 100; transfers-per-ns 50; transfers-out 100;
};
`, secret, dir, addr)
	}
	type refPod struct {
		dir  string
		net  *Netns
		proc *Proc
		argv []string
	}
	named := mustLook(t, "named")
	pods := make([]*refPod, 3)
	for i := range pods {
		name := fmt.Sprintf("manyref-%d", i)
		dir := filepath.Join(lab.dir, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		b.WriteString(opts(dir, ip(i)))
		for _, z := range zones {
			if i == 0 {
				if err := os.WriteFile(filepath.Join(dir, "db."+z), []byte(files[z]), 0o644); err != nil {
					t.Fatal(err)
				}
				fmt.Fprintf(&b, "zone %q { type primary; file \"db.%s\"; allow-transfer { key \"ref-xfr\"; }; notify explicit; also-notify { %s key \"ref-xfr\"; %s key \"ref-xfr\"; }; };\n", z, z, ip(1), ip(2))
			} else {
				fmt.Fprintf(&b, "zone %q { type secondary; file \"db.%s\"; primaries { %s key \"ref-xfr\"; }; allow-notify { key \"ref-xfr\"; }; };\n", z, z, ip(0))
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "named.conf"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		pods[i] = &refPod{dir: dir, net: lab.addNetns(name, ip(i)), argv: []string{"/bin/sh", "-c", "exec " + named + " -g -c " + filepath.Join(dir, "named.conf")}}
	}
	start := func(p *refPod) {
		p.proc = lab.startProc(p.net, "", []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}, p.argv, &syncLog{})
	}
	t0 := time.Now()
	for _, p := range pods {
		start(p)
	}
	var wg sync.WaitGroup
	errs := make([]error, len(pods))
	for i, p := range pods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = loadedAfter(t, p.net.IP, zones, t0, fmt.Sprintf("manyref-%d (started together)", i))
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	refRSS(t, pods[0].proc, pods[1].proc, pods[2].proc)
	for _, tc := range []struct {
		p     *refPod
		what  string
		empty bool
	}{{pods[1], "restarted secondary (files kept)", false}, {pods[2], "new secondary (no files)", true}} {
		tc.p.proc.kill(9)
		if tc.empty {
			old, _ := filepath.Glob(filepath.Join(tc.p.dir, "db.*"))
			for _, f := range old {
				_ = os.Remove(f)
			}
			jnl, _ := filepath.Glob(filepath.Join(tc.p.dir, "*.jnl"))
			for _, f := range jnl {
				_ = os.Remove(f)
			}
		}
		t0 := time.Now()
		start(tc.p)
		if _, err := loadedAfter(t, tc.p.net.IP, zones, t0, tc.what); err != nil {
			t.Fatal(err)
		}
	}
	refRSS(t, pods[0].proc, pods[1].proc, pods[2].proc)
}

// refRSS logs the hand-written servers' named memory (each Proc is the
// shell that exec'd named).
func refRSS(t *testing.T, procs ...*Proc) {
	t.Helper()
	var parts []string
	for i, p := range procs {
		parts = append(parts, fmt.Sprintf("manyref-%d %.0f MiB", i, namedRSS(t, p.Pid())))
	}
	t.Logf("reference named RSS: %s", strings.Join(parts, ", "))
}

// reconfigCost makes one change of the configuration beyond the zones (a
// NOTIFY rate), which every pod applies with named-checkconf of the whole
// config and rndc reconfig, under the same query loop, and logs what each
// agent reports it took: the price a one-zone change no longer pays.
func reconfigCost(t *testing.T, c *Cluster, sample []string) {
	t.Helper()
	marks := logMarks(c.Pods)
	loop := startSOALoop(c.Pods, sample)
	c.swapConfigData(func(key, val string) string {
		return strings.Replace(val, "notify-rate 1000;", "notify-rate 999;", 1)
	})
	for i, p := range c.Pods {
		err := eventually(hang, 20*time.Millisecond, func() error {
			if !strings.Contains(p.Log.String()[marks[i]:], `rndc=reconfig took=`) {
				return fmt.Errorf("%s has not reconfigured", p.Name)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(time.Second)
	total, failures := loop.finish()
	for i, p := range c.Pods {
		log := p.Log.String()[marks[i]:]
		_, rest, _ := strings.Cut(log, "rndc=reconfig took=")
		took, _, _ := strings.Cut(rest, "\n")
		t.Logf("%s: the whole config checked and reconfigured in %s", p.Name, took)
	}
	t.Logf("query loop during the reconfig: %d queries, %d failed %v", total, len(failures), failures[:min(5, len(failures))])
}
