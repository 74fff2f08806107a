package verify

import (
	"net/netip"
	"slices"
	"sort"
	"strings"

	"git.unkin.net/unkin/bind-fn/api/v1alpha1"
)

// client is how a query reaches one view: from an address the view
// matches first, or signed with a key it matches.
type client struct {
	view string // BIND's view name ("" without views)
	obj  string // the BindView object
	src  string
	key  string // key name, when no address reaches the view
	// all are every candidate address the view takes (recursion probes:
	// some may be allowed to recurse, some not).
	all []string
}

// clients finds, for every view in match order, an address BIND would
// place in it (first match wins across views, within a list the first
// matching element, "!" negates, ACL names nest), trying the first host of
// every network the configuration names and one address nothing names.
//
// Addresses in skip (the original's own listen-on addresses) are never
// clients: a query from the server's own address does not cross the
// bridge.
func clients(views []*v1alpha1.BindView, acls []*v1alpha1.BindACL, skip []string, lists ...[]string) []client {
	aclOf := map[string][]string{}
	for _, a := range acls {
		n := a.Spec.ACLName
		if n == "" {
			n = a.Name
		}
		aclOf[n] = a.Spec.Addresses
	}
	if len(views) == 0 {
		// One implicit view that matches every client.
		views = []*v1alpha1.BindView{{Spec: v1alpha1.BindViewSpec{MatchClients: []string{"any"}}}}
	}
	sort.SliceStable(views, func(i, j int) bool {
		if views[i].Spec.Order != views[j].Spec.Order {
			return views[i].Spec.Order < views[j].Spec.Order
		}
		return views[i].Name < views[j].Name
	})
	cands := map[string]bool{"198.51.100.199": true}
	var collect func(els []string, depth int)
	collect = func(els []string, depth int) {
		for _, e := range els {
			e = strings.TrimPrefix(strings.TrimSpace(e), "!")
			if l, ok := aclOf[strings.Trim(e, `"`)]; ok && depth < 8 {
				collect(l, depth+1)
				continue
			}
			if p, err := netip.ParsePrefix(e); err == nil && p.Addr().Is4() {
				a := p.Masked().Addr()
				if p.Bits() < 31 {
					a = a.Next()
				}
				cands[a.String()] = true
			} else if a, err := netip.ParseAddr(e); err == nil && a.Is4() {
				cands[a.String()] = true
			}
		}
	}
	for _, v := range views {
		collect(v.Spec.MatchClients, 0)
		collect(v.Spec.AllowRecursion, 0)
	}
	for _, l := range lists { // allow-recursion, allow-query: clients inside and outside
		collect(l, 0)
	}
	for _, a := range acls {
		collect(a.Spec.Addresses, 0)
	}
	var addrs []string
	for a := range cands {
		addrs = append(addrs, a)
	}
	sort.Strings(addrs)
	out := make([]client, len(views))
	for i, v := range views {
		name := v.Spec.ViewName
		if name == "" {
			name = v.Name
		}
		out[i] = client{view: name, obj: v.Name}
	}
	for _, a := range addrs {
		ip := netip.MustParseAddr(a)
		if !bridgeClient(ip) || ip == netip.MustParseAddr(origIP) || ip == netip.MustParseAddr(rendIP) || ip == netip.MustParseAddr(gateway) || slices.Contains(skip, a) {
			continue
		}
		for i, v := range views {
			mc := v.Spec.MatchClients
			if len(mc) == 0 {
				mc = []string{"any"}
			}
			if m, allow := match(ip, mc, aclOf, 0); m {
				if allow && out[i].src == "" {
					out[i].src = a
				}
				if allow && len(out[i].all) < 4 {
					out[i].all = append(out[i].all, a)
				}
				break // the first view that matches takes the query
			}
		}
	}
	for i, v := range views {
		if out[i].src != "" {
			continue
		}
		for _, e := range v.Spec.MatchClients {
			if k, ok := strings.CutPrefix(e, "key "); ok {
				out[i].key = strings.Trim(k, `"`)
				break
			}
		}
	}
	return out
}

// bridgeClient reports whether ip can be a client's source address on the
// verify's bridge: loopback (127.0.0.1 in an ACL, for the server's own
// tools), link-local, multicast and unspecified addresses cannot send a
// query that reaches the servers (connect fails with "invalid argument"),
// so a view matching them is reached from another of its addresses, or
// by key.
func bridgeClient(ip netip.Addr) bool {
	return ip.IsGlobalUnicast() && !ip.IsLinkLocalUnicast()
}

// match evaluates an address match list for ip: whether an element
// matched, and whether that match allows.
func match(ip netip.Addr, els []string, aclOf map[string][]string, depth int) (bool, bool) {
	for _, e := range els {
		e = strings.TrimSpace(e)
		neg := strings.HasPrefix(e, "!")
		e = strings.Trim(strings.TrimSpace(strings.TrimPrefix(e, "!")), `"`)
		var m, allow bool
		switch {
		case e == "any":
			m, allow = true, true
		case e == "none":
			m, allow = true, false
		case e == "localhost" || e == "localnets" || strings.HasPrefix(e, "key "):
			// The clients are on the bridge, never the server's own
			// networks; a key element needs a signed query.
		default:
			if l, ok := aclOf[e]; ok && depth < 8 {
				m, allow = match(ip, l, aclOf, depth+1)
			} else if p, err := netip.ParsePrefix(e); err == nil {
				m, allow = p.Contains(ip), true
			} else if a, err := netip.ParseAddr(e); err == nil {
				m, allow = a == ip, true
			}
		}
		if m {
			return true, allow != neg
		}
	}
	return false, false
}
