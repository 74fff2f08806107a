package validate

import (
	"fmt"
	"net/netip"
	"regexp"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"git.unkin.net/unkin/bind-fn/internal/diag"
	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/model"
	nc "git.unkin.net/unkin/bind-fn/internal/namedconf"
	"git.unkin.net/unkin/bind-fn/internal/render"
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
		for _, p := range addressLiterals(e) {
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

var ipLiteral = regexp.MustCompile(`[0-9A-Fa-f:.]*[:.][0-9A-Fa-f:.]*(?:/[0-9]+)?`)

// CheckRendered checks the rendered objects against the API server's size
// limits (checkObjectSizes), and proves, after rendering, that every IP literal in every
// rendered named.conf comes from an input field (or is loopback, for the
// control and statistics channels): no pod IP and no address learnt at run
// time is ever rendered (docs/design.md#no-runtime-address). A hit is a bug in bind-fn, reported
// against the cluster.
func CheckRendered(clusters []*model.Cluster, objs []render.Object) diag.Results {
	rs := checkObjectSizes(clusters, objs)
	byName := map[string]*model.Cluster{}
	allowed := map[string]map[netip.Prefix]bool{}
	for _, c := range clusters {
		k := c.Namespace + "/" + layout.ConfigMapName(c.Name)
		byName[k] = c
		m := map[netip.Prefix]bool{}
		for _, a := range append(inputAddresses(c), topologyAddresses(c)...) {
			m[a.prefix] = true
		}
		allowed[k] = m
	}
	for _, o := range objs {
		cm, ok := o.Obj.(*corev1.ConfigMap)
		if !ok {
			continue
		}
		k := cm.Namespace + "/" + cm.Name
		c := byName[k]
		if c == nil {
			continue
		}
		for _, file := range []string{layout.NamedConfPrimary, layout.NamedConfSecondary} {
			var bad []string
			for _, lit := range addressLiterals(cm.Data[file]) {
				if lit.Addr().IsLoopback() || allowed[k][lit] {
					continue
				}
				bad = append(bad, lit.String())
			}
			if len(bad) > 0 {
				sort.Strings(bad)
				rs.Errorf(c.Src, "", "cannot render %s for BindCluster %q: it holds address(es) %s that no input field holds (a runtime address must never reach config); this is a bug in bind-fn, please report it", file, c.Name, strings.Join(bad, ", "))
			}
		}
	}
	return rs
}

// addressLiterals finds the IP addresses and networks outside quoted
// strings and comments of a named.conf.
func addressLiterals(conf string) []netip.Prefix {
	var out []netip.Prefix
	for _, line := range strings.Split(conf, "\n") {
		line = stripQuoted(line)
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		for _, m := range ipLiteral.FindAllString(line, -1) {
			if p, err := netip.ParsePrefix(m); err == nil {
				out = append(out, p)
			} else if a, err := netip.ParseAddr(m); err == nil {
				out = append(out, netip.PrefixFrom(a, a.BitLen()))
			}
		}
	}
	return out
}

// stripQuoted blanks out double-quoted strings (with their escapes).
func stripQuoted(line string) string {
	var b strings.Builder
	in := false
	for i := 0; i < len(line); i++ {
		ch := line[i]
		switch {
		case in && ch == '\\':
			i++
		case ch == '"':
			in = !in
			b.WriteByte(' ')
		case !in:
			b.WriteByte(ch)
		}
	}
	return b.String()
}
