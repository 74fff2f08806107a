package multipod

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"git.unkin.net/unkin/bind-fn/internal/layout"
	"git.unkin.net/unkin/bind-fn/test/gen"
)

// The sharded-zone cluster (docs/design.md#sharded-zones): one generated static zone far larger
// than a ConfigMap, rendered into several zones ConfigMaps and joined by
// $INCLUDE, served by a primary and two catalog secondaries.
const (
	shardCluster = "big"
	shardZone    = "zone0.example.com"
	shardRecords = 30000
	shardSvc     = "198.18.1.30"
)

func shardIP(i int) string { return fmt.Sprintf("198.18.5.%d", 10+i) }

// shardInputs is a generated package (every record inline in the BindZone,
// so the zone is static) plus a catalog zone: the secondaries learn the big
// zone from the catalog and transfer it, with no zone statement of their own.
func shardInputs(t testing.TB) Inputs {
	t.Helper()
	items, err := gen.Generate(gen.Options{Zones: 1, Records: shardRecords, Seed: 7, RecordObjects: -1, Cluster: shardCluster}).Items()
	if err != nil {
		t.Fatal(err)
	}
	return Inputs(items).AddFixture(t, "shard-catalog.yaml", map[string]string{"CLUSTER": shardCluster})
}

// shardPart is one $INCLUDEd part of the split zone file, as rendered.
type shardPart struct {
	shard int
	key   string
	text  string
}

var includeRe = regexp.MustCompile(`(?m)^\$INCLUDE (\S+)$`)

// shardLayout checks the render really split the zone and returns the
// zone's own file, its parts in include order, the number of zones
// ConfigMaps and the rendered SOA serial.
func shardLayout(t *testing.T, r *Rendered) (main string, parts []shardPart, shards int, serial uint32) {
	t.Helper()
	rc := r.Clusters[shardCluster]
	file := "db." + shardZone
	for name, cm := range rc.ConfigMaps {
		if !strings.HasPrefix(name, shardCluster+"-zones-") {
			continue
		}
		shards++
		size := 0
		for k, v := range cm.Data {
			size += len(k) + len(v)
		}
		if size >= 1<<20 {
			t.Errorf("ConfigMap %s holds %d bytes: Kubernetes refuses objects of 1 MiB", name, size)
		}
		if s, ok := cm.Data[file]; ok {
			main = s
		}
	}
	if shards < 2 {
		t.Fatalf("a zone of %d records rendered into %d zones ConfigMaps, want several", shardRecords, shards)
	}
	if main == "" {
		t.Fatalf("no zones ConfigMap holds %s", file)
	}
	for _, m := range includeRe.FindAllStringSubmatch(main, -1) {
		var p shardPart
		rest, ok := strings.CutPrefix(m[1], layout.ZonesDir+"/")
		if !ok {
			t.Fatalf("$INCLUDE %s is not under %s", m[1], layout.ZonesDir)
		}
		if _, err := fmt.Sscanf(rest, "%d/%s", &p.shard, &p.key); err != nil {
			t.Fatalf("$INCLUDE %s: %v", m[1], err)
		}
		cm := rc.ConfigMaps[layout.ZonesConfigMapName(shardCluster, p.shard)]
		if cm == nil {
			t.Fatalf("$INCLUDE %s: no ConfigMap %s", m[1], layout.ZonesConfigMapName(shardCluster, p.shard))
		}
		text, ok := cm.Data[p.key]
		if !ok {
			t.Fatalf("$INCLUDE %s: ConfigMap %s has no key %s", m[1], cm.Name, p.key)
		}
		p.text = text
		parts = append(parts, p)
	}
	if len(parts) < 2 {
		t.Fatalf("%s includes %d parts, want it split:\n%.2000s", file, len(parts), main)
	}
	for _, l := range strings.Split(main, "\n") {
		if rr, err := dns.NewRR(l); err == nil && rr != nil {
			if soa, ok := rr.(*dns.SOA); ok {
				serial = soa.Serial
			}
		}
	}
	if serial == 0 {
		t.Fatalf("no SOA in the head of %s:\n%.500s", file, main)
	}
	// The secondaries must get the zone from the catalog, not their config.
	if conf := rc.NamedConf(t, layout.NamedConfSecondary); strings.Contains(conf, shardZone) {
		t.Errorf("%s names %s: the secondaries should learn it from the catalog", layout.NamedConfSecondary, shardZone)
	}
	return main, parts, shards, serial
}

// shardProbe is one record of a part, with the part it came from.
type shardProbe struct {
	where string
	rr    dns.RR
	// referral: rr is a delegation's NS, which the zone answers in the
	// authority section of a referral, not authoritatively.
	referral bool
}

// probesOf picks the first and the last record of every part that a query
// answers from the zone: authoritatively (not the apex's SOA or NS, nothing
// at or below a delegation), or, for a delegation's NS, in a referral.
// Glue is never picked. Parts hold runs of names in canonical order, so a
// part may hold only _service._tcp SRV records (the zone's first) or only
// delegations and their glue (the sub-* names); the cuts come from the
// whole zone, as a delegation and its glue may fall in two parts.
func probesOf(t *testing.T, parts []shardPart) []shardProbe {
	t.Helper()
	apex := dns.Fqdn(shardZone)
	rrs := make([][]dns.RR, len(parts))
	cuts := map[string]bool{}
	for i, p := range parts {
		zp := dns.NewZoneParser(strings.NewReader(p.text), apex, p.key)
		for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
			rrs[i] = append(rrs[i], rr)
			if h := rr.Header(); h.Rrtype == dns.TypeNS && !strings.EqualFold(h.Name, apex) {
				cuts[strings.ToLower(h.Name)] = true
			}
		}
		if err := zp.Err(); err != nil {
			t.Fatalf("part %d/%d (%s in shard %d) does not parse: %v", i+1, len(parts), p.key, p.shard, err)
		}
	}
	eligible := func(rr dns.RR) bool {
		h := rr.Header()
		name := strings.ToLower(h.Name)
		if h.Rrtype == dns.TypeSOA || !dns.IsSubDomain(apex, name) || strings.EqualFold(name, apex) && h.Rrtype == dns.TypeNS {
			return false
		}
		if h.Rrtype == dns.TypeNS {
			return cuts[name]
		}
		for c := range cuts {
			if dns.IsSubDomain(c, name) {
				return false
			}
		}
		return true
	}
	var out []shardProbe
	for i, p := range parts {
		where := fmt.Sprintf("part %d/%d (%s in shard %d)", i+1, len(parts), p.key, p.shard)
		var first, last dns.RR
		for _, rr := range rrs[i] {
			if eligible(rr) {
				if first == nil {
					first = rr
				}
				last = rr
			}
		}
		if first == nil {
			t.Fatalf("%s: no record to query among its %d records", where, len(rrs[i]))
		}
		out = append(out,
			shardProbe{where: where + " first", rr: first, referral: first.Header().Rrtype == dns.TypeNS},
			shardProbe{where: where + " last", rr: last, referral: last.Header().Rrtype == dns.TypeNS})
	}
	return out
}

// checkProbe: the pod answers the probe authoritatively with its RRset, or
// for a delegation's NS refers with it (no AA, the NS in the authority
// section).
func checkProbe(ip string, pr shardProbe) error {
	h := pr.rr.Header()
	r, err := query(ip, h.Name, h.Rrtype, q{tcp: true})
	if err != nil {
		return err
	}
	if r.Rcode != dns.RcodeSuccess || r.Authoritative == pr.referral {
		return fmt.Errorf("%s %s: rcode %s aa=%v", h.Name, dns.TypeToString[h.Rrtype], dns.RcodeToString[r.Rcode], r.Authoritative)
	}
	got := r.Answer
	if pr.referral {
		got = r.Ns
	}
	for _, a := range got {
		if dns.IsDuplicate(a, pr.rr) {
			return nil
		}
	}
	return fmt.Errorf("%s %s: %v lacks %s", h.Name, dns.TypeToString[h.Rrtype], got, pr.rr)
}

func soaSerial(ip string) (uint32, error) {
	r, err := query(ip, shardZone, dns.TypeSOA, q{tcp: true})
	if err != nil {
		return 0, err
	}
	if r.Rcode != dns.RcodeSuccess || !r.Authoritative {
		return 0, fmt.Errorf("SOA: rcode %s aa=%v", dns.RcodeToString[r.Rcode], r.Authoritative)
	}
	for _, a := range r.Answer {
		if soa, ok := a.(*dns.SOA); ok {
			return soa.Serial, nil
		}
	}
	return 0, fmt.Errorf("SOA: no SOA in %v", r.Answer)
}

// scenarioShardedZone (docs/design.md#sharded-zones): a zone larger than one ConfigMap, split
// by the renderer over several zones ConfigMaps, is loaded by the primary
// through its $INCLUDEs and transferred whole to both catalog secondaries:
// every pod answers the first and the last record of every part
// authoritatively, with the rendered SOA serial, and each secondary's
// transfer carries every RR of the reassembled zone.
func scenarioShardedZone(t *testing.T, lab *Lab) {
	t0 := time.Now()
	r := renderInputs(t, shardInputs(t), nil)
	main, parts, shards, serial := shardLayout(t, r)
	probes := probesOf(t, parts)
	size := 0
	for _, p := range parts {
		size += len(p.text)
	}
	rendered := time.Since(t0)
	t.Logf("%d records rendered in %v: %s is %d KiB in %d parts over %d zones ConfigMaps; serial %d", shardRecords, rendered.Round(time.Millisecond), shardZone, size>>10, len(parts), shards, serial)

	t1 := time.Now()
	c := lab.startCluster(r, shardCluster, podPlan{IP: shardIP, PrimarySvc: shardSvc})
	defer c.stop()
	c.waitReady(hang)
	ready := time.Since(t1)

	var wg sync.WaitGroup
	errs := make([]error, len(c.Pods))
	served := make([]time.Duration, len(c.Pods))
	for i, p := range c.Pods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = eventually(hang, 100*time.Millisecond, func() error {
				got, err := soaSerial(p.Net.IP)
				if err != nil {
					return err
				}
				if got != serial {
					return fmt.Errorf("SOA serial %d, want the rendered %d", got, serial)
				}
				for _, pr := range probes {
					if err := checkProbe(p.Net.IP, pr); err != nil {
						return fmt.Errorf("%s: %v", pr.where, err)
					}
				}
				return nil
			})
			served[i] = time.Since(t1)
		}()
	}
	wg.Wait()
	for i, p := range c.Pods {
		if errs[i] != nil {
			t.Errorf("%s (%s): %v", p.Name, p.Net.IP, errs[i])
			continue
		}
		t.Logf("%s: %d records (first and last of every part) answered authoritatively or referred, serial %d, %v after start", p.Name, len(probes), serial, served[i].Round(time.Millisecond))
	}
	// The whole zone went over: an AXFR carries every RR, the SOA twice.
	want := fmt.Sprintf("%d records", countRRs(t, main, parts)+1)
	for _, p := range c.Secondaries() {
		var l string
		err := eventually(hang, 50*time.Millisecond, func() error { // the log line may trail the answers
			l = strings.TrimSpace(grep(grep(p.Log.String(), "'"+shardZone+"/IN"), "Transfer completed"))
			if !strings.Contains(l, want) {
				return fmt.Errorf("%s logged no completed transfer of %s with %s:\n%s", p.Name, shardZone, want, l)
			}
			return nil
		})
		if err != nil {
			t.Error(err)
			continue
		}
		t.Logf("%s: %s", p.Name, l)
	}
	t.Logf("sharded zone: render %v, pods ready %v, total %v", rendered.Round(time.Millisecond), ready.Round(time.Millisecond), time.Since(t0).Round(time.Millisecond))
}

// countRRs is the number of RRs of the zone reassembled from its file and
// parts (every part where its $INCLUDE stands).
func countRRs(t *testing.T, main string, parts []shardPart) int {
	t.Helper()
	n := 0
	count := func(text string) {
		zp := dns.NewZoneParser(strings.NewReader(text), dns.Fqdn(shardZone), "")
		for _, ok := zp.Next(); ok; _, ok = zp.Next() {
			n++
		}
		if err := zp.Err(); err != nil {
			t.Fatalf("the rendered zone does not parse: %v", err)
		}
	}
	count(includeRe.ReplaceAllString(main, ""))
	for _, p := range parts {
		count(p.text)
	}
	return n
}
