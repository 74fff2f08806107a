package pkggen

import (
	"strings"
)

// A mistake is a realistic error a user makes. apply reports false when the
// package has nothing it applies to.
type mistake struct {
	name  string
	apply func(g *gen, c *cluster) bool
}

// mistakes are tried in a random order until one applies.
var mistakes = []mistake{
	{"bad-ipv4", func(g *gen, c *cluster) bool {
		return g.addRecord(c, map[string]any{"name": "bad", "type": "A", "values": strs("192.0.2.300")})
	}},
	{"cname-at-apex", func(g *gen, c *cluster) bool {
		return g.addRecord(c, map[string]any{"name": "@", "type": "CNAME", "values": strs("other.example.net.")})
	}},
	{"cname-and-other-data", func(g *gen, c *cluster) bool {
		return g.addRecord(c, map[string]any{"name": "both", "type": "CNAME", "values": strs("other.example.net.")},
			map[string]any{"name": "both", "type": "TXT", "values": strs(`"x"`)})
	}},
	{"rkey-flags", func(g *gen, c *cluster) bool {
		return g.addRecord(c, map[string]any{"name": "rkey", "type": "RKEY", "values": strs("257 3 13 AwEAAbdxyhNuSutc5EMzxTs9LBPCIkOFH8cIvM4p9+LrV4e19WzK00+CI6zBCQTd")})
	}},
	{"label-over-63", func(g *gen, c *cluster) bool {
		return g.addRecord(c, map[string]any{"name": strings.Repeat("x", 64), "type": "TXT", "values": strs(`"x"`)})
	}},
	{"txt-over-255", func(g *gen, c *cluster) bool {
		return g.addRecord(c, map[string]any{"name": "long", "type": "TXT", "values": strs(`"` + strings.Repeat("y", 256) + `"`)})
	}},
	{"srv-target-not-hostname", func(g *gen, c *cluster) bool {
		return g.addRecord(c, map[string]any{"name": "_sip._udp", "type": "SRV", "values": strs("10 5 5060 sip_proxy.example.net.")})
	}},
	{"ptr-target-not-hostname", func(g *gen, c *cluster) bool {
		return g.addRecord(c, map[string]any{"name": "ptr", "type": "PTR", "values": strs("host_1.example.net.")})
	}},
	{"mx-target-unicode", func(g *gen, c *cluster) bool {
		return g.addRecord(c, map[string]any{"name": "@", "type": "MX", "values": strs("10 mail.bücher.example.")})
	}},
	{"escaped-owner-address", func(g *gen, c *cluster) bool {
		return g.addRecord(c, map[string]any{"name": `host\@office`, "type": "A", "values": strs("192.0.2.7")})
	}},
	{"dollar-owner-unescaped", func(g *gen, c *cluster) bool {
		return g.addRecord(c, map[string]any{"name": "$ttl", "type": "TXT", "values": strs(`"x"`)})
	}},
	{"owner-outside-zone", func(g *gen, c *cluster) bool {
		return g.addRecord(c, map[string]any{"name": "www.elsewhere.test.", "type": "A", "values": strs("192.0.2.8")})
	}},
	{"ttl-over-max-zone-ttl", func(g *gen, c *cluster) bool {
		for i := range g.objs {
			o := &g.objs[i]
			if o.Kind != "BindZone" || o.Spec["clusterRef"] != c.name || o.Spec["dnssecPolicyRef"] == nil {
				continue
			}
			p := g.obj("BindDNSSECPolicy", o.Spec["dnssecPolicyRef"].(string))
			p.Spec["maxZoneTTL"] = "PT1H"
			recs, _ := o.Spec["records"].([]any)
			o.Spec["records"] = append(recs, map[string]any{"name": "slow", "type": "TXT", "ttl": 86400, "values": strs(`"x"`)})
			return true
		}
		return false
	}},
	{"bad-duration", func(g *gen, c *cluster) bool {
		for i := range g.objs {
			if o := &g.objs[i]; o.Kind == "BindDNSSECPolicy" {
				o.Spec[g.pick("dnskeyTTL", "publishSafety", "purgeKeys", "maxZoneTTL")] = g.pick("P1H", "PT5D", "P1W2D", "1 hour")
				return true
			}
		}
		return false
	}},
	{"rsasha1-with-nsec3", func(g *gen, c *cluster) bool {
		for i := range g.objs {
			if o := &g.objs[i]; o.Kind == "BindDNSSECPolicy" {
				o.Spec["keys"] = []any{map[string]any{"role": "csk", "algorithm": "rsasha1"}}
				o.Spec["nsec3"] = map[string]any{}
				return true
			}
		}
		return false
	}},
	{"acl-names-differ-in-case", func(g *gen, c *cluster) bool {
		g.add("BindACL", "office-a", map[string]any{"clusterRef": c.name, "aclName": "Office", "addresses": strs("192.0.2.0/24")})
		g.add("BindACL", "office-b", map[string]any{"clusterRef": c.name, "aclName": "office", "addresses": strs("198.51.100.0/24")})
		return true
	}},
	{"acl-loop", func(g *gen, c *cluster) bool {
		g.add("BindACL", "loop-a", map[string]any{"clusterRef": c.name, "addresses": strs("loop-b", "192.0.2.1")})
		g.add("BindACL", "loop-b", map[string]any{"clusterRef": c.name, "addresses": strs("loop-a")})
		return g.useACL(c, "loop-a")
	}},
	{"undefined-key", func(g *gen, c *cluster) bool {
		for i := range g.objs {
			if o := &g.objs[i]; o.Kind == "BindZone" && o.Spec["clusterRef"] == c.name {
				o.Spec["allowTransfer"] = strs("key no-such-key")
				return true
			}
		}
		return false
	}},
	{"extra-option-misspelt", func(g *gen, c *cluster) bool {
		o := g.obj("BindCluster", c.name)
		ex, _ := o.Spec["extraOptions"].([]any)
		o.Spec["extraOptions"] = append(ex, g.pick("minimal-response yes", "max-cache-sise 64m", "edns-udp-size"))
		return true
	}},
	{"records-on-secondary", func(g *gen, c *cluster) bool {
		for i := range g.objs {
			if o := &g.objs[i]; o.Kind == "BindZone" && o.Spec["type"] == "secondary" && o.Spec["clusterRef"] == c.name {
				o.Spec["records"] = []any{map[string]any{"name": "www", "type": "A", "values": strs("192.0.2.9")}}
				return true
			}
		}
		return false
	}},
}

// mistake applies one applicable mistake.
func (g *gen) mistake(cs []*cluster) {
	c := cs[g.r.IntN(len(cs))]
	order := g.r.Perm(len(mistakes))
	for _, i := range order {
		if mistakes[i].apply(g, c) {
			g.mistakes = append(g.mistakes, mistakes[i].name)
			return
		}
	}
}

// addRecord adds records to a primary zone of c with no dnssec policy
// (signed zones get their own mistakes).
func (g *gen) addRecord(c *cluster, recs ...map[string]any) bool {
	for i := range g.objs {
		o := &g.objs[i]
		if o.Kind != "BindZone" || o.Spec["clusterRef"] != c.name {
			continue
		}
		if t, _ := o.Spec["type"].(string); t != "" && t != "primary" {
			continue
		}
		if o.Spec["dnssecPolicyRef"] != nil {
			continue
		}
		existing, _ := o.Spec["records"].([]any)
		keep := existing[:0:0]
		for _, e := range existing {
			em := e.(map[string]any)
			clash := false
			for _, r := range recs {
				if strings.EqualFold(em["name"].(string), r["name"].(string)) {
					clash = true
				}
			}
			if !clash {
				keep = append(keep, e)
			}
		}
		for _, r := range recs {
			keep = append(keep, r)
		}
		o.Spec["records"] = keep
		// DNSRecords at the same owner would hide the mistake behind another.
		var objs []Object
		for _, x := range g.objs {
			if x.Kind == "DNSRecord" && x.Spec["zoneRef"] == o.Name {
				n, _ := x.Spec["name"].(string)
				if n == "" {
					n = "@"
				}
				clash := false
				for _, r := range recs {
					if strings.EqualFold(n, r["name"].(string)) {
						clash = true
					}
				}
				if clash {
					continue
				}
			}
			objs = append(objs, x)
		}
		g.objs = objs
		return true
	}
	return false
}

// useACL makes the cluster's first zone (or its allowQuery) name an ACL.
func (g *gen) useACL(c *cluster, name string) bool {
	o := g.obj("BindCluster", c.name)
	aq, _ := o.Spec["allowQuery"].([]any)
	o.Spec["allowQuery"] = append([]any{name}, aq...)
	return true
}
