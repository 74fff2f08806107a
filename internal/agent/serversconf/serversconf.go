// Package serversconf writes servers.conf, the include of the server lists
// the agent resolves at run time (primaries lists and the peers ACL),
// through the typed named.conf writer. It is a leaf below the agent, so that
// the test helpers that stand in for the agent (internal/testutil's LayPod,
// the differential's pair) write the file the agent writes, not a copy.
package serversconf

import (
	"fmt"
	"net"
	"net/netip"
	"sort"

	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/namedconf"
)

// List is the resolved content of one server list.
type List struct {
	Name string
	Key  string
	Port int // 0: BIND's default
	IPs  []net.IP
	// ACLOnly: only in layout.PeersACL, no primaries list.
	ACLOnly bool
	// TLS names the tls block every entry is reached with ("": plain).
	TLS string
}

// Write renders the server lists include through the typed
// named.conf writer: one `primaries "<name>" { <ip> [port <p>] key "<key>"; ... };`
// per list, lists sorted by name, addresses sorted and de-duplicated. An
// empty list renders as `primaries "<name>" { };`; an ACL-only list renders
// no primaries statement. It also defines the ACL
// layout.PeersACL of every resolved peer address and loopback, which the
// rendered config exempts from response rate limiting: the cluster's own SOA
// queries and transfers, and the agent's readiness queries, must never be
// dropped as a flood (they come from one /24).
func Write(lists []List) (string, error) {
	ls := append([]List(nil), lists...)
	sort.Slice(ls, func(i, j int) bool { return ls[i].Name < ls[j].Name })
	var f namedconf.File
	f.Comment("Written by bind-fn-agent from resolved peer names. Do not edit.")
	var peers []net.IP
	for _, l := range ls {
		peers = append(peers, l.IPs...)
	}
	// Loopback too: the agent's own readiness queries and UPDATEs. It also
	// keeps the ACL from ever being empty.
	peers = append(peers, net.IPv4(127, 0, 0, 1), net.IPv6loopback)
	var acl []namedconf.Stmt
	for _, ip := range SortIPs(peers) {
		if a, ok := netip.AddrFromSlice(ip); ok {
			acl = append(acl, namedconf.S(namedconf.Kw(a.Unmap().String())))
		}
	}
	f.Add(namedconf.B([]namedconf.Word{namedconf.Kw("acl"), namedconf.Str(layout.PeersACL)}, acl...))
	for _, l := range ls {
		if l.ACLOnly {
			continue
		}
		var entries []namedconf.Stmt
		for _, ip := range SortIPs(l.IPs) {
			a, ok := netip.AddrFromSlice(ip)
			if !ok {
				continue
			}
			entries = append(entries, namedconf.ServerEntry{Addr: a.Unmap(), Port: l.Port, Key: l.Key, TLS: l.TLS}.Stmt())
		}
		f.Add(namedconf.B([]namedconf.Word{namedconf.Kw("primaries"), namedconf.Str(l.Name)}, entries...))
	}
	b, err := f.Bytes()
	if err != nil {
		return "", fmt.Errorf("cannot render %s: %w", "servers.conf", err)
	}
	return string(b), nil
}

// SortIPs returns ips sorted (IPv4 before IPv6, then by bytes) without duplicates.
func SortIPs(ips []net.IP) []net.IP {
	seen := map[string]bool{}
	var out []net.IP
	for _, ip := range ips {
		if ip == nil {
			continue
		}
		if v4 := ip.To4(); v4 != nil {
			ip = v4
		}
		if seen[string(ip)] {
			continue
		}
		seen[string(ip)] = true
		out = append(out, ip)
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i]) != len(out[j]) {
			return len(out[i]) < len(out[j])
		}
		return string(out[i]) < string(out[j])
	})
	return out
}
