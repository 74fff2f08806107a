package agent

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/layout"
)

// ZoneChecker tells whether named has loaded a zone.
//
// Every zone is checked by an SOA query over loopback (RD=0): loaded means
// an authoritative NOERROR answer holding the SOA. A zone in a view is asked
// with a query signed by the view's key (layout.ViewKey: each view's
// match-clients starts with `key "<transfer key>"`), so the query lands in
// that view whatever addresses the view matches. Only when named REFUSES the
// query (a zone not configured yet, such as a catalog member a secondary has
// not created, or an allow-query that excludes loopback) does it ask
// `rndc zonestatus <zone> IN <view>`; no other path touches the control
// channel, so a steady-state check never floods named's log.
//
// A zone whose answers are not authoritative (layout.ZoneRef.Type) is asked
// for what it can show. A stub zone is loaded when named answers the SOA
// query with a referral holding the zone's NS from the stub's data (a stub
// never answers AA; one that has not loaded answers SERVFAIL), or, from
// its cache, with the zone's SOA; a mirror zone when it answers the SOA
// without AA. A static-stub or redirect zone answers no such query: it is
// asked with `rndc zonestatus`. Forward zones are not listed: named loads
// nothing for them, and what they answer is the forwarders' (an outage
// upstream must not take every pod out of its Service).
type ZoneChecker struct {
	Addr string
	// Keys are the view keys by view name; a zone whose view has no key is
	// checked with rndc alone.
	Keys    map[string]Key
	RNDC    RNDC
	Timeout time.Duration
}

// LoadViewKeys reads the key of every view from its key file. A view whose
// file cannot be read (yet) is missing from the map and reported in err.
func LoadViewKeys(views []layout.ViewKey) (map[string]Key, error) {
	keys := map[string]Key{}
	var errs []error
	for _, v := range views {
		b, err := os.ReadFile(v.KeyFile)
		if err != nil {
			errs = append(errs, fmt.Errorf("view %q: cannot read key %q: %w", v.View, v.KeyName, err))
			continue
		}
		k, err := FindKey(string(b), v.KeyName)
		if err != nil {
			errs = append(errs, fmt.Errorf("view %q: %s: %w", v.View, v.KeyFile, err))
			continue
		}
		keys[v.View] = k
	}
	return keys, errors.Join(errs...)
}

// Unready returns the zones that are not loaded, in input order.
func (z ZoneChecker) Unready(ctx context.Context, zones []layout.ZoneRef) []layout.ZoneRef {
	var out []layout.ZoneRef
	for _, ref := range zones {
		if err := z.Check(ctx, ref); err != nil {
			out = append(out, ref)
		}
	}
	return out
}

func zoneID(z layout.ZoneRef) string {
	if z.View == "" {
		return z.Zone
	}
	return z.Zone + "/" + z.View
}

// errRefused is named refusing the readiness query.
var errRefused = errors.New("REFUSED")

// Check returns nil when the zone is loaded.
func (z ZoneChecker) Check(ctx context.Context, ref layout.ZoneRef) error {
	switch ref.Type {
	case "", layout.ZoneTypeStub, layout.ZoneTypeMirror:
	case layout.ZoneTypeStaticStub, layout.ZoneTypeRedirect:
		return z.zonestatus(ctx, ref)
	default:
		return fmt.Errorf("zone %s: type %q has no readiness check", zoneID(ref), ref.Type)
	}
	key, keyed := z.Keys[ref.View]
	if ref.View != "" && !keyed {
		return z.zonestatus(ctx, ref)
	}
	var k *Key
	if ref.View != "" {
		k = &key
	}
	err := z.query(ctx, ref, k)
	if errors.Is(err, errRefused) && z.RNDC.Bin != "" {
		return z.zonestatus(ctx, ref)
	}
	return err
}

func (z ZoneChecker) zonestatus(ctx context.Context, ref layout.ZoneRef) error {
	if z.RNDC.Bin == "" {
		return fmt.Errorf("zone %s: no key for view %q and no rndc", zoneID(ref), ref.View)
	}
	args := []string{"zonestatus", ref.Zone}
	if ref.View != "" {
		args = append(args, "IN", ref.View)
	}
	out, err := z.RNDC.Run(ctx, args...)
	if err != nil {
		return err
	}
	if !strings.Contains(out, "serial:") {
		return fmt.Errorf("zone %s not loaded: %s", zoneID(ref), out)
	}
	return nil
}

// query asks the zone's SOA over UDP, signed with k when k is not nil.
func (z ZoneChecker) query(ctx context.Context, ref layout.ZoneRef, k *Key) error {
	t := z.Timeout
	if t == 0 {
		t = 2 * time.Second
	}
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(ref.Zone), dns.TypeSOA)
	m.RecursionDesired = false
	cl := &dns.Client{Net: "udp", Timeout: t}
	if k != nil {
		p, err := newTSIG(*k)
		if err != nil {
			return fmt.Errorf("zone %s: %w", zoneID(ref), err)
		}
		p.sign(m)
		cl.TsigProvider = p
	}
	ctx, cancel := context.WithTimeout(ctx, t)
	defer cancel()
	r, _, err := cl.ExchangeContext(ctx, m, z.Addr)
	if err != nil {
		return fmt.Errorf("zone %s: %w", zoneID(ref), err)
	}
	if r.Rcode == dns.RcodeRefused {
		return fmt.Errorf("zone %s: %w", zoneID(ref), errRefused)
	}
	return shows(ref, r)
}

// shows checks the answer to a zone's SOA query (RD=0) for what a loaded
// zone of its type shows.
func shows(ref layout.ZoneRef, r *dns.Msg) error {
	wantAA := ref.Type == ""
	if r.Rcode != dns.RcodeSuccess || (wantAA && !r.Authoritative) {
		return fmt.Errorf("zone %s not loaded: %s aa=%v", zoneID(ref), dns.RcodeToString[r.Rcode], r.Authoritative)
	}
	apex := dns.Fqdn(ref.Zone)
	has := func(rrs []dns.RR, t uint16) bool {
		for _, rr := range rrs {
			if rr.Header().Rrtype == t && strings.EqualFold(rr.Header().Name, apex) {
				return true
			}
		}
		return false
	}
	switch {
	case has(r.Answer, dns.TypeSOA):
		return nil
	case ref.Type == layout.ZoneTypeStub && has(r.Ns, dns.TypeNS):
		return nil // the referral a stub zone gives from its own data
	case ref.Type == layout.ZoneTypeStub:
		return fmt.Errorf("zone %s (stub) not loaded: no SOA in the answer and no NS of the zone in the referral", zoneID(ref))
	}
	return fmt.Errorf("zone %s not loaded: no SOA in the answer", zoneID(ref))
}

// SendNotify sends one NOTIFY for zone's SOA to addr, signed with k, and
// waits for the answer.
func SendNotify(ctx context.Context, addr, zone string, k Key, timeout time.Duration) error {
	m := new(dns.Msg)
	m.SetNotify(dns.Fqdn(zone))
	p, err := newTSIG(k)
	if err != nil {
		return err
	}
	p.sign(m)
	cl := &dns.Client{Net: "udp", Timeout: timeout, TsigProvider: p}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r, _, err := cl.ExchangeContext(ctx, m, addr)
	if err != nil {
		return err
	}
	if r.Rcode != dns.RcodeSuccess {
		return fmt.Errorf("NOTIFY %s: %s", zone, dns.RcodeToString[r.Rcode])
	}
	return nil
}

// SOASerial asks addr for zone's SOA (signed with k when k is not nil) and
// returns its serial.
func SOASerial(ctx context.Context, addr, zone string, k *Key, timeout time.Duration) (uint32, error) {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(zone), dns.TypeSOA)
	m.RecursionDesired = false
	cl := &dns.Client{Net: "udp", Timeout: timeout}
	if k != nil {
		p, err := newTSIG(*k)
		if err != nil {
			return 0, err
		}
		p.sign(m)
		cl.TsigProvider = p
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r, _, err := cl.ExchangeContext(ctx, m, addr)
	if err != nil {
		return 0, err
	}
	if r.Rcode != dns.RcodeSuccess {
		return 0, fmt.Errorf("SOA %s: %s", zone, dns.RcodeToString[r.Rcode])
	}
	for _, rr := range r.Answer {
		if soa, ok := rr.(*dns.SOA); ok {
			return soa.Serial, nil
		}
	}
	return 0, fmt.Errorf("SOA %s: no SOA in the answer", zone)
}

// serialBehind reports a < b in RFC 1982 serial arithmetic.
func serialBehind(a, b uint32) bool { return a != b && int32(b-a) > 0 }

// readiness tracks whether every zone of the role is loaded. Until all are,
// it re-checks the zones not yet loaded every ReadyInterval; then it sweeps
// every zone every ReadyRecheck. An applied change (new zones, a reload)
// starts a new sweep at once.
func (a *Agent) readiness(ctx context.Context) {
	var pending []layout.ZoneRef // zones to check on the fast cadence
	full := true
	tried := map[layout.ZoneRef]time.Time{} // refreshUnloaded's last refresh per zone
	var keyErr string
	for {
		cfg := a.config()
		zones := cfg.SecondaryZones
		if a.role == RolePrimary {
			zones = cfg.PrimaryZones
		}
		keys, err := LoadViewKeys(cfg.Views)
		if msg := fmt.Sprint(err); err != nil && msg != keyErr {
			a.log.Warn("cannot load view keys for readiness; those views are checked with rndc", "err", err)
			keyErr = msg
		} else if err == nil {
			keyErr = ""
		}
		chk := ZoneChecker{Addr: a.opt.DNSAddr, RNDC: a.rndc, Keys: keys}
		if full {
			pending = zones
		}
		still := chk.Unready(ctx, pending)
		var unready []string
		for _, ref := range still {
			unready = append(unready, zoneID(ref))
		}
		if ctx.Err() != nil {
			return
		}
		pending, full = still, false
		a.refreshUnloaded(ctx, still, tried)
		if msg := a.tlsProblem(); msg != "" {
			unready = append(unready, "tls: "+msg)
		}
		ready := len(unready) == 0
		a.state.Update(func(s *Status) { s.Ready, s.Unready = ready, unready })
		v := 0.0
		if ready {
			v = 1
		}
		a.state.metrics.Ready.Set(v)
		wait := a.opt.ReadyInterval
		if ready {
			wait = a.opt.ReadyRecheck
			full = true
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-a.readyKick:
			full = true
		case <-t.C:
		}
		t.Stop()
	}
}

// kickReadiness makes the readiness loop sweep every zone now.
func (a *Agent) kickReadiness() {
	select {
	case a.readyKick <- struct{}{}:
	default:
	}
}
