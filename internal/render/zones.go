package render

import (
	"fmt"
	"sort"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/output"
	"git.unkin.net/unkin/bind-fn/internal/prior"
	"git.unkin.net/unkin/bind-fn/internal/zonefile"
	"github.com/miekg/dns"
)

type zoneFile struct {
	name string // ConfigMap key / file name
	text []byte
}

// fileRef sets where a file's path is needed once its shard is known.
type fileRef struct {
	set  func(path string)
	name string
}

// zoneSet is every zone file of a cluster — primary zones, catalogs, policy
// zones — with their serial state, and what refers to each file: the
// named.conf plan, the agent's seed list.
type zoneSet struct {
	cache *zonefile.Cache
	// prevState is the previous render's zone states by file name, state
	// this render's zones'.
	prevState map[string]output.Zone
	plan      *confPlan
	state     map[string]bool
	files     []zoneFile
	refs      []fileRef
	seeds     []layout.SeedZone
	dyn       []layout.DynamicZone
	rs        diag.Results
	// childDS are the DS records of signed child zones by parent zone name.
	childDS map[string][]dns.RR
}

// buildZones builds every zone file of c, serials carried from prev, primary
// zones taken from cache.
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
	}
	for _, v := range c.Views {
		zs.catalog(v)
		for _, z := range v.Zones {
			if z.Spec.Type == v1alpha1.ZonePrimary {
				zs.primary(c, v, z)
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
			zs.files = append(zs.files, zoneFile{name: layout.RemovedZonePrefix + name, text: []byte(output.TombstoneText(z.Origin, z.State))})
		}
	}
	return zs
}

// add records a built zone's file: its serial (the previous one, or one more
// when the content changed), its text, and who needs its path. The file is
// the zone's state: the next render reads the serial and hash back from it
// (output.Shards.Zones).
func (zs *zoneSet) add(src diag.Source, z *zonefile.Zone, explicit *uint32, name string, set func(string)) {
	var p *zonefile.State
	if s, ok := zs.prevState[name]; ok {
		p = &s.State
	}
	// Without an explicit serial NextSerial keeps or advances the previous
	// one; an explicit one going backwards is validate's (checkSerial).
	serial := zonefile.NextSerial(p, z.Hash, explicit)
	zs.state[name] = true
	zs.files = append(zs.files, zoneFile{name: name, text: z.Text(serial)})
	zs.refs = append(zs.refs, fileRef{set: set, name: name})
}

func (zs *zoneSet) catalog(v *model.View) {
	if v.Catalog == nil {
		return
	}
	cz, rs := zonefile.ViewCatalog(v)
	zs.failed(rs)
	if cz != nil {
		zs.add(v.Catalog.Src, cz, nil, fileName("catalog", v.Name, v.Catalog.ZoneName),
			func(p string) { zs.plan.catalogs[v.Name] = p })
	}
}

func (zs *zoneSet) primary(c *model.Cluster, v *model.View, z *model.Zone) {
	built, rs := zs.cache.Build(z)
	zs.failed(rs)
	if built == nil {
		return
	}
	if ds := zs.childDS[z.Name]; len(ds) > 0 {
		built = zs.withChildDS(z, built, ds)
	}
	var explicit *uint32
	if z.Spec.SOA != nil {
		explicit = z.Spec.SOA.Serial
	}
	name := fileName("db", v.Name, z.Name)
	k := zoneKey{v.Name, z.Name}
	// A dynamic zone's desired RRsets are its rendered file's records (the
	// SOA and apex NS left out): the agent reads them from the file, which
	// the zones ConfigMaps carry split under their budget, so DNSRecords
	// are bound by no single ConfigMap.
	dyn := -1
	if z.Spec.DynamicUpdate && z.UpdateKey != nil {
		dyn = len(zs.dyn)
		zs.dyn = append(zs.dyn, layout.DynamicZone{Zone: bare(z.Name), View: v.Name, KeyName: z.UpdateKey.KeyName, KeyFile: keyInclude(c, z.UpdateKey)})
	}
	if z.Writable() {
		// Dynamic and signed zones live on the data volume, seeded once
		// (their parts inlined by the agent).
		dest := layout.DataPath(primaryDir, name)
		zs.plan.files[k] = dest
		zs.add(z.Src, built, explicit, name, func(p string) {
			zs.seeds = append(zs.seeds, layout.SeedZone{Zone: bare(z.Name), View: v.Name, Source: p, Dest: dest, Refresh: !z.Spec.DynamicUpdate})
			if dyn >= 0 {
				zs.dyn[dyn].Source = p
			}
		})
	} else {
		zs.add(z.Src, built, explicit, name, func(p string) { zs.plan.files[k] = p })
	}
	zs.cache.Forget(z) // its text is made: let the RRs go
}

func (zs *zoneSet) policy(v *model.View, p *model.Policy) {
	pz, rs := zonefile.Policy(p)
	zs.failed(rs)
	if pz == nil {
		return
	}
	k := zoneKey{v.Name, p.ZoneName}
	zs.add(p.Src, pz, nil, fileName("rpz", v.Name, p.ZoneName), func(path string) { zs.plan.policies[k] = path })
}

// shard packs the zone files, in name order, into ConfigMaps under the
// budget, and tells every reference where its file landed.
func (zs *zoneSet) shard() []map[string]string {
	sort.Slice(zs.files, func(i, j int) bool { return zs.files[i].name < zs.files[j].name })
	sort.SliceStable(zs.refs, func(i, j int) bool { return zs.refs[i].name < zs.refs[j].name })
	shards, where := shardFiles(zs.files, ShardBudget)
	for _, r := range zs.refs {
		r.set(layout.ZoneFile(where[r.name], r.name))
	}
	sort.Slice(zs.seeds, func(i, j int) bool { return zs.seeds[i].Dest < zs.seeds[j].Dest })
	return shards
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
