package validate

import (
	"fmt"
	"net/netip"
	"regexp"
	"strings"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/model"
)

// Cross-cluster checks (docs/multi-cluster.md). internal/model resolves
// spec.replication (the primary cluster, the shared key, the zones, loops)
// and reports what does not resolve; this file checks the addresses the
// two clusters reach each other at, which must exist before any pod does.

var topoHostLabel = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// replicationHosts are a cluster's spec.replication address lists: whose
// cluster each address belongs to, and which cluster must reach it.
type replicationHosts struct {
	field string
	hosts []string
	// owner runs the Service the addresses lead to; from is the cluster
	// whose pods use them.
	owner, from *model.Cluster
}

func hostsOf(c *model.Cluster) []replicationHosts {
	up := c.Upstream
	if up == nil {
		return nil
	}
	return []replicationHosts{
		{"spec.replication.primaryAddresses", up.Hosts, up.Primary, c},
		{"spec.replication.notifyAddresses", c.Spec.Replication.NotifyAddresses, c, up.Primary},
	}
}

// checkTopology: every address one cluster reaches another at is a stable
// one the other cluster's network routes to: an address outside the owning
// cluster's pod and service ranges (a load balancer's), or a DNS name that
// is not a Kubernetes cluster-local name (which only the owning cluster's
// DNS answers); a secondary cluster's relay address is its own.
func checkTopology(clusters []*model.Cluster) diag.Results {
	var rs diag.Results
	relay := map[string]*model.Cluster{} // notify address -> secondary cluster
	for _, c := range clusters {
		for _, l := range hostsOf(c) {
			for i, h := range l.hosts {
				field := fmt.Sprintf("%s[%d]", l.field, i)
				if msg := hostProblem(h, l.owner, l.from); msg != "" {
					rs.Errorf(c.Src, field, "cannot reach %q at %q from %q: %s", l.owner.Name, h, l.from.Name, msg)
				}
				if l.owner == c {
					k := strings.ToLower(strings.TrimSuffix(strings.TrimSpace(h), "."))
					if other := relay[k]; other != nil && other != c {
						rs.Errorf(c.Src, field, "address %q is also the relay of secondary cluster %q: the primary cluster would NOTIFY one cluster for the other; give each secondary cluster its own <cluster>-primary address", h, other.Name)
					}
					relay[k] = c
				}
			}
		}
	}
	return rs
}

// hostProblem says why h cannot be an address another cluster reaches
// owner at ("" when it can).
func hostProblem(h string, owner, from *model.Cluster) string {
	h = strings.TrimSpace(h)
	if a, err := netip.ParseAddr(h); err == nil {
		switch {
		case a.Zone() != "":
			return "a scoped address (%zone) cannot be written into named.conf; use a global address"
		case a.IsLoopback(), a.IsUnspecified(), a.IsMulticast(), a.IsLinkLocalUnicast():
			return "it is a loopback, unspecified, multicast or link-local address; use the address of a LoadBalancer Service"
		}
		for _, s := range owner.Spec.PodCIDRs {
			if p, err := parseCIDR(s); err == nil && p.Contains(a) {
				return fmt.Sprintf("it is inside %q's pod range %s: a pod address changes whenever the pod is rescheduled and other clusters cannot route to it; use the address of %q's <cluster>-primary Service as a LoadBalancer", owner.Name, p, owner.Name)
			}
		}
		for _, s := range owner.Spec.ServiceCIDRs {
			if p, err := parseCIDR(s); err == nil && p.Contains(a) {
				return fmt.Sprintf("it is inside %q's service range %s: a ClusterIP answers only inside its own Kubernetes cluster; make %q's <cluster>-primary Service a LoadBalancer (spec.primaryService.type) and use its address", owner.Name, p, owner.Name)
			}
		}
		return ""
	}
	if strings.ContainsAny(h, " \t") {
		return "write one address or DNS name per entry (no port or key: the shared key is spec.replication.transferKeyRef)"
	}
	name := strings.ToLower(strings.TrimSuffix(h, "."))
	if name == "" {
		return "it is empty"
	}
	for _, l := range strings.Split(name, ".") {
		if !topoHostLabel.MatchString(l) {
			return fmt.Sprintf("label %q is not a host name label (letters, digits, inner hyphens, at most 63); write an IP address or a DNS name", l)
		}
	}
	if !strings.Contains(name, ".") {
		return fmt.Sprintf("a single-label name resolves through %q's search path only (a Service of its own namespace), never to another Kubernetes cluster; use a DNS name both clusters resolve, or a LoadBalancer address", from.Name)
	}
	domain := strings.TrimSuffix(owner.ClusterDomain(), ".")
	for _, suffix := range []string{".svc", ".svc." + domain, ".svc.cluster.local", ".pod." + domain} {
		if strings.HasSuffix(name, suffix) || strings.Contains(name, ".svc.") && strings.HasSuffix(name, "."+domain) {
			return fmt.Sprintf("it is a Kubernetes cluster-local name: only the cluster DNS of the Kubernetes cluster %q runs in answers it, and in %q's it names nothing or something else; use a DNS name published outside the cluster (external-dns), or the LoadBalancer address", owner.Name, from.Name)
		}
	}
	if strings.HasSuffix(name, ".cluster.local") {
		return "it is a Kubernetes cluster-local name (cluster.local); use a DNS name both clusters resolve, or the LoadBalancer address"
	}
	return ""
}

// topologyAddresses are the IP literals of spec.replication a cluster's
// named.conf may hold: on a secondary cluster its primary addresses and
// its relay's; on a cluster that feeds secondary clusters, their relays'
// (pod 0 writes them into server statements).
func topologyAddresses(c *model.Cluster) []inputAddress {
	var out []inputAddress
	add := func(src diag.Source, field string, hosts []string) {
		for i, h := range hosts {
			if a, err := netip.ParseAddr(strings.TrimSpace(h)); err == nil {
				out = append(out, inputAddress{src, fmt.Sprintf("%s[%d]", field, i), netip.PrefixFrom(a, a.BitLen())})
			}
		}
	}
	if r := c.Spec.Replication; r != nil {
		add(c.Src, "spec.replication.primaryAddresses", r.PrimaryAddresses)
		add(c.Src, "spec.replication.notifyAddresses", r.NotifyAddresses)
	}
	for _, d := range c.Downstreams {
		add(d.Cluster.Src, "spec.replication.notifyAddresses", d.Hosts)
	}
	return out
}
