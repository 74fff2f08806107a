package agent

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// SignatureExpiry exports, for each signed zone, when the earliest of the
// signatures named serves over the zone's SOA and DNSKEY RRsets expires
// (bindfn_agent_zone_signature_expiry_timestamp_seconds{zone}): what a
// validating resolver sees, asked over loopback with DO set. named
// re-signs long before expiry, so a value that comes near is a signer
// that stopped (keys gone, a policy whose lifetimes are too short) or a
// secondary that serves a stale copy. BIND's statistics channel says
// nothing of signatures, hence the queries; they are cached for CacheFor,
// so a burst of scrapes asks named once.
//
// The SOA and DNSKEY signatures are the ones every change and every key
// event renews; the other RRsets' signatures are re-signed on named's
// own schedule within the same validity, so they are not asked one by
// one (an AXFR per scrape would be). A zone in a view whose
// match-clients excludes loopback answers REFUSED and has no series.
type SignatureExpiry struct {
	// Addr is named's DNS address.
	Addr string
	// Zones returns the signed zones (agent.json dnssecZones) at scrape time.
	Zones func() []string
	// Timeout bounds one query (default 1s); CacheFor is how long a
	// result is reused (default 10s).
	Timeout, CacheFor time.Duration

	mu  sync.Mutex
	at  time.Time
	exp map[string]time.Time
}

// sigWorkers bound the queries in flight: a cluster of many signed zones
// is read in parallel, without flooding named.
const sigWorkers = 8

var sigExpiryDesc = prometheus.NewDesc("bindfn_agent_zone_signature_expiry_timestamp_seconds",
	"Unix time the earliest RRSIG over a signed zone's SOA or DNSKEY RRset, as named serves it, expires; no series for a zone named does not answer signed.",
	[]string{"zone"}, nil)

// sigCollector is one reading as a prometheus.Collector.
type sigCollector map[string]time.Time

var _ prometheus.Collector = sigCollector(nil)

// Describe implements prometheus.Collector.
func (c sigCollector) Describe(ch chan<- *prometheus.Desc) { ch <- sigExpiryDesc }

// Collect implements prometheus.Collector.
func (c sigCollector) Collect(ch chan<- prometheus.Metric) {
	for z, t := range c {
		ch <- prometheus.MustNewConstMetric(sigExpiryDesc, prometheus.GaugeValue, float64(t.Unix()), z)
	}
}

// WriteSignatureMetrics renders exp (zone -> earliest expiry) in the text
// format through client_golang; nothing when exp is empty.
func WriteSignatureMetrics(w *strings.Builder, exp map[string]time.Time) {
	if len(exp) == 0 {
		return
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(sigCollector(exp))
	mfs, err := reg.Gather()
	if err != nil {
		panic("sigexpiry: " + err.Error()) // programming error: one family, one series per zone
	}
	for _, mf := range mfs {
		_, _ = expfmt.MetricFamilyToText(w, mf) // a strings.Builder does not fail
	}
}

// Write appends the metric to w.
func (s *SignatureExpiry) Write(ctx context.Context, w *strings.Builder) {
	WriteSignatureMetrics(w, s.Get(ctx))
}

// Get returns the cached reading, asking named when it is stale.
func (s *SignatureExpiry) Get(ctx context.Context) map[string]time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	cacheFor := s.CacheFor
	if cacheFor <= 0 {
		cacheFor = 10 * time.Second
	}
	if !s.at.IsZero() && time.Since(s.at) < cacheFor {
		return s.exp
	}
	exp := map[string]time.Time{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	zones := make(chan string)
	for range sigWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for z := range zones {
				if t, ok := s.earliest(ctx, z); ok {
					mu.Lock()
					exp[strings.TrimSuffix(z, ".")] = t
					mu.Unlock()
				}
			}
		}()
	}
	for _, z := range s.Zones() {
		zones <- z
	}
	close(zones)
	wg.Wait()
	if ctx.Err() != nil {
		return exp // the scraper went away: do not cache a partial reading
	}
	s.at, s.exp = time.Now(), exp
	return exp
}

// earliest is the earliest expiry of the RRSIGs over zone's SOA and
// DNSKEY RRsets; false when named gave no signed authoritative answer.
func (s *SignatureExpiry) earliest(ctx context.Context, zone string) (time.Time, bool) {
	var min time.Time
	for _, qt := range []uint16{dns.TypeSOA, dns.TypeDNSKEY} {
		sigs, ok := s.rrsigs(ctx, zone, qt)
		if !ok {
			return time.Time{}, false
		}
		for _, sig := range sigs {
			if t := time.Unix(int64(sig.Expiration), 0); min.IsZero() || t.Before(min) {
				min = t
			}
		}
	}
	return min, !min.IsZero()
}

func (s *SignatureExpiry) rrsigs(ctx context.Context, zone string, qt uint16) ([]*dns.RRSIG, bool) {
	t := s.Timeout
	if t <= 0 {
		t = time.Second
	}
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(zone), qt)
	m.RecursionDesired = false
	m.SetEdns0(4096, true)
	cl := &dns.Client{Net: "tcp", Timeout: t} // a DNSKEY RRset with its signatures may not fit UDP
	ctx, cancel := context.WithTimeout(ctx, t)
	defer cancel()
	r, _, err := cl.ExchangeContext(ctx, m, s.Addr)
	if err != nil || r.Rcode != dns.RcodeSuccess || !r.Authoritative {
		return nil, false
	}
	var out []*dns.RRSIG
	for _, rr := range r.Answer {
		if sig, ok := rr.(*dns.RRSIG); ok && sig.TypeCovered == qt && strings.EqualFold(sig.Hdr.Name, dns.Fqdn(zone)) {
			out = append(out, sig)
		}
	}
	return out, len(out) > 0
}
