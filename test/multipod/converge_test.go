package multipod

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/testutil"
)

// The agent at run time on the lab (issue #36, item 5): type changes of
// DNSRecords, readiness of a stub zone, and the arrival order of the
// objects of one change, each on real named pods under the real agent.

func convergeIP(i int) string { return fmt.Sprintf("198.18.30.%d", 10+i) }
func resolverIP(i int) string { return fmt.Sprintf("198.18.31.%d", 10+i) }

const (
	convergeSvc = "198.18.1.130"
	resolverSvc = "198.18.1.131"
)

// TestTypeChangeLab: DNSRecords of the authoritative example whose types
// change between two renders (api CNAME → A, shop A → CNAME, note TXT →
// CNAME) are served on every pod throughout the swap: a query loop on every
// pod sees the old data or the new, never NXDOMAIN or an empty answer; the
// primary converges and its passes after the change report no error.
// On the old agent the three names were NXDOMAIN on every pod and every
// later pass failed ("BIND accepted its UPDATE but serves nothing").
func TestTypeChangeLab(t *testing.T) {
	agentBin := requirements(t)
	if !ownLab(t) {
		return
	}
	lab := newLab(t, filepath.Dir(agentBin))
	in := authInputs(t).Add(t, `apiVersion: bind.unkin.net/v1alpha1
kind: DNSRecord
metadata: {name: note, namespace: dns}
spec: {zoneRef: apps-example-com, name: note, type: TXT, values: ['"before"']}
`)
	r := renderInputs(t, in, nil)
	c := lab.startCluster(r, "auth", podPlan{IP: convergeIP, PrimarySvc: convergeSvc, NetnsPrefix: "tc-", AgentArgs: []string{"--converge-interval=1s"}})
	t.Cleanup(c.stop)
	c.waitReady(hang)
	for _, p := range c.Pods {
		if err := eventually(hang, 50*time.Millisecond, func() error {
			return expect(p.Net.IP, "note.apps.example.com", dns.TypeTXT, q{tcp: true}, dns.RcodeSuccess, []string{`"before"`})
		}); err != nil {
			t.Fatalf("%s before the change: %v", p.Name, err)
		}
	}

	next := in.Edit(t, "DNSRecord", "api", func(obj map[string]any) {
		spec(obj)["type"], spec(obj)["values"] = "A", []any{"198.51.100.140"}
	}).Edit(t, "DNSRecord", "shop", func(obj map[string]any) {
		spec(obj)["type"], spec(obj)["values"] = "CNAME", []any{"www.example.com."}
	}).Edit(t, "DNSRecord", "note", func(obj map[string]any) {
		spec(obj)["type"], spec(obj)["values"] = "CNAME", []any{"api.apps.example.com."}
	})
	r2 := renderInputs(t, next, r)

	probes := []struct {
		name string
		typ  uint16
	}{{"api.apps.example.com", dns.TypeA}, {"shop.apps.example.com", dns.TypeA}, {"note.apps.example.com", dns.TypeTXT}}
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var mu sync.Mutex
	gaps := map[string]int{}
	total := 0
	for _, p := range c.Pods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				for _, pr := range probes {
					r, err := query(p.Net.IP, pr.name, pr.typ, q{tcp: true, wait: 2 * time.Second})
					if err != nil {
						continue
					}
					mu.Lock()
					total++
					if r.Rcode != dns.RcodeSuccess || len(r.Answer) == 0 {
						gaps[fmt.Sprintf("%s %s %s: %s, %d answers", p.Name, pr.name, dns.TypeToString[pr.typ], dns.RcodeToString[r.Rcode], len(r.Answer))]++
					}
					mu.Unlock()
				}
			}
		}()
	}
	before, err := c.Pods[0].Status()
	if err != nil {
		t.Fatal(err)
	}
	c.swap(r2)
	checks := []struct {
		name string
		typ  uint16
		want []string
	}{
		{"api.apps.example.com", dns.TypeA, []string{"198.51.100.140"}},
		{"shop.apps.example.com", dns.TypeCNAME, []string{"www.example.com."}},
		{"note.apps.example.com", dns.TypeCNAME, []string{"api.apps.example.com."}},
	}
	for _, p := range c.Pods {
		for _, ck := range checks {
			if err := eventually(hang, 20*time.Millisecond, func() error {
				return expect(p.Net.IP, ck.name, ck.typ, q{tcp: true}, dns.RcodeSuccess, ck.want)
			}); err != nil {
				t.Errorf("%s: %v", p.Name, err)
			}
		}
	}
	// Three passes of the primary after the change: no error.
	passes := 0
	var last time.Time
	if err := eventually(hang, 100*time.Millisecond, func() error {
		st, err := c.Pods[0].Status()
		if err != nil || st.LastConvergence == nil {
			return fmt.Errorf("no status: %v", err)
		}
		lc := st.LastConvergence
		if before.LastConvergence != nil && !lc.Time.After(before.LastConvergence.Time) || lc.Time.Equal(last) {
			return fmt.Errorf("waiting for a pass")
		}
		last = lc.Time
		if lc.Error != "" {
			t.Fatalf("a pass after the type change failed: %s", lc.Error)
		}
		if passes++; passes < 3 {
			return fmt.Errorf("%d passes", passes)
		}
		return nil
	}); err != nil {
		t.Error(err)
	}
	stop()
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(gaps) > 0 {
		t.Errorf("of %d queries on the pods during the change, some found nothing served: %v", total, gaps)
	}
	t.Logf("%d queries on %d pods during the type change, every one answered; %d clean passes after it", total, len(c.Pods), passes)
}

// TestStubReadyLab: a `mode: resolver` cluster holding a stub zone (its
// primary a zone the authoritative example's pods serve) becomes Ready on
// every pod, and answers for the zone: the stub's NS as a referral, a name
// under it by recursion. On the old agent /readyz stayed 503 "zones not
// loaded: stub.example", so its Service had no endpoints.
func TestStubReadyLab(t *testing.T) {
	agentBin := requirements(t)
	if !ownLab(t) {
		return
	}
	lab := newLab(t, filepath.Dir(agentBin))
	auth := authInputs(t).Add(t, fmt.Sprintf(`apiVersion: bind.unkin.net/v1alpha1
kind: BindZone
metadata: {name: stub-example, namespace: dns}
spec:
  clusterRef: auth
  viewRef: external
  zoneName: stub.example
  nameservers: [ns1.stub.example.]
  records:
    - {name: ns1, type: A, values: ["%s"]}
    - {name: www, type: A, values: ["198.51.100.201"]}
`, convergeIP(0)))
	ra := renderInputs(t, auth, nil)
	a := lab.startCluster(ra, "auth", podPlan{IP: convergeIP, PrimarySvc: convergeSvc, NetnsPrefix: "sa-"})
	t.Cleanup(a.stop)
	a.waitReady(hang)

	res := resolverInputs(t).Add(t, fmt.Sprintf(`apiVersion: bind.unkin.net/v1alpha1
kind: BindZone
metadata: {name: stub-example, namespace: dns}
spec:
  clusterRef: resolver
  zoneName: stub.example
  type: stub
  primaries: ["%s"]
`, convergeIP(0)))
	rr := renderInputs(t, res, nil)
	c := lab.startCluster(rr, "resolver", podPlan{IP: resolverIP, PrimarySvc: resolverSvc, NetnsPrefix: "sr-"})
	t.Cleanup(c.stop)
	for _, p := range c.Pods {
		if err := p.readyErr(hang); err != nil {
			st, _ := p.Status()
			t.Errorf("%s never ready: %v (unready %v)", p.Name, err, st.Unready)
		}
		if err := eventually(hang, 100*time.Millisecond, func() error {
			r, err := query(p.Net.IP, "stub.example", dns.TypeSOA, q{})
			if err != nil {
				return err
			}
			for _, rr := range r.Ns {
				if ns, ok := rr.(*dns.NS); ok && ns.Hdr.Name == "stub.example." && ns.Ns == "ns1.stub.example." {
					return nil
				}
			}
			return fmt.Errorf("no referral from the stub: %s", r)
		}); err != nil {
			t.Errorf("%s: %v", p.Name, err)
		}
		if err := eventually(hang, 200*time.Millisecond, func() error {
			return expect(p.Net.IP, "www.stub.example", dns.TypeA, q{rd: true, wait: 4 * time.Second}, dns.RcodeSuccess, []string{"198.51.100.201"})
		}); err != nil {
			t.Errorf("%s: by recursion through the stub: %v", p.Name, err)
		}
	}
}

// TestArrivalOrderLab: a change that adds a signed zone reaches the pods as
// the objects of the change, one at a time, in every order (the config
// ConfigMap naming the zone, the zones ConfigMap holding its file, the
// DNSSEC Secret holding its keys). In no order does a pod log an ERROR,
// report a lastError or count a reload failure: an order that brings the
// config before a file shows "waiting for <file> from <object>" in /status,
// and every order ends with the zone signed and served on every pod.
func TestArrivalOrderLab(t *testing.T) {
	agentBin := requirements(t)
	if !ownLab(t) {
		return
	}
	lab := newLab(t, filepath.Dir(agentBin))
	in := authInputs(t)
	r := renderInputs(t, in, nil)
	added := in.Add(t, `apiVersion: bind.unkin.net/v1alpha1
kind: BindZone
metadata: {name: signed-example, namespace: dns}
spec:
  clusterRef: auth
  viewRef: external
  zoneName: signed.example
  nameservers: [ns1.example.com.]
  dnssecPolicyRef: standard
  records:
    - {name: www, type: A, values: ["198.51.100.210"]}
`)
	r2 := renderInputs(t, added, r)
	parts := changedMounts(t, testutil.NamedMounts(t, r.Clusters["auth"]), testutil.NamedMounts(t, r2.Clusters["auth"]))
	if len(parts) < 2 {
		t.Fatalf("the change touches %d mounts, want the config and at least one more", len(parts))
	}
	var names []string
	for _, m := range parts {
		names = append(names, m.Path)
	}
	t.Logf("the change comes in %d objects: %v", len(names), names)
	for i, order := range permutations(len(parts)) {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			sl := &Lab{t: t, dir: t.TempDir(), binDir: lab.binDir, release: lab.release, nveth: 2000 + 10*i}
			c := sl.startCluster(r, "auth", podPlan{IP: func(j int) string { return fmt.Sprintf("198.18.%d.%d", 40+i, 10+j) },
				PrimarySvc: fmt.Sprintf("198.18.1.%d", 140+i), NetnsPrefix: fmt.Sprintf("ao%d-", i)})
			defer c.stop()
			c.waitReady(hang)
			var got []string
			for _, k := range order {
				got = append(got, parts[k].Path)
				seen := map[string]string{}
				for _, p := range c.Pods {
					st, _ := p.Status()
					seen[p.Name] = st.SeenHash
				}
				for _, p := range c.Pods {
					testutil.WriteKubeletDir(t, filepath.Join(p.Root, parts[k].Path), parts[k].Files)
				}
				// every pod acts on this arrival before the next comes
				for _, p := range c.Pods {
					if err := eventually(hang, 20*time.Millisecond, func() error {
						st, err := p.Status()
						if err != nil {
							return err
						}
						if st.LastError != nil {
							t.Fatalf("%s after %v: a failed apply reported: %s", p.Name, got, st.LastError.Message)
						}
						if st.SeenHash == seen[p.Name] {
							return fmt.Errorf("not acted on %s yet", parts[k].Path)
						}
						if st.Waiting != "" {
							t.Logf("%s after %v: %s", p.Name, got, st.Waiting)
						}
						return nil
					}); err != nil {
						t.Fatalf("%s: %v", p.Name, err)
					}
				}
			}
			for _, p := range c.Pods {
				if err := eventually(hang, 50*time.Millisecond, func() error {
					r, err := query(p.Net.IP, "www.signed.example", dns.TypeA, q{do: true, tcp: true})
					if err != nil {
						return err
					}
					sigs := 0
					for _, rr := range r.Answer {
						if rr.Header().Rrtype == dns.TypeRRSIG {
							sigs++
						}
					}
					if r.Rcode != dns.RcodeSuccess || sigs == 0 {
						return fmt.Errorf("www.signed.example: %s, %d RRSIGs", dns.RcodeToString[r.Rcode], sigs)
					}
					return nil
				}); err != nil {
					t.Errorf("%s (order %v): %v", p.Name, got, err)
				}
				// The last arrival may be waited for one poll more: the
				// mount's new content is visible before the link of a new
				// file name in it (the kubelet's order too), so the agent
				// can see the change and wait for that file until the
				// link comes. It must end applied, never failed.
				var st AgentStatus
				if err := eventually(hang, 20*time.Millisecond, func() error {
					var err error
					if st, err = p.Status(); err != nil {
						return err
					}
					if st.LastError == nil && st.Waiting != "" {
						return fmt.Errorf("still %s", st.Waiting)
					}
					return nil
				}); err != nil || st.LastError != nil {
					t.Errorf("%s (order %v): lastError %+v, waiting %q (%v)", p.Name, got, st.LastError, st.Waiting, err)
				}
				if strings.Contains(p.Log.String(), "level=ERROR") {
					t.Errorf("%s (order %v) logged an ERROR:\n%s", p.Name, got, grep(p.Log.String(), "level=ERROR"))
				}
				if m := metricValue(t, p, `bindfn_agent_reload_failures_total`); m != 0 {
					t.Errorf("%s (order %v): %v reload failures counted", p.Name, got, m)
				}
			}
		})
	}
}

// changedMounts are the projected mounts whose files differ between two
// renders, sorted by path.
func changedMounts(t *testing.T, a, b []testutil.Mount) []testutil.Mount {
	old := map[string]testutil.Mount{}
	for _, m := range a {
		old[m.Path] = m
	}
	var out []testutil.Mount
	for _, m := range b {
		if !m.Projected {
			continue
		}
		if o, ok := old[m.Path]; ok && reflect.DeepEqual(o.Files, m.Files) {
			continue
		}
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// permutations of 0..n-1.
func permutations(n int) [][]int {
	if n == 0 {
		return [][]int{nil}
	}
	var out [][]int
	for _, p := range permutations(n - 1) {
		for i := 0; i <= len(p); i++ {
			q := append(append(append([]int(nil), p[:i]...), n-1), p[i:]...)
			out = append(out, q)
		}
	}
	sort.Slice(out, func(i, j int) bool { return fmt.Sprint(out[i]) < fmt.Sprint(out[j]) })
	return out
}

// metricValue is the sum of every sample of the agent's metric name.
func metricValue(t *testing.T, p *Pod, name string) float64 {
	_, body, err := httpGet(p.AgentURL("/metrics"))
	if err != nil {
		t.Fatalf("%s /metrics: %v", p.Name, err)
	}
	sum := 0.0
	for _, l := range strings.Split(string(body), "\n") {
		if !strings.HasPrefix(l, name+" ") && !strings.HasPrefix(l, name+"{") {
			continue
		}
		var v float64
		f := strings.Fields(l)
		if _, err := fmt.Sscan(f[len(f)-1], &v); err == nil {
			sum += v
		}
	}
	return sum
}
