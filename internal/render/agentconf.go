package render

import (
	"fmt"

	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
)

// agentConfig is agent.json: the peers to resolve, keys to import, and the
// shards whose agent-zones.json hold the zones to seed, converge and have
// loaded to be ready (docs/state.md#shards); catalog and policy zones, one
// per view, are listed here.
func agentConfig(c *model.Cluster, shards int) layout.AgentConfigDoc {
	doc := layout.AgentConfigDoc{
		Cluster:                c.Name,
		Namespace:              c.Namespace,
		PrimaryConf:            layout.ConfigFile(layout.NamedConfPrimary),
		SecondaryConf:          layout.ConfigFile(layout.NamedConfSecondary),
		ResolveIntervalSeconds: int(c.Spec.Agent.ResolveIntervalSeconds),
		MetricsPort:            int(c.Spec.Agent.MetricsPort),
		PrimaryZones:           []layout.ZoneRef{},
		SecondaryZones:         []layout.ZoneRef{},
	}
	for i := 0; i < shards; i++ {
		doc.ZoneDocs = append(doc.ZoneDocs, layout.ZonesDocPath(i))
	}
	// Names relative to the pod's namespace (resolv.conf search path), so a
	// later namespace transformer (kustomize) needs no re-render.
	primaryHost := layout.PrimaryServiceName(c.Name)
	var secondaryHosts []string
	for i := int32(1); i < c.Spec.Replicas; i++ {
		secondaryHosts = append(secondaryHosts, fmt.Sprintf("%s-%d.%s", c.Name, i, layout.HeadlessServiceName(c.Name)))
	}
	for _, v := range c.Views {
		doc.Views = append(doc.Views, layout.ViewKey{View: v.Name, KeyName: v.TransferKey.KeyName, KeyFile: keyInclude(c, v.TransferKey)})
		doc.ServerLists = append(doc.ServerLists,
			layout.ServerList{Name: layout.PrimaryListName(v.Name), Role: "secondary", Hosts: []string{primaryHost}, Key: v.TransferKey.KeyName},
			layout.ServerList{Name: layout.SecondariesListName(v.Name), Role: "primary", Hosts: secondaryHosts, Key: v.TransferKey.KeyName},
		)
		if cat := catalogOf(c, v); cat != "" {
			ref := layout.ZoneRef{Zone: bare(cat), View: v.Name}
			doc.PrimaryZones = append(doc.PrimaryZones, ref)
			doc.SecondaryZones = append(doc.SecondaryZones, ref)
		}
		for _, p := range v.Policies {
			ref := layout.ZoneRef{Zone: bare(p.ZoneName), View: v.Name}
			doc.PrimaryZones = append(doc.PrimaryZones, ref)
			doc.SecondaryZones = append(doc.SecondaryZones, ref)
		}
	}
	if c.Spec.Replicas > 1 {
		doc.ServerLists = append(doc.ServerLists, layout.ServerList{
			Name: layout.PrimaryPodList, Role: "secondary", ACLOnly: true,
			Hosts: []string{fmt.Sprintf("%s-0.%s", c.Name, layout.HeadlessServiceName(c.Name))},
		})
	}
	topologyAgentConfig(c, &doc)
	tlsAgentConfig(c, &doc)
	doc.DataDirs = []string{primaryDir, secondaryDir}
	for _, v := range c.Views {
		if catalogOf(c, v) != "" {
			doc.DataDirs = append(doc.DataDirs, catzSubdir(v))
		}
	}
	for _, k := range c.Keys {
		if k.Import {
			doc.ImportedKeys = append(doc.ImportedKeys, layout.ImportedKey{KeyName: k.KeyName, Algorithm: k.Algorithm, Secret: k.SecretName, Include: layout.ImportedKeyInclude(k.SecretName)})
		}
	}
	return doc
}

// catalogOf is the view's catalog zone: its own, or on a secondary cluster
// its primary cluster's ("" without one).
func catalogOf(c *model.Cluster, v *model.View) string {
	b := confBuilder{c: c}
	return b.catalogName(v)
}

// topologyAgentConfig adds what a replication topology needs the agent to
// resolve (docs/multi-cluster.md): on a secondary cluster's relay the
// primary cluster's addresses (UpstreamListName), on a cluster that feeds
// secondary clusters each relay's address (RemoteListName), every entry
// with the key the two clusters share; and the zones a secondary cluster
// serves from its primary cluster, which every pod must have loaded to be
// ready (catalog members are not listed: the catalog brings them).
func topologyAgentConfig(c *model.Cluster, doc *layout.AgentConfigDoc) {
	if up := c.Upstream; up != nil {
		doc.ServerLists = append(doc.ServerLists, layout.ServerList{Name: layout.UpstreamListName, Role: "primary", Hosts: up.Hosts, Key: up.Key.KeyName})
		for _, z := range up.Zones {
			if z.CatalogMember {
				continue
			}
			ref := layout.ZoneRef{Zone: bare(z.Name), View: c.Views[0].Name}
			doc.PrimaryZones = append(doc.PrimaryZones, ref)
			doc.SecondaryZones = append(doc.SecondaryZones, ref)
		}
	}
	for _, d := range c.Downstreams {
		doc.ServerLists = append(doc.ServerLists, layout.ServerList{Name: layout.RemoteListName(d.Cluster.Name), Role: "primary", Hosts: d.Hosts, Key: d.Key.KeyName})
	}
}
