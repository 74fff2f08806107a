package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
	nc "git.unkin.net/unkin/bind-fn/internal/namedconf"
	"git.unkin.net/unkin/bind-fn/internal/output"
	"git.unkin.net/unkin/bind-fn/internal/prior"
	"git.unkin.net/unkin/bind-fn/internal/zonefile"
	"github.com/miekg/dns"
)

type zoneFile struct {
	name string // ConfigMap key / file name
	text []byte
}

// entry is one placement key (layout.ShardOf) and everything that goes
// with it to its shard: a zone's file (or its header, when split), its
// statements and its part of the agent's configuration; or a part of a
// split file; or a tombstone. Paths to other keys are pending until every
// key is placed.
type entry struct {
	key   string
	files []zoneFile
	view  string
	stmt  [2][]byte // zone statements by Role
	doc   layout.ZonesDoc
	src   diag.Source
	zone  *model.Zone // nil for a part, a tombstone, a catalog or policy zone
	shard int
}

// zoneSet is every zone of a cluster — primary zones with their files and
// serial state, zones of other types, catalogs, policy zones — each an
// entry, and what named.conf needs of them (plan).
type zoneSet struct {
	cache *zonefile.Cache
	// prevState is the previous render's zone states by file name, state
	// this render's zones'.
	prevState map[string]output.Zone
	plan      *confPlan
	state     map[string]bool
	entries   []*entry
	byZone    map[zoneKey]*entry
	signed    map[string]signedZone
	rs        diag.Results
	// childDS are the DS records of signed child zones by parent zone name.
	childDS map[string][]dns.RR
}

// buildZones builds every zone file of c, serials carried from prev, primary
// zones taken from cache, and every zone's agent configuration; statements
// adds the zone statements.
//
// childDS are the DS records the render adds to a parent zone, by the
// parent's name (childDS).
func buildZones(c *model.Cluster, prev *prior.Previous, cache *zonefile.Cache, childDS map[string][]dns.RR) *zoneSet {
	zs := &zoneSet{
		childDS:   childDS,
		cache:     cache,
		prevState: prev.ZoneStates(c),
		plan:      &confPlan{files: map[zoneKey]string{}, catalogs: map[string]string{}, policies: map[zoneKey]string{}},
		state:     map[string]bool{},
		byZone:    map[zoneKey]*entry{},
	}
	zs.signed, _ = signedZones(c)
	dnssec := map[string]bool{}
	for _, v := range c.Views {
		zs.catalog(v)
		for _, z := range v.Zones {
			e := &entry{key: fileName("db", v.Name, z.Name), view: v.Name, src: z.Src, zone: z}
			zs.entries = append(zs.entries, e)
			zs.byZone[zoneKey{v.Name, z.Name}] = e
			if z.Spec.Type != v1alpha1.ZoneForward {
				ref := layout.ZoneRef{Zone: bare(z.Name), View: v.Name}
				if z.Spec.Type == v1alpha1.ZoneStub {
					ref.Type = layout.ZoneTypeStub // ready when named shows its NS, never authoritative
				}
				e.doc.PrimaryZones = append(e.doc.PrimaryZones, ref)
				e.doc.SecondaryZones = append(e.doc.SecondaryZones, ref)
			}
			if _, ok := zs.signed[z.Name]; ok && !dnssec[z.Name] {
				dnssec[z.Name] = true
				e.doc.DNSSECZones = append(e.doc.DNSSECZones, bare(z.Name))
			}
			if z.Spec.Type == v1alpha1.ZonePrimary {
				zs.primary(c, v, z, e)
			}
		}
		for _, p := range v.Policies {
			zs.policy(v, p)
		}
	}
	// A zone removed from the input keeps its serial and hash in a
	// tombstone where its file was: restored later, it continues from
	// there. Restarting at 1 would leave every secondary that kept the
	// higher serial on the old data for good.
	for name, z := range zs.prevState {
		if !zs.state[name] {
			zs.entries = append(zs.entries, &entry{key: name, src: z.Src, files: []zoneFile{{name: layout.RemovedZonePrefix + name, text: []byte(output.TombstoneText(z.Origin, z.State))}}})
		}
	}
	return zs
}

// add records a built zone's file in e: its serial (the previous one, or
// one more when the content changed) and its text, split into parts (each
// an entry of its own) when large. The file is the zone's state: the next
// render reads the serial and hash back from it (output.Shards.Zones).
func (zs *zoneSet) add(e *entry, z *zonefile.Zone, explicit *uint32, name string) {
	var p *zonefile.State
	if s, ok := zs.prevState[name]; ok {
		p = &s.State
	}
	// Without an explicit serial NextSerial keeps or advances the previous
	// one; an explicit one going backwards is validate's (checkSerial).
	serial := zonefile.NextSerial(p, z.Hash, explicit)
	zs.state[name] = true
	main, parts := splitFile(zoneFile{name: name, text: z.Text(serial)})
	e.files = append(e.files, main)
	for _, part := range parts {
		zs.entries = append(zs.entries, &entry{key: part.name, src: e.src, files: []zoneFile{part}})
	}
}

func (zs *zoneSet) catalog(v *model.View) {
	if v.Catalog == nil {
		return
	}
	cz, rs := zonefile.ViewCatalog(v)
	zs.failed(rs)
	if cz != nil {
		name := fileName("catalog", v.Name, v.Catalog.ZoneName)
		e := &entry{key: name, src: v.Catalog.Src}
		zs.entries = append(zs.entries, e)
		zs.add(e, cz, nil, name)
		zs.plan.catalogs[v.Name] = pending(name)
	}
}

func (zs *zoneSet) primary(c *model.Cluster, v *model.View, z *model.Zone, e *entry) {
	built, rs := zs.cache.Build(z)
	zs.failed(rs)
	if built == nil {
		return
	}
	if ds := zs.childDS[z.Name]; len(ds) > 0 {
		built = zs.withChildDS(z, built, ds)
	}
	if len(z.OtherSigners) > 0 {
		built = zs.withOtherSigners(c, z, built)
	}
	var explicit *uint32
	if z.Spec.SOA != nil {
		explicit = z.Spec.SOA.Serial
	}
	name := e.key
	k := zoneKey{v.Name, z.Name}
	// A dynamic zone's desired RRsets are its rendered file's records (the
	// SOA and apex NS left out): the agent reads them from the file, which
	// the zones ConfigMaps carry split under their budget, so DNSRecords
	// are bound by no single ConfigMap.
	if z.Spec.DynamicUpdate && z.UpdateKey != nil {
		e.doc.DynamicZones = append(e.doc.DynamicZones, layout.DynamicZone{Zone: bare(z.Name), View: v.Name, KeyName: z.UpdateKey.KeyName, KeyFile: keyInclude(c, z.UpdateKey), Source: pending(name)})
	}
	if z.Writable() {
		// Dynamic and signed zones live on the data volume, seeded once
		// (their parts inlined by the agent).
		dest := layout.DataPath(primaryDir, name)
		zs.plan.files[k] = dest
		e.doc.SeedZones = append(e.doc.SeedZones, layout.SeedZone{Zone: bare(z.Name), View: v.Name, Source: pending(name), Dest: dest, Refresh: !z.Spec.DynamicUpdate})
	} else {
		zs.plan.files[k] = pending(name)
	}
	zs.add(e, built, explicit, name)
	zs.cache.Forget(z) // its text is made: let the RRs go
}

func (zs *zoneSet) policy(v *model.View, p *model.Policy) {
	pz, rs := zonefile.Policy(p)
	zs.failed(rs)
	if pz == nil {
		return
	}
	name := fileName("rpz", v.Name, p.ZoneName)
	e := &entry{key: name, src: p.Src}
	zs.entries = append(zs.entries, e)
	zs.add(e, pz, nil, name)
	zs.plan.policies[zoneKey{v.Name, p.ZoneName}] = pending(name)
}

// statements renders every zone's statement for both roles into its entry
// (paths pending until the entries are placed).
func (zs *zoneSet) statements(c *model.Cluster) {
	for _, role := range []Role{Primary, Secondary} {
		b := &confBuilder{c: c, role: role, plan: zs.plan}
		for _, v := range c.Views {
			for _, z := range v.Zones {
				st, ok := b.zone(v, z)
				if !ok {
					continue
				}
				text, err := nc.Format(st)
				if err != nil {
					b.rs.Errorf(z.Src, "", "cannot render the zone statement of %q: %v", bare(z.Name), err)
					continue
				}
				zs.byZone[zoneKey{v.Name, z.Name}].stmt[role] = text
			}
		}
		zs.rs = append(zs.rs, b.rs...)
	}
}

// size is what e adds to its shard (the agent's part estimated as its JSON).
func (e *entry) size() int {
	n := len(e.stmt[0]) + len(e.stmt[1])
	for _, f := range e.files {
		n += len(f.text) + len(f.name)
	}
	for _, r := range e.doc.PrimaryZones {
		n += 2 * (len(r.Zone) + len(r.View) + 40)
	}
	for _, s := range e.doc.SeedZones {
		n += len(s.Zone) + len(s.View) + len(s.Source) + len(s.Dest) + 120
	}
	for _, d := range e.doc.DynamicZones {
		n += len(d.Zone) + len(d.View) + len(d.KeyName) + len(d.KeyFile) + len(d.Source) + 120
	}
	for _, z := range e.doc.DNSSECZones {
		n += len(z) + 8
	}
	return n
}

// shard places every entry (layout.ShardOf over shardCount shards),
// resolves the paths between them, and returns each shard's data: its zone
// files, parts and tombstones, its zone statements per role and view
// (layout.ZonesConfFile) and its agent configuration (layout.ZonesDocFile).
// An entry that alone passes the budget is an error on its zone.
func (zs *zoneSet) shard(c *model.Cluster) []map[string]string {
	sort.Slice(zs.entries, func(i, j int) bool { return zs.entries[i].key < zs.entries[j].key })
	hashes := make([]uint64, len(zs.entries))
	sizes := make([]int, len(zs.entries))
	for i, e := range zs.entries {
		hashes[i] = layout.KeyHash(e.key)
		sizes[i] = e.size()
		if sizes[i] > ShardBudget {
			// Files are split (splitFile); what cannot be is a zone's
			// statement, as long as its lists.
			field, name := "spec", e.key
			if e.zone != nil {
				field, name = longestList(e.zone), bare(e.zone.Name)
			}
			zs.rs.Errorf(e.src, field, "cannot render zone %q of BindCluster %q: its zone statements take %d bytes, over the %d one zones ConfigMap carries (the API server takes 1 MiB an object); shorten %s (one wider prefix covers many addresses)", name, c.Name, sizes[i], ShardBudget, field)
			sizes[i] = 0
			e.stmt = [2][]byte{} // the error stands for it: nothing is rendered
		}
	}
	n := shardCount(hashes, sizes, ShardBudget)
	zs.plan.shards = n
	where := map[string]int{}
	for i, e := range zs.entries {
		e.shard = layout.ShardOfHash(hashes[i], n)
		for _, f := range e.files {
			where[f.name] = e.shard
		}
	}
	at := func(name string) int { return where[name] }
	path := func(p string) string {
		if rest, ok := strings.CutPrefix(p, pendingDir); ok {
			return layout.ZoneFile(where[rest], rest)
		}
		return p
	}
	for k, p := range zs.plan.files {
		zs.plan.files[k] = path(p)
	}
	for k, p := range zs.plan.catalogs {
		zs.plan.catalogs[k] = path(p)
	}
	for k, p := range zs.plan.policies {
		zs.plan.policies[k] = path(p)
	}

	shards := make([]map[string]string, n)
	confs := make([]map[string]*bytes.Buffer, n)
	docs := make([]layout.ZonesDoc, n)
	for i := range shards {
		shards[i] = map[string]string{}
		confs[i] = map[string]*bytes.Buffer{}
		for _, role := range []Role{Primary, Secondary} {
			for _, v := range c.Views {
				var b bytes.Buffer
				fmt.Fprintf(&b, "// zone statements of zones ConfigMap %d for the %s, rendered by bind-fn. Do not edit.\n", i, roleName(role))
				confs[i][layout.ZonesConfFile(roleName(role), v.Name)] = &b
			}
		}
	}
	for _, e := range zs.entries {
		s := e.shard
		for _, f := range e.files {
			shards[s][f.name] = string(resolve(f.text, at))
		}
		for _, role := range []Role{Primary, Secondary} {
			if e.stmt[role] != nil {
				confs[s][layout.ZonesConfFile(roleName(role), e.view)].Write(resolve(e.stmt[role], at))
			}
		}
		for i := range e.doc.SeedZones {
			e.doc.SeedZones[i].Source = path(e.doc.SeedZones[i].Source)
		}
		for i := range e.doc.DynamicZones {
			e.doc.DynamicZones[i].Source = path(e.doc.DynamicZones[i].Source)
		}
		docs[s].SeedZones = append(docs[s].SeedZones, e.doc.SeedZones...)
		docs[s].DNSSECZones = append(docs[s].DNSSECZones, e.doc.DNSSECZones...)
		docs[s].DynamicZones = append(docs[s].DynamicZones, e.doc.DynamicZones...)
		docs[s].PrimaryZones = append(docs[s].PrimaryZones, e.doc.PrimaryZones...)
		docs[s].SecondaryZones = append(docs[s].SecondaryZones, e.doc.SecondaryZones...)
	}
	for i := range shards {
		for k, b := range confs[i] {
			shards[i][k] = b.String()
		}
		doc, err := json.MarshalIndent(docs[i], "", "  ")
		if err != nil {
			zs.rs.Errorf(c.Src, "", "cannot encode the agent configuration of zones ConfigMap %d: %v", i, err)
		}
		shards[i][layout.ZonesDocFile] = string(doc) + "\n"
	}
	return shards
}

// longestList is the field of z's spec whose list writes the most into its
// zone statements.
func longestList(z *model.Zone) string {
	field, most := "spec", -1
	for _, l := range []struct {
		field string
		list  []string
	}{
		{"spec.allowTransfer", z.Spec.AllowTransfer},
		{"spec.alsoNotify", z.Spec.AlsoNotify},
		{"spec.allowQuery", z.Spec.AllowQuery},
		{"spec.primaries", z.Spec.Primaries},
		{"spec.forwarders", z.Spec.Forwarders},
	} {
		n := 0
		for _, s := range l.list {
			n += len(s) + 2
		}
		if n > most {
			field, most = l.field, n
		}
	}
	return field
}

// roleName is a Role as the agent and layout name it.
func roleName(r Role) string {
	if r == Primary {
		return "primary"
	}
	return "secondary"
}

// failed keeps the errors of a zone build: the validator reported every
// result of the same build before the render (warnings included), so only
// an error, which means the render runs on input nobody validated, stops it.
func (zs *zoneSet) failed(rs diag.Results) {
	for _, r := range rs {
		if r.Severity == diag.Error {
			zs.rs = append(zs.rs, r)
		}
	}
}

// withChildDS is built with the DS records of its signed child zones
// (childDS), each at a delegation (NS at the child's name): BIND 9.20
// refuses a zone with a DS elsewhere ("DS not at delegation point"), and a
// resolver finds the child through the cut. A child the zone does not
// delegate gets no DS, and an info result says how to chain it. A DS the
// zone's own records already hold at a child's name is refused: two sources
// for one RRset, and the render's follows the keys.
func (zs *zoneSet) withChildDS(z *model.Zone, built *zonefile.Zone, ds []dns.RR) *zonefile.Zone {
	own := map[string]bool{}
	ns := map[string]bool{}
	for _, rr := range built.RRs {
		h := rr.Header()
		switch h.Rrtype {
		case dns.TypeDS:
			own[dns.CanonicalName(h.Name)] = true
		case dns.TypeNS:
			ns[dns.CanonicalName(h.Name)] = true
		}
	}
	var add []dns.RR
	told := map[string]bool{}
	for _, rr := range ds {
		child := dns.CanonicalName(rr.Header().Name)
		switch {
		case own[child]:
			if !told[child] {
				zs.rs.Errorf(z.Src, "spec.records", "cannot write the DS of signed zone %q into zone %q: its records already hold a DS at %q; remove them, the render writes the child's DS from its keys (and changes it with them)", bare(child), bare(z.Name), bare(child))
			}
		case !ns[child]:
			if !told[child] {
				zs.rs = append(zs.rs, diag.Result{Severity: diag.Info, Source: z.Src, Field: "spec.records", Message: fmt.Sprintf(
					"zone %q does not delegate its signed child zone %q (no NS records at %q), so the render writes no DS for it (BIND refuses a DS that is not at a delegation point); to chain the child's signatures to the parent, add the delegation's NS records (and glue)", bare(z.Name), bare(child), bare(child))})
			}
		default:
			add = append(add, rr)
		}
		told[child] = true
	}
	if len(add) == 0 {
		return built
	}
	return built.With(add)
}
