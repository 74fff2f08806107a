package model

import (
	"fmt"
	"regexp"
	"strings"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/layout"
)

// What clients and manifests of the old operator need from the model
// (docs/design.md#clients): a default apex NS for zones without nameservers, and the
// update key's transfer right.

// DefaultClusterDomain is the Kubernetes cluster DNS domain unless
// BindCluster.spec.clusterDomain says otherwise.
const DefaultClusterDomain = "cluster.local"

var hostLabel = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// ClusterDomain is the cluster's DNS domain, canonical (trailing dot).
func (c *Cluster) ClusterDomain() string {
	if c.Spec.ClusterDomain == "" {
		return DefaultClusterDomain + "."
	}
	return CanonicalName(c.Spec.ClusterDomain)
}

// ServeServiceFQDN is the serve Service's name in cluster DNS:
// <service>.<namespace>.svc.<clusterDomain>.
func (c *Cluster) ServeServiceFQDN() string {
	return layout.ServeServiceName(c.Name) + "." + c.Namespace + ".svc." + c.ClusterDomain()
}

// checkClusterDomain: spec.clusterDomain is a host name (it ends the NS
// target of zones without nameservers).
func (b *builder) checkClusterDomain(c *Cluster) {
	if msg := clusterDomainProblem(c); msg != "" {
		b.rs.Errorf(c.Src, "spec.clusterDomain", "cannot use %q as the cluster DNS domain: %s", c.Spec.ClusterDomain, msg)
	}
}

func clusterDomainProblem(c *Cluster) string {
	if c.Spec.ClusterDomain == "" {
		return ""
	}
	for _, l := range strings.Split(strings.TrimSuffix(c.ClusterDomain(), "."), ".") {
		if !hostLabel.MatchString(l) {
			return fmt.Sprintf("label %q is not a host name label (letters, digits, inner hyphens, at most 63)", l)
		}
	}
	if len(c.ServeServiceFQDN()) > 254 {
		return fmt.Sprintf("%s is longer than 253 characters", c.ServeServiceFQDN())
	}
	return ""
}

// defaultNameservers gives a primary zone without spec.nameservers an apex
// NS that needs no pod IP: the serve Service's cluster DNS name. The old
// operator published ns1.<zone> with the primary pod's IP as glue; a render
// cannot know pod IPs (docs/design.md#no-runtime-address). The warning says how to publish real
// nameservers.
func (b *builder) defaultNameservers(c *Cluster, z *Zone) {
	if z.Spec.Type != v1alpha1.ZonePrimary || len(z.Spec.Nameservers) > 0 {
		return
	}
	ns := c.ServeServiceFQDN()
	if clusterDomainProblem(c) != "" { // reported on the cluster; no second error here
		ns = layout.ServeServiceName(c.Name) + "." + c.Namespace + ".svc." + DefaultClusterDomain + "."
	}
	z.Spec.Nameservers = []string{ns}
	b.rs.Warnf(z.Src, "spec.nameservers", "zone %s has no nameservers: its apex NS (and SOA MNAME) is %s, the serve Service's name in cluster DNS, which only clients inside the cluster can resolve; list the names the zone is delegated to in spec.nameservers (set spec.clusterDomain on BindCluster %q if the cluster's DNS domain is not %s)",
		strings.TrimSuffix(z.Name, "."), ns, c.Name, DefaultClusterDomain)
}

// UpdateKeyTransfers reports whether the zone's update key may also
// transfer it (spec.updateKeyTransfer, default true for dynamic zones).
func (z *Zone) UpdateKeyTransfers() bool {
	return z.Spec.DynamicUpdate && z.UpdateKey != nil && (z.Spec.UpdateKeyTransfer == nil || *z.Spec.UpdateKeyTransfer)
}
