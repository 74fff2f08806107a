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
