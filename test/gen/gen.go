// Package gen generates large, realistic bind.unkin.net packages for
// benchmarks and scale tests: one authoritative BindCluster, N zones
// (forward zones and in-addr.arpa reverse zones), M records spread over
// every common type (A, AAAA, CNAME, MX, TXT with long and quoted strings,
// SRV, CAA, NS delegations with glue, PTR), a share of them as DNSRecord
// objects, and optional split-horizon views. The same Options always give
// the same bytes.
package gen

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
)

// Options of a generated package.
type Options struct {
	// Zones is the number of primary zones (at least 1). Every eighth zone
	// is a reverse zone holding PTR records.
	Zones int
	// Records is the number of records (RRsets as the user writes them: a
	// BindZone.spec.records entry or a DNSRecord), spread evenly over the
	// zones. A delegation counts as two: its NS and its glue.
	Records int
	// Seed makes the content; the same seed gives the same bytes.
	Seed uint64
	// Views, when > 0, adds that many BindViews; zones go round-robin.
	Views int
	// RecordObjects is the share (0..1) of records written as DNSRecord
	// objects instead of inline BindZone records. Negative means none;
	// 0 means the default, 0.1.
	RecordObjects float64
	// Dynamic, when > 0, makes every Dynamic-th zone dynamic
	// (dynamicUpdate, updateKeyRef the one BindTSIGKey "<cluster>-update").
	Dynamic int
	// Cluster and Namespace name the BindCluster (default "gen" in "dns").
	Cluster   string
	Namespace string
}

func (o *Options) defaults() {
	if o.Zones < 1 {
		o.Zones = 1
	}
	if o.Records < 0 {
		o.Records = 0
	}
	if o.RecordObjects == 0 {
		o.RecordObjects = 0.1
	}
	if o.RecordObjects < 0 {
		o.RecordObjects = 0
	}
	if o.Cluster == "" {
		o.Cluster = "gen"
	}
	if o.Namespace == "" {
		o.Namespace = "dns"
	}
}

// Package is a generated package: its objects as YAML documents, by file.
type Package struct {
	// Files maps a package file name (cluster.yaml, views.yaml, zones.yaml,
	// records.yaml) to its documents, in order.
	Files map[string][]string
	// Zones and Records are what was generated (RRsets, glue included).
	Zones, Records int
}

// FileNames are the package's files in a stable order.
func (p *Package) FileNames() []string {
	var out []string
	for k := range p.Files {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// File is one package file: its documents joined by "---".
func (p *Package) File(name string) []byte {
	var b bytes.Buffer
	for i, d := range p.Files[name] {
		if i > 0 {
			b.WriteString("---\n")
		}
		b.WriteString(d)
	}
	return b.Bytes()
}

// ResourceList is the package as a KRM ResourceList (what kpt hands a
// function), each item annotated with its file and index the way kpt does.
func (p *Package) ResourceList() []byte {
	var b bytes.Buffer
	b.Grow(p.size() * 11 / 10)
	b.WriteString("apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n")
	for _, f := range p.FileNames() {
		for i, d := range p.Files[f] {
			ann := fmt.Sprintf("    config.kubernetes.io/index: '%d'\n    config.kubernetes.io/path: '%s'\n    internal.config.kubernetes.io/index: '%d'\n    internal.config.kubernetes.io/path: '%s'\n", i, f, i, f)
			writeItem(&b, d, ann)
		}
	}
	return b.Bytes()
}

func (p *Package) size() int {
	n := 0
	for _, ds := range p.Files {
		for _, d := range ds {
			n += len(d)
		}
	}
	return n
}

// writeItem indents one document as a list item and inserts the
// annotations under its metadata (every generated document has a metadata
// block with name and namespace and no annotations).
func writeItem(b *bytes.Buffer, doc, ann string) {
	first := true
	for len(doc) > 0 {
		line := doc
		if i := strings.IndexByte(doc, '\n'); i >= 0 {
			line, doc = doc[:i+1], doc[i+1:]
		} else {
			doc = ""
		}
		if first {
			b.WriteString("- ")
			first = false
		} else {
			b.WriteString("  ")
		}
		b.WriteString(line)
		if line == "metadata:\n" {
			b.WriteString("    annotations:\n")
			for _, l := range strings.SplitAfter(ann, "\n") {
				if l != "" {
					b.WriteString("  " + l)
				}
			}
		}
	}
}

// Generate builds the package.
func Generate(o Options) *Package {
	o.defaults()
	g := &generator{o: o, rng: rand.New(rand.NewPCG(o.Seed, 0x62696e642d666e)), pkg: &Package{Files: map[string][]string{}}}
	g.cluster()
	g.views()
	g.zones()
	return g.pkg
}

type generator struct {
	o   Options
	rng *rand.Rand
	pkg *Package
}

func (g *generator) add(file, doc string) { g.pkg.Files[file] = append(g.pkg.Files[file], doc) }

func (g *generator) meta(b *strings.Builder, kind, name string) {
	fmt.Fprintf(b, "apiVersion: bind.unkin.net/v1alpha1\nkind: %s\nmetadata:\n  name: %s\n  namespace: %s\nspec:\n", kind, name, g.o.Namespace)
}

func (g *generator) cluster() {
	var b strings.Builder
	g.meta(&b, "BindCluster", g.o.Cluster)
	b.WriteString("  mode: authoritative\n  replicas: 3\n")
	g.add("cluster.yaml", b.String())
	if g.o.Dynamic > 0 {
		var k strings.Builder
		g.meta(&k, "BindTSIGKey", g.updateKey())
		fmt.Fprintf(&k, "  keyName: %s\n", g.updateKey())
		g.add("keys.yaml", k.String())
	}
}

func (g *generator) updateKey() string { return g.o.Cluster + "-update" }

func (g *generator) viewName(i int) string { return fmt.Sprintf("view-%d", i) }

func (g *generator) views() {
	for i := 0; i < g.o.Views; i++ {
		var b strings.Builder
		g.meta(&b, "BindView", g.viewName(i))
		fmt.Fprintf(&b, "  clusterRef: %s\n  order: %d\n", g.o.Cluster, (i+1)*10)
		if i == g.o.Views-1 {
			b.WriteString("  matchClients: [any]\n")
		} else {
			fmt.Fprintf(&b, "  matchClients: [\"10.%d.0.0/16\", \"2001:db8:%x::/48\"]\n", i, i)
		}
		g.add("views.yaml", b.String())
	}
}

var tlds = []string{"com", "net", "org", "io", "dev"}
var words = []string{"web", "api", "db", "cache", "mail", "vpn", "git", "ci", "build", "auth", "shop", "blog", "app", "edge", "lb", "metrics", "logs", "queue", "search", "static"}

// zoneName is zone i's name: forward zones under a few TLDs; every eighth
// a /24 reverse zone.
func zoneName(i int) (string, bool) {
	if i%8 == 7 {
		return fmt.Sprintf("%d.%d.10.in-addr.arpa", (i/8)%256, (i/8/256)%256), true
	}
	return fmt.Sprintf("zone%d.example.%s", i, tlds[i%len(tlds)]), false
}

func (g *generator) zones() {
	n := g.o.Zones
	for i := 0; i < n; i++ {
		count := g.o.Records / n
		if i < g.o.Records%n {
			count++
		}
		g.zone(i, count)
	}
}

// rec is one generated RRset.
type rec struct {
	name, typ string
	ttl       int
	values    []string
}

func (g *generator) zone(i, count int) {
	name, reverse := zoneName(i)
	objName := strings.ReplaceAll(name, ".", "-")
	var recs []rec
	if reverse {
		recs = g.reverseRecords(count)
	} else {
		recs = g.forwardRecords(count)
	}
	var inline, objs []rec
	for _, r := range recs {
		if g.o.RecordObjects > 0 && g.rng.Float64() < g.o.RecordObjects {
			objs = append(objs, r)
		} else {
			inline = append(inline, r)
		}
	}
	g.pkg.Zones++
	g.pkg.Records += len(recs)

	var b strings.Builder
	b.Grow(64 * len(inline))
	g.meta(&b, "BindZone", objName)
	fmt.Fprintf(&b, "  clusterRef: %s\n  zoneName: %s\n", g.o.Cluster, name)
	if g.o.Views > 0 {
		fmt.Fprintf(&b, "  viewRef: %s\n", g.viewName(i%g.o.Views))
	}
	b.WriteString("  nameservers: [\"ns1.example.net.\", \"ns2.example.net.\"]\n")
	fmt.Fprintf(&b, "  soa:\n    email: \"hostmaster@%s\"\n", name)
	if g.o.Dynamic > 0 && i%g.o.Dynamic == g.o.Dynamic/2 {
		fmt.Fprintf(&b, "  dynamicUpdate: true\n  updateKeyRef: %s\n", g.updateKey())
	}
	if len(inline) > 0 {
		b.WriteString("  records:\n")
		for _, r := range inline {
			b.WriteString("    - {")
			writeRec(&b, r)
			b.WriteString("}\n")
		}
	}
	g.add("zones.yaml", b.String())

	for j, r := range objs {
		var d strings.Builder
		g.meta(&d, "DNSRecord", fmt.Sprintf("%s-r%d", objName, j))
		fmt.Fprintf(&d, "  zoneRef: %s\n  ", objName)
		writeRecBlock(&d, r)
		g.add("records.yaml", d.String())
	}
}

func writeRec(b *strings.Builder, r rec) {
	fmt.Fprintf(b, "name: %s, type: %s, ", strconv.Quote(r.name), r.typ)
	if r.ttl > 0 {
		fmt.Fprintf(b, "ttl: %d, ", r.ttl)
	}
	b.WriteString("values: [")
	for k, v := range r.values {
		if k > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Quote(v))
	}
	b.WriteString("]")
}

func writeRecBlock(b *strings.Builder, r rec) {
	fmt.Fprintf(b, "name: %s\n  type: %s\n", strconv.Quote(r.name), r.typ)
	if r.ttl > 0 {
		fmt.Fprintf(b, "  ttl: %d\n", r.ttl)
	}
	b.WriteString("  values:\n")
	for _, v := range r.values {
		fmt.Fprintf(b, "    - %s\n", strconv.Quote(v))
	}
}

// forwardRecords makes count RRsets of a forward zone. Owner names carry
// the record's index, so (owner, type) never repeats.
func (g *generator) forwardRecords(count int) []rec {
	var out []rec
	hosts := 0 // A owners so far, for CNAME/MX/SRV targets
	for j := 0; len(out) < count; j++ {
		w := words[g.rng.IntN(len(words))]
		host := fmt.Sprintf("%s-%d", w, j)
		ttl := 0
		if g.rng.IntN(4) == 0 {
			ttl = []int{60, 300, 900, 86400}[g.rng.IntN(4)]
		}
		target := func() string {
			if hosts == 0 {
				return "@"
			}
			return fmt.Sprintf("%s-%d", "host", g.rng.IntN(hosts))
		}
		p := g.rng.IntN(100)
		switch {
		case p < 35 || j == 0:
			out = append(out, rec{name: fmt.Sprintf("host-%d", hosts), typ: "A", ttl: ttl, values: g.ipv4s()})
			hosts++
		case p < 50:
			out = append(out, rec{name: host, typ: "AAAA", ttl: ttl, values: []string{fmt.Sprintf("2001:db8:%x:%x::%x", g.rng.IntN(65536), j/65536, j%65536+1)}})
		case p < 65:
			out = append(out, rec{name: host, typ: "CNAME", ttl: ttl, values: []string{target()}})
		case p < 75:
			out = append(out, rec{name: host, typ: "TXT", ttl: ttl, values: g.txt(j)})
		case p < 80:
			out = append(out, rec{name: host, typ: "MX", ttl: ttl, values: []string{"10 " + target(), "20 mx.example.net."}})
		case p < 87:
			out = append(out, rec{name: fmt.Sprintf("_%s-%d._tcp", w, j), typ: "SRV", ttl: ttl, values: []string{fmt.Sprintf("%d %d %d %s", g.rng.IntN(20), g.rng.IntN(100), 1024+g.rng.IntN(60000), target())}})
		case p < 90:
			out = append(out, rec{name: host, typ: "CAA", ttl: ttl, values: []string{`0 issue "letsencrypt.org"`, `0 iodef "mailto:security@example.net"`}})
		case p < 95 && count-len(out) >= 2:
			// A delegation with in-zone glue.
			sub := fmt.Sprintf("sub-%d", j)
			out = append(out,
				rec{name: sub, typ: "NS", values: []string{"ns1." + sub, "ns2.example.net."}},
				rec{name: "ns1." + sub, typ: "A", values: g.ipv4s()[:1]})
		default:
			out = append(out, rec{name: fmt.Sprintf("host-%d", hosts), typ: "A", ttl: ttl, values: g.ipv4s()})
			hosts++
		}
	}
	return out
}

func (g *generator) ipv4s() []string {
	n := 1 + g.rng.IntN(2)
	var out []string
	for k := 0; k < n; k++ {
		out = append(out, fmt.Sprintf("198.%d.%d.%d", 18+g.rng.IntN(2), g.rng.IntN(256), 1+g.rng.IntN(254)))
	}
	if n == 2 && out[0] == out[1] {
		out = out[:1]
	}
	return out
}

// txt is a TXT RRset: SPF, a verification token, one with quotes and
// semicolons inside, or a long DKIM-like key split into 255-byte strings.
func (g *generator) txt(j int) []string {
	switch g.rng.IntN(4) {
	case 0:
		return []string{`"v=spf1 include:_spf.example.net ~all"`}
	case 1:
		return []string{fmt.Sprintf(`"site-verification=%016x%016x"`, g.rng.Uint64(), g.rng.Uint64())}
	case 2:
		return []string{fmt.Sprintf(`"note: \"quoted\"; semi;colons and spaces %d"`, j)}
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	key := make([]byte, 392)
	for k := range key {
		key[k] = alphabet[g.rng.IntN(len(alphabet))]
	}
	s := "v=DKIM1; k=rsa; p=" + string(key)
	var parts []string
	for len(s) > 255 {
		parts = append(parts, `"`+s[:255]+`"`)
		s = s[255:]
	}
	parts = append(parts, `"`+s+`"`)
	return []string{strings.Join(parts, " ")}
}

// reverseRecords are PTRs of a /24 (and beyond 254, of a fake sub-label so
// the names stay unique).
func (g *generator) reverseRecords(count int) []rec {
	out := make([]rec, 0, count)
	for j := 0; j < count; j++ {
		name := strconv.Itoa(j%254 + 1)
		if j >= 254 {
			name = fmt.Sprintf("%d.x%d", j%254+1, j/254)
		}
		out = append(out, rec{name: name, typ: "PTR", values: []string{fmt.Sprintf("%s-%d.example.net.", words[g.rng.IntN(len(words))], j)}})
	}
	return out
}
