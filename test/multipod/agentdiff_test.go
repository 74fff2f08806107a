package multipod

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"net"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"golang.org/x/net/idna"
	"sigs.k8s.io/yaml"

	"git.unkin.net/unkin/bind-fn/internal/agent"
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/pipeline"
	"git.unkin.net/unkin/bind-fn/internal/render"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
	"git.unkin.net/unkin/bind-fn/internal/testutil/bindtools"
	"git.unkin.net/unkin/bind-fn/internal/testutil/testenv"
	"git.unkin.net/unkin/bind-fn/test/pkggen"
)

// The agent differential (docs/design.md#differential): random
// dynamic cases from pkggen.GenerateDynamic — views with their own update
// keys, every TSIG algorithm, a partner's transfer key, child zones,
// delegations with glue, wildcards, every record type, DNSRecords whose
// type changes (A or TXT to CNAME and back), a stub zone in one view of a
// zone the other serves — each a sequence of renders applied live to a
// cluster of the real agent on real named, the objects of each change laid
// one at a time in an order drawn from the step (swapInOrder: no pod may
// report a failed apply in between). After every step:
//   - the primary's agent converges within agentDiffMaxPasses passes, and
//     the agentDiffQuiet passes after that send no UPDATE;
//   - the primary serves every rendered record of every dynamic zone,
//     equal in wire form (owner and rdata names in canonical case), in an
//     AXFR signed with the view's key; every secondary serves the
//     primary's serial and answers every RRset the same;
//   - the partner's transfer key transfers its zones from every address of
//     the lab (the office, the partner and the outside client, which the
//     views match in turn).
//
// make test runs agentDiffSeeds seeds; the long run sets the environment
// below. A divergence with BINDFN_AGENTDIFF_SHRINK=<dir> is shrunk (steps,
// then DNSRecords, then inline records dropped while it persists) into a
// kept case, replayed first by every run (test/differential/testdata/agent).
const (
	envAgentDiffN        = "BINDFN_AGENTDIFF_N"        // cases (default agentDiffSeeds)
	envAgentDiffSeed     = "BINDFN_AGENTDIFF_SEED"     // first seed (default 1)
	envAgentDiffDuration = "BINDFN_AGENTDIFF_DURATION" // stop starting cases after this long
	envAgentDiffLog      = "BINDFN_AGENTDIFF_LOG"      // file: one line per case
	envAgentDiffShrink   = "BINDFN_AGENTDIFF_SHRINK"   // directory: shrink each divergence into it
)

const (
	agentDiffSeeds     = 2
	agentDiffMaxPasses = 3
	agentDiffQuiet     = 2
	agentDiffSvc       = pkggen.DynPrimaryAddr // the address the cases' stub zones name
)

func agentDiffIP(i int) string { return fmt.Sprintf("198.18.20.%d", 10+i) }

// agentCase is a kept divergence of the agent differential:
// testdata/agent/<name>/{step-N.yaml, expect.yaml}.
type agentCase struct {
	Seed uint64 `json:"seed"`
	// Divergence is what the run saw when it was kept.
	Divergence string `json:"divergence"`
	// Finding: what was wrong and where it was fixed.
	Finding string `json:"finding,omitempty"`
	// Open: still diverges on this branch (the replay fails once it converges).
	Open bool `json:"open,omitempty"`
}

func agentCasesDir(t testing.TB) string {
	return filepath.Join(bindtools.RepoRoot(t), "test", "differential", "testdata", "agent")
}

// TestAgentDifferential runs the kept agent cases, then the random ones.
func TestAgentDifferential(t *testing.T) {
	agentBin := requirements(t)
	if !ownLab(t) {
		return
	}
	lab := newLab(t, filepath.Dir(agentBin))
	idx := 0
	dirs, _ := filepath.Glob(filepath.Join(agentCasesDir(t), "*", "expect.yaml"))
	for _, f := range dirs {
		dir := filepath.Dir(f)
		var kc agentCase
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.UnmarshalStrict(b, &kc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		steps := readSteps(t, dir)
		idx++
		t.Run("kept/"+filepath.Base(dir), func(t *testing.T) {
			res := runDynamic(t, lab, idx, steps)
			switch {
			case kc.Open && res.err == nil:
				t.Errorf("fixed: the agent converges now; delete `open: true` from %s", f)
			case kc.Open:
				t.Logf("still open (%s): %v", kc.Finding, res.err)
			case res.err != nil:
				t.Errorf("divergence (%s): %v", kc.Finding, res.err)
			}
		})
	}

	// The check can fail: a record the agent does not own, added behind
	// its back, is served and not rendered, and checkServed says so.
	idx++
	t.Run("control-stray-record", func(t *testing.T) {
		y := pkggen.GenerateDynamic(1).Steps[0].YAML()
		items, err := testutil.DecodeItems("step-0.yaml", y)
		if err != nil {
			t.Fatal(err)
		}
		sl := &Lab{t: t, dir: t.TempDir(), binDir: lab.binDir, release: lab.release, nveth: 1000 + 10*idx}
		r := renderInputs(t, items, nil)
		c := sl.startCluster(r, pkggen.DynCluster, podPlan{IP: agentDiffIP, PrimarySvc: agentDiffSvc, NetnsPrefix: fmt.Sprintf("ad%d-", idx), AgentArgs: []string{"--converge-interval=1s"}})
		defer c.stop()
		if err := readyAll(c); err != nil {
			t.Fatal(err)
		}
		if _, _, err := waitConverged(c.Pods[0], "", time.Now()); err != nil {
			t.Fatal(err)
		}
		if err := checkServed(t, c, r, items); err != nil {
			t.Fatalf("before the stray record: %v", err)
		}
		doc := testutil.AgentConfig(t, r.Clusters[c.Name]) // with the shards' zones (zoneDocs)
		if len(doc.DynamicZones) == 0 {
			t.Fatal("the render has no dynamic zone to add a stray record to")
		}
		dz := doc.DynamicZones[0]
		key := c.tsig(t, strings.TrimSuffix(path.Base(dz.KeyFile), ".conf"))
		stray := mustRR("stray-control." + dns.Fqdn(dz.Zone) + " 300 IN TXT \"not rendered\"")
		alg := "hmac-sha256"
		for _, it := range items {
			var o struct {
				Spec struct{ Algorithm string } `json:"spec"`
			}
			if it.Source.Ref.Kind == "BindTSIGKey" && it.Source.Ref.Name == key.Name && json.Unmarshal(it.JSON, &o) == nil && o.Spec.Algorithm != "" {
				alg = o.Spec.Algorithm
			}
		}
		if err := updateAlg(c.PrimarySvc, dz.Zone, key, alg, stray); err != nil {
			t.Fatalf("the stray UPDATE (key %s): %v", key.Name, err)
		}
		err = checkServed(t, c, r, items)
		if err == nil || !strings.Contains(err.Error(), "stray-control") {
			t.Fatalf("checkServed after a stray record: %v, want it named", err)
		}
		t.Logf("caught: %s", strings.SplitN(err.Error(), "\n", 3)[:2])
	})

	n := testenv.Int(t, envAgentDiffN, agentDiffSeeds)
	seed := uint64(testenv.Int(t, envAgentDiffSeed, 1))
	until := testenv.Until(t, envAgentDiffDuration, time.Now())
	var logf *os.File
	if p := os.Getenv(envAgentDiffLog); p != "" {
		f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		logf = f
	}
	start := time.Now()
	var done, steps, refused, divergent int
	for i := 0; i < n; i++ {
		if !until.IsZero() && time.Now().After(until) {
			break
		}
		s := seed + uint64(i)
		dc := pkggen.GenerateDynamic(s)
		var in [][]byte
		for _, p := range dc.Steps {
			in = append(in, p.YAML())
		}
		idx++
		var res dynResult
		t.Run(fmt.Sprintf("seed-%d", s), func(t *testing.T) {
			res = runDynamic(t, lab, idx, in)
			if res.err != nil {
				t.Errorf("seed %d (edits %v): %v", s, dc.Edits, res.err)
				if dir := os.Getenv(envAgentDiffShrink); dir != "" {
					shrinkDynamic(t, lab, &idx, dir, s, in, res.err)
				}
			}
		})
		done++
		steps += res.applied
		refused += res.refused
		line := fmt.Sprintf("seed=%d steps=%d applied=%d refused=%d passes=%v updates=%d", s, len(in), res.applied, res.refused, res.passes, res.updated)
		if res.err != nil {
			divergent++
			line += " DIVERGENCE " + strings.ReplaceAll(res.err.Error(), "\n", " | ")
		}
		t.Log(line)
		if logf != nil {
			fmt.Fprintln(logf, line)
		}
	}
	summary := fmt.Sprintf("%d cases (seeds %d..%d) in %s on %s: %d steps applied live, %d steps refused by fn-validate, divergent %d",
		done, seed, seed+uint64(max(done, 1))-1, time.Since(start).Round(time.Second), lab.release, steps, refused, divergent)
	t.Log(summary)
	if logf != nil {
		fmt.Fprintln(logf, "SUMMARY "+summary)
	}
}

func readSteps(t *testing.T, dir string) [][]byte {
	var out [][]byte
	for i := 0; ; i++ {
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("step-%d.yaml", i)))
		if os.IsNotExist(err) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no step-0.yaml", dir)
	}
	return out
}

// dynResult is one case's run.
type dynResult struct {
	applied, refused int
	passes           []int // passes to converge, per applied step
	updated          int   // RRsets updated or removed over the case
	err              error // the divergence
}

// runDynamic applies the steps of a case to a fresh cluster, one after the
// other; a step fn-validate refuses is skipped (nothing is applied, as
// with the real pipeline).
func runDynamic(t *testing.T, lab *Lab, idx int, steps [][]byte) (res dynResult) {
	t.Helper()
	sl := &Lab{t: t, dir: t.TempDir(), binDir: lab.binDir, release: lab.release, nveth: 1000 + 10*idx}
	var prev *Rendered
	var c *Cluster
	defer func() {
		if c != nil {
			c.stop()
		}
	}()
	for i, y := range steps {
		items, err := testutil.DecodeItems(fmt.Sprintf("step-%d.yaml", i), y)
		if err != nil {
			t.Fatal(err)
		}
		r, errs := tryRender(t, items, prev)
		if errs != "" {
			res.refused++
			t.Logf("step %d refused by fn-validate (skipped): %s", i, errs)
			continue
		}
		before := "" // "": nothing to wait for before counting passes
		swapAt := time.Now()
		if c == nil {
			c = sl.startCluster(r, pkggen.DynCluster, podPlan{IP: agentDiffIP, PrimarySvc: agentDiffSvc,
				NetnsPrefix: fmt.Sprintf("ad%d-", idx), AgentArgs: []string{"--converge-interval=1s"}})
			if err := readyAll(c); err != nil {
				res.err = fmt.Errorf("step %d: %w", i, err)
				return res
			}
		} else {
			st, err := c.Pods[0].Status()
			if err != nil {
				res.err = fmt.Errorf("step %d: %s /status: %w", i, c.Pods[0].Name, err)
				return res
			}
			if renderChanged(prev, r) {
				before = st.AppliedConfigHash
			}
			if order := c.swapInOrder(t, r, y); len(order) > 1 {
				t.Logf("step %d: the change arrived in the order %v", i, order)
			}
		}
		prev = r
		res.applied++
		passes, upd, err := waitConverged(c.Pods[0], before, swapAt)
		res.passes = append(res.passes, passes)
		res.updated += upd
		if err != nil {
			res.err = fmt.Errorf("step %d (%s): %w", i, c.Pods[0].Name, err)
			return res
		}
		convAt := time.Now()
		if err := checkServed(t, c, r, items); err != nil {
			res.err = fmt.Errorf("step %d: %w", i, err)
			return res
		}
		t.Logf("step %d: converged %v after the swap, served as rendered by every pod %v after that", i, convAt.Sub(swapAt).Round(time.Millisecond), time.Since(convAt).Round(time.Millisecond))
	}
	return res
}

// swapInOrder lays the objects a render changes (its ConfigMaps and
// Secrets) one at a time, in an order drawn from the step's text (over the
// cases, every order of a change's objects), and waits after each until
// every pod has acted on it (its /status seenHash moved): the agent sees
// each partial state, as when the kubelet or the API server brings the
// objects of one change apart. A pod reporting a failed apply on the way is
// a divergence (fatal here: a partial change must wait, not fail). It
// returns the mount paths in the order laid.
func (c *Cluster) swapInOrder(t *testing.T, r *Rendered, step []byte) []string {
	t.Helper()
	rc := r.Clusters[c.Name]
	if rc == nil {
		t.Fatalf("no cluster %q in the render", c.Name)
	}
	old := testutil.NamedMounts(t, c.r)
	had := map[string]bool{} // mounts the running pods have (a new one needs a new pod)
	for _, m := range old {
		had[m.Path] = m.Projected
	}
	parts := changedMounts(t, old, testutil.NamedMounts(t, rc))
	h := fnv.New64a()
	h.Write(step)
	rnd := rand.New(rand.NewPCG(h.Sum64(), 36))
	rnd.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
	var order []string
	for _, m := range parts {
		order = append(order, m.Path)
		seen := map[string]string{}
		for _, p := range c.Pods {
			st, _ := p.Status()
			seen[p.Name] = st.SeenHash
		}
		for _, p := range c.Pods {
			testutil.WriteKubeletDir(t, filepath.Join(p.Root, m.Path), m.Files)
		}
		if !had[m.Path] {
			continue // no agent follows it: nothing to wait for
		}
		for _, p := range c.Pods {
			if err := eventually(hang, 20*time.Millisecond, func() error {
				st, err := p.Status()
				if err != nil {
					return err
				}
				if st.LastError != nil {
					t.Fatalf("%s after %v arrived: a failed apply reported: %s", p.Name, order, st.LastError.Message)
				}
				if st.SeenHash == seen[p.Name] {
					return fmt.Errorf("%s has not acted on %s", p.Name, m.Path)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	c.r = rc
	for _, p := range c.Pods {
		p.cluster = rc
	}
	return order
}

// tryRender is renderInputs for a package that may be refused: the errors
// instead of a failed test.
func tryRender(t *testing.T, items []model.Item, prev *Rendered) (*Rendered, string) {
	objs, rs := pipeline.Run(pipeline.Input{Items: items, Previous: prevObjects(prev)}, render.Options{Rand: &testutil.DetRand{}})
	if rs.HasErrors() {
		var errs []string
		for _, r := range rs {
			if r.Severity == diag.Error {
				errs = append(errs, r.String())
			}
		}
		return nil, strings.Join(errs, "; ")
	}
	return &Rendered{Objs: objs, Clusters: testutil.Clusters(t, objs)}, ""
}

// readyAll waits for every pod's /readyz, as an error.
func readyAll(c *Cluster) error {
	for _, p := range c.Pods {
		if err := p.readyErr(hang); err != nil {
			return fmt.Errorf("pod %s never ready: %v\n%s", p.Name, err, p.Log.tail(30))
		}
	}
	return nil
}

// waitConverged watches the primary's passes after a change: once the new
// render is applied (its hash differs from before; "" for the first step),
// a pass that finds nothing to change must come within agentDiffMaxPasses
// passes, and the agentDiffQuiet passes after it must send no UPDATE.
func waitConverged(p *Pod, before string, since time.Time) (passes, updated int, err error) {
	deadline := time.Now().Add(hang)
	applied := before == ""
	var appliedAt time.Time
	if applied {
		appliedAt = since
	}
	var last time.Time
	quiet := -1 // passes since the converged one (-1: not converged yet)
	var lastConv string
	for time.Now().Before(deadline) {
		st, err := p.Status()
		if err != nil {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		if !applied && st.AppliedConfigHash != before && st.AppliedConfigHash != "" {
			// the passes after the apply (the first may have run before
			// this poll saw the new hash)
			applied, appliedAt = true, time.Now()
			if st.LastApply != nil && st.LastApply.Before(appliedAt) {
				appliedAt = *st.LastApply
			}
		}
		lc := st.LastConvergence
		if !applied || lc == nil || !lc.Time.After(appliedAt) || lc.Time.Equal(last) {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		last = lc.Time
		lastConv = fmt.Sprintf("%+v", *lc)
		if quiet >= 0 {
			if lc.Messages != 0 || lc.Error != "" {
				return passes, updated, fmt.Errorf("converged, then pass %d after it sent %d UPDATE messages: %s", quiet+1, lc.Messages, lastConv)
			}
			quiet++
			if quiet == agentDiffQuiet {
				return passes, updated, nil
			}
			continue
		}
		passes++
		updated += lc.Updated + lc.Removed
		if lc.Error == "" && lc.Messages == 0 && lc.Updated == 0 && lc.Removed == 0 {
			quiet = 0
			continue
		}
		if passes > agentDiffMaxPasses {
			return passes, updated, fmt.Errorf("not converged after %d passes: the last %s", passes, lastConv)
		}
	}
	return passes, updated, fmt.Errorf("no converged pass within %s (%d passes, applied %v): the last %s\n%s", hang, passes, applied, lastConv, p.Log.tail(20))
}

// checkServed compares what every pod serves with the render.
func checkServed(t *testing.T, c *Cluster, r *Rendered, items []model.Item) error {
	// agent.json with every shard's agent-zones.json appended: the
	// dynamic and primary zones live in the shards (docs/state.md#shards)
	doc := testutil.AgentConfig(t, r.Clusters[c.Name])
	if len(doc.DynamicZones) == 0 {
		t.Fatal("the render has no dynamic zone: nothing to compare")
	}
	keys := map[string]TSIG{}
	for _, v := range doc.Views {
		keys[v.View] = c.tsig(t, strings.TrimSuffix(path.Base(v.KeyFile), ".conf"))
	}
	partners := partnerZones(t, c, items)
	served := map[string]bool{} // view/zone of every zone the view serves
	for _, z := range doc.PrimaryZones {
		served[z.View+"/"+strings.TrimSuffix(strings.ToLower(z.Zone), ".")] = true
	}
	var errs []string
	for _, dz := range doc.DynamicZones {
		id := dz.View + "/" + dz.Zone
		want, err := renderedZone(c.Pods[0].Root, dz)
		if err != nil {
			t.Fatalf("%s: the render's zone file: %v", id, err)
		}
		key := keys[dz.View]
		got, err := axfrKey(labClient, c.Pods[0].Net.IP, dz.Zone, key, "hmac-sha256")
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: AXFR from the primary with the view's key: %v", id, err))
			continue
		}
		if d := diffSets(want, got); d != "" {
			errs = append(errs, fmt.Sprintf("%s on the primary (- render, + served):\n%s", id, d))
		}
		if pk, ok := partners[dz.View+"/"+dz.Zone]; ok {
			for _, src := range []string{officeClient, partnerClient, labClient} {
				if v := pk.viewFrom(src); v != dz.View {
					// a key of two views selects none: the address picks
					// the view, whose copy that view's check compares
					continue
				}
				got, err := axfrKey(src, c.Pods[0].Net.IP, dz.Zone, pk.key, pk.alg)
				if err != nil {
					errs = append(errs, fmt.Sprintf("%s: the partner's AXFR (key %s, %s) from %s: %v", id, pk.key.Name, pk.alg, src, err))
					continue
				}
				if d := diffSets(want, got); d != "" {
					errs = append(errs, fmt.Sprintf("%s: the partner's AXFR from %s (- render, + served):\n%s", id, src, d))
				}
			}
		}
		serial := viewSerial(c.Pods[0].Net.IP, dz.Zone, key)
		for _, p := range c.Secondaries() {
			if err := eventually(hang, 100*time.Millisecond, func() error {
				if s := viewSerial(p.Net.IP, dz.Zone, key); s != serial {
					return fmt.Errorf("serial %d, the primary's %d", s, serial)
				}
				return answersMatch(p.Net.IP, dz.Zone, dz.View, key, want, served)
			}); err != nil {
				errs = append(errs, fmt.Sprintf("%s on %s: %v", id, p.Name, err))
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return nil
}

type partnerKey struct {
	key TSIG
	alg string
	// views: every view whose zones allow the key; byAddress: the
	// views in order with their matchClients (the generator's are CIDRs
	// and any).
	views     map[string]bool
	byAddress []viewMatch
}

type viewMatch struct {
	name  string
	match []string
}

// viewFrom is the view a transfer signed with the key from src lands in:
// the key's one view (the render puts it first in that view's
// match-clients), or, for a key of two views, the first view whose
// matchClients admit src.
func (p partnerKey) viewFrom(src string) string {
	if len(p.views) == 1 {
		for v := range p.views {
			return v
		}
	}
	ip := net.ParseIP(src)
	for _, v := range p.byAddress {
		for _, m := range v.match {
			if m == "any" {
				return v.name
			}
			if _, n, err := net.ParseCIDR(m); err == nil && n.Contains(ip) {
				return v.name
			}
			if net.ParseIP(m).Equal(ip) {
				return v.name
			}
		}
	}
	return ""
}

// partnerZones are the view/zone ids whose BindZone allows a transfer by a
// key ("key <BindTSIGKey>"), with that key and its algorithm.
func partnerZones(t *testing.T, c *Cluster, items []model.Item) map[string]partnerKey {
	type obj struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec map[string]any `json:"spec"`
	}
	keyAlg := map[string]string{}
	var zones []obj
	for _, it := range items {
		var o obj
		if err := json.Unmarshal(it.JSON, &o); err != nil {
			t.Fatal(err)
		}
		switch o.Kind {
		case "BindTSIGKey":
			a, _ := o.Spec["algorithm"].(string)
			if a == "" {
				a = "hmac-sha256"
			}
			keyAlg[o.Metadata.Name] = a
		case "BindZone":
			zones = append(zones, o)
		}
	}
	views := map[string]string{} // BindView object -> view name
	type ordered struct {
		order int
		vm    viewMatch
	}
	var byOrder []ordered
	for _, it := range items {
		var o obj
		_ = json.Unmarshal(it.JSON, &o)
		if o.Kind == "BindView" {
			n, _ := o.Spec["viewName"].(string)
			if n == "" {
				n = o.Metadata.Name
			}
			views[o.Metadata.Name] = n
			order, _ := o.Spec["order"].(float64)
			var match []string
			mc, _ := o.Spec["matchClients"].([]any)
			for _, m := range mc {
				match = append(match, m.(string))
			}
			byOrder = append(byOrder, ordered{int(order), viewMatch{n, match}})
		}
	}
	slices.SortStableFunc(byOrder, func(a, b ordered) int { return a.order - b.order })
	var byAddress []viewMatch
	for _, o := range byOrder {
		byAddress = append(byAddress, o.vm)
	}
	users := map[string]map[string]bool{} // key -> views whose zones allow it
	for _, z := range zones {
		at, _ := z.Spec["allowTransfer"].([]any)
		vr, _ := z.Spec["viewRef"].(string)
		for _, e := range at {
			if name, ok := strings.CutPrefix(e.(string), "key "); ok {
				if users[name] == nil {
					users[name] = map[string]bool{}
				}
				users[name][views[vr]] = true
			}
		}
	}
	out := map[string]partnerKey{}
	for _, z := range zones {
		at, _ := z.Spec["allowTransfer"].([]any)
		for _, e := range at {
			name, ok := strings.CutPrefix(e.(string), "key ")
			if !ok || keyAlg[name] == "" {
				continue
			}
			zn, _ := z.Spec["zoneName"].(string)
			vr, _ := z.Spec["viewRef"].(string)
			ascii, err := idna.Lookup.ToASCII(zn)
			if err != nil {
				t.Fatal(err)
			}
			out[views[vr]+"/"+ascii] = partnerKey{key: c.tsig(t, name+"-tsig"), alg: keyAlg[name], views: users[name], byAddress: byAddress}
		}
	}
	return out
}

// renderedZone is the render's zone file of a dynamic zone (its $INCLUDEd
// parts inlined from the pod's tree), without the SOA.
func renderedZone(root string, dz layout.DynamicZone) ([]dns.RR, error) {
	var text []byte
	if dz.Source == "" {
		text = []byte("$ORIGIN " + dns.Fqdn(dz.Zone) + "\n" + strings.Join(dz.Records, "\n") + "\n")
	} else {
		// The render's files as the kubelet mounts them (the agent lays
		// its own copy at layout.ZonesDir from the API server or this mount).
		mounted := func(p string) string {
			if rest, ok := strings.CutPrefix(p, layout.ZonesDir+"/"); ok {
				p = layout.MountedZonesDir + "/" + rest
			}
			return filepath.Join(root, p)
		}
		b, err := os.ReadFile(mounted(dz.Source))
		if err != nil {
			return nil, err
		}
		for _, l := range strings.SplitAfter(string(b), "\n") {
			if p, ok := strings.CutPrefix(strings.TrimSpace(l), "$INCLUDE "); ok {
				inc, err := os.ReadFile(mounted(strings.Trim(p, `"`)))
				if err != nil {
					return nil, err
				}
				text = append(text, inc...)
				continue
			}
			text = append(text, l...)
		}
	}
	// A blank line after each: miekg/dns reads one token past an
	// IPSECKEY's line (the agent's ipseckeyLines).
	zp := dns.NewZoneParser(strings.NewReader(strings.ReplaceAll(string(text), "\n", "\n\n")), dns.Fqdn(dz.Zone), dz.Source)
	zp.SetDefaultTTL(3600)
	var out []dns.RR
	for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
		if rr.Header().Rrtype != dns.TypeSOA {
			out = append(out, rr)
		}
	}
	return out, zp.Err()
}

// axfrKey transfers zone from server, dialling from src, signed with key
// under algorithm alg (BIND's name: hmac-md5 ... hmac-sha512); the SOA
// left out.
func axfrKey(src, server, zone string, key TSIG, alg string) ([]dns.RR, error) {
	prov, wire, err := agent.TSIGProvider(agent.Key{Name: key.Name, Algorithm: alg, Secret: key.Secret})
	if err != nil {
		return nil, err
	}
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 2 * time.Second}
	conn, err := d.Dial("tcp", net.JoinHostPort(server, "53"))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	tr := &dns.Transfer{Conn: &dns.Conn{Conn: conn}, TsigProvider: prov, ReadTimeout: 5 * time.Second}
	m := new(dns.Msg)
	m.SetAxfr(dns.Fqdn(zone))
	m.SetTsig(dns.CanonicalName(key.Name), wire, 300, time.Now().Unix())
	env, err := tr.In(m, server)
	if err != nil {
		return nil, err
	}
	var rrs []dns.RR
	for e := range env {
		if e.Error != nil {
			return nil, e.Error
		}
		for _, rr := range e.RR {
			// TYPE65534 is BIND's own signing state (sig-signing-type),
			// which 9.18 adds when an UPDATE brings a DNSKEY (seed 30044)
			if t := rr.Header().Rrtype; t != dns.TypeSOA && t != 65534 {
				rrs = append(rrs, rr)
			}
		}
	}
	return rrs, nil
}

// answersMatch queries every RRset of want at server (TCP, signed with the
// view's key) and compares the answer — the authority section for a
// delegation's NS — in wire form. Names below a delegation (glue) and the
// apexes of zones the view also serves are the transfer's to check.
func answersMatch(server, zone, view string, key TSIG, want []dns.RR, served map[string]bool) error {
	sets := map[string][]dns.RR{}
	cuts := map[string]bool{}
	origin := dns.Fqdn(strings.ToLower(zone))
	for _, rr := range want {
		h := rr.Header()
		n := strings.ToLower(h.Name)
		if h.Rrtype == dns.TypeNS && n != origin {
			cuts[n] = true
		}
		sets[n+" "+dns.TypeToString[h.Rrtype]] = append(sets[n+" "+dns.TypeToString[h.Rrtype]], rr)
	}
	var errs []string
	for _, k := range slices.Sorted(maps.Keys(sets)) {
		rrs := sets[k]
		h := rrs[0].Header()
		n := strings.ToLower(h.Name)
		if below(n, origin, cuts) || (n != origin && served[view+"/"+strings.TrimSuffix(n, ".")]) {
			continue
		}
		r, err := query(server, n, h.Rrtype, q{tcp: true, key: &key})
		if err != nil {
			return fmt.Errorf("%s: %v", k, err)
		}
		got := r.Answer
		if h.Rrtype == dns.TypeNS && n != origin {
			got = r.Ns
		}
		var typed []dns.RR
		for _, rr := range got {
			if rr.Header().Rrtype == h.Rrtype {
				typed = append(typed, rr)
			}
		}
		if d := diffSets(rrs, typed); d != "" {
			errs = append(errs, fmt.Sprintf("%s (rcode %s):\n%s", k, dns.RcodeToString[r.Rcode], d))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return nil
}

// below: n lies strictly under a delegation of the zone.
func below(n, origin string, cuts map[string]bool) bool {
	for c := range cuts {
		if n != c && dns.IsSubDomain(c, n) && c != origin {
			return true
		}
	}
	return false
}

// diffSets compares two record sets in wire form (owner and the names in
// rdata lower-cased: DNS names compare without case), TTL included.
func diffSets(want, got []dns.RR) string {
	w, g := wireSet(want), wireSet(got)
	var out []string
	for k, e := range w {
		if g[k].n < e.n {
			out = append(out, "- "+e.text+" ["+k+"]")
		}
	}
	for k, e := range g {
		if w[k].n < e.n {
			out = append(out, "+ "+e.text+" ["+k+"]")
		}
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

type wireEntry struct {
	n    int
	text string
}

// wireSet counts each record by the hex of its canonical wire form (the
// text is for the report).
func wireSet(rrs []dns.RR) map[string]wireEntry {
	out := map[string]wireEntry{}
	buf := make([]byte, 65535)
	for _, rr := range rrs {
		c := dns.Copy(rr)
		lowerNames(reflect.ValueOf(c).Elem())
		c.Header().Name = strings.ToLower(c.Header().Name)
		k := "unpackable"
		if off, err := dns.PackRR(c, buf, 0, nil, false); err == nil {
			k = hex.EncodeToString(buf[:off])
		}
		e := out[k]
		e.n++
		e.text = c.String()
		out[k] = e
	}
	return out
}

// lowerNames lower-cases every domain-name field of an RR struct.
func lowerNames(v reflect.Value) {
	for i := 0; i < v.NumField(); i++ {
		f, sf := v.Field(i), v.Type().Field(i)
		if strings.Contains(string(sf.Tag), "domain-name") && f.Kind() == reflect.String {
			f.SetString(strings.ToLower(f.String()))
		}
	}
}

// shrinkDynamic drops steps, DNSRecords and inline records while the case
// still diverges, and keeps what is left under dir as a case (open).
func shrinkDynamic(t *testing.T, lab *Lab, idx *int, dir string, seed uint64, steps [][]byte, first error) {
	const budget = 30
	evals := 0
	still := func(cand [][]byte) bool {
		if evals >= budget {
			return false
		}
		evals++
		*idx++
		var ok bool
		t.Run(fmt.Sprintf("shrink-%d", evals), func(t *testing.T) {
			res := runDynamic(t, lab, *idx, cand)
			ok = res.err != nil && res.applied > 0
			if ok {
				t.Logf("still diverges: %v", res.err)
			}
		})
		return ok
	}
	cur := shrinkSteps(t, steps, still)
	out := filepath.Join(dir, fmt.Sprintf("seed%d", seed))
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, s := range cur {
		if err := os.WriteFile(filepath.Join(out, fmt.Sprintf("step-%d.yaml", i)), s, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	y, _ := yaml.Marshal(agentCase{Seed: seed, Divergence: first.Error(), Open: true})
	if err := os.WriteFile(filepath.Join(out, "expect.yaml"), y, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("shrunk seed %d to %d steps in %d evaluations: %s", seed, len(cur), evals, out)
}

// shrinkSteps drops steps (the first stays), then DNSRecords from every
// step, each while still holds.
func shrinkSteps(t *testing.T, steps [][]byte, still func([][]byte) bool) [][]byte {
	cur := steps
	for i := len(cur) - 1; i >= 1; i-- {
		cand := append(append([][]byte(nil), cur[:i]...), cur[i+1:]...)
		if still(cand) {
			cur = cand
		}
	}
	for _, name := range recordNames(t, cur) {
		cand := dropRecord(t, cur, name)
		if still(cand) {
			cur = cand
		}
	}
	return cur
}

// recordNames are the DNSRecord objects of any step.
func recordNames(t *testing.T, steps [][]byte) []string {
	seen := map[string]bool{}
	for _, s := range steps {
		items, err := testutil.DecodeItems("step.yaml", s)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			if it.Source.Ref.Kind == "DNSRecord" {
				seen[it.Source.Ref.Name] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// dropRecord removes DNSRecord name from every step.
func dropRecord(t *testing.T, steps [][]byte, name string) [][]byte {
	var out [][]byte
	for _, s := range steps {
		items, err := testutil.DecodeItems("step.yaml", s)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, it := range items {
			if it.Source.Ref.Kind == "DNSRecord" && it.Source.Ref.Name == name {
				continue
			}
			y, err := yaml.JSONToYAML(it.JSON)
			if err != nil {
				t.Fatal(err)
			}
			b.WriteString("---\n")
			b.Write(y)
		}
		out = append(out, []byte(b.String()))
	}
	return out
}

// updateAlg adds rrs to zone at server by an UPDATE signed with key under
// alg (BIND's algorithm name).
func updateAlg(server, zone string, key TSIG, alg string, rrs ...dns.RR) error {
	prov, wire, err := agent.TSIGProvider(agent.Key{Name: key.Name, Algorithm: alg, Secret: key.Secret})
	if err != nil {
		return err
	}
	m := new(dns.Msg)
	m.SetUpdate(dns.Fqdn(zone))
	m.Insert(rrs)
	m.SetTsig(dns.CanonicalName(key.Name), wire, 300, time.Now().Unix())
	c := client(q{tcp: true, wait: 5 * time.Second})
	c.TsigProvider = prov
	r, _, err := c.Exchange(m, net.JoinHostPort(server, "53"))
	if err != nil {
		return err
	}
	if r.Rcode != dns.RcodeSuccess {
		return fmt.Errorf("update %s: %s", zone, dns.RcodeToString[r.Rcode])
	}
	return nil
}

// renderChanged: some ConfigMap or Secret differs between two renders.
func renderChanged(a, b *Rendered) bool {
	return !reflect.DeepEqual(prevObjects(a), prevObjects(b))
}

// TestShrinkSteps: a divergence that needs one DNSRecord of the last step
// shrinks to the first step and that step, holding that record alone.
func TestShrinkSteps(t *testing.T) {
	for seed := uint64(1); seed < 100; seed++ {
		dc := pkggen.GenerateDynamic(seed)
		var steps [][]byte
		for _, p := range dc.Steps {
			steps = append(steps, p.YAML())
		}
		if len(steps) < 3 {
			continue
		}
		var culprit string
		for _, n := range recordNames(t, steps[len(steps)-1:]) { // a record only the last step has
			if !slices.Contains(recordNames(t, steps[:len(steps)-1]), n) {
				culprit = n
			}
		}
		if culprit == "" {
			continue
		}
		still := func(cand [][]byte) bool { return slices.Contains(recordNames(t, cand[len(cand)-1:]), culprit) }
		got := shrinkSteps(t, steps, still)
		if len(got) != 2 {
			t.Errorf("seed %d: shrunk to %d steps, want the first and the last", seed, len(got))
		}
		if names := recordNames(t, got); len(names) != 1 || names[0] != culprit {
			t.Errorf("seed %d: shrunk to DNSRecords %v, want only %s", seed, names, culprit)
		}
		return
	}
	t.Fatal("no seed under 100 has three steps and a record only the last adds")
}
