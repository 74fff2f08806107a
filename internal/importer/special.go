package importer

import (
	"fmt"
	"sort"
	"strings"

	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/namedconf"
	"git.unkin.net/unkin/bind-fn/internal/plan"
)

// isCatalog says whether a primary zone's content is a catalog zone (RFC
// 9432: a version TXT record and member PTRs under zones.).
func isCatalog(name string, rrs []dns.RR) bool {
	version := dns.CanonicalName("version." + dns.Fqdn(name))
	if name == "." {
		version = "version."
	}
	for _, rr := range rrs {
		if t, ok := rr.(*dns.TXT); ok && dns.CanonicalName(t.Hdr.Name) == version {
			return true
		}
	}
	return false
}

// catalogZone maps a primary catalog zone to a BindCatalogZone. bind-fn
// writes the catalog itself from the zones of the view: member zones the
// catalog lists stay members (BindZone catalog default), other primary
// zones of the view are marked catalog: false at the end (Finish).
func (im *importer) catalogZone(s namedconf.Located, name, view string, v *v1alpha1.BindView, rrs []dns.RR, opts map[string]namedconf.Located) {
	c := &v1alpha1.BindCatalogZone{TypeMeta: tm(v1alpha1.KindBindCatalogZone), ObjectMeta: im.meta(im.objName("catalog", name))}
	c.Spec.ClusterRef = im.opt.Cluster
	c.Spec.ZoneName = name
	if v != nil {
		c.Spec.ViewRef = v.Name
	}
	members := map[string]bool{}
	zones := dns.CanonicalName("zones." + dns.Fqdn(name))
	for _, rr := range rrs {
		owner := dns.CanonicalName(rr.Header().Name)
		if !dns.IsSubDomain(zones, owner) || owner == zones {
			continue
		}
		// <id>.zones PTR <member> is a member; anything below it (group,
		// coo, allow-query/allow-transfer APL under ext) is a property of
		// the member, which bind-fn's catalog does not write.
		if p, ok := rr.(*dns.PTR); ok && dns.CountLabel(owner) == dns.CountLabel(zones)+1 {
			members[strings.ToLower(strings.TrimSuffix(p.Ptr, "."))] = true
			continue
		}
		im.res.Losses = append(im.res.Losses, Loss{Where: im.zonePath(opts["file"].Arg(1)) + ":1", What: clip(rr.String()),
			Why: "a catalog member property (RFC 9432 group, coo, or BIND's allow-query/allow-transfer APL): bind-fn's catalog lists members without properties; set the member zone's own allowQuery/allowTransfer"})
	}
	if at := opts["allow-transfer"]; at.Name() != "" {
		if els, ok := elements(at.Body); ok && len(els) == 1 && strings.HasPrefix(els[0], "key ") {
			c.Spec.TransferKeyRef = im.keyRef(at, strings.Trim(strings.TrimPrefix(els[0], "key "), `"`))
		} else {
			im.lose(at, "a catalog's allow-transfer other than one key (bind-fn: transferKeyRef)")
		}
	}
	for n, o := range opts {
		switch n {
		case "type", "file", "allow-transfer":
		case "notify":
			im.replaced(o, "bind-fn NOTIFYs the catalog's secondaries itself")
		case "also-notify":
			if els, ok := elements(o.Body); ok && len(im.withoutOwn(els, nil)) == 0 && im.bindfn {
				im.replaced(o, "bind-fn NOTIFYs its own secondaries")
			} else {
				im.lose(o, "a catalog's also-notify (bind-fn NOTIFYs its own secondaries only)")
			}
		default:
			if why, ok := zoneOwned[n]; ok {
				im.replaced(o, why)
			} else {
				im.lose(o, "catalog zone option bind-fn has no field for")
			}
		}
	}
	im.replaced(s, fmt.Sprintf("catalog zone: bind-fn writes its content from the view's zones (member labels are bind-fn's own hashes; %d members listed)", len(members)))
	im.catalogs[view] = members
	im.res.Zones = append(im.res.Zones, Zone{View: view, Name: name, File: im.zonePath(opts["file"].Arg(1)), RRs: rrs, Kind: "catalog"})
	im.add("catalog.yaml", c)
}

// policyActions are the RPZ CNAME targets of each action.
var policyActions = map[string]v1alpha1.PolicyAction{
	".": v1alpha1.ActionNXDOMAIN, "*.": v1alpha1.ActionNODATA, "rpz-passthru.": v1alpha1.ActionPassthru,
	"rpz-drop.": v1alpha1.ActionDrop, "rpz-tcp-only.": v1alpha1.ActionTCPOnly,
}

// policyZone maps a response-policy zone to a BindPolicy: CNAME triggers to
// rules, other records (local data) to records; the SOA and apex NS are
// bind-fn's own.
func (im *importer) policyZone(s namedconf.Located, name, view string, opts map[string]namedconf.Located) {
	f := opts["file"]
	rrs, err := im.readZone(name, view, f, opts["journal"])
	if err != nil {
		im.lose(f, fmt.Sprintf("cannot read the policy zone file: %v", err))
		return
	}
	p := &v1alpha1.BindPolicy{TypeMeta: tm(v1alpha1.KindBindPolicy), ObjectMeta: im.meta(im.objName("policy", name))}
	p.Spec.ClusterRef = im.opt.Cluster
	p.Spec.ZoneName = name
	if view != "" {
		p.Spec.ViewRef = im.viewObj(view)
	}
	for i, rz := range im.rpz[view] {
		if rz == name {
			p.Spec.Order = int32(i + 1)
		}
	}
	apex := dns.CanonicalName(dns.Fqdn(name))
	for _, g := range groups(rrs) {
		owner := dns.CanonicalName(g.owner)
		if g.typ == dns.TypeSOA || (g.typ == dns.TypeNS && owner == apex) {
			continue
		}
		rel := relName(g.owner, name)
		if g.typ == dns.TypeCNAME && len(g.rrs) == 1 {
			target := strings.ToLower(g.rrs[0].(*dns.CNAME).Target)
			if a, ok := policyActions[target]; ok {
				p.Spec.Rules = append(p.Spec.Rules, v1alpha1.PolicyRule{Name: rel, Action: a})
			} else {
				p.Spec.Rules = append(p.Spec.Rules, v1alpha1.PolicyRule{Name: rel, Action: v1alpha1.ActionRedirect, Target: g.rrs[0].(*dns.CNAME).Target})
			}
			if g.ttl != 60 {
				im.lose(f, fmt.Sprintf("%s: TTL %d: bind-fn's policy rules have TTL 60", rel, g.ttl))
			}
			continue
		}
		rec := v1alpha1.Record{Name: rel, Type: dns.TypeToString[g.typ]}
		t := int32(g.ttl)
		rec.TTL = &t
		for _, rr := range g.rrs {
			rec.Values = append(rec.Values, plan.Rdata(rr))
		}
		p.Spec.Records = append(p.Spec.Records, rec)
	}
	for n, o := range opts {
		switch n {
		case "type", "file":
		default:
			if why, ok := zoneOwned[n]; ok {
				im.replaced(o, why)
			} else if n == "allow-query" || n == "allow-transfer" || n == "notify" {
				im.replaced(o, "bind-fn serves policy zones to localhost only and transfers them to no one")
			} else {
				im.lose(o, "policy zone option bind-fn has no field for")
			}
		}
	}
	im.res.Zones = append(im.res.Zones, Zone{View: view, Name: name, File: im.zonePath(f.Arg(1)), RRs: rrs, Kind: "policy"})
	im.add("policies.yaml", p)
}

func (im *importer) viewObj(view string) string {
	for _, o := range im.res.Objects["views.yaml"] {
		v := o.(*v1alpha1.BindView)
		if v.Spec.ViewName == view || (v.Spec.ViewName == "" && v.Name == view) {
			return v.Name
		}
	}
	return view
}

// finish marks primary zones outside their view's catalog.
func (im *importer) finish() {
	var views []string
	for v := range im.catalogs {
		views = append(views, v)
	}
	sort.Strings(views)
	for _, v := range views {
		members := im.catalogs[v]
		for k, z := range im.zoneObj {
			view, name, _ := strings.Cut(k, "/")
			if view != v || z.Spec.Type != v1alpha1.ZonePrimary || members[name] {
				continue
			}
			f := false
			z.Spec.Catalog = &f
		}
	}
}
