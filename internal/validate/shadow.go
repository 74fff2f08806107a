package validate

import (
	"fmt"
	"strings"

	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/model"
)

// checkShadowedRecords: named answers a name from the most specific zone of
// the view that holds it, so a record written in a zone whose name lies in
// a child zone the same view also serves is never served: the
// child answers. A DNSRecord of that kind was re-sent by the agent on every
// pass. Only the delegation belongs in the parent: NS and DS at the
// child's apex, and glue (A, AAAA of the name servers the parent's NS name).
func checkShadowedRecords(c *model.Cluster) diag.Results {
	var rs diag.Results
	for _, v := range c.Views {
		// The served zones by lower-case name, and every name that has a
		// served zone below it: a lookup per label, not a scan of every
		// zone per zone (100,000 zones in a view, issue #35).
		served := map[string]*model.Zone{}
		for _, z := range v.Zones {
			switch z.Spec.Type {
			case v1alpha1.ZonePrimary, v1alpha1.ZoneSecondary, v1alpha1.ZoneStub:
				if n := strings.ToLower(z.Name); served[n] == nil {
					served[n] = z
				}
			}
		}
		above := map[string]bool{}
		for n := range served {
			for a, ok := parentName(n); ok; a, ok = parentName(a) {
				if above[a] {
					break
				}
				above[a] = true
			}
		}
		for _, p := range v.Zones {
			pn := strings.ToLower(p.Name)
			if p.Spec.Type != v1alpha1.ZonePrimary || len(p.RRsets) == 0 || !above[pn] {
				continue
			}
			glue := map[string]bool{} // targets of the parent's NS RRsets below its apex
			for _, s := range p.RRsets {
				if o := recordOwner(s.Name, p.Name); strings.EqualFold(s.Type, "NS") && o != p.Name {
					for _, t := range s.Values {
						glue[recordOwner(strings.TrimSpace(t), p.Name)] = true
					}
				}
			}
			for _, s := range p.RRsets {
				o := recordOwner(s.Name, p.Name)
				child := deepestBelow(served, strings.ToLower(o), pn)
				if child == nil || delegationData(o, strings.ToUpper(s.Type), child.Name, glue) {
					continue
				}
				rs.Errorf(s.Src, s.Field+".name", "cannot serve %s %s from zone %q: the name lies in zone %q, which this cluster also serves in the same view (BindZone %q), and named answers it from that zone, so this record would never be served; move it to zone %q (a DNSRecord with spec.zoneRef %q, or that BindZone's spec.records), or remove it (only NS and DS at %q and glue A/AAAA below a delegation belong in %q)",
					o, strings.ToUpper(s.Type), strings.TrimSuffix(p.Name, "."), strings.TrimSuffix(child.Name, "."), child.Src.Ref.Name,
					strings.TrimSuffix(child.Name, "."), child.Src.Ref.Name, strings.TrimSuffix(child.Name, "."), strings.TrimSuffix(p.Name, "."))
			}
		}
	}
	return rs
}

// parentName is an absolute name without its first label, false for the root.
func parentName(n string) (string, bool) {
	if n == "." || n == "" {
		return "", false
	}
	if i, end := dns.NextLabel(n, 0); !end {
		return n[i:], true
	}
	return ".", true
}

// deepestBelow is the served zone holding owner (lower case) that lies
// strictly below the zone named parent: the first served name met walking
// up from owner, before parent. nil when owner is not below parent or no
// such zone is served.
func deepestBelow(served map[string]*model.Zone, owner, parent string) *model.Zone {
	if !dns.IsSubDomain(parent, owner) {
		return nil
	}
	for n, ok := owner, true; ok && n != parent; n, ok = parentName(n) {
		if z := served[n]; z != nil {
			return z
		}
	}
	return nil
}

// delegationData: NS or DS at the child's apex, or glue (the address of a
// name server a delegation of the parent names).
func delegationData(owner, typ, child string, glue map[string]bool) bool {
	if owner == child {
		return typ == "NS" || typ == "DS"
	}
	return (typ == "A" || typ == "AAAA") && glue[owner]
}

// recordOwner is an RRset's owner name as the zone file builder qualifies
// it: lower case, absolute ("@" and "" are the apex).
func recordOwner(name, origin string) string {
	n := strings.ToLower(name)
	switch {
	case n == "" || n == "@":
		return origin
	case dns.IsFqdn(n):
		return n
	}
	return fmt.Sprintf("%s.%s", n, origin)
}
