package agent

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/layout"
)

// ZoneChecker tells whether named has loaded a zone.
//
// A zone without a view is checked by an SOA query over loopback (RD=0):
// loaded means an authoritative NOERROR answer holding the SOA. A zone in a
// view may be invisible to an unsigned loopback query (the view may match
// other clients or a key), so it is checked with `rndc zonestatus <zone> IN
// <view>`, which names the view explicitly.
type ZoneChecker struct {
	Addr    string
	RNDC    RNDC
	Timeout time.Duration
}

// Unready returns the zones that are not loaded, as "zone" or "zone/view", in input order.
func (z ZoneChecker) Unready(ctx context.Context, zones []layout.ZoneRef) []string {
	var out []string
	for _, ref := range zones {
		if err := z.Check(ctx, ref); err != nil {
			out = append(out, zoneID(ref))
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

// Check returns nil when the zone is loaded.
func (z ZoneChecker) Check(ctx context.Context, ref layout.ZoneRef) error {
	if ref.View != "" {
		out, err := z.RNDC.Run(ctx, "zonestatus", ref.Zone, "IN", ref.View)
		if err != nil {
			return err
		}
		if !strings.Contains(out, "serial:") {
			return fmt.Errorf("zone %s not loaded: %s", zoneID(ref), out)
		}
		return nil
	}
	t := z.Timeout
	if t == 0 {
		t = 2 * time.Second
	}
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(ref.Zone), dns.TypeSOA)
	m.RecursionDesired = false
	cl := &dns.Client{Net: "udp", Timeout: t}
	ctx, cancel := context.WithTimeout(ctx, t)
	defer cancel()
	r, _, err := cl.ExchangeContext(ctx, m, z.Addr)
	if err != nil {
		return err
	}
	if r.Rcode != dns.RcodeSuccess || !r.Authoritative {
		return fmt.Errorf("zone %s not loaded: %s aa=%v", zoneID(ref), dns.RcodeToString[r.Rcode], r.Authoritative)
	}
	for _, rr := range r.Answer {
		if rr.Header().Rrtype == dns.TypeSOA {
			return nil
		}
	}
	return fmt.Errorf("zone %s not loaded: no SOA in the answer", zoneID(ref))
}
