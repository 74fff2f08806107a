package agent

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"git.unkin.net/unkin/bind-fn/internal/agent/serversconf"
	"git.unkin.net/unkin/bind-fn/internal/layout"
)

// resolvePeers resolves the server lists and writes servers.conf when it
// changed; it reports whether it did.
func (a *Agent) resolvePeers(ctx context.Context, cfg *layout.AgentConfigDoc) (bool, error) {
	peers := a.peers.Resolve(ctx, a.role, cfg.ServerLists)
	for host, err := range a.peers.Errors {
		a.log.Debug("cannot resolve peer", "host", host, "err", err)
	}
	text, err := serversconf.Write(peers)
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

// Peers is the resolved content of one server list (serversconf.List,
// which writes servers.conf from them).
type Peers = serversconf.List
