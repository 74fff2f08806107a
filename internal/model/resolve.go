package model

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/net/idna"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/layout"
)

// Build resolves a decoded Set into one desired state per BindCluster,
// sorted by namespace and name. Every dangling or ambiguous reference is a
// located error; the clusters are still returned so the caller can collect
// more results, but nothing may be rendered when any result is an error.
// Build moves each BindZone's spec.records out of s into its zone's RRsets
// (their one reader): s's zones have no records afterwards.
func Build(s *Set) ([]*Cluster, diag.Results) {
	b := &builder{set: s, clusters: map[nsName]*Cluster{}, zones: map[nsName]*Zone{}}
	b.clustersPass()
	b.scopedPass()
	b.viewsPass()
	b.catalogsPass()
	b.zonesPass()
	b.recordsPass()
	b.policiesPass()
	b.topologyPass()
	out := make([]*Cluster, 0, len(b.clusters))
	for _, c := range b.clusters {
		b.finish(c)
		ResolveResources(c, &b.rs)
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Namespace != out[j].Namespace {
			return out[i].Namespace < out[j].Namespace
		}
		return out[i].Name < out[j].Name
	})
	return out, b.rs
}

type nsName struct{ ns, name string }

type builder struct {
	set      *Set
	rs       diag.Results
	clusters map[nsName]*Cluster
	zones    map[nsName]*Zone // by BindZone object name
	// objects in scope of a cluster, by object name
	keys     map[nsName]map[string]*Key
	acls     map[nsName]map[string]*ACL
	policies map[nsName]map[string]*DNSSECPolicy
	views    map[nsName]map[string]*View // by object name
}

// CanonicalName lower-cases a domain name, writes internationalized labels
// in their ASCII (punycode) form, and gives it a trailing dot. A label that
// is not valid IDNA is kept as written, for the validator to report.
func CanonicalName(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			labels := strings.Split(s, ".")
			for j, l := range labels {
				if a, err := idna.Lookup.ToASCII(l); err == nil && l != "" {
					labels[j] = a
				}
			}
			s = strings.Join(labels, ".")
			break
		}
	}
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

func (b *builder) cluster(src diag.Source, field, ref string) *Cluster {
	if ref == "" {
		b.rs.Errorf(src, field, "cannot resolve clusterRef: it is empty; name the BindCluster in namespace %q", src.Ref.Namespace)
		return nil
	}
	c := b.clusters[nsName{src.Ref.Namespace, ref}]
	if c == nil {
		b.rs.Errorf(src, field, "cannot resolve BindCluster %q in namespace %q: no such object in the input", ref, src.Ref.Namespace)
	}
	return c
}

func (b *builder) clustersPass() {
	for _, o := range b.set.Clusters {
		k := nsName{o.Src.Ref.Namespace, o.Src.Ref.Name}
		if prev := b.clusters[k]; prev != nil {
			b.rs.Errorf(o.Src, "metadata.name", "duplicate BindCluster %q (also in %s)", k.name, prev.Src.File)
			continue
		}
		spec := *o.Obj.Spec.DeepCopy()
		if spec.Mode == "" {
			spec.Mode = v1alpha1.ModeAuthoritative
		}
		if spec.Replicas == 0 {
			spec.Replicas = 1
		}
		if spec.Image == "" {
			spec.Image = DefaultImage
		}
		if spec.Agent == nil {
			spec.Agent = &v1alpha1.AgentSpec{}
		}
		if spec.Agent.Image == "" {
			spec.Agent.Image = DefaultAgentImage
		}
		if spec.Agent.ResolveIntervalSeconds == 0 {
			spec.Agent.ResolveIntervalSeconds = DefaultResolve
		}
		if spec.Agent.MetricsPort == 0 {
			spec.Agent.MetricsPort = layout.DefaultMetricsPort
		}
		if spec.DNSSECValidation == "" && spec.Mode == v1alpha1.ModeResolver {
			spec.DNSSECValidation = "auto"
		}
		c := &Cluster{Src: o.Src, Name: k.name, Namespace: k.ns, Spec: spec}
		c.ExtraOptions, c.extraIndex = parseExtraOptions(o.Src, spec.ExtraOptions, &b.rs)
		c.AllowQuery = parseAML(&b.rs, o.Src, "spec.allowQuery", spec.AllowQuery)
		rec := spec.AllowRecursion
		if len(rec) == 0 {
			rec = []string{"localnets", "localhost"}
		}
		c.AllowRecursion = parseAML(&b.rs, o.Src, "spec.allowRecursion", rec)
		if spec.RateLimit != nil {
			c.RateLimitExempt = parseAML(&b.rs, o.Src, "spec.rateLimit.exempt", spec.RateLimit.Exempt)
		}
		c.Forwarders = parseServers(&b.rs, o.Src, "spec.forwarders", spec.Forwarders)
		c.NetworkPolicy = parseNetworkPolicy(&b.rs, o.Src, spec.NetworkPolicy)
		b.clusters[k] = c
		b.checkClusterDomain(c)
		c.TLS = parseTLS(&b.rs, c)
	}
}

// inScope returns the clusters an object with this clusterRef belongs to:
// the named one, or every cluster of the namespace when the ref is empty.
func (b *builder) inScope(src diag.Source, ref string) []*Cluster {
	if ref != "" {
		if c := b.cluster(src, "spec.clusterRef", ref); c != nil {
			return []*Cluster{c}
		}
		return nil
	}
	var out []*Cluster
	for k, c := range b.clusters {
		if k.ns == src.Ref.Namespace {
			out = append(out, c)
		}
	}
	return out
}

func addScoped[T any](m map[nsName]map[string]*T, c *Cluster, name string, v *T) {
	k := nsName{c.Namespace, c.Name}
	if m[k] == nil {
		m[k] = map[string]*T{}
	}
	m[k][name] = v
}

func (b *builder) scopedPass() {
	b.keys = map[nsName]map[string]*Key{}
	b.acls = map[nsName]map[string]*ACL{}
	b.policies = map[nsName]map[string]*DNSSECPolicy{}
	b.views = map[nsName]map[string]*View{}
	for _, o := range b.set.Keys {
		sp := o.Obj.Spec
		k := &Key{Src: o.Src, KeyName: sp.KeyName, Algorithm: sp.Algorithm, SecretName: sp.SecretName, Import: sp.ImportExisting, Template: sp.SecretTemplate}
		if k.KeyName == "" {
			k.KeyName = o.Src.Ref.Name
		}
		k.KeyName = strings.TrimSuffix(k.KeyName, ".")
		if k.Algorithm == "" {
			k.Algorithm = DefaultAlgorithm
		}
		if k.SecretName == "" {
			k.SecretName = o.Src.Ref.Name + "-tsig"
		}
		for _, c := range b.inScope(o.Src, sp.ClusterRef) {
			addScoped(b.keys, c, o.Src.Ref.Name, k)
			if c.ExternalSecrets() && !k.Import {
				k.Import, k.External = true, true
			}
		}
	}
	for _, o := range b.set.ACLs {
		sp := o.Obj.Spec
		name, _ := o.Obj.ConfName()
		a := &ACL{Src: o.Src, Name: name, Elements: sp.Addresses, List: parseAML(&b.rs, o.Src, "spec.addresses", sp.Addresses)}
		for _, c := range b.inScope(o.Src, sp.ClusterRef) {
			addScoped(b.acls, c, o.Src.Ref.Name, a)
		}
	}
	for _, o := range b.set.DNSSECPolicies {
		sp := o.Obj.Spec
		name, _ := o.Obj.ConfName()
		p := &DNSSECPolicy{Src: o.Src, Name: name, Spec: sp}
		parsePolicy(p, &b.rs)
		for _, c := range b.inScope(o.Src, sp.ClusterRef) {
			addScoped(b.policies, c, o.Src.Ref.Name, p)
		}
	}
}

func (b *builder) key(c *Cluster, src diag.Source, field, ref string) *Key {
	if ref == "" {
		return nil
	}
	if k := b.keys[nsName{c.Namespace, c.Name}][ref]; k != nil {
		return k
	}
	b.rs.Errorf(src, field, "cannot resolve BindTSIGKey %q in namespace %q: no such key for cluster %q (its clusterRef must be %q or empty)", ref, c.Namespace, c.Name, c.Name)
	return nil
}

func (b *builder) viewsPass() {
	for _, o := range b.set.Views {
		c := b.cluster(o.Src, "spec.clusterRef", o.Obj.Spec.ClusterRef)
		if c == nil {
			continue
		}
		sp := o.Obj.Spec
		v := &View{Src: o.Src, Name: sp.ViewName, Order: sp.Order, MatchClients: sp.MatchClients, MatchDestinations: sp.MatchDestinations, Recursion: sp.Recursion}
		mc := sp.MatchClients
		if len(mc) == 0 {
			mc = []string{"any"}
		}
		v.MatchClientsList = parseAML(&b.rs, o.Src, "spec.matchClients", mc)
		v.MatchDestinationsList = parseAML(&b.rs, o.Src, "spec.matchDestinations", sp.MatchDestinations)
		if len(sp.AllowRecursion) > 0 {
			v.AllowRecursion = sp.AllowRecursion
			v.AllowRecursionList = parseAML(&b.rs, o.Src, "spec.allowRecursion", sp.AllowRecursion)
		}
		if v.Name == "" {
			v.Name = o.Src.Ref.Name
		}
		for _, other := range c.Views {
			if other.Name == v.Name {
				b.rs.Errorf(o.Src, "metadata.name", "duplicate view %q in BindCluster %q (also %s)", v.Name, c.Name, other.Src.Ref)
			}
		}
		c.Views = append(c.Views, v)
		c.HasViews = true
		addScoped(b.views, c, o.Src.Ref.Name, v)
	}
	for _, c := range b.clusters {
		if !c.HasViews {
			c.Views = []*View{{Src: c.Src}}
		}
		sort.Slice(c.Views, func(i, j int) bool {
			if c.Views[i].Order != c.Views[j].Order {
				return c.Views[i].Order < c.Views[j].Order
			}
			return c.Views[i].Name < c.Views[j].Name
		})
	}
}

// view resolves a viewRef for an object of cluster c.
func (b *builder) view(c *Cluster, src diag.Source, ref string) (*View, bool) {
	if !c.HasViews {
		if ref != "" {
			b.rs.Errorf(src, "spec.viewRef", "cannot resolve BindView %q: BindCluster %q has no views; remove viewRef", ref, c.Name)
			return nil, false
		}
		return c.Views[0], true
	}
	if ref == "" {
		b.rs.Errorf(src, "spec.viewRef", "BindCluster %q has views, so every zone, catalog and policy must name one: set viewRef", c.Name)
		return nil, false
	}
	v := b.views[nsName{c.Namespace, c.Name}][ref]
	if v == nil {
		b.rs.Errorf(src, "spec.viewRef", "cannot resolve BindView %q of BindCluster %q in namespace %q: no such object in the input", ref, c.Name, c.Namespace)
		return nil, false
	}
	return v, true
}

func (b *builder) catalogsPass() {
	for _, o := range b.set.Catalogs {
		c := b.cluster(o.Src, "spec.clusterRef", o.Obj.Spec.ClusterRef)
		if c == nil {
			continue
		}
		v, ok := b.view(c, o.Src, o.Obj.Spec.ViewRef)
		if !ok {
			continue
		}
		if strings.TrimSpace(o.Obj.Spec.ZoneName) == "" {
			b.rs.Errorf(o.Src, "spec.zoneName", "spec.zoneName is required: name the catalog zone (catalog.invalid, say); empty it would be the root zone")
			continue
		}
		if v.Catalog != nil {
			b.rs.Errorf(o.Src, "metadata.name", "a second catalog zone for BindCluster %q%s: %s already is its catalog; keep one", c.Name, viewSuffix(v), v.Catalog.Src.Ref)
			continue
		}
		v.Catalog = &Catalog{Src: o.Src, ZoneName: CanonicalName(o.Obj.Spec.ZoneName), DefaultPrimaries: o.Obj.Spec.DefaultPrimaries,
			DefaultPrimariesList: parseServers(&b.rs, o.Src, "spec.defaultPrimaries", o.Obj.Spec.DefaultPrimaries)}
		if ref := o.Obj.Spec.TransferKeyRef; ref != "" {
			v.TransferKey = b.key(c, o.Src, "spec.transferKeyRef", ref)
		}
	}
	// Views without a catalog transfer key get an internal one.
	for _, c := range b.clusters {
		for _, v := range c.Views {
			if v.TransferKey != nil {
				continue
			}
			name := c.Name + "-xfr"
			if v.Name != "" {
				name = c.Name + "-" + v.Name + "-xfr"
			}
			v.TransferKey = &Key{Src: c.Src, KeyName: name, Algorithm: DefaultAlgorithm, SecretName: layout.TransferKeySecretName(c.Name, v.Name), Internal: true, Import: c.ExternalSecrets(), External: c.ExternalSecrets()}
		}
	}
}

func viewSuffix(v *View) string {
	if v.Name == "" {
		return ""
	}
	return fmt.Sprintf(" view %q", v.Name)
}

func (b *builder) zonesPass() {
	type zk struct {
		v    *View
		name string
	}
	seen := map[zk]*Zone{}
	for _, o := range b.set.Zones {
		// The records move to the zone's RRsets instead of being copied:
		// at 100,000 zones a second copy of every record is ~200 MiB held
		// through validation (BENCHMARKS.md).
		records := o.Obj.Spec.Records
		o.Obj.Spec.Records = nil
		sp := *o.Obj.Spec.DeepCopy()
		c := b.cluster(o.Src, "spec.clusterRef", sp.ClusterRef)
		if c == nil {
			continue
		}
		if sp.Type == "" {
			sp.Type = v1alpha1.ZonePrimary
		}
		v, ok := b.view(c, o.Src, sp.ViewRef)
		if !ok {
			continue
		}
		if strings.TrimSpace(sp.ZoneName) == "" {
			b.rs.Errorf(o.Src, "spec.zoneName", "spec.zoneName is required: name the zone (write \".\" for the root zone)")
			continue
		}
		z := &Zone{Src: o.Src, Name: CanonicalName(sp.ZoneName), Spec: sp, View: v}
		if prev := seen[zk{v, z.Name}]; prev != nil {
			b.rs.Errorf(o.Src, "spec.zoneName", "zone %q is already defined by %s%s: one BindZone per zone and view", strings.TrimSuffix(z.Name, "."), prev.Src.Ref, viewSuffix(v))
			continue
		}
		seen[zk{v, z.Name}] = z
		switch sp.Type {
		case v1alpha1.ZonePrimary, v1alpha1.ZoneSecondary, v1alpha1.ZoneStub, v1alpha1.ZoneForward:
		default:
			b.rs.Errorf(o.Src, "spec.type", "unknown zone type %q: use primary, secondary, forward or stub", sp.Type)
			continue
		}
		z.AllowTransfer = parseAML(&b.rs, o.Src, "spec.allowTransfer", sp.AllowTransfer)
		z.AllowQuery = parseAML(&b.rs, o.Src, "spec.allowQuery", sp.AllowQuery)
		z.Primaries = parseServers(&b.rs, o.Src, "spec.primaries", sp.Primaries)
		z.AlsoNotify = parseServers(&b.rs, o.Src, "spec.alsoNotify", sp.AlsoNotify)
		z.Forwarders = parseServers(&b.rs, o.Src, "spec.forwarders", sp.Forwarders)
		if sp.DynamicUpdate || sp.UpdateKeyRef != "" {
			z.UpdateKey = b.key(c, o.Src, "spec.updateKeyRef", sp.UpdateKeyRef)
		}
		z.TransferKey = b.key(c, o.Src, "spec.transferKeyRef", sp.TransferKeyRef)
		if ref := sp.DNSSECPolicyRef; ref != "" {
			z.DNSSEC = b.policies[nsName{c.Namespace, c.Name}][ref]
			if z.DNSSEC == nil {
				b.rs.Errorf(o.Src, "spec.dnssecPolicyRef", "cannot resolve BindDNSSECPolicy %q in namespace %q for cluster %q: no such object in the input", ref, c.Namespace, c.Name)
			}
		}
		z.Rollovers = parseRollovers(z, &b.rs)
		z.OtherSigners = parseOtherSigners(z, &b.rs)
		b.defaultNameservers(c, z)
		// A zone with its own allowQuery is no catalog member: a member's
		// zone statement on the secondaries comes from the catalog, which
		// cannot carry an ACL of keys and names, and without it the
		// secondaries would answer everyone. It gets an explicit zone
		// statement there instead.
		z.CatalogMember = sp.Type == v1alpha1.ZonePrimary && v.Catalog != nil && (sp.Catalog == nil || *sp.Catalog) && len(sp.AllowQuery) == 0
		if len(records) > 0 {
			z.RRsets = make([]*RRset, 0, len(records))
		}
		for i, r := range records {
			z.RRsets = append(z.RRsets, &RRset{Src: o.Src, Field: "spec.records[" + strconv.Itoa(i) + "]", Name: r.Name, Type: r.Type, TTL: r.TTL, Values: r.Values})
		}
		v.Zones = append(v.Zones, z)
		b.zones[nsName{o.Src.Ref.Namespace, o.Src.Ref.Name}] = z
	}
}

func (b *builder) recordsPass() {
	for _, o := range b.set.Records {
		sp := o.Obj.Spec
		if sp.ZoneRef == "" {
			b.rs.Errorf(o.Src, "spec.zoneRef", "cannot resolve zoneRef: it is empty; name the BindZone in namespace %q", o.Src.Ref.Namespace)
			continue
		}
		z := b.zones[nsName{o.Src.Ref.Namespace, sp.ZoneRef}]
		if z == nil {
			b.rs.Errorf(o.Src, "spec.zoneRef", "cannot resolve BindZone %q in namespace %q: no such object in the input", sp.ZoneRef, o.Src.Ref.Namespace)
			continue
		}
		z.RRsets = append(z.RRsets, &RRset{Src: o.Src, Field: "spec", Name: sp.Name, Type: sp.Type, TTL: sp.TTL, Values: sp.Values, FromRecord: true})
	}
}

func (b *builder) policiesPass() {
	for _, o := range b.set.Policies {
		c := b.cluster(o.Src, "spec.clusterRef", o.Obj.Spec.ClusterRef)
		if c == nil {
			continue
		}
		v, ok := b.view(c, o.Src, o.Obj.Spec.ViewRef)
		if !ok {
			continue
		}
		if strings.TrimSpace(o.Obj.Spec.ZoneName) == "" {
			b.rs.Errorf(o.Src, "spec.zoneName", "spec.zoneName is required: name the response policy zone (rpz.invalid, say); empty it would be the root zone")
			continue
		}
		v.Policies = append(v.Policies, &Policy{Src: o.Src, ZoneName: CanonicalName(o.Obj.Spec.ZoneName), Spec: *o.Obj.Spec.DeepCopy()})
	}
}

// finish sorts everything that is rendered.
func (b *builder) finish(c *Cluster) {
	k := nsName{c.Namespace, c.Name}
	keys := map[string]*Key{}
	for _, key := range b.keys[k] {
		keys[key.KeyName] = key
	}
	for _, v := range c.Views {
		keys[v.TransferKey.KeyName] = v.TransferKey
	}
	for _, key := range keys {
		c.Keys = append(c.Keys, key)
	}
	sort.Slice(c.Keys, func(i, j int) bool { return c.Keys[i].KeyName < c.Keys[j].KeyName })
	for _, a := range b.acls[k] {
		c.ACLs = append(c.ACLs, a)
	}
	sort.Slice(c.ACLs, func(i, j int) bool { return c.ACLs[i].Name < c.ACLs[j].Name })
	for _, p := range b.policies[k] {
		c.DNSSECPolicies = append(c.DNSSECPolicies, p)
	}
	sort.Slice(c.DNSSECPolicies, func(i, j int) bool { return c.DNSSECPolicies[i].Name < c.DNSSECPolicies[j].Name })
	for _, v := range c.Views {
		sort.Slice(v.Zones, func(i, j int) bool { return v.Zones[i].Name < v.Zones[j].Name })
		sort.Slice(v.Policies, func(i, j int) bool {
			if v.Policies[i].Spec.Order != v.Policies[j].Spec.Order {
				return v.Policies[i].Spec.Order < v.Policies[j].Spec.Order
			}
			return v.Policies[i].ZoneName < v.Policies[j].ZoneName
		})
	}
}
