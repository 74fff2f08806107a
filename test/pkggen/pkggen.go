// Package pkggen generates random bind.unkin.net packages for differential
// testing against real BIND (docs/design.md#differential): every field of the nine kinds,
// views with ACLs and keys in match-clients, one zone name in several views,
// catalog and response policy zones per view, DNSSEC policies with every
// option (NSEC3 too), secondary, stub and forward zones, the root zone,
// reverse zones, every record type miekg/dns knows (RFC 3597 form for the
// ones without a hand-written value), IDN names, escaped and `$`-leading
// labels, names and strings at their length limits, extraOptions, and
// allowQuery/allowTransfer on cluster, view and zone.
//
// Packages are meant to be valid; with Options.MistakeRate a package gets
// one realistic mistake, named in Package.Mistakes. The same seed always
// gives the same package.
package pkggen

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/model"
	"git.unkin.net/unkin/bind-fn/internal/vocab"
)

// APIVersion of every generated object.
const APIVersion = "bind.unkin.net/v1alpha1"

// Namespace of every generated object.
const Namespace = "dns"

// Object is one generated object.
type Object struct {
	Kind string
	Name string
	Spec map[string]any
}

// Package is one generated package.
type Package struct {
	Seed     uint64
	Objects  []Object
	Mistakes []string // injected mistakes; none: the package is meant to be valid
	// Drawn are the limit draws (LimitTags) the package holds.
	Drawn []string
}

// Options of the generator.
type Options struct {
	// MistakeRate is the probability (0..1) that a package carries one
	// realistic mistake.
	MistakeRate float64
	// LimitRate is the probability that a package holds one limit draw: a
	// value at or just past one of BIND's limits, durations in a relation
	// BIND checks, or names that collide across kinds (limits.go).
	LimitRate float64
}

// Doc is an object as the user writes it.
func (o Object) Doc() map[string]any {
	return map[string]any{
		"apiVersion": APIVersion,
		"kind":       o.Kind,
		"metadata":   map[string]any{"name": o.Name, "namespace": Namespace},
		"spec":       o.Spec,
	}
}

// Items are the package's objects as pipeline items (file pkg.yaml).
func (p Package) Items() []model.Item {
	items := make([]model.Item, 0, len(p.Objects))
	for i, o := range p.Objects {
		js, err := json.Marshal(o.Doc())
		if err != nil {
			panic(err) // maps of strings, numbers and bools only
		}
		items = append(items, model.Item{
			Source: diag.Source{Ref: diag.ObjectRef{APIVersion: APIVersion, Kind: o.Kind, Namespace: Namespace, Name: o.Name}, File: "pkg.yaml", Index: i},
			JSON:   js,
		})
	}
	return items
}

// YAML is the package as a multi-document YAML stream.
func (p Package) YAML() []byte {
	var b strings.Builder
	for i, o := range p.Objects {
		if i > 0 {
			b.WriteString("---\n")
		}
		y, err := yaml.Marshal(o.Doc())
		if err != nil {
			panic(err)
		}
		b.Write(y)
	}
	return []byte(b.String())
}

// Clone is a deep copy (the shrinker edits copies).
func (p Package) Clone() Package {
	out := Package{Seed: p.Seed, Mistakes: append([]string(nil), p.Mistakes...), Drawn: append([]string(nil), p.Drawn...)}
	for _, o := range p.Objects {
		out.Objects = append(out.Objects, Object{Kind: o.Kind, Name: o.Name, Spec: cloneMap(o.Spec)})
	}
	return out
}

func cloneMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = cloneValue(v)
	}
	return out
}

func cloneValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return cloneMap(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneValue(e)
		}
		return out
	}
	return v
}

// gen is one package being generated.
type gen struct {
	r        *rand.Rand
	objs     []Object
	names    map[string]bool // kind/name
	mistakes []string
	drawn    []string
	types    []string
}

// cluster is what later objects of a cluster refer to.
type cluster struct {
	name      string
	resolver  bool
	replicas  int
	keys      []string // keyNames usable by this cluster
	keyObjs   []string // object names of those keys
	acls      []string
	aclObjs   []*Object
	policies  []string // object names
	views     []*view
	policyMax map[string]int // policy object -> maxZoneTTL seconds (0: none)
}

type view struct {
	obj       string // "" when the cluster has no views
	zones     map[string]bool
	primaries []*Object
}

// Generate makes the package of a seed.
func Generate(seed uint64, opt Options) Package {
	g := &gen{r: rand.New(rand.NewPCG(seed, seed^0x5eed5eed5eed5eed)), names: map[string]bool{}, types: zoneTypes()}
	shared := g.sharedKeys()
	n := 1
	if g.r.IntN(4) == 0 {
		n = 2
	}
	var cs []*cluster
	for i := 0; i < n; i++ {
		cs = append(cs, g.cluster(i, shared))
	}
	g.replicate(seed, cs)
	g.viewsAndFeeds(seed, cs)
	if g.r.Float64() < opt.MistakeRate {
		g.mistake(cs)
	}
	if g.r.Float64() < opt.LimitRate {
		g.limit(cs)
	}
	sort.SliceStable(g.objs, func(i, j int) bool { return kindOrder[g.objs[i].Kind] < kindOrder[g.objs[j].Kind] })
	return Package{Seed: seed, Objects: g.objs, Mistakes: g.mistakes, Drawn: g.drawn}
}

var kindOrder = map[string]int{"BindCluster": 0, "BindTSIGKey": 1, "BindACL": 2, "BindDNSSECPolicy": 3, "BindView": 4, "BindZone": 5, "BindCatalogZone": 6, "BindPolicy": 7, "DNSRecord": 8}

func (g *gen) pick(s ...string) string { return s[g.r.IntN(len(s))] }
func (g *gen) chance(p float64) bool   { return g.r.Float64() < p }
func (g *gen) read(b []byte) {
	for i := range b {
		b[i] = byte(g.r.IntN(256))
	}
}

// add appends an object under a fresh name derived from base.
func (g *gen) add(kind, base string, spec map[string]any) *Object {
	name := base
	for i := 2; g.names[kind+"/"+name]; i++ {
		name = fmt.Sprintf("%s-%d", base, i)
	}
	g.names[kind+"/"+name] = true
	g.objs = append(g.objs, Object{Kind: kind, Name: name, Spec: spec})
	return &g.objs[len(g.objs)-1]
}

// obj finds an object again (pointers into g.objs move when it grows).
func (g *gen) obj(kind, name string) *Object {
	for i := range g.objs {
		if g.objs[i].Kind == kind && g.objs[i].Name == name {
			return &g.objs[i]
		}
	}
	return nil
}

// tsigAlgs are the TSIG algorithms drawn, each equally often: every one
// of vocab.TSIG, in its order.
var tsigAlgs = vocab.TSIGNames()

func (g *gen) key(clusterRef, base string) (obj, keyName string) {
	spec := map[string]any{}
	if clusterRef != "" {
		spec["clusterRef"] = clusterRef
	}
	if g.chance(0.7) {
		spec["algorithm"] = g.pick(tsigAlgs...)
	}
	o := g.add("BindTSIGKey", base, spec)
	keyName = o.Name
	switch g.r.IntN(5) {
	case 0:
		keyName = o.Name + ".example.com."
		spec["keyName"] = keyName
	case 1: // at the pattern's length limit (253 characters)
		keyName = longName(253, o.Name)
		spec["keyName"] = keyName
	case 2:
		keyName = "Key_" + o.Name
		spec["keyName"] = keyName
	}
	if g.chance(0.2) {
		spec["secretName"] = o.Name + "-material"
	}
	if g.chance(0.15) {
		spec["importExisting"] = true
	} else if g.chance(0.2) {
		spec["secretTemplate"] = map[string]any{
			"labels":      map[string]any{"team": "dns"},
			"annotations": map[string]any{"reflector.v1.k8s.emberstack.com/reflection-allowed": "true"},
		}
	}
	return o.Name, keyName
}

// longName is a dotted name of exactly n characters made of 63-character
// (or shorter) labels starting with prefix.
func longName(n int, prefix string) string {
	var labels []string
	left := n
	for left > 0 {
		l := min(63, left)
		lab := prefix + strings.Repeat("a", max(0, l-len(prefix)))
		if l < len(prefix) {
			lab = strings.Repeat("b", l)
		}
		labels = append(labels, lab)
		left -= l + 1
		if left == 1 { // a lone trailing dot would make it absolute
			labels[len(labels)-1] += "c"
			left = 0
		}
	}
	return strings.Join(labels, ".")
}

func (g *gen) sharedKeys() []string {
	var out []string
	for i := 0; i < g.r.IntN(3); i++ {
		obj, kn := g.key("", "shared")
		out = append(out, obj+"\x00"+kn)
	}
	return out
}

var clusterNames = []string{"auth", "dns", "edge", "resolver", "ns", strings.Repeat("c", 52)}

func (g *gen) cluster(i int, shared []string) *cluster {
	name := g.pick(clusterNames...)
	for g.names["BindCluster/"+name] {
		name = g.pick(clusterNames...) + fmt.Sprint(i)
	}
	c := &cluster{name: name, resolver: g.chance(0.3), replicas: 1 + g.r.IntN(3), policyMax: map[string]int{}}
	spec := map[string]any{"replicas": c.replicas}
	if c.resolver {
		spec["mode"] = "resolver"
	} else if g.chance(0.5) {
		spec["mode"] = "authoritative"
	}
	g.add("BindCluster", name, spec)
	for _, s := range shared {
		obj, kn, _ := strings.Cut(s, "\x00")
		c.keyObjs, c.keys = append(c.keyObjs, obj), append(c.keys, kn)
	}
	for j := 0; j < g.r.IntN(4); j++ {
		obj, kn := g.key(name, g.pick("xfr", "update", "client", "partner"))
		c.keyObjs, c.keys = append(c.keyObjs, obj), append(c.keys, kn)
	}
	g.clusterSpec(c, spec)
	for j := 0; j < g.r.IntN(4); j++ {
		g.acl(c)
	}
	if !c.resolver {
		for j := 0; j < g.r.IntN(3); j++ {
			g.dnssecPolicy(c)
		}
	}
	if g.chance(0.4) {
		for j := 0; j < 2+g.r.IntN(2); j++ {
			g.view(c, j)
		}
	} else {
		c.views = []*view{{zones: map[string]bool{}}}
	}
	for vi, v := range c.views {
		g.zones(c, v, vi)
		if !c.resolver && g.chance(0.4) {
			g.catalog(c, v)
		}
		if g.chance(0.3) {
			g.rpz(c, v)
		}
	}
	return c
}

// addressList is an address match list over what the cluster defines.
func (g *gen) addressList(c *cluster, allowAny bool) []any {
	var out []any
	for i := 0; i < 1+g.r.IntN(3); i++ {
		var e string
		switch g.r.IntN(9) {
		case 0:
			e = fmt.Sprintf("192.0.2.%d", 1+g.r.IntN(254))
		case 1:
			e = fmt.Sprintf("198.51.%d.0/24", g.r.IntN(256))
		case 2:
			e = "2001:db8:" + fmt.Sprintf("%x", g.r.IntN(0xffff)) + "::/48"
		case 3:
			if len(c.acls) > 0 {
				e = g.pick(c.acls...)
			} else {
				e = "localnets"
			}
		case 4:
			if len(c.keys) > 0 {
				e = "key " + g.pick(c.keys...)
			} else {
				e = "localhost"
			}
		case 5:
			e = "!" + fmt.Sprintf("192.0.2.%d", 1+g.r.IntN(254))
		case 6:
			e = g.pick("localhost", "localnets")
		case 7:
			e = "10.0.0.0/8"
		default:
			e = "!10.1.0.0/16"
		}
		out = append(out, e)
	}
	if allowAny && g.chance(0.3) {
		out = append(out, "any")
	}
	return out
}

func strs(s ...string) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}

var goodExtra = []string{
	"minimal-responses yes", "max-cache-size 64m", "edns-udp-size 1232", "max-udp-size 1232",
	"tcp-listen-queue 20", "minimal-any yes", "answer-cookie yes", "empty-zones-enable no",
	"max-records 10000", "recursive-clients 500", "tcp-idle-timeout 300", "prefetch 2 9",
	"stale-answer-enable yes", "qname-minimization relaxed", "max-ncache-ttl 300",
	"minimal-responses no-auth-recursive", "max-journal-size 10m", "clients-per-query 20",
	"response-padding { any; } block-size 128", "minimal-responses yes # keep answers small",
	`server-id "ns.example.net"`, "max-transfer-time-in 60",
}

func (g *gen) clusterSpec(c *cluster, spec map[string]any) {
	if g.chance(0.3) {
		spec["image"] = g.pick("git.unkin.net/unkin/bind-fn/bind9:9.20.30-1-deb13u1", "internetsystemsconsortium/bind9:9.18", "registry.example.com/bind9@sha256:"+strings.Repeat("ab", 32))
	}
	if g.chance(0.2) {
		spec["imagePullPolicy"] = g.pick("Always", "IfNotPresent", "Never")
	}
	if g.chance(0.2) {
		interval := 1 + g.r.IntN(60)
		port := 9000 + g.r.IntN(1000)
		spec["agent"] = map[string]any{"resolveIntervalSeconds": interval, "metricsPort": port}
		if port%2 == 0 { // from the port, so that the draws of every other field stay as they were
			spec["agent"].(map[string]any)["resources"] = map[string]any{"requests": map[string]any{"memory": "48Mi"}, "limits": map[string]any{"cpu": "200m"}}
		}
		// From the port and the interval too, for the same reason.
		if port%3 == 0 {
			spec["networkPolicy"] = map[string]any{
				"enabled":     true,
				"dnsFrom":     []any{map[string]any{"ipBlock": map[string]any{"cidr": "198.51.100.0/24"}}, map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"dns.example.com/clients": "true"}}}},
				"metricsFrom": []any{map[string]any{"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": "monitoring"}}}},
			}
		}
		if interval%4 == 0 {
			// The default, written out: external needs Secrets (and DNSSEC
			// public keys) a generated package does not carry.
			spec["secrets"] = "rendered"
		}
		if g.chance(0.5) {
			spec["agent"].(map[string]any)["image"] = "git.unkin.net/unkin/bind-fn:v0.1.0"
		}
	}
	if g.chance(0.3) {
		spec["resources"] = map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "128Mi"}, "limits": map[string]any{"memory": "512Mi"}}
	}
	if g.chance(0.2) {
		spec["nodeSelector"] = map[string]any{"kubernetes.io/os": "linux", "dns.example.com/pool": "edge"}
	}
	if g.chance(0.2) {
		spec["tolerations"] = []any{map[string]any{"key": "dedicated", "operator": "Equal", "value": "dns", "effect": "NoSchedule"}}
	}
	if g.chance(0.1) {
		spec["priorityClassName"] = "system-cluster-critical"
	}
	if g.chance(0.5) {
		var ex []any
		for i := 0; i < 1+g.r.IntN(3); i++ {
			e := g.pick(goodExtra...)
			if !c.resolver && strings.Contains(e, "recursive-clients") {
				continue
			}
			dup := false
			for _, x := range ex {
				if strings.Fields(x.(string))[0] == strings.Fields(e)[0] {
					dup = true
				}
			}
			if !dup {
				ex = append(ex, e)
			}
		}
		spec["extraOptions"] = ex
	}
	if g.chance(0.3) {
		spec["allowQuery"] = g.addressList(c, true)
	}
	if c.resolver {
		if g.chance(0.6) {
			spec["allowRecursion"] = g.addressList(c, false)
		}
		if g.chance(0.6) {
			var fw []any
			for i := 0; i < 1+g.r.IntN(3); i++ {
				fw = append(fw, g.pick("192.0.2.53", "198.51.100.53 port 5353", "2001:db8::53", "203.0.113.9"))
			}
			spec["forwarders"] = dedupe(fw)
			if g.chance(0.5) {
				spec["forwardOnly"] = true
			}
		}
		if g.chance(0.6) {
			spec["dnssecValidation"] = g.pick("auto", "yes", "no")
		}
	}
	if g.chance(0.2) {
		spec["ipv6"] = true
	}
	if g.chance(0.15) {
		spec["clusterDomain"] = g.pick("cluster.local", "k8s.example.internal")
	}
	if g.chance(0.2) {
		spec["queryLogging"] = true
	}
	if g.chance(0.3) {
		rl := map[string]any{"responsesPerSecond": g.r.IntN(100), "window": 1 + g.r.IntN(20)}
		if g.chance(0.5) {
			rl["slip"] = g.r.IntN(3)
		}
		if g.chance(0.5) {
			rl["exempt"] = g.addressList(c, false)
		}
		spec["rateLimit"] = rl
	}
	if c.replicas >= 2 && g.chance(0.3) {
		spec["hiddenPrimary"] = true
	}
	svc := func() map[string]any {
		s := map[string]any{}
		switch g.r.IntN(3) {
		case 0:
			s["type"] = "LoadBalancer"
			if g.chance(0.5) {
				s["externalTrafficPolicy"] = g.pick("Local", "Cluster")
			}
			if g.chance(0.3) {
				s["loadBalancerClass"] = "example.com/lb"
			}
			if g.chance(0.3) {
				s["loadBalancerIP"] = "203.0.113.53"
			}
		case 1:
			s["type"] = "NodePort"
		default:
			if g.chance(0.5) {
				s["clusterIP"] = fmt.Sprintf("10.96.%d.%d", g.r.IntN(256), 1+g.r.IntN(254))
			}
		}
		if g.chance(0.3) {
			s["annotations"] = map[string]any{"metallb.universe.tf/allow-shared-ip": "dns"}
		}
		if g.chance(0.3) {
			s["labels"] = map[string]any{"exposure": "public"}
		}
		return s
	}
	if g.chance(0.3) {
		spec["service"] = svc()
	}
	if g.chance(0.2) {
		spec["primaryService"] = svc()
	}
	if g.chance(0.4) {
		st := map[string]any{"size": g.pick("1Gi", "512Mi", "10Gi")}
		if g.chance(0.3) {
			st["storageClassName"] = "fast-ssd"
		}
		spec["storage"] = st
	}
	if g.chance(0.2) {
		spec["podCIDRs"] = strs("10.244.0.0/16")
		spec["serviceCIDRs"] = strs("10.96.0.0/12")
	}
}

func dedupe(in []any) []any {
	seen := map[string]bool{}
	var out []any
	for _, x := range in {
		if !seen[x.(string)] {
			seen[x.(string)] = true
			out = append(out, x)
		}
	}
	return out
}

func (g *gen) acl(c *cluster) {
	spec := map[string]any{"clusterRef": c.name}
	if g.chance(0.2) {
		delete(spec, "clusterRef") // shared by every cluster of the namespace
	}
	base := g.pick("office", "partners", "vpn", "monitoring")
	o := g.add("BindACL", base, spec)
	name := o.Name
	if g.chance(0.3) {
		name = g.pick("Office_"+o.Name, "acl."+o.Name, strings.Repeat("z", 63))
		for _, a := range c.acls {
			if strings.EqualFold(a, name) {
				name = o.Name
			}
		}
		spec["aclName"] = name
	}
	spec["addresses"] = g.addressList(c, false)
	if _, ok := spec["clusterRef"]; !ok {
		// a shared ACL must not name cluster-scoped keys or ACLs of one cluster
		spec["addresses"] = strs(fmt.Sprintf("192.0.2.%d", 1+g.r.IntN(254)), "2001:db8:1::/48")
	}
	c.acls = append(c.acls, name)
	c.aclObjs = append(c.aclObjs, o)
}

// algs are the DNSSEC algorithms a policy's keys are drawn from, names
// from vocab.DNSSEC: every accepted one, the common ones more often
// (dnssecWeights), then the refused ones in dnssecRefusedDraws, which
// validation must refuse. Every other entry of vocab.DNSSEC is in
// dnssecNotDrawn with its reason (TestDNSSECDraws).
var algs = dnssecDraws()

// dnssecWeights: how many times an accepted algorithm is in algs (1 when
// not listed): ECDSA P-256 is BIND's default and the usual choice.
var dnssecWeights = map[string]int{"ecdsap256sha256": 3, "ed25519": 2, "rsasha256": 2}

// dnssecRefusedDraws are algorithms bind-fn refuses that are drawn as
// they are, so that validation is seen refusing them.
var dnssecRefusedDraws = []string{"nsec3rsasha1"}

// dnssecNotDrawn are the entries of vocab.DNSSEC and its aliases that algs
// leaves out, and why.
var dnssecNotDrawn = map[string]string{
	"rsamd5":   "refused like nsec3rsasha1, which algs draws: one refused RSA algorithm shows the refusal",
	"rsasha1":  "drawn by the mistake rsasha1-with-nsec3 instead, beside the NSEC3 it is refused with",
	"ecdsa256": "an alias the model maps to ecdsap256sha256 before any check (vocab and model tests); drawing it would change every seed's packages",
	"ecdsa384": "an alias the model maps to ecdsap384sha384 before any check (vocab and model tests); drawing it would change every seed's packages",
}

// dnssecDraws lays algs out: round r holds, in name order, every accepted
// algorithm whose weight is at least r; the refused draws come last. The
// order is the draws' order, so a seed makes the package it always made.
func dnssecDraws() []string {
	var accepted []string
	most := 1
	for _, a := range vocab.DNSSEC {
		if a.Accepted {
			accepted = append(accepted, a.Name)
			most = max(most, dnssecWeights[a.Name])
		}
	}
	slices.Sort(accepted)
	var out []string
	for r := 1; r <= most; r++ {
		for _, a := range accepted {
			if max(1, dnssecWeights[a]) >= r {
				out = append(out, a)
			}
		}
	}
	return append(out, dnssecRefusedDraws...)
}

var goodDurations = []string{"PT1H", "PT3600S", "P1D", "PT30M", "P1DT12H", "PT2H30M", "P2D"}

func (g *gen) dnssecPolicy(c *cluster) {
	spec := map[string]any{}
	if g.chance(0.7) {
		spec["clusterRef"] = c.name
	}
	o := g.add("BindDNSSECPolicy", g.pick("standard", "nsec3", "strict", "rsa"), spec)
	if g.chance(0.3) {
		spec["policyName"] = g.pick("Policy_"+o.Name, "p."+o.Name, strings.Repeat("p", 63))
	}
	alg := g.pick(algs...)
	keyOf := func(role string) map[string]any {
		k := map[string]any{"role": role}
		explicit := g.chance(0.8)
		if explicit {
			k["algorithm"] = alg
		}
		if a, _ := vocab.DNSSECByName(alg); explicit && a.RSA {
			if g.chance(0.5) {
				k["bits"] = g.pick3(2048, 2048, 3072)
			}
		}
		if g.chance(0.6) {
			k["lifetime"] = g.pick("unlimited", "P1Y", "P6M", "P90D")
		}
		return k
	}
	switch g.r.IntN(3) {
	case 0:
		spec["keys"] = []any{keyOf("csk")}
	case 1:
		spec["keys"] = []any{keyOf("ksk"), keyOf("zsk")}
	}
	if g.chance(0.2) {
		n := map[string]any{}
		if g.chance(0.3) {
			n["iterations"] = g.pick3(0, 0, 10)
		}
		if g.chance(0.3) {
			n["optOut"] = true
		}
		if g.chance(0.3) {
			n["saltLength"] = g.pick3(0, 8, 16)
		}
		spec["nsec3"] = n
	}
	opt := func(field string, vals ...string) {
		if g.chance(0.4) {
			spec[field] = g.pick(vals...)
		}
	}
	opt("dnskeyTTL", "PT1H", "PT5M", "P1D", "PT3600S")
	opt("maxZoneTTL", "P1D", "PT12H", "P2D")
	if g.chance(0.4) {
		spec["signaturesRefresh"] = "P5D"
		spec["signaturesValidity"] = g.pick("P14D", "P21D")
	}
	opt("signaturesValidityDNSKEY", "P14D", "P21D")
	opt("publishSafety", goodDurations...)
	opt("retireSafety", goodDurations...)
	opt("purgeKeys", "P90D", "P30D", "P0D")
	opt("zonePropagationDelay", "PT5M", "PT300S", "PT1H")
	opt("parentDSTTL", "P1D", "PT1H")
	opt("parentPropagationDelay", "PT1H", "P1D")
	if g.chance(0.2) {
		// parental-agents: 9.18 and 9.20 read them the same; named asks
		// them for the DS only during a KSK rollover.
		spec["parentalAgents"] = map[string]any{"addresses": strs(g.pick("192.0.2.53", "192.0.2.53:5353", "[2001:db8::53]:5353", "198.51.100.53"))}
	}
	max := 0
	if m, ok := spec["maxZoneTTL"].(string); ok {
		max = map[string]int{"P1D": 86400, "PT12H": 43200, "P2D": 172800}[m]
	}
	c.policies = append(c.policies, o.Name)
	c.policyMax[o.Name] = max
}

func (g *gen) pick3(a, b, c int) int { return []int{a, b, c}[g.r.IntN(3)] }

var viewNames = []string{"internal", "external", "partners", "lab"}

func (g *gen) view(c *cluster, order int) {
	spec := map[string]any{"clusterRef": c.name, "order": order * 10}
	base := viewNames[order%len(viewNames)]
	o := g.add("BindView", c.name+"-"+base, spec)
	if g.chance(0.5) || len(c.name+"-"+base) > 63 {
		spec["viewName"] = base
	}
	last := order == 2 || g.chance(0.3)
	var mc []any
	switch {
	case last:
		mc = strs("any")
	default:
		mc = g.addressList(c, false)
	}
	spec["matchClients"] = mc
	if g.chance(0.15) {
		spec["matchDestinations"] = strs("any")
	}
	if c.resolver && g.chance(0.5) {
		spec["recursion"] = g.chance(0.5)
	}
	c.views = append(c.views, &view{obj: o.Name, zones: map[string]bool{}})
}

// zone names: IDN, long, reverse, underscore, the root.
var zoneNames = []string{
	"example.com", "example.org", "corp.example", "bücher.example", "例え.テスト", "_msdcs.example.com",
	"2.0.192.in-addr.arpa", "100.51.198.in-addr.arpa", "8.b.d.0.1.0.0.2.ip6.arpa",
	strings.Repeat("l", 63) + ".example", "apps.example.com", "sub.example.org",
}

func (g *gen) zoneName(v *view, reuse []string) string {
	if len(reuse) > 0 && g.chance(0.5) {
		n := g.pick(reuse...)
		if !v.zones[n] {
			v.zones[n] = true
			return n
		}
	}
	for i := 0; i < 20; i++ {
		n := g.pick(zoneNames...)
		if g.chance(0.1) {
			n = longName(200, "long") + ".example"
		}
		if !v.zones[n] {
			v.zones[n] = true
			return n
		}
	}
	n := fmt.Sprintf("z%d.example", g.r.IntN(1e6))
	v.zones[n] = true
	return n
}

func (g *gen) zones(c *cluster, v *view, vi int) {
	var reuse []string
	if vi > 0 {
		for z := range c.views[0].zones {
			if z != "." {
				reuse = append(reuse, z)
			}
		}
		sort.Strings(reuse)
	}
	for i := 0; i < 1+g.r.IntN(3); i++ {
		g.primaryZone(c, v, g.zoneName(v, reuse))
	}
	if g.chance(0.3) {
		g.otherZone(c, v, g.pick("secondary", "stub"))
	}
	if c.resolver && g.chance(0.5) {
		g.otherZone(c, v, "forward")
	}
	if c.resolver && !v.zones["."] && g.chance(0.2) {
		spec := map[string]any{"clusterRef": c.name, "zoneName": ".", "type": "forward", "forwarders": strs("192.0.2.53")}
		if v.obj != "" {
			spec["viewRef"] = v.obj
		}
		v.zones["."] = true
		g.add("BindZone", "root", spec)
	}
}

func (g *gen) otherZone(c *cluster, v *view, typ string) {
	name := g.zoneName(v, nil)
	spec := map[string]any{"clusterRef": c.name, "zoneName": name, "type": typ}
	if v.obj != "" {
		spec["viewRef"] = v.obj
	}
	switch typ {
	case "forward":
		spec["forwarders"] = strs(g.pick("192.0.2.100 port 8600", "192.0.2.101", "2001:db8::100"))
		if g.chance(0.5) {
			spec["forwardOnly"] = g.chance(0.5)
		}
	default:
		p := g.pick("192.0.2.1", "192.0.2.2 port 5353", "2001:db8::2")
		if len(c.keys) > 0 && g.chance(0.4) {
			p += " key " + g.pick(c.keys...)
		}
		spec["primaries"] = strs(p)
		if len(c.keyObjs) > 0 && g.chance(0.3) {
			spec["transferKeyRef"] = g.pick(c.keyObjs...)
		}
		if g.chance(0.3) {
			spec["allowQuery"] = g.addressList(c, true)
		}
		// A secondary zone serves transfers and sends NOTIFYs too.
		if typ == "secondary" && g.chance(0.3) {
			spec["allowTransfer"] = g.addressList(c, false)
		}
		if typ == "secondary" && g.chance(0.2) {
			an := g.pick("192.0.2.202", "198.51.100.3")
			if len(c.keys) > 0 && g.chance(0.5) {
				an += " key " + g.pick(c.keys...)
			}
			spec["alsoNotify"] = strs(an)
		}
	}
	g.add("BindZone", objName(name)+"-"+typ, spec)
}

// objName is a DNS-1123 object name for a zone name.
func objName(zone string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(zone) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == '.' || r == '-':
			b.WriteByte('-')
		}
	}
	s := strings.Trim(b.String(), "-")
	if len(s) > 40 {
		s = s[:40]
	}
	s = strings.Trim(s, "-")
	if s == "" {
		s = "zone"
	}
	return s
}

func (g *gen) primaryZone(c *cluster, v *view, name string) {
	spec := map[string]any{"clusterRef": c.name, "zoneName": name}
	if g.chance(0.3) {
		spec["type"] = "primary"
	}
	if v.obj != "" {
		spec["viewRef"] = v.obj
	}
	o := g.add("BindZone", objName(name), spec)
	if g.chance(0.3) {
		spec["defaultTTL"] = g.pick3(60, 300, 86400)
	}
	if g.chance(0.3) {
		soa := map[string]any{}
		if g.chance(0.5) {
			soa["primaryNS"] = "ns1.example.net."
		}
		if g.chance(0.5) {
			soa["email"] = g.pick("hostmaster@example.com", "dns-admin.example.com.", "first.last@example.com")
		}
		if g.chance(0.3) {
			soa["serial"] = 2024010100 + g.r.IntN(100)
		}
		if g.chance(0.5) {
			soa["refresh"] = 300 + g.r.IntN(3600)
			soa["retry"] = 60 + g.r.IntN(240)
			soa["expire"] = 1209600
			soa["minimum"] = g.pick3(0, 60, 300)
		}
		spec["soa"] = soa
	}
	if g.chance(0.7) {
		ns := []any{"ns1.example.net."}
		if g.chance(0.5) {
			ns = append(ns, "ns2.example.net.")
		}
		spec["nameservers"] = ns
	}
	if g.chance(0.3) {
		spec["allowQuery"] = g.addressList(c, true)
	}
	if g.chance(0.3) {
		spec["allowTransfer"] = g.addressList(c, false)
	}
	if g.chance(0.2) {
		an := g.pick("192.0.2.201", "198.51.100.2")
		if len(c.keys) > 0 && g.chance(0.5) {
			an += " key " + g.pick(c.keys...)
		}
		spec["alsoNotify"] = strs(an)
	}
	if g.chance(0.2) {
		spec["catalog"] = g.chance(0.5)
	}
	signed := ""
	if len(c.policies) > 0 && g.chance(0.4) {
		signed = g.pick(c.policies...)
		spec["dnssecPolicyRef"] = signed
	}
	if len(c.keyObjs) > 0 && g.chance(0.25) {
		spec["dynamicUpdate"] = true
		spec["updateKeyRef"] = g.pick(c.keyObjs...)
		if g.chance(0.3) {
			spec["updateKeyTransfer"] = g.chance(0.5)
		}
	}
	recs := g.records(name, signed, c)
	if spec["nameservers"] == nil {
		// the SOA MNAME ns1.<zone> is the apex NS: it needs an address
		recs = append(recs, map[string]any{"name": "ns1", "type": "A", "values": strs("192.0.2.53")})
	}
	var inline, objs []any
	for _, r := range recs {
		if g.chance(0.15) {
			objs = append(objs, r)
		} else {
			inline = append(inline, r)
		}
	}
	if len(inline) > 0 {
		spec["records"] = inline
	}
	for _, r := range objs {
		rm := r.(map[string]any)
		rs := map[string]any{"zoneRef": o.Name, "type": rm["type"], "values": rm["values"]}
		if rm["name"] != "@" || g.chance(0.5) {
			rs["name"] = rm["name"]
		}
		if t, ok := rm["ttl"]; ok {
			rs["ttl"] = t
		}
		g.add("DNSRecord", o.Name+"-rec", rs)
	}
	v.primaries = append(v.primaries, g.obj("BindZone", o.Name))
	_ = signed
}

// owners of ordinary records: IDN, escaped, `$`-leading (escaped), long.
var owners = []string{"www", "@", "*", "*.wild", "_dmarc", "_sip._tcp", "host-1", "bücher", strings.Repeat("m", 63), "a.b.c", "mail", "api"}

// oddOwners are escaped and `$`-leading labels, picked less often.
var oddOwners = []string{`txt\@office`, `\$dollar`, `semi\;colon`, `sp\032ace`, `quote\"d`, `back\\slash`}

var commonTypes = []string{"A", "AAAA", "MX", "TXT", "SRV", "CAA", "CNAME", "NS", "PTR", "HTTPS", "SVCB", "SSHFP", "TLSA", "NAPTR", "DS"}

func (g *gen) records(zone, signed string, c *cluster) []any {
	type key struct{ owner, typ string }
	seen := map[key]bool{}
	taken := map[string]string{} // owner -> exclusive type (CNAME, NS, DNAME)
	var out []any
	special := 0
	reverse := strings.HasSuffix(zone, ".arpa")
	for i := 0; i < g.r.IntN(12); i++ {
		typ := g.pick(commonTypes...)
		if g.chance(0.3) {
			typ = g.pick(g.types...)
		}
		if reverse && g.chance(0.5) {
			typ = "PTR"
		}
		owner := g.pick(owners...)
		if g.chance(0.05) {
			owner = g.pick(oddOwners...)
		}
		if len(zone) > 150 {
			owner = g.pick("www", "@", "*", "_dmarc")
		}
		if owner == "*" && (typ == "NS" || typ == "DNAME") {
			continue
		}
		hostType := map[string]bool{"A": true, "AAAA": true, "MX": true}[typ]
		if hostType && strings.ContainsAny(owner, `\_`) {
			owner = "host-1"
		}
		if reverse && typ == "PTR" {
			owner = fmt.Sprint(1 + g.r.IntN(254))
			if strings.HasPrefix(zone, "8.b.d") {
				owner = fmt.Sprintf("%x.0", g.r.IntN(16))
			}
		}
		switch typ {
		case "CNAME", "DNAME", "NS", "DS", "CDS", "CDNSKEY", "DNSKEY", "ZONEMD", "NSEC3PARAM", "CSYNC", "KEY", "SIG":
			// types with placement rules get an owner of their own
			special++
			owner = fmt.Sprintf("only%d", special)
			if typ == "DS" {
				// DS lives at a delegation
				ns := map[string]any{"name": owner, "type": "NS", "values": strs("ns1.example.net.")}
				out = append(out, ns)
				taken[owner] = "NS"
			}
		}
		if x, ok := taken[owner]; ok && x != typ && !(x == "NS" && typ == "DS") {
			continue
		}
		k := key{strings.ToLower(owner), typ}
		if seen[k] {
			continue
		}
		seen[k] = true
		var vals []any
		n := 1
		if !map[string]bool{"CNAME": true, "DNAME": true}[typ] {
			n = 1 + g.r.IntN(2)
		}
		for j := 0; j < n; j++ {
			v, ok := g.recordValue(typ, zone)
			if !ok || g.chance(0.05) {
				gv, gok := generic(typ, v)
				if !gok {
					break
				}
				v = gv
			}
			vals = append(vals, v)
		}
		vals = dedupe(vals)
		if len(vals) == 0 {
			continue
		}
		r := map[string]any{"name": owner, "type": typ, "values": vals}
		if g.chance(0.3) {
			ttl := g.pick3(60, 3600, 86400)
			if g.chance(0.1) {
				ttl = 2147483647
			}
			if m := c.policyMax[signed]; signed != "" && (ttl > m && m > 0 || ttl > 86400) {
				ttl = 300
			}
			r["ttl"] = ttl
		}
		out = append(out, r)
		if typ == "CNAME" || typ == "DNAME" || typ == "NS" {
			taken[owner] = typ
		}
	}
	return out
}

func (g *gen) catalog(c *cluster, v *view) {
	spec := map[string]any{"clusterRef": c.name, "zoneName": g.pick("catalog.example.internal", "cat.invalid", "catalog."+c.name+".example")}
	if v.obj != "" {
		spec["viewRef"] = v.obj
	}
	if v.zones[spec["zoneName"].(string)] {
		return
	}
	v.zones[spec["zoneName"].(string)] = true
	if g.chance(0.3) {
		p := "192.0.2.77"
		if len(c.keys) > 0 && g.chance(0.5) {
			p += " key " + g.pick(c.keys...)
		}
		spec["defaultPrimaries"] = strs(p)
	}
	if len(c.keyObjs) > 0 && g.chance(0.3) {
		spec["transferKeyRef"] = g.pick(c.keyObjs...)
	}
	g.add("BindCatalogZone", "catalog-"+c.name, spec)
}

var rpzActions = []string{"nxdomain", "nodata", "passthru", "drop", "tcp-only", "redirect"}

func (g *gen) rpz(c *cluster, v *view) {
	zn := g.pick("rpz.local", "rpz.example.internal", "blocklist.rpz")
	if v.zones[zn] {
		return
	}
	v.zones[zn] = true
	spec := map[string]any{"clusterRef": c.name, "zoneName": zn}
	if v.obj != "" {
		spec["viewRef"] = v.obj
	}
	if g.chance(0.5) {
		spec["order"] = g.r.IntN(10)
	}
	var rules []any
	seen := map[string]bool{}
	for i := 0; i < 1+g.r.IntN(6); i++ {
		name := g.pick("ads.example.net", "*.ads.example.net", "tracker.example.org", "phish.example.org", "bücher.example", "_svc.example.org", "malware.example.com")
		if seen[name] {
			continue
		}
		seen[name] = true
		rule := map[string]any{"name": name}
		a := g.pick(rpzActions...)
		if g.chance(0.8) {
			rule["action"] = a
		}
		if a == "redirect" && rule["action"] != nil {
			rule["target"] = g.pick("walled-garden.example.com.", "walled-garden.example.com")
		}
		rules = append(rules, rule)
	}
	spec["rules"] = rules
	if g.chance(0.3) {
		raw := map[string]any{"name": "raw.example.com", "type": "CNAME", "values": strs("rpz-passthru.")}
		if g.chance(0.5) {
			raw["ttl"] = 300
		}
		spec["records"] = []any{raw}
	}
	g.add("BindPolicy", "rpz-"+c.name, spec)
}

// replicate makes the second of two clusters, sometimes, a secondary
// cluster of the first (spec.replication, docs/multi-cluster.md), when the
// pair can be one: no views on either, no catalog and no zone of the first
// on the second. Its draws come from a generator of their own, so every
// other object of the seed stays what it was.
func (g *gen) replicate(seed uint64, cs []*cluster) {
	if len(cs) != 2 {
		return
	}
	r := rand.New(rand.NewPCG(seed^0x22, seed))
	if r.IntN(2) == 0 {
		return
	}
	p, c := cs[0], cs[1]
	if len(p.views) != 1 || len(c.views) != 1 || p.views[0].obj != "" || c.views[0].obj != "" {
		return
	}
	catalog := false
	var offered []string
	for _, o := range g.objs {
		if o.Kind == "BindCatalogZone" && o.Spec["clusterRef"] == c.name {
			return
		}
		if o.Kind == "BindCatalogZone" && o.Spec["clusterRef"] == p.name {
			catalog = true
		}
	}
	for _, z := range p.views[0].primaries {
		name, _ := z.Spec["zoneName"].(string)
		if c.views[0].zones[name] {
			return
		}
		offered = append(offered, name)
	}
	key := g.add("BindTSIGKey", "link", map[string]any{})
	if r.IntN(2) == 0 {
		key.Spec["algorithm"] = tsigAlgs[r.IntN(len(tsigAlgs))]
	}
	primary := []any{"203.0.113.10"}
	if r.IntN(3) == 0 {
		primary = []any{"dns-primary." + p.name + ".example.net"}
	}
	repl := map[string]any{
		"primaryClusterRef": p.name,
		"primaryAddresses":  primary,
		"notifyAddresses":   []any{"203.0.113.20"},
		"transferKeyRef":    key.Name,
	}
	if !catalog && len(offered) > 0 && r.IntN(2) == 0 {
		repl["zones"] = []any{offered[r.IntN(len(offered))]}
	}
	g.obj("BindCluster", c.name).Spec["replication"] = repl
	if r.IntN(3) == 0 {
		g.obj("BindCluster", p.name).Spec["replication"] = map[string]any{"hidden": true}
	}
}

// viewsAndFeeds draws the per-view allow-recursion (BindView
// spec.allowRecursion) and response-policy feeds (a secondary BindZone's
// spec.responsePolicy) on resolver clusters. Its draws come from a
// generator of their own, so every other object of the seed stays what it
// was.
func (g *gen) viewsAndFeeds(seed uint64, cs []*cluster) {
	r := rand.New(rand.NewPCG(seed^0x25, seed))
	resolver := map[string]bool{}
	for _, c := range cs {
		resolver[c.name] = c.resolver
	}
	lists := [][]any{{"192.0.2.0/24"}, {"localhost", "2001:db8::/32"}, {"none"}, {"!192.0.2.1", "any"}}
	for i := range g.objs {
		o := &g.objs[i]
		ref, _ := o.Spec["clusterRef"].(string)
		if !resolver[ref] {
			continue
		}
		switch {
		case o.Kind == "BindView" && r.IntN(3) == 0:
			o.Spec["allowRecursion"] = lists[r.IntN(len(lists))]
		case o.Kind == "BindZone" && o.Spec["type"] == "secondary" && r.IntN(3) == 0:
			o.Spec["responsePolicy"] = true
		}
	}
}
