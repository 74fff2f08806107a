package agent

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"git.unkin.net/unkin/bind-fn/internal/layout"
)

// fail records an error in status, metrics and the log.
func (a *Agent) fail(stage string, err error) {
	if err = a.waitFor(stage, err); err == nil {
		return // a file of the change has not arrived yet (arrival.go)
	}
	es := &ErrorStatus{Message: err.Error(), Time: time.Now().UTC()}
	var ce *CheckError
	if errors.As(err, &ce) {
		es.File, es.Line = ce.File, ce.Line
	}
	a.state.Update(func(s *Status) { s.LastError = es })
	a.state.metrics.ReloadFailures.WithLabelValues(stage).Inc()
	a.state.metrics.ConfigError.Set(1)
	a.log.Error("change not applied; named keeps serving its current config", "stage", stage, "err", err, "file", es.File, "line", es.Line)
}

// apply makes named load what plan says (plan.go): nothing (a change of
// the dynamic zones' records only, which converge by UPDATE); or, for a
// change of zones alone, named-checkconf on those zones' statements and
// files only (checkZones), then `rndc delzone`, `addzone`, `modzone` and
// `reload ZONE IN VIEW` for exactly those zones; or, when the rest of the
// configuration changed, named-checkconf on the whole config, `rndc
// reconfig`, then the reloads of the zones whose file changed.
func (a *Agent) apply(ctx context.Context, plan Plan, snap Snapshot, cfgHash, zonesHash string) bool {
	start := time.Now()
	var ran []string
	if !plan.Empty() {
		check := func() error {
			if plan.Reconfig {
				return RunNamedCheckconf(ctx, a.opt.NamedCheckconf, a.checkTarget())
			}
			return a.checkZones(ctx, plan, snap)
		}
		if err := check(); err != nil {
			a.fail(stageCheckconf, err)
			return false
		}
		var cmds [][]string
		if plan.Reconfig {
			// named reads the config afresh: zones added one by one since
			// it last did are in it now, and must not be in the NZD too.
			if err := a.clearNewZones(); err != nil {
				a.fail(stagePrepare, err)
				return false
			}
			cmds = append(cmds, []string{"reconfig"})
		}
		for _, k := range plan.Delete {
			cmds = append(cmds, zoneArgs("delzone", k))
		}
		for _, z := range plan.Add {
			cmds = append(cmds, append(zoneArgs("addzone", z.ZoneKey), z.Body))
		}
		for _, z := range plan.Modify {
			cmds = append(cmds, append(zoneArgs("modzone", z.ZoneKey), z.Body))
		}
		for _, z := range plan.Reload {
			cmds = append(cmds, reloadArgs(z))
		}
		for _, cmd := range cmds {
			if _, err := a.rndc.Run(ctx, cmd...); err != nil {
				// Zone commands before this one took: named no longer runs
				// the applied config, and the next change reconfigures.
				a.zonesDirty = a.zonesDirty || (!plan.Reconfig && len(ran) > 0)
				// named refuses a config it cannot load and keeps the old
				// one; the files may have changed since the check, so
				// locate the problem again.
				if cerr := check(); cerr != nil {
					a.fail(stageCheckconf, cerr)
				} else {
					a.fail(stageRNDC, err)
				}
				return false
			}
			ran = append(ran, summary(cmd))
		}
	}
	if plan.Reconfig {
		// named took the (possibly new) rndc key in: the client follows.
		if err := WriteRNDCClientConf(a.rndc.Conf, filepath.Join(a.opt.RunDir, layout.RNDCKeyFile), a.opt.RNDCServer, a.opt.RNDCPort); err != nil {
			a.log.Warn("cannot refresh rndc client key", "err", err)
		}
		// named read servers.conf as written: its NOTIFYs follow these lists.
		a.publishPeers()
		if a.role != RolePrimary {
			a.scheduleCatchUp(ctx)
		}
	}
	if !plan.Empty() {
		a.kickReadiness()
	}
	now := time.Now().UTC()
	a.appliedCfg, a.appliedZones, a.appliedSnap = cfgHash, zonesHash, snap
	if plan.Reconfig {
		a.zonesDirty = false
	}
	if plan.Reconfig {
		a.state.metrics.Reloads.WithLabelValues(kindReconfig).Inc()
	}
	if len(plan.Reload) > 0 {
		a.state.metrics.Reloads.WithLabelValues(kindReload).Inc()
	}
	if len(plan.Add)+len(plan.Modify)+len(plan.Delete) > 0 {
		a.state.metrics.Reloads.WithLabelValues(kindZone).Inc()
	}
	a.state.metrics.ConfigError.Set(0)
	a.state.metrics.LastApply.Set(float64(now.Unix()))
	a.state.Update(func(s *Status) {
		s.AppliedConfigHash = cfgHash[:16] + "/" + zonesHash[:16]
		s.LastApply = &now
		s.LastError = nil
	})
	if plan.Empty() {
		a.log.Info("applied change: nothing for named to load", "took", time.Since(start).Round(time.Millisecond))
	} else {
		a.log.Info("applied change", "rndc", strings.Join(ran, "; "), "took", time.Since(start).Round(time.Millisecond))
	}
	return true
}

// summary is an rndc command for the log: addzone and modzone without
// the zone's statement.
func summary(cmd []string) string {
	if cmd[0] == "addzone" || cmd[0] == "modzone" {
		cmd = cmd[:len(cmd)-1]
	}
	return strings.Join(cmd, " ")
}

// zoneArgs are rndc's arguments for a command on one zone.
func zoneArgs(cmd string, k ZoneKey) []string {
	args := []string{cmd, k.Zone}
	if k.View != "" {
		args = append(args, "IN", k.View)
	}
	return args
}

// onChange handles a new hash of the mounted files.
func (a *Agent) onChange(ctx context.Context, cfgHash, zonesHash string) bool {
	a.seenCfg, a.seenZones = cfgHash, zonesHash
	cfgChanged := cfgHash != a.appliedCfg
	if cfgChanged {
		a.rollCheck = true // the DNSSEC Secret is among the config's files
	}
	cfg := a.config()
	// agent.json may read the per-zone lists from the zones ConfigMaps
	// (docs/state.md#shards): a change of those alone is read again too,
	// and prepared (a new zone's seed), without resolving the peers again.
	if cfgChanged || zonesHash != a.appliedZones {
		var err error
		if cfg, err = LoadConfig(a.opt.ConfigFile); err != nil {
			a.fail(stagePrepare, err)
			return false
		}
		if err := a.prepare(cfg, false); err != nil {
			a.fail(stagePrepare, err)
			return false
		}
		if cfgChanged {
			if _, err := a.resolvePeers(ctx, cfg); err != nil {
				a.fail(stagePrepare, err)
				return false
			}
		}
		a.mu.Lock()
		a.cfg = cfg
		a.mu.Unlock()
	} else if err := a.refreshSeeds(cfg); err != nil {
		a.fail(stagePrepare, err)
		return false
	}
	snap, err := a.snapshot(cfg)
	if err != nil {
		a.fail(stagePrepare, err)
		return false
	}
	plan := PlanChange(a.appliedSnap, snap)
	// servers.conf holds lists named has not loaded, or zone commands
	// failed part way (named holds some of them): one reconfig.
	if a.peersPending || a.zonesDirty {
		plan.reconfigure(a.appliedSnap)
	}
	a.log.Info("mounted files changed", "config", cfgChanged, "zones", zonesHash != a.appliedZones, "reconfig", plan.Reconfig, "reload", fmt.Sprint(plan.Reload),
		"addzone", len(plan.Add), "modzone", len(plan.Modify), "delzone", len(plan.Delete))
	return a.apply(ctx, plan, snap, cfgHash, zonesHash)
}

// converge runs one dynamic-zone pass; it reports success.
func (a *Agent) converge(ctx context.Context) bool {
	zones := a.config().DynamicZones
	if len(zones) == 0 {
		return true
	}
	start := time.Now()
	res, err := a.conv.Converge(ctx, zones)
	d := time.Since(start)
	c := &Convergence{Updated: res.Updated, Removed: res.Removed, Unchanged: res.Unchanged, Messages: res.Messages, Transfers: res.Transfers, Seconds: d.Seconds(), Time: time.Now().UTC()}
	result := resultOK
	if err != nil {
		result = resultError
		c.Error = err.Error()
		a.log.Warn("dynamic zones not converged", "err", err)
	} else if res.Updated+res.Removed > 0 {
		a.log.Info("dynamic zones converged", "updated", res.Updated, "removed", res.Removed, "messages", res.Messages, "took", d.Round(time.Millisecond))
	}
	a.state.metrics.Convergences.WithLabelValues(result).Inc()
	a.state.metrics.UpdatedRRsets.WithLabelValues(opReplace).Add(float64(res.Updated))
	a.state.metrics.UpdatedRRsets.WithLabelValues(opDelete).Add(float64(res.Removed))
	a.state.metrics.ConvergenceSeconds.Set(d.Seconds())
	a.state.Update(func(s *Status) { s.LastConvergence = c })
	return err == nil
}

// reapply applies, with a reconfig, what named has not loaded yet: server
// lists written since (new peer addresses), or a change whose apply failed.
func (a *Agent) reapply(ctx context.Context) bool {
	snap, err := a.snapshot(a.config())
	if err != nil {
		a.fail(stagePrepare, err)
		return false
	}
	plan := PlanChange(a.appliedSnap, snap)
	plan.reconfigure(a.appliedSnap)
	return a.apply(ctx, plan, snap, a.seenCfg, a.seenZones)
}
