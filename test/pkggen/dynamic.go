package pkggen

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
)

// DynamicCase is the input of the agent differential (docs/design.md#differential):
// one cluster whose zones are all dynamic (views with their own update
// keys, every TSIG algorithm, transfer keys, child zones, delegations with
// glue, wildcards, every record type), and a sequence of packages applied
// live, one after the other: each is the one before with DNSRecords added,
// changed and removed.
type DynamicCase struct {
	Seed  uint64
	Steps []Package
	// Edits say what each step changed (Edits[0] is the start).
	Edits [][]string
}

// DynCluster is the name of the dynamic case's cluster.
const DynCluster = "dyn"

// DynPrimaryAddr is the address of the dynamic case's primary Service in
// the lab (test/multipod): the stub zones of the case name it as their
// primary, so each pod's stub of a zone another view serves loads from the
// cluster itself.
const DynPrimaryAddr = "198.18.21.10"

// dynZones are the zone names the dynamic case picks from.
var dynZones = []string{"example.com", "example.org", "corp.example", "bücher.example", "2.0.192.in-addr.arpa", strings.Repeat("l", 63) + ".example"}

// GenerateDynamic makes the dynamic case of a seed (the same seed, the same
// case).
func GenerateDynamic(seed uint64) DynamicCase {
	g := &gen{r: rand.New(rand.NewPCG(seed, seed^0xd1a1d1a1d1a1d1a1)), names: map[string]bool{}, types: zoneTypes()}
	c := &cluster{name: DynCluster, replicas: 2 + g.r.IntN(2), policyMax: map[string]int{}}
	g.add("BindCluster", c.name, map[string]any{"replicas": c.replicas, "mode": "authoritative"})
	// a partner's transfer key; each view's update keys follow
	partner := g.add("BindTSIGKey", "partner", map[string]any{"clusterRef": c.name, "algorithm": g.pick(tsigAlgs...)}).Name
	if g.chance(0.5) {
		// the first view matches the lab's office and partner addresses,
		// the second everyone else
		g.add("BindView", "inside", map[string]any{"clusterRef": c.name, "order": 10, "matchClients": strs(g.pick("192.0.2.0/24", "198.18.7.0/24"), "192.0.2.0/24")})
		g.add("BindView", "outside", map[string]any{"clusterRef": c.name, "order": 20, "matchClients": strs("any")})
		c.views = []*view{{obj: "inside", zones: map[string]bool{}}, {obj: "outside", zones: map[string]bool{}}}
	} else {
		c.views = []*view{{zones: map[string]bool{}}}
	}
	var recObjs []string // DNSRecord object names
	for vi, v := range c.views {
		// the view's own update keys (a key updating zones of two views
		// is refused: its updates land in whichever view matches first)
		c.keyObjs = nil
		for i := 0; i < 1+g.r.IntN(2); i++ {
			o := g.add("BindTSIGKey", "ddns", map[string]any{"clusterRef": c.name, "algorithm": g.pick(tsigAlgs...)})
			c.keyObjs = append(c.keyObjs, o.Name)
		}
		var names []string
		for i := 0; i < 1+g.r.IntN(2); i++ {
			n := g.pick(dynZones...)
			if vi > 0 && g.chance(0.5) { // one zone name in both views
				n = slices.Sorted(maps.Keys(c.views[0].zones))[g.r.IntN(len(c.views[0].zones))]
			}
			if !v.zones[n] {
				v.zones[n] = true
				names = append(names, n)
			}
		}
		sort.Strings(names)
		for _, n := range names {
			zo := g.dynZone(c, v, n, partner, &recObjs)
			if g.chance(0.35) && !strings.HasSuffix(n, ".arpa") && len(n) < 60 {
				// a child zone of the same cluster, delegated with glue
				child := "child." + n
				v.zones[child] = true
				// (glue inside the child is refused: named answers it from the child)
				g.addInline(zo, map[string]any{"name": "child", "type": "NS", "values": strs("ns1.example.net.")})
				g.dynZone(c, v, child, partner, &recObjs)
			}
		}
	}
	g.dynStub(c)
	sortObjs(g.objs)
	dc := DynamicCase{Seed: seed, Steps: []Package{{Seed: seed, Objects: clonePkg(g.objs)}}, Edits: [][]string{{"start"}}}
	for step := 1; step <= 1+g.r.IntN(3); step++ {
		edits := g.dynEdit(step, &recObjs)
		sortObjs(g.objs)
		dc.Steps = append(dc.Steps, Package{Seed: seed, Objects: clonePkg(g.objs)})
		dc.Edits = append(dc.Edits, edits)
	}
	return dc
}

// dynStub adds, in some cases with two views, a zone whose answers are not
// authoritative: a stub, in the first view, of a zone only the second view
// serves, loaded from the cluster's own primary (DynPrimaryAddr; the pods'
// unsigned queries land in the second view by address). Every pod must
// become ready with it (its readiness is the stub's NS, not an AA answer).
func (g *gen) dynStub(c *cluster) {
	if len(c.views) != 2 || !g.chance(0.4) {
		return
	}
	var only []string
	for _, n := range slices.Sorted(maps.Keys(c.views[1].zones)) {
		if !c.views[0].zones[n] && !strings.HasPrefix(n, "child.") {
			only = append(only, n)
		}
	}
	if len(only) == 0 {
		return
	}
	n := only[g.r.IntN(len(only))]
	c.views[0].zones[n] = true
	g.add("BindZone", c.views[0].obj+"-stub-"+objName(n), map[string]any{"clusterRef": c.name, "viewRef": c.views[0].obj,
		"zoneName": n, "type": "stub", "primaries": strs(DynPrimaryAddr)})
}

// dynRetype changes a DNSRecord's type (A or TXT to CNAME, CNAME to A or
// TXT) at an owner that holds nothing else, so the new type is valid there:
// the agent replaces the RRset by one of another type at the same name.
func (g *gen) dynRetype(recObjs []string) string {
	for _, k := range g.r.Perm(len(recObjs)) {
		o := g.obj("DNSRecord", recObjs[k])
		if o == nil {
			continue
		}
		typ, _ := o.Spec["type"].(string)
		owner, _ := o.Spec["name"].(string)
		zo := g.obj("BindZone", o.Spec["zoneRef"].(string))
		if zo == nil || owner == "@" || owner == "" || strings.Contains(owner, "*") || (typ != "A" && typ != "TXT" && typ != "CNAME") || g.ownerShared(zo, o) {
			continue
		}
		zone := zo.Spec["zoneName"].(string)
		next := "CNAME"
		if typ == "CNAME" {
			next = g.pick("A", "TXT")
		}
		v, _ := g.recordValue(next, zone)
		o.Spec["type"], o.Spec["values"] = next, strs(v)
		return fmt.Sprintf("retype %s %s→%s", o.Name, typ, next)
	}
	return ""
}

// ownerShared: another record of zone object zo (inline or a DNSRecord)
// has o's owner name.
func (g *gen) ownerShared(zo *Object, o *Object) bool {
	owner := strings.ToLower(o.Spec["name"].(string))
	recs, _ := zo.Spec["records"].([]any)
	for _, r := range recs {
		if n, _ := r.(map[string]any)["name"].(string); strings.ToLower(n) == owner {
			return true
		}
	}
	for i := range g.objs {
		x := &g.objs[i]
		if x.Kind == "DNSRecord" && x.Name != o.Name && x.Spec["zoneRef"] == o.Spec["zoneRef"] {
			if n, _ := x.Spec["name"].(string); strings.ToLower(n) == owner {
				return true
			}
		}
	}
	return false
}

func sortObjs(objs []Object) {
	sort.SliceStable(objs, func(i, j int) bool { return kindOrder[objs[i].Kind] < kindOrder[objs[j].Kind] })
}

func clonePkg(objs []Object) []Object { return Package{Objects: objs}.Clone().Objects }

// dynZone adds a dynamic zone with records inline and as DNSRecords, and a
// delegation with glue.
func (g *gen) dynZone(c *cluster, v *view, name, partner string, recObjs *[]string) *Object {
	spec := map[string]any{"clusterRef": c.name, "zoneName": name, "dynamicUpdate": true,
		"updateKeyRef": g.pick(c.keyObjs...), "nameservers": strs("ns1.example.net.")}
	if v.obj != "" {
		spec["viewRef"] = v.obj
	}
	if g.chance(0.6) {
		spec["allowTransfer"] = strs("key " + partner)
	}
	if g.chance(0.3) {
		spec["defaultTTL"] = g.pick3(60, 300, 86400)
	}
	base := objName(name)
	if v.obj != "" {
		base = v.obj + "-" + base
	}
	zo := g.add("BindZone", base, spec)
	zname := zo.Name
	recs := g.dynRecords(name)
	if g.chance(0.5) && !strings.HasSuffix(name, ".arpa") {
		// a delegation with in-zone glue (and a DS for it)
		recs = append(recs, map[string]any{"name": "deleg", "type": "NS", "values": strs("ns1.deleg."+name+".", "ns2.example.net.")},
			map[string]any{"name": "ns1.deleg", "type": "A", "values": strs("192.0.2.53")})
		if g.chance(0.5) {
			ds, _ := g.recordValue("DS", name)
			recs = append(recs, map[string]any{"name": "deleg", "type": "DS", "values": strs(ds)})
		}
	}
	if g.chance(0.15) { // at BIND's limits: 100 records in one RRset, a 253-character name
		recs = append(recs, map[string]any{"name": "big", "type": "TXT", "values": txtN(100)})
	}
	if o := ownerOfLength(name, 253); o != "" && g.chance(0.15) {
		recs = append(recs, map[string]any{"name": o, "type": "A", "values": strs("192.0.2.253")})
	}
	for _, x := range recs {
		r := x.(map[string]any)
		if g.chance(0.3) {
			g.addInline(g.obj("BindZone", zname), r)
			continue
		}
		*recObjs = append(*recObjs, g.dnsRecord(zname, r))
	}
	return g.obj("BindZone", zname)
}

func (g *gen) addInline(zo *Object, recs ...map[string]any) {
	have, _ := zo.Spec["records"].([]any)
	for _, r := range recs {
		have = append(have, r)
	}
	zo.Spec["records"] = have
}

// dnsRecord adds a DNSRecord for a record map of zone object zref.
func (g *gen) dnsRecord(zref string, r map[string]any) string {
	rs := map[string]any{"zoneRef": zref, "type": r["type"], "values": r["values"], "name": r["name"]}
	if t, ok := r["ttl"]; ok {
		rs["ttl"] = t
	}
	return g.add("DNSRecord", zref+"-rec", rs).Name
}

// dynEdit changes the package for one step: DNSRecords added (under fresh
// owners, so they collide with nothing), values and TTLs changed, records
// removed.
func (g *gen) dynEdit(step int, recObjs *[]string) []string {
	var edits []string
	for i := 0; i < 1+g.r.IntN(4) || len(edits) == 0; i++ {
		switch {
		case g.chance(0.4) || len(*recObjs) == 0:
			var zones []*Object
			for j := range g.objs {
				if g.objs[j].Kind == "BindZone" && g.objs[j].Spec["type"] == nil {
					zones = append(zones, &g.objs[j])
				}
			}
			zo := zones[g.r.IntN(len(zones))]
			zname, zone := zo.Name, zo.Spec["zoneName"].(string)
			for _, x := range g.dynRecords(zone) {
				r := x.(map[string]any)
				owner := r["name"].(string)
				suffix := fmt.Sprintf("s%d-%d", step, i)
				if owner == "@" {
					owner = suffix
				} else {
					owner += "." + suffix
				}
				r["name"] = owner
				n := g.dnsRecord(zname, r)
				*recObjs = append(*recObjs, n)
				edits = append(edits, "add "+n)
			}
		case g.chance(0.25):
			if e := g.dynRetype(*recObjs); e != "" {
				edits = append(edits, e)
			}
		case g.chance(0.5):
			n := (*recObjs)[g.r.IntN(len(*recObjs))]
			o := g.obj("DNSRecord", n)
			if o == nil {
				continue
			}
			zo := g.obj("BindZone", o.Spec["zoneRef"].(string))
			typ := o.Spec["type"].(string)
			if g.chance(0.5) {
				o.Spec["ttl"] = g.pick3(60, 600, 7200)
				edits = append(edits, "ttl "+n)
				continue
			}
			if typ == "CNAME" || typ == "DNAME" {
				if v, ok := g.recordValue(typ, zo.Spec["zoneName"].(string)); ok {
					o.Spec["values"] = strs(v)
				}
			} else if v, ok := g.recordValue(typ, zo.Spec["zoneName"].(string)); ok {
				o.Spec["values"] = dedupe(append(o.Spec["values"].([]any), v))
			}
			edits = append(edits, "change "+n)
		default:
			k := g.r.IntN(len(*recObjs))
			n := (*recObjs)[k]
			*recObjs = slices.Delete(*recObjs, k, k+1)
			for j := range g.objs {
				if g.objs[j].Kind == "DNSRecord" && g.objs[j].Name == n {
					g.objs = slices.Delete(g.objs, j, j+1)
					break
				}
			}
			edits = append(edits, "remove "+n)
		}
	}
	return edits
}

// dynNoForm are record types fn-validate refuses whatever their value
// (obsolete, or no zone-file form BIND reads): the dynamic case leaves them
// to the package differential, which draws them.
var dynNoForm = map[string]bool{"MD": true, "MF": true, "UINFO": true, "UID": true, "GID": true, "UNSPEC": true, "NULL": true, "EID": true, "NIMLOC": true, "ATMA": true, "NXT": true}

// dynRecords are records() without the RFC 3597 forms and the types
// fn-validate refuses outright: the dynamic case is meant to be accepted.
func (g *gen) dynRecords(zone string) []any {
	var out []any
	for _, x := range g.records(zone, "", &cluster{policyMax: map[string]int{}}) {
		r := x.(map[string]any)
		typ := r["type"].(string)
		if dynNoForm[typ] {
			continue
		}
		var vals []any
		for _, v := range r["values"].([]any) {
			if !strings.HasPrefix(v.(string), `\#`) {
				vals = append(vals, g.unnormal(typ, v.(string)))
			}
		}
		if typ == "RESINFO" && len(vals) > 1 {
			vals = vals[:1]
		}
		if len(vals) == 0 {
			continue
		}
		r["values"] = vals
		if strings.ContainsAny(r["name"].(string), `_\`) && (typ == "MB" || typ == "MG" || typ == "MR" || typ == "MINFO" || typ == "RP" || typ == "KX" || typ == "RT" || typ == "AFSDB" || typ == "PX") {
			r["name"] = "host-1"
		}
		out = append(out, r)
	}
	return out
}

// unnormal writes a value the way BIND will not print it back: names in
// mixed case, fields apart by several blanks, hex in lower case. The agent
// must find the served RRset equal all the same (it compares wire forms).
func (g *gen) unnormal(typ, v string) string {
	if !g.chance(0.3) || strings.ContainsAny(v, `"\\`) {
		return v
	}
	switch g.r.IntN(3) {
	case 0:
		return strings.ReplaceAll(v, ".example.net.", ".Example.NET.")
	case 1:
		return strings.Join(strings.Fields(v), "   ")
	default:
		switch typ {
		case "DS", "CDS", "SSHFP", "TLSA", "SMIMEA", "ZONEMD":
			f := strings.Fields(v)
			f[len(f)-1] = strings.ToLower(f[len(f)-1])
			return strings.Join(f, " ")
		}
		return v
	}
}
