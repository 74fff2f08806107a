package pkggen

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"golang.org/x/net/idna"

	"git.unkin.net/unkin/bind-fn/internal/vocab"
)

// A limit draw puts a value at, or just past, one of BIND's limits, or two
// values in a relation BIND checks (durations drawn relative to each
// other), or names from one shared pool so kinds collide. Each draw is
// tagged (Package.Drawn) so TestLimitCoverage can fail when one is never
// drawn. A draw past a limit is also a mistake (Package.Mistakes): the
// package should be refused.
type limitDraw struct {
	tag  string
	past bool // past the limit: fn-validate should refuse it
	// apply reports false when the package has nothing it applies to.
	apply func(g *gen, c *cluster) bool
}

// LimitTags are every tag a limit draw can give: TestLimitCoverage wants
// each drawn.
func LimitTags() []string {
	var out []string
	for _, d := range limitDraws {
		out = append(out, d.tag)
	}
	return out
}

// txtWire is n different TXT values, each of rdlen octets of RDATA but
// the last, of last octets.
func txtWire(n, rdlen, last int) []any {
	out := make([]any, n)
	for i := range out {
		size := rdlen
		if i == n-1 {
			size = last
		}
		var strs []string
		for left := size; left > 0; {
			k := min(left, 256) - 1 // a string of k octets takes k+1
			if left-(k+1) == 1 {
				k-- // never leave one octet: a string takes at least 1
			}
			strs = append(strs, `"`+strings.Repeat("w", k)+`"`)
			left -= k + 1
		}
		strs[0] = fmt.Sprintf(`"%03d%s`, i, strs[0][4:])
		out[i] = strings.Join(strs, " ")
	}
	return out
}

func txtN(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = fmt.Sprintf(`"v%d"`, i)
	}
	return out
}

// ownerOfLength is a relative owner whose absolute name (owner.zone, no
// trailing dot) is n characters long, or "" when the zone is too long.
func ownerOfLength(zone string, n int) string {
	if a, err := idna.Lookup.ToASCII(zone); err == nil {
		zone = a // an IDN zone's name is its punycode form in BIND
	}
	left := n - len(zone) - 1
	if left < 1 {
		return ""
	}
	return longName(left, "n")
}

// recordsAt adds records, built from the zone's name, to a primary zone of
// c without a dnssec policy.
func (g *gen) recordsAt(c *cluster, build func(zone string) []map[string]any) bool {
	for i := range g.objs {
		o := &g.objs[i]
		if o.Kind != "BindZone" || o.Spec["clusterRef"] != c.name || o.Spec["dnssecPolicyRef"] != nil {
			continue
		}
		if t, _ := o.Spec["type"].(string); t != "" && t != "primary" {
			continue
		}
		recs := build(o.Spec["zoneName"].(string))
		if recs == nil {
			continue
		}
		return g.addRecord(c, recs...)
	}
	return false
}

func rrl(g *gen, c *cluster, field string, v int) bool {
	o := g.obj("BindCluster", c.name)
	r, _ := o.Spec["rateLimit"].(map[string]any)
	if r == nil {
		r = map[string]any{"responsesPerSecond": 10}
		o.Spec["rateLimit"] = r
	}
	r[field] = v
	return true
}

func extra(g *gen, c *cluster, opt string) bool {
	o := g.obj("BindCluster", c.name)
	ex, _ := o.Spec["extraOptions"].([]any)
	name := strings.Fields(opt)[0]
	var keep []any
	for _, e := range ex {
		if strings.Fields(e.(string))[0] != name {
			keep = append(keep, e)
		}
	}
	o.Spec["extraOptions"] = append(keep, opt)
	return true
}

// policyWith sets fields on one of c's policies, every other duration
// left to BIND's defaults (the relations below are computed with them).
func policyWith(g *gen, c *cluster, set map[string]any) bool {
	if len(c.policies) == 0 {
		return false
	}
	p := g.obj("BindDNSSECPolicy", c.policies[0])
	for _, d := range vocab.PolicyDurations {
		delete(p.Spec, d.Field)
	}
	delete(p.Spec, "nsec3")
	for k, v := range set {
		p.Spec[k] = v
	}
	return true
}

// firstZoneName is the name and view of c's first zone, which a catalog,
// a policy or another zone then takes in another case.
func (g *gen) firstZoneName(c *cluster) (string, string) {
	for i := range g.objs {
		o := &g.objs[i]
		if o.Kind == "BindZone" && o.Spec["clusterRef"] == c.name {
			v, _ := o.Spec["viewRef"].(string)
			return o.Spec["zoneName"].(string), v
		}
	}
	return "", ""
}

func flipCase(s string) string {
	var b strings.Builder
	for i, r := range s {
		if i%2 == 0 {
			b.WriteString(strings.ToUpper(string(r)))
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// ZSK and KSK rollovers with every duration at BIND's default (docs/validation.md).
const (
	zskRollover = "P10DT1H5M"
	kskRollover = "P1DT2H"
)

var limitDraws = []limitDraw{
	// RRset size (max-records-per-type 100) and types per name (100)
	{"rrset=100", false, func(g *gen, c *cluster) bool {
		return g.addRecord(c, map[string]any{"name": "big", "type": "TXT", "values": txtN(100)})
	}},
	{"rrset=101", true, func(g *gen, c *cluster) bool {
		return g.addRecord(c, map[string]any{"name": "big", "type": "TXT", "values": txtN(101)})
	}},
	{"types=100", false, func(g *gen, c *cluster) bool {
		var recs []map[string]any
		for i := 0; i < 100; i++ {
			recs = append(recs, map[string]any{"name": "many", "type": fmt.Sprintf("TYPE%d", 65280+i), "values": strs(`\# 1 00`)})
		}
		return g.addRecord(c, recs...)
	}},
	{"types=101", true, func(g *gen, c *cluster) bool {
		var recs []map[string]any
		for i := 0; i < 101; i++ {
			recs = append(recs, map[string]any{"name": "many", "type": fmt.Sprintf("TYPE%d", 65280+i), "values": strs(`\# 1 00`)})
		}
		return g.addRecord(c, recs...)
	}},
	// label and name lengths
	{"label=63", false, func(g *gen, c *cluster) bool {
		return g.addRecord(c, map[string]any{"name": strings.Repeat("q", 63), "type": "A", "values": strs("192.0.2.63")})
	}},
	{"label=64", true, func(g *gen, c *cluster) bool {
		return g.addRecord(c, map[string]any{"name": strings.Repeat("q", 64), "type": "A", "values": strs("192.0.2.64")})
	}},
	{"name=253", false, func(g *gen, c *cluster) bool {
		return g.recordsAt(c, func(zone string) []map[string]any {
			if o := ownerOfLength(zone, 253); o != "" {
				return []map[string]any{{"name": o, "type": "TXT", "values": strs(`"x"`)}}
			}
			return nil
		})
	}},
	{"name=254", true, func(g *gen, c *cluster) bool {
		return g.recordsAt(c, func(zone string) []map[string]any {
			if o := ownerOfLength(zone, 254); o != "" {
				return []map[string]any{{"name": o, "type": "TXT", "values": strs(`"x"`)}}
			}
			return nil
		})
	}},
	// RRset wire size: BIND holds at most 65512 octets of RDATA and
	// lengths in one RRset (zonefile.maxRRsetWire), in 100 records here
	// (max-records-per-type).
	{"rrsetwire=65512", false, func(g *gen, c *cluster) bool {
		return g.addRecord(c, map[string]any{"name": "wide", "type": "TXT", "values": txtWire(100, 653, 665)})
	}},
	{"rrsetwire=65513", true, func(g *gen, c *cluster) bool {
		return g.addRecord(c, map[string]any{"name": "wide", "type": "TXT", "values": txtWire(100, 653, 666)})
	}},
	// a name in RDATA, written relative, of 255 or 256 octets once qualified
	{"target=253", false, func(g *gen, c *cluster) bool {
		return g.recordsAt(c, func(zone string) []map[string]any {
			if o := ownerOfLength(zone, 253); o != "" {
				return []map[string]any{{"name": "longtarget", "type": "CNAME", "values": strs(o)}}
			}
			return nil
		})
	}},
	{"target=254", true, func(g *gen, c *cluster) bool {
		return g.recordsAt(c, func(zone string) []map[string]any {
			if o := ownerOfLength(zone, 254); o != "" {
				return []map[string]any{{"name": "longtarget", "type": "CNAME", "values": strs(o)}}
			}
			return nil
		})
	}},
	{"txt=255", false, func(g *gen, c *cluster) bool {
		return g.addRecord(c, map[string]any{"name": "longtxt", "type": "TXT", "values": strs(`"` + strings.Repeat("t", 255) + `"`)})
	}},
	// a string of 256 is written as two (BIND loads it): not past a limit
	{"txt=256", false, func(g *gen, c *cluster) bool {
		return g.addRecord(c, map[string]any{"name": "longtxt", "type": "TXT", "values": strs(`"` + strings.Repeat("t", 256) + `"`)})
	}},
	{"ttl=2147483647", false, func(g *gen, c *cluster) bool {
		return g.addRecord(c, map[string]any{"name": "forever", "type": "A", "ttl": 2147483647, "values": strs("192.0.2.1")})
	}},
	{"ttl=2147483648", true, func(g *gen, c *cluster) bool {
		return g.addRecord(c, map[string]any{"name": "forever", "type": "A", "ttl": 2147483648, "values": strs("192.0.2.1")})
	}},
	// response rate limiting (DNS_RRL_MAX_*)
	{"rrl.responsesPerSecond=1000", false, func(g *gen, c *cluster) bool { return rrl(g, c, "responsesPerSecond", 1000) }},
	{"rrl.responsesPerSecond=1001", true, func(g *gen, c *cluster) bool { return rrl(g, c, "responsesPerSecond", 1001) }},
	{"rrl.window=3600", false, func(g *gen, c *cluster) bool { return rrl(g, c, "window", 3600) }},
	{"rrl.window=3601", true, func(g *gen, c *cluster) bool { return rrl(g, c, "window", 3601) }},
	{"rrl.slip=10", false, func(g *gen, c *cluster) bool { return rrl(g, c, "slip", 10) }},
	{"rrl.slip=11", true, func(g *gen, c *cluster) bool { return rrl(g, c, "slip", 11) }},
	// numeric maxima of extraOptions (BIND's check.c ranges)
	{"extra.max-transfer-time-in=40320", false, func(g *gen, c *cluster) bool { return extra(g, c, "max-transfer-time-in 40320") }},
	{"extra.max-transfer-time-in=40321", true, func(g *gen, c *cluster) bool { return extra(g, c, "max-transfer-time-in 40321") }},
	{"extra.max-ncache-ttl=604800", false, func(g *gen, c *cluster) bool { return extra(g, c, "max-ncache-ttl 604800") }},
	{"extra.max-ncache-ttl=604801", true, func(g *gen, c *cluster) bool { return extra(g, c, "max-ncache-ttl 604801") }},
	{"extra.min-cache-ttl=90", false, func(g *gen, c *cluster) bool { return extra(g, c, "min-cache-ttl 90") }},
	{"extra.min-cache-ttl=91", true, func(g *gen, c *cluster) bool { return extra(g, c, "min-cache-ttl 91") }},
	{"extra.max-records-per-type=0", false, func(g *gen, c *cluster) bool { return extra(g, c, "max-records-per-type 0") }},
	// the SOA serial (32-bit)
	{"soa.serial=4294967295", false, func(g *gen, c *cluster) bool { return g.soaSerial(c, 4294967295) }},
	{"soa.serial=4294967296", true, func(g *gen, c *cluster) bool { return g.soaSerial(c, 4294967296) }},
	// RSA key sizes
	{"bits=4096", false, func(g *gen, c *cluster) bool { return g.rsaBits(c, 4096) }},
	{"bits=4097", true, func(g *gen, c *cluster) bool { return g.rsaBits(c, 4097) }},
	{"bits=1024", false, func(g *gen, c *cluster) bool { return g.rsaBits(c, 1024) }},
	{"bits=1023", true, func(g *gen, c *cluster) bool { return g.rsaBits(c, 1023) }},
	// durations relative to each other: signatures-refresh under 90 % of
	// the validity (P10D: 216 hours is 90 %)
	{"relation:refresh<90%validity", false, func(g *gen, c *cluster) bool {
		return policyWith(g, c, map[string]any{"signaturesValidity": "P10D", "signaturesValidityDNSKEY": "P10D", "signaturesRefresh": "PT215H"})
	}},
	{"relation:refresh=90%validity", true, func(g *gen, c *cluster) bool {
		return policyWith(g, c, map[string]any{"signaturesValidity": "P10D", "signaturesValidityDNSKEY": "P10D", "signaturesRefresh": "PT216H"})
	}},
	// a key's lifetime against its rollover (BIND's defaults)
	{"relation:zsk-lifetime>rollover", false, func(g *gen, c *cluster) bool {
		return policyWith(g, c, map[string]any{"keys": []any{map[string]any{"role": "ksk", "algorithm": "ecdsap256sha256", "lifetime": "P1Y"}, map[string]any{"role": "zsk", "algorithm": "ecdsap256sha256", "lifetime": "P10DT1H6M"}}})
	}},
	{"relation:zsk-lifetime=rollover", true, func(g *gen, c *cluster) bool {
		return policyWith(g, c, map[string]any{"keys": []any{map[string]any{"role": "ksk", "algorithm": "ecdsap256sha256", "lifetime": "P1Y"}, map[string]any{"role": "zsk", "algorithm": "ecdsap256sha256", "lifetime": zskRollover}}})
	}},
	{"relation:ksk-lifetime>rollover", false, func(g *gen, c *cluster) bool {
		return policyWith(g, c, map[string]any{"keys": []any{map[string]any{"role": "ksk", "algorithm": "ecdsap256sha256", "lifetime": "P1DT2H1M"}, map[string]any{"role": "zsk", "algorithm": "ecdsap256sha256", "lifetime": "P1Y"}}})
	}},
	{"relation:ksk-lifetime=rollover", true, func(g *gen, c *cluster) bool {
		return policyWith(g, c, map[string]any{"keys": []any{map[string]any{"role": "ksk", "algorithm": "ecdsap256sha256", "lifetime": kskRollover}, map[string]any{"role": "zsk", "algorithm": "ecdsap256sha256", "lifetime": "P1Y"}}})
	}},
	// references through ACLs and views
	{"ref:acl-in-acl-in-view", false, func(g *gen, c *cluster) bool {
		if len(c.views) < 2 || c.views[0].obj == "" {
			return false
		}
		g.add("BindACL", "inner", map[string]any{"clusterRef": c.name, "addresses": strs("192.0.2.0/26")})
		g.add("BindACL", "outer", map[string]any{"clusterRef": c.name, "addresses": strs("inner", "198.51.100.0/24")})
		v := g.obj("BindView", c.views[0].obj)
		v.Spec["matchClients"] = append(strs("outer"), v.Spec["matchClients"].([]any)...)
		return true
	}},
	{"ref:acl-case", false, func(g *gen, c *cluster) bool {
		g.add("BindACL", "mixed", map[string]any{"clusterRef": c.name, "aclName": "Mixed_Case", "addresses": strs("192.0.2.0/24")})
		return g.useACL(c, "mixed_case")
	}},
	{"ref:key-in-acl-other-view", true, func(g *gen, c *cluster) bool {
		// a key inside an ACL of view 0 updates a zone of view 1
		if len(c.views) < 2 || c.views[0].obj == "" || len(c.views[1].primaries) == 0 {
			return false
		}
		obj, kn := g.key(c.name, "acl-key")
		delete(g.obj("BindTSIGKey", obj).Spec, "importExisting")
		g.add("BindACL", "keyed", map[string]any{"clusterRef": c.name, "addresses": strs("key "+kn, "192.0.2.0/28")})
		v := g.obj("BindView", c.views[0].obj)
		v.Spec["matchClients"] = append(strs("keyed"), v.Spec["matchClients"].([]any)...)
		z := g.obj("BindZone", c.views[1].primaries[0].Name)
		z.Spec["dynamicUpdate"], z.Spec["updateKeyRef"] = true, obj
		return true
	}},
	// one shared pool of names: kinds and case collide
	{"pool:catalog-named-like-zone", true, func(g *gen, c *cluster) bool {
		name, view := g.firstZoneName(c)
		if name == "" || c.resolver {
			return false
		}
		for _, o := range g.objs {
			if o.Kind == "BindCatalogZone" && o.Spec["clusterRef"] == c.name && o.Spec["viewRef"] == view && view != "" {
				return false
			}
		}
		spec := map[string]any{"clusterRef": c.name, "zoneName": flipCase(name)}
		if view != "" {
			spec["viewRef"] = view
		} else {
			for _, o := range g.objs {
				if o.Kind == "BindCatalogZone" && o.Spec["clusterRef"] == c.name {
					return false
				}
			}
		}
		g.add("BindCatalogZone", "catalog-pool", spec)
		return true
	}},
	{"pool:policy-named-like-zone", true, func(g *gen, c *cluster) bool {
		name, view := g.firstZoneName(c)
		if name == "" {
			return false
		}
		spec := map[string]any{"clusterRef": c.name, "zoneName": strings.ToUpper(name), "rules": []any{map[string]any{"name": "ads.example.net"}}}
		if view != "" {
			spec["viewRef"] = view
		}
		g.add("BindPolicy", "rpz-pool", spec)
		return true
	}},
	{"pool:zone-twice-in-case", true, func(g *gen, c *cluster) bool {
		name, view := g.firstZoneName(c)
		if name == "" {
			return false
		}
		spec := map[string]any{"clusterRef": c.name, "zoneName": flipCase(name), "nameservers": strs("ns1.example.net.")}
		if view != "" {
			spec["viewRef"] = view
		}
		g.add("BindZone", "zone-pool", spec)
		return true
	}},
	{"pool:acl-named-bind-fn-peers", true, func(g *gen, c *cluster) bool {
		g.add("BindACL", "peers-pool", map[string]any{"clusterRef": c.name, "aclName": "bind-fn-peers", "addresses": strs("192.0.2.0/24")})
		return true
	}},
	{"pool:key-acl-policy-one-name", false, func(g *gen, c *cluster) bool {
		// one name for a key, an ACL and a policy: three name spaces in BIND
		g.add("BindTSIGKey", "shared-name", map[string]any{"clusterRef": c.name})
		g.add("BindACL", "shared-name", map[string]any{"clusterRef": c.name, "addresses": strs("192.0.2.0/24")})
		if !c.resolver {
			g.add("BindDNSSECPolicy", "shared-name", map[string]any{"clusterRef": c.name})
		}
		return g.useACL(c, "shared-name")
	}},
}

func (g *gen) soaSerial(c *cluster, v int) bool {
	for i := range g.objs {
		o := &g.objs[i]
		if o.Kind == "BindZone" && o.Spec["clusterRef"] == c.name && (o.Spec["type"] == nil || o.Spec["type"] == "primary") {
			soa, _ := o.Spec["soa"].(map[string]any)
			if soa == nil {
				soa = map[string]any{}
				o.Spec["soa"] = soa
			}
			soa["serial"] = v
			return true
		}
	}
	return false
}

func (g *gen) rsaBits(c *cluster, bits int) bool {
	return policyWith(g, c, map[string]any{"keys": []any{map[string]any{"role": "csk", "algorithm": "rsasha256", "bits": bits}}})
}

// limit applies one applicable limit draw.
func (g *gen) limit(cs []*cluster) {
	c := cs[g.r.IntN(len(cs))]
	for _, i := range g.r.Perm(len(limitDraws)) {
		d := limitDraws[i]
		if d.apply(g, c) {
			g.drawn = append(g.drawn, d.tag)
			if d.past {
				g.mistakes = append(g.mistakes, d.tag)
			}
			return
		}
	}
}

// LimitCase is one limit draw on a small clean package: an authoritative
// cluster with two views (a zone each, and a signed zone in the second),
// a DNSSEC policy, nothing else to refuse. The package differential's
// TestLimitDraws asks BIND about each (at the limit: loads; past: refused
// by both). ok is false for an unknown tag.
func LimitCase(tag string) (Package, bool) {
	var d *limitDraw
	for i := range limitDraws {
		if limitDraws[i].tag == tag {
			d = &limitDraws[i]
		}
	}
	if d == nil {
		return Package{}, false
	}
	g := &gen{r: rand.New(rand.NewPCG(1, 2)), names: map[string]bool{}, types: zoneTypes()}
	c := &cluster{name: "lim", replicas: 1, policyMax: map[string]int{}}
	g.add("BindCluster", c.name, map[string]any{"replicas": 1, "mode": "authoritative"})
	g.add("BindDNSSECPolicy", "standard", map[string]any{"clusterRef": c.name})
	c.policies = []string{"standard"}
	g.add("BindView", "inside", map[string]any{"clusterRef": c.name, "order": 10, "matchClients": strs("192.0.2.0/24")})
	g.add("BindView", "outside", map[string]any{"clusterRef": c.name, "order": 20, "matchClients": strs("any")})
	in := &view{obj: "inside", zones: map[string]bool{"example.com": true}}
	out := &view{obj: "outside", zones: map[string]bool{"example.org": true, "signed.example": true}}
	in.primaries = []*Object{g.add("BindZone", "example-com", map[string]any{"clusterRef": c.name, "viewRef": "inside", "zoneName": "example.com", "nameservers": strs("ns1.example.net.")})}
	out.primaries = []*Object{g.add("BindZone", "example-org", map[string]any{"clusterRef": c.name, "viewRef": "outside", "zoneName": "example.org", "nameservers": strs("ns1.example.net.")})}
	g.add("BindZone", "signed-example", map[string]any{"clusterRef": c.name, "viewRef": "outside", "zoneName": "signed.example", "nameservers": strs("ns1.example.net."), "dnssecPolicyRef": "standard"})
	c.views = []*view{in, out}
	if !d.apply(g, c) {
		return Package{}, false
	}
	sortObjs(g.objs)
	p := Package{Objects: g.objs, Drawn: []string{tag}}
	if d.past {
		p.Mistakes = []string{tag}
	}
	return p, true
}
