package validate

import (
	"fmt"
	"net/netip"
	"strings"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/model"
	nc "git.unkin.net/unkin/bind-fn/internal/namedconf"
)

func parseCIDR(s string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(strings.TrimSpace(s))
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("write it in CIDR form such as 10.244.0.0/16")
	}
	if p.Masked() != p {
		return netip.Prefix{}, fmt.Errorf("host bits are set; did you mean %s?", p.Masked())
	}
	return p, nil
}

// inputAddress is one IP address or network an input field holds.
type inputAddress struct {
	src    diag.Source
	field  string
	prefix netip.Prefix
}

// inputAddresses lists every address of every address match list and server
// entry of the cluster: the only places named.conf takes addresses from.
func inputAddresses(c *model.Cluster) []inputAddress {
	var out []inputAddress
	for _, lf := range amlFields(c) {
		for i, e := range lf.elems {
			if el, err := nc.ParseElement(e); err == nil && el.Prefix.IsValid() {
				out = append(out, inputAddress{lf.src, fmt.Sprintf("%s[%d]", lf.field, i), el.Prefix})
			}
		}
	}
	for _, lf := range serverFields(c) {
		for i, e := range lf.elems {
			if se, err := nc.ParseServerEntry(e); err == nil && se.Addr.IsValid() {
				out = append(out, inputAddress{lf.src, fmt.Sprintf("%s[%d]", lf.field, i), netip.PrefixFrom(se.Addr, se.Addr.BitLen())})
			}
		}
	}
	// extraOptions carry addresses of their own (blackhole, listen-on,
	// query-source ...): the user wrote them, so they are input too.
	for i, e := range c.Spec.ExtraOptions {
		for _, p := range nc.AddressLiterals(e) {
			out = append(out, inputAddress{c.Src, fmt.Sprintf("spec.extraOptions[%d]", i), p})
		}
	}
	return out
}

// checkRuntimeAddresses: an input address inside the cluster's pod or
// service ranges (spec.podCIDRs, spec.serviceCIDRs) is one learnt at run
// time: it changes when the pod or Service is recreated, and config that
// holds it goes stale.
func checkRuntimeAddresses(c *model.Cluster) diag.Results {
	var rs diag.Results
	type rng struct {
		p    netip.Prefix
		what string
	}
	var ranges []rng
	for _, s := range c.Spec.PodCIDRs {
		if p, err := parseCIDR(s); err == nil {
			ranges = append(ranges, rng{p, "pod range " + p.String() + ": pod addresses change whenever a pod is rescheduled"})
		}
	}
	for _, s := range c.Spec.ServiceCIDRs {
		if p, err := parseCIDR(s); err == nil {
			ranges = append(ranges, rng{p, "service range " + p.String() + ": a Service address changes when the Service is recreated unless its clusterIP is pinned"})
		}
	}
	if len(ranges) == 0 {
		return rs
	}
	for _, a := range inputAddresses(c) {
		if !a.prefix.IsSingleIP() {
			continue
		}
		for _, r := range ranges {
			if r.p.Contains(a.prefix.Addr()) {
				rs.Warnf(a.src, a.field, "address %s is inside the %s; use a stable address (a pinned Service IP, a load balancer) or a key", a.prefix.Addr(), r.what)
				break
			}
		}
	}
	return rs
}

// InputAddresses are the addresses and networks the cluster's input fields
// hold (address match lists, server entries, extraOptions, the replication
// topology's literal addresses): the only addresses a rendered named.conf
// may hold besides loopback. The renderer's self-check proves it
// (render.SelfCheck).
func InputAddresses(c *model.Cluster) []netip.Prefix {
	var out []netip.Prefix
	for _, a := range append(inputAddresses(c), topologyAddresses(c)...) {
		out = append(out, a.prefix)
	}
	return out
}
