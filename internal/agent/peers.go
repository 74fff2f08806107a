package agent

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"time"

	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/internal/namedconf"
)

// resolvePeers resolves the server lists and writes servers.conf when it
// changed; it reports whether it did.
func (a *Agent) resolvePeers(ctx context.Context, cfg *layout.AgentConfigDoc) (bool, error) {
	peers := a.peers.Resolve(ctx, a.role, cfg.ServerLists)
	for host, err := range a.peers.Errors {
		a.log.Debug("cannot resolve peer", "host", host, "err", err)
	}
	text, err := ServersConf(peers)
	if err != nil {
		return false, err
	}
	changed, err := WriteFileAtomic(filepath.Join(a.opt.RunDir, layout.ServersInclude), []byte(text), 0o644)
	if err != nil {
		return false, err
	}
	a.serversText = text
	a.written = peers
	if changed {
		a.peersPending = true
	}
	return changed, nil
}

// publishPeers records that named has loaded the server lists last
// written: /status shows them from now on.
func (a *Agent) publishPeers() {
	a.peersPending = false
	a.mu.Lock()
	a.applied = a.written
	a.mu.Unlock()
	ps := make([]PeerStatus, 0, len(a.written))
	for _, p := range a.written {
		st := PeerStatus{List: p.Name, IPs: []string{}}
		for _, ip := range p.IPs {
			st.IPs = append(st.IPs, ip.String())
		}
		ps = append(ps, st)
	}
	a.state.Update(func(s *Status) { s.Peers = ps })
}

// waitForPrimaries resolves until every list of the secondary role has an
// address: BIND rejects a secondary zone whose primaries list is empty.
func (a *Agent) waitForPrimaries(ctx context.Context, cfg *layout.AgentConfigDoc) error {
	deadline := time.Now().Add(a.opt.PrimaryWait)
	step := min(a.opt.ResolveInterval, time.Second)
	logged := false
	for {
		if _, err := a.resolvePeers(ctx, cfg); err != nil {
			return err
		}
		missing := MissingPeers(a.role, cfg.ServerLists, a.written)
		if a.role == RolePrimary {
			// Pod 0 waits only for a relay's upstream list (a secondary
			// cluster's, docs/multi-cluster.md): its zones are secondaries
			// of it. Its other lists are also-notify targets, empty at will.
			missing = slices.DeleteFunc(missing, func(n string) bool { return n != layout.UpstreamListName })
		}
		if len(missing) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("gave up after %s waiting for server lists %v to resolve (errors: %v); a secondary cannot start with an empty primaries list", a.opt.PrimaryWait, missing, a.peers.Errors)
		}
		if !logged {
			a.log.Info("waiting for the primary to resolve before starting named", "lists", missing, "timeout", a.opt.PrimaryWait)
			logged = true
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(step):
		}
	}
}

// notifyNewPeers sends a signed NOTIFY for every zone of the primary to each
// secondary address the applied lists gained over before. BIND re-points
// also-notify on reconfig but does not re-send NOTIFYs: without this, a
// secondary that came back on a new address would miss every update made
// between its own start-up refresh and the primary's reconfig until the
// next update of that zone or its refresh timer (300 s).
func (a *Agent) notifyNewPeers(ctx context.Context, before []Peers) {
	if a.role != RolePrimary {
		return
	}
	cfg := a.config()
	old := map[string]bool{}
	for _, p := range before {
		for _, ip := range p.IPs {
			old[p.Name+"/"+ip.String()] = true
		}
	}
	keys, err := LoadViewKeys(cfg.Views)
	if err != nil {
		a.log.Warn("cannot load view keys to notify moved secondaries", "err", err)
	}
	lists := map[string]string{} // secondaries list name -> view
	for _, v := range cfg.Views {
		lists[layout.SecondariesListName(v.View)] = v.View
	}
	sent, failed := 0, 0
	for _, p := range a.applied {
		view, ok := lists[p.Name]
		if !ok {
			continue
		}
		k, ok := keys[view]
		if !ok {
			continue
		}
		for _, ip := range p.IPs {
			if old[p.Name+"/"+ip.String()] {
				continue
			}
			port := p.Port
			if port == 0 {
				port = 53
			}
			addr := net.JoinHostPort(ip.String(), strconv.Itoa(port))
			for _, z := range cfg.PrimaryZones {
				if z.View != view {
					continue
				}
				if err := SendNotify(ctx, addr, z.Zone, k, 2*time.Second); err != nil {
					failed++
					a.log.Debug("notify to a new secondary failed", "addr", addr, "zone", zoneID(z), "err", err)
					continue
				}
				sent++
			}
		}
	}
	if sent+failed > 0 {
		a.log.Info("notified new secondaries", "sent", sent, "failed", failed)
	}
}

// Peers is the resolved content of one server list.
type Peers struct {
	Name string
	Key  string
	Port int // 0: BIND's default
	IPs  []net.IP
	// ACLOnly: only in layout.PeersACL, no primaries list.
	ACLOnly bool
}

// ServersConf renders the server lists include through the typed
// named.conf writer: one `primaries "<name>" { <ip> [port <p>] key "<key>"; ... };`
// per list, lists sorted by name, addresses sorted and de-duplicated. An
// empty list renders as `primaries "<name>" { };`; an ACL-only list renders
// no primaries statement. It also defines the ACL
// layout.PeersACL of every resolved peer address and loopback, which the
// rendered config exempts from response rate limiting: the cluster's own SOA
// queries and transfers, and the agent's readiness queries, must never be
// dropped as a flood (they come from one /24).
func ServersConf(lists []Peers) (string, error) {
	ls := append([]Peers(nil), lists...)
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
			entries = append(entries, namedconf.ServerEntry{Addr: a.Unmap(), Port: l.Port, Key: l.Key}.Stmt())
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
