package agent

import (
	"context"
	"net"
	"strconv"
	"time"

	"git.unkin.net/unkin/bind-fn/internal/layout"
)

// catchUp runs on a secondary right after an applied change: every zone
// whose serial is behind the primary's gets `rndc refresh`. Every pod
// applies the same swap at about the same time; when the primary's NOTIFY
// for the changed zone arrives just before the secondary's own reload, the
// reload cancels the refresh it started ("refresh: failure trying primary
// ...: operation canceled") and nothing retries it before the retry/refresh
// timers (60/300 s). In that case the primary already serves the new
// serial, so comparing serials right after the reload finds the zone.
// Only zones found behind touch the control channel.
func (a *Agent) catchUp(ctx context.Context) {
	if a.role == RolePrimary {
		return
	}
	cfg := a.config()
	keys, _ := LoadViewKeys(cfg.Views)
	primaries := a.primaryAddrs(cfg)
	for _, z := range cfg.SecondaryZones {
		k, ok := keys[z.View]
		paddr, pok := primaries[z.View]
		if !ok || !pok {
			continue
		}
		var lk *Key
		if z.View != "" {
			lk = &k
		}
		local, err := SOASerial(ctx, a.opt.DNSAddr, z.Zone, lk, 2*time.Second)
		if err != nil {
			continue // not loaded (readiness reports it) or not ours
		}
		remote, err := SOASerial(ctx, paddr, z.Zone, &k, 2*time.Second)
		if err != nil || !serialBehind(local, remote) {
			continue
		}
		args := []string{"refresh", z.Zone}
		if z.View != "" {
			args = append(args, "IN", z.View)
		}
		a.log.Info("zone behind the primary after a change; refreshing", "zone", zoneID(z), "serial", local, "primary", remote)
		if _, err := a.rndc.Run(ctx, args...); err != nil {
			a.log.Warn("cannot refresh zone", "zone", zoneID(z), "err", err)
		}
	}
}

// scheduleCatchUp runs catchUp once, CatchUpDelay after the latest change.
func (a *Agent) scheduleCatchUp(ctx context.Context) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.catchUpTimer != nil {
		a.catchUpTimer.Stop()
	}
	a.catchUpTimer = time.AfterFunc(a.opt.CatchUpDelay, func() {
		a.catchUpMu.Lock()
		defer a.catchUpMu.Unlock()
		if ctx.Err() == nil {
			a.catchUp(ctx)
		}
	})
}

// primaryAddrs is the first primary address of each view, from the lists
// named runs with.
func (a *Agent) primaryAddrs(cfg *layout.AgentConfigDoc) map[string]string {
	a.mu.Lock()
	applied := a.applied
	a.mu.Unlock()
	primaries := map[string]string{} // view -> primary address
	for _, v := range cfg.Views {
		for _, p := range applied {
			if p.Name == layout.PrimaryListName(v.View) && len(p.IPs) > 0 {
				port := p.Port
				if port == 0 {
					port = 53
				}
				primaries[v.View] = net.JoinHostPort(p.IPs[0].String(), strconv.Itoa(port))
			}
		}
	}
	return primaries
}

// refreshEvery spaces the agent's refreshes of one zone that is not loaded.
const refreshEvery = 5 * time.Second

// maxRefreshesPerPass bounds the zones one readiness pass asks the primary
// about and refreshes: a new secondary of 100,000 zones has them all
// unloaded while named transfers them itself, and each refresh is an rndc
// process.
const maxRefreshesPerPass = 50

// refreshUnloaded runs on a secondary while zones are not loaded: each one
// the primary answers for now (its SOA, signed with the view's key), and
// each stub or mirror zone, gets `rndc refresh`, at most once per
// refreshEvery (tried holds the last times). BIND retries a secondary zone that never loaded on its own
// backoff, 50–100 s after a refused first refresh. On the kubelet that is
// the start-up race: every pod starts at once, a secondary asks the primary
// Service for the catalog before the primary is Ready (a Service without a
// ready endpoint rejects), and the primary's start-up NOTIFYs went out
// before the secondary listened, so nothing else asks again.
func (a *Agent) refreshUnloaded(ctx context.Context, zones []layout.ZoneRef, tried map[layout.ZoneRef]time.Time) {
	if a.role == RolePrimary || len(zones) == 0 {
		return
	}
	cfg := a.config()
	keys, _ := LoadViewKeys(cfg.Views)
	primaries := a.primaryAddrs(cfg)
	asked := 0
	for _, z := range zones {
		if time.Since(tried[z]) < refreshEvery {
			continue
		}
		// A stub or mirror zone is not the primary's to answer for: the
		// primary holds it as a stub or mirror too, so its SOA never comes
		// back authoritative. Such a zone is refreshed on the cadence alone;
		// its own primaries say whether the refresh loads it.
		fetched := z.Type == layout.ZoneTypeStub || z.Type == layout.ZoneTypeMirror
		k, ok := keys[z.View]
		paddr, pok := primaries[z.View]
		if !fetched && (!ok || !pok) {
			continue
		}
		if tried[z].IsZero() {
			// First seen unloaded: named's own first refresh (a zone just
			// added, a secondary just started) gets refreshEvery.
			tried[z] = time.Now()
			continue
		}
		if asked++; asked > maxRefreshesPerPass {
			break
		}
		if !fetched {
			if _, err := SOASerial(ctx, paddr, z.Zone, &k, time.Second); err != nil {
				continue // the primary does not answer for it (yet)
			}
		}
		tried[z] = time.Now()
		args := []string{"refresh", z.Zone}
		if z.View != "" {
			args = append(args, "IN", z.View)
		}
		if _, err := a.rndc.Run(ctx, args...); err != nil {
			// A catalog member is not a zone yet until the catalog is in.
			a.log.Debug("cannot refresh zone not loaded", "zone", zoneID(z), "err", err)
			continue
		}
		if fetched {
			a.log.Info("stub or mirror zone not loaded; refreshing", "zone", zoneID(z), "type", z.Type)
			continue
		}
		a.log.Info("zone not loaded while the primary answers for it; refreshing", "zone", zoneID(z), "primary", paddr)
	}
}
