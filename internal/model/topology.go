package model

import (
	"fmt"
	"sort"
	"strings"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/diag"
)

// Upstream says that a cluster is a secondary cluster of another BindCluster
// (spec.replication.primaryClusterRef), which runs in another Kubernetes
// cluster: its pod 0 transfers every zone and the catalog of Primary from
// Hosts, signed with Key, and relays them to its own pods
// (docs/multi-cluster.md).
type Upstream struct {
	Src     diag.Source
	Primary *Cluster
	// Key is the TSIG key the two clusters share.
	Key *Key
	// Hosts are spec.replication.primaryAddresses: addresses or DNS names
	// the agent resolves.
	Hosts []string
	// Zones are the zones it serves from Primary, sorted by name: every
	// primary zone of Primary (or of Primary's own upstream, for a tier),
	// or the ones spec.replication.zones selects.
	Zones []*MirrorZone
	// Catalog is the canonical name of Primary's catalog zone ("" without
	// one): pod 0 consumes it from Primary, its other pods from pod 0.
	Catalog string
	// TransferTLS is spec.replication.transferTLS, checked; nil: plain TCP.
	TransferTLS *TransferTLS
}

// MirrorZone is a zone a secondary cluster serves from its primary cluster.
type MirrorZone struct {
	// Name is canonical, with the trailing dot.
	Name string
	// CatalogMember: provisioned from the catalog, no zone statement.
	CatalogMember bool
}

// Downstream is a secondary cluster a cluster feeds: pod 0 admits its
// transfers by Key and NOTIFYs Hosts (its spec.replication.notifyAddresses).
type Downstream struct {
	Cluster *Cluster
	Key     *Key
	Hosts   []string
}

// IsRelay reports whether pod 0 of the cluster is a secondary of another
// cluster (it serves Upstream's zones and relays them to the other pods).
func (c *Cluster) IsRelay() bool { return c.Upstream != nil }

// Feeds reports whether pod 0 sends transfers and NOTIFYs to other clusters.
func (c *Cluster) Feeds() bool { return len(c.Downstreams) > 0 }

// Site is what keeps the objects of clusters that run in different
// Kubernetes clusters apart: a cluster in a replication topology renders
// every Secret it needs into its own output directory (a shared key is then
// rendered once per Kubernetes cluster); "" for every other cluster, whose
// shared Secrets are rendered once per namespace.
func (c *Cluster) Site() string {
	if c.Upstream != nil || len(c.Downstreams) > 0 || c.Spec.Replication != nil {
		return c.Name
	}
	return ""
}

// topologyPass resolves spec.replication: each secondary cluster's primary
// cluster, shared key, addresses and zones, and each primary cluster's
// downstreams. Loops are refused; a tier (a secondary cluster of a
// secondary cluster) serves its primary's zones.
func (b *builder) topologyPass() {
	var secondaries []*Cluster
	for _, c := range b.clusters {
		if r := c.Spec.Replication; r != nil && r.PrimaryClusterRef != "" {
			secondaries = append(secondaries, c)
		}
	}
	sort.Slice(secondaries, func(i, j int) bool { return secondaries[i].Name < secondaries[j].Name })
	state := map[*Cluster]int{} // 1 resolving, 2 done
	var resolve func(c *Cluster) bool
	resolve = func(c *Cluster) bool {
		r := c.Spec.Replication
		if r == nil || r.PrimaryClusterRef == "" {
			return true
		}
		switch state[c] {
		case 1:
			return false
		case 2:
			return c.Upstream != nil
		}
		state[c] = 1
		defer func() { state[c] = 2 }()
		const f = "spec.replication.primaryClusterRef"
		p := b.clusters[nsName{c.Namespace, r.PrimaryClusterRef}]
		switch {
		case p == nil:
			b.rs.Errorf(c.Src, f, "cannot resolve BindCluster %q in namespace %q: no such object in the input; name the primary cluster (it must be rendered from the same package)", r.PrimaryClusterRef, c.Namespace)
			return false
		case p == c:
			b.rs.Errorf(c.Src, f, "BindCluster %q cannot be a secondary cluster of itself; name another BindCluster or remove spec.replication.primaryClusterRef", c.Name)
			return false
		}
		if !resolve(p) {
			if state[p] == 1 || b.loops(c) {
				b.rs.Errorf(c.Src, f, "cannot make %q a secondary cluster of %q: the chain %s is a loop; one cluster of it must be the primary (no primaryClusterRef)", c.Name, p.Name, b.chain(c))
			}
			return false
		}
		ok := true
		if c.HasViews || p.HasViews {
			who := c
			if p.HasViews {
				who = p
			}
			b.rs.Errorf(c.Src, f, "cannot replicate BindCluster %q across clusters: %q has BindViews, and one shared key cannot select a view; replicate clusters without views (docs/multi-cluster.md)", p.Name, who.Name)
			ok = false
		}
		if c.Views[0].Catalog != nil {
			b.rs.Errorf(c.Views[0].Catalog.Src, "spec.clusterRef", "a secondary cluster has no catalog of its own: %q consumes the catalog of its primary cluster %q; attach the BindCatalogZone to %q", c.Name, p.Name, p.Name)
			ok = false
		}
		key := b.sharedKey(c, p, r.TransferKeyRef)
		if key == nil {
			ok = false
		}
		for _, fl := range []struct {
			field string
			hosts []string
			whose string
		}{{"spec.replication.primaryAddresses", r.PrimaryAddresses, p.Name + "'s <cluster>-primary Service as " + c.Name + " reaches it"},
			{"spec.replication.notifyAddresses", r.NotifyAddresses, c.Name + "'s <cluster>-primary Service as " + p.Name + " reaches it"}} {
			if len(fl.hosts) == 0 {
				b.rs.Errorf(c.Src, fl.field, "a secondary cluster needs %s: list the address of %s (a LoadBalancer address or a DNS name)", fl.field, fl.whose)
				ok = false
			}
		}
		xot, xok := b.replicationTLS(c, p)
		if !ok || !xok {
			return false
		}
		up := &Upstream{Src: c.Src, Primary: p, Key: key, Hosts: r.PrimaryAddresses, TransferTLS: xot}
		own := map[string]bool{}
		for _, z := range c.Views[0].Zones {
			own[z.Name] = true
		}
		var offered []*MirrorZone
		if p.Upstream != nil {
			offered = p.Upstream.Zones
			up.Catalog = p.Upstream.Catalog
		} else {
			pv := p.Views[0]
			if pv.Catalog != nil {
				up.Catalog = pv.Catalog.ZoneName
			}
			for _, z := range pv.Zones {
				if z.Spec.Type == v1alpha1.ZonePrimary {
					offered = append(offered, &MirrorZone{Name: z.Name, CatalogMember: z.CatalogMember})
				}
			}
		}
		byName := map[string]*MirrorZone{}
		for _, z := range offered {
			byName[z.Name] = z
		}
		if len(r.Zones) > 0 {
			if up.Catalog != "" {
				b.rs.Errorf(c.Src, "spec.replication.zones", "cannot select zones of %q: its catalog %s brings every member zone to every cluster that consumes it; remove spec.replication.zones, or leave the zones out of the catalog (spec.catalog: false) and list them", p.Name, strings.TrimSuffix(up.Catalog, "."))
				return false
			}
			seen := map[string]bool{}
			for i, n := range r.Zones {
				name := CanonicalName(n)
				z := byName[name]
				field := fmt.Sprintf("spec.replication.zones[%d]", i)
				switch {
				case z == nil:
					b.rs.Errorf(c.Src, field, "cannot serve zone %q from BindCluster %q: %q has no such primary zone; add its BindZone to %q or remove it here", strings.TrimSuffix(name, "."), p.Name, p.Name, p.Name)
					ok = false
				case seen[name]:
					b.rs.Errorf(c.Src, field, "zone %q is listed twice; list it once", strings.TrimSuffix(name, "."))
					ok = false
				default:
					seen[name] = true
					up.Zones = append(up.Zones, z)
				}
			}
		} else {
			up.Zones = offered
		}
		for _, z := range up.Zones {
			if own[z.Name] {
				b.rs.Errorf(c.Src, "spec.replication.primaryClusterRef", "zone %q comes from primary cluster %q and is also a BindZone of %q itself; remove one", strings.TrimSuffix(z.Name, "."), p.Name, c.Name)
				ok = false
			}
		}
		if !ok {
			return false
		}
		sort.Slice(up.Zones, func(i, j int) bool { return up.Zones[i].Name < up.Zones[j].Name })
		c.Upstream = up
		p.Downstreams = append(p.Downstreams, &Downstream{Cluster: c, Key: key, Hosts: r.NotifyAddresses})
		return true
	}
	for _, c := range secondaries {
		resolve(c)
	}
	// A replication key belongs to the clusters it links: a key without
	// clusterRef is in scope of every cluster of the namespace, but one
	// site's key must not be rendered into another site's output.
	linked := map[*Key]map[*Cluster]bool{}
	for _, c := range b.clusters {
		if up := c.Upstream; up != nil {
			if linked[up.Key] == nil {
				linked[up.Key] = map[*Cluster]bool{}
			}
			linked[up.Key][c], linked[up.Key][up.Primary] = true, true
		}
	}
	for k, cs := range b.keys {
		for name, key := range cs {
			if l := linked[key]; l != nil && !l[b.clusters[k]] {
				delete(cs, name)
			}
		}
	}
	named := map[*Cluster]bool{} // named as a primary cluster by some cluster
	for _, c := range secondaries {
		if p := b.clusters[nsName{c.Namespace, c.Spec.Replication.PrimaryClusterRef}]; p != nil {
			named[p] = true
		}
	}
	for _, c := range b.clusters {
		sort.Slice(c.Downstreams, func(i, j int) bool { return c.Downstreams[i].Cluster.Name < c.Downstreams[j].Cluster.Name })
		r := c.Spec.Replication
		if r == nil {
			continue
		}
		if r.Hidden && !named[c] {
			b.rs.Errorf(c.Src, "spec.replication.hidden", "a hidden cluster serves only its secondary clusters, and %q has none: name it in another BindCluster's spec.replication.primaryClusterRef, or remove hidden", c.Name)
		}
		if r.PrimaryClusterRef == "" && (len(r.PrimaryAddresses) > 0 || len(r.NotifyAddresses) > 0 || r.TransferKeyRef != "" || len(r.Zones) > 0) {
			b.rs.Errorf(c.Src, "spec.replication.primaryClusterRef", "spec.replication lists addresses, a key or zones but no primaryClusterRef: name the primary cluster %q is a secondary cluster of", c.Name)
		}
	}
}

// loops reports whether following primaryClusterRef from c comes back to a
// cluster already on the way.
func (b *builder) loops(c *Cluster) bool {
	seen := map[*Cluster]bool{}
	for x := c; x != nil; {
		if seen[x] {
			return true
		}
		seen[x] = true
		r := x.Spec.Replication
		if r == nil || r.PrimaryClusterRef == "" {
			return false
		}
		x = b.clusters[nsName{x.Namespace, r.PrimaryClusterRef}]
	}
	return false
}

// chain is the primaryClusterRef path from c until it repeats: "a → b → a".
func (b *builder) chain(c *Cluster) string {
	seen := map[*Cluster]bool{}
	var names []string
	for x := c; x != nil; {
		names = append(names, x.Name)
		if seen[x] {
			break
		}
		seen[x] = true
		r := x.Spec.Replication
		if r == nil || r.PrimaryClusterRef == "" {
			break
		}
		x = b.clusters[nsName{x.Namespace, r.PrimaryClusterRef}]
	}
	return strings.Join(names, " → ")
}

// sharedKey resolves spec.replication.transferKeyRef: a BindTSIGKey in the
// scope of both clusters (no clusterRef).
func (b *builder) sharedKey(c, p *Cluster, ref string) *Key {
	const f = "spec.replication.transferKeyRef"
	if ref == "" {
		b.rs.Errorf(c.Src, f, "a secondary cluster needs the TSIG key it shares with %q: create a BindTSIGKey without clusterRef and name it in spec.replication.transferKeyRef (only that key admits transfers and NOTIFYs across clusters)", p.Name)
		return nil
	}
	kc := b.keys[nsName{c.Namespace, c.Name}][ref]
	kp := b.keys[nsName{p.Namespace, p.Name}][ref]
	switch {
	case kc == nil && kp == nil:
		b.rs.Errorf(c.Src, f, "cannot resolve BindTSIGKey %q in namespace %q: no such object in the input; create it without clusterRef so both %q and %q have it", ref, c.Namespace, c.Name, p.Name)
		return nil
	case kc == nil || kp == nil || kc != kp:
		who := c.Name
		if kp == nil {
			who = p.Name
		}
		b.rs.Errorf(c.Src, f, "BindTSIGKey %q is not shared: %q does not have it (its clusterRef names one cluster); remove its clusterRef so both %q and %q render it", ref, who, c.Name, p.Name)
		return nil
	}
	return kc
}
