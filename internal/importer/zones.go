package importer

import (
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/namedconf"
	"git.unkin.net/unkin/bind-fn/internal/plan"
	"git.unkin.net/unkin/bind-fn/internal/vocab"
	"git.unkin.net/unkin/bind-fn/internal/zonefile"
)

// Zone is a zone the import read from a file, kept for Check.
type Zone struct {
	View, Name string
	File       string
	RRs        []dns.RR
	// Kind is "zone", "policy" or "catalog".
	Kind string
}

// zoneOwned are zone options bind-fn sets itself.
var zoneOwned = map[string]string{
	"file":          "bind-fn places the zone file",
	"key-directory": "pod path", "inline-signing": "implied by dnssecPolicyRef", "journal": "pod path",
	"masterfile-format": "bind-fn writes text zone files", "allow-notify": "bind-fn admits NOTIFY by key",
	"serial-update-method": "bind-fn sets it: unixtime for signed zones (a primary that lost its volume re-signs above the secondaries), BIND's default otherwise",
}

// zone maps one zone statement (of view v, nil outside views): a response-
// policy zone or a catalog to their own objects, a root hint zone to the
// hints judged later, every other zone to a BindZone by its type
// (primaryZone, secondaryZone, forwardZone), then its remaining options one
// by one (zoneOption).
func (im *importer) zone(zs zoneStmt, v *v1alpha1.BindView) {
	s, name, view := zs.stmt, zs.name, zs.view
	if len(s.Words) > 2 && !strings.EqualFold(zs.class, "in") {
		im.lose(s, "a zone of a class other than IN")
		return
	}
	feed, done := im.responsePolicyZone(zs)
	if done {
		return
	}
	objPrefix := name
	if im.views > 1 && view != "" {
		objPrefix = view + "-" + name
	}
	z := &v1alpha1.BindZone{TypeMeta: tm(v1alpha1.KindBindZone), ObjectMeta: im.meta(im.objName("zone", objPrefix))}
	z.Spec.ClusterRef = im.opt.Cluster
	z.Spec.ZoneName = name
	z.Spec.ResponsePolicy = feed
	if v != nil {
		z.Spec.ViewRef = v.Name
	}
	zs.use("notify") // notify.go, for the types that send NOTIFY
	var rrs []dns.RR
	switch zs.typ {
	case "primary":
		if rrs, done = im.primaryZone(&zs, z, v); done {
			return
		}
	case "secondary", "stub":
		if !im.secondaryZone(&zs, z) {
			return
		}
	case "forward":
		im.forwardZone(&zs, z)
	case "hint":
		im.hints = append(im.hints, hint{stmt: s, view: view, file: zs.opts["file"].Arg(1)})
		return
	default:
		im.lose(s, fmt.Sprintf("zone type %q has no BindZone type (primary, secondary, stub, forward)", zs.typ))
		return
	}
	for _, o := range zs.order {
		if !zs.used[o] {
			im.zoneOption(&zs, z, zs.opts[o])
		}
	}
	if z.Spec.DynamicUpdate && len(z.Spec.Records) > 0 && !im.bindfn {
		// bind-fn's agent owns a dynamic zone's spec.records: it puts them
		// back by UPDATE, so a DHCP server's or an application's later
		// change to one of these names would be undone.
		im.lose(zs.opts["file"], fmt.Sprintf("the %d existing RRsets of dynamic zone %s become BindZone spec.records, which the agent converges: later UPDATEs (DHCP, applications) to these names are reverted; bind-fn has no field for zone data it does not own", len(z.Spec.Records), name))
	}
	im.add("zones.yaml", z)
	im.res.ZoneWhere[z.Name] = s.Where()
	im.zoneObj[zoneKey(view, name)] = z
	if z.Spec.Type != v1alpha1.ZoneForward {
		im.notify(s, view, z, rrs, zs.opts["notify"])
	}
}

// responsePolicyZone places a zone the view's response-policy lists: a
// primary one becomes a BindPolicy (done), a secondary one a feed (a
// BindZone with responsePolicy: true); any other type keeps its zone and
// loses its rules.
func (im *importer) responsePolicyZone(zs zoneStmt) (feed, done bool) {
	for _, rz := range im.rpz[zs.view] {
		if rz != zs.name {
			continue
		}
		if zs.typ == "primary" {
			im.policyZone(zs.stmt, zs.name, zs.view, zs.opts)
			return false, true
		}
		if zs.typ != "secondary" {
			im.lose(zs.stmt, "a "+zs.typ+" response-policy zone: bind-fn lists BindPolicies and secondary zones (responsePolicy: true) in response-policy; the zone is kept as a "+zs.typ+" zone, but its rules no longer apply")
			continue
		}
		// A feed (a secondary RPZ from a vendor or another server):
		// BindZone spec.responsePolicy, listed after the BindPolicies in
		// zone order. BIND applies the first zone that matches: an order
		// that differs is a loss.
		feed = true
		if im.rpzFeed[zs.view] == nil {
			im.rpzFeed[zs.view] = map[string]namedconf.Located{}
		}
		im.rpzFeed[zs.view][zs.name] = zs.stmt
	}
	return feed, false
}

// primaryZone reads a primary zone's file into z's records; a catalog
// zone becomes a BindCatalogZone instead. done: nothing more to map (a
// catalog, or a loss).
func (im *importer) primaryZone(zs *zoneStmt, z *v1alpha1.BindZone, v *v1alpha1.BindView) (rrs []dns.RR, done bool) {
	name, view := zs.name, zs.view
	z.Spec.Type = v1alpha1.ZonePrimary
	f := zs.opts["file"]
	if f.Name() == "" {
		im.lose(zs.stmt, "a primary zone without a file")
		return nil, true
	}
	rrs, err := im.readZone(name, view, f, zs.opts["journal"])
	var unread *UnreadableError
	if errors.As(err, &unread) {
		for _, r := range unread.Records {
			im.res.Losses = append(im.res.Losses, Loss{Where: im.zonePath(f.Arg(1)) + ":1", What: clip(r),
				Why: "a record bind-fn cannot read (miekg/dns lacks its type or form): zone " + name + " is carried without it; write it as TYPEnnn \\# (RFC 3597) to keep it"})
		}
		err = nil
	}
	if err != nil {
		im.lose(f, fmt.Sprintf("cannot read the zone file of zone %s: %v", name, err))
		return nil, true
	}
	if isCatalog(name, rrs) {
		im.catalogZone(zs.stmt, name, view, v, rrs, zs.opts)
		return nil, true
	}
	im.zoneRecords(z, rrs, f)
	if _, own := zs.opts["also-notify"]; !own {
		// A zone without its own also-notify inherits its view's, else
		// options' (BIND's inheritance).
		if l, ok := im.alsoNotify[view]; ok {
			z.Spec.AlsoNotify = append([]string(nil), l...)
		} else if l, ok := im.alsoNotify[""]; ok {
			z.Spec.AlsoNotify = append([]string(nil), l...)
		}
	}
	im.res.Zones = append(im.res.Zones, Zone{View: view, Name: name, File: im.zonePath(f.Arg(1)), RRs: rrs, Kind: "zone"})
	zs.use("file")
	return rrs, false
}

// secondaryZone maps a secondary or stub zone's primaries list (named
// lists expanded, one transfer key); false when there is none to read.
func (im *importer) secondaryZone(zs *zoneStmt, z *v1alpha1.BindZone) bool {
	z.Spec.Type = v1alpha1.ZoneType(zs.typ)
	p := zs.primaries()
	els, ok := elements(p.Body)
	if !ok || len(els) == 0 {
		im.lose(zs.stmt, "a "+zs.typ+" zone without a primaries list bind-fn can read")
		return false
	}
	els = im.expand(els)
	var key string
	for i, e := range els {
		if before, k, ok := strings.Cut(e, " key "); ok {
			k = strings.Trim(k, `"`)
			if key != "" && k != key {
				im.lose(p, "primaries with different keys (bind-fn has one transferKeyRef per zone)")
			}
			key = k
			els[i] = before
		}
	}
	z.Spec.Primaries = els
	if key != "" {
		z.Spec.TransferKeyRef = im.keyRef(p, key)
	}
	zs.use(vocab.PrimariesList, "file")
	for old := range vocab.ListAliases {
		zs.use(old)
	}
	if f := zs.opts["file"]; f.Name() != "" {
		im.replaced(f, "bind-fn keeps transferred zones on the data volume")
	}
	return true
}

// forwardZone maps a forward zone's forwarders and forward mode.
func (im *importer) forwardZone(zs *zoneStmt, z *v1alpha1.BindZone) {
	z.Spec.Type = v1alpha1.ZoneForward
	if f := zs.opts["forwarders"]; f.Name() != "" {
		els, ok := elements(f.Body)
		if !ok {
			im.lose(f, "a nested forwarders list")
		}
		z.Spec.Forwarders = els
	}
	if f := zs.opts["forward"]; f.Name() != "" {
		only := f.Arg(1) == "only"
		z.Spec.ForwardOnly = &only
	}
	zs.use("forwarders", "forward")
}

// zoneOption maps one zone option its type left: access lists, dynamic
// updates, the DNSSEC policy; what bind-fn sets itself is replaced, the
// rest lost.
func (im *importer) zoneOption(zs *zoneStmt, z *v1alpha1.BindZone, b namedconf.Located) {
	name := zs.name
	switch o := b.Name(); o {
	case "allow-transfer", "also-notify", "allow-query":
		els, ok := elements(b.Body)
		if !ok {
			im.lose(b, "a nested address match list")
			return
		}
		// bind-fn's own: the view's transfer key, the agent's lists.
		els = im.withoutOwn(els, map[string]bool{im.transferKey(zs.view): true})
		switch o {
		case "allow-transfer":
			z.Spec.AllowTransfer = els
		case "also-notify":
			z.Spec.AlsoNotify = im.expand(els) // named server lists, inlined
		default:
			z.Spec.AllowQuery = els
		}
	case "allow-update":
		els, ok := elements(b.Body)
		if ok && len(els) == 1 && els[0] == "none" {
			return
		}
		if ok && len(els) == 1 && strings.HasPrefix(els[0], "key ") {
			z.Spec.DynamicUpdate = true
			z.Spec.UpdateKeyRef = im.keyRef(b, strings.Trim(strings.TrimPrefix(els[0], "key "), `"`))
			return
		}
		im.lose(b, "allow-update other than one key: zone "+name+" is imported without dynamic updates, so every UPDATE it accepted is refused (bind-fn: dynamicUpdate with one updateKeyRef)")
	case "update-policy":
		if k, ok := simpleUpdatePolicy(b); ok {
			z.Spec.DynamicUpdate = true
			z.Spec.UpdateKeyRef = im.keyRef(b, k)
			im.lose(b, "update-policy of zone "+name+" becomes allow-update { key "+k+"; } (the key may update any name in the zone)")
			return
		}
		im.lose(b, "an update-policy bind-fn cannot express (one key granted the whole zone): zone "+name+" is imported without dynamic updates")
	case "dnssec-policy":
		im.zonePolicy(zs, z, b)
	default:
		if why, ok := zoneOwned[o]; ok {
			im.replaced(b, why)
			return
		}
		im.lose(b, "zone option bind-fn has no field for")
	}
}

// zonePolicy maps a zone's dnssec-policy to its BindDNSSECPolicy (BIND's
// built-in "default" made one); a signed primary's keys and served serial
// come along.
func (im *importer) zonePolicy(zs *zoneStmt, z *v1alpha1.BindZone, b namedconf.Located) {
	p, ok := im.policies[b.Arg(1)]
	if !ok && b.Arg(1) == "default" {
		p, ok = im.defaultPolicy(b), true
	}
	if !ok {
		if b.Arg(1) != "none" {
			im.lose(b, fmt.Sprintf("dnssec-policy %q is not defined in this configuration (built-in policies such as \"default\" have no BindDNSSECPolicy)", b.Arg(1)))
		}
		return
	}
	z.Spec.DNSSECPolicyRef = p
	if z.Spec.Type == v1alpha1.ZonePrimary && !im.bindfn {
		im.signedKeys(b, zs.name, zs.opts)
		im.signedSerial(z, zs.opts["file"])
	}
}

func zoneKey(view, name string) string { return view + "/" + name }

// defaultPolicy is BIND's built-in dnssec-policy "default" as a
// BindDNSSECPolicy: one CSK, ecdsap256sha256, lifetime unlimited, NSEC,
// BIND's default timings — what a BindDNSSECPolicy without fields renders.
// named.conf cannot redefine "default", so it is named imported-default.
func (im *importer) defaultPolicy(b namedconf.Located) string {
	if p, ok := im.policies["default"]; ok {
		return p
	}
	p := &v1alpha1.BindDNSSECPolicy{TypeMeta: tm(v1alpha1.KindBindDNSSECPolicy), ObjectMeta: im.meta(im.objName("dnssec", "imported-default"))}
	p.Spec.ClusterRef = im.opt.Cluster
	p.Spec.Keys = []v1alpha1.DNSSECKey{{Role: "csk", Algorithm: "ecdsap256sha256", Lifetime: "unlimited"}}
	im.policies["default"] = p.Name
	im.add("dnssec.yaml", p)
	im.replaced(b, "BIND's built-in policy \"default\" becomes BindDNSSECPolicy "+p.Name+" (the same keys and timings; named.conf cannot redefine \"default\")")
	return p.Name
}

// noteJournal reports a zone's journal when miekg/dns reads the zone
// (BIND's reader applies it): the UPDATEs applied since named last wrote
// the file (a dynamic zone's, every 15 minutes or at rndc sync) are only in
// the journal, so the file alone is older than what the server serves. The
// journal is the zone's `journal` option, else the file's name + .jnl.
func (im *importer) noteJournal(zone, view string, f, journal namedconf.Located) {
	if im.opt.Exists == nil {
		return
	}
	p := im.zonePath(f.Arg(1)) + ".jnl"
	if journal.Name() != "" {
		p = im.zonePath(journal.Arg(1))
	}
	if !im.opt.Exists(p) {
		return
	}
	sync, axfr := "rndc sync -clean "+zone, zone
	if view != "" {
		sync, axfr = sync+" IN "+view, view+"/"+zone
	}
	im.lose(f, "zone "+zone+" has a journal ("+p+"): the UPDATEs since named last wrote the file are only there, and without named-checkzone the import reads the file alone; carry them: import where named-checkzone is installed (it applies the journal), or run `"+sync+"` on the server first, or transfer the zone live: `bind-fn import --axfr SERVER --zone "+axfr+"`")
}

// simpleUpdatePolicy reads `update-policy { grant K zonesub ANY; };`.
func simpleUpdatePolicy(b namedconf.Located) (string, bool) {
	if len(b.Body) != 1 {
		return "", false
	}
	r := b.Body[0]
	if r.Name() != "grant" || len(r.Words) != 4 || !strings.EqualFold(r.Arg(2), "zonesub") || !strings.EqualFold(r.Arg(3), "any") {
		return "", false
	}
	return r.Arg(1), true
}

// keyRef is the BindTSIGKey object of a key name, or a loss.
func (im *importer) keyRef(s namedconf.Located, key string) string {
	if n, ok := im.keyObj[key]; ok {
		return n
	}
	im.lose(s, fmt.Sprintf("key %q is not defined in this configuration", key))
	return im.objName("key", key)
}

func (im *importer) zonePath(file string) string {
	if filepath.IsAbs(file) || im.zoneDir == "" {
		return file
	}
	return filepath.Join(im.zoneDir, file)
}

// readZone reads a zone as BIND serves it, its file and journal
// (Options.ReadZone), or the file alone with miekg/dns, whose differences
// from BIND the file may hit are losses, and a journal beside it too.
func (im *importer) readZone(origin, view string, f, journal namedconf.Located) ([]dns.RR, error) {
	p := im.zonePath(f.Arg(1))
	if im.opt.ReadZone != nil {
		j := ""
		if journal.Name() != "" {
			j = im.zonePath(journal.Arg(1))
		}
		return im.opt.ReadZone(origin, p, j, im.zoneDir)
	}
	data, err := im.opt.Read(p)
	if err != nil {
		return nil, err
	}
	rrs, err := ParseZone(origin, p, data, im.zoneDir)
	if err == nil {
		im.res.Losses = append(im.res.Losses, bindOnly(p, data)...)
		im.noteJournal(origin, view, f, journal)
	}
	return rrs, err
}

// rrsetOf groups RRs by owner and type, in file order of first appearance.
type rrGroup struct {
	owner string
	typ   uint16
	ttl   uint32
	rrs   []dns.RR
}

func groups(rrs []dns.RR) []*rrGroup {
	idx := map[string]*rrGroup{}
	var out []*rrGroup
	for _, rr := range rrs {
		h := rr.Header()
		k := dns.CanonicalName(h.Name) + "/" + dns.TypeToString[h.Rrtype]
		g := idx[k]
		if g == nil {
			g = &rrGroup{owner: h.Name, typ: h.Rrtype, ttl: h.Ttl}
			idx[k] = g
			out = append(out, g)
		}
		g.rrs = append(g.rrs, rr)
	}
	return out
}

// checkFeedOrder: bind-fn lists a view's BindPolicies first, then its
// feeds (secondary zones with responsePolicy) by name. BIND applies the
// first response-policy zone that matches, so a feed the original lists
// before a policy, or out of name order, is a loss at the feed.
func (im *importer) checkFeedOrder() {
	for view, feeds := range im.rpzFeed {
		list := im.rpz[view]
		for i, rz := range list {
			s, ok := feeds[rz]
			if !ok {
				continue
			}
			why := ""
			for j := 0; j < len(list) && why == ""; j++ {
				_, other := feeds[list[j]]
				switch {
				case j > i && !other:
					why = "before policy zone " + list[j]
				case j < i && other && list[j] > rz:
					why = "after feed " + list[j]
				}
			}
			if why != "" {
				im.lose(s, "response-policy zone "+rz+" comes "+why+" in the original's response-policy; bind-fn lists the BindPolicies first, then the feeds by name, and BIND applies the first zone that matches: a name both match may get another answer")
			}
		}
	}
}

// relName is an owner relative to the zone: "@" at the apex.
func relName(owner, zone string) string {
	o, z := dns.CanonicalName(owner), dns.CanonicalName(zone)
	if o == z {
		return "@"
	}
	return strings.TrimSuffix(strings.TrimSuffix(owner, "."), "."+strings.TrimSuffix(zone, "."))
}

// ownerName is an owner as a zone's record names it: relative to the zone
// where that reads back as the same name without a result, absolute where
// the relative form would repeat the zone's name or end in a top-level
// domain (foo.com.example.com. written foo.com), which fn-validate reports
// as a likely missing dot.
func ownerName(owner, zone string) string {
	rel := relName(owner, zone)
	if zonefile.RelativeSlip(rel, zone) {
		return dns.Fqdn(owner)
	}
	return rel
}

// zoneRecords fills a primary zone from its RRs: the SOA into spec.soa, the
// apex NS into nameservers, every other RRset into records.
func (im *importer) zoneRecords(z *v1alpha1.BindZone, rrs []dns.RR, f namedconf.Located) {
	gs := groups(rrs)
	// The most common TTL is the zone's default; other RRsets say theirs.
	count := map[uint32]int{}
	for _, g := range gs {
		count[g.ttl]++
	}
	var def uint32
	best := -1
	for ttl, n := range count {
		if n > best || (n == best && ttl < def) {
			def, best = ttl, n
		}
	}
	d := int32(def)
	z.Spec.DefaultTTL = &d
	apex := dns.CanonicalName(z.Spec.ZoneName)
	for _, g := range gs {
		switch {
		case g.typ == dns.TypeSOA:
			soa := g.rrs[0].(*dns.SOA)
			r, rt, ex, mi := int32(soa.Refresh), int32(soa.Retry), int32(soa.Expire), int32(soa.Minttl)
			// The serial is carried: the server's secondaries hold it and
			// transfer only a higher one.
			serial := soa.Serial
			z.Spec.SOA = &v1alpha1.SOASpec{PrimaryNS: soa.Ns, Email: mailOf(soa.Mbox), Serial: &serial, Refresh: &r, Retry: &rt, Expire: &ex, Minimum: &mi}
			if g.ttl != def {
				im.lose(f, fmt.Sprintf("SOA TTL %d differs from the zone's default TTL %d: bind-fn gives the SOA the default", g.ttl, def))
			}
			continue
		case g.typ == dns.TypeNS && dns.CanonicalName(g.owner) == apex:
			for _, rr := range g.rrs {
				z.Spec.Nameservers = append(z.Spec.Nameservers, rr.(*dns.NS).Ns)
			}
			sort.Strings(z.Spec.Nameservers)
			if g.ttl != def {
				im.lose(f, fmt.Sprintf("apex NS TTL %d differs from the zone's default TTL %d: bind-fn gives the apex NS the default", g.ttl, def))
			}
			continue
		}
		rec := v1alpha1.Record{Name: ownerName(g.owner, z.Spec.ZoneName), Type: dns.TypeToString[g.typ]}
		if rec.Type == "" {
			rec.Type = fmt.Sprintf("TYPE%d", g.typ)
		}
		if g.ttl != def {
			t := int32(g.ttl)
			rec.TTL = &t
		}
		for _, rr := range g.rrs {
			rec.Values = append(rec.Values, plan.Rdata(rr))
		}
		z.Spec.Records = append(z.Spec.Records, rec)
	}
}

// mailOf turns an SOA RNAME into an address: the first unescaped dot is the @.
// A one-label RNAME ("h.") has no @: it stays the absolute name it is.
func mailOf(mbox string) string {
	m := strings.TrimSuffix(mbox, ".")
	for i := 0; i < len(m); i++ {
		if m[i] == '\\' {
			i++
			continue
		}
		if m[i] == '.' {
			return strings.ReplaceAll(m[:i], `\.`, ".") + "@" + m[i+1:]
		}
	}
	return dns.Fqdn(m)
}

// ZoneDir is where named finds relative zone files: the options
// directory, resolved against base (named's working directory), else base.
func ZoneDir(conf []namedconf.Located, base string) string {
	for _, s := range conf {
		if s.Name() != "options" {
			continue
		}
		for _, b := range s.Body {
			if b.Name() == "directory" {
				d := b.Arg(1)
				if !filepath.IsAbs(d) {
					d = filepath.Join(base, d)
				}
				return d
			}
		}
	}
	return base
}

// transferKey is the key bind-fn's render uses for transfers in a view
// (its own, or the catalog's), "" for a configuration not from bind-fn.
func (im *importer) transferKey(view string) string {
	if !im.bindfn {
		return ""
	}
	if k, ok := im.viewKey[view]; ok {
		return k
	}
	for k := range im.own { // without views: the cluster's own transfer key
		if k != "bind-fn-rndc" {
			return k
		}
	}
	return ""
}
