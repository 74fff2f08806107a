// Package plan says what a change to a bind-fn package does to DNS. It
// compares two renders — the objects a previous render left in the package
// (or in a git ref), and the new inputs rendered through internal/pipeline —
// and reports, per cluster, view and zone: RRsets added, changed and
// removed, zones added and removed, serial changes, TSIG keys created,
// rotated and removed (names only), named.conf changes, and whether the
// change rolls pods or is applied live by the agent.
//
// It reads only rendered objects: zone files through miekg/dns, named.conf
// through internal/namedconf. It is pure: objects in, a Plan out.
package plan

import (
	"bytes"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/mapkeys"
	"git.unkin.net/unkin/bind-fn/internal/namedconf"
)

// Plan is the difference between two renders.
type Plan struct {
	Clusters []ClusterPlan `json:"clusters"`
	Totals   Totals        `json:"totals"`
	// DNSChange is true when anything a DNS client or BIND sees changes:
	// zones, records, serials, keys, named.conf.
	DNSChange bool `json:"dnsChange"`
	// Changed is true when any rendered object changes at all.
	Changed bool `json:"changed"`
	// Notes about how the plan was made (e.g. the old side had no rendered
	// output and was rendered from its inputs).
	Notes []string `json:"notes,omitempty"`
}

// Totals count the plan's changes over every cluster.
type Totals struct {
	ZonesAdded     int `json:"zonesAdded"`
	ZonesRemoved   int `json:"zonesRemoved"`
	ZonesChanged   int `json:"zonesChanged"`
	RRsetsAdded    int `json:"rrsetsAdded"`
	RRsetsChanged  int `json:"rrsetsChanged"`
	RRsetsRemoved  int `json:"rrsetsRemoved"`
	KeysChanged    int `json:"keysChanged"`
	ConfigChanges  int `json:"configChanges"`
	ClustersRolled int `json:"clustersRolled"`
}

// Change kinds.
const (
	Added   = "added"
	Created = "created" // a key
	Removed = "removed"
	Changed = "changed"
	Rotated = "rotated"
)

// ClusterPlan is the plan of one BindCluster.
type ClusterPlan struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Change is added, removed or changed.
	Change  string         `json:"change"`
	Rollout Rollout        `json:"rollout"`
	Keys    []KeyChange    `json:"keys,omitempty"`
	Config  []ConfChange   `json:"config,omitempty"`
	Zones   []ZonePlan     `json:"zones,omitempty"`
	Objects []ObjectChange `json:"objects,omitempty"`
	// DNSSEC are the DS changes at the parents of signed zones and the
	// key rollover steps (dnssec.go).
	DNSSEC []DNSSECStep `json:"dnssec,omitempty"`
}

// Rollout says how the change reaches the running pods.
type Rollout struct {
	// RollsPods is true when the StatefulSet's pod template changes: the
	// pods restart one at a time.
	RollsPods bool `json:"rollsPods"`
	// Reasons are the pod template fields that change.
	Reasons []string `json:"reasons,omitempty"`
	// Live are what the agent applies without a restart.
	Live []string `json:"live,omitempty"`
	// NotApplied are changes running pods will not see (see ZonePlan.Apply).
	NotApplied []string `json:"notApplied,omitempty"`
}

// KeyChange is a TSIG key created, rotated (new material) or removed. Key
// material is never part of a plan.
type KeyChange struct {
	Name     string `json:"name"`
	Change   string `json:"change"`
	Secret   string `json:"secret"`
	Imported bool   `json:"imported,omitempty"`
}

// ConfChange is one named.conf line added (+) or removed (-), in the
// flattened form "options > recursion no;". Role is primary, secondary or
// both (empty in a zone's own statement, which the primary declares).
type ConfChange struct {
	Role string `json:"role,omitempty"`
	Op   string `json:"op"`
	Line string `json:"line"`
}

// ObjectChange is a rendered object (other than config and zone data)
// added, removed or changed: Services, the PodDisruptionBudget, the
// StatefulSet's spec outside its pod template.
type ObjectChange struct {
	Kind   string `json:"kind"`
	Name   string `json:"name"`
	Change string `json:"change"`
}

// ZonePlan is the plan of one zone.
type ZonePlan struct {
	View   string `json:"view,omitempty"`
	Zone   string `json:"zone"`
	Change string `json:"change"`
	Type   string `json:"type"`
	// OldType is set when the zone's type changes.
	OldType string        `json:"oldType,omitempty"`
	Serial  *SerialChange `json:"serial,omitempty"`
	// Apply is how a content change reaches the servers: reload (the agent
	// reloads the zone file), update (the agent sends UPDATEs to a dynamic
	// zone), seed (a signed zone's file only seeds a new data volume: a
	// running server keeps its zone) or transfer (secondary, stub, forward).
	Apply  string        `json:"apply"`
	Config []ConfChange  `json:"config,omitempty"`
	Counts Counts        `json:"counts"`
	RRsets []RRsetChange `json:"rrsets,omitempty"`
	Error  string        `json:"error,omitempty"`
}

// SerialChange is a zone's SOA serial before and after.
type SerialChange struct {
	Old uint32 `json:"old"`
	New uint32 `json:"new"`
}

// Counts of RRset changes in a zone, in total and by type.
type Counts struct {
	Added   int            `json:"added"`
	Changed int            `json:"changed"`
	Removed int            `json:"removed"`
	ByType  map[string]int `json:"byType,omitempty"`
}

// RRsetChange is an RRset added, changed (values or TTL) or removed.
type RRsetChange struct {
	Name   string   `json:"name"`
	Type   string   `json:"type"`
	Change string   `json:"change"`
	OldTTL *uint32  `json:"oldTTL,omitempty"`
	NewTTL *uint32  `json:"newTTL,omitempty"`
	Old    []string `json:"old,omitempty"`
	New    []string `json:"new,omitempty"`
}

// Compare plans the change from the old objects to the new ones.
func Compare(oldObjs, newObjs []Object) (*Plan, error) {
	olds, err := snapshots(oldObjs)
	if err != nil {
		return nil, fmt.Errorf("old render: %w", err)
	}
	news, err := snapshots(newObjs)
	if err != nil {
		return nil, fmt.Errorf("new render: %w", err)
	}
	p := &Plan{}
	for _, id := range mapkeys.Union(olds, news) {
		cp := compareCluster(olds[id], news[id])
		if cp == nil {
			continue
		}
		p.Clusters = append(p.Clusters, *cp)
	}
	for _, c := range p.Clusters {
		p.Changed = true
		t := &p.Totals
		if c.Change != Changed || len(c.Zones) > 0 || len(c.Keys) > 0 || len(c.Config) > 0 {
			p.DNSChange = true
		}
		if c.Rollout.RollsPods {
			t.ClustersRolled++
		}
		t.KeysChanged += len(c.Keys)
		t.ConfigChanges += len(c.Config)
		for _, z := range c.Zones {
			switch z.Change {
			case Added:
				t.ZonesAdded++
			case Removed:
				t.ZonesRemoved++
			default:
				t.ZonesChanged++
			}
			t.RRsetsAdded += z.Counts.Added
			t.RRsetsChanged += z.Counts.Changed
			t.RRsetsRemoved += z.Counts.Removed
		}
	}
	return p, nil
}

// parallel runs f(0..n-1) on GOMAXPROCS workers.
func parallel(n int, f func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

func compareCluster(o, n *snapshot) *ClusterPlan {
	cp := &ClusterPlan{Change: Changed}
	empty := &snapshot{conf: nil, keys: map[string]keyState{}, objs: map[string]*Object{}}
	switch {
	case o == nil:
		cp.Change = Added
		cp.Namespace, cp.Name = n.ns, n.name
		o = empty
	case n == nil:
		cp.Change = Removed
		cp.Namespace, cp.Name = o.ns, o.name
		n = empty
	default:
		cp.Namespace, cp.Name = n.ns, n.name
	}
	cp.Keys = compareKeys(o, n)
	cp.Config = compareConf(o, n)
	cp.Zones = compareZones(o, n)
	cp.Objects, cp.Rollout = compareObjects(o, n)
	cp.DNSSEC = compareDNSSEC(o, n)
	if cp.Change == Changed {
		// Renders no longer write an rndc Secret (the agent makes the
		// key): one leaving the package rotates nothing.
		if o.rndc != n.rndc && n.rndc != ([32]byte{}) {
			cp.Keys = append(cp.Keys, KeyChange{Name: "rndc", Change: Rotated, Secret: n.name + "-rndc"})
		}
		if len(cp.Keys) == 0 && len(cp.Config) == 0 && len(cp.Zones) == 0 && len(cp.Objects) == 0 && !cp.Rollout.RollsPods && !dataChanged(o, n) {
			return nil
		}
	}
	cp.Rollout.Live, cp.Rollout.NotApplied = liveActions(cp)
	return cp
}

// dataChanged reports whether any object's data differs (a change the plan
// has no finer words for, such as agent.json alone).
func dataChanged(o, n *snapshot) bool {
	for _, k := range mapkeys.Union(o.objs, n.objs) {
		a, b := o.objs[k], n.objs[k]
		if a == nil || b == nil || !maps.EqualFunc(a.Data, b.Data, bytes.Equal) || !bytes.Equal(a.Spec, b.Spec) || !bytes.Equal(a.Template, b.Template) {
			return true
		}
	}
	return false
}

func compareKeys(o, n *snapshot) []KeyChange {
	var out []KeyChange
	for _, name := range mapkeys.Union(o.keys, n.keys) {
		a, aok := o.keys[name]
		b, bok := n.keys[name]
		switch {
		case !aok:
			out = append(out, KeyChange{Name: name, Change: Created, Secret: b.secret, Imported: b.imported})
		case !bok:
			out = append(out, KeyChange{Name: name, Change: Removed, Secret: a.secret, Imported: a.imported})
		case a.imported != b.imported || a.secret != b.secret || a.algorithm != b.algorithm:
			out = append(out, KeyChange{Name: name, Change: Changed, Secret: b.secret, Imported: b.imported})
		case a.digest != b.digest:
			out = append(out, KeyChange{Name: name, Change: Rotated, Secret: b.secret, Imported: b.imported})
		}
	}
	return out
}

// confLines flattens a role's named.conf, without zone statements (the
// zone plans carry those). The order of views matters to BIND (first match
// wins), so it is a line of its own.
func confLines(stmts []namedconf.Stmt) []string {
	var out, views []string
	for _, st := range stmts {
		switch st.Name() {
		case "zone":
			continue
		case "view":
			views = append(views, fmt.Sprintf("%q", st.Arg(1)))
			head := strings.TrimSuffix(strings.TrimSpace(formatHead(st)), ";")
			for _, b := range st.Body {
				if b.Name() == "zone" {
					continue
				}
				for _, l := range formatStmt(b) {
					out = append(out, head+" > "+l)
				}
			}
			continue
		}
		out = append(out, formatStmt(st)...)
	}
	if len(views) > 1 {
		out = append(out, "(view order) "+strings.Join(views, ", "))
	}
	sort.Strings(out)
	return out
}

// diffLines is a multiset difference of two sorted line lists.
func diffLines(a, b []string) (removed, added []string) {
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j >= len(b) || (i < len(a) && a[i] < b[j]):
			removed = append(removed, a[i])
			i++
		case i >= len(a) || b[j] < a[i]:
			added = append(added, b[j])
			j++
		default:
			i++
			j++
		}
	}
	return removed, added
}

func compareConf(o, n *snapshot) []ConfChange {
	byLine := map[string]map[string]bool{} // op+line -> roles
	for _, role := range []string{rolePrimary, roleSecondary} {
		rem, add := diffLines(confLines(o.conf[role]), confLines(n.conf[role]))
		for _, l := range rem {
			mark(byLine, "-"+l, role)
		}
		for _, l := range add {
			mark(byLine, "+"+l, role)
		}
	}
	return confChanges(byLine)
}

func mark(m map[string]map[string]bool, k, role string) {
	if m[k] == nil {
		m[k] = map[string]bool{}
	}
	m[k][role] = true
}

func confChanges(byLine map[string]map[string]bool) []ConfChange {
	var out []ConfChange
	for k, roles := range byLine {
		role := rolePrimary
		switch {
		case roles[rolePrimary] && roles[roleSecondary]:
			role = "both"
		case roles[roleSecondary]:
			role = roleSecondary
		}
		out = append(out, ConfChange{Role: role, Op: k[:1], Line: k[1:]})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Line != out[j].Line {
			return out[i].Line < out[j].Line
		}
		return out[i].Op > out[j].Op // "-" before "+"
	})
	return out
}

func compareZones(o, n *snapshot) []ZonePlan {
	oz, nz := o.zones(), n.zones()
	ids := mapkeys.Union(oz, nz)
	// Parse only zones whose text differs, in parallel: a large package
	// changes a few zones.
	var work []*zone
	for _, id := range ids {
		a, b := oz[id], nz[id]
		if a != nil && b != nil && bytes.Equal(a.text, b.text) {
			continue
		}
		for _, z := range []*zone{a, b} {
			if z != nil {
				work = append(work, z)
			}
		}
	}
	parallel(len(work), func(i int) { work[i].parse() })
	var out []ZonePlan
	for _, id := range ids {
		a, b := oz[id], nz[id]
		zp := ZonePlan{Change: Changed}
		switch {
		case a == nil:
			zp.Change = Added
			a = &zone{view: b.view, name: b.name}
		case b == nil:
			zp.Change = Removed
			b = &zone{view: a.view, name: a.name, typ: a.typ, apply: a.apply}
		}
		zp.View, zp.Zone, zp.Type, zp.Apply = b.view, b.name, b.typ, b.apply
		if zp.Change == Changed && a.typ != b.typ {
			zp.OldType = a.typ
		}
		for _, e := range []error{a.err, b.err} {
			if e != nil {
				zp.Error = e.Error()
			}
		}
		rem, add := diffLines(a.conf, b.conf)
		for _, l := range rem {
			zp.Config = append(zp.Config, ConfChange{Op: "-", Line: l})
		}
		for _, l := range add {
			zp.Config = append(zp.Config, ConfChange{Op: "+", Line: l})
		}
		sort.SliceStable(zp.Config, func(i, j int) bool { return zp.Config[i].Line < zp.Config[j].Line })
		switch {
		case a.soa != nil && b.soa != nil && a.soa.Serial != b.soa.Serial:
			zp.Serial = &SerialChange{Old: a.soa.Serial, New: b.soa.Serial}
		case a.soa == nil && b.soa != nil: // a new zone: its first serial
			zp.Serial = &SerialChange{New: b.soa.Serial}
		}
		zp.RRsets = compareRRsets(a, b)
		for _, c := range zp.RRsets {
			switch c.Change {
			case Added:
				zp.Counts.Added++
			case Removed:
				zp.Counts.Removed++
			default:
				zp.Counts.Changed++
			}
			if zp.Counts.ByType == nil {
				zp.Counts.ByType = map[string]int{}
			}
			zp.Counts.ByType[c.Type]++
		}
		if zp.Change == Changed && zp.OldType == "" && zp.Serial == nil && len(zp.Config) == 0 && len(zp.RRsets) == 0 && zp.Error == "" {
			continue
		}
		out = append(out, zp)
	}
	return out
}

// soaSet is a zone's SOA without its serial, as an RRset: a change of its
// timers or names is a change like any other (the serial has its own line).
func soaSet(s *dns.SOA) *rrset {
	if s == nil {
		return nil
	}
	c := *s
	c.Serial = 0
	v := Rdata(&c)
	// The serial is the third field: show it as "-" rather than 0.
	f := strings.Fields(v)
	if len(f) == 7 {
		f[2] = "(serial)"
		v = strings.Join(f, " ")
	}
	return &rrset{owner: s.Hdr.Name, ttl: s.Hdr.Ttl, values: []string{v}}
}

func compareRRsets(a, b *zone) []RRsetChange {
	keys := map[rrKey]bool{}
	for k := range a.rrsets {
		keys[k] = true
	}
	for k := range b.rrsets {
		keys[k] = true
	}
	soaKey := rrKey{name: "", typ: dns.TypeSOA}
	if a.soa != nil || b.soa != nil {
		keys[soaKey] = true
	}
	get := func(z *zone, k rrKey) *rrset {
		if k == soaKey {
			return soaSet(z.soa)
		}
		return z.rrsets[k]
	}
	var out []RRsetChange
	for k := range keys {
		x, y := get(a, k), get(b, k)
		typ := typeName(k.typ)
		switch {
		case x == nil:
			t := y.ttl
			out = append(out, RRsetChange{Name: y.owner, Type: typ, Change: Added, NewTTL: &t, New: y.values})
		case y == nil:
			t := x.ttl
			out = append(out, RRsetChange{Name: x.owner, Type: typ, Change: Removed, OldTTL: &t, Old: x.values})
		case x.ttl != y.ttl || !slices.Equal(x.values, y.values):
			ot, nt := x.ttl, y.ttl
			out = append(out, RRsetChange{Name: y.owner, Type: typ, Change: Changed, OldTTL: &ot, NewTTL: &nt, Old: x.values, New: y.values})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		ni, nj := dns.CanonicalName(out[i].Name), dns.CanonicalName(out[j].Name)
		if ni != nj {
			return compareNames(ni, nj) < 0
		}
		return out[i].Type < out[j].Type
	})
	return out
}

// compareNames orders names by their labels from the root (DNSSEC canonical
// order, close enough for reading: a zone's apex first, then its children).
func compareNames(a, b string) int {
	la, lb := dns.SplitDomainName(a), dns.SplitDomainName(b)
	for i, j := len(la)-1, len(lb)-1; i >= 0 && j >= 0; i, j = i-1, j-1 {
		if c := strings.Compare(la[i], lb[j]); c != 0 {
			return c
		}
	}
	return len(la) - len(lb)
}
