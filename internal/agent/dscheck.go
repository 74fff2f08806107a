package agent

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"git.unkin.net/unkin/bind-fn/internal/namedconf"
)

// DSCheck exports, for each signed zone whose named.conf statement lists
// parental-agents, what those servers say of the zone's DS at its parent
// and whether it still leads to the zone's keys:
//
//	bindfn_agent_zone_parent_ds{zone,parental_agent}        DS records the agent serves
//	bindfn_agent_zone_parent_ds_valid{zone,parental_agent}  how many of them authenticate the zone
//
// A DS is valid when it is the digest of a DNSKEY named serves for the
// zone, and that key's RRSIG over the DNSKEY RRset verifies now: the link
// a validating resolver follows from the parent into the zone. So a DS
// set none of which is valid is a broken chain of trust (validators answer
// SERVFAIL for the whole zone), and no DS at all an insecure delegation.
//
// Why the agent asks rather than reading BIND: named's checkds asks the
// same parental agents, but only while a KSK rollover waits on the DS
// (its key state's DSPublish and DSRemoved, and a log line); once the DS
// is "omnipresent" named never looks again, so a DS the parent's operator
// later replaces, mistypes or drops shows nowhere in named. The agent asks
// the servers named.conf names (the same list named uses) on its own
// schedule, and compares what they serve with what named serves.
//
// Readings are refreshed in the background at most every Every (default
// 60 s; a parent's DS TTL is usually hours): a scrape never waits on a
// remote server. A zone or agent that gave no answer (timeout, REFUSED, a
// non-authoritative referral) has no series until it answers; the first
// scrape after start has none.
type DSCheck struct {
	// Addr is named's DNS address (the zone's DNSKEY RRset).
	Addr string
	// Conf returns the named.conf named runs with (the parental-agents of
	// each zone are read from it at each refresh).
	Conf func() string
	// Timeout bounds one query (default 2s); Every is how often the
	// readings are refreshed (default 60s).
	Timeout, Every time.Duration
	// Now is the clock signatures are checked against (time.Now by
	// default).
	Now func() time.Time

	mu       sync.Mutex
	at       time.Time
	running  bool
	readings []DSReading
}

// DSReading is one zone as one parental agent sees it.
type DSReading struct {
	Zone  string // bare name
	Agent string // the parental agent, addr:port
	// DS is how many DS records the agent serves for the zone; Valid how
	// many of them authenticate the zone's DNSKEY RRset.
	DS, Valid int
}

// DSZone is a zone whose DS named checks: its parental agents.
type DSZone struct {
	Zone   string
	Agents []netip.AddrPort
}

var (
	parentDSDesc = prometheus.NewDesc("bindfn_agent_zone_parent_ds",
		"DS records a signed zone's parental agent (named.conf parental-agents) serves for it; no series while the agent gives no authoritative answer.",
		[]string{"zone", "parental_agent"}, nil)
	parentDSValidDesc = prometheus.NewDesc("bindfn_agent_zone_parent_ds_valid",
		"Of those DS records, how many match a DNSKEY named serves for the zone whose RRSIG over the DNSKEY RRset verifies now (0 with DS present: the chain of trust is broken).",
		[]string{"zone", "parental_agent"}, nil)
)

// dsCollector is one reading as a prometheus.Collector.
type dsCollector []DSReading

var _ prometheus.Collector = dsCollector(nil)

// Describe implements prometheus.Collector.
func (c dsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- parentDSDesc
	ch <- parentDSValidDesc
}

// Collect implements prometheus.Collector.
func (c dsCollector) Collect(ch chan<- prometheus.Metric) {
	for _, r := range c {
		ch <- prometheus.MustNewConstMetric(parentDSDesc, prometheus.GaugeValue, float64(r.DS), r.Zone, r.Agent)
		ch <- prometheus.MustNewConstMetric(parentDSValidDesc, prometheus.GaugeValue, float64(r.Valid), r.Zone, r.Agent)
	}
}

// WriteDSMetrics renders readings in the text format through
// client_golang; nothing when there are none.
func WriteDSMetrics(w *strings.Builder, readings []DSReading) {
	if len(readings) == 0 {
		return
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(dsCollector(readings))
	mfs, err := reg.Gather()
	if err != nil {
		panic("dscheck: " + err.Error()) // programming error: one series per zone and agent
	}
	for _, mf := range mfs {
		_, _ = expfmt.MetricFamilyToText(w, mf) // a strings.Builder does not fail
	}
}

// Write appends the last readings to w, and starts a refresh in the
// background when they are older than Every.
func (d *DSCheck) Write(_ context.Context, w *strings.Builder) {
	d.mu.Lock()
	every := d.Every
	if every <= 0 {
		every = time.Minute
	}
	if !d.running && (d.at.IsZero() || time.Since(d.at) >= every) {
		d.running = true
		go func() {
			r := d.Check(context.Background())
			d.mu.Lock()
			d.readings, d.at, d.running = r, time.Now(), false
			d.mu.Unlock()
		}()
	}
	readings := d.readings
	d.mu.Unlock()
	WriteDSMetrics(w, readings)
}

// Check reads the zones' parental agents from the config and asks each
// of them, sorted by zone and agent.
func (d *DSCheck) Check(ctx context.Context) []DSReading {
	zones, err := ReadDSZones(d.Conf())
	if err != nil {
		return nil // the apply step reports an unreadable config
	}
	var out []DSReading
	for _, z := range zones {
		keys, sigs, ok := d.dnskeys(ctx, z.Zone)
		if !ok {
			continue // named does not serve the zone signed (yet)
		}
		now := time.Now()
		if d.Now != nil {
			now = d.Now()
		}
		for _, a := range z.Agents {
			ds, ok := d.parentDS(ctx, z.Zone, a)
			if !ok {
				continue
			}
			out = append(out, DSReading{Zone: z.Zone, Agent: a.String(), DS: len(ds), Valid: ValidDS(z.Zone, ds, keys, sigs, now)})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Zone != out[j].Zone {
			return out[i].Zone < out[j].Zone
		}
		return out[i].Agent < out[j].Agent
	})
	return out
}

// ValidDS counts the DS records that authenticate zone's DNSKEY RRset
// (keys, with its signatures sigs) at now, as a validating resolver
// checks it (RFC 4035 5.2): the DS names a zone key (owner, key tag,
// algorithm) whose digest it carries, and that key's RRSIG over the
// DNSKEY RRset verifies and is within its validity period. A DS of an
// unknown digest type or algorithm is not valid.
func ValidDS(zone string, ds []*dns.DS, keys []*dns.DNSKEY, sigs []*dns.RRSIG, now time.Time) int {
	rrset := make([]dns.RR, len(keys))
	for i, k := range keys {
		rrset[i] = k
	}
	n := 0
	for _, d := range ds {
		if dsAuthenticates(zone, d, keys, rrset, sigs, now) {
			n++
		}
	}
	return n
}

func dsAuthenticates(zone string, d *dns.DS, keys []*dns.DNSKEY, rrset []dns.RR, sigs []*dns.RRSIG, now time.Time) bool {
	for _, k := range keys {
		if k.Flags&dns.ZONE == 0 || k.Algorithm != d.Algorithm || k.KeyTag() != d.KeyTag {
			continue
		}
		if !strings.EqualFold(k.Hdr.Name, dns.Fqdn(zone)) {
			continue
		}
		want := k.ToDS(d.DigestType)
		if want == nil || !strings.EqualFold(want.Digest, d.Digest) {
			continue
		}
		for _, s := range sigs {
			if s.KeyTag != k.KeyTag() || s.Algorithm != k.Algorithm || !strings.EqualFold(s.SignerName, dns.Fqdn(zone)) {
				continue
			}
			if s.ValidityPeriod(now) && s.Verify(k, rrset) == nil {
				return true
			}
		}
	}
	return false
}

func (d *DSCheck) timeout() time.Duration {
	if d.Timeout <= 0 {
		return 2 * time.Second
	}
	return d.Timeout
}

// dnskeys is the zone's DNSKEY RRset and its signatures as named serves
// them over loopback (TCP: the RRset with its signatures may not fit UDP).
func (d *DSCheck) dnskeys(ctx context.Context, zone string) ([]*dns.DNSKEY, []*dns.RRSIG, bool) {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(zone), dns.TypeDNSKEY)
	m.RecursionDesired = false
	m.SetEdns0(4096, true)
	ctx, cancel := context.WithTimeout(ctx, d.timeout())
	defer cancel()
	r, _, err := (&dns.Client{Net: "tcp", Timeout: d.timeout()}).ExchangeContext(ctx, m, d.Addr)
	if err != nil || r.Rcode != dns.RcodeSuccess || !r.Authoritative {
		return nil, nil, false
	}
	var keys []*dns.DNSKEY
	var sigs []*dns.RRSIG
	for _, rr := range r.Answer {
		if !strings.EqualFold(rr.Header().Name, dns.Fqdn(zone)) {
			continue
		}
		switch x := rr.(type) {
		case *dns.DNSKEY:
			keys = append(keys, x)
		case *dns.RRSIG:
			if x.TypeCovered == dns.TypeDNSKEY {
				sigs = append(sigs, x)
			}
		}
	}
	return keys, sigs, len(keys) > 0 && len(sigs) > 0
}

// parentDS asks a parental agent for the zone's DS RRset: UDP, then TCP
// when truncated. RD is set, so an agent that is a resolver answers too;
// an authoritative server ignores it. An answer must be authoritative
// (the parent's server) or recursive (a resolver's); NXDOMAIN and NODATA
// are no DS.
func (d *DSCheck) parentDS(ctx context.Context, zone string, agent netip.AddrPort) ([]*dns.DS, bool) {
	m := new(dns.Msg)
	m.SetQuestion(dns.Fqdn(zone), dns.TypeDS)
	m.SetEdns0(4096, false)
	ctx, cancel := context.WithTimeout(ctx, d.timeout())
	defer cancel()
	addr := agent.String()
	r, _, err := (&dns.Client{Net: "udp", Timeout: d.timeout()}).ExchangeContext(ctx, m, addr)
	if err == nil && r.Truncated {
		r, _, err = (&dns.Client{Net: "tcp", Timeout: d.timeout()}).ExchangeContext(ctx, m, addr)
	}
	if err != nil || (r.Rcode != dns.RcodeSuccess && r.Rcode != dns.RcodeNameError) || !(r.Authoritative || r.RecursionAvailable) {
		return nil, false
	}
	var out []*dns.DS
	for _, rr := range r.Answer {
		if ds, ok := rr.(*dns.DS); ok && strings.EqualFold(ds.Hdr.Name, dns.Fqdn(zone)) {
			out = append(out, ds)
		}
	}
	return out, true
}

// ReadDSZones reads the named.conf at file (includes followed) and returns
// each zone named checks the DS of: a primary zone with a dnssec-policy
// other than none and parental-agents, unless checkds is no. The agents
// are given inline (`192.0.2.53 port 5353;`, a list-level port applying to
// entries without one) or by the name of a top-level parental-agents or
// remote-servers list; port 53 by default. A zone in several views is
// listed once (its DNSKEYs are asked over loopback, one view's answer).
func ReadDSZones(file string) ([]DSZone, error) {
	stmts, err := namedconf.ReadConf(file, filepath.Dir(file), os.ReadFile)
	if err != nil {
		return nil, err
	}
	lists := map[string]namedconf.Stmt{}
	for _, s := range stmts {
		if (s.Name() == "parental-agents" || s.Name() == "remote-servers") && s.Block && len(s.Words) >= 2 {
			lists[s.Words[1].Text] = s.Plain()
		}
	}
	var out []DSZone
	seen := map[string]bool{}
	var walk func(stmts []namedconf.Located)
	walk = func(stmts []namedconf.Located) {
		for _, l := range stmts {
			switch {
			case l.Name() == "view" && l.Block:
				walk(l.Body)
			case l.Name() == "zone" && l.Block && len(l.Words) >= 2:
				z, ok := dsZone(l.Plain(), lists)
				if ok && !seen[z.Zone] {
					seen[z.Zone] = true
					out = append(out, z)
				}
			}
		}
	}
	walk(stmts)
	return out, nil
}

func dsZone(s namedconf.Stmt, lists map[string]namedconf.Stmt) (DSZone, bool) {
	z := DSZone{Zone: strings.TrimSuffix(s.Words[1].Text, ".")}
	var typ, policy, checkds string
	var agents *namedconf.Stmt
	for i, o := range s.Body {
		if o.Name() == "parental-agents" {
			agents = &s.Body[i]
			continue
		}
		if len(o.Words) < 2 {
			continue
		}
		switch o.Words[0].Text {
		case "type":
			typ = o.Words[1].Text
		case "dnssec-policy":
			policy = o.Words[1].Text
		case "checkds":
			checkds = o.Words[1].Text
		}
	}
	if (typ != "primary" && typ != "master") || policy == "" || policy == "none" || checkds == "no" || agents == nil {
		return DSZone{}, false
	}
	z.Agents = agentList(*agents, lists, 0)
	return z, len(z.Agents) > 0
}

// agentList reads a parental-agents (or remote-servers) statement's
// addresses: `[name] [port N] { addr [port N] [key ...]; | listname; ... }`.
func agentList(s namedconf.Stmt, lists map[string]namedconf.Stmt, depth int) []netip.AddrPort {
	if depth > 4 {
		return nil // a list naming itself
	}
	port := uint16(53)
	var items []namedconf.Stmt
	for i := 1; i < len(s.Words); i++ {
		w := s.Words[i]
		switch {
		case w.Kind == namedconf.List:
			items = w.Items
		case w.Text == "port" && i+1 < len(s.Words):
			if p, err := strconv.ParseUint(s.Words[i+1].Text, 10, 16); err == nil {
				port = uint16(p)
			}
			i++
		}
	}
	if s.Block {
		items = s.Body
	}
	var out []netip.AddrPort
	for _, it := range items {
		if len(it.Words) == 0 {
			continue
		}
		a, err := netip.ParseAddr(it.Words[0].Text)
		if err != nil {
			if l, ok := lists[it.Words[0].Text]; ok {
				out = append(out, agentList(l, lists, depth+1)...)
			}
			continue
		}
		p := port
		if len(it.Words) >= 3 && it.Words[1].Text == "port" {
			if n, err := strconv.ParseUint(it.Words[2].Text, 10, 16); err == nil {
				p = uint16(n)
			}
		}
		out = append(out, netip.AddrPortFrom(a, p))
	}
	return out
}
