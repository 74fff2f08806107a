package model

import (
	"fmt"
	"net/netip"

	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
	"git.unkin.net/unkin/bind-fn/internal/diag"
)

// NetworkPolicy is spec.networkPolicy, checked: the peers the cluster's
// NetworkPolicy admits. A cluster has none when spec.networkPolicy.enabled
// is false.
type NetworkPolicy struct {
	// DNSFrom may query 53/UDP and 53/TCP; empty: every source.
	DNSFrom []networkingv1.NetworkPolicyPeer
	// MetricsFrom may reach the agent's port; empty: no rule (the node's
	// probes only).
	MetricsFrom []networkingv1.NetworkPolicyPeer
}

// parseNetworkPolicy checks spec.networkPolicy: every peer is an ipBlock
// or selectors (not both, not neither), every CIDR an address block
// without host bits, every except a smaller block inside its CIDR, every
// selector one the API server accepts. It returns nil when the policy is
// disabled; bad peers are reported and left out.
func parseNetworkPolicy(rs *diag.Results, src diag.Source, sp *v1alpha1.NetworkPolicySpec) *NetworkPolicy {
	if sp == nil {
		return &NetworkPolicy{}
	}
	if sp.Enabled != nil && !*sp.Enabled {
		for _, l := range []struct {
			f string
			n int
		}{{"dnsFrom", len(sp.DNSFrom)}, {"metricsFrom", len(sp.MetricsFrom)}} {
			if l.n > 0 {
				rs.Warnf(src, "spec.networkPolicy."+l.f, "%s is ignored: spec.networkPolicy.enabled is false, so no NetworkPolicy is rendered; remove it, or enable the policy", l.f)
			}
		}
		return nil
	}
	return &NetworkPolicy{
		DNSFrom:     parsePeers(rs, src, "spec.networkPolicy.dnsFrom", sp.DNSFrom),
		MetricsFrom: parsePeers(rs, src, "spec.networkPolicy.metricsFrom", sp.MetricsFrom),
	}
}

func parsePeers(rs *diag.Results, src diag.Source, path string, peers []networkingv1.NetworkPolicyPeer) []networkingv1.NetworkPolicyPeer {
	var out []networkingv1.NetworkPolicyPeer
	for i := range peers {
		p := &peers[i]
		f := fmt.Sprintf("%s[%d]", path, i)
		var bad diag.Results
		switch {
		case p.IPBlock == nil && p.PodSelector == nil && p.NamespaceSelector == nil:
			bad.Errorf(src, f, "cannot admit an empty peer: give an ipBlock, a podSelector or a namespaceSelector (to admit every source, leave %s out)", path)
		case p.IPBlock != nil && (p.PodSelector != nil || p.NamespaceSelector != nil):
			bad.Errorf(src, f, "cannot combine an ipBlock with a podSelector or namespaceSelector in one peer (the API server refuses it): make them two peers")
		case p.IPBlock != nil:
			checkIPBlock(&bad, src, f+".ipBlock", p.IPBlock)
		}
		if p.PodSelector != nil {
			checkSelector(&bad, src, f+".podSelector", p.PodSelector)
		}
		if p.NamespaceSelector != nil {
			checkSelector(&bad, src, f+".namespaceSelector", p.NamespaceSelector)
		}
		*rs = append(*rs, bad...)
		if len(bad) == 0 {
			out = append(out, *p.DeepCopy())
		}
	}
	return out
}

// checkIPBlock: the CIDR and every except are address blocks written
// canonically (no host bits: "10.1.2.3/8" would admit 10.0.0.0/8, which the
// writer probably did not mean), each except a smaller block of the CIDR's
// family inside it.
func checkIPBlock(rs *diag.Results, src diag.Source, f string, b *networkingv1.IPBlock) {
	cidr, ok := parseBlock(rs, src, f+".cidr", b.CIDR)
	for j, e := range b.Except {
		ef := fmt.Sprintf("%s.except[%d]", f, j)
		ex, eok := parseBlock(rs, src, ef, e)
		if !ok || !eok {
			continue
		}
		if ex.Addr().Is4() != cidr.Addr().Is4() || ex.Bits() <= cidr.Bits() || !cidr.Contains(ex.Addr()) {
			rs.Errorf(src, ef, "cannot except %s from %s: an except must be a smaller block inside the cidr; fix it or remove it", ex, cidr)
		}
	}
}

func parseBlock(rs *diag.Results, src diag.Source, f, s string) (netip.Prefix, bool) {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		rs.Errorf(src, f, "cannot use %q as an address block: %v; write a CIDR such as 10.0.0.0/8 or 2001:db8::/32 (a single address is 192.0.2.1/32)", s, err)
		return p, false
	}
	if p.Addr().Is4In6() {
		rs.Errorf(src, f, "cannot use %q: an IPv4-mapped IPv6 block matches no IPv4 packet; write the IPv4 block", s)
		return p, false
	}
	if m := p.Masked(); m != p {
		rs.Errorf(src, f, "cannot use %q as an address block: it has host bits set; write %q (or %s/%d for the one address)", s, m.String(), p.Addr(), p.Addr().BitLen())
		return p, false
	}
	return p, true
}

// checkSelector: a label selector the API server accepts (keys and values,
// operators and their values).
func checkSelector(rs *diag.Results, src diag.Source, f string, sel *metav1.LabelSelector) {
	for _, e := range metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, field.NewPath(f)) {
		rs.Errorf(src, e.Field, "cannot use this selector: %s", e.ErrorBody())
	}
}
