package agent

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

// Run prepares, starts named and supervises it until ctx ends or named
// exits. With Options.Once it returns after preparing.
func (a *Agent) Run(ctx context.Context) error {
	cfg := a.config()
	cfgHash, zonesHash, err := a.hashes()
	if err != nil {
		return &UsageError{err}
	}
	if err := a.prepare(cfg, true); err != nil {
		return &UsageError{err}
	}
	if err := a.waitForPrimaries(ctx, cfg); err != nil {
		return err
	}
	if err := RunNamedCheckconf(ctx, a.opt.NamedCheckconf, a.checkTarget()); err != nil {
		a.fail(stageCheckconf, err)
		return err
	}
	snap, err := a.snapshot(cfg)
	if err != nil {
		return &UsageError{err}
	}
	// named starts from the rendered config alone (newzones.go).
	if err := clearNewZones(snap); err != nil {
		return err
	}
	a.appliedCfg, a.appliedZones, a.appliedSnap = cfgHash, zonesHash, snap
	a.seenCfg, a.seenZones = cfgHash, zonesHash
	a.publishPeers() // named starts with the lists just written
	a.state.Update(func(s *Status) { s.AppliedConfigHash = cfgHash[:16] + "/" + zonesHash[:16] })
	a.log.Info("prepared", "role", a.role, "ordinal", a.ordinal, "conf", a.activeConf())
	if a.opt.Once {
		return nil
	}

	sigs := a.opt.Signals
	if sigs == nil {
		ch := make(chan os.Signal, 4)
		signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
		defer signal.Stop(ch)
		sigs = ch
	}

	args := []string{"-g", "-c", a.activeConf()}
	if a.chown != nil {
		args = append(args, "-u", a.opt.User)
	}
	args = append(args, a.opt.NamedArgs...)
	named := exec.Command(a.opt.Named, args...)
	named.Stdout, named.Stderr = a.opt.Output, a.opt.Output
	if err := named.Start(); err != nil {
		return fmt.Errorf("cannot start named: %w", err)
	}
	a.log.Info("started named", "pid", named.Process.Pid, "args", args)
	a.state.metrics.NamedUp.Set(1)
	a.state.Update(func(s *Status) { s.NamedPID = named.Process.Pid })
	exited := make(chan error, 1)
	go func() { exited <- named.Wait() }()

	stopServing, err := a.serve()
	defer stopServing()
	if err != nil {
		_ = named.Process.Signal(syscall.SIGTERM)
		<-exited
		return &UsageError{err}
	}

	if a.watch != nil {
		go a.watch.run(ctx, a.opt.PollInterval)
	}
	readyCtx, stopReady := context.WithCancel(ctx)
	defer stopReady()
	go a.readiness(readyCtx)
	a.running = true
	a.rollCheck = true

	poll := time.NewTicker(a.opt.PollInterval)
	defer poll.Stop()
	resolve := time.NewTicker(a.opt.ResolveInterval)
	defer resolve.Stop()
	convergeDue := time.Now()
	started := time.Now()
	stopping := false
	stop := func(sig os.Signal) {
		stopping = true
		a.log.Info("stopping named", "signal", sig)
		_ = named.Process.Signal(sig)
	}
	done := ctx.Done()
	for {
		select {
		case <-done:
			done = nil
			stop(syscall.SIGTERM)
			go func() { // named ignoring SIGTERM is killed after a grace period
				time.Sleep(20 * time.Second)
				_ = named.Process.Kill()
			}()
		case sig := <-sigs:
			if sig == syscall.SIGHUP {
				_ = named.Process.Signal(sig)
				continue
			}
			stop(sig)
		case err := <-exited:
			a.state.metrics.NamedUp.Set(0)
			stopReady()
			code := named.ProcessState.ExitCode()
			if stopping {
				a.log.Info("named stopped", "status", named.ProcessState.String())
				if ctx.Err() != nil || code == 0 {
					return nil
				}
				return &NamedExitError{Code: code, Err: err}
			}
			if code <= 0 {
				code = 1
			}
			a.log.Error("named exited unexpectedly", "status", named.ProcessState.String())
			return &NamedExitError{Code: code, Err: fmt.Errorf("unexpected exit: %s", named.ProcessState)}
		case <-poll.C:
			if stopping {
				continue
			}
			c, z, err := a.hashes()
			if err != nil {
				a.log.Warn("cannot hash mounted files", "err", err)
				continue
			}
			if c != a.seenCfg || z != a.seenZones || a.waitDue() {
				if a.onChange(ctx, c, z) {
					a.endWait()
					convergeDue = time.Now()
				}
				a.state.Update(func(s *Status) { s.SeenHash = c[:16] + "/" + z[:16] })
			}
			a.startRollovers(ctx)
			if a.role == RolePrimary && !time.Now().Before(convergeDue) &&
				(a.state.Snapshot().Ready || time.Since(started) > 30*time.Second) {
				if a.converge(ctx) {
					convergeDue = time.Now().Add(a.opt.ConvergeInterval)
				} else {
					convergeDue = time.Now().Add(min(2*time.Second, a.opt.ConvergeInterval))
				}
			}
		case <-resolve.C:
			if stopping {
				continue
			}
			changed, err := a.resolvePeers(ctx, a.config())
			if err != nil {
				a.log.Warn("cannot write server lists", "err", err)
				continue
			}
			if changed {
				a.state.metrics.PeerChanges.Inc()
				a.log.Info("peer addresses changed", "servers", a.serversText)
			}
			// A change named has not loaded yet (this one, or one whose
			// apply failed) is applied now; it is retried every interval.
			if a.peersPending || a.zonesDirty {
				before := a.applied
				if a.reapply(ctx) {
					a.endWait()
					a.notifyNewPeers(ctx, before)
				}
			}
		}
	}
}
