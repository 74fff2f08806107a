package agent

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// BIND's statistics channel (statistics-channels on localhost, docs/design.md#bind-statistics)
// rendered beside the agent's own metrics with the bind_ prefix, named the
// way prometheus-community/bind_exporter names the essentials so its
// dashboards work.

// BindStatsDoc is the part of BIND's server statistics the agent exports:
// the JSON of /json/v1/server, or the same counters read from /xml/v3/server.
// Maps are counter name -> value; BIND omits most zero counters.
type BindStatsDoc struct {
	Version    string             `json:"version"`
	BootTime   string             `json:"boot-time"`
	ConfigTime string             `json:"config-time"`
	Opcodes    map[string]float64 `json:"opcodes"`
	Rcodes     map[string]float64 `json:"rcodes"`
	QTypes     map[string]float64 `json:"qtypes"`
	NSStats    map[string]float64 `json:"nsstats"`
	ZoneStats  map[string]float64 `json:"zonestats"`
	// Zones are the loaded zones' serials, from /json/v1/zones (or
	// /xml/v3/zones): ZoneSerials fills them.
	Zones []ZoneSerial `json:"-"`
}

// ZoneSerial is one zone's serial as named holds it.
type ZoneSerial struct {
	View, Zone string
	Serial     uint32
}

// ParseZoneSerialsJSON reads /json/v1/zones: every zone named has loaded
// (a zone that failed to load, or a secondary that has not transferred it
// yet, has no serial and is left out), without BIND's builtin zones.
func ParseZoneSerialsJSON(b []byte) ([]ZoneSerial, error) {
	var d struct {
		Views map[string]struct {
			Zones []struct {
				Name   string  `json:"name"`
				Type   string  `json:"type"`
				Serial *uint32 `json:"serial"`
			} `json:"zones"`
		} `json:"views"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("cannot parse BIND's JSON zone statistics: %w", err)
	}
	var out []ZoneSerial
	for view, v := range d.Views {
		for _, z := range v.Zones {
			if z.Type != "builtin" && z.Serial != nil {
				out = append(out, ZoneSerial{View: view, Zone: z.Name, Serial: *z.Serial})
			}
		}
	}
	sortZoneSerials(out)
	return out, nil
}

// ParseZoneSerialsXML reads /xml/v3/zones, as ParseZoneSerialsJSON (an
// unloaded zone's serial is "-").
func ParseZoneSerialsXML(b []byte) ([]ZoneSerial, error) {
	var x struct {
		Views []struct {
			Name  string `xml:"name,attr"`
			Zones []struct {
				Name   string `xml:"name,attr"`
				Type   string `xml:"type"`
				Serial string `xml:"serial"`
			} `xml:"zones>zone"`
		} `xml:"views>view"`
	}
	if err := xml.Unmarshal(b, &x); err != nil {
		return nil, fmt.Errorf("cannot parse BIND's XML zone statistics: %w", err)
	}
	var out []ZoneSerial
	for _, v := range x.Views {
		for _, z := range v.Zones {
			n, err := strconv.ParseUint(z.Serial, 10, 32)
			if z.Type != "builtin" && err == nil {
				out = append(out, ZoneSerial{View: v.Name, Zone: z.Name, Serial: uint32(n)})
			}
		}
	}
	sortZoneSerials(out)
	return out, nil
}

func sortZoneSerials(zs []ZoneSerial) {
	slices.SortFunc(zs, func(a, b ZoneSerial) int {
		return strings.Compare(a.View+"\x00"+a.Zone, b.View+"\x00"+b.Zone)
	})
}

// ParseBindStatsJSON decodes /json/v1/server.
func ParseBindStatsJSON(b []byte) (*BindStatsDoc, error) {
	var d BindStatsDoc
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("cannot parse BIND's JSON statistics: %w", err)
	}
	return &d, nil
}

// ParseBindStatsXML decodes /xml/v3/server (named built without json-c).
func ParseBindStatsXML(b []byte) (*BindStatsDoc, error) {
	var x struct {
		Server struct {
			BootTime   string `xml:"boot-time"`
			ConfigTime string `xml:"config-time"`
			Version    string `xml:"version"`
			Counters   []struct {
				Type    string `xml:"type,attr"`
				Counter []struct {
					Name  string  `xml:"name,attr"`
					Value float64 `xml:",chardata"`
				} `xml:"counter"`
			} `xml:"counters"`
		} `xml:"server"`
	}
	if err := xml.Unmarshal(b, &x); err != nil {
		return nil, fmt.Errorf("cannot parse BIND's XML statistics: %w", err)
	}
	d := &BindStatsDoc{Version: x.Server.Version, BootTime: x.Server.BootTime, ConfigTime: x.Server.ConfigTime}
	for _, c := range x.Server.Counters {
		var m *map[string]float64
		switch c.Type {
		case "opcode":
			m = &d.Opcodes
		case "rcode":
			m = &d.Rcodes
		case "qtype":
			m = &d.QTypes
		case "nsstat":
			m = &d.NSStats
		case "zonestat":
			m = &d.ZoneStats
		default:
			continue
		}
		if *m == nil {
			*m = map[string]float64{}
		}
		for _, v := range c.Counter {
			(*m)[v.Name] = v.Value
		}
	}
	return d, nil
}

// statDef maps one BIND counter to a series. Series of a def are always
// written (0 when BIND omits the counter), so rate() has a stable series.
type statDef struct {
	key    string // BIND's counter name
	name   string // metric name
	labels string // fixed labels, `k="v"` (no braces), or ""
}

type familyDef struct {
	typ, help string
}

var bindFamilies = map[string]familyDef{
	"bind_up":                                     {"gauge", "1 when BIND's statistics channel answered the last scrape."},
	"bind_build_info":                             {"gauge", "BIND's version, as a label."},
	"bind_boot_time_seconds":                      {"gauge", "Unix time named started."},
	"bind_config_time_seconds":                    {"gauge", "Unix time named last loaded its configuration."},
	"bind_incoming_requests_total":                {"counter", "Requests received by opcode (opcodes)."},
	"bind_incoming_queries_total":                 {"counter", "Queries received by type (qtypes)."},
	"bind_response_rcodes_total":                  {"counter", "Responses sent by rcode (rcodes)."},
	"bind_responses_total":                        {"counter", "Query results (nsstats Qry*): Success, Referral, Nxrrset, SERVFAIL, FORMERR, NXDOMAIN."},
	"bind_query_errors_total":                     {"counter", "Queries that failed (nsstats QryDropped, QryFailure)."},
	"bind_query_duplicates_total":                 {"counter", "Duplicate queries (nsstats QryDuplicate)."},
	"bind_query_recursions_total":                 {"counter", "Queries that caused recursion (nsstats QryRecursion)."},
	"bind_recursive_clients":                      {"gauge", "Current recursive clients (nsstats RecursClients)."},
	"bind_server_requests_total":                  {"counter", "Requests received by IP family (nsstats Requestv4, Requestv6)."},
	"bind_server_requests_edns0_total":            {"counter", "Requests with EDNS(0) (nsstats ReqEdns0)."},
	"bind_server_requests_bad_edns_version_total": {"counter", "Requests with an unsupported EDNS version (nsstats ReqBadEDNSVer)."},
	"bind_server_requests_tsig_total":             {"counter", "Requests signed with TSIG (nsstats ReqTSIG)."},
	"bind_server_requests_sig0_total":             {"counter", "Requests signed with SIG(0) (nsstats ReqSIG0)."},
	"bind_server_requests_bad_signature_total":    {"counter", "Requests with an invalid signature (nsstats ReqBadSIG)."},
	"bind_server_requests_tcp_total":              {"counter", "TCP requests (nsstats ReqTCP)."},
	"bind_server_queries_by_transport_total":      {"counter", "Queries by transport (nsstats QryUDP, QryTCP)."},
	"bind_server_queries_rejected_total":          {"counter", "Queries rejected (nsstats AuthQryRej: auth, RecQryRej: recursive)."},
	"bind_server_queries_answered_total":          {"counter", "Queries answered, authoritative or not (nsstats QryAuthAns, QryNoauthAns)."},
	"bind_server_responses_total":                 {"counter", "Responses sent (nsstats Response)."},
	"bind_server_responses_truncated_total":       {"counter", "Truncated responses (nsstats TruncatedResp)."},
	"bind_server_responses_edns0_total":           {"counter", "Responses with EDNS(0) (nsstats RespEDNS0)."},
	"bind_server_responses_tsig_total":            {"counter", "Responses signed with TSIG (nsstats RespTSIG)."},
	"bind_server_responses_sig0_total":            {"counter", "Responses signed with SIG(0) (nsstats RespSIG0)."},
	"bind_server_rate_limited_total":              {"counter", "Responses affected by rate-limit (nsstats RateDropped: dropped, RateSlipped: slipped)."},
	"bind_server_zone_transfers_done_total":       {"counter", "Zone transfers served (nsstats XfrReqDone)."},
	"bind_server_zone_transfers_rejected_total":   {"counter", "Zone transfer requests rejected (nsstats XfrRej)."},
	"bind_server_updates_total":                   {"counter", "Dynamic updates by result (nsstats UpdateDone, UpdateFail, UpdateRej, UpdateBadPrereq, UpdateQuota)."},
	"bind_server_updates_forwarded_total":         {"counter", "Dynamic updates forwarded to the primary (nsstats UpdateReqFwd: request, UpdateRespFwd: response, UpdateFwdFail: failed)."},
	"bind_server_rpz_rewrites_total":              {"counter", "Response policy zone rewrites (nsstats RPZRewrites)."},
	"bind_server_tcp_connections_high_water":      {"gauge", "Highest number of concurrent TCP clients (nsstats TCPConnHighWater)."},
	"bind_server_nsstat_total":                    {"counter", "Other name server statistics (nsstats) by BIND's counter name."},
	"bind_zone_notifies_sent_total":               {"counter", "NOTIFYs sent by IP family (zonestats NotifyOutv4, NotifyOutv6)."},
	"bind_zone_notifies_received_total":           {"counter", "NOTIFYs received by IP family (zonestats NotifyInv4, NotifyInv6)."},
	"bind_zone_notifies_rejected_total":           {"counter", "NOTIFYs rejected (zonestats NotifyRej)."},
	"bind_zone_soa_queries_sent_total":            {"counter", "SOA queries sent to primaries by IP family (zonestats SOAOutv4, SOAOutv6)."},
	"bind_zone_transfer_requests_total":           {"counter", "Zone transfers requested from primaries (zonestats AXFRReqv4, AXFRReqv6, IXFRReqv4, IXFRReqv6)."},
	"bind_zone_transfer_success_total":            {"counter", "Incoming zone transfers that succeeded (zonestats XfrSuccess)."},
	"bind_zone_transfer_failure_total":            {"counter", "Incoming zone transfers that failed (zonestats XfrFail)."},
	"bind_zone_transfer_rejected_total":           {"counter", "Zone transfer requests rejected (nsstats XfrRej; bind_exporter's name)."},
	"bind_zone_stat_total":                        {"counter", "Other zone maintenance statistics (zonestats) by BIND's counter name."},
	"bind_zone_serial":                            {"gauge", "Serial of each loaded zone (/json/v1/zones; bind_exporter's name and labels). A zone that is not loaded has none."},
}

var nsstatDefs = []statDef{
	{"QrySuccess", "bind_responses_total", `result="Success"`},
	{"QryReferral", "bind_responses_total", `result="Referral"`},
	{"QryNxrrset", "bind_responses_total", `result="Nxrrset"`},
	{"QrySERVFAIL", "bind_responses_total", `result="SERVFAIL"`},
	{"QryFORMERR", "bind_responses_total", `result="FORMERR"`},
	{"QryNXDOMAIN", "bind_responses_total", `result="NXDOMAIN"`},
	{"QryDropped", "bind_query_errors_total", `error="Dropped"`},
	{"QryFailure", "bind_query_errors_total", `error="Failure"`},
	{"QryDuplicate", "bind_query_duplicates_total", ""},
	{"QryRecursion", "bind_query_recursions_total", ""},
	{"RecursClients", "bind_recursive_clients", ""},
	{"Requestv4", "bind_server_requests_total", `family="ipv4"`},
	{"Requestv6", "bind_server_requests_total", `family="ipv6"`},
	{"ReqEdns0", "bind_server_requests_edns0_total", ""},
	{"ReqBadEDNSVer", "bind_server_requests_bad_edns_version_total", ""},
	{"ReqTSIG", "bind_server_requests_tsig_total", ""},
	{"ReqSIG0", "bind_server_requests_sig0_total", ""},
	{"ReqBadSIG", "bind_server_requests_bad_signature_total", ""},
	{"ReqTCP", "bind_server_requests_tcp_total", ""},
	{"QryUDP", "bind_server_queries_by_transport_total", `transport="udp"`},
	{"QryTCP", "bind_server_queries_by_transport_total", `transport="tcp"`},
	{"AuthQryRej", "bind_server_queries_rejected_total", `kind="auth"`},
	{"RecQryRej", "bind_server_queries_rejected_total", `kind="recursive"`},
	{"QryAuthAns", "bind_server_queries_answered_total", `kind="authoritative"`},
	{"QryNoauthAns", "bind_server_queries_answered_total", `kind="nonauthoritative"`},
	{"Response", "bind_server_responses_total", ""},
	{"TruncatedResp", "bind_server_responses_truncated_total", ""},
	{"RespEDNS0", "bind_server_responses_edns0_total", ""},
	{"RespTSIG", "bind_server_responses_tsig_total", ""},
	{"RespSIG0", "bind_server_responses_sig0_total", ""},
	{"RateDropped", "bind_server_rate_limited_total", `action="dropped"`},
	{"RateSlipped", "bind_server_rate_limited_total", `action="slipped"`},
	{"XfrReqDone", "bind_server_zone_transfers_done_total", ""},
	{"XfrRej", "bind_server_zone_transfers_rejected_total", ""},
	{"XfrRej", "bind_zone_transfer_rejected_total", ""},
	{"UpdateDone", "bind_server_updates_total", `result="done"`},
	{"UpdateFail", "bind_server_updates_total", `result="failed"`},
	{"UpdateRej", "bind_server_updates_total", `result="rejected"`},
	{"UpdateBadPrereq", "bind_server_updates_total", `result="bad_prereq"`},
	{"UpdateQuota", "bind_server_updates_total", `result="quota"`},
	{"UpdateReqFwd", "bind_server_updates_forwarded_total", `kind="request"`},
	{"UpdateRespFwd", "bind_server_updates_forwarded_total", `kind="response"`},
	{"UpdateFwdFail", "bind_server_updates_forwarded_total", `kind="failed"`},
	{"RPZRewrites", "bind_server_rpz_rewrites_total", ""},
	{"TCPConnHighWater", "bind_server_tcp_connections_high_water", ""},
}

var zonestatDefs = []statDef{
	{"NotifyOutv4", "bind_zone_notifies_sent_total", `family="ipv4"`},
	{"NotifyOutv6", "bind_zone_notifies_sent_total", `family="ipv6"`},
	{"NotifyInv4", "bind_zone_notifies_received_total", `family="ipv4"`},
	{"NotifyInv6", "bind_zone_notifies_received_total", `family="ipv6"`},
	{"NotifyRej", "bind_zone_notifies_rejected_total", ""},
	{"SOAOutv4", "bind_zone_soa_queries_sent_total", `family="ipv4"`},
	{"SOAOutv6", "bind_zone_soa_queries_sent_total", `family="ipv6"`},
	{"AXFRReqv4", "bind_zone_transfer_requests_total", `family="ipv4",type="AXFR"`},
	{"AXFRReqv6", "bind_zone_transfer_requests_total", `family="ipv6",type="AXFR"`},
	{"IXFRReqv4", "bind_zone_transfer_requests_total", `family="ipv4",type="IXFR"`},
	{"IXFRReqv6", "bind_zone_transfer_requests_total", `family="ipv6",type="IXFR"`},
	{"XfrSuccess", "bind_zone_transfer_success_total", ""},
	{"XfrFail", "bind_zone_transfer_failure_total", ""},
}

// bindCollector is one scrape of BIND's statistics as a
// prometheus.Collector: built from one document (nil: the channel did not
// answer), it describes and collects the families that document fills, and
// client_golang renders them (WriteBindMetrics). Every name is one of
// bindFamilies and every label name comes from the tables above (constants):
// BIND's strings only ever become label values, escaped by the text writer.
type bindCollector struct {
	families map[string]*bindFamily
}

// bindFamily is one family's series: label values (joined) -> series.
type bindFamily struct {
	desc   *prometheus.Desc
	typ    prometheus.ValueType
	labels []string
	series map[string]*bindSeries
}

type bindSeries struct {
	values []string
	v      float64
}

var _ prometheus.Collector = (*bindCollector)(nil)

// parseLabels reads a statDef's fixed labels, `k="v",k2="v2"`.
func parseLabels(s string) (names, values []string) {
	if s == "" {
		return nil, nil
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
			panic("bindstats: bad fixed labels " + s) // programming error
		}
		names, values = append(names, k), append(values, v[1:len(v)-1])
	}
	return names, values
}

// add adds v to the series of family name with these labels (the same
// series twice is summed).
func (c *bindCollector) add(name string, labels, values []string, v float64) {
	f, ok := bindFamilies[name]
	if !ok {
		panic("bindstats: undeclared family " + name) // programming error
	}
	fam := c.families[name]
	if fam == nil {
		typ := prometheus.GaugeValue
		if f.typ == "counter" {
			typ = prometheus.CounterValue
		}
		fam = &bindFamily{desc: prometheus.NewDesc(name, f.help, labels, nil), typ: typ, labels: labels, series: map[string]*bindSeries{}}
		c.families[name] = fam
	}
	if !slices.Equal(fam.labels, labels) {
		panic("bindstats: family " + name + " with two label sets") // programming error
	}
	for i, val := range values {
		values[i] = strings.ToValidUTF8(val, "\uFFFD")
	}
	key := strings.Join(values, "\x00")
	if sr := fam.series[key]; sr != nil {
		sr.v += v
		return
	}
	fam.series[key] = &bindSeries{values: values, v: v}
}

func (c *bindCollector) addMap(name, label string, m map[string]float64) {
	for k, v := range m {
		c.add(name, []string{label}, []string{k}, v)
	}
}

func (c *bindCollector) addDefs(defs []statDef, m map[string]float64, other, otherLabel string) {
	known := map[string]bool{}
	for _, d := range defs {
		known[d.key] = true
		names, values := parseLabels(d.labels)
		c.add(d.name, names, values, m[d.key])
	}
	// BIND's JSON omits zero counters, its XML lists them: the uncurated
	// rest is written when non-zero, so both read the same.
	for k, v := range m {
		if !known[k] && v != 0 {
			c.add(other, []string{otherLabel}, []string{k}, v)
		}
	}
}

// newBindCollector reads doc into series; a def's series are always there
// (0 when BIND omits the counter), so rate() has a stable series.
func newBindCollector(doc *BindStatsDoc) *bindCollector {
	c := &bindCollector{families: map[string]*bindFamily{}}
	if doc == nil {
		c.add("bind_up", nil, nil, 0)
		return c
	}
	c.add("bind_up", nil, nil, 1)
	if doc.Version != "" {
		c.add("bind_build_info", []string{"version"}, []string{doc.Version}, 1)
	}
	for name, t := range map[string]string{"bind_boot_time_seconds": doc.BootTime, "bind_config_time_seconds": doc.ConfigTime} {
		if ts, err := time.Parse(time.RFC3339Nano, t); err == nil {
			c.add(name, nil, nil, float64(ts.UnixMilli())/1000)
		}
	}
	c.addMap("bind_incoming_requests_total", "opcode", doc.Opcodes)
	c.addMap("bind_incoming_queries_total", "type", doc.QTypes)
	c.addMap("bind_response_rcodes_total", "rcode", doc.Rcodes)
	c.addDefs(nsstatDefs, doc.NSStats, "bind_server_nsstat_total", "counter")
	c.addDefs(zonestatDefs, doc.ZoneStats, "bind_zone_stat_total", "counter")
	for _, z := range doc.Zones {
		c.add("bind_zone_serial", []string{"view", "zone_name"}, []string{z.View, z.Zone}, float64(z.Serial))
	}
	return c
}

// Describe implements prometheus.Collector.
func (c *bindCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, f := range c.families {
		ch <- f.desc
	}
}

// Collect implements prometheus.Collector.
func (c *bindCollector) Collect(ch chan<- prometheus.Metric) {
	for _, f := range c.families {
		for _, sr := range f.series {
			ch <- prometheus.MustNewConstMetric(f.desc, f.typ, sr.v, sr.values...)
		}
	}
}

// WriteBindMetrics renders doc (nil: the channel did not answer, bind_up 0)
// in the Prometheus text format through client_golang: families sorted by
// name, series by label values, HELP and TYPE once each.
func WriteBindMetrics(w *strings.Builder, doc *BindStatsDoc) {
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(newBindCollector(doc))
	mfs, err := reg.Gather()
	if err != nil {
		panic("bindstats: " + err.Error()) // programming error: names and labels are constants, series summed
	}
	for _, mf := range mfs {
		_, _ = expfmt.MetricFamilyToText(w, mf) // a strings.Builder does not fail
	}
}

// BindStats fetches BIND's statistics channel on demand for /metrics, with
// a short timeout and a small cache so a burst of scrapes asks named once.
type BindStats struct {
	// Addr is the statistics channel, host:port.
	Addr string
	// Timeout bounds one fetch (default 1s); CacheFor is how long a result
	// (good or bad) is reused (default 1s).
	Timeout, CacheFor time.Duration
	Client            *http.Client
	Log               *slog.Logger

	mu     sync.Mutex
	at     time.Time
	doc    *BindStatsDoc
	wasUp  *bool
	useXML bool
}

// ParseBindStatsAddr checks a --bind-stats value: "off" (returns ""), or host:port.
func ParseBindStatsAddr(v string) (string, error) {
	if v == "off" {
		return "", nil
	}
	host, port, err := net.SplitHostPort(v)
	if err != nil || host == "" {
		return "", fmt.Errorf("--bind-stats: %q is not host:port or \"off\"", v)
	}
	if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
		return "", fmt.Errorf("--bind-stats: %q: %q is not a port", v, port)
	}
	return v, nil
}

// errNotFound is a 404: this named serves no JSON statistics (built without json-c).
var errNotFound = errors.New("not found")

// Write appends BIND's metrics to w.
func (b *BindStats) Write(ctx context.Context, w *strings.Builder) {
	WriteBindMetrics(w, b.Get(ctx))
}

// Get returns the cached document, fetching it when stale; nil when named
// did not answer.
func (b *BindStats) Get(ctx context.Context) *BindStatsDoc {
	b.mu.Lock()
	defer b.mu.Unlock()
	cacheFor := b.CacheFor
	if cacheFor <= 0 {
		cacheFor = time.Second
	}
	if !b.at.IsZero() && time.Since(b.at) < cacheFor {
		return b.doc
	}
	doc, err := b.fetch(ctx)
	if err != nil && ctx.Err() != nil {
		return nil // the scraper went away: not named's fault, do not cache
	}
	b.at, b.doc = time.Now(), doc
	up := err == nil
	if b.Log != nil && (b.wasUp == nil || *b.wasUp != up) {
		if up {
			b.Log.Info("BIND statistics channel answered", "addr", b.Addr, "xml", b.useXML)
		} else {
			b.Log.Warn("cannot read BIND's statistics channel (bind_up 0); named.conf needs statistics-channels on this address, or run with --bind-stats=off", "addr", b.Addr, "err", err)
		}
	}
	b.wasUp = &up
	return doc
}

func (b *BindStats) fetch(ctx context.Context) (*BindStatsDoc, error) {
	timeout := b.Timeout
	if timeout <= 0 {
		timeout = time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if !b.useXML {
		body, err := b.get(ctx, "/json/v1/server")
		if err == nil {
			doc, err := ParseBindStatsJSON(body)
			if err != nil {
				return nil, err
			}
			if body, err = b.get(ctx, "/json/v1/zones"); err != nil {
				return nil, err
			}
			doc.Zones, err = ParseZoneSerialsJSON(body)
			return doc, err
		}
		if !errors.Is(err, errNotFound) {
			return nil, err
		}
		b.useXML = true // named without json-c: XML from now on
	}
	body, err := b.get(ctx, "/xml/v3/server")
	if err != nil {
		return nil, err
	}
	doc, err := ParseBindStatsXML(body)
	if err != nil {
		return nil, err
	}
	if body, err = b.get(ctx, "/xml/v3/zones"); err != nil {
		return nil, err
	}
	doc.Zones, err = ParseZoneSerialsXML(body)
	return doc, err
}

func (b *BindStats) get(ctx context.Context, path string) ([]byte, error) {
	c := b.Client
	if c == nil {
		c = http.DefaultClient
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+b.Addr+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, err
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return nil, fmt.Errorf("GET %s: %w", path, errNotFound)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return body, nil
}
