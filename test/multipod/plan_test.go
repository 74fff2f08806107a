package multipod

import (
	"fmt"
	"maps"
	"net"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/plan"
	"git.unkin.net/unkin/bind-fn/internal/testutil"
)

// TestPlanLab checks a plan's claims against real BIND (docs/design.md#plan-import): the
// example cluster runs in the lab; every zone is transferred from the
// primary (AXFR signed with its view's key; the RPZ allows no transfer) and
// its serial read on every secondary; a change touching every kind of zone
// is planned, rendered and swapped in the way kubelet does; every zone is
// transferred again. For every zone: the old zone with the plan's RRset
// changes applied is the new zone, the serial is the plan's on every pod,
// zones the plan adds appear and zones it removes are gone, a zone the plan
// says is not applied to running pods (a signed zone seeded once) is
// unchanged, and no process restarts (the plan says no roll).
func TestPlanLab(t *testing.T) {
	agentBin := requirements(t)
	if !ownLab(t) {
		return
	}
	lab := newLab(t, path.Dir(agentBin))
	// The example plus a zone the change removes.
	in := authInputs(t).AddFile(t, "plan-removed-zone.yaml")
	r0 := renderInputs(t, in, nil)
	c := lab.startCluster(r0, "auth", podPlan{
		IP: func(i int) string { return fmt.Sprintf("198.18.8.%d", 10+i) }, PrimarySvc: "198.18.9.10", NetnsPrefix: "plan-",
	})
	c.waitReady(hang)
	keys := viewKeys(t, c, r0)
	before := transferAll(t, c, r0, keys)
	if len(before) == 0 {
		t.Fatal("the render lists no primary zone to transfer")
	}
	for id, st := range before {
		if st.absent {
			t.Fatalf("%s: the primary refuses the transfer before any change", id)
		}
	}

	// One change of every kind the plan reports for zones.
	in1 := in.Edit(t, "BindZone", "example-com", func(obj map[string]any) {
		s := spec(obj)
		recs := s["records"].([]any)
		var out []any
		for _, r := range recs {
			m := r.(map[string]any)
			switch m["name"] {
			case "mail": // values and TTL
				m["ttl"] = 600
				m["values"] = []any{"198.51.100.26", "198.51.100.27"}
			case "sip": // removed
				continue
			}
			out = append(out, m)
		}
		out = append(out, map[string]any{"name": "new", "type": "TXT", "values": []any{`"planned"`}})
		s["records"] = out
		s["soa"].(map[string]any)["refresh"] = 600 // SOA timers
	})
	in1 = in1.Edit(t, "DNSRecord", "shop", func(obj map[string]any) { spec(obj)["values"] = []any{"198.51.100.122"} }) // dynamic zone
	in1 = in1.Remove(t, "DNSRecord", "api")
	in1 = in1.Edit(t, "BindZone", "secure-example-com", func(obj map[string]any) { // signed: seeded once
		spec(obj)["records"] = []any{map[string]any{"name": "@", "type": "A", "values": []any{"198.51.100.81"}}}
	})
	in1 = in1.Edit(t, "BindZone", "example-com-internal", func(obj map[string]any) { // the other view
		spec(obj)["records"] = append(spec(obj)["records"].([]any), map[string]any{"name": "wiki", "type": "A", "values": []any{"192.0.2.30"}})
	})
	in1 = in1.Remove(t, "BindZone", "old-example-net")
	in1 = in1.AddFile(t, "plan-added-zone.yaml")
	r1 := renderInputs(t, in1, r0)
	oldObjs, err := plan.FromRender(r0.Objs)
	if err != nil {
		t.Fatal(err)
	}
	newObjs, err := plan.FromRender(r1.Objs)
	if err != nil {
		t.Fatal(err)
	}
	p, err := plan.Compare(oldObjs, newObjs)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("plan:\n%s", p.Markdown(plan.DefaultLimits))
	if len(p.Clusters) != 1 || p.Clusters[0].Rollout.RollsPods {
		t.Fatalf("the plan should change one cluster without a roll: %+v", p.Clusters)
	}
	zplans := map[string]plan.ZonePlan{}
	for _, z := range p.Clusters[0].Zones {
		zplans[z.View+"/"+z.Zone] = z
	}
	for _, want := range []string{"external/example.com", "external/apps.example.com", "external/secure.example.com", "internal/example.com", "external/example.org", "external/old.example.net", "external/catalog.example.internal"} {
		if _, ok := zplans[want]; !ok {
			t.Errorf("the plan has no entry for %s", want)
		}
	}

	// The agent owns the dynamic zone's records from its first pass: wait
	// for it, so the removal below is one it will do.
	if err := eventually(hang, 100*time.Millisecond, func() error {
		st, err := c.Pods[0].Status()
		if err != nil || st.LastConvergence == nil {
			return fmt.Errorf("no convergence yet (%v)", err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	pids := c.pids()
	c.swap(r1)
	// Expected content of every zone after the change, per the plan.
	expect := map[string]zoneState{}
	for id, st := range before {
		zp, ok := zplans[id]
		switch {
		case !ok:
			expect[id] = st // the plan says unchanged
		case zp.Change == plan.Removed:
			expect[id] = zoneState{absent: true}
		case zp.Apply == "seed":
			expect[id] = st // the plan says running pods keep their copy
		default:
			e := zoneState{data: st.data.Apply(zp.RRsets), serial: st.serial}
			if zp.Serial != nil {
				e.serial = zp.Serial.New
			}
			expect[id] = e
		}
	}
	for id, zp := range zplans {
		if zp.Change == plan.Added {
			e := zoneState{data: plan.ZoneData{}.Apply(zp.RRsets)}
			if zp.Serial != nil {
				e.serial = zp.Serial.New
			}
			expect[id] = e
		}
	}
	var after map[string]zoneState
	err = eventually(hang, 250*time.Millisecond, func() error {
		after = transferAll(t, c, r1, keys)
		return diffStates(expect, after, zplans)
	})
	if err != nil {
		t.Errorf("real BIND differs from the plan after the swap: %v", err)
	}
	if d := cmp.Diff(pids, c.pids()); d != "" {
		t.Errorf("the plan said no roll, but a process restarted (-before +after):\n%s", d)
	}
	t.Logf("checked %d zones before and after (AXFR from the primary, SOA serial on %d secondaries): the difference is the plan", len(expect), len(c.Pods)-1)
}

// zoneState is a zone as every pod serves it (one copy when they agree).
type zoneState struct {
	data   plan.ZoneData
	serial uint32
	absent bool
	// serials are the secondaries' SOA serials (0: not served).
	serials map[string]uint32
}

// dnssecTypes are records BIND makes when it signs: not in any plan.
var dnssecTypes = map[uint16]bool{dns.TypeRRSIG: true, dns.TypeNSEC: true, dns.TypeNSEC3: true, dns.TypeNSEC3PARAM: true,
	dns.TypeDNSKEY: true, dns.TypeCDS: true, dns.TypeCDNSKEY: true, 65534: true}

// viewKeys are the TSIG keys whose signed requests land in each view.
func viewKeys(t *testing.T, c *Cluster, r *Rendered) map[string]TSIG {
	t.Helper()
	doc := testutil.AgentConfig(t, r.Clusters[c.Name])
	out := map[string]TSIG{}
	for _, v := range doc.Views {
		secret := strings.TrimSuffix(path.Base(v.KeyFile), ".conf")
		out[v.View] = c.tsig(t, secret)
	}
	return out
}

// transferAll transfers every zone a render's primary serves (AXFR signed
// with the view's key; the RPZ zone, which allows no transfer, excepted)
// from every pod.
func transferAll(t *testing.T, c *Cluster, r *Rendered, keys map[string]TSIG) map[string]zoneState {
	t.Helper()
	// The zones are listed in the shards' agent-zones.json (docs/state.md#shards).
	doc := testutil.AgentConfig(t, r.Clusters[c.Name])
	out := map[string]zoneState{}
	zones := map[string]layout.ZoneRef{}
	for _, z := range doc.PrimaryZones {
		zones[z.View+"/"+z.Zone] = z
	}
	// Zones the old render had are transferred too: a removed zone must be gone.
	for id := range lastZones {
		if _, ok := zones[id]; !ok {
			v, n, _ := strings.Cut(id, "/")
			zones[id] = layout.ZoneRef{View: v, Zone: n}
		}
	}
	for id, z := range zones {
		if strings.HasPrefix(z.Zone, "rpz.") {
			continue
		}
		key := keys[z.View]
		st := zoneState{serials: map[string]uint32{}}
		// The primary allows transfers by key; secondaries allow none, so
		// they are checked by their SOA serial (they transfer from the
		// primary: the same serial is the same content).
		rrs, err := axfrFromClient(c.Pods[0].Net.IP, z.Zone, key)
		if err != nil {
			st.absent = true
		} else {
			var kept []dns.RR
			for _, rr := range rrs {
				if !dnssecTypes[rr.Header().Rrtype] {
					kept = append(kept, rr)
				}
			}
			st.data, st.serial = plan.ZoneDataOf(kept)
		}
		for _, p := range c.Secondaries() {
			st.serials[p.Name] = viewSerial(p.Net.IP, z.Zone, key)
		}
		out[id] = st
		lastZones[id] = true
	}
	return out
}

// viewSerial is the serial a pod serves for zone (0: not authoritative).
func viewSerial(server, zone string, key TSIG) uint32 {
	r, err := query(server, zone, dns.TypeSOA, q{tcp: true, key: &key})
	if err != nil || r.Rcode != dns.RcodeSuccess || !r.Authoritative {
		return 0
	}
	for _, rr := range r.Answer {
		if s, ok := rr.(*dns.SOA); ok {
			return s.Serial
		}
	}
	return 0
}

var lastZones = map[string]bool{}

// axfrFromClient transfers zone from server, dialling from the lab client address.
func axfrFromClient(server, zone string, key TSIG) ([]dns.RR, error) {
	return axfrFrom(labClient, server, zone, key)
}

// axfrFrom transfers zone from server, dialling from src, signed with key.
func axfrFrom(src, server, zone string, key TSIG) ([]dns.RR, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 2 * time.Second}
	conn, err := d.Dial("tcp", net.JoinHostPort(server, "53"))
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	tr := &dns.Transfer{Conn: &dns.Conn{Conn: conn}, TsigSecret: map[string]string{dns.Fqdn(key.Name): key.Secret}, ReadTimeout: 5 * time.Second}
	m := new(dns.Msg)
	m.SetAxfr(dns.Fqdn(zone))
	m.SetTsig(dns.Fqdn(key.Name), dns.HmacSHA256, 300, time.Now().Unix())
	env, err := tr.In(m, server)
	if err != nil {
		return nil, err
	}
	var rrs []dns.RR
	for e := range env {
		if e.Error != nil {
			return nil, e.Error
		}
		rrs = append(rrs, e.RR...)
	}
	if len(rrs) == 0 {
		return nil, fmt.Errorf("empty transfer")
	}
	return rrs, nil
}

// diffStates compares what every pod serves with what the plan expects.
// The serial of a dynamic zone is BIND's (each UPDATE bumps it), and a
// signed zone's is its signer's: those are not compared.
func diffStates(want, got map[string]zoneState, zplans map[string]plan.ZonePlan) error {
	var errs []string
	ids := slices.Sorted(maps.Keys(want))
	for _, id := range ids {
		w, g := want[id], got[id]
		switch {
		case w.absent && !g.absent:
			errs = append(errs, fmt.Sprintf("%s: the plan removes it, the primary still serves it", id))
		case !w.absent && g.absent:
			errs = append(errs, fmt.Sprintf("%s: the primary refuses the transfer", id))
		case !w.absent:
			if diff := cmp.Diff(w.data, g.data); diff != "" {
				errs = append(errs, fmt.Sprintf("%s on the primary (-plan +BIND):\n%s", id, diff))
			}
		}
		zp := zplans[id]
		if !w.absent && zp.Apply != "update" && zp.Apply != "seed" && !strings.HasPrefix(id, "external/secure.") && g.serial != w.serial {
			errs = append(errs, fmt.Sprintf("%s: serial %d, the plan says %d", id, g.serial, w.serial))
		}
		for pod, serial := range g.serials {
			switch {
			case w.absent && serial != 0:
				errs = append(errs, fmt.Sprintf("%s on %s: the plan removes it, the secondary still serves it", id, pod))
			case !w.absent && serial != g.serial:
				errs = append(errs, fmt.Sprintf("%s on %s: serial %d, the primary's is %d", id, pod, serial, g.serial))
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return nil
}
